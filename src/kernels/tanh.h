/* tanh and tanh GELU over the vector vocabulary (vec_*.h): MlasComputeTanhF32KernelFma3's
 * instruction sequence, written once for every ISA. */
#ifndef ACTX_TANH_H
#define ACTX_TANH_H

#include "../consts.h"
#include "loop.h"

VF_INLINE void tanh_xn(vf *v, int count) {
  vf s[VF_UNROLL], p[VF_UNROLL], q[VF_UNROLL];
  ACTX_FOR_VECTORS(k, count) {
    v[k] = vf_max(vf_set1(ACTX_TANH_LOWER_RANGE), v[k]); /* NaN: the second operand */
    v[k] = vf_min(vf_set1(ACTX_TANH_UPPER_RANGE), v[k]);
    s[k] = vf_mul(v[k], v[k]);
  }
  ACTX_FOR_VECTORS(k, count) {
    p[k] = vf_fmadd(s[k], vf_set1(ACTX_TANH_ALPHA_13), vf_set1(ACTX_TANH_ALPHA_11));
    q[k] = vf_fmadd(s[k], vf_set1(ACTX_TANH_BETA_6), vf_set1(ACTX_TANH_BETA_4));
  }
  ACTX_FOR_VECTORS(k, count) {
    p[k] = vf_fmadd(p[k], s[k], vf_set1(ACTX_TANH_ALPHA_9));
    q[k] = vf_fmadd(q[k], s[k], vf_set1(ACTX_TANH_BETA_2));
  }
  ACTX_FOR_VECTORS(k, count) {
    p[k] = vf_fmadd(p[k], s[k], vf_set1(ACTX_TANH_ALPHA_7));
    q[k] = vf_fmadd(q[k], s[k], vf_set1(ACTX_TANH_BETA_0));
  }
  ACTX_FOR_VECTORS(k, count) p[k] = vf_fmadd(p[k], s[k], vf_set1(ACTX_TANH_ALPHA_5));
  ACTX_FOR_VECTORS(k, count) p[k] = vf_fmadd(p[k], s[k], vf_set1(ACTX_TANH_ALPHA_3));
  ACTX_FOR_VECTORS(k, count) p[k] = vf_fmadd(p[k], s[k], vf_set1(ACTX_TANH_ALPHA_1));
  ACTX_FOR_VECTORS(k, count) v[k] = vf_div(vf_mul(v[k], p[k]), q[k]);
}

VF_INLINE void tanh_op(vf *v, int count, const actx_kernel_params *p) {
  (void)p;
  tanh_xn(v, count);
}

/* ORT's Gelu(tanh) / FastGelu: u = v * ((C * v) * v + B), then (0.5 * v) * (tanh(u) + 1).
 * The pre-pass is ORT's C++: x86's build keeps its multiply and add apart, the arm64 build
 * contracts them into fma(C * v, v, B) (fused_tanh_prepass, ort_rule.c). */
VF_INLINE void gelu_tanh_op(vf *v, int count, const actx_kernel_params *p) {
  vf t[VF_UNROLL];
  if (p->fused_tanh_prepass) {
    ACTX_FOR_VECTORS(k, count) {
      t[k] = vf_fmadd(vf_mul(vf_set1(ACTX_GELU_TANH_C), v[k]), v[k], vf_set1(ACTX_GELU_TANH_B));
      t[k] = vf_mul(v[k], t[k]);
    }
  } else {
    ACTX_FOR_VECTORS(k, count) {
      t[k] = vf_mul(vf_mul(vf_set1(ACTX_GELU_TANH_C), v[k]), v[k]);
      t[k] = vf_mul(v[k], vf_add(t[k], vf_set1(ACTX_GELU_TANH_B)));
    }
  }
  tanh_xn(t, count);
  ACTX_FOR_VECTORS(k, count) {
    v[k] = vf_mul(vf_mul(vf_set1(ACTX_GELU_HALF), v[k]), vf_add(t[k], vf_set1(ACTX_GELU_ONE)));
  }
}

#endif /* ACTX_TANH_H */
