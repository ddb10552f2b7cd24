/* The portable path's building blocks: SSE instruction semantics in scalar C, and the loop that
 * turns a scalar op body into the f32 / f16 / bf16 kernels of kernels.h.
 *
 * MLAS's FMA3 kernels fix the result of every lane by their instruction sequence; the portable
 * path reproduces that sequence one scalar operation at a time: fmaf for vfmadd, the operand
 * order of vminps/vmaxps (which return the second operand when either is NaN), and bit
 * operations for vandps/vorps/vxorps. */
#ifndef ACTX_PORTABLE_LOOP_H
#define ACTX_PORTABLE_LOOP_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../half.h"

/* vminps a, b: a if a < b, else b (b also when either is NaN or both are zeros) */
static inline float actx_min_ps(float a, float b) { return a < b ? a : b; }
/* vmaxps a, b: a if a > b, else b */
static inline float actx_max_ps(float a, float b) { return a > b ? a : b; }
/* x + bias where a NaN x wins over a NaN bias (made quiet), as in the AVX2 path: C's +
 * leaves the compiler free to swap the operands, so the choice is made here. */
static inline float actx_add_ps(float a, float b) {
  if (a != a) return actx_f32_from_bits(actx_f32_bits(a) | 0x00400000u);
  return a + b;
}

/* a * b where a NaN a wins over a NaN b (made quiet), as in the AVX2 path: the same freedom
 * of the compiler as for +. */
static inline float actx_mul_ps(float a, float b) {
  if (a != a) return actx_f32_from_bits(actx_f32_bits(a) | 0x00400000u);
  return a * b;
}

/* Element access through memcpy: the API allows any alignment, even for a float tensor. */
static inline float actx_load_f32(const void *p, size_t i) {
  float v;
  memcpy(&v, (const char *)p + i * 4, 4);
  return v;
}
static inline void actx_store_f32(void *p, size_t i, float v) { memcpy((char *)p + i * 4, &v, 4); }
static inline uint16_t actx_load_u16(const void *p, size_t i) {
  uint16_t h;
  memcpy(&h, (const char *)p + i * 2, 2);
  return h;
}
static inline void actx_store_u16(void *p, size_t i, uint16_t h) { memcpy((char *)p + i * 2, &h, 2); }
static inline float actx_load_f16(const void *p, size_t i) { return actx_f16_to_f32(actx_load_u16(p, i)); }
static inline void actx_store_f16(void *p, size_t i, float v) { actx_store_u16(p, i, actx_f32_to_f16(v)); }
static inline float actx_load_bf16(const void *p, size_t i) { return actx_bf16_to_f32(actx_load_u16(p, i)); }
static inline void actx_store_bf16(void *p, size_t i, float v) { actx_store_u16(p, i, actx_f32_to_bf16(v)); }

/* Defines actx_<dt>_<op>__portable from `static inline float <op>_scalar(float v, float alpha)`.
 * A bias is added in float32 before the op; without one nothing is added (x + 0 would turn
 * -0 into +0). */
#define ACTX_PORTABLE_KERNEL(dt, op)                                                          \
  void actx_##dt##_##op##__portable(const void *x, void *y, size_t n, const void *bias,       \
                                    float alpha) {                                            \
    for (size_t i = 0; i < n; i++) {                                                          \
      float v = actx_load_##dt(x, i);                                                         \
      if (bias) v = actx_add_ps(v, actx_load_##dt(bias, i));                                              \
      actx_store_##dt(y, i, op##_scalar(v, alpha));                                           \
    }                                                                                         \
  }

#define ACTX_PORTABLE_KERNELS(op) \
  ACTX_PORTABLE_KERNEL(f32, op) ACTX_PORTABLE_KERNEL(f16, op) ACTX_PORTABLE_KERNEL(bf16, op)

#endif /* ACTX_PORTABLE_LOOP_H */
