/* libactx's rows of docs/bad-input.md that tests/kernels does not already cover:
 *   - a length whose byte size overflows size_t: ACTX_ERROR_INVALID_ARGUMENT, nothing touched;
 *   - NaN inputs, quiet or signalling, any sign and payload: y is x's NaN made quiet, for every
 *     op, dtype and ISA (never a NaN of the kernel's own, never a number);
 *   - a bias holding NaNs where x does not: y is the bias's NaN made quiet;
 *   - the caller's floating-point environment (rounding mode, flags' masks) is left as it was.
 *
 * test_bad_input_kernels --num-threads N: checks that actx_get_num_threads() is N, for the
 * ACTX_NUM_THREADS values CMake sets (invalid ones must give 1, never an error or a crash). */
#include <fenv.h>

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

static const actx_op_desc ops[] = {
    {.op = ACTX_OP_ERF}, {.op = ACTX_OP_GELU}, {.op = ACTX_OP_GELU_TANH},
    {.op = ACTX_OP_QUICK_GELU, .alpha = 1.702f}, {.op = ACTX_OP_QUICK_GELU, .alpha = 1.0f},
    {.op = ACTX_OP_QUICK_GELU, .alpha = -0.5f}, {.op = ACTX_OP_TANH}, {.op = ACTX_OP_SIGMOID},
};
#define N_OPS (sizeof ops / sizeof ops[0])

/* x = the NaNs, repeated past one AVX2 vector and a tail; y must be each one made quiet. */
#define REPEAT 5
static void check_nan_payloads(void) {
  for (int isa = 0; isa < ACTX_ISA_COUNT; isa++) {
    if (actx_set_isa((actx_isa)isa) != ACTX_OK) continue;
    for (size_t o = 0; o < N_OPS; o++) {
      actx_op_desc d = ops[o];
      d.dtype = ACTX_F32;
      const size_t k = sizeof nan32 / sizeof nan32[0], n = k * REPEAT;
      uint32_t x[sizeof nan32 / sizeof nan32[0] * REPEAT], y[sizeof x / sizeof x[0]];
      for (size_t i = 0; i < n; i++) x[i] = nan32[i % k];
      EXPECT(actx_compute(&d, x, y, n, NULL) == ACTX_OK, "f32 compute");
      for (size_t i = 0; i < n; i++)
        EXPECT(y[i] == (x[i] | QUIET32), "%s %s f32(%08x) = %08x, want %08x",
               actx_isa_name((actx_isa)isa), actx_op_name(d.op), x[i], y[i], x[i] | QUIET32);
      for (int dt = ACTX_F16; dt <= ACTX_BF16; dt++) {
        d.dtype = (actx_dtype)dt;
        const uint16_t *src = dt == ACTX_F16 ? nan16 : nanbf;
        const uint16_t quiet = dt == ACTX_F16 ? QUIET16 : QUIETBF;
        const size_t kh = sizeof nan16 / sizeof nan16[0], nh = kh * REPEAT;
        uint16_t xh[sizeof nan16 / sizeof nan16[0] * REPEAT], yh[sizeof xh / sizeof xh[0]];
        for (size_t i = 0; i < nh; i++) xh[i] = src[i % kh];
        EXPECT(actx_compute(&d, xh, yh, nh, NULL) == ACTX_OK, "half compute");
        for (size_t i = 0; i < nh; i++)
          EXPECT(yh[i] == (xh[i] | quiet), "%s %s %s(%04x) = %04x, want %04x",
                 actx_isa_name((actx_isa)isa), actx_op_name(d.op), actx_dtype_name(d.dtype), xh[i],
                 yh[i], xh[i] | quiet);
      }
    }
  }
}

/* A NaN in the bias, a number in x: the bias's NaN, made quiet; both NaN: x's. */
static void check_nan_bias(void) {
  for (int isa = 0; isa < ACTX_ISA_COUNT; isa++) {
    if (actx_set_isa((actx_isa)isa) != ACTX_OK) continue;
    for (int op = ACTX_OP_GELU; op <= ACTX_OP_GELU_TANH; op++) {
      enum { H = 8, ROWS = 3 };
      uint32_t bias[H], x[H * ROWS], y[H * ROWS];
      for (int i = 0; i < H; i++) bias[i] = nan32[i % 8];
      for (int i = 0; i < H * ROWS; i++) x[i] = (i / H == 1) ? 0x7FC77777u : 0x3F800000u; /* 1.0 */
      const actx_op_desc d = {.op = (actx_op)op, .dtype = ACTX_F32, .bias = bias, .bias_len = H};
      EXPECT(actx_compute(&d, x, y, H * ROWS, NULL) == ACTX_OK, "bias compute");
      for (int i = 0; i < H * ROWS; i++) {
        const uint32_t want = (i / H == 1 ? x[i] : bias[i % H]) | QUIET32;
        EXPECT(y[i] == want, "%s %s bias NaN [%d] = %08x, want %08x", actx_isa_name((actx_isa)isa),
               actx_op_name(d.op), i, y[i], want);
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
    check_nan_payloads();
    check_nan_bias();
    check_fp_environment();
  } else {
    fprintf(stderr, "usage: %s [--num-threads N]\n", argv[0]);
    return 2;
  }
  return test_finish("test_bad_input_kernels");
}
