/* erf and exact GELU, AVX2 + FMA3: MlasErfKernelFma3's instruction sequence on 8 lanes, run in
 * lockstep over up to ACTX_AVX2_UNROLL vectors. */
#include "../consts.h"
#include "../kernels.h"
#include "avx2_loop.h"

#define U ACTX_AVX2_UNROLL
#define SET1 _mm256_set1_ps
#define FMA _mm256_fmadd_ps

/* erf of v[0..count), in place */
static inline __attribute__((always_inline)) void erf_xn_inplace(__m256 *v, int count) {
  const __m256 neg_zero = SET1(-0.0f);
  __m256 sign[U], a[U], s[U], small[U], big_lane[U], big[U], r[U], f[U], e[U];
  ACTX_FOR_VECTORS(k, count) {
    sign[k] = _mm256_and_ps(v[k], neg_zero);
    /* vminps returns its second operand for a NaN: a NaN lane stays NaN (MLAS issue #28462) */
    a[k] = _mm256_min_ps(SET1(ACTX_ERF_UPPER_ABS_RANGE), _mm256_andnot_ps(neg_zero, v[k]));
    s[k] = _mm256_mul_ps(a[k], a[k]);
  }
  /* small branch: a + a * P(a^2), cleared to +0 on the big branch's lanes */
  ACTX_FOR_VECTORS(k, count) small[k] = FMA(SET1(ACTX_ERF_SMALL_P0), s[k], SET1(ACTX_ERF_SMALL_P1));
  ACTX_FOR_VECTORS(k, count) small[k] = FMA(small[k], s[k], SET1(ACTX_ERF_SMALL_P2));
  ACTX_FOR_VECTORS(k, count) small[k] = FMA(small[k], s[k], SET1(ACTX_ERF_SMALL_P3));
  ACTX_FOR_VECTORS(k, count) small[k] = FMA(small[k], s[k], SET1(ACTX_ERF_SMALL_P4));
  ACTX_FOR_VECTORS(k, count) small[k] = FMA(small[k], s[k], SET1(ACTX_ERF_SMALL_P5_MINUS_ONE));
  ACTX_FOR_VECTORS(k, count) {
    small[k] = FMA(small[k], a[k], a[k]);
    big_lane[k] = _mm256_cmp_ps(a[k], SET1(ACTX_ERF_SPLIT_BOUNDARY), _CMP_GT_OS);
    small[k] = _mm256_andnot_ps(big_lane[k], small[k]);
    /* the small lanes run the big branch on +0, which yields exactly +0: the results merge
     * with an or */
    a[k] = _mm256_and_ps(big_lane[k], a[k]);
  }
  /* big branch: 1 - exp(-(a + a * Q(a))) */
  ACTX_FOR_VECTORS(k, count) big[k] = FMA(SET1(ACTX_ERF_BIG_P0), a[k], SET1(ACTX_ERF_BIG_P1));
  ACTX_FOR_VECTORS(k, count) big[k] = FMA(big[k], a[k], SET1(ACTX_ERF_BIG_P2));
  ACTX_FOR_VECTORS(k, count) big[k] = FMA(big[k], a[k], SET1(ACTX_ERF_BIG_P3));
  ACTX_FOR_VECTORS(k, count) big[k] = FMA(big[k], a[k], SET1(ACTX_ERF_BIG_P4));
  ACTX_FOR_VECTORS(k, count) big[k] = FMA(big[k], a[k], SET1(ACTX_ERF_BIG_P5));
  ACTX_FOR_VECTORS(k, count) big[k] = FMA(big[k], a[k], SET1(ACTX_ERF_BIG_P6_MINUS_ONE));
  ACTX_FOR_VECTORS(k, count) {
    big[k] = FMA(big[k], a[k], a[k]);
    big[k] = _mm256_xor_ps(big[k], neg_zero);
    big[k] = _mm256_max_ps(big[k], SET1(ACTX_ERF_EXP_LOWER_RANGE));
    /* exp(big) = 2^r * e^f, r = round(big / ln 2) by adding and subtracting 1.5 * 2^23 */
    r[k] = FMA(SET1(ACTX_ERF_EXP_LOG2_RECIPROCAL), big[k], SET1(ACTX_ERF_EXP_C));
    r[k] = _mm256_sub_ps(r[k], SET1(ACTX_ERF_EXP_C));
  }
  ACTX_FOR_VECTORS(k, count) f[k] = FMA(r[k], SET1(ACTX_ERF_EXP_LOG2_HI), big[k]);
  ACTX_FOR_VECTORS(k, count) f[k] = FMA(r[k], SET1(ACTX_ERF_EXP_LOG2_LO), f[k]);
  ACTX_FOR_VECTORS(k, count) e[k] = FMA(SET1(ACTX_ERF_EXP_P0), f[k], SET1(ACTX_ERF_EXP_P1));
  ACTX_FOR_VECTORS(k, count) e[k] = FMA(e[k], f[k], SET1(ACTX_ERF_EXP_P2));
  ACTX_FOR_VECTORS(k, count) e[k] = FMA(e[k], f[k], SET1(ACTX_ERF_EXP_P3));
  ACTX_FOR_VECTORS(k, count) e[k] = FMA(e[k], f[k], SET1(ACTX_ERF_EXP_P4));
  ACTX_FOR_VECTORS(k, count) e[k] = FMA(e[k], f[k], SET1(ACTX_ERF_EXP_P5));
  ACTX_FOR_VECTORS(k, count) e[k] = FMA(e[k], f[k], SET1(ACTX_ERF_EXP_P6));
  ACTX_FOR_VECTORS(k, count) {
    __m256i pow2 = _mm256_add_epi32(_mm256_cvttps_epi32(r[k]), _mm256_set1_epi32(ACTX_ERF_EXP_X7F));
    pow2 = _mm256_slli_epi32(pow2, 23);
    e[k] = _mm256_mul_ps(e[k], _mm256_castsi256_ps(pow2));
    e[k] = _mm256_sub_ps(SET1(ACTX_ERF_ONE), e[k]);
    v[k] = _mm256_or_ps(_mm256_or_ps(e[k], small[k]), sign[k]);
  }
}

static inline __attribute__((always_inline)) void erf_xn(__m256 *v, int count, __m256 alpha) {
  (void)alpha;
  erf_xn_inplace(v, count);
}

/* ORT's Gelu / BiasGelu in one pass: (0.5 * v) * (erf(v * 1/sqrt(2)) + 1) */
static inline __attribute__((always_inline)) void gelu_xn(__m256 *v, int count, __m256 alpha) {
  (void)alpha;
  __m256 e[U];
  ACTX_FOR_VECTORS(k, count) e[k] = _mm256_mul_ps(v[k], SET1(ACTX_GELU_INV_SQRT2));
  erf_xn_inplace(e, count);
  ACTX_FOR_VECTORS(k, count) {
    v[k] = _mm256_mul_ps(_mm256_mul_ps(SET1(ACTX_GELU_HALF), v[k]),
                         _mm256_add_ps(e[k], SET1(ACTX_GELU_ONE)));
  }
}

ACTX_AVX2_KERNELS(erf)
ACTX_AVX2_KERNELS(gelu)
