/* sigmoid and QuickGelu over the vector vocabulary (vec_*.h): MlasComputeLogisticF32KernelFma3's
 * instruction sequence, written once for every ISA. */
#ifndef ACTX_LOGISTIC_H
#define ACTX_LOGISTIC_H

#include "../consts.h"
#include "loop.h"

/* clamp_one: also clamp the result to at most 1, as MlasSiluKernelAvx512F's logistic and MLAS's
 * generic logistic (ORT arm64) do (it changes the result of 20 float32 inputs near 17.5-18,
 * where p/q + 0.5 rounds to 1 + 2^-23) */
VF_INLINE void logistic_xn(vf *v, int count, int clamp_one) {
  vf s[VF_UNROLL], p[VF_UNROLL], q[VF_UNROLL];
  ACTX_FOR_VECTORS(k, count) {
    v[k] = vf_max(vf_set1(ACTX_LOGISTIC_LOWER_RANGE), v[k]); /* NaN: the second operand */
    v[k] = vf_min(vf_set1(ACTX_LOGISTIC_UPPER_RANGE), v[k]);
    s[k] = vf_mul(v[k], v[k]);
  }
  ACTX_FOR_VECTORS(k, count) {
    p[k] = vf_fmadd(s[k], vf_set1(ACTX_LOGISTIC_ALPHA_9), vf_set1(ACTX_LOGISTIC_ALPHA_7));
    q[k] = vf_fmadd(s[k], vf_set1(ACTX_LOGISTIC_BETA_10), vf_set1(ACTX_LOGISTIC_BETA_8));
  }
  ACTX_FOR_VECTORS(k, count) {
    p[k] = vf_fmadd(p[k], s[k], vf_set1(ACTX_LOGISTIC_ALPHA_5));
    q[k] = vf_fmadd(q[k], s[k], vf_set1(ACTX_LOGISTIC_BETA_6));
  }
  ACTX_FOR_VECTORS(k, count) {
    p[k] = vf_fmadd(p[k], s[k], vf_set1(ACTX_LOGISTIC_ALPHA_3));
    q[k] = vf_fmadd(q[k], s[k], vf_set1(ACTX_LOGISTIC_BETA_4));
  }
  ACTX_FOR_VECTORS(k, count) {
    p[k] = vf_fmadd(p[k], s[k], vf_set1(ACTX_LOGISTIC_ALPHA_1));
    q[k] = vf_fmadd(q[k], s[k], vf_set1(ACTX_LOGISTIC_BETA_2));
  }
  ACTX_FOR_VECTORS(k, count) q[k] = vf_fmadd(q[k], s[k], vf_set1(ACTX_LOGISTIC_BETA_0));
  ACTX_FOR_VECTORS(k, count) {
    const vf r = vf_add(vf_div(vf_mul(v[k], p[k]), q[k]), vf_set1(ACTX_LOGISTIC_ONE_HALF));
    v[k] = vf_max(vf_set1(0.0f), r); /* MLAS's FMA3 kernel clamps below only */
  }
  /* the constant first: a NaN lane stays NaN on every vocabulary (vminps returns its second
   * operand, vminq_f32 the NaN); the AVX-512F SiLU copies NaN inputs over it anyway */
  if (clamp_one) ACTX_FOR_VECTORS(k, count) v[k] = vf_min(vf_set1(ACTX_LOGISTIC_ONE), v[k]);
}

VF_INLINE void sigmoid_op(vf *v, int count, const actx_kernel_params *p) {
  logistic_xn(v, count, p->clamp_one);
}

/* ORT's QuickGelu: v * logistic(v * alpha); alpha == 1 is MlasComputeSilu, which skips the
 * multiply (it would quiet a signalling NaN) */
VF_INLINE void quick_gelu_op(vf *v, int count, const actx_kernel_params *p) {
  vf u[VF_UNROLL];
  const vf alpha = vf_set1(p->alpha);
  if (p->alpha == 1.0f) {
    ACTX_FOR_VECTORS(k, count) u[k] = v[k];
  } else if (p->alpha == p->alpha) { /* one NaN operand: it is the result, made quiet */
    ACTX_FOR_VECTORS(k, count) u[k] = vf_mul(v[k], alpha);
  } else { /* a NaN x and a NaN alpha give x's NaN, as ORT (vmulps's operands may be swapped) */
    ACTX_FOR_VECTORS(k, count) u[k] = vf_mul_first_nan(v[k], alpha);
  }
  logistic_xn(u, count, p->clamp_one);
  ACTX_FOR_VECTORS(k, count) v[k] = vf_mul(v[k], u[k]);
}

#endif /* ACTX_LOGISTIC_H */
