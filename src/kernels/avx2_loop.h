/* The AVX2 path's building blocks: 8-lane loads and stores for each dtype, and the loop that
 * turns an 8-lane op body into the f32 / f16 / bf16 kernels of kernels.h.
 *
 * Every element, in the unrolled body, the single-vector loop or the tail, goes through the
 * same body: the tail is copied into an 8-lane stack buffer, so a result never depends on the
 * tensor's length or alignment, and no byte past the tensor is read or written. */
#ifndef ACTX_AVX2_LOOP_H
#define ACTX_AVX2_LOOP_H

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

/* Vectors per unrolled step. The op bodies run their steps across all of them in lockstep, as
 * MLAS's 4x8 loops do: a lone vector's dependency chain is ~30 operations long, longer than
 * the core's scheduler can look past, so independent work must be adjacent in the code. */
#define ACTX_AVX2_UNROLL 4

/* Runs one step on every vector; fully unrolled, so v[] stays in registers. */
#define ACTX_FOR_VECTORS(k, count) _Pragma("GCC unroll 4") for (int k = 0; k < (count); k++)
_Static_assert(ACTX_AVX2_UNROLL % 2 == 0, "the bfloat16 block loads and stores go in pairs");

/* float32 */
static inline __m256 actx_load8_f32(const void *p) { return _mm256_loadu_ps((const float *)p); }
static inline void actx_store8_f32(void *p, __m256 v) { _mm256_storeu_ps((float *)p, v); }

/* float16: F16C, round to nearest even */
static inline __m256 actx_load8_f16(const void *p) {
  return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}
static inline void actx_store8_f16(void *p, __m256 v) {
  _mm_storeu_si128((__m128i *)p, _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}

/* bfloat16: the top half of a float32; narrowing rounds to nearest even, NaNs made quiet */
static inline __m256 actx_load8_bf16(const void *p) {
  __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}
/* The high halves of u's words rounded to nearest even, in the low halves; a NaN may round to
 * an infinity. */
static inline __m256i actx_bf16_round_high(__m256i u) {
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7FFF)), lsb);
  return _mm256_srli_epi32(rounded, 16);
}
/* The same, but a NaN keeps its top half, made quiet. */
static inline __m256i actx_bf16_round_high_nan(__m256 v) {
  const __m256i u = _mm256_castps_si256(v);
  const __m256i quiet = _mm256_srli_epi32(_mm256_or_si256(u, _mm256_set1_epi32(0x00400000)), 16);
  const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  return _mm256_blendv_epi8(actx_bf16_round_high(u), quiet, nan);
}
static inline void actx_store8_bf16(void *p, __m256 v) {
  const __m256i w = actx_bf16_round_high_nan(v);
  /* 32 -> 16 bits: packus works per 128-bit lane, so fix the quadword order after it */
  const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(w, w), 0x08);
  _mm_storeu_si128((__m128i *)p, _mm256_castsi256_si128(packed));
}

/* Loads and stores of the unrolled body's ACTX_AVX2_UNROLL vectors (8 * U elements). The op
 * bodies are lane-wise, so a vector lane may hold any element of the block as long as the store
 * puts it back where the load took it; bfloat16 uses that to widen and narrow 16 elements with
 * in-lane unpacks and one pack, without the lane-crossing permute that 8-element order needs. */
#define ACTX_FOR_PAIRS(k) _Pragma("GCC unroll 4") for (int k = 0; k < ACTX_AVX2_UNROLL; k += 2)

static inline void actx_load_block_f32(const void *p, __m256 *v) {
  ACTX_FOR_VECTORS(k, ACTX_AVX2_UNROLL) v[k] = actx_load8_f32((const float *)p + 8 * k);
}
static inline void actx_store_block_f32(void *p, const __m256 *v) {
  ACTX_FOR_VECTORS(k, ACTX_AVX2_UNROLL) actx_store8_f32((float *)p + 8 * k, v[k]);
}
static inline void actx_load_block_f16(const void *p, __m256 *v) {
  ACTX_FOR_VECTORS(k, ACTX_AVX2_UNROLL) v[k] = actx_load8_f16((const uint16_t *)p + 8 * k);
}
static inline void actx_store_block_f16(void *p, const __m256 *v) {
  ACTX_FOR_VECTORS(k, ACTX_AVX2_UNROLL) actx_store8_f16((uint16_t *)p + 8 * k, v[k]);
}

/* 16 bfloat16 e0..e15 become v[k] = e0-3 | e8-11 and v[k + 1] = e4-7 | e12-15: in-lane unpacks */
static inline void actx_load_block_bf16(const void *p, __m256 *v) {
  ACTX_FOR_PAIRS(k) {
    const __m256i w = _mm256_loadu_si256((const __m256i *)((const uint16_t *)p + 8 * k));
    v[k] = _mm256_castsi256_ps(_mm256_unpacklo_epi16(_mm256_setzero_si256(), w));
    v[k + 1] = _mm256_castsi256_ps(_mm256_unpackhi_epi16(_mm256_setzero_si256(), w));
  }
}

/* The load's order undone: packus takes four words from each operand per 128-bit lane. NaNs,
 * rare, are looked for once per block (one compare covers two vectors); a block with one takes
 * actx_store8_bf16's rule, lane by lane. */
static inline void actx_store_block_bf16(void *p, const __m256 *v) {
  __m256 any_nan = _mm256_setzero_ps();
  ACTX_FOR_PAIRS(k) any_nan = _mm256_or_ps(any_nan, _mm256_cmp_ps(v[k], v[k + 1], _CMP_UNORD_Q));
  __m256i w[ACTX_AVX2_UNROLL];
  if (__builtin_expect(_mm256_movemask_ps(any_nan) == 0, 1)) {
    ACTX_FOR_VECTORS(k, ACTX_AVX2_UNROLL) w[k] = actx_bf16_round_high(_mm256_castps_si256(v[k]));
  } else {
    ACTX_FOR_VECTORS(k, ACTX_AVX2_UNROLL) w[k] = actx_bf16_round_high_nan(v[k]);
  }
  ACTX_FOR_PAIRS(k) {
    _mm256_storeu_si256((__m256i *)((uint16_t *)p + 8 * k), _mm256_packus_epi32(w[k], w[k + 1]));
  }
}

/* x + bias, where a NaN x wins over a NaN bias (made quiet), as in the portable path: the
 * compiler may swap vaddps's operands, and vaddps keeps its first operand's NaN. */
static inline __m256 actx_add_bias8(__m256 x, __m256 b) {
  const __m256 x_nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
  const __m256 quiet_x = _mm256_or_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(0x00400000)));
  return _mm256_blendv_ps(_mm256_add_ps(x, b), quiet_x, x_nan);
}

/* x * m with the same rule: a NaN x wins over a NaN m (made quiet). */
static inline __m256 actx_mul_first_nan8(__m256 x, __m256 m) {
  const __m256 x_nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
  const __m256 quiet_x = _mm256_or_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(0x00400000)));
  return _mm256_blendv_ps(_mm256_mul_ps(x, m), quiet_x, x_nan);
}

#define ACTX_SIZEOF_f32 4
#define ACTX_SIZEOF_f16 2
#define ACTX_SIZEOF_bf16 2


/* Defines actx_<dt>_<op>__avx2_u32 from
 * `static inline void <op>_xn(__m256 *v, int count, __m256 alpha)`, which maps v[0..count)
 * in place; count is a constant after inlining (ACTX_AVX2_UNROLL or 1). */
#define ACTX_AVX2_KERNEL(dt, op)                                                              \
  void actx_##dt##_##op##__avx2_u32(const void *xv, void *yv, size_t n, const void *bv,       \
                                    float alpha) {                                            \
    const size_t es = ACTX_SIZEOF_##dt, step = 8 * ACTX_AVX2_UNROLL;                          \
    const char *x = (const char *)xv;                                                         \
    const char *b = (const char *)bv;                                                         \
    char *y = (char *)yv;                                                                     \
    const __m256 va = _mm256_set1_ps(alpha);                                                  \
    __m256 v[ACTX_AVX2_UNROLL];                                                               \
    size_t i = 0;                                                                             \
    if (b == NULL) {                                                                          \
      for (; i + step <= n; i += step) {                                                      \
        actx_load_block_##dt(x + i * es, v);                                                  \
        op##_xn(v, ACTX_AVX2_UNROLL, va);                                                     \
        actx_store_block_##dt(y + i * es, v);                                                 \
      }                                                                                       \
    } else {                                                                                  \
      __m256 vb[ACTX_AVX2_UNROLL];                                                            \
      for (; i + step <= n; i += step) {                                                      \
        actx_load_block_##dt(x + i * es, v);                                                  \
        actx_load_block_##dt(b + i * es, vb);                                                 \
        ACTX_FOR_VECTORS(k, ACTX_AVX2_UNROLL) v[k] = actx_add_bias8(v[k], vb[k]);             \
        op##_xn(v, ACTX_AVX2_UNROLL, va);                                                     \
        actx_store_block_##dt(y + i * es, v);                                                 \
      }                                                                                       \
    }                                                                                         \
    for (; i + 8 <= n; i += 8) {                                                              \
      v[0] = actx_load8_##dt(x + i * es);                                                     \
      if (b != NULL) v[0] = actx_add_bias8(v[0], actx_load8_##dt(b + i * es));                \
      op##_xn(v, 1, va);                                                                      \
      actx_store8_##dt(y + i * es, v[0]);                                                     \
    }                                                                                         \
    if (i < n) { /* tail: through a zeroed 8-lane buffer, never past the tensor */            \
      const size_t rest = (n - i) * es;                                                       \
      _Alignas(32) char tx[32] = {0}, tb[32] = {0}, ty[32];                                   \
      memcpy(tx, x + i * es, rest);                                                           \
      v[0] = actx_load8_##dt(tx);                                                             \
      if (b != NULL) {                                                                        \
        memcpy(tb, b + i * es, rest);                                                         \
        v[0] = actx_add_bias8(v[0], actx_load8_##dt(tb));                                     \
      }                                                                                       \
      op##_xn(v, 1, va);                                                                      \
      actx_store8_##dt(ty, v[0]);                                                             \
      memcpy(y + i * es, ty, rest);                                                           \
    }                                                                                         \
  }

#define ACTX_AVX2_KERNELS(op) \
  ACTX_AVX2_KERNEL(f32, op) ACTX_AVX2_KERNEL(f16, op) ACTX_AVX2_KERNEL(bf16, op)

#endif /* ACTX_AVX2_LOOP_H */
