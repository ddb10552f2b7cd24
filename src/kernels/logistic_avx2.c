/* sigmoid and QuickGelu, AVX2 + FMA3: MlasComputeLogisticF32KernelFma3's sequence on 8 lanes. */
#include "../consts.h"
#include "../kernels.h"
#include "avx2_loop.h"

static inline __m256 logistic8(__m256 x) {
  __m256 v = _mm256_max_ps(_mm256_set1_ps(ACTX_LOGISTIC_LOWER_RANGE), x); /* NaN: 2nd operand */
  v = _mm256_min_ps(_mm256_set1_ps(ACTX_LOGISTIC_UPPER_RANGE), v);
  const __m256 s = _mm256_mul_ps(v, v);
  __m256 p = _mm256_fmadd_ps(s, _mm256_set1_ps(ACTX_LOGISTIC_ALPHA_9), _mm256_set1_ps(ACTX_LOGISTIC_ALPHA_7));
  p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(ACTX_LOGISTIC_ALPHA_5));
  p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(ACTX_LOGISTIC_ALPHA_3));
  p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(ACTX_LOGISTIC_ALPHA_1));
  __m256 q = _mm256_fmadd_ps(s, _mm256_set1_ps(ACTX_LOGISTIC_BETA_10), _mm256_set1_ps(ACTX_LOGISTIC_BETA_8));
  q = _mm256_fmadd_ps(q, s, _mm256_set1_ps(ACTX_LOGISTIC_BETA_6));
  q = _mm256_fmadd_ps(q, s, _mm256_set1_ps(ACTX_LOGISTIC_BETA_4));
  q = _mm256_fmadd_ps(q, s, _mm256_set1_ps(ACTX_LOGISTIC_BETA_2));
  q = _mm256_fmadd_ps(q, s, _mm256_set1_ps(ACTX_LOGISTIC_BETA_0));
  p = _mm256_mul_ps(v, p);
  const __m256 r = _mm256_add_ps(_mm256_div_ps(p, q), _mm256_set1_ps(ACTX_LOGISTIC_ONE_HALF));
  return _mm256_max_ps(_mm256_setzero_ps(), r); /* lower clamp only, as MLAS's FMA3 kernel */
}

static inline __m256 sigmoid_v8(__m256 v, __m256 alpha) {
  (void)alpha;
  return logistic8(v);
}

/* ORT's QuickGelu: v * logistic(v * alpha); alpha == 1 (SiLU) skips the multiply as
 * MlasComputeSilu does (it would quiet a signalling NaN). The comparison is loop-invariant. */
static inline __m256 quick_gelu_v8(__m256 v, __m256 alpha) {
  const int alpha_is_one = _mm256_movemask_ps(_mm256_cmp_ps(alpha, _mm256_set1_ps(1.0f), _CMP_EQ_OQ)) == 0xFF;
  const __m256 u = alpha_is_one ? v : _mm256_mul_ps(v, alpha);
  return _mm256_mul_ps(v, logistic8(u));
}

ACTX_AVX2_KERNELS(sigmoid)
ACTX_AVX2_KERNELS(quick_gelu)
