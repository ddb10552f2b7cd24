/* sleef_arms.c — the SLEEF comparison arm (see sleef_arms.h). Compiled with -mavx2 -mfma. */
#include "sleef_arms.h"

#include <immintrin.h>
#include <string.h>

#include <sleef.h>

#define LANES 8
#define SQRT_HALF 0.70710678118654752440f
#define SQRT_2_OVER_PI 0.79788456080286535588f
#define TANH_GELU_CUBIC 0.044715f

bool actx_sleef_available(void) { return true; }

/* x + bias for the LANES elements starting at i (bias period h; 0: no bias). */
static __m256 load_input(const float *x, size_t i, const float *bias, size_t h) {
  __m256 v = _mm256_loadu_ps(x + i);
  if (h == 0)
    return v;
  size_t j = i % h;
  if (j + LANES <= h)
    return _mm256_add_ps(v, _mm256_loadu_ps(bias + j));
  float b[LANES];
  for (size_t k = 0; k < LANES; k++)
    b[k] = bias[(i + k) % h];
  return _mm256_add_ps(v, _mm256_loadu_ps(b));
}

static __m256 apply(actx_op op, __m256 v, float alpha) {
  const __m256 one = _mm256_set1_ps(1.0f), half = _mm256_set1_ps(0.5f);
  switch (op) {
  case ACTX_OP_ERF:
    return Sleef_erff8_u10avx2(v);
  case ACTX_OP_GELU: {
    __m256 e = Sleef_erff8_u10avx2(_mm256_mul_ps(v, _mm256_set1_ps(SQRT_HALF)));
    return _mm256_mul_ps(_mm256_mul_ps(half, v), _mm256_add_ps(one, e));
  }
  case ACTX_OP_GELU_TANH: {
    __m256 cube = _mm256_mul_ps(_mm256_mul_ps(v, v), v);
    __m256 inner = _mm256_fmadd_ps(_mm256_set1_ps(TANH_GELU_CUBIC), cube, v);
    __m256 t = Sleef_tanhf8_u10avx2(_mm256_mul_ps(_mm256_set1_ps(SQRT_2_OVER_PI), inner));
    return _mm256_mul_ps(_mm256_mul_ps(half, v), _mm256_add_ps(one, t));
  }
  case ACTX_OP_QUICK_GELU: {
    __m256 ax = _mm256_mul_ps(_mm256_set1_ps(-alpha), v);
    return _mm256_div_ps(v, _mm256_add_ps(one, Sleef_expf8_u10avx2(ax)));
  }
  case ACTX_OP_TANH:
    return Sleef_tanhf8_u10avx2(v);
  case ACTX_OP_SIGMOID: {
    __m256 e = Sleef_expf8_u10avx2(_mm256_sub_ps(_mm256_setzero_ps(), v));
    return _mm256_div_ps(one, _mm256_add_ps(one, e));
  }
  default:
    return v;
  }
}

int actx_sleef_compute(const actx_op_desc *desc, const float *x, float *y, size_t n) {
  if (desc->dtype != ACTX_F32 || (unsigned)desc->op >= ACTX_OP_COUNT)
    return -1;
  const float *bias = desc->bias;
  const size_t h = bias != NULL ? desc->bias_len : 0;
  size_t i = 0;
  for (; i + LANES <= n; i += LANES)
    _mm256_storeu_ps(y + i, apply(desc->op, load_input(x, i, bias, h), desc->alpha));
  if (i < n) { /* the tail through a padded vector */
    float in[LANES] = {0}, out[LANES];
    for (size_t k = 0; i + k < n; k++)
      in[k] = x[i + k] + (h != 0 ? bias[(i + k) % h] : 0.0f);
    _mm256_storeu_ps(out, apply(desc->op, _mm256_loadu_ps(in), desc->alpha));
    memcpy(y + i, out, (n - i) * sizeof *y);
  }
  return 0;
}
