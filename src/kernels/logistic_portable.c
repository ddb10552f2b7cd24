/* sigmoid and QuickGelu, portable C: MlasComputeLogisticF32KernelFma3's sequence, one lane. */
#include "../consts.h"
#include "../kernels.h"
#include "portable_loop.h"



static float actx_logistic_scalar(float x) {
  float v = actx_max_ps(ACTX_LOGISTIC_LOWER_RANGE, x); /* NaN passes: second operand */
  v = actx_min_ps(ACTX_LOGISTIC_UPPER_RANGE, v);
  const float s = v * v;
  float p = fmaf(s, ACTX_LOGISTIC_ALPHA_9, ACTX_LOGISTIC_ALPHA_7);
  p = fmaf(p, s, ACTX_LOGISTIC_ALPHA_5);
  p = fmaf(p, s, ACTX_LOGISTIC_ALPHA_3);
  p = fmaf(p, s, ACTX_LOGISTIC_ALPHA_1);
  float q = fmaf(s, ACTX_LOGISTIC_BETA_10, ACTX_LOGISTIC_BETA_8);
  q = fmaf(q, s, ACTX_LOGISTIC_BETA_6);
  q = fmaf(q, s, ACTX_LOGISTIC_BETA_4);
  q = fmaf(q, s, ACTX_LOGISTIC_BETA_2);
  q = fmaf(q, s, ACTX_LOGISTIC_BETA_0);
  p = v * p;
  const float r = p / q + ACTX_LOGISTIC_ONE_HALF;
  return actx_max_ps(0.0f, r); /* only the lower clamp: the FMA3 kernel has no upper one */
}

static inline float sigmoid_scalar(float v, float alpha) {
  (void)alpha;
  return actx_logistic_scalar(v);
}

/* ORT's QuickGelu: v * logistic(v * alpha); alpha == 1 is MlasComputeSilu, which skips the
 * multiply (it would quiet a signalling NaN) */
static inline float quick_gelu_scalar(float v, float alpha) {
  const float u = alpha == 1.0f ? v : actx_mul_ps(v, alpha); /* NaN x and alpha: x's, as ORT */
  return v * actx_logistic_scalar(u);
}

ACTX_PORTABLE_KERNELS(sigmoid)
ACTX_PORTABLE_KERNELS(quick_gelu)
