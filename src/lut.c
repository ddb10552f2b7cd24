/* The float16 / bfloat16 lookup tables (see lut.h). */
#include "lut.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "ort_rule.h"

#define LUT_SIZE 65536

/* Tables by [variant][op][dtype]. The variant is the one kernel parameter that changes a 16-bit
 * result: tanh GELU's fused pre-pass (the arm64 ORT rule). The others do not (keep_nan: a NaN
 * is made quiet when it is narrowed; clamp_one: the logistic's clamp at 1 changes 20 float32
 * inputs of SiLU, none of them a 16-bit value), and alpha has one tabled value. */
#define LUT_VARIANTS 2
static _Atomic(uint16_t *) tables[LUT_VARIANTS][ACTX_OP_COUNT][ACTX_DTYPE_COUNT];

static int variant_of(const actx_kernel_params *plain) { return plain->fused_tanh_prepass != 0; }

int actx_lut_has_table(actx_op op, actx_dtype dtype, const actx_kernel_params *plain) {
  return dtype != ACTX_F32 && actx_op_has_table[op] &&
         (!actx_op_takes_alpha[op] || plain->alpha == ACTX_LUT_ALPHA);
}

/* The parameters a table is made with under the rule in force. */
static actx_kernel_params table_params(actx_op op) {
  return actx_ort_rule_params(op, actx_lut_alpha(op), 0);
}

const uint16_t *actx_lut_get_for(actx_op op, actx_dtype dtype, const actx_kernel_params *plain) {
  if (!actx_lut_has_table(op, dtype, plain)) return NULL;
  _Atomic(uint16_t *) *slot = &tables[variant_of(plain)][op][dtype];
  uint16_t *t = atomic_load_explicit(slot, memory_order_acquire);
  if (t != NULL) return t;
  t = aligned_alloc(64, ACTX_LUT_ENTRIES * sizeof *t);
  if (t == NULL) return NULL;
  for (uint32_t i = 0; i < LUT_SIZE; i++) t[i] = (uint16_t)i;
  memset(t + LUT_SIZE, 0, (ACTX_LUT_ENTRIES - LUT_SIZE) * sizeof *t);
  /* in place; no op with a table has a bias */
  actx_kernel_params params = *plain;
  params.bias = NULL;
  actx_kernel_lookup(op, dtype)(t, t, LUT_SIZE, &params);
  /* two threads may build at once: the first to publish wins, the other frees its copy */
  uint16_t *expected = NULL;
  if (atomic_compare_exchange_strong_explicit(slot, &expected, t, memory_order_acq_rel,
                                              memory_order_acquire))
    return t;
  free(t);
  return expected;
}

const uint16_t *actx_lut_get(actx_op op, actx_dtype dtype) {
  const actx_kernel_params plain = table_params(op);
  return actx_lut_get_for(op, dtype, &plain);
}

const uint16_t *actx_lut_peek(actx_op op, actx_dtype dtype) {
  const actx_kernel_params plain = table_params(op);
  if (!actx_lut_has_table(op, dtype, &plain)) return NULL;
  return atomic_load_explicit(&tables[variant_of(&plain)][op][dtype], memory_order_acquire);
}

/* Eight inputs are read before any output is written, so y == x is safe; memcpy makes every
 * access alignment-free and compiles to plain moves. Returns nothing past n. */
static void lut_apply_scalar(const uint16_t *table, const unsigned char *xs, unsigned char *ys,
                             size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t a, b;
    memcpy(&a, xs + 2 * i, 8);
    memcpy(&b, xs + 2 * i + 8, 8);
    const uint16_t r[8] = {table[a & 0xFFFF],         table[(a >> 16) & 0xFFFF],
                           table[(a >> 32) & 0xFFFF], table[a >> 48],
                           table[b & 0xFFFF],         table[(b >> 16) & 0xFFFF],
                           table[(b >> 32) & 0xFFFF], table[b >> 48]};
    memcpy(ys + 2 * i, r, sizeof r);
  }
  for (; i < n; i++) {
    uint16_t v;
    memcpy(&v, xs + 2 * i, 2);
    memcpy(ys + 2 * i, &table[v], 2);
  }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define LUT_HAS_GATHER 1
/* 32 lookups a step: 16 indices widened to 32 bits, one gather of the dwords at table + 2·index
 * (an entry and the next: ACTX_LUT_ENTRIES has the spare), narrowed back to their low 16 bits;
 * both vectors are read before either is written (y == x). The rest, scalar. 1.5x the scalar
 * loop on the AMX Xeon (0.17 against 0.27 ns an element over 400k elements, a standalone
 * timing), the same bits. */
__attribute__((target("avx512f"))) static void lut_apply_gather(const uint16_t *table,
                                                                const unsigned char *xs,
                                                                unsigned char *ys, size_t n) {
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512i a = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(xs + 2 * i)));
    const __m512i b =
        _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(xs + 2 * i + 32)));
    const __m512i ya = _mm512_i32gather_epi32(a, (const void *)table, 2);
    const __m512i yb = _mm512_i32gather_epi32(b, (const void *)table, 2);
    _mm256_storeu_si256((__m256i *)(ys + 2 * i), _mm512_cvtepi32_epi16(ya));
    _mm256_storeu_si256((__m256i *)(ys + 2 * i + 32), _mm512_cvtepi32_epi16(yb));
  }
  lut_apply_scalar(table, xs + 2 * i, ys + 2 * i, n - i);
}
#else
#define LUT_HAS_GATHER 0
#endif

void actx_lut_apply_isa(actx_isa isa, const uint16_t *table, const void *x, void *y, size_t n) {
#if LUT_HAS_GATHER
  if (isa == ACTX_ISA_AVX512) {
    lut_apply_gather(table, x, y, n);
    return;
  }
#endif
  (void)isa;
  lut_apply_scalar(table, x, y, n);
}

void actx_lut_apply(const uint16_t *table, const void *x, void *y, size_t n) {
  actx_lut_apply_isa(actx_get_isa(), table, x, y, n);
}

/* Tables are freed when the library is unloaded (an EP library is unloaded by ORT), so leak
 * checkers see nothing and a reload starts clean. */
__attribute__((destructor)) static void free_tables(void) {
  for (int v = 0; v < LUT_VARIANTS; v++)
    for (int op = 0; op < ACTX_OP_COUNT; op++)
      for (int dt = 0; dt < ACTX_DTYPE_COUNT; dt++)
        free(atomic_exchange_explicit(&tables[v][op][dt], NULL, memory_order_acq_rel));
}
