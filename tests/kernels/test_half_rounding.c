/* The portable float32 -> float16 / bfloat16 rounding (src/half.h) equals the AVX2 path's on
 * every float32 value: F16C's vcvtps2ph for float16, the vector shift-and-round for bfloat16,
 * both one vector at a time and in the unrolled body's blocks (whose bfloat16 lanes are
 * permuted, and whose NaN check is per block: blocks mixing NaNs with numbers are tried at
 * random too). And widening every float16 value equals vcvtph2ps, and every bfloat16 value
 * widens in a block as src/half.h widens it. */
#include <immintrin.h>

#include "../../src/half.h"
#include "../../src/kernels/avx2_loop.h"
#include "test_util.h"

int main(void) {
  if (!actx_isa_supported(ACTX_ISA_AVX2)) {
    fprintf(stderr, "test_half_rounding: no AVX2+FMA+F16C on this CPU\n");
    return 1;
  }
  uint64_t bad_f16 = 0, bad_bf16 = 0;
  uint32_t first_f16 = 0, first_bf16 = 0;
  for (uint64_t base = 0; base < (1ull << 32); base += 8) {
    uint32_t u[8];
    for (int i = 0; i < 8; i++) u[i] = (uint32_t)base + (uint32_t)i;
    const __m256 v = _mm256_loadu_ps((const float *)u);
    uint16_t h[8], b[8];
    actx_store8_f16(h, v);
    actx_store8_bf16(b, v);
    for (int i = 0; i < 8; i++) {
      const float f = actx_f32_from_bits(u[i]);
      if (actx_f32_to_f16(f) != h[i] && bad_f16++ == 0) first_f16 = u[i];
      if (actx_f32_to_bf16(f) != b[i] && bad_bf16++ == 0) first_bf16 = u[i];
    }
  }
  /* blocks: every float32 in order, then blocks of random bits with NaNs sprinkled in */
  enum { BLOCK = 8 * ACTX_AVX2_UNROLL };
  uint64_t bad_block = 0, rng = 0x9E3779B97F4A7C15ull;
  uint32_t first_block = 0;
  /* where[j]: the element the block load puts in lane j (of the vectors laid end to end), read
   * by loading the elements' own indices; the store must put lane j back at where[j] */
  int where[BLOCK];
  {
    uint16_t index[BLOCK];
    uint32_t lanes[BLOCK];
    __m256 v[ACTX_AVX2_UNROLL];
    for (int i = 0; i < BLOCK; i++) index[i] = (uint16_t)i;
    actx_load_block_bf16(index, v);
    for (int k = 0; k < ACTX_AVX2_UNROLL; k++) _mm256_storeu_ps((float *)lanes + 8 * k, v[k]);
    uint64_t seen = 0;
    for (int j = 0; j < BLOCK; j++) {
      EXPECT((lanes[j] & 0xFFFFu) == 0 && lanes[j] >> 16 < BLOCK, "block load: lane %d", j);
      where[j] = (int)(lanes[j] >> 16) % BLOCK;
      seen |= 1ull << where[j];
    }
    EXPECT(seen == (1ull << BLOCK) - 1, "block load: not a permutation");
  }
  for (uint64_t base = 0; base < (1ull << 32) + (1ull << 24); base += BLOCK) {
    uint32_t u[BLOCK];
    uint16_t b[BLOCK];
    __m256 v[ACTX_AVX2_UNROLL];
    for (int i = 0; i < BLOCK; i++) {
      if (base < (1ull << 32)) {
        u[i] = (uint32_t)base + (uint32_t)i;
      } else {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        u[i] = (uint32_t)(rng >> 32);
        if ((rng & 0xF00) == 0) u[i] |= 0x7F800001u; /* a NaN in about one lane of 16 */
      }
    }
    uint32_t lanes[BLOCK];
    for (int j = 0; j < BLOCK; j++) lanes[j] = u[where[j]];
    for (int k = 0; k < ACTX_AVX2_UNROLL; k++) v[k] = _mm256_loadu_ps((const float *)lanes + 8 * k);
    actx_store_block_bf16(b, v);
    for (int i = 0; i < BLOCK; i++)
      if (actx_f32_to_bf16(actx_f32_from_bits(u[i])) != b[i] && bad_block++ == 0)
        first_block = u[i];
  }
  EXPECT(bad_block == 0, "%llu float32 values round to bfloat16 differently in blocks; first 0x%08x",
         (unsigned long long)bad_block, first_block);
  EXPECT(bad_f16 == 0, "%llu float32 values round to float16 differently; first 0x%08x",
         (unsigned long long)bad_f16, first_f16);
  EXPECT(bad_bf16 == 0, "%llu float32 values round to bfloat16 differently; first 0x%08x",
         (unsigned long long)bad_bf16, first_bf16);
  for (uint32_t i = 0; i < 65536; i += 8) {
    uint16_t h[8];
    float w[8];
    for (int k = 0; k < 8; k++) h[k] = (uint16_t)(i + k);
    _mm256_storeu_ps(w, actx_load8_f16(h));
    for (int k = 0; k < 8; k++)
      EXPECT(bits_of(w[k]) == bits_of(actx_f16_to_f32(h[k])), "widening %04x", h[k]);
  }
  for (uint32_t i = 0; i < 65536; i += BLOCK) {
    uint16_t h[BLOCK];
    uint32_t lanes[BLOCK];
    __m256 v[ACTX_AVX2_UNROLL];
    for (int k = 0; k < BLOCK; k++) h[k] = (uint16_t)(i + k);
    actx_load_block_bf16(h, v);
    for (int k = 0; k < ACTX_AVX2_UNROLL; k++) _mm256_storeu_ps((float *)lanes + 8 * k, v[k]);
    for (int j = 0; j < BLOCK; j++)
      EXPECT(lanes[j] == bits_of(actx_bf16_to_f32(h[where[j]])), "block widening %04x",
             h[where[j]]);
  }
  return test_finish("test_half_rounding");
}
