/* ReduceSum / ReduceMean / ReduceMax / ReduceMin in bfloat16 (src/bf16/bf16_reduce.c) against a
 * plain reference that walks every input element: Sum and Mean in double, within the bound of
 * sequential float32 addition (|err| <= (n - 1) · 2^-24 · Σ|x|, Mean plus its division) and the
 * one final rounding; Max and Min exactly (first NaN wins, then the first of equal values). */
#include "bf16_test_run.h"

static const actx_bf16_op ops[4] = {ACTX_BF16_OP_REDUCE_SUM, ACTX_BF16_OP_REDUCE_MEAN,
                                    ACTX_BF16_OP_REDUCE_MAX, ACTX_BF16_OP_REDUCE_MIN};
static const char *op_names[4] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"};
static const double U = 1.0 / 16777216.0; /* 2^-24 */
static const int latest_version[4] = {13, 18, 20, 20};

typedef struct ref_acc {
  double sum, sum_abs;
  int64_t n;
  uint16_t best; /* Max / Min: the value kept so far */
  bool have, nan;
} ref_acc;

/* The reference: every input element, to the output element its kept coordinates name. */
static void reference(int opi, const actx_shape *x, const uint16_t *xv, const bool *reduced,
                      bool keepdims, ref_acc *acc, int64_t n_out) {
  (void)keepdims;
  memset(acc, 0, (size_t)n_out * sizeof *acc);
  const int64_t n = actx_shape_elements(x);
  for (int64_t i = 0; i < n; i++) {
    int64_t rem = i, o = 0, scale = 1;
    for (size_t d = x->rank; d-- > 0;) {
      const int64_t c = rem % x->dims[d];
      rem /= x->dims[d];
      if (!reduced[d]) {
        o += c * scale;
        scale *= x->dims[d];
      }
    }
    ref_acc *a = &acc[o];
    const float v = fb(xv[i]);
    a->sum += v;
    a->sum_abs += fabs(v);
    a->n++;
    if (a->nan) continue;
    if (v != v) {
      a->nan = true;
      a->best = bf(v);
    } else if (!a->have || (opi == 2 ? v > fb(a->best) : v < fb(a->best))) {
      a->best = xv[i];
      a->have = true;
    }
  }
}

static bool result_ok(int opi, const ref_acc *a, uint16_t got) {
  if (a->n == 0) {
    const float want[4] = {0.0f, 0.0f, -INFINITY, INFINITY};
    return got == bf(want[opi]);
  }
  if (opi >= 2) return got == a->best;
  if (a->sum != a->sum) return bf_is_nan(got);
  const double e_sum = (double)(a->n - 1) * U * a->sum_abs;
  if (opi == 0) return bf16_within(got, a->sum, e_sum);
  const double n = (double)a->n;
  return bf16_within(got, a->sum / n, e_sum / n + U * (fabs(a->sum) + e_sum) / n);
}

static int cases;

/* One reduction: op opi at version, axes (as attribute or input, as the version takes them),
 * checked element by element against the reference. */
static void check_reduce(int opi, int version, const actx_shape *xs, const uint16_t *xv,
                         const int64_t *axes, size_t n_axes, bool pass_axes, int keepdims,
                         int noop, const actx_parallel *par) {
  const bool axes_input = opi == 0 || version >= 18;
  const actx_elem elems[2] = {ACTX_ELEM_BF16, ACTX_ELEM_I64};
  actx_bf16_node node = node_make(ops[opi], version, axes_input && pass_axes ? 2 : 1, elems, 1);
  if (keepdims >= 0) {
    node.attrs.has_keepdims = true;
    node.attrs.keepdims = keepdims;
  }
  if (noop >= 0) {
    node.attrs.has_noop_with_empty_axes = true;
    node.attrs.noop_with_empty_axes = noop;
  }
  actx_tensor in[2] = {tensor_bf16(*xs, (uint16_t *)xv)};
  int64_t axes_copy[ACTX_BF16_MAX_RANK];
  if (n_axes > 0) memcpy(axes_copy, axes, n_axes * sizeof axes[0]);
  if (axes_input && pass_axes) {
    in[1] = (actx_tensor){ACTX_ELEM_I64, {1, {(int64_t)n_axes}}, axes_copy};
  } else if (!axes_input && pass_axes) {
    node.attrs.has_axes = true;
    node.attrs.n_axes = n_axes;
    if (n_axes > 0) memcpy(node.attrs.axes, axes, n_axes * sizeof axes[0]);
  }
  actx_tensor out[1];
  const char *why = "";
  const actx_status st = run_node(&node, in, axes_input && pass_axes ? 2 : 1, out, 1, par, &why);
  CHECK(st == ACTX_OK);
  if (st != ACTX_OK) {
    fprintf(stderr, "  %s-%d refused: %s\n", op_names[opi], version, why);
    return;
  }
  cases++;
  bool reduced[ACTX_BF16_MAX_RANK] = {false};
  for (size_t i = 0; i < n_axes; i++)
    reduced[axes[i] < 0 ? axes[i] + (int64_t)xs->rank : axes[i]] = true;
  const bool kd = keepdims != 0;
  if (n_axes == 0 && noop == 1) { /* the input, unchanged */
    CHECK(out[0].shape.rank == xs->rank);
    const int64_t n = actx_shape_elements(xs);
    CHECK(n == 0 || memcmp(out[0].data, xv, (size_t)n * 2) == 0);
    outputs_free(out, 1);
    return;
  }
  if (n_axes == 0)
    for (size_t d = 0; d < xs->rank; d++) reduced[d] = true;
  /* the shape */
  actx_shape want = {0};
  for (size_t d = 0; d < xs->rank; d++)
    if (!reduced[d]) want.dims[want.rank++] = xs->dims[d];
    else if (kd) want.dims[want.rank++] = 1;
  CHECK(out[0].elem == ACTX_ELEM_BF16 && out[0].shape.rank == want.rank &&
        memcmp(out[0].shape.dims, want.dims, want.rank * sizeof want.dims[0]) == 0);
  const int64_t n_out = actx_shape_elements(&want);
  ref_acc *acc = malloc((size_t)(n_out > 0 ? n_out : 1) * sizeof *acc);
  reference(opi, xs, xv, reduced, kd, acc, n_out);
  const uint16_t *y = out[0].data;
  int bad = 0;
  for (int64_t o = 0; o < n_out; o++)
    if (!result_ok(opi, &acc[o], y[o])) {
      if (bad++ < 3)
        fprintf(stderr, "  %s-%d rank %zu out[%lld] = %a (0x%04x), reference sum %a n %lld\n",
                op_names[opi], version, xs->rank, (long long)o, fb(y[o]), y[o], acc[o].sum,
                (long long)acc[o].n);
    }
  CHECK(bad == 0);
  free(acc);
  outputs_free(out, 1);
}

/* Every subset of axes of shapes of rank 1..4, axes in shuffled order and sign, both keepdims,
 * every op and version, values of mixed sign and magnitude. */
static void test_all_axes(void) {
  for (size_t rank = 1; rank <= 4; rank++) {
    for (int rep = 0; rep < 3; rep++) {
      int64_t dims[4];
      for (size_t d = 0; d < rank; d++) dims[d] = 1 + (int64_t)(rng_u32() % (rank <= 2 ? 9 : 5));
      const actx_shape xs = shape_of(rank, dims);
      const int64_t n = actx_shape_elements(&xs);
      uint16_t *xv = malloc((size_t)n * 2);
      for (int64_t i = 0; i < n; i++)
        xv[i] = bf(rng_uniform(-4.0f, 4.0f) * ldexpf(1.0f, (int)(rng_u32() % 9) - 4));
      for (unsigned mask = 0; mask < (1u << rank); mask++) {
        int64_t axes[4];
        size_t n_axes = 0;
        for (size_t d = 0; d < rank; d++)
          if (mask & (1u << d))
            axes[n_axes++] = rng_u32() & 1 ? (int64_t)d : (int64_t)d - (int64_t)rank;
        for (size_t i = n_axes; i > 1; i--) { /* shuffle: order does not matter */
          const size_t j = rng_u32() % i;
          const int64_t t = axes[i - 1];
          axes[i - 1] = axes[j];
          axes[j] = t;
        }
        for (int opi = 0; opi < 4; opi++) {
          const int versions[3] = {13, 18, 20};
          for (int v = 0; v < 3; v++) {
            if (versions[v] == 18 && opi == 0) continue;
            if (versions[v] == 20 && opi < 2) continue;
            for (int kd = -1; kd <= 1; kd++)
              check_reduce(opi, versions[v], &xs, xv, axes, n_axes, mask != 0 || kd == 0,
                           kd, -1, NULL);
          }
        }
      }
      /* empty axes with noop_with_empty_axes: both values, where the version has it */
      check_reduce(0, 13, &xs, xv, NULL, 0, true, 1, 1, NULL);
      check_reduce(1, 18, &xs, xv, NULL, 0, true, 0, 1, NULL);
      check_reduce(2, 18, &xs, xv, NULL, 0, false, 1, 1, NULL); /* no axes input at all */
      check_reduce(3, 20, &xs, xv, NULL, 0, true, 1, 0, NULL);
      free(xv);
    }
  }
}

/* Long reductions (the bound at n in the thousands) and the split over threads: the same bits
 * with the reversed parallel-for as on one thread. */
static void test_long(void) {
  static const int64_t shapes[][3] = {{3, 5000, 1}, {700, 2, 97}, {64, 1024, 1}, {1, 1, 70000}};
  for (size_t si = 0; si < 4; si++) {
    const actx_shape xs = shape_of(3, shapes[si]);
    const int64_t n = actx_shape_elements(&xs);
    uint16_t *xv = malloc((size_t)n * 2);
    fill_uniform(xv, (size_t)n, -1.0f, 3.0f);
    const int64_t axes_sets[3][2] = {{1, 0}, {0, 2}, {-1, -2}};
    for (int a = 0; a < 3; a++)
      for (int opi = 0; opi < 4; opi++) {
        const size_t calls = par_calls;
        check_reduce(opi, latest_version[opi], &xs, xv, axes_sets[a], a == 0 ? 1 : 2, true,
                     1, -1, &test_par);
        if (n >= 65536 && a == 0) CHECK(par_calls > calls); /* it did split */
      }
    free(xv);
  }
  /* the split does not change a bit: one thread against four */
  const int64_t dims[2] = {256, 300};
  const actx_shape xs = shape_of(2, dims);
  uint16_t *xv = malloc(256 * 300 * 2);
  fill_uniform(xv, 256 * 300, -100.0f, 100.0f);
  int64_t axis = 1;
  const actx_elem elems[2] = {ACTX_ELEM_BF16, ACTX_ELEM_I64};
  actx_bf16_node node = node_make(ACTX_BF16_OP_REDUCE_SUM, 13, 2, elems, 1);
  actx_tensor in[2] = {tensor_bf16(xs, xv), {ACTX_ELEM_I64, {1, {1}}, &axis}};
  actx_tensor o1[1], o4[1];
  const char *why;
  CHECK(run_node(&node, in, 2, o1, 1, NULL, &why) == ACTX_OK);
  CHECK(run_node(&node, in, 2, o4, 1, &test_par, &why) == ACTX_OK);
  CHECK(memcmp(o1[0].data, o4[0].data, 256 * 2) == 0);
  outputs_free(o1, 1);
  outputs_free(o4, 1);
  free(xv);
}

static uint16_t reduce_row(actx_bf16_op op, int version, const uint16_t *x, int64_t n) {
  const actx_elem elems[1] = {ACTX_ELEM_BF16};
  actx_bf16_node node = node_make(op, version, 1, elems, 1);
  actx_tensor in[1] = {tensor_bf16((actx_shape){1, {n}}, (uint16_t *)x)};
  actx_tensor out[1];
  const char *why = "";
  if (run_node(&node, in, 1, out, 1, NULL, &why) != ACTX_OK) {
    fprintf(stderr, "  refused: %s\n", why);
    failures++;
    return 0xFFFF;
  }
  CHECK(out[0].shape.rank == 1 && out[0].shape.dims[0] == 1);
  const uint16_t r = ((uint16_t *)out[0].data)[0];
  outputs_free(out, 1);
  return r;
}

/* NaN, infinities, signed zeros, subnormals, overflow of the float32 sum. */
static void test_edges(void) {
  const uint16_t nan_neg = 0xFFC1, snan = 0x7F81; /* a negative quiet NaN, a signalling one */
  const uint16_t pinf = 0x7F80, ninf = 0xFF80, pz = 0x0000, nz = 0x8000, sub = 0x0001;
  const actx_bf16_op MAX = ACTX_BF16_OP_REDUCE_MAX, MIN = ACTX_BF16_OP_REDUCE_MIN,
                     SUM = ACTX_BF16_OP_REDUCE_SUM, MEAN = ACTX_BF16_OP_REDUCE_MEAN;
  {
    const uint16_t x[] = {bf(1), snan, bf(5), nan_neg};
    CHECK(reduce_row(MAX, 18, x, 4) == 0x7FC1); /* the first NaN, made quiet */
    CHECK(reduce_row(MIN, 13, x, 4) == 0x7FC1);
    CHECK(bf_is_nan(reduce_row(SUM, 13, x, 4)) && bf_is_nan(reduce_row(MEAN, 18, x, 4)));
  }
  {
    const uint16_t x[] = {bf(1), bf(5), nan_neg};
    CHECK(reduce_row(MAX, 20, x, 3) == nan_neg); /* NaN last still wins */
  }
  {
    const uint16_t x[] = {ninf, bf(-3), pinf};
    CHECK(reduce_row(MAX, 13, x, 3) == pinf && reduce_row(MIN, 13, x, 3) == ninf);
    CHECK(bf_is_nan(reduce_row(SUM, 13, x, 3))); /* inf - inf */
  }
  {
    const uint16_t x[] = {pinf, bf(-3)};
    CHECK(reduce_row(SUM, 13, x, 2) == pinf && reduce_row(MEAN, 13, x, 2) == pinf);
  }
  {
    const uint16_t a[] = {nz, pz}, b[] = {pz, nz}, c[] = {nz, nz};
    CHECK(reduce_row(MAX, 13, a, 2) == nz && reduce_row(MAX, 13, b, 2) == pz); /* first kept */
    CHECK(reduce_row(MIN, 18, a, 2) == nz && reduce_row(MIN, 18, b, 2) == pz);
    CHECK(reduce_row(SUM, 13, c, 2) == pz); /* sums start from +0 */
    CHECK(reduce_row(SUM, 13, a, 2) == pz);
  }
  {
    const uint16_t x[] = {sub, sub, sub, 0x807F}; /* subnormals add exactly in float32 */
    CHECK(reduce_row(SUM, 13, x, 4) == 0x8000 + 0x7C); /* 3 - 127 = -124 units */
    CHECK(reduce_row(MIN, 13, x, 4) == 0x807F && reduce_row(MAX, 13, x, 4) == sub);
  }
  {
    const uint16_t big = bf(3.0e38f), x[] = {big, big, bf(-3.0e38f)};
    CHECK(reduce_row(SUM, 13, x, 3) == pinf); /* float32 overflows on the way, as ORT's */
    CHECK(reduce_row(MEAN, 13, x, 3) == pinf);
  }
  {
    const uint16_t x[] = {bf(2.5f)}; /* one element */
    CHECK(reduce_row(MEAN, 13, x, 1) == bf(2.5f) && reduce_row(SUM, 13, x, 1) == bf(2.5f));
    const uint16_t y[] = {bf(1), bf(0x1p-8f), bf(0x1p-8f)};
    CHECK(reduce_row(SUM, 13, y, 3) == bf(1 + 0x1p-7f)); /* one rounding, not one per add */
  }
  /* a rank-0 input: no axes reduces nothing away, the value comes back */
  {
    uint16_t v = bf(-7.5f);
    const actx_elem elems[1] = {ACTX_ELEM_BF16};
    for (int opi = 0; opi < 4; opi++) {
      actx_bf16_node node = node_make(ops[opi], latest_version[opi], 1, elems, 1);
      actx_tensor in[1] = {tensor_bf16((actx_shape){0}, &v)}, out[1];
      const char *why;
      CHECK(run_node(&node, in, 1, out, 1, NULL, &why) == ACTX_OK);
      CHECK(out[0].shape.rank == 0 && *(uint16_t *)out[0].data == v);
      outputs_free(out, 1);
    }
  }
}

/* Empty tensors: a reduced axis of length 0 gives the empty set's value; a kept one an empty
 * output. */
static void test_empty(void) {
  const int64_t dims[3] = {2, 0, 3};
  const actx_shape xs = shape_of(3, dims);
  const int64_t ax1[1] = {1}, ax0[1] = {0}, ax_all[3] = {0, 1, 2};
  for (int opi = 0; opi < 4; opi++) {
    const int v = opi >= 2 ? 20 : 13;
    check_reduce(opi, v, &xs, NULL, ax1, 1, true, 1, -1, NULL);      /* [2,1,3] of the fill */
    check_reduce(opi, v, &xs, NULL, ax1, 1, true, 0, -1, &test_par); /* [2,3] */
    check_reduce(opi, v, &xs, NULL, ax0, 1, true, 1, -1, NULL);      /* [1,0,3]: nothing */
    check_reduce(opi, v, &xs, NULL, ax_all, 3, true, 0, -1, NULL);   /* a scalar fill */
    check_reduce(opi, v, &xs, NULL, NULL, 0, false, 1, -1, NULL);    /* default: all axes */
  }
}

static void test_bad(void) {
  const int64_t dims[3] = {2, 3, 4};
  uint16_t xv[24] = {0};
  const actx_elem e1[2] = {ACTX_ELEM_BF16, ACTX_ELEM_I64};
  const actx_elem ef[2] = {ACTX_ELEM_F32, ACTX_ELEM_I64};
  const actx_elem eaf[2] = {ACTX_ELEM_BF16, ACTX_ELEM_F32};
  int64_t axes[3] = {3};
  actx_tensor in[2] = {tensor_bf16(shape_of(3, dims), xv), {ACTX_ELEM_I64, {1, {1}}, axes}};

  actx_bf16_node n = node_make(ACTX_BF16_OP_REDUCE_SUM, 13, 2, e1, 1);
  CHECK_FAILS(&n, in, 2, 1, "out of range");
  axes[0] = -4;
  CHECK_FAILS(&n, in, 2, 1, "out of range");
  axes[0] = 1;
  axes[1] = -2;
  in[1].shape.dims[0] = 2;
  CHECK_FAILS(&n, in, 2, 1, "repeated");
  in[1].shape.dims[0] = 4;
  CHECK_FAILS(&n, in, 2, 1, "more reduction axes");
  in[1].shape = (actx_shape){2, {1, 1}};
  CHECK_FAILS(&n, in, 2, 1, "1-D");
  in[1].shape = (actx_shape){1, {1}};
  in[1].elem = ACTX_ELEM_F32;
  CHECK_FAILS(&n, in, 2, 1, "int64");
  in[1].elem = ACTX_ELEM_I64;
  in[1].data = NULL;
  CHECK_FAILS(&n, in, 2, 1, "no data");
  in[1].data = axes;
  in[0].elem = ACTX_ELEM_F32;
  CHECK_FAILS(&n, in, 2, 1, "bfloat16");
  in[0].elem = ACTX_ELEM_BF16;

  n = node_make(ACTX_BF16_OP_REDUCE_SUM, 13, 2, ef, 1);
  CHECK_FAILS(&n, in, 2, 1, "bfloat16");
  n = node_make(ACTX_BF16_OP_REDUCE_SUM, 13, 2, eaf, 1);
  CHECK_FAILS(&n, in, 2, 1, "int64");
  n = node_make(ACTX_BF16_OP_REDUCE_MEAN, 13, 2, e1, 1); /* axes input before 18 */
  CHECK_FAILS(&n, in, 2, 1, "attribute in this version");
  n = node_make(ACTX_BF16_OP_REDUCE_MAX, 18, 1, e1, 1);
  n.attrs.has_axes = true;
  n.attrs.n_axes = 1;
  CHECK_FAILS(&n, in, 1, 1, "input in this version");
  n = node_make(ACTX_BF16_OP_REDUCE_MIN, 13, 1, e1, 1);
  n.attrs.has_noop_with_empty_axes = true;
  CHECK_FAILS(&n, in, 1, 1, "noop_with_empty_axes");
  n = node_make(ACTX_BF16_OP_REDUCE_MIN, 20, 1, e1, 1);
  n.attrs.has_noop_with_empty_axes = true;
  n.attrs.noop_with_empty_axes = 2;
  CHECK_FAILS(&n, in, 1, 1, "noop_with_empty_axes must be 0 or 1");
  n = node_make(ACTX_BF16_OP_REDUCE_MEAN, 18, 1, e1, 1);
  n.attrs.has_keepdims = true;
  n.attrs.keepdims = -1;
  CHECK_FAILS(&n, in, 1, 1, "keepdims");
  n = node_make(ACTX_BF16_OP_REDUCE_MEAN, 13, 1, e1, 1);
  n.attrs.has_axes = true;
  n.attrs.n_axes = 1;
  n.attrs.axes[0] = 5;
  CHECK_FAILS(&n, in, 1, 1, "out of range");
  n = node_make(ACTX_BF16_OP_REDUCE_MEAN, 17, 1, e1, 1);
  CHECK_FAILS(&n, in, 1, 1, "version");
  n = node_make(ACTX_BF16_OP_REDUCE_SUM, 13, 1, e1, 2);
  CHECK_FAILS(&n, in, 1, 2, "outputs");
  /* run with an output that is not the shape shapes() gave */
  n = node_make(ACTX_BF16_OP_REDUCE_MAX, 13, 1, e1, 1);
  actx_bf16_kernel *k = NULL;
  const char *why = "";
  CHECK(actx_bf16_kernel_create(&n, &k, &why) == ACTX_OK);
  uint16_t y[24];
  actx_tensor out[1] = {tensor_bf16(shape_of(3, dims), y)};
  CHECK(actx_bf16_kernel_run(k, in, 1, out, 1, NULL, &why) == ACTX_ERROR_INVALID_ARGUMENT &&
        strstr(why, "shape") != NULL);
  actx_bf16_kernel_destroy(k);
}

int main(void) {
  test_all_axes();
  test_long();
  test_edges();
  test_empty();
  test_bad();
  return test_exit("test_bf16_reduce", cases,
                   "reductions checked against the reference, edges and refusals");
}
