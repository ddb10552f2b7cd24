/* The AVX2 + FMA3 + F16C vector vocabulary: 8 float32 lanes, masks as all-ones lanes.
 *
 * Every family body (erf.h, tanh.h, logistic.h) and the loop (loop.h) is written once in these
 * words; vec_portable.h and vec_avx512.h define the same words for their ISA. Each word is one
 * instruction of MLAS's kernels (or one fixed sequence), so the operand order of min / max and
 * every fused or unfused step is the same on every ISA. */
#ifndef ACTX_VEC_AVX2_H
#define ACTX_VEC_AVX2_H

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "../consts.h"

#define VF_LANES 8
/* Vectors per unrolled step. The bodies run each step across all of them in lockstep, as
 * MLAS's 4x8 loops do: one vector's dependency chain is ~30 operations long, longer than the
 * core's scheduler can look past, so independent work must be adjacent in the code. */
#define VF_UNROLL 4
#define VF_KERNEL_SUFFIX avx2_u32
#define VF_INLINE static inline __attribute__((always_inline))

typedef __m256 vf;
typedef __m256 vm; /* a lane mask: all ones or all zeros per lane */

VF_INLINE vf vf_set1(float f) { return _mm256_set1_ps(f); }
VF_INLINE vf vf_set1_bits(uint32_t u) { return _mm256_castsi256_ps(_mm256_set1_epi32((int)u)); }
VF_INLINE vf vf_add(vf a, vf b) { return _mm256_add_ps(a, b); }
VF_INLINE vf vf_sub(vf a, vf b) { return _mm256_sub_ps(a, b); }
VF_INLINE vf vf_mul(vf a, vf b) { return _mm256_mul_ps(a, b); }
VF_INLINE vf vf_div(vf a, vf b) { return _mm256_div_ps(a, b); }
VF_INLINE vf vf_fmadd(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }
/* vminps / vmaxps: the second operand when either is NaN (or both are zeros) */
VF_INLINE vf vf_min(vf a, vf b) { return _mm256_min_ps(a, b); }
VF_INLINE vf vf_max(vf a, vf b) { return _mm256_max_ps(a, b); }
VF_INLINE vf vf_and(vf a, vf b) { return _mm256_and_ps(a, b); }
VF_INLINE vf vf_or(vf a, vf b) { return _mm256_or_ps(a, b); }
VF_INLINE vf vf_xor(vf a, vf b) { return _mm256_xor_ps(a, b); }
VF_INLINE vf vf_andnot(vf a, vf b) { return _mm256_andnot_ps(a, b); } /* ~a & b */

VF_INLINE vm vf_gt(vf a, vf b) { return _mm256_cmp_ps(a, b, _CMP_GT_OS); }
VF_INLINE vm vf_isnan(vf a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
VF_INLINE vf vf_zero_where(vm m, vf v) { return _mm256_andnot_ps(m, v); } /* +0 where m */
VF_INLINE vf vf_keep_where(vm m, vf v) { return _mm256_and_ps(m, v); }    /* +0 where not m */
VF_INLINE vf vf_select(vm m, vf if_clear, vf if_set) { return _mm256_blendv_ps(if_clear, if_set, m); }
VF_INLINE int vf_any(vm m) { return _mm256_movemask_ps(m) != 0; }
VF_INLINE vm vf_mask_or(vm a, vm b) { return _mm256_or_ps(a, b); }

/* v, through an empty asm: the compiler no longer knows what it holds */
VF_INLINE vf vf_opaque(vf v) {
  __asm__("" : "+v"(v));
  return v;
}

/* v * 2^r for integral r, 2^r and the product normal (so exact): MLAS's FMA3 kernels
 * multiply by 2^r built in the exponent field, its AVX-512F ones use vscalefps, which agree */
VF_INLINE vf vf_mul_pow2(vf v, vf r) {
  const __m256i e =
      _mm256_add_epi32(_mm256_cvttps_epi32(r), _mm256_set1_epi32(ACTX_F32_EXPONENT_BIAS));
  return _mm256_mul_ps(v, _mm256_castsi256_ps(_mm256_slli_epi32(e, 23)));
}

/* ---- loads and stores: every dtype widens to float32 lanes ---------------------------------- */

VF_INLINE vf vf_load_f32(const void *p) { return _mm256_loadu_ps((const float *)p); }
VF_INLINE void vf_store_f32(void *p, vf v) { _mm256_storeu_ps((float *)p, v); }

/* float16: F16C, round to nearest even */
VF_INLINE vf vf_load_f16(const void *p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p)); }
VF_INLINE void vf_store_f16(void *p, vf v) {
  _mm_storeu_si128((__m128i *)p, _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}

/* bfloat16: the top half of a float32 */
VF_INLINE vf vf_load_bf16(const void *p) {
  const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}
/* The high halves of u's words rounded to nearest even, in the low halves; a NaN may round to
 * an infinity, so the store below fixes NaN lanes. */
VF_INLINE __m256i vf_bf16_round_high(__m256i u) {
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  return _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7FFF)), lsb), 16);
}
/* The same, a NaN keeping its top half, made quiet. */
VF_INLINE __m256i vf_bf16_round_high_nan(vf v) {
  const __m256i u = _mm256_castps_si256(v);
  const __m256i quiet = _mm256_srli_epi32(_mm256_or_si256(u, _mm256_set1_epi32(0x00400000)), 16);
  return _mm256_blendv_epi8(vf_bf16_round_high(u), quiet, _mm256_castps_si256(vf_isnan(v)));
}
VF_INLINE void vf_store_bf16(void *p, vf v) {
  const __m256i w = vf_bf16_round_high_nan(v);
  /* 32 -> 16 bits: packus works per 128-bit lane, so fix the quadword order after it */
  const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(w, w), 0x08);
  _mm_storeu_si128((__m128i *)p, _mm256_castsi256_si128(packed));
}

/* The tail (count < 8 elements): AVX2 has no masked 16-bit load or store, so it goes through a
 * zeroed stack buffer; nothing past the tensor is read or written. */
#define VF_DEFINE_PART(dt, size)                                                      \
  VF_INLINE vf vf_load_part_##dt(const void *p, size_t count) {                       \
    _Alignas(32) char t[32] = {0};                                                    \
    memcpy(t, p, count * (size));                                                     \
    return vf_load_##dt(t);                                                           \
  }                                                                                   \
  VF_INLINE void vf_store_part_##dt(void *p, vf v, size_t count) {                    \
    _Alignas(32) char t[32];                                                          \
    vf_store_##dt(t, v);                                                              \
    memcpy(p, t, count * (size));                                                     \
  }
VF_DEFINE_PART(f32, 4)
VF_DEFINE_PART(f16, 2)
VF_DEFINE_PART(bf16, 2)
#undef VF_DEFINE_PART

/* The unrolled step's VF_UNROLL vectors at once. The bodies are lane-wise, so a lane may hold
 * any element of the block as long as the store puts it back where the load took it: bfloat16
 * widens and narrows 16 elements with in-lane unpacks and one pack, without the lane-crossing
 * permute that 8-element order needs, and looks for NaNs once per block. */
#define VF_HAS_BLOCK_BF16 1
_Static_assert(VF_UNROLL % 2 == 0, "the bfloat16 block loads and stores go in pairs");

/* 16 bfloat16 e0..e15 become v[k] = e0-3 | e8-11 and v[k + 1] = e4-7 | e12-15 */
VF_INLINE void vf_load_block_bf16(const void *p, vf *v) {
  _Pragma("GCC unroll 4") for (int k = 0; k < VF_UNROLL; k += 2) {
    const __m256i w = _mm256_loadu_si256((const __m256i *)((const uint16_t *)p + 8 * k));
    v[k] = _mm256_castsi256_ps(_mm256_unpacklo_epi16(_mm256_setzero_si256(), w));
    v[k + 1] = _mm256_castsi256_ps(_mm256_unpackhi_epi16(_mm256_setzero_si256(), w));
  }
}
/* The load's order undone: packus takes four words from each operand per 128-bit lane. A block
 * with a NaN takes vf_store_bf16's rule, lane by lane. */
VF_INLINE void vf_store_block_bf16(void *p, const vf *v) {
  vm any_nan = _mm256_setzero_ps();
  _Pragma("GCC unroll 4") for (int k = 0; k < VF_UNROLL; k += 2)
    any_nan = vf_mask_or(any_nan, _mm256_cmp_ps(v[k], v[k + 1], _CMP_UNORD_Q));
  __m256i w[VF_UNROLL];
  if (__builtin_expect(!vf_any(any_nan), 1)) {
    _Pragma("GCC unroll 4") for (int k = 0; k < VF_UNROLL; k++)
      w[k] = vf_bf16_round_high(_mm256_castps_si256(v[k]));
  } else {
    _Pragma("GCC unroll 4") for (int k = 0; k < VF_UNROLL; k++) w[k] = vf_bf16_round_high_nan(v[k]);
  }
  _Pragma("GCC unroll 4") for (int k = 0; k < VF_UNROLL; k += 2)
    _mm256_storeu_si256((__m256i *)((uint16_t *)p + 8 * k), _mm256_packus_epi32(w[k], w[k + 1]));
}

#endif /* ACTX_VEC_AVX2_H */
