/* The portable vector vocabulary: one float32 lane in plain C, each word with the semantics of
 * the x86 instruction it stands for (fmaf for vfmadd, vminps / vmaxps's operand rule, bit
 * operations for vandps / vorps / vxorps), so the family bodies give the same bits as on the
 * vector ISAs. The same words as vec_avx2.h; see there for what each means. */
#ifndef ACTX_VEC_PORTABLE_H
#define ACTX_VEC_PORTABLE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../consts.h"
#include "../half.h"

#define VF_LANES 1
#define VF_UNROLL 1
#define VF_KERNEL_SUFFIX portable
#define VF_INLINE static inline __attribute__((always_inline))

typedef float vf;
typedef int vm;

VF_INLINE vf vf_bits(uint32_t u) { return actx_f32_from_bits(u); }
VF_INLINE uint32_t vf_u(vf a) { return actx_f32_bits(a); }

VF_INLINE vf vf_set1(float f) { return f; }
VF_INLINE vf vf_set1_bits(uint32_t u) { return vf_bits(u); }
VF_INLINE vf vf_add(vf a, vf b) { return a + b; }
VF_INLINE vf vf_sub(vf a, vf b) { return a - b; }
VF_INLINE vf vf_mul(vf a, vf b) { return a * b; }
VF_INLINE vf vf_div(vf a, vf b) { return a / b; }
VF_INLINE vf vf_fmadd(vf a, vf b, vf c) { return fmaf(a, b, c); }
/* vminps a, b: a if a < b, else b (b also when either is NaN or both are zeros) */
VF_INLINE vf vf_min(vf a, vf b) { return a < b ? a : b; }
VF_INLINE vf vf_max(vf a, vf b) { return a > b ? a : b; }
VF_INLINE vf vf_and(vf a, vf b) { return vf_bits(vf_u(a) & vf_u(b)); }
VF_INLINE vf vf_or(vf a, vf b) { return vf_bits(vf_u(a) | vf_u(b)); }
VF_INLINE vf vf_xor(vf a, vf b) { return vf_bits(vf_u(a) ^ vf_u(b)); }
VF_INLINE vf vf_andnot(vf a, vf b) { return vf_bits(~vf_u(a) & vf_u(b)); }

VF_INLINE vm vf_gt(vf a, vf b) { return a > b; }
VF_INLINE vm vf_isnan(vf a) { return a != a; }
/* bitwise, as vandps / vandnps are: a float select would let the compiler pick either NaN */
VF_INLINE vf vf_zero_where(vm m, vf v) { return vf_bits(vf_u(v) & ~(0u - (uint32_t)(m != 0))); }
VF_INLINE vf vf_keep_where(vm m, vf v) { return vf_bits(vf_u(v) & (0u - (uint32_t)(m != 0))); }
VF_INLINE vf vf_select(vm m, vf if_clear, vf if_set) { return m ? if_set : if_clear; }
VF_INLINE int vf_any(vm m) { return m; }
VF_INLINE vm vf_mask_or(vm a, vm b) { return a | b; }

/* v, through an empty asm: the compiler no longer knows what it holds (loop.h says why) */
VF_INLINE vf vf_opaque(vf v) {
#if defined(__x86_64__) || defined(__i386__)
  __asm__("" : "+x"(v));
#else
  __asm__("" : "+m"(v));
#endif
  return v;
}

/* r is integral where the bodies use it, 2^r and the product normal: exact, as on x86 */
VF_INLINE vf vf_mul_pow2(vf v, vf r) {
  return v * vf_bits((uint32_t)((int32_t)r + ACTX_F32_EXPONENT_BIAS) << 23);
}

/* ---- loads and stores: through memcpy, so any alignment works ------------------------------- */

VF_INLINE uint16_t vf_load_u16(const void *p) {
  uint16_t h;
  memcpy(&h, p, 2);
  return h;
}
VF_INLINE void vf_store_u16(void *p, uint16_t h) { memcpy(p, &h, 2); }

VF_INLINE vf vf_load_f32(const void *p) {
  float v;
  memcpy(&v, p, 4);
  return v;
}
VF_INLINE void vf_store_f32(void *p, vf v) { memcpy(p, &v, 4); }
VF_INLINE vf vf_load_f16(const void *p) { return actx_f16_to_f32(vf_load_u16(p)); }
VF_INLINE void vf_store_f16(void *p, vf v) { vf_store_u16(p, actx_f32_to_f16(v)); }
VF_INLINE vf vf_load_bf16(const void *p) { return actx_bf16_to_f32(vf_load_u16(p)); }
VF_INLINE void vf_store_bf16(void *p, vf v) { vf_store_u16(p, actx_f32_to_bf16(v)); }

/* One lane has no partial vector; the loop never calls these (count < VF_LANES = 1 is 0). */
#define VF_DEFINE_PART(dt)                                                                      \
  VF_INLINE vf vf_load_part_##dt(const void *p, size_t count) { return count ? vf_load_##dt(p) : 0.0f; } \
  VF_INLINE void vf_store_part_##dt(void *p, vf v, size_t count) { if (count) vf_store_##dt(p, v); }
VF_DEFINE_PART(f32)
VF_DEFINE_PART(f16)
VF_DEFINE_PART(bf16)
#undef VF_DEFINE_PART

#define VF_HAS_BLOCK_BF16 0

#endif /* ACTX_VEC_PORTABLE_H */
