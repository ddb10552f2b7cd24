/* erf and exact GELU over the vector vocabulary (vec_*.h): MlasErfKernelFma3's instruction
 * sequence, written once for every ISA. Each step runs across `count` vectors in lockstep
 * (VF_UNROLL, or 1); count is a constant after inlining. */
#ifndef ACTX_ERF_H
#define ACTX_ERF_H

#include "../consts.h"
#include "loop.h"

/* erf of v[0..count), in place */
VF_INLINE void erf_xn(vf *v, int count) {
  const vf neg_zero = vf_set1(-0.0f);
  vf sign[VF_UNROLL], a[VF_UNROLL], s[VF_UNROLL], small[VF_UNROLL], big[VF_UNROLL], r[VF_UNROLL],
      f[VF_UNROLL], e[VF_UNROLL];
  vm big_lane[VF_UNROLL];
  ACTX_FOR_VECTORS(k, count) {
    sign[k] = vf_and(v[k], neg_zero);
    /* vminps returns its second operand for a NaN: a NaN lane stays NaN (MLAS issue #28462) */
    a[k] = vf_min(vf_set1(ACTX_ERF_UPPER_ABS_RANGE), vf_andnot(neg_zero, v[k]));
    s[k] = vf_mul(a[k], a[k]);
  }
  /* small branch: a + a * P(a^2), cleared to +0 on the big branch's lanes */
  ACTX_FOR_VECTORS(k, count) small[k] = vf_fmadd(vf_set1(ACTX_ERF_SMALL_P0), s[k], vf_set1(ACTX_ERF_SMALL_P1));
  ACTX_FOR_VECTORS(k, count) small[k] = vf_fmadd(small[k], s[k], vf_set1(ACTX_ERF_SMALL_P2));
  ACTX_FOR_VECTORS(k, count) small[k] = vf_fmadd(small[k], s[k], vf_set1(ACTX_ERF_SMALL_P3));
  ACTX_FOR_VECTORS(k, count) small[k] = vf_fmadd(small[k], s[k], vf_set1(ACTX_ERF_SMALL_P4));
  ACTX_FOR_VECTORS(k, count) small[k] = vf_fmadd(small[k], s[k], vf_set1(ACTX_ERF_SMALL_P5_MINUS_ONE));
  ACTX_FOR_VECTORS(k, count) {
    small[k] = vf_fmadd(small[k], a[k], a[k]);
    big_lane[k] = vf_gt(a[k], vf_set1(ACTX_ERF_SPLIT_BOUNDARY));
    small[k] = vf_zero_where(big_lane[k], small[k]);
    /* the small lanes run the big branch on +0, which yields exactly +0: the results merge
     * with an or */
    a[k] = vf_keep_where(big_lane[k], a[k]);
  }
  /* big branch: 1 - exp(-(a + a * Q(a))) */
  ACTX_FOR_VECTORS(k, count) big[k] = vf_fmadd(vf_set1(ACTX_ERF_BIG_P0), a[k], vf_set1(ACTX_ERF_BIG_P1));
  ACTX_FOR_VECTORS(k, count) big[k] = vf_fmadd(big[k], a[k], vf_set1(ACTX_ERF_BIG_P2));
  ACTX_FOR_VECTORS(k, count) big[k] = vf_fmadd(big[k], a[k], vf_set1(ACTX_ERF_BIG_P3));
  ACTX_FOR_VECTORS(k, count) big[k] = vf_fmadd(big[k], a[k], vf_set1(ACTX_ERF_BIG_P4));
  ACTX_FOR_VECTORS(k, count) big[k] = vf_fmadd(big[k], a[k], vf_set1(ACTX_ERF_BIG_P5));
  ACTX_FOR_VECTORS(k, count) big[k] = vf_fmadd(big[k], a[k], vf_set1(ACTX_ERF_BIG_P6_MINUS_ONE));
  ACTX_FOR_VECTORS(k, count) {
    big[k] = vf_fmadd(big[k], a[k], a[k]);
    big[k] = vf_xor(big[k], neg_zero);
    big[k] = vf_max(big[k], vf_set1(ACTX_ERF_EXP_LOWER_RANGE));
    /* exp(big) = 2^r * e^f, r = round(big / ln 2) by adding and subtracting 1.5 * 2^23 */
    r[k] = vf_fmadd(vf_set1(ACTX_ERF_EXP_LOG2_RECIPROCAL), big[k], vf_set1(ACTX_ERF_EXP_C));
    r[k] = vf_sub(r[k], vf_set1(ACTX_ERF_EXP_C));
  }
  ACTX_FOR_VECTORS(k, count) f[k] = vf_fmadd(r[k], vf_set1(ACTX_ERF_EXP_LOG2_HI), big[k]);
  ACTX_FOR_VECTORS(k, count) f[k] = vf_fmadd(r[k], vf_set1(ACTX_ERF_EXP_LOG2_LO), f[k]);
  ACTX_FOR_VECTORS(k, count) e[k] = vf_fmadd(vf_set1(ACTX_ERF_EXP_P0), f[k], vf_set1(ACTX_ERF_EXP_P1));
  ACTX_FOR_VECTORS(k, count) e[k] = vf_fmadd(e[k], f[k], vf_set1(ACTX_ERF_EXP_P2));
  ACTX_FOR_VECTORS(k, count) e[k] = vf_fmadd(e[k], f[k], vf_set1(ACTX_ERF_EXP_P3));
  ACTX_FOR_VECTORS(k, count) e[k] = vf_fmadd(e[k], f[k], vf_set1(ACTX_ERF_EXP_P4));
  ACTX_FOR_VECTORS(k, count) e[k] = vf_fmadd(e[k], f[k], vf_set1(ACTX_ERF_EXP_P5));
  ACTX_FOR_VECTORS(k, count) e[k] = vf_fmadd(e[k], f[k], vf_set1(ACTX_ERF_EXP_P6));
  ACTX_FOR_VECTORS(k, count) {
    /* r is an integer in [-27, 0] here and e near 1, so e * 2^r is exact on every ISA */
    e[k] = vf_mul_pow2(e[k], r[k]);
    e[k] = vf_sub(vf_set1(ACTX_ERF_ONE), e[k]);
    v[k] = vf_or(vf_or(e[k], small[k]), sign[k]);
  }
}

VF_INLINE void erf_op(vf *v, int count, const actx_kernel_params *p) {
  (void)p;
  erf_xn(v, count);
}

/* ORT's Gelu / BiasGelu in one pass: (0.5 * v) * (erf(v * 1/sqrt(2)) + 1), three roundings as
 * written in ORT's C++ */
VF_INLINE void gelu_op(vf *v, int count, const actx_kernel_params *p) {
  (void)p;
  vf e[VF_UNROLL];
  ACTX_FOR_VECTORS(k, count) e[k] = vf_mul(v[k], vf_set1(ACTX_GELU_INV_SQRT2));
  erf_xn(e, count);
  ACTX_FOR_VECTORS(k, count) {
    v[k] = vf_mul(vf_mul(vf_set1(ACTX_GELU_HALF), v[k]), vf_add(e[k], vf_set1(ACTX_GELU_ONE)));
  }
}

#endif /* ACTX_ERF_H */
