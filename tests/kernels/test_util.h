/* Small helpers shared by the kernel tests: a seeded generator, bit access, failure reporting,
 * and the ISAs a test may run here. */
#ifndef ACTX_TEST_UTIL_H
#define ACTX_TEST_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/kernels.h" /* ACTX_ISAS, actx_kernel_params */
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

/* ---- ISAs ---------------------------------------------------------------------------------- */

/* Every ISA this build has kernels for (src/kernels.h's ACTX_ISAS), portable first. */
#define TEST_ISA_ENUM_(suffix, e) e,
static const actx_isa test_isas[] = {ACTX_ISAS(TEST_ISA_ENUM_)};
#undef TEST_ISA_ENUM_
#define TEST_ISA_COUNT (sizeof test_isas / sizeof test_isas[0])

/* Whether a test may run isa on this machine. A vector ISA the CPU lacks is skipped, and the
 * first time each is asked for the test says so on stdout: a host without AVX-512 must show
 * "skipped: no AVX-512F", never pass in silence, and still run the other ISAs and both ORT
 * rules. ACTX_TEST_NO_AVX512=1 makes the tests treat the CPU as one without AVX-512, so that an
 * AVX2-only host's run can be rehearsed on any machine (ctest does, see CMakeLists.txt). */
static inline int test_isa_usable(actx_isa isa) {
  static int usable[ACTX_ISA_COUNT], said[ACTX_ISA_COUNT]; /* usable: 0 unknown, 1 yes, 2 no */
  if ((unsigned)isa >= ACTX_ISA_COUNT) return 0;
  if (usable[isa] == 1) return 1;
  const char *pretend = getenv("ACTX_TEST_NO_AVX512");
  const int hidden = isa == ACTX_ISA_AVX512 && pretend != NULL && strcmp(pretend, "1") == 0;
  if (usable[isa] == 0) usable[isa] = !hidden && actx_isa_supported(isa) ? 1 : 2;
  if (usable[isa] == 1) return 1;
  if (!said[isa]++) {
    if (isa == ACTX_ISA_AVX512)
      printf("avx512 path: skipped: no AVX-512F + AVX512BW on this CPU%s\n",
             hidden ? " (ACTX_TEST_NO_AVX512=1)" : "");
    else
      printf("%s path: skipped: no AVX2 + FMA3 + F16C on this CPU\n", actx_isa_name(isa));
    fflush(stdout);
  }
  return 0;
}

/* A test comparing the vector ISAs with portable compares nothing on an x86-64 CPU without AVX2:
 * that fails (as a pass would say what was not checked). */
static inline void test_expect_vector_isa(void) {
  int vector = 0;
  for (size_t i = 0; i < TEST_ISA_COUNT; i++)
    if (test_isas[i] != ACTX_ISA_PORTABLE && test_isa_usable(test_isas[i])) vector = 1;
  EXPECT(vector || !ACTX_HAVE_X86_KERNELS, "this CPU has no vector ISA to compare with portable");
}

#endif /* ACTX_TEST_UTIL_H */
