/* tanh and tanh GELU, portable C: MlasComputeTanhF32KernelFma3's sequence, one lane. */
#include "../consts.h"
#include "../kernels.h"
#include "portable_loop.h"



static float actx_tanh_scalar(float x) {
  float v = actx_max_ps(ACTX_TANH_LOWER_RANGE, x); /* NaN passes: it is the second operand */
  v = actx_min_ps(ACTX_TANH_UPPER_RANGE, v);
  const float s = v * v;
  float p = fmaf(s, ACTX_TANH_ALPHA_13, ACTX_TANH_ALPHA_11);
  p = fmaf(p, s, ACTX_TANH_ALPHA_9);
  p = fmaf(p, s, ACTX_TANH_ALPHA_7);
  p = fmaf(p, s, ACTX_TANH_ALPHA_5);
  p = fmaf(p, s, ACTX_TANH_ALPHA_3);
  p = fmaf(p, s, ACTX_TANH_ALPHA_1);
  float q = fmaf(s, ACTX_TANH_BETA_6, ACTX_TANH_BETA_4);
  q = fmaf(q, s, ACTX_TANH_BETA_2);
  q = fmaf(q, s, ACTX_TANH_BETA_0);
  p = v * p;
  return p / q;
}

static inline float tanh_scalar(float v, float alpha) {
  (void)alpha;
  return actx_tanh_scalar(v);
}

/* ORT's Gelu(tanh) / FastGelu: u = v * ((C * v) * v + B) in separate roundings (ORT's C++ is
 * not contracted to fma), then (0.5 * v) * (tanh(u) + 1) */
static inline float gelu_tanh_scalar(float v, float alpha) {
  (void)alpha;
  const float u = v * ((ACTX_GELU_TANH_C * v) * v + ACTX_GELU_TANH_B);
  return (ACTX_GELU_HALF * v) * (actx_tanh_scalar(u) + ACTX_GELU_ONE);
}

ACTX_PORTABLE_KERNELS(tanh)
ACTX_PORTABLE_KERNELS(gelu_tanh)
