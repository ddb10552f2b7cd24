/* tanh and tanh GELU, AVX2 + FMA3: MlasComputeTanhF32KernelFma3's sequence on 8 lanes. */
#include "../consts.h"
#include "../kernels.h"
#include "avx2_loop.h"

static inline __m256 tanh8(__m256 x) {
  __m256 v = _mm256_max_ps(_mm256_set1_ps(ACTX_TANH_LOWER_RANGE), x); /* NaN: second operand */
  v = _mm256_min_ps(_mm256_set1_ps(ACTX_TANH_UPPER_RANGE), v);
  const __m256 s = _mm256_mul_ps(v, v);
  __m256 p = _mm256_fmadd_ps(s, _mm256_set1_ps(ACTX_TANH_ALPHA_13), _mm256_set1_ps(ACTX_TANH_ALPHA_11));
  p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(ACTX_TANH_ALPHA_9));
  p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(ACTX_TANH_ALPHA_7));
  p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(ACTX_TANH_ALPHA_5));
  p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(ACTX_TANH_ALPHA_3));
  p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(ACTX_TANH_ALPHA_1));
  __m256 q = _mm256_fmadd_ps(s, _mm256_set1_ps(ACTX_TANH_BETA_6), _mm256_set1_ps(ACTX_TANH_BETA_4));
  q = _mm256_fmadd_ps(q, s, _mm256_set1_ps(ACTX_TANH_BETA_2));
  q = _mm256_fmadd_ps(q, s, _mm256_set1_ps(ACTX_TANH_BETA_0));
  p = _mm256_mul_ps(v, p);
  return _mm256_div_ps(p, q);
}

static inline __m256 tanh_v8(__m256 v, __m256 alpha) {
  (void)alpha;
  return tanh8(v);
}

/* ORT's Gelu(tanh) / FastGelu: u = v * ((C * v) * v + B) without fma, then
 * (0.5 * v) * (tanh(u) + 1) */
static inline __m256 gelu_tanh_v8(__m256 v, __m256 alpha) {
  (void)alpha;
  __m256 u = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(ACTX_GELU_TANH_C), v), v);
  u = _mm256_mul_ps(v, _mm256_add_ps(u, _mm256_set1_ps(ACTX_GELU_TANH_B)));
  return _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(ACTX_GELU_HALF), v),
                       _mm256_add_ps(tanh8(u), _mm256_set1_ps(ACTX_GELU_ONE)));
}

ACTX_AVX2_KERNELS(tanh)
ACTX_AVX2_KERNELS(gelu_tanh)
