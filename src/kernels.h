/* The kernel list: every compute kernel actx has, by name.
 *
 * Names follow XNNPACK's scheme: actx_<dtype>_<op>__<isa>[_u<unroll>]. Every kernel has the
 * same signature: it maps n elements of x to y (y == x allowed); bias, when not NULL, holds n
 * elements added to x before the op (the API walks bias rows so a kernel never wraps); alpha is
 * QuickGelu's, ignored by the other ops. float16/bfloat16 kernels widen to float32, run the
 * float32 arithmetic and round once. */
#ifndef ACTX_KERNELS_H
#define ACTX_KERNELS_H

#include <stddef.h>

typedef void (*actx_kernel_fn)(const void *x, void *y, size_t n, const void *bias, float alpha);

/* X(op) for every op, in actx_op order. */
#define ACTX_FOREACH_OP(X) X(erf) X(gelu) X(gelu_tanh) X(quick_gelu) X(tanh) X(sigmoid)

#define ACTX_DECLARE_KERNELS(op)                                                                 \
  void actx_f32_##op##__portable(const void *x, void *y, size_t n, const void *bias, float a);   \
  void actx_f16_##op##__portable(const void *x, void *y, size_t n, const void *bias, float a);   \
  void actx_bf16_##op##__portable(const void *x, void *y, size_t n, const void *bias, float a);  \
  void actx_f32_##op##__avx2_u32(const void *x, void *y, size_t n, const void *bias, float a);   \
  void actx_f16_##op##__avx2_u32(const void *x, void *y, size_t n, const void *bias, float a);   \
  void actx_bf16_##op##__avx2_u32(const void *x, void *y, size_t n, const void *bias, float a);
ACTX_FOREACH_OP(ACTX_DECLARE_KERNELS)
#undef ACTX_DECLARE_KERNELS

#endif /* ACTX_KERNELS_H */
