/* The ORT rule (include/actx.h, actx_ort_rule) on any host: ORT 1.30 on an AVX-512F CPU returns
 * a NaN input unchanged from exact Gelu and SiLU (QuickGelu at alpha 1), and clamps SiLU's
 * logistic to at most 1; on an AVX2 CPU it makes every NaN quiet and clamps at 0 only. Every
 * actx ISA computes either rule, so both are checked here through every ISA this CPU has, by
 * actx_compute (which derives the kernel parameters from the active rule) and by the kernels
 * called directly with the parameters the rule implies (cases.h).
 *
 *   test_ort_rule        the rule API, then both rules set with actx_set_ort_rule()
 *   test_ort_rule RULE   ctest sets ACTX_ORT_RULE: the process must start under RULE ("host":
 *                        the host's own) and compute it without any call that sets a rule;
 *                        the 16-bit tables, built under it, must serve both rules */
#include "../../src/dispatch.h"
#include "../../src/lut.h"
#include "cases.h"
#include "test_util.h"

#define QUIET 0x00400000u
#define SNAN 0x7FA71D02u
#define SNAN_QUIETED 0x7FE71D02u

/* The rule ORT picks on this CPU: its AVX-512F kernels when the CPU has AVX512F (and the OS
 * saves its registers, which the compiler's check includes); on AArch64 its arm64 build's. */
static actx_ort_rule host_rule(void) {
#if defined(__aarch64__)
  return ACTX_ORT_RULE_ARM64;
#else
  return __builtin_cpu_supports("avx512f") ? ACTX_ORT_RULE_AVX512 : ACTX_ORT_RULE_AVX2;
#endif
}

/* ---- a signalling NaN through every op ------------------------------------------------------ */

/* What each op returns for the signalling NaN SNAN, under each rule, spelled out. */
typedef struct snan_case {
  const char *name;
  actx_op op;
  float alpha;
  int bias;
  uint32_t want[ACTX_ORT_RULE_COUNT]; /* [ACTX_ORT_RULE_AVX2], [_AVX512], [_ARM64] */
} snan_case;
#define ALL_QUIETED {SNAN_QUIETED, SNAN_QUIETED, SNAN_QUIETED}
#define KEPT_ON_AVX512 {SNAN_QUIETED, SNAN, SNAN_QUIETED}
static const snan_case snan_cases[] = {
    {"gelu", ACTX_OP_GELU, 0, 0, KEPT_ON_AVX512},
    {"quick_gelu(1) = silu", ACTX_OP_QUICK_GELU, 1.0f, 0, KEPT_ON_AVX512},
    {"quick_gelu(1.702)", ACTX_OP_QUICK_GELU, 1.702f, 0, ALL_QUIETED},
    {"quick_gelu(-0.5)", ACTX_OP_QUICK_GELU, -0.5f, 0, ALL_QUIETED},
    {"bias_gelu", ACTX_OP_GELU, 0, 1, ALL_QUIETED},
    {"erf", ACTX_OP_ERF, 0, 0, ALL_QUIETED},
    {"gelu_tanh", ACTX_OP_GELU_TANH, 0, 0, ALL_QUIETED},
    {"fast_gelu(bias)", ACTX_OP_GELU_TANH, 0, 1, ALL_QUIETED},
    {"tanh", ACTX_OP_TANH, 0, 0, ALL_QUIETED},
    {"sigmoid", ACTX_OP_SIGMOID, 0, 0, ALL_QUIETED},
};
#define SNAN_CASE_COUNT (sizeof snan_cases / sizeof snan_cases[0])

/* 100 elements reach every part of every ISA's loop (the unrolled block, single vectors, the
 * tail); the NaN sits in every third lane, numbers between, whose results must be those they
 * have alone. */
#define SNAN_N 100

static void check_snan(actx_ort_rule rule) {
  EXPECT(actx_get_ort_rule() == rule, "the active rule is %s, not %s",
         actx_ort_rule_name(actx_get_ort_rule()), actx_ort_rule_name(rule));
  uint32_t x[SNAN_N], y[SNAN_N], bias[SNAN_N], one[1];
  uint64_t s = 3;
  for (size_t i = 0; i < SNAN_N; i++) {
    x[i] = i % 3 == 0 ? SNAN : bits_of(rng_uniform(&s, -4, 4));
    bias[i] = bits_of(0.25f);
  }
  for (size_t i = 0; i < TEST_ISA_COUNT; i++) {
    const actx_isa isa = test_isas[i];
    if (!test_isa_usable(isa)) continue;
    actx_set_isa(isa);
    for (size_t c = 0; c < SNAN_CASE_COUNT; c++) {
      const snan_case *k = &snan_cases[c];
      const actx_op_desc d = {.op = k->op, .dtype = ACTX_F32, .alpha = k->alpha,
                              .bias = k->bias ? bias : NULL, .bias_len = k->bias ? SNAN_N : 0};
      const uint32_t want = k->want[rule];
      /* actx_compute: the rule as the library applies it */
      EXPECT(actx_compute(&d, x, y, SNAN_N, NULL) == ACTX_OK, "compute");
      for (size_t j = 0; j < SNAN_N; j++) {
        if (x[j] == SNAN) {
          EXPECT(y[j] == want, "%s rule, %s path: %s(%08x) at %zu = %08x, want %08x",
                 actx_ort_rule_name(rule), actx_isa_name(isa), k->name, SNAN, j, y[j], want);
          continue;
        }
        actx_op_desc d1 = d;
        if (k->bias) d1.bias_len = 1;
        EXPECT(actx_compute(&d1, &x[j], one, 1, NULL) == ACTX_OK, "compute one");
        EXPECT(y[j] == one[0], "%s rule, %s path: %s at %zu = %08x beside NaNs, %08x alone",
               actx_ort_rule_name(rule), actx_isa_name(isa), k->name, j, y[j], one[0]);
      }
      /* the kernel, called with the parameters the rule implies */
      actx_kernel_params p = rule_params(rule, &d);
      p.bias = d.bias;
      actx_kernel_for_isa(isa, k->op, ACTX_F32)(x, y, SNAN_N, &p);
      for (size_t j = 0; j < SNAN_N; j += 3)
        EXPECT(y[j] == want, "%s rule, %s kernel: %s(%08x) at %zu = %08x, want %08x",
               actx_ort_rule_name(rule), actx_isa_name(isa), k->name, SNAN, j, y[j], want);
    }
  }
}

/* The kernel parameter itself: with keep_nan every op returns any NaN input unchanged; without
 * it, made quiet (the ops keep sign and payload). */
static void check_keep_nan_param(void) {
  static const uint32_t nans[] = {SNAN, 0xFFA71D02u, 0x7F800001u, 0x7FC12345u, 0xFFFFFFFFu};
  enum { K = sizeof nans / sizeof nans[0], N = 7 * K };
  uint32_t x[N], y[N];
  for (size_t i = 0; i < N; i++) x[i] = nans[i % K];
  for (size_t i = 0; i < TEST_ISA_COUNT; i++) {
    if (!test_isa_usable(test_isas[i])) continue;
    for (int op = 0; op < ACTX_OP_COUNT; op++) {
      for (int keep = 0; keep <= 1; keep++) {
        const actx_kernel_params p = {.alpha = 1.702f, .keep_nan = keep};
        actx_kernel_for_isa(test_isas[i], (actx_op)op, ACTX_F32)(x, y, N, &p);
        for (size_t j = 0; j < N; j++) {
          const uint32_t want = keep ? x[j] : x[j] | QUIET;
          EXPECT(y[j] == want, "%s kernel %s keep_nan=%d: %08x -> %08x, want %08x",
                 actx_isa_name(test_isas[i]), actx_op_name((actx_op)op), keep, x[j], y[j], want);
        }
      }
    }
  }
}

/* ---- SiLU's clamp at 1 ---------------------------------------------------------------------- */

/* The AVX2 rule's logistic rounds to 1 + 2^-23 for some inputs below its clamp at 18, and SiLU
 * = x * logistic then comes out one ulp above x; the AVX-512 rule clamps the logistic to 1, so
 * SiLU = x there. 20 float32 inputs do this, all in [16, 18] (the census over every float32 is
 * test_exhaustive's). */
#define SILU_CLAMPED_COUNT 20
#define SILU_FIRST 0x41800000u /* 16 */
#define SILU_LAST 0x41900000u  /* 18 */
#define SILU_N (SILU_LAST - SILU_FIRST + 1)
#define SILU_KNOWN 0x418BDB45u /* one of them: 17.48... */

/* silu(x) under rule: by actx_compute on isa (kernel == 0) or by isa's kernel */
static void silu_all(actx_ort_rule rule, actx_isa isa, int kernel, const uint32_t *x, uint32_t *y) {
  const actx_op_desc d = {.op = ACTX_OP_QUICK_GELU, .dtype = ACTX_F32, .alpha = 1.0f};
  if (kernel) {
    const actx_kernel_params p = rule_params(rule, &d);
    actx_kernel_for_isa(isa, d.op, d.dtype)(x, y, SILU_N, &p);
  } else {
    actx_set_ort_rule(rule);
    actx_set_isa(isa);
    EXPECT(actx_compute(&d, x, y, SILU_N, NULL) == ACTX_OK, "silu");
  }
}

static void check_silu_clamp(void) {
  static uint32_t x[SILU_N], y[ACTX_ORT_RULE_COUNT][SILU_N];
  for (uint32_t i = 0; i < SILU_N; i++) x[i] = SILU_FIRST + i;
  for (size_t i = 0; i < TEST_ISA_COUNT; i++) {
    const actx_isa isa = test_isas[i];
    if (!test_isa_usable(isa)) continue;
    for (int kernel = 0; kernel <= 1; kernel++) {
      const char *how = kernel ? "kernel" : "path";
      for (int r = 0; r < ACTX_ORT_RULE_COUNT; r++) silu_all((actx_ort_rule)r, isa, kernel, x, y[r]);
      const uint32_t *y2 = y[ACTX_ORT_RULE_AVX2], *y5 = y[ACTX_ORT_RULE_AVX512];
      size_t differ = 0, known = 0;
      float lo = INFINITY, hi = -INFINITY;
      for (uint32_t j = 0; j < SILU_N; j++) {
        if (y2[j] == y5[j]) continue;
        differ++;
        known += x[j] == SILU_KNOWN;
        lo = fminf(lo, float_of(x[j]));
        hi = fmaxf(hi, float_of(x[j]));
        EXPECT(y5[j] == x[j] && y2[j] == x[j] + 1, "%s %s: silu(%08x) = %08x (avx512 rule), "
               "%08x (avx2 rule); want x and x + 1 ulp", actx_isa_name(isa), how, x[j], y5[j], y2[j]);
      }
      printf("silu, %s %s: %zu of the floats in [16, 18] differ between the rules, in [%.4f, %.4f]\n",
             actx_isa_name(isa), how, differ, lo, hi);
      EXPECT(differ == SILU_CLAMPED_COUNT, "%s %s: %zu silu results differ between the rules, "
             "want %d", actx_isa_name(isa), how, differ, SILU_CLAMPED_COUNT);
      EXPECT(known == 1, "%s %s: silu(%08x) is the same under both rules", actx_isa_name(isa),
             how, SILU_KNOWN);
      /* ORT arm64's logistic clamps as the AVX-512F SiLU does */
      EXPECT(memcmp(y[ACTX_ORT_RULE_ARM64], y5, sizeof y[0]) == 0,
             "%s %s: silu under the arm64 rule is not the avx512 rule's", actx_isa_name(isa), how);
    }
  }
}

/* One known clamped input through actx_compute under the active rule (the env runs). */
static void check_silu_known(actx_ort_rule rule) {
  const uint32_t want =
      rule_clamps_one(rule, ACTX_OP_QUICK_GELU, 1.0f) ? SILU_KNOWN : SILU_KNOWN + 1;
  uint32_t x[SNAN_N], y[SNAN_N];
  for (size_t i = 0; i < SNAN_N; i++) x[i] = SILU_KNOWN;
  for (size_t i = 0; i < TEST_ISA_COUNT; i++) {
    if (!test_isa_usable(test_isas[i])) continue;
    actx_set_isa(test_isas[i]);
    EXPECT(actx_quick_gelu_f32((const float *)x, (float *)y, SNAN_N, 1.0f) == ACTX_OK, "silu");
    for (size_t j = 0; j < SNAN_N; j++)
      EXPECT(y[j] == want, "%s rule, %s path: silu(%08x) at %zu = %08x, want %08x",
             actx_ort_rule_name(rule), actx_isa_name(test_isas[i]), SILU_KNOWN, j, y[j], want);
  }
}

/* ---- float16 / bfloat16: the same under both rules ------------------------------------------ */

/* The x86 rules never reach a 16-bit result: narrowing makes a NaN quiet whichever NaN the
 * float32 step kept, and no float16 / bfloat16 value is one of SiLU's 20 clamped inputs. So
 * every op gives the same bits under every rule on all 65,536 inputs, by each ISA's kernel and
 * by actx_compute (its tables), except tanh GELU under the arm64 rule, whose fused pre-pass
 * changes some (test_paths holds every ISA to the portable path's bits there). */
static void check_half_same(void) {
  static uint16_t x[65536], y[ACTX_ORT_RULE_COUNT][65536], bias[65536];
  uint64_t s = 21;
  for (uint32_t i = 0; i < 65536; i++) x[i] = (uint16_t)i;
  for (int dt = ACTX_F16; dt <= ACTX_BF16; dt++) {
    for (uint32_t i = 0; i < 65536; i++) bias[i] = (uint16_t)rng_next(&s);
    for (size_t c = 0; c < TEST_CASE_COUNT; c++) {
      const test_case *tc = &test_cases[c];
      actx_op_desc d = case_desc(tc, (actx_dtype)dt, bias);
      for (size_t i = 0; i < TEST_ISA_COUNT; i++) {
        const actx_isa isa = test_isas[i];
        if (!test_isa_usable(isa)) continue;
        for (int kernel = 0; kernel <= 1; kernel++) {
          /* a kernel takes one bias element per x; actx_compute, rows of bias_len */
          const size_t n = kernel || !d.bias_len ? 65536 : 65536 - 65536 % d.bias_len;
          for (int r = 0; r < ACTX_ORT_RULE_COUNT; r++) {
            if (kernel) {
              actx_kernel_params p = rule_params((actx_ort_rule)r, &d);
              p.bias = d.bias;
              actx_kernel_for_isa(isa, d.op, d.dtype)(x, y[r], n, &p);
            } else {
              actx_set_ort_rule((actx_ort_rule)r);
              actx_set_isa(isa);
              EXPECT(actx_compute(&d, x, y[r], n, NULL) == ACTX_OK, "compute");
            }
          }
          for (int r = 1; r < ACTX_ORT_RULE_COUNT; r++) {
            const int fused = rule_fuses_tanh_prepass((actx_ort_rule)r, d.op);
            size_t differ = 0, first = 0;
            for (uint32_t j = 0; j < n; j++)
              if (y[0][j] != y[r][j] && differ++ == 0) first = j;
            EXPECT(fused ? differ > 0 : differ == 0, "%s %s, %s %s: %zu results differ between "
                   "the avx2 and %s rules, first x=%04x: %04x vs %04x", tc->name,
                   actx_dtype_name(d.dtype), actx_isa_name(isa), kernel ? "kernel" : "path",
                   differ, actx_ort_rule_name((actx_ort_rule)r), x[first], y[0][first],
                   y[r][first]);
          }
        }
      }
    }
  }
}

/* The float16 / bfloat16 tables of the ops that have one are built at first use, under the
 * rule active then (here: the one ACTX_ORT_RULE chose), and must give every ISA's kernel bits
 * under every rule that computes the same 16-bit results (all but arm64's tanh GELU). */
static void check_tables(void) {
  static uint16_t x[65536], y[65536], yk[65536];
  for (uint32_t i = 0; i < 65536; i++) x[i] = (uint16_t)i;
  for (int dt = ACTX_F16; dt <= ACTX_BF16; dt++) {
    for (int op = 0; op < ACTX_OP_COUNT; op++) {
      if (!actx_op_has_table[op]) continue;
      const actx_op_desc d = {.op = (actx_op)op, .dtype = (actx_dtype)dt,
                              .alpha = actx_lut_alpha((actx_op)op)};
      EXPECT(actx_lut_peek(d.op, d.dtype) == NULL, "%s %s: a table before its first use",
             actx_op_name(d.op), actx_dtype_name(d.dtype));
      EXPECT(actx_compute(&d, x, y, 65536, NULL) == ACTX_OK, "compute");
      EXPECT(actx_lut_peek(d.op, d.dtype) != NULL, "%s %s: no table", actx_op_name(d.op),
             actx_dtype_name(d.dtype));
      for (size_t i = 0; i < TEST_ISA_COUNT; i++) {
        if (!test_isa_usable(test_isas[i])) continue;
        for (int r = 0; r < ACTX_ORT_RULE_COUNT; r++) {
          if (rule_fuses_tanh_prepass((actx_ort_rule)r, d.op) !=
              rule_fuses_tanh_prepass(actx_get_ort_rule(), d.op))
            continue;
          const actx_kernel_params p = rule_params((actx_ort_rule)r, &d);
          actx_kernel_for_isa(test_isas[i], d.op, d.dtype)(x, yk, 65536, &p);
          EXPECT(memcmp(y, yk, sizeof y) == 0, "%s %s: the table built under the %s rule "
                 "differs from the %s kernel under the %s rule", actx_op_name(d.op),
                 actx_dtype_name(d.dtype), actx_ort_rule_name(actx_get_ort_rule()),
                 actx_isa_name(test_isas[i]), actx_ort_rule_name((actx_ort_rule)r));
        }
      }
    }
  }
}

/* ---- the API ---------------------------------------------------------------------------------- */

static void check_rule_api(void) {
  if (getenv("ACTX_ORT_RULE") == NULL)
    EXPECT(actx_get_ort_rule() == host_rule(), "default rule %s on a host whose ORT uses %s",
           actx_ort_rule_name(actx_get_ort_rule()), actx_ort_rule_name(host_rule()));
  EXPECT(strcmp(actx_ort_rule_name(ACTX_ORT_RULE_AVX2), "avx2") == 0, "avx2's name");
  EXPECT(strcmp(actx_ort_rule_name(ACTX_ORT_RULE_AVX512), "avx512") == 0, "avx512's name");
  EXPECT(strcmp(actx_ort_rule_name(ACTX_ORT_RULE_ARM64), "arm64") == 0, "arm64's name");
  EXPECT(strcmp(actx_ort_rule_name(ACTX_ORT_RULE_COUNT), "unknown") == 0, "a bad rule's name");
  const actx_ort_rule before = actx_get_ort_rule();
  EXPECT(actx_set_ort_rule(ACTX_ORT_RULE_COUNT) == ACTX_ERROR_INVALID_ARGUMENT, "bad rule");
  EXPECT(actx_set_ort_rule((actx_ort_rule)-1) == ACTX_ERROR_INVALID_ARGUMENT, "negative rule");
  EXPECT(actx_get_ort_rule() == before, "a refused rule changed the rule");
  for (int r = 0; r < ACTX_ORT_RULE_COUNT; r++) {
    EXPECT(actx_set_ort_rule((actx_ort_rule)r) == ACTX_OK, "set %d", r);
    EXPECT(actx_get_ort_rule() == (actx_ort_rule)r, "set %d, get %d", r, actx_get_ort_rule());
  }
  actx_set_ort_rule(before);
}

static int rule_from_name(const char *name) {
  if (strcmp(name, "host") == 0) return host_rule();
  for (int r = 0; r < ACTX_ORT_RULE_COUNT; r++)
    if (strcmp(name, actx_ort_rule_name((actx_ort_rule)r)) == 0) return r;
  return -1;
}

int main(int argc, char **argv) {
  if (argc == 2) {
    /* first call into the library: the rule comes from ACTX_ORT_RULE (or the host) */
    const int want = rule_from_name(argv[1]);
    EXPECT(want >= 0, "usage: test_ort_rule [avx2|avx512|arm64|host]");
    if (want < 0) return test_finish("test_ort_rule");
    const char *env = getenv("ACTX_ORT_RULE");
    EXPECT(actx_get_ort_rule() == (actx_ort_rule)want, "ACTX_ORT_RULE=%s gave %s, want %s",
           env ? env : "(unset)", actx_ort_rule_name(actx_get_ort_rule()), argv[1]);
    check_snan((actx_ort_rule)want);
    check_silu_known((actx_ort_rule)want);
    check_tables();
    return test_finish("test_ort_rule");
  }
  check_rule_api();
  for (int r = 0; r < ACTX_ORT_RULE_COUNT; r++) {
    actx_set_ort_rule((actx_ort_rule)r);
    check_snan((actx_ort_rule)r);
    check_silu_known((actx_ort_rule)r);
  }
  check_keep_nan_param();
  check_silu_clamp();
  check_half_same();
  actx_set_ort_rule(host_rule());
  return test_finish("test_ort_rule");
}
