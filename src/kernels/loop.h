/* The loop that turns a family body (erf.h, tanh.h, logistic.h) into the f32 / f16 / bf16
 * kernels of kernels.h, over the vector vocabulary of the ISA being compiled (vec_*.h, included
 * first by the ISA's kernels_<isa>.c).
 *
 * A body is `VF_INLINE void <op>_op(vf *v, int count, const actx_kernel_params *p)`: it maps
 * v[0..count) in place, count being VF_UNROLL or 1. Every element, in the unrolled step, the
 * single-vector loop or the tail, goes through the same body, so a result never depends on the
 * tensor's length or alignment; the tail is the ISA's partial load and store, which touch
 * nothing past the tensor. */
#ifndef ACTX_LOOP_H
#define ACTX_LOOP_H

#include <stddef.h>
#include <stdint.h>

#include "../kernels.h"

#ifndef VF_LANES
#error "include the ISA's vec_<isa>.h before loop.h"
#endif

/* Runs one step on every vector; fully unrolled, so v[] stays in registers. */
#define ACTX_FOR_VECTORS(k, count) _Pragma("GCC unroll 4") for (int k = 0; k < (count); k++)

/* a NaN x, made quiet, in place of op(x, b): the compiler may swap the operands of vaddps /
 * vmulps, which keep their first operand's NaN, so the choice is made here */
VF_INLINE vf vf_first_nan(vf x, vf result) {
  return vf_select(vf_isnan(x), result, vf_or(x, vf_set1_bits(0x00400000u)));
}
/* x + bias where a NaN x wins over a NaN bias */
VF_INLINE vf vf_add_first_nan(vf x, vf b) { return vf_first_nan(x, vf_add(x, b)); }
/* x * m where a NaN x wins over a NaN m */
VF_INLINE vf vf_mul_first_nan(vf x, vf m) { return vf_first_nan(x, vf_mul(x, m)); }

/* in where it is NaN, else result. in must be a vf_opaque() copy of the op's input: result is
 * NaN wherever in is, so a compiler that knows the two are one value may decide any NaN will do
 * and drop the select, losing in's signalling bit (clang does). */
VF_INLINE vf vf_nan_input_kept(vf in, vf result) {
  const vm nan = vf_isnan(in);
  return vf_or(vf_keep_where(nan, in), vf_zero_where(nan, result));
}

#define ACTX_SIZEOF_f32 4
#define ACTX_SIZEOF_f16 2
#define ACTX_SIZEOF_bf16 2

/* The unrolled step's loads and stores; bfloat16 may have its own (vec_avx2.h). */
#define VF_DEFINE_BLOCK(dt)                                                                   \
  VF_INLINE void vf_load_block_##dt(const void *p, vf *v) {                                   \
    ACTX_FOR_VECTORS(k, VF_UNROLL) v[k] = vf_load_##dt((const char *)p + k * VF_LANES * ACTX_SIZEOF_##dt); \
  }                                                                                           \
  VF_INLINE void vf_store_block_##dt(void *p, const vf *v) {                                  \
    ACTX_FOR_VECTORS(k, VF_UNROLL) vf_store_##dt((char *)p + k * VF_LANES * ACTX_SIZEOF_##dt, v[k]); \
  }
VF_DEFINE_BLOCK(f32)
VF_DEFINE_BLOCK(f16)
#if !VF_HAS_BLOCK_BF16
VF_DEFINE_BLOCK(bf16)
#endif
#undef VF_DEFINE_BLOCK

/* The op on v[0..count) loaded from x (+ bias); with keep_nan (a constant) a NaN lane of the
 * input comes out unchanged (ORT's AVX-512F Gelu and SiLU copy NaN inputs to the output). */
#define ACTX_APPLY(op, v, count, p, keep_nan)                                         \
  do {                                                                                \
    vf in_[VF_UNROLL];                                                                \
    if (keep_nan) ACTX_FOR_VECTORS(k, count) in_[k] = vf_opaque(v[k]);                \
    op##_op(v, count, p);                                                             \
    if (keep_nan) ACTX_FOR_VECTORS(k, count) v[k] = vf_nan_input_kept(in_[k], v[k]);       \
  } while (0)

#define ACTX_KERNEL_NAME_(dt, op, suffix) actx_##dt##_##op##__##suffix
#define ACTX_KERNEL_NAME(dt, op, suffix) ACTX_KERNEL_NAME_(dt, op, suffix)

/* Defines actx_<dt>_<op>__<VF_KERNEL_SUFFIX>. The parameters are copied to a local first: y
 * may alias anything, so the compiler would otherwise reload them after every store; and the
 * loop is instantiated once per keep_nan, so neither instance tests it per element. */
#define ACTX_KERNEL(dt, op)                                                                   \
  VF_INLINE void actx_loop_##dt##_##op(const char *x, char *y, size_t n,                     \
                                       const actx_kernel_params *p, const int keep_nan) {     \
    const size_t es = ACTX_SIZEOF_##dt, step = VF_LANES * VF_UNROLL;                          \
    const char *b = (const char *)p->bias;                                                    \
    vf v[VF_UNROLL];                                                                          \
    size_t i = 0;                                                                             \
    if (b == NULL) {                                                                          \
      for (; i + step <= n; i += step) {                                                      \
        vf_load_block_##dt(x + i * es, v);                                                    \
        ACTX_APPLY(op, v, VF_UNROLL, p, keep_nan);                                            \
        vf_store_block_##dt(y + i * es, v);                                                   \
      }                                                                                       \
    } else {                                                                                  \
      vf vb[VF_UNROLL];                                                                       \
      for (; i + step <= n; i += step) {                                                      \
        vf_load_block_##dt(x + i * es, v);                                                    \
        vf_load_block_##dt(b + i * es, vb);                                                   \
        ACTX_FOR_VECTORS(k, VF_UNROLL) v[k] = vf_add_first_nan(v[k], vb[k]);                  \
        ACTX_APPLY(op, v, VF_UNROLL, p, keep_nan);                                            \
        vf_store_block_##dt(y + i * es, v);                                                   \
      }                                                                                       \
    }                                                                                         \
    for (; i + VF_LANES <= n; i += VF_LANES) {                                                \
      v[0] = vf_load_##dt(x + i * es);                                                        \
      if (b != NULL) v[0] = vf_add_first_nan(v[0], vf_load_##dt(b + i * es));                 \
      ACTX_APPLY(op, v, 1, p, keep_nan);                                                      \
      vf_store_##dt(y + i * es, v[0]);                                                        \
    }                                                                                         \
    if (i < n) {                                                                              \
      const size_t rest = n - i;                                                              \
      v[0] = vf_load_part_##dt(x + i * es, rest);                                             \
      if (b != NULL) v[0] = vf_add_first_nan(v[0], vf_load_part_##dt(b + i * es, rest));      \
      ACTX_APPLY(op, v, 1, p, keep_nan);                                                      \
      vf_store_part_##dt(y + i * es, v[0], rest);                                             \
    }                                                                                         \
  }                                                                                           \
  void ACTX_KERNEL_NAME(dt, op, VF_KERNEL_SUFFIX)(const void *x, void *y, size_t n,          \
                                                  const actx_kernel_params *p) {              \
    const actx_kernel_params local = *p;                                                      \
    if (local.keep_nan)                                                                       \
      actx_loop_##dt##_##op((const char *)x, (char *)y, n, &local, 1);                        \
    else                                                                                      \
      actx_loop_##dt##_##op((const char *)x, (char *)y, n, &local, 0);                        \
  }

/* The three dtypes of every op of the list (ops.h) */
#define ACTX_KERNELS_OF_OP(name, ...) \
  ACTX_KERNEL(f32, name) ACTX_KERNEL(f16, name) ACTX_KERNEL(bf16, name)

#endif /* ACTX_LOOP_H */
