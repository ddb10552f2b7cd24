/* bf16_transpose.c — bf16_transpose.h. The matrix is walked in blocks that fit in L1 (BLOCK x
 * BLOCK elements: a block's source rows and destination rows both stay cached), each block in
 * tiles transposed in registers: 8 x 8 16-bit elements or 4 x 4 32-bit ones, the unpack ladder
 * SSE2 has on every x86-64 (three rounds of interleaves for 16-bit, two for 32-bit); the ragged
 * edge of a block, and every tile on other architectures, element by element. A 16-bit matrix
 * of 2-7 rows into a dense destination (a few channels made channels-last: an RGB image) is
 * interleaved instead, a loop a row count. */
#include "bf16_transpose.h"

#include <stdbool.h>

#include "bf16_family.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Elements a block's side: 64 rows of 64 16-bit elements are 8 KiB read and 8 KiB written. */
#define BLOCK 64

#if defined(__SSE2__)
/* The 8 x 8 tile at src into dst (written out: held in arrays, GCC keeps it on the stack). */
static inline __attribute__((always_inline)) void tile16(const uint16_t *src, size_t ss,
                                                         uint16_t *dst, size_t ds) {
#define ROW(i) _mm_loadu_si128((const __m128i *)(src + (i) * ss))
  const __m128i r0 = ROW(0), r1 = ROW(1), r2 = ROW(2), r3 = ROW(3);
  const __m128i r4 = ROW(4), r5 = ROW(5), r6 = ROW(6), r7 = ROW(7);
#undef ROW
  /* rows 2k and 2k+1 interleaved: columns 0-3 (lo) and 4-7 (hi) */
  const __m128i a0 = _mm_unpacklo_epi16(r0, r1), a1 = _mm_unpackhi_epi16(r0, r1);
  const __m128i a2 = _mm_unpacklo_epi16(r2, r3), a3 = _mm_unpackhi_epi16(r2, r3);
  const __m128i a4 = _mm_unpacklo_epi16(r4, r5), a5 = _mm_unpackhi_epi16(r4, r5);
  const __m128i a6 = _mm_unpacklo_epi16(r6, r7), a7 = _mm_unpackhi_epi16(r6, r7);
  /* each 64-bit half one column of four rows: b0 columns 0-1 of rows 0-3, b4 of rows 4-7 */
  const __m128i b0 = _mm_unpacklo_epi32(a0, a2), b1 = _mm_unpackhi_epi32(a0, a2);
  const __m128i b2 = _mm_unpacklo_epi32(a1, a3), b3 = _mm_unpackhi_epi32(a1, a3);
  const __m128i b4 = _mm_unpacklo_epi32(a4, a6), b5 = _mm_unpackhi_epi32(a4, a6);
  const __m128i b6 = _mm_unpacklo_epi32(a5, a7), b7 = _mm_unpackhi_epi32(a5, a7);
#define COL(j, v) _mm_storeu_si128((__m128i *)(dst + (j) * ds), v)
  COL(0, _mm_unpacklo_epi64(b0, b4));
  COL(1, _mm_unpackhi_epi64(b0, b4));
  COL(2, _mm_unpacklo_epi64(b1, b5));
  COL(3, _mm_unpackhi_epi64(b1, b5));
  COL(4, _mm_unpacklo_epi64(b2, b6));
  COL(5, _mm_unpackhi_epi64(b2, b6));
  COL(6, _mm_unpacklo_epi64(b3, b7));
  COL(7, _mm_unpackhi_epi64(b3, b7));
#undef COL
}

/* The 4 x 4 tile at src into dst. */
static inline __attribute__((always_inline)) void tile32(const uint32_t *src, size_t ss,
                                                         uint32_t *dst, size_t ds) {
  const __m128i r0 = _mm_loadu_si128((const __m128i *)src);
  const __m128i r1 = _mm_loadu_si128((const __m128i *)(src + ss));
  const __m128i r2 = _mm_loadu_si128((const __m128i *)(src + 2 * ss));
  const __m128i r3 = _mm_loadu_si128((const __m128i *)(src + 3 * ss));
  /* rows 0 and 1, 2 and 3 interleaved: columns 0-1 (lo) and 2-3 (hi) */
  const __m128i t0 = _mm_unpacklo_epi32(r0, r1), t1 = _mm_unpackhi_epi32(r0, r1);
  const __m128i t2 = _mm_unpacklo_epi32(r2, r3), t3 = _mm_unpackhi_epi32(r2, r3);
  _mm_storeu_si128((__m128i *)dst, _mm_unpacklo_epi64(t0, t2));
  _mm_storeu_si128((__m128i *)(dst + ds), _mm_unpackhi_epi64(t0, t2));
  _mm_storeu_si128((__m128i *)(dst + 2 * ds), _mm_unpacklo_epi64(t1, t3));
  _mm_storeu_si128((__m128i *)(dst + 3 * ds), _mm_unpackhi_epi64(t1, t3));
}

#define TILE16 8
#define TILE32 4
#else
/* tiles of one element: the block's loop is the plain one */
static inline void tile16(const uint16_t *src, size_t ss, uint16_t *dst, size_t ds) {
  (void)ss, (void)ds;
  *dst = *src;
}
static inline void tile32(const uint32_t *src, size_t ss, uint32_t *dst, size_t ds) {
  (void)ss, (void)ds;
  *dst = *src;
}
#define TILE16 1
#define TILE32 1
#endif

/* One block (rows x cols, each at most BLOCK): whole tiles of TILE x TILE, a column of tiles
 * at a time (so that the destination rows being written, which in a large matrix lie a
 * multiple of 4 KiB apart and so in one cache set, are a few at a time), then the ragged edge
 * element by element. Built per ISA (ACTX_BF16_VECTORISED) for the registers, not for
 * vectorising: the tile's SSE2 intrinsics then take AVX-512's 32 vector registers and
 * three-operand forms, where the baseline's 16 spilled rows to the stack (0.09-0.2 -> 0.08-0.12
 * ns an element on the AMX Xeon, the same bits). */
#define TRANSPOSE_BLOCK(name, T, tile_fn, TILE)                                              \
  ACTX_BF16_VECTORISED static void name(const T *src, size_t rows, size_t cols, size_t ss,   \
                                        T *dst, size_t ds) {                               \
    const size_t full_rows = rows - rows % (TILE), full_cols = cols - cols % (TILE);       \
    for (size_t j = 0; j < full_cols; j += (TILE))                                         \
      for (size_t i = 0; i < full_rows; i += (TILE))                                       \
        tile_fn(src + i * ss + j, ss, dst + j * ds + i, ds);                               \
    for (size_t i = 0; i < rows; i++)                                                      \
      for (size_t j = i < full_rows ? full_cols : 0; j < cols; j++)                        \
        dst[j * ds + i] = src[i * ss + j];                                                 \
  }
TRANSPOSE_BLOCK(block16, uint16_t, tile16, TILE16)
TRANSPOSE_BLOCK(block32, uint32_t, tile32, TILE32)

/* Fewer rows than a tile into a dense destination (dst's rows `rows` apart: a channels-first
 * tensor of 2-7 channels, an image's RGB, made channels-last): each destination row takes one
 * element of every source row, with the row count a constant so that the compiler unrolls the
 * interleave (3 rows of 102,400: 160 us through the blocks' ragged edge, 20 us here, in one run
 * on the AVX-512 Xeon). */
#define INTERLEAVE16_(R)                                                                  \
  ACTX_BF16_VECTORISED static void interleave16_##R(const uint16_t *restrict src, size_t cols, \
                                                    size_t ss, uint16_t *restrict dst) {  \
    for (size_t j = 0; j < cols; j++) {                                                   \
      _Pragma("GCC unroll 8") for (size_t i = 0; i < (R); i++) dst[j * (R) + i] = src[i * ss + j]; \
    }                                                                                     \
  }
INTERLEAVE16_(2)
INTERLEAVE16_(3)
INTERLEAVE16_(4)
INTERLEAVE16_(5)
INTERLEAVE16_(6)
INTERLEAVE16_(7)

/* Whether interleave16 took the matrix (2 to 7 rows, dst dense). */
static bool interleave16(const uint16_t *src, size_t rows, size_t cols, size_t ss, uint16_t *dst,
                         size_t ds) {
  if (ds != rows) return false;
  switch (rows) {
    case 2: interleave16_2(src, cols, ss, dst); return true;
    case 3: interleave16_3(src, cols, ss, dst); return true;
    case 4: interleave16_4(src, cols, ss, dst); return true;
    case 5: interleave16_5(src, cols, ss, dst); return true;
    case 6: interleave16_6(src, cols, ss, dst); return true;
    case 7: interleave16_7(src, cols, ss, dst); return true;
    default: return false;
  }
}
/* The matrix in blocks, row block by row block. */
#define TRANSPOSE(name, T, block)                                                           \
  static void name(const T *src, size_t rows, size_t cols, size_t ss, T *dst, size_t ds) {  \
    for (size_t i = 0; i < rows; i += BLOCK)                                                \
      for (size_t j = 0; j < cols; j += BLOCK)                                              \
        block(src + i * ss + j, rows - i < BLOCK ? rows - i : BLOCK,                        \
              cols - j < BLOCK ? cols - j : BLOCK, ss, dst + j * ds + i, ds);               \
  }
TRANSPOSE(blocks16, uint16_t, block16)
TRANSPOSE(blocks32, uint32_t, block32)

void actx_transpose16(const uint16_t *src, size_t rows, size_t cols, size_t ss, uint16_t *dst,
                      size_t ds) {
  if (!interleave16(src, rows, cols, ss, dst, ds)) blocks16(src, rows, cols, ss, dst, ds);
}

void actx_transpose32(const uint32_t *src, size_t rows, size_t cols, size_t ss, uint32_t *dst,
                      size_t ds) {
  blocks32(src, rows, cols, ss, dst, ds);
}
