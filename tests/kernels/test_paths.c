/* Every vector ISA (avx2, avx512) gives the portable path's bits, under both ORT rules, for every
 * op variant (cases.h) and dtype, on the shared input set (float32) and on every float16 /
 * bfloat16 value three times over (each meeting several bias values):
 *   - by actx_compute on each ISA, under the rule set with actx_set_ort_rule (the library
 *     derives the kernel parameters);
 *   - by each ISA's kernel called directly with the parameters cases.h derives from the rule
 *     (actx_compute answers long 16-bit tensors of some ops from a table, so only this compares
 *     the ISAs' 16-bit kernels there), which must also equal actx_compute's result. */
#include "../../src/dispatch.h"
#include "cases.h"
#include "inputs.h"

#define RANDOM_COUNT 1000000
#define NF_MAX (RANDOM_COUNT + 4096)
#define NH (65536 * 3)

static size_t mismatches(const void *a, const void *b, size_t n, size_t es, size_t *first) {
  if (memcmp(a, b, n * es) == 0) return 0;
  size_t count = 0;
  for (size_t i = 0; i < n; i++)
    if (memcmp((const char *)a + i * es, (const char *)b + i * es, es) != 0) {
      if (count++ == 0) *first = i;
    }
  return count;
}

/* got must be want's bits; says where not */
static void expect_same(const void *x, const void *got, const void *want, size_t n, size_t es,
                        const char *what, const test_case *c, actx_dtype dt, actx_ort_rule rule,
                        actx_isa isa) {
  size_t first = 0;
  const size_t bad = mismatches(got, want, n, es, &first);
  if (bad == 0) return;
  uint32_t xi = 0, gi = 0, wi = 0;
  memcpy(&xi, (const char *)x + first * es, es);
  memcpy(&gi, (const char *)got + first * es, es);
  memcpy(&wi, (const char *)want + first * es, es);
  EXPECT(0, "%s %s, %s rule, %s %s: %zu of %zu differ from portable; first x=%08x got %08x want "
         "%08x", c->name, actx_dtype_name(dt), actx_ort_rule_name(rule), actx_isa_name(isa), what,
         bad, n, xi, gi, wi);
}

int main(void) {
  test_expect_vector_isa();
  static float xf[NF_MAX], bias_f[768], tiled_f[NF_MAX];
  size_t nf = make_inputs(xf, RANDOM_COUNT, 42);
  static uint16_t xh[NH], bias_h[768], tiled_h[NH];
  for (size_t i = 0; i < NH; i++) xh[i] = (uint16_t)(i % 65536 * 7919 % 65536);
  uint64_t s = 7;
  for (size_t i = 0; i < 768; i++) {
    bias_f[i] = rng_uniform(&s, -3, 3);
    bias_h[i] = (uint16_t)(i * 37); /* arbitrary patterns, NaNs and Infs included */
  }
  /* results: portable by actx_compute, then each path to compare with it */
  static unsigned char ref[NF_MAX * 4], got[NF_MAX * 4];

  for (int r = 0; r < ACTX_ORT_RULE_COUNT; r++) {
    const actx_ort_rule rule = (actx_ort_rule)r;
    actx_set_ort_rule(rule);
    for (size_t c = 0; c < TEST_CASE_COUNT; c++) {
      const test_case *tc = &test_cases[c];
      for (int dt = 0; dt < ACTX_DTYPE_COUNT; dt++) {
        const int f32 = dt == ACTX_F32;
        const size_t es = actx_dtype_size((actx_dtype)dt);
        const actx_op_desc d = case_desc(tc, (actx_dtype)dt, f32 ? (void *)bias_f : (void *)bias_h);
        const void *x = f32 ? (void *)xf : (void *)xh;
        size_t n = f32 ? nf : NH;
        if (d.bias_len) n -= n % d.bias_len;
        /* a kernel takes one bias element per x: the rows laid end to end */
        void *tiled = f32 ? (void *)tiled_f : (void *)tiled_h;
        for (size_t i = 0; d.bias_len && i < n; i++)
          memcpy((char *)tiled + i * es, (const char *)d.bias + i % d.bias_len * es, es);
        actx_kernel_params p = rule_params(rule, &d);
        p.bias = d.bias_len ? tiled : NULL;

        actx_set_isa(ACTX_ISA_PORTABLE);
        EXPECT(actx_compute(&d, x, ref, n, NULL) == ACTX_OK, "compute portable");
        for (size_t k = 0; k < TEST_ISA_COUNT; k++) {
          const actx_isa isa = test_isas[k];
          if (!test_isa_usable(isa)) continue;
          if (isa != ACTX_ISA_PORTABLE) {
            actx_set_isa(isa);
            memset(got, 0, n * es);
            EXPECT(actx_compute(&d, x, got, n, NULL) == ACTX_OK, "compute %s", actx_isa_name(isa));
            expect_same(x, got, ref, n, es, "actx_compute", tc, (actx_dtype)dt, rule, isa);
          }
          memset(got, 0, n * es);
          actx_kernel_for_isa(isa, d.op, d.dtype)(x, got, n, &p);
          expect_same(x, got, ref, n, es, "kernel", tc, (actx_dtype)dt, rule, isa);
        }
      }
    }
  }
  return test_finish("test_paths");
}
