/* Small helpers shared by the kernel tests: a seeded generator, bit access, failure reporting. */
#ifndef ACTX_TEST_UTIL_H
#define ACTX_TEST_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actx.h"

static int test_failures;

#define EXPECT(cond, ...)                                   \
  do {                                                      \
    if (!(cond)) {                                          \
      if (test_failures++ < 20) {                           \
        fprintf(stderr, "%s:%d: FAILED: ", __FILE__, __LINE__); \
        fprintf(stderr, __VA_ARGS__);                       \
        fputc('\n', stderr);                                \
      }                                                     \
    }                                                       \
  } while (0)

static inline int test_finish(const char *name) {
  if (test_failures) {
    fprintf(stderr, "%s: %d failure(s)\n", name, test_failures);
    return 1;
  }
  printf("%s: ok\n", name);
  return 0;
}

static inline uint64_t rng_next(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static inline float rng_uniform(uint64_t *s, float lo, float hi) {
  return lo + (hi - lo) * (float)((rng_next(s) >> 40) * 0x1p-24);
}

static inline uint32_t bits_of(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

static inline float float_of(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* Distance in units in the last place between two finite floats of any sign. */
static inline double ulp_distance(float a, float b) {
  int64_t ia = bits_of(a), ib = bits_of(b);
  if (ia & 0x80000000) ia = 0x80000000ll - ia;
  if (ib & 0x80000000) ib = 0x80000000ll - ib;
  return (double)llabs(ia - ib);
}

#endif /* ACTX_TEST_UTIL_H */
