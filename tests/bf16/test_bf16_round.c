/* The rounding of oneDNN's float32 results (bf16_round.h) is actx_f32_to_bf16 (src/half.h)
 * element for element, in the form this host uses (vcvtne2ps2bf16 where it has AVX512_BF16, the
 * integer loop elsewhere): on every float32 bit pattern, spans of every length 0..100 at every
 * offset, and blocks of normal numbers holding one subnormal, NaN or infinity at each position
 * (vcvtne2ps2bf16 flushes subnormals: such a block must take the integer form). The returned
 * flag says whether the span holds a NaN or an infinity. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bf16_round.h"
#include "half.h"

static int failures;
#define CHECK(c)                                                     \
  do {                                                               \
    if (!(c)) {                                                      \
      if (failures++ < 10) printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #c); \
    }                                                                \
  } while (0)

static int nonfinite_bits(uint32_t u) { return (u & 0x7F800000u) == 0x7F800000u; }

/* rounds n values at f (bits) and checks every result and the flag; returns results wrong */
static size_t check_span(const uint32_t *bits, uint16_t *y, size_t n) {
  const float *f = (const float *)(const void *)bits;
  const uint32_t flag = actx_bf16_round_span(f, y, n);
  size_t bad = 0;
  int any = 0;
  for (size_t i = 0; i < n; i++) {
    bad += y[i] != actx_f32_to_bf16(f[i]);
    any |= nonfinite_bits(bits[i]);
  }
  CHECK((flag != 0) == (any != 0));
  return bad;
}

static void every_pattern(void) {
  const size_t chunk = (size_t)1 << 20;
  uint32_t *bits = malloc((chunk + 64) * sizeof *bits);
  uint16_t *y = malloc((chunk + 64) * sizeof *y);
  size_t bad = 0;
  for (uint64_t base = 0; base < ((uint64_t)1 << 32); base += chunk) {
    /* a shifting start, so blocks straddle the chunk's runs of subnormals and specials */
    const size_t skew = (size_t)(base >> 20) % 33;
    for (size_t i = 0; i < chunk; i++) bits[skew + i] = (uint32_t)(base + i);
    bad += check_span(bits + skew, y, chunk);
  }
  printf("every float32: %zu results wrong\n", bad);
  CHECK(bad == 0);
  free(bits);
  free(y);
}

static void mixed_blocks(void) {
  static const uint32_t odd[] = {0x00000001u, 0x807FFFFFu, 0x00400000u, 0x80008000u,
                                 0x7FC00001u, 0xFF800001u, 0x7F800000u, 0xFF800000u,
                                 0x00000000u, 0x80000000u, 0x7F7FFFFFu};
  uint32_t bits[160];
  uint16_t y[160];
  size_t bad = 0;
  unsigned seed = 1;
  for (size_t k = 0; k < sizeof odd / sizeof odd[0]; k++)
    for (size_t at = 0; at < 96; at++) {
      for (size_t i = 0; i < 160; i++) {
        seed = seed * 1103515245u + 12345u;
        bits[i] = (seed & 0x3FFFFFFFu) | 0x3C000000u; /* normal numbers of either sign */
        bits[i] ^= (seed << 16) & 0x80000000u;
      }
      bits[at] = odd[k];
      for (size_t off = 0; off < 3; off++)
        for (size_t n = 0; n + off <= 100; n += 1 + n / 8) bad += check_span(bits + off, y, n);
    }
  printf("blocks with one special value: %zu results wrong\n", bad);
  CHECK(bad == 0);
}

int main(void) {
  printf("rounding form: %s\n", actx_bf16_round_form());
  mixed_blocks();
  every_pattern();
  printf("%s (%d failures)\n", failures ? "FAILED" : "ok", failures);
  return failures != 0;
}
