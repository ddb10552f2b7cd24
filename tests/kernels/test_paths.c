/* The AVX2 and portable paths give the same bits, for every op and dtype, on the shared input
 * set (float32) and on every float16 / bfloat16 value. */
#include "cases.h"
#include "inputs.h"

#define RANDOM_COUNT 1000000

static size_t mismatches(const void *a, const void *b, size_t n, size_t es, size_t *first) {
  size_t count = 0;
  for (size_t i = 0; i < n; i++)
    if (memcmp((const char *)a + i * es, (const char *)b + i * es, es) != 0) {
      if (count++ == 0) *first = i;
    }
  return count;
}

int main(void) {
  if (!actx_isa_supported(ACTX_ISA_AVX2)) {
    fprintf(stderr, "test_paths: this CPU has no AVX2+FMA+F16C; the comparison cannot run\n");
    return 1;
  }
  static float xf[RANDOM_COUNT + 4096], ya[RANDOM_COUNT + 4096], yp[RANDOM_COUNT + 4096];
  size_t nf = make_inputs(xf, RANDOM_COUNT, 42);
  nf -= nf % (768 * 7); /* a multiple of every bias length */
  static uint16_t xh[65536 * 21], yha[65536 * 21], yhp[65536 * 21];
  const size_t nh = 65536 * 21; /* every 16-bit pattern, 21 times (multiple of 7 and 3 * 7) */
  for (size_t i = 0; i < nh; i++) xh[i] = (uint16_t)(i % 65536 * 7919 % 65536);
  static float bias_f[768];
  static uint16_t bias_h[768];
  uint64_t s = 7;
  for (size_t i = 0; i < 768; i++) {
    bias_f[i] = rng_uniform(&s, -3, 3);
    bias_h[i] = (uint16_t)(i * 37); /* arbitrary patterns, NaNs and Infs included */
  }

  for (size_t c = 0; c < TEST_CASE_COUNT; c++) {
    for (int dt = 0; dt < ACTX_DTYPE_COUNT; dt++) {
      const int f32 = dt == ACTX_F32;
      const actx_op_desc d = case_desc(&test_cases[c], (actx_dtype)dt, f32 ? (void *)bias_f : (void *)bias_h);
      const void *x = f32 ? (void *)xf : (void *)xh;
      void *a = f32 ? (void *)ya : (void *)yha, *p = f32 ? (void *)yp : (void *)yhp;
      size_t n = f32 ? nf : nh;
      if (d.bias_len) n -= n % d.bias_len;
      actx_set_isa(ACTX_ISA_AVX2);
      EXPECT(actx_compute(&d, x, a, n, NULL) == ACTX_OK, "compute avx2");
      actx_set_isa(ACTX_ISA_PORTABLE);
      EXPECT(actx_compute(&d, x, p, n, NULL) == ACTX_OK, "compute portable");
      size_t first = 0;
      const size_t es = actx_dtype_size((actx_dtype)dt);
      const size_t bad = mismatches(a, p, n, es, &first);
      uint32_t xi = 0, ai = 0, pi = 0;
      memcpy(&xi, (const char *)x + first * es, es);
      memcpy(&ai, (const char *)a + first * es, es);
      memcpy(&pi, (const char *)p + first * es, es);
      EXPECT(bad == 0, "%s %s: %zu of %zu differ; first x=%08x avx2=%08x portable=%08x",
             test_cases[c].name, actx_dtype_name((actx_dtype)dt), bad, n, xi, ai, pi);
    }
  }
  return test_finish("test_paths");
}
