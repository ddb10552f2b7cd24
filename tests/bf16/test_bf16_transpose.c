/* The transposes of bf16_transpose.h (the layout changes around oneDNN's channels-last
 * convolutions) against the definition dst[j·ds + i] = src[i·ss + j], element for element, for
 * 16- and 32-bit elements: every size around the tiles (8 x 8, 4 x 4) and the blocks (64 x 64),
 * empty ones, strides wider than the matrix, pointers one element off alignment; and nothing
 * outside the destination's rows and columns is written (its padding and a guard after it keep
 * their sentinel). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bf16_transpose.h"

static int failures, checked;

/* sizes around every tile and block edge, and every row count the interleave takes (2-7) */
static const size_t sizes[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 63, 64, 65, 130, 200};
#define N_SIZES (sizeof sizes / sizeof sizes[0])
#define GUARD 64

/* One case of element type T (16 or 32 bits); a wrong one counts a failure. */
#define CASE(name, T, transpose)                                                               \
  static void name(size_t rows, size_t cols, size_t src_pad, size_t dst_pad, size_t offset) {  \
    const size_t ss = cols + src_pad, ds = rows + dst_pad;                                     \
    const size_t src_n = rows * ss + offset, dst_n = cols * ds + offset + GUARD;               \
    T *src = malloc((src_n + 1) * sizeof *src), *dst = malloc((dst_n + 1) * sizeof *dst);      \
    if (src == NULL || dst == NULL) {                                                          \
      fprintf(stderr, "out of memory\n");                                                      \
      exit(1);                                                                                 \
    }                                                                                          \
    const T sentinel = (T)0xA5A5A5A5u;                                                         \
    for (size_t k = 0; k < src_n; k++) src[k] = (T)(k * 2654435761u + 1u); /* never sentinel */ \
    for (size_t k = 0; k < dst_n; k++) dst[k] = sentinel;                                      \
    const T *s = src + offset;                                                                 \
    T *d = dst + offset;                                                                       \
    transpose(s, rows, cols, ss, d, ds);                                                       \
    size_t bad = 0;                                                                            \
    for (size_t k = 0; k < dst_n; k++) {                                                       \
      const size_t rel = k - offset, j = ds ? rel / ds : 0, i = ds ? rel % ds : 0;             \
      const bool inside = k >= offset && rows > 0 && j < cols && i < rows;                     \
      const T want = inside ? s[i * ss + j] : sentinel;                                        \
      if (dst[k] != want && bad++ < 3)                                                         \
        fprintf(stderr, "%s %zux%zu (pads %zu, %zu, offset %zu): dst[%zu] = 0x%x, want 0x%x\n", \
                #T, rows, cols, src_pad, dst_pad, offset, k, (unsigned)dst[k], (unsigned)want); \
    }                                                                                          \
    checked++;                                                                                 \
    if (bad > 0) failures++;                                                                   \
    free(src);                                                                                 \
    free(dst);                                                                                 \
  }
CASE(case16, uint16_t, actx_transpose16)
CASE(case32, uint32_t, actx_transpose32)

int main(void) {
  for (size_t r = 0; r < N_SIZES; r++)
    for (size_t c = 0; c < N_SIZES; c++) {
      const size_t rows = sizes[r], cols = sizes[c];
      for (size_t variant = 0; variant < 3; variant++) {
        /* dense; wider strides; wider strides one element off alignment */
        const size_t src_pad = variant ? 3 : 0, dst_pad = variant ? 5 : 0, offset = variant == 2;
        case16(rows, cols, src_pad, dst_pad, offset);
        case32(rows, cols, src_pad, dst_pad, offset);
      }
    }
  /* a convolution's largest plane: 16 channels of 160 x 160, both ways */
  case16(16, 25600, 0, 0, 0);
  case16(25600, 16, 0, 0, 0);
  case32(25600, 16, 0, 0, 0);
  if (failures) {
    fprintf(stderr, "test_bf16_transpose: %d of %d cases wrong\n", failures, checked);
    return 1;
  }
  printf("test_bf16_transpose: %d cases exact\n", checked);
  return 0;
}
