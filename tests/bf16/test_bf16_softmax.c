/* Softmax / LogSoftmax in bfloat16 (src/bf16/bf16_softmax.c) against a double reference, row by
 * row, within the bound of the float32 computation and its one final rounding. With u = 2^-24,
 * d_i = x_i - max, D = the row's largest |d| (capped at 104, past which expf is 0) and L the
 * row's length:
 *   Softmax     relative (|d_i| + D + L + 6) u, plus 2^-147 absolute (subnormal results);
 *   LogSoftmax  absolute (|d_i| + D + L + 6 + 2 |log s| + |y_i|) u.
 * Rows of NaN / ±inf / all-equal / length 1 are checked exactly; the split over threads and
 * computing in place give the same bits. The float32 exp the kernel uses (bf16_exp.h) is swept
 * on its own within 1 ulp: through bfloat16 outputs an error of many float32 ulps shows only
 * now and then. */
#include "bf16_exp.h"
#include "bf16_test_run.h"

static const double U = 1.0 / 16777216.0;
static int rows_checked;

static bool row_ok(bool is_log, const uint16_t *x, const uint16_t *y, int64_t len,
                   int64_t stride) {
  double m = -INFINITY;
  for (int64_t i = 0; i < len; i++) m = fmax(m, fb(x[i * stride]));
  double s = 0, dmax = 0;
  for (int64_t i = 0; i < len; i++) {
    const double d = fb(x[i * stride]) - m;
    s += exp(d);
    dmax = fmax(dmax, fmin(-d, 104));
  }
  bool ok = true;
  for (int64_t i = 0; i < len; i++) {
    const double d = fb(x[i * stride]) - m, ad = fmin(-d, 104);
    const uint16_t g = y[i * stride];
    bool e_ok;
    if (d == -INFINITY) { /* -inf beside finite values: exactly 0 / -inf */
      e_ok = g == (is_log ? 0xFF80 : 0);
    } else if (is_log) {
      const double r = d - log(s);
      e_ok = bf16_within(g, r, (ad + dmax + (double)len + 6 + 2 * fabs(log(s)) + fabs(r)) * U);
    } else {
      const double r = exp(d) / s;
      e_ok = bf16_within(g, r, r * (ad + dmax + (double)len + 6) * U + 0x1p-147);
    }
    if (!e_ok) {
      fprintf(stderr, "  %s row of %lld, [%lld]: x %a got %a\n",
              is_log ? "LogSoftmax" : "Softmax", (long long)len, (long long)i,
              fb(x[i * stride]), fb(g));
      ok = false;
    }
  }
  rows_checked++;
  return ok;
}

static actx_status softmax(bool is_log, int64_t axis, bool set_axis, const actx_shape *xs,
                           const uint16_t *x, uint16_t *y, const actx_parallel *par,
                           const char **why) {
  const actx_elem e[1] = {ACTX_ELEM_BF16};
  actx_bf16_node node =
      node_make(is_log ? ACTX_BF16_OP_LOG_SOFTMAX : ACTX_BF16_OP_SOFTMAX, 13, 1, e, 1);
  node.attrs.has_axis = set_axis;
  node.attrs.axis = axis;
  actx_bf16_kernel *k = NULL;
  actx_status st = actx_bf16_kernel_create(&node, &k, why);
  if (st != ACTX_OK) return st;
  actx_tensor in[1] = {tensor_bf16(*xs, (uint16_t *)x)}, out[1];
  st = actx_bf16_kernel_shapes(k, in, 1, out, 1, why);
  if (st == ACTX_OK) {
    CHECK(out[0].elem == ACTX_ELEM_BF16 && out[0].shape.rank == xs->rank);
    out[0].data = y;
    st = actx_bf16_kernel_run(k, in, 1, out, 1, par, why);
  }
  actx_bf16_kernel_destroy(k);
  return st;
}

/* Every axis of shapes of rank 1..4, both signs and the default, three value ranges. */
static void test_shapes(void) {
  static const float ranges[3] = {2.0f, 40.0f, 3.0e38f};
  for (size_t rank = 1; rank <= 4; rank++)
    for (int rep = 0; rep < 4; rep++) {
      int64_t dims[4];
      for (size_t d = 0; d < rank; d++) dims[d] = 1 + (int64_t)(rng_u32() % (rank <= 2 ? 40 : 6));
      const actx_shape xs = shape_of(rank, dims);
      const int64_t n = actx_shape_elements(&xs);
      uint16_t *x = malloc((size_t)n * 2), *y = malloc((size_t)n * 2);
      uint16_t *y2 = malloc((size_t)n * 2);
      const float range = ranges[rep % 3];
      fill_uniform(x, (size_t)n, -range, range);
      for (int is_log = 0; is_log < 2; is_log++)
        for (int64_t ai = -(int64_t)rank - 1; ai < (int64_t)rank; ai++) {
          const bool dflt = ai == -(int64_t)rank - 1; /* unset: -1 */
          const int64_t axis = dflt ? -1 : ai, a = axis < 0 ? axis + (int64_t)rank : axis;
          const char *why = "";
          CHECK(softmax(is_log, axis, !dflt, &xs, x, y, NULL, &why) == ACTX_OK);
          int64_t outer = 1, inner = 1;
          for (int64_t d = 0; d < (int64_t)rank; d++)
            if (d < a) outer *= dims[d];
            else if (d > a) inner *= dims[d];
          bool ok = true;
          for (int64_t o = 0; o < outer; o++)
            for (int64_t i = 0; i < inner; i++) {
              const int64_t base = o * dims[a] * inner + i;
              ok &= row_ok(is_log, x + base, y + base, dims[a], inner);
            }
          CHECK(ok);
          /* in place, and split over threads: the same bits */
          memcpy(y2, x, (size_t)n * 2);
          CHECK(softmax(is_log, axis, !dflt, &xs, y2, y2, &test_par, &why) == ACTX_OK);
          CHECK(memcmp(y, y2, (size_t)n * 2) == 0);
        }
      free(x);
      free(y);
      free(y2);
    }
  /* long rows and many rows: the split is used and changes nothing */
  const int64_t dims[2] = {64, 3000};
  const actx_shape xs = shape_of(2, dims);
  uint16_t *x = malloc(64 * 3000 * 2), *y = malloc(64 * 3000 * 2), *y2 = malloc(64 * 3000 * 2);
  fill_uniform(x, 64 * 3000, -10.0f, 10.0f);
  for (int is_log = 0; is_log < 2; is_log++) {
    const char *why;
    const size_t calls = par_calls;
    CHECK(softmax(is_log, 1, true, &xs, x, y, &test_par, &why) == ACTX_OK);
    CHECK(par_calls > calls);
    CHECK(softmax(is_log, 1, true, &xs, x, y2, NULL, &why) == ACTX_OK);
    CHECK(memcmp(y, y2, 64 * 3000 * 2) == 0);
    bool ok = true;
    for (int r = 0; r < 64; r++) ok &= row_ok(is_log, x + r * 3000, y + r * 3000, 3000, 1);
    CHECK(ok);
  }
  free(x);
  free(y);
  free(y2);
}

/* Along a middle axis with more neighbouring rows than one block takes (bf16_softmax.c's
 * SOFTMAX_COLUMNS, fewer for long rows: here two blocks, the second partial), some holding a
 * NaN, +inf, only -inf or one -inf: each row as documented, and split / in place the same. */
static void test_columns(void) {
  const int64_t dims[3] = {3, 20, 1100}, len = 20, inner = 1100, n = 3 * 20 * 1100;
  const actx_shape xs = shape_of(3, dims);
  uint16_t *x = malloc(n * 2), *y = malloc(n * 2), *y2 = malloc(n * 2);
  fill_uniform(x, n, -10.0f, 10.0f);
  const uint16_t qnan = 0x7FC1, pinf = 0x7F80, ninf = 0xFF80;
  x[(1 * len + 3) * inner + 5] = qnan;   /* row (1, 5): NaN */
  x[(0 * len + 7) * inner + 900] = pinf; /* row (0, 900): +inf */
  for (int64_t k = 0; k < len; k++) x[(2 * len + k) * inner + 1000] = ninf; /* (2, 1000) */
  x[(0 * len + 2) * inner + 10] = ninf; /* row (0, 10): one -inf */
  for (int is_log = 0; is_log < 2; is_log++) {
    const char *why = "";
    CHECK(softmax(is_log, 1, true, &xs, x, y, NULL, &why) == ACTX_OK);
    bool ok = true;
    for (int64_t o = 0; o < 3; o++)
      for (int64_t c = 0; c < inner; c++) {
        const int64_t base = o * len * inner + c;
        if ((o == 1 && c == 5) || (o == 0 && c == 900) || (o == 2 && c == 1000)) {
          for (int64_t k = 0; k < len; k++) {
            const uint16_t g = y[base + k * inner];
            ok &= bf_is_nan(g) && (g & 0x0040) && (o != 1 || g == qnan);
          }
          rows_checked++;
        } else {
          ok &= row_ok(is_log, x + base, y + base, len, inner);
        }
      }
    CHECK(ok);
    memcpy(y2, x, n * 2);
    const size_t calls = par_calls;
    CHECK(softmax(is_log, 1, true, &xs, y2, y2, &test_par, &why) == ACTX_OK);
    CHECK(par_calls > calls && memcmp(y, y2, n * 2) == 0);
  }
  free(x);
  free(y);
  free(y2);
}

static void run_row(bool is_log, const uint16_t *x, uint16_t *y, int64_t len) {
  const actx_shape xs = {1, {len}};
  const char *why = "";
  CHECK(softmax(is_log, 0, true, &xs, x, y, NULL, &why) == ACTX_OK);
}

static void test_edges(void) {
  const uint16_t pinf = 0x7F80, ninf = 0xFF80, qnan = 0x7FC0, snan = 0xFF81;
  uint16_t y[8];
  for (int is_log = 0; is_log < 2; is_log++) {
    /* length 1: exactly 1 / 0, whatever the value (even huge); -0 too */
    const uint16_t ones[4] = {bf(3.0e38f), bf(-7.0f), 0x8000, 0x0001};
    for (int i = 0; i < 4; i++) {
      run_row(is_log, &ones[i], y, 1);
      CHECK(y[0] == bf(is_log ? 0.0f : 1.0f));
    }
    /* all equal: 1/L, -log L, rounded once */
    const uint16_t eq[6] = {bf(5), bf(5), bf(5), bf(5), bf(5), bf(5)};
    run_row(is_log, eq, y, 6);
    for (int i = 0; i < 6; i++) CHECK(y[i] == (is_log ? bf(-logf(6.0f)) : bf(1.0f / 6.0f)));
    /* NaN anywhere, +inf, all -inf: NaN throughout */
    const uint16_t rows[4][3] = {{bf(1), qnan, bf(2)}, {snan, bf(1), bf(2)},
                                 {bf(1), pinf, bf(2)}, {ninf, ninf, ninf}};
    for (int r = 0; r < 4; r++) {
      run_row(is_log, rows[r], y, 3);
      for (int i = 0; i < 3; i++) CHECK(bf_is_nan(y[i]) && (y[i] & 0x0040));
    }
    /* long rows, a NaN (then a second one) or +inf at every position, in every lane of the
     * maximum's pass and in its tail: the first NaN, made quiet, throughout; else NaN */
    static const int64_t lens[] = {31, 32, 33, 64, 77, 128, 130};
    uint16_t lx[130], ly[130];
    for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
      for (int64_t at = 0; at < lens[l]; at++)
        for (int kind = 0; kind < 2; kind++) {
          for (int64_t i = 0; i < lens[l]; i++) lx[i] = bf((float)(i % 7) - 3.0f);
          lx[at] = kind == 0 ? (uint16_t)0xFF81 : pinf; /* a signalling NaN, negative */
          if (kind == 0 && at + 1 < lens[l]) lx[lens[l] - 1] = 0x7FC5; /* a later one */
          run_row(is_log, lx, ly, lens[l]);
          for (int64_t i = 0; i < lens[l]; i++)
            CHECK(kind == 0 ? ly[i] == 0xFFC1 : bf_is_nan(ly[i]) && (ly[i] & 0x0040));
        }
    /* -inf beside finite values: 0 / -inf there, the rest as if it were absent */
    const uint16_t mixed[3] = {ninf, bf(2), bf(2)};
    run_row(is_log, mixed, y, 3);
    CHECK(y[0] == (is_log ? ninf : 0));
    CHECK(y[1] == bf(is_log ? -logf(2.0f) : 0.5f) && y[2] == y[1]);
    /* huge values: the maximum is subtracted first, so nothing overflows */
    const uint16_t huge[2] = {bf(3.0e38f), bf(3.0e38f)};
    run_row(is_log, huge, y, 2);
    CHECK(y[0] == bf(is_log ? -logf(2.0f) : 0.5f) && y[1] == y[0]);
    /* subnormal inputs are exact: beside 0 they are a hair apart */
    const uint16_t sub[2] = {0x0001, 0x8000};
    run_row(is_log, sub, y, 2);
    CHECK(y[0] == bf(is_log ? -logf(2.0f) : 0.5f) && y[1] == y[0]);
    /* one dominant value: the others underflow to 0 in Softmax */
    const uint16_t dom[2] = {bf(200.0f), bf(0.0f)};
    run_row(is_log, dom, y, 2);
    CHECK(y[0] == bf(is_log ? 0.0f : 1.0f) && y[1] == (is_log ? bf(-200.0f) : 0));
  }
  /* empty tensors: nothing computed, nothing refused */
  const int64_t e1[3] = {2, 0, 3}, e2[2] = {0, 4};
  const char *why;
  for (int is_log = 0; is_log < 2; is_log++) {
    actx_shape s1 = shape_of(3, e1), s2 = shape_of(2, e2);
    CHECK(softmax(is_log, 1, true, &s1, NULL, NULL, NULL, &why) == ACTX_OK);
    CHECK(softmax(is_log, -1, true, &s1, NULL, NULL, NULL, &why) == ACTX_OK);
    CHECK(softmax(is_log, 1, true, &s2, NULL, NULL, &test_par, &why) == ACTX_OK);
  }
}

static void test_bad(void) {
  const int64_t dims[3] = {2, 3, 4};
  uint16_t x[24] = {0};
  const actx_elem e[1] = {ACTX_ELEM_BF16}, ef[1] = {ACTX_ELEM_F32};
  actx_tensor in[1] = {tensor_bf16(shape_of(3, dims), x)};
  for (int is_log = 0; is_log < 2; is_log++) {
    const actx_bf16_op op = is_log ? ACTX_BF16_OP_LOG_SOFTMAX : ACTX_BF16_OP_SOFTMAX;
    actx_bf16_node n = node_make(op, 13, 1, e, 1);
    n.attrs.has_axis = true;
    n.attrs.axis = 3;
    CHECK_FAILS(&n, in, 1, 1, "axis out of range");
    n.attrs.axis = -4;
    CHECK_FAILS(&n, in, 1, 1, "axis out of range");
    n.attrs.axis = 0;
    actx_tensor scalar[1] = {tensor_bf16((actx_shape){0}, x)};
    CHECK_FAILS(&n, scalar, 1, 1, "axis out of range");
    n.attrs.has_axis = false;
    CHECK_FAILS(&n, scalar, 1, 1, "axis out of range");
    actx_tensor f32[1] = {in[0]};
    f32[0].elem = ACTX_ELEM_F32;
    CHECK_FAILS(&n, f32, 1, 1, "bfloat16");
    n = node_make(op, 13, 1, ef, 1);
    CHECK_FAILS(&n, in, 1, 1, "bfloat16");
    n = node_make(op, 11, 1, e, 1); /* axis meant "flatten from here" before 13 */
    CHECK_FAILS(&n, in, 1, 1, "version");
    n = node_make(op, 13, 1, e, 1);
    actx_bf16_kernel *k = NULL;
    const char *why = "";
    CHECK(actx_bf16_kernel_create(&n, &k, &why) == ACTX_OK);
    uint16_t y[24];
    actx_tensor out[1] = {tensor_bf16(shape_of(2, dims), y)};
    CHECK(actx_bf16_kernel_run(k, in, 1, out, 1, NULL, &why) == ACTX_ERROR_INVALID_ARGUMENT &&
          strstr(why, "shape") != NULL);
    out[0] = tensor_bf16(shape_of(3, dims), NULL);
    CHECK(actx_bf16_kernel_run(k, in, 1, out, 1, NULL, &why) == ACTX_ERROR_INVALID_ARGUMENT &&
          strstr(why, "no data") != NULL);
    actx_bf16_kernel_destroy(k);
  }
}

/* actx_bf16_exp against exp in double: within 1 ulp for normal results and 2^-149 for
 * subnormal ones, over every 97th float32 of [-104, 88.72] and its edges. */
static void test_exp(void) {
  long checked = 0;
  for (int neg = 0; neg < 2; neg++) {
    const uint32_t end = neg ? 0xC2D00000u : 0x42B17200u; /* -104, 88.72 */
    for (uint32_t b = neg ? 0x80000000u : 0; b <= end; b += 97) {
      const float x = actx_f32_from_bits(b);
      const double r = exp((double)x), g = actx_bf16_exp(x);
      int e2;
      frexp(r, &e2);
      const double ulp = r < 0x1p-126 ? 0x1p-149 : ldexp(1.0, e2 - 24);
      if (!(fabs(g - r) <= ulp)) {
        if (failures < 40) fprintf(stderr, "  exp(%a) = %a, not %a\n", x, g, r);
        failures++;
      }
      checked++;
    }
  }
  CHECK(checked > 20000000);
  CHECK(actx_bf16_exp(0.0f) == 1.0f && actx_bf16_exp(-0.0f) == 1.0f);
  CHECK(actx_bf16_exp(-INFINITY) == 0.0f && actx_bf16_exp(-104.0f) == 0.0f);
  CHECK(actx_bf16_exp(-1.0e30f) == 0.0f && actx_bf16_exp(-103.97f) == 0x1p-149f);
  CHECK(actx_bf16_exp(88.73f) == INFINITY && actx_bf16_exp(1.0e30f) == INFINITY);
  CHECK(actx_bf16_exp(INFINITY) == INFINITY);
}

int main(void) {
  test_exp();
  test_shapes();
  test_columns();
  test_edges();
  test_bad();
  return test_exit("test_bf16_softmax", rows_checked,
                   "rows checked against the bound, edges and refusals");
}
