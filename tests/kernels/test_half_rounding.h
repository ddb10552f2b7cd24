/* test_half_rounding's parts: the checks of one vector vocabulary (src/kernels/vec_<isa>.h),
 * compiled once per vocabulary in a file built for its ISA (test_half_rounding_<isa>.c, through
 * test_half_rounding_vec.h), and called by test_half_rounding.c after a CPU check. */
#ifndef ACTX_TEST_HALF_ROUNDING_H
#define ACTX_TEST_HALF_ROUNDING_H

#include <stddef.h>
#include <stdint.h>

/* What is checked: float32 -> 16 bits (stores) and 16 bits -> float32 (loads), by one vector
 * (vf_store_f16 ...), by the unrolled step's block (vf_store_block_f16 ...) and by the tail's
 * partial vector (vf_store_part_f16 ...). */
enum {
  HR_F16,
  HR_BF16,
  HR_BLOCK_F16,
  HR_BLOCK_BF16,
  HR_PART_F16,
  HR_PART_BF16,
  HR_KINDS
};

/* Mismatches against src/half.h, per kind, and the first input of each that differed. */
typedef struct hr_tally {
  uint64_t bad[HR_KINDS];
  uint32_t first[HR_KINDS];
  uint64_t bad_other;  /* a partial store wrote past its count, a partial load's lane past its
                          count was not +0, the block load is not a permutation */
  const char *other;   /* what the first of those was */
} hr_tally;

typedef struct hr_vocab {
  const char *isa;
  size_t lanes, block; /* float32 lanes per vector; elements per unrolled block */
  /* x[0..n) (n a multiple of block, x readable up to x + n + lanes) through every store;
   * want_f16 / want_bf16 are src/half.h's conversions of x; scratch holds 2 n elements */
  void (*stores)(const uint32_t *x, const uint16_t *want_f16, const uint16_t *want_bf16, size_t n,
                 uint16_t *scratch, hr_tally *t);
  /* every 16-bit value through every load */
  void (*loads)(hr_tally *t);
  /* partial loads and stores of every count at end, which a PROT_NONE page follows: a read or
   * write past the tensor faults */
  void (*guard)(unsigned char *end);
} hr_vocab;

extern const hr_vocab hr_avx2, hr_avx512;

#endif /* ACTX_TEST_HALF_ROUNDING_H */
