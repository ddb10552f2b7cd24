/* sigmoid and QuickGelu, AVX2 + FMA3: MlasComputeLogisticF32KernelFma3's sequence on 8 lanes,
 * run in lockstep over up to ACTX_AVX2_UNROLL vectors. */
#include "../consts.h"
#include "../kernels.h"
#include "avx2_loop.h"

#define U ACTX_AVX2_UNROLL
#define SET1 _mm256_set1_ps
#define FMA _mm256_fmadd_ps

static inline __attribute__((always_inline)) void logistic_xn_inplace(__m256 *v, int count) {
  __m256 s[U], p[U], q[U];
  ACTX_FOR_VECTORS(k, count) {
    v[k] = _mm256_max_ps(SET1(ACTX_LOGISTIC_LOWER_RANGE), v[k]); /* NaN: the second operand */
    v[k] = _mm256_min_ps(SET1(ACTX_LOGISTIC_UPPER_RANGE), v[k]);
    s[k] = _mm256_mul_ps(v[k], v[k]);
  }
  ACTX_FOR_VECTORS(k, count) {
    p[k] = FMA(s[k], SET1(ACTX_LOGISTIC_ALPHA_9), SET1(ACTX_LOGISTIC_ALPHA_7));
    q[k] = FMA(s[k], SET1(ACTX_LOGISTIC_BETA_10), SET1(ACTX_LOGISTIC_BETA_8));
  }
  ACTX_FOR_VECTORS(k, count) {
    p[k] = FMA(p[k], s[k], SET1(ACTX_LOGISTIC_ALPHA_5));
    q[k] = FMA(q[k], s[k], SET1(ACTX_LOGISTIC_BETA_6));
  }
  ACTX_FOR_VECTORS(k, count) {
    p[k] = FMA(p[k], s[k], SET1(ACTX_LOGISTIC_ALPHA_3));
    q[k] = FMA(q[k], s[k], SET1(ACTX_LOGISTIC_BETA_4));
  }
  ACTX_FOR_VECTORS(k, count) {
    p[k] = FMA(p[k], s[k], SET1(ACTX_LOGISTIC_ALPHA_1));
    q[k] = FMA(q[k], s[k], SET1(ACTX_LOGISTIC_BETA_2));
  }
  ACTX_FOR_VECTORS(k, count) q[k] = FMA(q[k], s[k], SET1(ACTX_LOGISTIC_BETA_0));
  ACTX_FOR_VECTORS(k, count) {
    const __m256 r = _mm256_add_ps(_mm256_div_ps(_mm256_mul_ps(v[k], p[k]), q[k]),
                                   SET1(ACTX_LOGISTIC_ONE_HALF));
    v[k] = _mm256_max_ps(_mm256_setzero_ps(), r); /* lower clamp only, as MLAS's FMA3 kernel */
  }
}

static inline __attribute__((always_inline)) void sigmoid_xn(__m256 *v, int count, __m256 alpha) {
  (void)alpha;
  logistic_xn_inplace(v, count);
}

/* ORT's QuickGelu: v * logistic(v * alpha); alpha == 1 (SiLU) skips the multiply as
 * MlasComputeSilu does (it would quiet a signalling NaN). */
static inline __attribute__((always_inline)) void quick_gelu_xn(__m256 *v, int count, __m256 alpha) {
  const int alpha_is_one =
      _mm256_movemask_ps(_mm256_cmp_ps(alpha, SET1(1.0f), _CMP_EQ_OQ)) == 0xFF;
  __m256 u[U];
  /* a NaN x and a NaN alpha give x's NaN, as ORT (vmulps's operands may be swapped) */
  ACTX_FOR_VECTORS(k, count) u[k] = alpha_is_one ? v[k] : actx_mul_first_nan8(v[k], alpha);
  logistic_xn_inplace(u, count);
  ACTX_FOR_VECTORS(k, count) v[k] = _mm256_mul_ps(v[k], u[k]);
}

ACTX_AVX2_KERNELS(sigmoid)
ACTX_AVX2_KERNELS(quick_gelu)
