/* erf and exact GELU, portable C: MlasErfKernelFma3's instruction sequence, one lane. */
#include "../consts.h"
#include "../kernels.h"
#include "portable_loop.h"

#define SIGN_BIT 0x80000000u



static float actx_erf_scalar(float x) {
  const uint32_t sign = actx_f32_bits(x) & SIGN_BIT;
  float a = actx_f32_from_bits(actx_f32_bits(x) & ~SIGN_BIT);
  a = actx_min_ps(ACTX_ERF_UPPER_ABS_RANGE, a); /* a NaN stays NaN: it is the second operand */

  /* small branch, on every lane: a + a * P(a^2) */
  const float s = a * a;
  float small = fmaf(ACTX_ERF_SMALL_P0, s, ACTX_ERF_SMALL_P1);
  small = fmaf(small, s, ACTX_ERF_SMALL_P2);
  small = fmaf(small, s, ACTX_ERF_SMALL_P3);
  small = fmaf(small, s, ACTX_ERF_SMALL_P4);
  small = fmaf(small, s, ACTX_ERF_SMALL_P5_MINUS_ONE);
  small = fmaf(small, a, a);

  /* lanes above the split keep only the big branch; the others give it +0, for which the big
   * branch yields exactly +0, so the two results merge with an or */
  const int big_lane = a > ACTX_ERF_SPLIT_BOUNDARY;
  if (big_lane) small = 0.0f;
  const float ab = big_lane ? a : 0.0f;

  float big = fmaf(ACTX_ERF_BIG_P0, ab, ACTX_ERF_BIG_P1);
  big = fmaf(big, ab, ACTX_ERF_BIG_P2);
  big = fmaf(big, ab, ACTX_ERF_BIG_P3);
  big = fmaf(big, ab, ACTX_ERF_BIG_P4);
  big = fmaf(big, ab, ACTX_ERF_BIG_P5);
  big = fmaf(big, ab, ACTX_ERF_BIG_P6_MINUS_ONE);
  big = fmaf(big, ab, ab);
  big = actx_f32_from_bits(actx_f32_bits(big) ^ SIGN_BIT);
  big = actx_max_ps(big, ACTX_ERF_EXP_LOWER_RANGE);

  /* exp(big) = 2^r * e^f with r = round(big / ln 2), rounded by adding and subtracting 1.5*2^23 */
  float r = fmaf(ACTX_ERF_EXP_LOG2_RECIPROCAL, big, ACTX_ERF_EXP_C);
  r = r - ACTX_ERF_EXP_C;
  float f = fmaf(r, ACTX_ERF_EXP_LOG2_HI, big);
  f = fmaf(r, ACTX_ERF_EXP_LOG2_LO, f);
  float e = fmaf(ACTX_ERF_EXP_P0, f, ACTX_ERF_EXP_P1);
  e = fmaf(e, f, ACTX_ERF_EXP_P2);
  e = fmaf(e, f, ACTX_ERF_EXP_P3);
  e = fmaf(e, f, ACTX_ERF_EXP_P4);
  e = fmaf(e, f, ACTX_ERF_EXP_P5);
  e = fmaf(e, f, ACTX_ERF_EXP_P6);
  /* r is an integer in [-128, 0] here (big >= -88.38), so the conversion is exact */
  const uint32_t pow2 = ((uint32_t)(int32_t)r + ACTX_ERF_EXP_X7F) << 23;
  e = e * actx_f32_from_bits(pow2);
  e = ACTX_ERF_ONE - e;

  return actx_f32_from_bits(actx_f32_bits(e) | actx_f32_bits(small) | sign);
}

static inline float erf_scalar(float v, float alpha) {
  (void)alpha;
  return actx_erf_scalar(v);
}

/* ORT's Gelu / BiasGelu: (0.5 * v) * (erf(v * 1/sqrt(2)) + 1), three roundings as written */
static inline float gelu_scalar(float v, float alpha) {
  (void)alpha;
  const float e = actx_erf_scalar(v * ACTX_GELU_INV_SQRT2);
  return (ACTX_GELU_HALF * v) * (e + ACTX_GELU_ONE);
}

ACTX_PORTABLE_KERNELS(erf)
ACTX_PORTABLE_KERNELS(gelu)
