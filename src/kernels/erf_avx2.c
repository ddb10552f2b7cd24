/* erf and exact GELU, AVX2 + FMA3: MlasErfKernelFma3's instruction sequence on 8 lanes. */
#include "../consts.h"
#include "../kernels.h"
#include "avx2_loop.h"

static inline __m256 erf8(__m256 x) {
  const __m256 neg_zero = _mm256_set1_ps(-0.0f);
  const __m256 sign = _mm256_and_ps(x, neg_zero);
  __m256 a = _mm256_andnot_ps(neg_zero, x);
  /* vminps returns its second operand for a NaN: the NaN lane stays NaN (MLAS issue #28462) */
  a = _mm256_min_ps(_mm256_set1_ps(ACTX_ERF_UPPER_ABS_RANGE), a);
  const __m256 big_lane = _mm256_cmp_ps(a, _mm256_set1_ps(ACTX_ERF_SPLIT_BOUNDARY), _CMP_GT_OS);
  const int big_bits = _mm256_movemask_ps(big_lane);

  /* small branch: a + a * P(a^2). Lanes of the big branch are cleared to +0 before the merge.
   * The data-dependent skips below change no bit: a skipped branch would only contribute +0. */
  __m256 small = _mm256_setzero_ps();
  if (big_bits != 0xFF) {
    const __m256 s = _mm256_mul_ps(a, a);
    small = _mm256_fmadd_ps(_mm256_set1_ps(ACTX_ERF_SMALL_P0), s, _mm256_set1_ps(ACTX_ERF_SMALL_P1));
    small = _mm256_fmadd_ps(small, s, _mm256_set1_ps(ACTX_ERF_SMALL_P2));
    small = _mm256_fmadd_ps(small, s, _mm256_set1_ps(ACTX_ERF_SMALL_P3));
    small = _mm256_fmadd_ps(small, s, _mm256_set1_ps(ACTX_ERF_SMALL_P4));
    small = _mm256_fmadd_ps(small, s, _mm256_set1_ps(ACTX_ERF_SMALL_P5_MINUS_ONE));
    small = _mm256_fmadd_ps(small, a, a);
    small = _mm256_andnot_ps(big_lane, small);
  }
  if (big_bits == 0) return _mm256_or_ps(small, sign);

  /* big branch: 1 - exp(-(ab + ab * Q(ab))); small lanes run it on +0 and yield exactly +0 */
  const __m256 ab = _mm256_and_ps(big_lane, a);
  __m256 big = _mm256_fmadd_ps(_mm256_set1_ps(ACTX_ERF_BIG_P0), ab, _mm256_set1_ps(ACTX_ERF_BIG_P1));
  big = _mm256_fmadd_ps(big, ab, _mm256_set1_ps(ACTX_ERF_BIG_P2));
  big = _mm256_fmadd_ps(big, ab, _mm256_set1_ps(ACTX_ERF_BIG_P3));
  big = _mm256_fmadd_ps(big, ab, _mm256_set1_ps(ACTX_ERF_BIG_P4));
  big = _mm256_fmadd_ps(big, ab, _mm256_set1_ps(ACTX_ERF_BIG_P5));
  big = _mm256_fmadd_ps(big, ab, _mm256_set1_ps(ACTX_ERF_BIG_P6_MINUS_ONE));
  big = _mm256_fmadd_ps(big, ab, ab);
  big = _mm256_xor_ps(big, neg_zero);
  big = _mm256_max_ps(big, _mm256_set1_ps(ACTX_ERF_EXP_LOWER_RANGE));

  const __m256 c = _mm256_set1_ps(ACTX_ERF_EXP_C);
  __m256 r = _mm256_fmadd_ps(_mm256_set1_ps(ACTX_ERF_EXP_LOG2_RECIPROCAL), big, c);
  r = _mm256_sub_ps(r, c);
  __m256 f = _mm256_fmadd_ps(r, _mm256_set1_ps(ACTX_ERF_EXP_LOG2_HI), big);
  f = _mm256_fmadd_ps(r, _mm256_set1_ps(ACTX_ERF_EXP_LOG2_LO), f);
  __m256 e = _mm256_fmadd_ps(_mm256_set1_ps(ACTX_ERF_EXP_P0), f, _mm256_set1_ps(ACTX_ERF_EXP_P1));
  e = _mm256_fmadd_ps(e, f, _mm256_set1_ps(ACTX_ERF_EXP_P2));
  e = _mm256_fmadd_ps(e, f, _mm256_set1_ps(ACTX_ERF_EXP_P3));
  e = _mm256_fmadd_ps(e, f, _mm256_set1_ps(ACTX_ERF_EXP_P4));
  e = _mm256_fmadd_ps(e, f, _mm256_set1_ps(ACTX_ERF_EXP_P5));
  e = _mm256_fmadd_ps(e, f, _mm256_set1_ps(ACTX_ERF_EXP_P6));
  __m256i pow2 = _mm256_add_epi32(_mm256_cvttps_epi32(r), _mm256_set1_epi32(ACTX_ERF_EXP_X7F));
  pow2 = _mm256_slli_epi32(pow2, 23);
  e = _mm256_mul_ps(e, _mm256_castsi256_ps(pow2));
  e = _mm256_sub_ps(_mm256_set1_ps(ACTX_ERF_ONE), e);

  return _mm256_or_ps(_mm256_or_ps(e, small), sign);
}

static inline __m256 erf_v8(__m256 v, __m256 alpha) {
  (void)alpha;
  return erf8(v);
}

/* ORT's Gelu / BiasGelu in one pass: (0.5 * v) * (erf(v * 1/sqrt(2)) + 1) */
static inline __m256 gelu_v8(__m256 v, __m256 alpha) {
  (void)alpha;
  const __m256 e = erf8(_mm256_mul_ps(v, _mm256_set1_ps(ACTX_GELU_INV_SQRT2)));
  return _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(ACTX_GELU_HALF), v),
                       _mm256_add_ps(e, _mm256_set1_ps(ACTX_GELU_ONE)));
}

ACTX_AVX2_KERNELS(erf)
ACTX_AVX2_KERNELS(gelu)
