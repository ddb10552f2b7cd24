/* libactx's rows of docs/bad-input.md that tests/kernels does not already cover:
 *   - a length whose byte size overflows size_t: ACTX_ERROR_INVALID_ARGUMENT, nothing touched;
 *   - NaN inputs, quiet or signalling, any sign and payload: y is x's NaN made quiet, for every
 *     op, dtype and ISA (never a NaN of the kernel's own, never a number), under both ORT rules,
 *     except where the AVX-512 rule keeps a float32 NaN unchanged (exact Gelu, SiLU: cases.h);
 *   - a bias holding NaNs where x does not: y is the bias's NaN made quiet, under both rules;
 *   - the caller's floating-point environment (rounding mode, flags' masks) is left as it was.
 *
 * test_bad_input_kernels --num-threads N: checks that actx_get_num_threads() is N, for the
 * ACTX_NUM_THREADS values CMake sets (invalid ones must give 1, never an error or a crash). */
#include <fenv.h>

#include "../kernels/cases.h"
#include "../kernels/test_util.h"

static void check_size_overflow(void) {
  float x[4] = {1, 2, 3, 4}, y[4] = {0};
  static const size_t lengths[] = {SIZE_MAX, SIZE_MAX / 2 + 1, SIZE_MAX / 4 + 1};
  for (int dt = 0; dt < ACTX_DTYPE_COUNT; dt++) {
    const actx_op_desc d = {.op = ACTX_OP_TANH, .dtype = (actx_dtype)dt};
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
      if (lengths[i] <= SIZE_MAX / actx_dtype_size((actx_dtype)dt)) continue; /* fits */
      const actx_status st = actx_compute(&d, x, y, lengths[i], NULL);
      EXPECT(st == ACTX_ERROR_INVALID_ARGUMENT, "%s n=%zu: %s", actx_dtype_name((actx_dtype)dt),
             lengths[i], actx_status_string(st));
    }
  }
  EXPECT(y[0] == 0 && y[3] == 0, "a refused call wrote y");
}

/* float32 NaNs: quiet and signalling, both signs, several payloads */
static const uint32_t nan32[] = {0x7FC00000u, 0xFFC00000u, 0x7FC12345u, 0xFFD54321u,
                                 0x7F800001u, 0xFF800001u, 0x7FA00000u, 0xFFBFFFFFu};
static const uint16_t nan16[] = {0x7E00u, 0xFE00u, 0x7E01u, 0xFF3Fu, 0x7C01u, 0xFC01u, 0x7D55u};
static const uint16_t nanbf[] = {0x7FC0u, 0xFFC0u, 0x7FC1u, 0xFFE5u, 0x7F81u, 0xFF81u, 0x7FA5u};
#define QUIET32 0x00400000u
#define QUIET16 0x0200u
#define QUIETBF 0x0040u


/* x = the NaNs, repeated past one AVX-512 block and a tail; y must be each one made quiet, or
 * (float32 only) unchanged where the rule keeps NaNs. */
#define REPEAT 11
static void check_nan_payloads(actx_ort_rule rule) {
  for (size_t is = 0; is < TEST_ISA_COUNT; is++) {
    const actx_isa isa = test_isas[is];
    if (!test_isa_usable(isa) || actx_set_isa(isa) != ACTX_OK) continue;
    for (size_t c = 0; c < TEST_CASE_COUNT; c++) {
      if (test_cases[c].bias_len) continue; /* the bias: check_nan_bias */
      actx_op_desc d = case_desc(&test_cases[c], ACTX_F32, NULL);
      const int keep = rule_keeps_nan(rule, d.op, d.alpha, 0);
      const size_t k = sizeof nan32 / sizeof nan32[0], n = k * REPEAT;
      uint32_t x[sizeof nan32 / sizeof nan32[0] * REPEAT], y[sizeof x / sizeof x[0]];
      for (size_t i = 0; i < n; i++) x[i] = nan32[i % k];
      EXPECT(actx_compute(&d, x, y, n, NULL) == ACTX_OK, "f32 compute");
      for (size_t i = 0; i < n; i++) {
        const uint32_t want = keep ? x[i] : x[i] | QUIET32;
        EXPECT(y[i] == want, "%s rule, %s %s f32(%08x) = %08x, want %08x",
               actx_ort_rule_name(rule), actx_isa_name(isa), actx_op_name(d.op), x[i], y[i], want);
      }
      for (int dt = ACTX_F16; dt <= ACTX_BF16; dt++) {
        d.dtype = (actx_dtype)dt;
        const uint16_t *src = dt == ACTX_F16 ? nan16 : nanbf;
        const uint16_t quiet = dt == ACTX_F16 ? QUIET16 : QUIETBF;
        const size_t kh = sizeof nan16 / sizeof nan16[0], nh = kh * REPEAT;
        uint16_t xh[sizeof nan16 / sizeof nan16[0] * REPEAT], yh[sizeof xh / sizeof xh[0]];
        for (size_t i = 0; i < nh; i++) xh[i] = src[i % kh];
        EXPECT(actx_compute(&d, xh, yh, nh, NULL) == ACTX_OK, "half compute");
        /* narrowing makes a NaN quiet, whatever the float32 step kept */
        for (size_t i = 0; i < nh; i++)
          EXPECT(yh[i] == (xh[i] | quiet), "%s rule, %s %s %s(%04x) = %04x, want %04x",
                 actx_ort_rule_name(rule), actx_isa_name(isa), actx_op_name(d.op),
                 actx_dtype_name(d.dtype), xh[i], yh[i], xh[i] | quiet);
      }
    }
  }
}

/* A NaN in the bias, a number in x: the bias's NaN, made quiet; both NaN: x's. */
static void check_nan_bias(actx_ort_rule rule) {
  for (size_t is = 0; is < TEST_ISA_COUNT; is++) {
    const actx_isa isa = test_isas[is];
    if (!test_isa_usable(isa) || actx_set_isa(isa) != ACTX_OK) continue;
    for (int op = 0; op < ACTX_OP_COUNT; op++) {
      if (!actx_op_takes_bias[op]) continue;
      enum { H = 8, ROWS = 3 };
      uint32_t bias[H], x[H * ROWS], y[H * ROWS];
      for (int i = 0; i < H; i++) bias[i] = nan32[i % 8];
      for (int i = 0; i < H * ROWS; i++) x[i] = (i / H == 1) ? 0x7FC77777u : 0x3F800000u; /* 1.0 */
      const actx_op_desc d = {.op = (actx_op)op, .dtype = ACTX_F32, .bias = bias, .bias_len = H};
      EXPECT(actx_compute(&d, x, y, H * ROWS, NULL) == ACTX_OK, "bias compute");
      for (int i = 0; i < H * ROWS; i++) {
        const uint32_t want = (i / H == 1 ? x[i] : bias[i % H]) | QUIET32;
        EXPECT(y[i] == want, "%s rule, %s %s bias NaN [%d] = %08x, want %08x",
               actx_ort_rule_name(rule), actx_isa_name(isa), actx_op_name(d.op), i, y[i], want);
      }
    }
  }
}

static void check_fp_environment(void) {
  static const int modes[] = {FE_TONEAREST, FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO};
  for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
    fesetround(modes[m]);
    float x[100], y[100];
    for (int i = 0; i < 100; i++) x[i] = (float)(i - 50) / 7.0f;
    actx_erf_f32(x, y, 100);
    actx_sigmoid_f32(x, y, 100);
    EXPECT(fegetround() == modes[m], "rounding mode %d became %d", modes[m], fegetround());
  }
  fesetround(FE_TONEAREST);
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--num-threads") == 0) {
    const char *env = getenv("ACTX_NUM_THREADS");
    const size_t want = (size_t)strtoul(argv[2], NULL, 10), got = actx_get_num_threads();
    EXPECT(got == want, "ACTX_NUM_THREADS=%s gives %zu threads, want %zu", env ? env : "(unset)",
           got, want);
    /* and the pool it made (if any) computes */
    static float x[1 << 16], y[1 << 16];
    EXPECT(actx_tanh_f32(x, y, 1 << 16) == ACTX_OK, "compute with %zu threads", got);
  } else if (argc == 1) {
    check_size_overflow();
    for (int r = 0; r < ACTX_ORT_RULE_COUNT; r++) {
      actx_set_ort_rule((actx_ort_rule)r);
      check_nan_payloads((actx_ort_rule)r);
      check_nan_bias((actx_ort_rule)r);
    }
    check_fp_environment();
  } else {
    fprintf(stderr, "usage: %s [--num-threads N]\n", argv[0]);
    return 2;
  }
  return test_finish("test_bad_input_kernels");
}
