/* The portable float32 -> float16 / bfloat16 rounding (src/half.h) equals the AVX2 path's on
 * every float32 value: F16C's vcvtps2ph for float16, the vector shift-and-round for bfloat16.
 * And widening every float16 value equals vcvtph2ps. */
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
  return test_finish("test_half_rounding");
}
