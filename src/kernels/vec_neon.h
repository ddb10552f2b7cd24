/* The AArch64 NEON (Advanced SIMD) vector vocabulary: 4 float32 lanes, masks as all-ones lanes.
 * The same words as vec_avx2.h, so the family bodies compile unchanged; see there for what each
 * word means.
 *
 * Each word is the instruction MLAS's generic MLAS_FLOAT32X4 kernels use on AArch64, which is
 * what ORT's arm64 library runs: MlasMultiplyAddFloat32x4 is vfmaq_f32 (one rounding, as
 * vfmadd), MlasMinimumFloat32x4 / MlasMaximumFloat32x4 are vminq_f32 / vmaxq_f32. Those two
 * differ from vminps / vmaxps only where the bodies never look: a NaN operand gives that NaN
 * made quiet (vminps: its second operand as it is), which the next arithmetic step makes quiet
 * on x86 too, and -0 < +0 (the bodies never compare two zeros). */
#ifndef ACTX_VEC_NEON_H
#define ACTX_VEC_NEON_H

#include <arm_neon.h>
#include <stdint.h>
#include <string.h>

#include "../consts.h"

#define VF_LANES 4
/* Vectors per unrolled step: as on x86, independent chains side by side (32 registers hold 4
 * vectors' temporaries). */
#define VF_UNROLL 4
#define VF_KERNEL_SUFFIX neon_u16
#define VF_INLINE static inline __attribute__((always_inline))

typedef float32x4_t vf;
typedef uint32x4_t vm; /* a lane mask: all ones or all zeros per lane */

#define VF_U(a) vreinterpretq_u32_f32(a)
#define VF_F(u) vreinterpretq_f32_u32(u)

VF_INLINE vf vf_set1(float f) { return vdupq_n_f32(f); }
VF_INLINE vf vf_set1_bits(uint32_t u) { return VF_F(vdupq_n_u32(u)); }
VF_INLINE vf vf_add(vf a, vf b) { return vaddq_f32(a, b); }
VF_INLINE vf vf_sub(vf a, vf b) { return vsubq_f32(a, b); }
VF_INLINE vf vf_mul(vf a, vf b) { return vmulq_f32(a, b); }
VF_INLINE vf vf_div(vf a, vf b) { return vdivq_f32(a, b); }
VF_INLINE vf vf_fmadd(vf a, vf b, vf c) { return vfmaq_f32(c, a, b); } /* a * b + c, fmla */
VF_INLINE vf vf_min(vf a, vf b) { return vminq_f32(a, b); }
VF_INLINE vf vf_max(vf a, vf b) { return vmaxq_f32(a, b); }
VF_INLINE vf vf_and(vf a, vf b) { return VF_F(vandq_u32(VF_U(a), VF_U(b))); }
VF_INLINE vf vf_or(vf a, vf b) { return VF_F(vorrq_u32(VF_U(a), VF_U(b))); }
VF_INLINE vf vf_xor(vf a, vf b) { return VF_F(veorq_u32(VF_U(a), VF_U(b))); }
VF_INLINE vf vf_andnot(vf a, vf b) { return VF_F(vbicq_u32(VF_U(b), VF_U(a))); } /* ~a & b */

VF_INLINE vm vf_gt(vf a, vf b) { return vcgtq_f32(a, b); }
VF_INLINE vm vf_isnan(vf a) { return vmvnq_u32(vceqq_f32(a, a)); }
VF_INLINE vf vf_zero_where(vm m, vf v) { return VF_F(vbicq_u32(VF_U(v), m)); } /* +0 where m */
VF_INLINE vf vf_keep_where(vm m, vf v) { return VF_F(vandq_u32(VF_U(v), m)); } /* +0 where not m */
/* bitwise (bsl), so a NaN passes through with its bits */
VF_INLINE vf vf_select(vm m, vf if_clear, vf if_set) { return vbslq_f32(m, if_set, if_clear); }
VF_INLINE int vf_any(vm m) { return vmaxvq_u32(m) != 0; }
VF_INLINE vm vf_mask_or(vm a, vm b) { return vorrq_u32(a, b); }

/* v, through an empty asm: the compiler no longer knows what it holds */
VF_INLINE vf vf_opaque(vf v) {
  __asm__("" : "+w"(v));
  return v;
}

/* v * 2^r for integral r, 2^r and the product normal (so exact): 2^r built in the exponent
 * field (fcvtzs truncates as cvttps2dq does) */
VF_INLINE vf vf_mul_pow2(vf v, vf r) {
  const int32x4_t e = vaddq_s32(vcvtq_s32_f32(r), vdupq_n_s32(ACTX_F32_EXPONENT_BIAS));
  return vmulq_f32(v, vreinterpretq_f32_s32(vshlq_n_s32(e, 23)));
}

/* ---- loads and stores: every dtype widens to float32 lanes ---------------------------------- */

VF_INLINE vf vf_load_f32(const void *p) { return vld1q_f32((const float *)p); }
VF_INLINE void vf_store_f32(void *p, vf v) { vst1q_f32((float *)p, v); }

/* float16: fcvtl / fcvtn, base ARMv8 (no FP16 arithmetic needed). With the FPCR Linux gives a
 * process (round to nearest even, no flush to zero, no default NaN) they round as F16C does
 * and treat NaNs as it does: widening quiets a signalling NaN and keeps the payload, narrowing
 * keeps the sign and the top payload bits, made quiet. */
VF_INLINE vf vf_load_f16(const void *p) {
  return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16((const uint16_t *)p)));
}
VF_INLINE void vf_store_f16(void *p, vf v) {
  vst1_u16((uint16_t *)p, vreinterpret_u16_f16(vcvt_f16_f32(v)));
}

/* bfloat16: the top half of a float32 */
VF_INLINE vf vf_load_bf16(const void *p) {
  return VF_F(vshll_n_u16(vld1_u16((const uint16_t *)p), 16));
}
/* Round to nearest even into the high halves; a NaN keeps its top half, made quiet (a NaN
 * could otherwise round to an infinity). */
VF_INLINE void vf_store_bf16(void *p, vf v) {
  const uint32x4_t u = VF_U(v);
  const uint32x4_t lsb = vandq_u32(vshrq_n_u32(u, 16), vdupq_n_u32(1));
  const uint32x4_t rounded = vaddq_u32(vaddq_u32(u, vdupq_n_u32(0x7FFF)), lsb);
  const uint32x4_t quiet = vorrq_u32(u, vdupq_n_u32(0x00400000));
  const uint32x4_t w = vbslq_u32(vf_isnan(v), quiet, rounded);
  vst1_u16((uint16_t *)p, vshrn_n_u32(w, 16));
}

/* The tail (count < 4 elements): through a zeroed stack buffer; nothing past the tensor is
 * read or written. */
#define VF_DEFINE_PART(dt, size)                                   \
  VF_INLINE vf vf_load_part_##dt(const void *p, size_t count) {    \
    _Alignas(16) char t[16] = {0};                                 \
    memcpy(t, p, count * (size));                                  \
    return vf_load_##dt(t);                                        \
  }                                                                \
  VF_INLINE void vf_store_part_##dt(void *p, vf v, size_t count) { \
    _Alignas(16) char t[16];                                       \
    vf_store_##dt(t, v);                                           \
    memcpy(p, t, count * (size));                                  \
  }
VF_DEFINE_PART(f32, 4)
VF_DEFINE_PART(f16, 2)
VF_DEFINE_PART(bf16, 2)
#undef VF_DEFINE_PART

#define VF_HAS_BLOCK_BF16 0

#undef VF_U
#undef VF_F

#endif /* ACTX_VEC_NEON_H */
