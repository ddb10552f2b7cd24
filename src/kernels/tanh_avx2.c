/* tanh and tanh GELU, AVX2 + FMA3: MlasComputeTanhF32KernelFma3's sequence on 8 lanes, run in
 * lockstep over up to ACTX_AVX2_UNROLL vectors. */
#include "../consts.h"
#include "../kernels.h"
#include "avx2_loop.h"

#define U ACTX_AVX2_UNROLL
#define SET1 _mm256_set1_ps
#define FMA _mm256_fmadd_ps

static inline __attribute__((always_inline)) void tanh_xn_inplace(__m256 *v, int count) {
  __m256 s[U], p[U], q[U];
  ACTX_FOR_VECTORS(k, count) {
    v[k] = _mm256_max_ps(SET1(ACTX_TANH_LOWER_RANGE), v[k]); /* NaN: the second operand */
    v[k] = _mm256_min_ps(SET1(ACTX_TANH_UPPER_RANGE), v[k]);
    s[k] = _mm256_mul_ps(v[k], v[k]);
  }
  ACTX_FOR_VECTORS(k, count) {
    p[k] = FMA(s[k], SET1(ACTX_TANH_ALPHA_13), SET1(ACTX_TANH_ALPHA_11));
    q[k] = FMA(s[k], SET1(ACTX_TANH_BETA_6), SET1(ACTX_TANH_BETA_4));
  }
  ACTX_FOR_VECTORS(k, count) {
    p[k] = FMA(p[k], s[k], SET1(ACTX_TANH_ALPHA_9));
    q[k] = FMA(q[k], s[k], SET1(ACTX_TANH_BETA_2));
  }
  ACTX_FOR_VECTORS(k, count) {
    p[k] = FMA(p[k], s[k], SET1(ACTX_TANH_ALPHA_7));
    q[k] = FMA(q[k], s[k], SET1(ACTX_TANH_BETA_0));
  }
  ACTX_FOR_VECTORS(k, count) p[k] = FMA(p[k], s[k], SET1(ACTX_TANH_ALPHA_5));
  ACTX_FOR_VECTORS(k, count) p[k] = FMA(p[k], s[k], SET1(ACTX_TANH_ALPHA_3));
  ACTX_FOR_VECTORS(k, count) p[k] = FMA(p[k], s[k], SET1(ACTX_TANH_ALPHA_1));
  ACTX_FOR_VECTORS(k, count) v[k] = _mm256_div_ps(_mm256_mul_ps(v[k], p[k]), q[k]);
}

static inline __attribute__((always_inline)) void tanh_xn(__m256 *v, int count, __m256 alpha) {
  (void)alpha;
  tanh_xn_inplace(v, count);
}

/* ORT's Gelu(tanh) / FastGelu: u = v * ((C * v) * v + B) without fma (ORT's C++ is not
 * contracted), then (0.5 * v) * (tanh(u) + 1) */
static inline __attribute__((always_inline)) void gelu_tanh_xn(__m256 *v, int count, __m256 alpha) {
  (void)alpha;
  __m256 t[U];
  ACTX_FOR_VECTORS(k, count) {
    t[k] = _mm256_mul_ps(_mm256_mul_ps(SET1(ACTX_GELU_TANH_C), v[k]), v[k]);
    t[k] = _mm256_mul_ps(v[k], _mm256_add_ps(t[k], SET1(ACTX_GELU_TANH_B)));
  }
  tanh_xn_inplace(t, count);
  ACTX_FOR_VECTORS(k, count) {
    v[k] = _mm256_mul_ps(_mm256_mul_ps(SET1(ACTX_GELU_HALF), v[k]),
                         _mm256_add_ps(t[k], SET1(ACTX_GELU_ONE)));
  }
}

ACTX_AVX2_KERNELS(tanh)
ACTX_AVX2_KERNELS(gelu_tanh)
