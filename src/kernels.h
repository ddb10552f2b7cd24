/* The kernel list: every compute kernel actx has, by name, generated from the op list (ops.h)
 * and the ISA list below.
 *
 * Names follow XNNPACK's scheme: actx_<dtype>_<op>__<isa>[_u<elements per unrolled step>].
 * Every kernel maps n elements of x to y (y == x allowed) with the same signature. float16 /
 * bfloat16 kernels widen to float32, run the float32 arithmetic and round once. */
#ifndef ACTX_KERNELS_H
#define ACTX_KERNELS_H

#include <stddef.h>

#include "ops.h"

typedef struct actx_kernel_params {
  const void *bias; /* NULL, or n elements added to x before the op (the API walks bias rows so
                       a kernel never wraps) */
  float alpha;      /* QuickGelu's; ignored by the other ops */
  int keep_nan;     /* a NaN input comes out unchanged (ORT's AVX-512F Gelu and SiLU) */
  int clamp_one;    /* the logistic (Sigmoid, QuickGelu) also clamped to at most 1 (ORT's
                       AVX-512F SiLU, ORT arm64's logistic) */
  int fused_tanh_prepass; /* tanh GELU's C * v * v + B as one fma (ORT's arm64 C++) */
} actx_kernel_params;

typedef void (*actx_kernel_fn)(const void *x, void *y, size_t n, const actx_kernel_params *p);

/* X(kernel suffix, actx_isa enum). The x86 ISAs are compiled only for x86 targets, NEON only
 * for AArch64 (where every core has it). */
#if defined(__x86_64__) || defined(__i386__)
#define ACTX_HAVE_X86_KERNELS 1
#define ACTX_HAVE_NEON_KERNELS 0
#define ACTX_ISAS(X) X(portable, ACTX_ISA_PORTABLE) X(avx2_u32, ACTX_ISA_AVX2) X(avx512_u64, ACTX_ISA_AVX512)
#elif defined(__aarch64__)
#define ACTX_HAVE_X86_KERNELS 0
#define ACTX_HAVE_NEON_KERNELS 1
#define ACTX_ISAS(X) X(portable, ACTX_ISA_PORTABLE) X(neon_u16, ACTX_ISA_NEON)
#else
#define ACTX_HAVE_X86_KERNELS 0
#define ACTX_HAVE_NEON_KERNELS 0
#define ACTX_ISAS(X) X(portable, ACTX_ISA_PORTABLE)
#endif

#define ACTX_DECLARE_KERNEL_(dt, op, isa) \
  void actx_##dt##_##op##__##isa(const void *x, void *y, size_t n, const actx_kernel_params *p);
#define ACTX_DECLARE_DTYPES_(op, isa) \
  ACTX_DECLARE_KERNEL_(f32, op, isa) ACTX_DECLARE_KERNEL_(f16, op, isa) ACTX_DECLARE_KERNEL_(bf16, op, isa)
#define ACTX_DECLARE_OP_(op, ...) \
  ACTX_DECLARE_DTYPES_(op, portable) ACTX_DECLARE_DTYPES_(op, avx2_u32)    \
  ACTX_DECLARE_DTYPES_(op, avx512_u64) ACTX_DECLARE_DTYPES_(op, neon_u16)
ACTX_OPS(ACTX_DECLARE_OP_)
#undef ACTX_DECLARE_KERNEL_
#undef ACTX_DECLARE_DTYPES_
#undef ACTX_DECLARE_OP_

#endif /* ACTX_KERNELS_H */
