/* The AVX-512 vector vocabulary (AVX512F, plus AVX512BW for the 16-bit masked tail loads and
 * stores): 16 float32 lanes, masks in opmask registers. The same words as vec_avx2.h, so the
 * family bodies compile unchanged; see there for what each word means. */
#ifndef ACTX_VEC_AVX512_H
#define ACTX_VEC_AVX512_H

#include <immintrin.h>
#include <stdint.h>

#define VF_LANES 16
/* Vectors per unrolled step: as on AVX2, independent chains side by side; AVX-512's 32
 * registers hold 4 vectors' temporaries without spilling. */
#define VF_UNROLL 4
#define VF_KERNEL_SUFFIX avx512_u64
#define VF_INLINE static inline __attribute__((always_inline))

typedef __m512 vf;
typedef __mmask16 vm;

/* AVX512F has the bitwise operations on integers only (the _ps forms are AVX512DQ) */
#define VF_BITWISE(name, op) \
  VF_INLINE vf vf_##name(vf a, vf b) { \
    return _mm512_castsi512_ps(op(_mm512_castps_si512(a), _mm512_castps_si512(b))); \
  }
VF_BITWISE(and, _mm512_and_si512)
VF_BITWISE(or, _mm512_or_si512)
VF_BITWISE(xor, _mm512_xor_si512)
VF_BITWISE(andnot, _mm512_andnot_si512) /* ~a & b */
#undef VF_BITWISE

VF_INLINE vf vf_set1(float f) { return _mm512_set1_ps(f); }
VF_INLINE vf vf_set1_bits(uint32_t u) { return _mm512_castsi512_ps(_mm512_set1_epi32((int)u)); }
VF_INLINE vf vf_add(vf a, vf b) { return _mm512_add_ps(a, b); }
VF_INLINE vf vf_sub(vf a, vf b) { return _mm512_sub_ps(a, b); }
VF_INLINE vf vf_mul(vf a, vf b) { return _mm512_mul_ps(a, b); }
VF_INLINE vf vf_div(vf a, vf b) { return _mm512_div_ps(a, b); }
VF_INLINE vf vf_fmadd(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }
VF_INLINE vf vf_min(vf a, vf b) { return _mm512_min_ps(a, b); }
VF_INLINE vf vf_max(vf a, vf b) { return _mm512_max_ps(a, b); }

VF_INLINE vm vf_gt(vf a, vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OS); }
VF_INLINE vm vf_isnan(vf a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q); }
VF_INLINE vf vf_zero_where(vm m, vf v) { return _mm512_maskz_mov_ps((vm)~m, v); }
VF_INLINE vf vf_keep_where(vm m, vf v) { return _mm512_maskz_mov_ps(m, v); }
VF_INLINE vf vf_select(vm m, vf if_clear, vf if_set) { return _mm512_mask_blend_ps(m, if_clear, if_set); }
VF_INLINE int vf_any(vm m) { return m != 0; }
VF_INLINE vm vf_mask_or(vm a, vm b) { return (vm)(a | b); }

/* v, through an empty asm: the compiler no longer knows what it holds */
VF_INLINE vf vf_opaque(vf v) {
  __asm__("" : "+v"(v));
  return v;
}

/* one instruction here (MLAS's AVX-512F erf uses it too) */
VF_INLINE vf vf_mul_pow2(vf v, vf r) { return _mm512_scalef_ps(v, r); }

/* ---- loads and stores ------------------------------------------------------------------------ */

VF_INLINE vf vf_load_f32(const void *p) { return _mm512_loadu_ps(p); }
VF_INLINE void vf_store_f32(void *p, vf v) { _mm512_storeu_ps(p, v); }

VF_INLINE vf vf_load_f16(const void *p) { return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p)); }
VF_INLINE void vf_store_f16(void *p, vf v) {
  _mm256_storeu_si256((__m256i *)p, _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}

VF_INLINE vf vf_widen_bf16(__m256i h) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}
VF_INLINE vf vf_load_bf16(const void *p) { return vf_widen_bf16(_mm256_loadu_si256((const __m256i *)p)); }
/* Round to nearest even in 32-bit lanes, a NaN keeping its top half made quiet: the bfloat16 is
 * the high half of the result, the low half is left over. */
VF_INLINE __m512i vf_bf16_round_in_high(vf v) {
  const __m512i u = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7FFF)), lsb);
  const __m512i quiet = _mm512_or_si512(u, _mm512_set1_epi32(0x00400000));
  return _mm512_mask_blend_epi32(vf_isnan(v), rounded, quiet);
}
/* The same in the low half, zero-extended, for vpmovdw to narrow. */
VF_INLINE __m512i vf_bf16_round(vf v) { return _mm512_srli_epi32(vf_bf16_round_in_high(v), 16); }
VF_INLINE void vf_store_bf16(void *p, vf v) {
  _mm256_storeu_si256((__m256i *)p, _mm512_cvtepi32_epi16(vf_bf16_round(v)));
}

/* The tail (count < 16): masked loads and stores, which neither read nor write a masked-off
 * element, so nothing past the tensor is touched. */
VF_INLINE __mmask16 vf_tail_mask(size_t count) { return (__mmask16)((1u << count) - 1u); }

VF_INLINE vf vf_load_part_f32(const void *p, size_t count) {
  return _mm512_maskz_loadu_ps(vf_tail_mask(count), p);
}
VF_INLINE void vf_store_part_f32(void *p, vf v, size_t count) {
  _mm512_mask_storeu_ps(p, vf_tail_mask(count), v);
}
VF_INLINE __m256i vf_load_part_u16(const void *p, size_t count) {
  return _mm512_castsi512_si256(_mm512_maskz_loadu_epi16((__mmask32)vf_tail_mask(count), p));
}
VF_INLINE vf vf_load_part_f16(const void *p, size_t count) {
  return _mm512_cvtph_ps(vf_load_part_u16(p, count));
}
VF_INLINE void vf_store_part_f16(void *p, vf v, size_t count) {
  const __m256i h = _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
  _mm512_mask_storeu_epi16(p, (__mmask32)vf_tail_mask(count), _mm512_castsi256_si512(h));
}
VF_INLINE vf vf_load_part_bf16(const void *p, size_t count) {
  return vf_widen_bf16(vf_load_part_u16(p, count));
}
VF_INLINE void vf_store_part_bf16(void *p, vf v, size_t count) {
  _mm512_mask_cvtepi32_storeu_epi16(p, vf_tail_mask(count), vf_bf16_round(v));
}

/* The unrolled step's bfloat16 block: one 512-bit load holds 32 elements, each 32-bit word an
 * even element in its low half and the next odd one in its high half, so v[k] takes the even
 * ones (shifted up) and v[k + 1] the odd ones (masked) with no shuffle; the bodies are
 * lane-wise, and the store puts every element back where it came from. */
#define VF_HAS_BLOCK_BF16 1
_Static_assert(VF_UNROLL % 2 == 0, "the bfloat16 block loads and stores go in pairs");

VF_INLINE void vf_load_block_bf16(const void *p, vf *v) {
  _Pragma("GCC unroll 4") for (int k = 0; k < VF_UNROLL; k += 2) {
    const __m512i w = _mm512_loadu_si512((const uint16_t *)p + 16 * k);
    v[k] = _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
    v[k + 1] = _mm512_castsi512_ps(_mm512_and_si512(w, _mm512_set1_epi32((int)0xFFFF0000u)));
  }
}
VF_INLINE void vf_store_block_bf16(void *p, const vf *v) {
  _Pragma("GCC unroll 4") for (int k = 0; k < VF_UNROLL; k += 2) {
    const __m512i even = vf_bf16_round(v[k]), odd = vf_bf16_round_in_high(v[k + 1]);
    _mm512_storeu_si512((uint16_t *)p + 16 * k, _mm512_mask_blend_epi16(0xAAAAAAAAu, even, odd));
  }
}

#endif /* ACTX_VEC_AVX512_H */
