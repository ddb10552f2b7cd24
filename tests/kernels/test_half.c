/* float16 and bfloat16: for every op variant, all 65,536 inputs and both ORT rules, every ISA's
 * kernel (avx2, avx512, portable) and actx_compute on each ISA (which looks the result up in a
 * table for long tensors, src/lut.h) give identical bits, equal to round(float32 result of
 * widen(x)) computed here with this file's own conversions (independent of src/half.h). Bias
 * variants with h = 1, 7, 768, 3072. The table lookup against every ISA's kernel on lengths
 * around its threshold and its 8-element step, misaligned, in place. */
#include "../../src/dispatch.h"
#include "../../src/lut.h"
#include "../../src/ort_rule.h"
#include "cases.h"
#include "test_util.h"

/* independent conversions: float16 by exponent arithmetic on doubles, bfloat16 by rounding
 * with integer halves */
static float widen_f16(uint16_t h) {
  const int e = (h >> 10) & 31, m = h & 1023;
  const float sign = (h & 0x8000) ? -1.0f : 1.0f;
  if (e == 31) {
    if (m == 0) return sign * INFINITY;
    return float_of((uint32_t)(h & 0x8000) << 16 | 0x7FC00000u | (uint32_t)m << 13);
  }
  return sign * (float)ldexp(e ? 1024 + m : m, (e ? e : 1) - 25);
}

static uint16_t narrow_f16(float f) {
  const uint32_t u = bits_of(f);
  const uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
  if (isnan(f)) return (uint16_t)(sign | 0x7E00 | ((u >> 13) & 0x3FF));
  const double a = fabs((double)f);
  if (a >= 65520.0) return (uint16_t)(sign | 0x7C00);
  /* scale to half units of the right binade, round half to even with rint */
  int e;
  frexp(a, &e);            /* a = m * 2^e, m in [0.5, 1) */
  if (e < -13) e = -13;    /* subnormal range: unit 2^-24 */
  const double unit = ldexp(1.0, e - 11);
  const double q = rint(a / unit); /* exact: a / unit has at most 24 significant bits */
  const double r = q * unit;
  if (r == 0) return sign;
  int re;
  frexp(r, &re);
  if (re < -13) return (uint16_t)(sign | (uint16_t)(r / ldexp(1.0, -24)));
  return (uint16_t)(sign | ((re + 14) << 10) | ((uint16_t)(r / ldexp(1.0, re - 11)) & 0x3FF));
}

static float widen_bf16(uint16_t h) { return float_of((uint32_t)h << 16); }

static uint16_t narrow_bf16(float f) {
  const uint32_t u = bits_of(f);
  if (isnan(f)) return (uint16_t)((u >> 16) | 0x0040);
  const uint32_t hi = u >> 16, lo = u & 0xFFFF;
  return (uint16_t)(lo > 0x8000 || (lo == 0x8000 && (hi & 1)) ? hi + 1 : hi);
}

typedef struct half_type {
  actx_dtype dtype;
  float (*widen)(uint16_t);
  uint16_t (*narrow)(float);
} half_type;
static const half_type types[] = {{ACTX_F16, widen_f16, narrow_f16}, {ACTX_BF16, widen_bf16, narrow_bf16}};

#define N 65536
static const size_t bias_lens[] = {1, 7, 768, 3072};

/* the kernel of op on isa, called directly with the active rule's parameters (actx_compute
 * would use the table) */
static void run_kernel(actx_isa isa, const actx_op_desc *d, const uint16_t *x, uint16_t *y,
                       size_t n) {
  const actx_kernel_params p = rule_params(actx_get_ort_rule(), d);
  actx_kernel_for_isa(isa, d->op, d->dtype)(x, y, n, &p);
}

static void check_type(const half_type *t) {
  static uint16_t x[N * 3], yp[N * 3], yk[N * 3], ya[N * 3], bias[3072];
  static float xf[N * 3], yf[N * 3];
  uint64_t s = 17;
  for (size_t bl = 0; bl <= 4; bl++) {
    /* bl == 0: every value once, no bias; then a bias of each length over a random tensor
     * whose length is a multiple of it */
    const size_t h = bl ? bias_lens[bl - 1] : 0;
    const size_t n = h ? (N * 3) / h * h : N;
    for (size_t i = 0; i < n; i++) x[i] = bl ? (uint16_t)rng_next(&s) : (uint16_t)i;
    for (size_t i = 0; i < h; i++) bias[i] = (uint16_t)rng_next(&s);
    for (size_t c = 0; c < TEST_CASE_COUNT; c++) {
      const test_case *tc = &test_cases[c];
      if ((h != 0) != (tc->bias_len != 0)) continue;
      actx_op_desc d = case_desc(tc, t->dtype, bias);
      if (h) d.bias_len = h;
      for (int r = 0; r < ACTX_ORT_RULE_COUNT; r++) {
        const actx_ort_rule rule = (actx_ort_rule)r;
        actx_set_ort_rule(rule);
        /* reference: widen here, float32 kernel (x + b added in float32 first), round here;
         * x + b: a NaN x wins over a NaN b (actx's documented rule); no bias: no addition (+0
         * would turn -0 into +0) */
        for (size_t i = 0; i < n; i++) {
          const float wx = t->widen(x[i]);
          xf[i] = !h ? wx : isnan(wx) ? float_of(bits_of(wx) | 0x00400000u) : wx + t->widen(bias[i % h]);
        }
        actx_op_desc df = {.op = tc->op, .dtype = ACTX_F32, .alpha = tc->alpha};
        actx_set_isa(ACTX_ISA_PORTABLE);
        EXPECT(actx_compute(&df, xf, yf, n, NULL) == ACTX_OK, "f32");
        /* yp: portable by actx_compute (a table where one applies) */
        EXPECT(actx_compute(&d, x, yp, n, NULL) == ACTX_OK, "portable");
        size_t bad_ref = 0, first = 0;
        for (size_t i = 0; i < n; i++)
          if (yp[i] != t->narrow(yf[i]) && bad_ref++ == 0) first = i;
        EXPECT(bad_ref == 0, "%s %s h=%zu, %s rule: %zu of %zu differ from round(f32(widen)); "
               "first x=%04x got %04x want %04x", tc->name, actx_dtype_name(t->dtype), h,
               actx_ort_rule_name(rule), bad_ref, n, x[first], yp[first], t->narrow(yf[first]));
        for (size_t k = 0; k < TEST_ISA_COUNT; k++) {
          const actx_isa isa = test_isas[k];
          if (!test_isa_usable(isa)) continue;
          actx_set_isa(isa);
          EXPECT(actx_compute(&d, x, ya, n, NULL) == ACTX_OK, "%s", actx_isa_name(isa));
          if (!h) { /* the kernel itself: without a bias actx_compute may use the table */
            run_kernel(isa, &d, x, yk, n);
          } else {
            memcpy(yk, ya, n * sizeof *yk);
          }
          size_t bad_paths = 0;
          for (size_t i = 0; i < n; i++)
            if (ya[i] != yp[i] || yk[i] != yp[i]) bad_paths++;
          EXPECT(bad_paths == 0, "%s %s h=%zu, %s rule: %zu of %zu differ between %s and "
                 "portable", tc->name, actx_dtype_name(t->dtype), h, actx_ort_rule_name(rule),
                 bad_paths, n, actx_isa_name(isa));
        }
      }
    }
  }
}

/* The table lookup against every ISA's kernel: lengths across the threshold and the 8-element
 * step, x and y at odd byte addresses, in place. The ops with a table come from the op list. */
static void check_lut(actx_dtype dt) {
  static unsigned char xb[2 * N + 64], yb[2 * N + 64], kb[2 * N + 64];
  uint64_t s = 5;
  const size_t lens[] = {ACTX_LUT_MIN_ELEMENTS - 1, ACTX_LUT_MIN_ELEMENTS, ACTX_LUT_MIN_ELEMENTS + 1,
                         ACTX_LUT_MIN_ELEMENTS + 7, 3 * ACTX_LUT_MIN_ELEMENTS + 5, N};
  for (int op = 0; op < ACTX_OP_COUNT; op++) {
    if (!actx_op_has_table[op]) {
      EXPECT(actx_lut_get((actx_op)op, dt) == NULL, "%s %s has a table", actx_op_name((actx_op)op),
             actx_dtype_name(dt));
      continue;
    }
    const actx_op_desc d = {.op = (actx_op)op, .dtype = dt,
                            .alpha = actx_lut_alpha((actx_op)op)};
    EXPECT(actx_lut_get(d.op, dt) != NULL, "%s %s has no table", actx_op_name(d.op),
           actx_dtype_name(dt));
    EXPECT(actx_lut_get(d.op, ACTX_F32) == NULL, "float32 %s has a table", actx_op_name(d.op));
    if (actx_op_takes_alpha[op]) { /* QuickGelu: SiLU's table only, never another alpha's */
      const actx_kernel_params other = actx_ort_rule_params(d.op, 1.702f, 0);
      EXPECT(actx_lut_get_for(d.op, dt, &other) == NULL, "%s %s has a table at alpha 1.702",
             actx_op_name(d.op), actx_dtype_name(dt));
    }
    for (size_t k = 0; k < TEST_ISA_COUNT; k++) {
      const actx_isa isa = test_isas[k];
      if (!test_isa_usable(isa)) continue;
      for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
        const size_t n = lens[l];
        for (size_t i = 0; i < 2 * n + 64; i++) xb[i] = (unsigned char)rng_next(&s);
        unsigned char *x = xb + 1, *y = yb + 3;
        memcpy(kb, x, 2 * n);
        run_kernel(isa, &d, (const uint16_t *)kb, (uint16_t *)kb, n);
        memset(yb, 0xA5, sizeof yb);
        EXPECT(actx_compute(&d, x, y, n, NULL) == ACTX_OK, "compute");
        EXPECT(memcmp(y, kb, 2 * n) == 0, "%s %s n=%zu: lookup differs from the %s kernel",
               actx_op_name(d.op), actx_dtype_name(dt), n, actx_isa_name(isa));
        EXPECT(yb[2] == 0xA5 && y[2 * n] == 0xA5, "%s %s n=%zu: wrote outside y",
               actx_op_name(d.op), actx_dtype_name(dt), n);
        EXPECT(actx_compute(&d, x, x, n, NULL) == ACTX_OK, "compute in place");
        EXPECT(memcmp(x, kb, 2 * n) == 0, "%s %s n=%zu: in-place lookup differs from the %s "
               "kernel", actx_op_name(d.op), actx_dtype_name(dt), n, actx_isa_name(isa));
      }
    }
  }
}

/* Each ISA's lookup loop against the definition y[i] = table[x[i]]: every index (65,535, whose
 * vector read takes the spare entry, among them), lengths around the vector step, odd
 * addresses, in place. */
static void check_lut_loops(void) {
  static uint16_t table[ACTX_LUT_ENTRIES];
  static unsigned char xb[2 * N + 64], yb[2 * N + 64];
  uint64_t s = 11;
  for (size_t i = 0; i < ACTX_LUT_ENTRIES; i++) table[i] = (uint16_t)rng_next(&s);
  const size_t lens[] = {0, 1, 31, 32, 33, 63, 64, 65, N};
  for (size_t k = 0; k < TEST_ISA_COUNT; k++) {
    const actx_isa isa = test_isas[k];
    if (!test_isa_usable(isa)) continue;
    for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
      const size_t n = lens[l];
      unsigned char *x = xb + 1, *y = yb + 3;
      for (size_t i = 0; i < n; i++) { /* every index once, from the top down */
        const uint16_t v = (uint16_t)(N - 1 - i);
        memcpy(x + 2 * i, &v, 2);
      }
      memset(yb, 0xA5, sizeof yb);
      actx_lut_apply_isa(isa, table, x, y, n);
      for (size_t i = 0; i < n; i++) {
        uint16_t got;
        memcpy(&got, y + 2 * i, 2);
        EXPECT(got == table[N - 1 - i], "%s lookup n=%zu: element %zu", actx_isa_name(isa), n,
               i);
      }
      EXPECT(yb[2] == 0xA5 && y[2 * n] == 0xA5, "%s lookup n=%zu wrote outside y",
             actx_isa_name(isa), n);
      actx_lut_apply_isa(isa, table, x, x, n);
      EXPECT(memcmp(x, y, 2 * n) == 0, "%s lookup n=%zu in place differs", actx_isa_name(isa), n);
    }
  }
}

int main(void) {
  test_expect_vector_isa();
  check_lut_loops();
  /* the test's own conversions agree with each other on round trips */
  for (uint32_t h = 0; h < N; h++) {
    const float w = widen_f16((uint16_t)h);
    if (!isnan(w)) EXPECT(narrow_f16(w) == h, "f16 round trip %04x", h);
    const float wb = widen_bf16((uint16_t)h);
    if (!isnan(wb)) EXPECT(narrow_bf16(wb) == h, "bf16 round trip %04x", h);
  }
  for (size_t t = 0; t < 2; t++) check_type(&types[t]);
  /* a table is built once, under the rule active at its first use (check_type's first), and
   * must give the kernels' bits under every rule (test_ort_rule builds them under each rule) */
  for (int r = 0; r < ACTX_ORT_RULE_COUNT; r++) {
    actx_set_ort_rule((actx_ort_rule)r);
    check_lut(ACTX_F16);
    check_lut(ACTX_BF16);
  }
  return test_finish("test_half");
}
