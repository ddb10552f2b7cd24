/* bf16_exp.h — exp in float32 for the service's vectorised loops (ACTX_BF16_VECTORISED): only
 * element-wise float32 and int32 arithmetic, so it gives the same bits in every ISA's build and
 * the compiler vectorises it where it is inlined. Internal to src/bf16/. */
#ifndef ACTX_BF16_EXP_H
#define ACTX_BF16_EXP_H

#include <math.h>
#include <stdint.h>

#include "half.h"

/* exp(x) in float32, branch-free so that it vectorises (Cephes' expf, evaluated with fmaf): n =
 * round(x / ln 2) by adding 1.5 * 2^23, r = x - n ln 2 with ln 2 in two parts, a degree-7
 * polynomial on |r| <= ln2 / 2 in Horner form (1 + r (1 + r p(r))), then times 2^n as two powers
 * of two built from exponent bits (each normal, so a result in the subnormal range is rounded
 * once, at the last product). fmaf is one correctly rounded operation, so the bits are the same
 * where a build has the instruction (the AVX2 and AVX-512 clones, AArch64) and where it calls the
 * C library's (the baseline x86-64 clone). Clamped to [-104, 89]: below -104 the result rounds to
 * 0 (-inf gives 0), above 88.73 it is +inf. A NaN gives 0 or +inf by its sign (the callers never
 * pass one). Measured over every float32 in [-104, 88.72] against exp in double: at most
 * 0.894 ulp for normal results, at most 0.843 · 2^-149 absolute for subnormal ones
 * (test_bf16_softmax sweeps it within 1 ulp and 2^-149). */
static inline float actx_bf16_exp(float x) {
  /* the clamp on the bits (as int32 for x > 0, as uint32 for x < 0), not by float compares:
   * GCC then keeps the loop free of branches, which it cannot if-convert for AVX2 or SSE */
  int32_t b = (int32_t)actx_f32_bits(x);
  b = b < 0x42B20000 ? b : 0x42B20000; /* 89.0f */
  uint32_t u = (uint32_t)b;
  u = u < 0xC2D00000u ? u : 0xC2D00000u; /* -104.0f */
  x = actx_f32_from_bits(u);
  const float t = x * 1.44269504088896341f + 0x1.8p23f; /* 1.5 · 2^23 + n, rounded to nearest */
  const float n = t - 0x1.8p23f;
  const int32_t ni = (int32_t)(actx_f32_bits(t) - 0x4B400000u); /* n in [-150, 128] */
  float r = fmaf(n, -0.693359375f, x);
  r = fmaf(n, 2.12194440e-4f, r);
  float p = 1.9875691500e-4f;
  p = fmaf(p, r, 1.3981999507e-3f);
  p = fmaf(p, r, 8.3334519073e-3f);
  p = fmaf(p, r, 4.1665795894e-2f);
  p = fmaf(p, r, 1.6666665459e-1f);
  p = fmaf(p, r, 5.0000001201e-1f);
  const float e = fmaf(fmaf(p, r, 1.0f), r, 1.0f); /* 1 + r + r^2 p */
  const int32_t n1 = ni / 2, n2 = ni - n1; /* each in [-75, 64] */
  const float s1 = actx_f32_from_bits((uint32_t)(n1 + 127) << 23);
  const float s2 = actx_f32_from_bits((uint32_t)(n2 + 127) << 23);
  return e * s1 * s2;
}

#endif /* ACTX_BF16_EXP_H */
