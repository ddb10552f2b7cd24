/* The float32 input set the kernel tests share: random values over several ranges, random bit
 * patterns, exponent boundaries, MLAS's branch points and clamps with their float neighbours,
 * and the specials. */
#ifndef ACTX_TEST_INPUTS_H
#define ACTX_TEST_INPUTS_H

#include "test_util.h"

static inline void push_with_neighbours(float *v, size_t *k, float x) {
  v[(*k)++] = x;
  v[(*k)++] = nextafterf(x, INFINITY);
  v[(*k)++] = nextafterf(x, -INFINITY);
  v[(*k)++] = -x;
  v[(*k)++] = nextafterf(-x, INFINITY);
  v[(*k)++] = nextafterf(-x, -INFINITY);
}

/* Fills v (capacity cap >= random_count + 4096) and returns the count. */
static inline size_t make_inputs(float *v, size_t random_count, uint64_t seed) {
  size_t k = 0;
  static const float points[] = {0.921875f, 3.925f, 9.0f, 18.0f, 1.0f, 0.5f, 2.0f,
                                 1.3037281f /* 0.921875*sqrt2 */, 5.5508f, 12.728f, 88.3762626647949f,
                                 1e-30f, 1e-38f, 1e-45f, 3.4028235e38f, 1e30f, 65504.0f};
  for (size_t i = 0; i < sizeof points / sizeof points[0]; i++) push_with_neighbours(v, &k, points[i]);
  for (int e = -149; e <= 127; e++) push_with_neighbours(v, &k, ldexpf(1.0f, e));
  static const uint32_t specials[] = {0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000,
                                      0xFFC00000, 0x7FC12345, 0xFFC54321, 0x7F800001, 0xFFA00001,
                                      0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000,
                                      0x7F7FFFFF, 0xFF7FFFFF};
  for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++) v[k++] = float_of(specials[i]);
  uint64_t s = seed;
  static const float ranges[][2] = {{-1, 1}, {-6, 6}, {-20, 20}, {-100, 100}};
  for (size_t i = 0; i < random_count; i++) {
    const size_t r = i % 5;
    v[k++] = r < 4 ? rng_uniform(&s, ranges[r][0], ranges[r][1]) : float_of((uint32_t)rng_next(&s));
  }
  return k;
}

#endif /* ACTX_TEST_INPUTS_H */
