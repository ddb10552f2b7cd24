/* LayerNormalization / SimplifiedLayerNormalization / SkipLayerNormalization /
 * SkipSimplifiedLayerNormalization / InstanceNormalization in bfloat16 (src/bf16/bf16_norm.c)
 * against a double reference, row by row. The bound is the first-order error of the float32
 * computation the kernel states (two-pass variance; each sum's error taken as a sequential sum's,
 * (N - 1) u Σ|terms|, which bounds the kernel's lanes too), carried through each step with
 * u = 2^-24 (see row_check), times 1.25 for the second-order terms, then the one final rounding
 * of each bfloat16 output; the float32 Mean / InvStdDev outputs within the same bound. */
#include "bf16_test_run.h"

static const double U = 1.0 / 16777216.0;
static int rows_checked;

typedef struct norm_case {
  actx_bf16_op op;
  bool skip, rms;
  float epsilon;
} norm_case;

/* One row of n: x, skip k (or NULL), bias b (or NULL), gamma g, beta (or NULL); the kernel's
 * y, input_skip_bias_sum s (or NULL), mean and inv (or NULL). */
static bool row_check(const norm_case *c, int64_t n, const uint16_t *x, const uint16_t *k,
                      const uint16_t *b, const uint16_t *g, const uint16_t *beta,
                      const uint16_t *y, const uint16_t *s, const float *mean, const float *inv) {
  double *v = malloc((size_t)n * sizeof *v), *ev = malloc((size_t)n * sizeof *ev);
  double sum = 0, sum_abs = 0, e_vsum = 0;
  for (int64_t i = 0; i < n; i++) {
    const double xi = fb(x[i]), ki = k ? fb(k[i]) : 0, bi = b ? fb(b[i]) : 0;
    v[i] = xi + ki + bi;
    ev[i] = c->skip ? 2 * U * (fabs(xi) + fabs(ki) + fabs(bi)) : 0;
    sum += v[i];
    sum_abs += fabs(v[i]);
    e_vsum += ev[i];
  }
  const double N = (double)n, mu = sum / N;
  const double e_mu = ((N - 1) * U * sum_abs + e_vsum) / N + U * fabs(mu);
  /* the second pass: d = v - μ (LayerNorm) or v (RMS) */
  double acc = 0, e_acc = 0, sq = 0;
  for (int64_t i = 0; i < n; i++) {
    const double d = c->rms ? v[i] : v[i] - mu;
    const double ed = c->rms ? ev[i] : ev[i] + e_mu + U * fabs(d);
    acc += d * d;
    e_acc += 2 * fabs(d) * ed + ed * ed + U * d * d;
    sq += d * d;
  }
  e_acc += (N - 1) * U * sq;
  const double var = acc / N, q = var + c->epsilon;
  const double e_q = e_acc / N + U * var + U * q;
  const double r = 1 / sqrt(q), rel_r = 0.5 * e_q / q + 2 * U;
  bool ok = true;
  for (int64_t i = 0; i < n; i++) {
    const double d = c->rms ? v[i] : v[i] - mu;
    const double ed = c->rms ? ev[i] : ev[i] + e_mu + U * fabs(d);
    const double gi = fb(g[i]), bt = beta ? fb(beta[i]) : 0;
    const double t = d * r * gi, want = t + bt;
    const double e = 1.25 * (fabs(gi) * (r * ed + fabs(d) * r * rel_r) + 2 * U * fabs(t) +
                             U * fabs(want)) + 0x1p-140;
    if (!bf16_within(y[i], want, e)) {
      if (ok)
        fprintf(stderr, "  op %d row of %lld [%lld]: got %a want %a +- %g\n", (int)c->op,
                (long long)n, (long long)i, fb(y[i]), want, e);
      ok = false;
    }
    if (s != NULL && !bf16_within(s[i], v[i], ev[i])) {
      fprintf(stderr, "  input_skip_bias_sum [%lld]: got %a want %a\n", (long long)i, fb(s[i]),
              v[i]);
      ok = false;
    }
  }
  if (mean != NULL && !(fabs(*mean - mu) <= 1.25 * e_mu + 0x1p-140)) {
    fprintf(stderr, "  mean: got %a want %a\n", *mean, mu);
    ok = false;
  }
  if (inv != NULL && !(fabs(*inv - r) <= 1.25 * r * rel_r)) {
    fprintf(stderr, "  inv_std_dev: got %a want %a\n", *inv, r);
    ok = false;
  }
  free(v);
  free(ev);
  rows_checked++;
  return ok;
}

typedef struct norm_io {
  actx_tensor in[5];
  size_t n_in;
  actx_tensor out[4];
  size_t n_out;
} norm_io;

static const norm_case cases[4] = {
    {ACTX_BF16_OP_LAYER_NORM, false, false, 1e-5f},
    {ACTX_BF16_OP_SIMPLIFIED_LAYER_NORM, false, true, 1e-5f},
    {ACTX_BF16_OP_SKIP_LAYER_NORM, true, false, 1e-12f},
    {ACTX_BF16_OP_SKIP_SIMPLIFIED_LAYER_NORM, true, true, 1e-12f},
};

/* LayerNormalization / SimplifiedLayerNormalization over every axis of shapes of rank 1..4;
 * Scale (and B) with and without leading 1s; with and without each optional output. */
static void test_layer_norm(void) {
  for (int ci = 0; ci < 2; ci++) {
    const norm_case *c = &cases[ci];
    for (size_t rank = 1; rank <= 4; rank++)
      for (int rep = 0; rep < 3; rep++) {
        int64_t dims[4];
        for (size_t d = 0; d < rank; d++)
          dims[d] = 1 + (int64_t)(rng_u32() % (rank <= 2 ? 50 : 7));
        const actx_shape xs = shape_of(rank, dims);
        const int64_t total = actx_shape_elements(&xs);
        uint16_t *x = malloc((size_t)total * 2), *g = malloc((size_t)total * 2),
                 *bt = malloc((size_t)total * 2);
        const float off = rep == 2 ? 300.0f : 0.0f; /* rows far from 0: no cancellation loss */
        fill_uniform(x, (size_t)total, off - 3.0f, off + 3.0f);
        fill_uniform(g, (size_t)total, -2.0f, 2.0f);
        fill_uniform(bt, (size_t)total, -1.0f, 1.0f);
        for (int64_t ai = -(int64_t)rank - 1; ai < (int64_t)rank; ai++) {
          const bool dflt = ai == -(int64_t)rank - 1;
          const int64_t axis = dflt ? -1 : ai, a = axis < 0 ? axis + (int64_t)rank : axis;
          int64_t rows = 1, n = 1;
          for (int64_t d = 0; d < (int64_t)rank; d++)
            if (d < a) rows *= dims[d];
            else n *= dims[d];
          /* Scale: the row's dims, with a leading 1 on odd axes */
          actx_shape gs = {0};
          if (a % 2 == 1) gs.dims[gs.rank++] = 1;
          for (int64_t d = a; d < (int64_t)rank; d++) gs.dims[gs.rank++] = dims[d];
          const bool with_b = !c->rms && (ai & 1);
          const size_t n_out = c->rms ? 2 : 3;
          const actx_elem elems[3] = {ACTX_ELEM_BF16, ACTX_ELEM_BF16,
                                      with_b ? ACTX_ELEM_BF16 : ACTX_ELEM_COUNT};
          actx_bf16_node node = node_make(c->op, c->rms ? 1 : 17, with_b ? 3 : 2, elems, n_out);
          node.attrs.has_axis = !dflt;
          node.attrs.axis = axis;
          if (rep == 1) { /* epsilon and stash_type set */
            node.attrs.has_epsilon = node.attrs.has_stash_type = true;
            node.attrs.epsilon = 0.25f;
            node.attrs.stash_type = 1;
          }
          if (!c->rms && (ai & 2)) node.output_present[1] = false; /* Mean left out */
          norm_case cc = *c;
          if (rep == 1) cc.epsilon = 0.25f;
          actx_tensor in[3] = {tensor_bf16(xs, x), tensor_bf16(gs, g), tensor_bf16(gs, bt)};
          actx_tensor out[3];
          const char *why = "";
          const actx_status st = run_node(&node, in, with_b ? 3 : 2, out, n_out, &test_par, &why);
          CHECK(st == ACTX_OK);
          if (st != ACTX_OK) {
            fprintf(stderr, "  refused: %s\n", why);
            continue;
          }
          const size_t mean_i = c->rms ? 4 : 1, inv_i = c->rms ? 1 : 2;
          CHECK(out[0].elem == ACTX_ELEM_BF16 && out[0].shape.rank == rank);
          CHECK(out[inv_i].elem == ACTX_ELEM_F32 && out[inv_i].shape.rank == rank);
          for (size_t d = 0; d < rank; d++)
            CHECK(out[inv_i].shape.dims[d] == ((int64_t)d < a ? dims[d] : 1));
          if (mean_i < n_out) CHECK(node.output_present[1] == (out[1].elem == ACTX_ELEM_F32));
          bool ok = true;
          for (int64_t r = 0; r < rows; r++) {
            const float *mean = mean_i < n_out && out[mean_i].data ? out[mean_i].data : NULL;
            ok &= row_check(&cc, n, x + r * n, NULL, NULL, g, with_b ? bt : NULL,
                            (uint16_t *)out[0].data + r * n, NULL, mean ? mean + r : NULL,
                            (float *)out[inv_i].data + r);
          }
          CHECK(ok);
          outputs_free(out, n_out);
        }
        free(x);
        free(g);
        free(bt);
      }
  }
}

/* InstanceNormalization: X [N, C, spatial...] of rank 3..5, each (image, channel) a row with
 * the channel's scale and B (row_check with them repeated), epsilon set and not, split; and what
 * it refuses. */
static void test_instance_norm(void) {
  const norm_case c = {ACTX_BF16_OP_INSTANCE_NORM, false, false, 1e-5f};
  for (size_t rank = 3; rank <= 5; rank++)
    for (int rep = 0; rep < 2; rep++) {
      int64_t dims[5];
      for (size_t d = 0; d < rank; d++) dims[d] = 1 + (int64_t)(rng_u32() % (d < 2 ? 4 : 9));
      const actx_shape xs = shape_of(rank, dims);
      const int64_t total = actx_shape_elements(&xs), C = dims[1], n = total / (dims[0] * C);
      uint16_t *x = malloc((size_t)total * 2), sc[4], b[4];
      fill_uniform(x, (size_t)total, rep ? 297.0f : -3.0f, rep ? 303.0f : 3.0f);
      fill_uniform(sc, (size_t)C, -2.0f, 2.0f);
      fill_uniform(b, (size_t)C, -1.0f, 1.0f);
      const actx_elem elems[3] = {ACTX_ELEM_BF16, ACTX_ELEM_BF16, ACTX_ELEM_BF16};
      actx_bf16_node node = node_make(c.op, 22, 3, elems, 1);
      norm_case cc = c;
      if (rep == 1) {
        node.attrs.has_epsilon = true;
        node.attrs.epsilon = cc.epsilon = 0.125f;
      }
      const actx_shape cs = shape_of(1, &C);
      actx_tensor in[3] = {tensor_bf16(xs, x), tensor_bf16(cs, sc), tensor_bf16(cs, b)};
      actx_tensor out[1];
      const char *why = "";
      const actx_status st = run_node(&node, in, 3, out, 1, &test_par, &why);
      CHECK(st == ACTX_OK);
      if (st != ACTX_OK) {
        fprintf(stderr, "  refused: %s\n", why);
        free(x);
        continue;
      }
      uint16_t *g = malloc((size_t)n * 2), *bt = malloc((size_t)n * 2);
      bool ok = true;
      for (int64_t r = 0; r < dims[0] * C; r++) {
        for (int64_t i = 0; i < n; i++) {
          g[i] = sc[r % C];
          bt[i] = b[r % C];
        }
        ok &= row_check(&cc, n, x + r * n, NULL, NULL, g, bt, (uint16_t *)out[0].data + r * n,
                        NULL, NULL, NULL);
      }
      CHECK(ok);
      outputs_free(out, 1);
      free(g);
      free(bt);
      free(x);
    }
  /* refusals: X of rank 2, scale not [C], B missing, an axis attribute */
  uint16_t x[24] = {0}, sc[3] = {0}, b[3] = {0};
  const actx_elem elems[3] = {ACTX_ELEM_BF16, ACTX_ELEM_BF16, ACTX_ELEM_BF16};
  const actx_bf16_node node = node_make(ACTX_BF16_OP_INSTANCE_NORM, 22, 3, elems, 1);
  const int64_t d2[2] = {8, 3}, d3[3] = {2, 3, 4}, c3 = 3, c2 = 2;
  actx_tensor in[3] = {tensor_bf16(shape_of(2, d2), x), tensor_bf16(shape_of(1, &c3), sc),
                       tensor_bf16(shape_of(1, &c3), b)};
  CHECK_FAILS(&node, in, 3, 1, "[N, C, spatial...]");
  in[0] = tensor_bf16(shape_of(3, d3), x);
  in[1] = tensor_bf16(shape_of(1, &c2), sc);
  CHECK_FAILS(&node, in, 3, 1, "1-D of X's channels");
  in[1] = tensor_bf16(shape_of(1, &c3), sc);
  in[2] = ACTX_TENSOR_ABSENT;
  CHECK_FAILS(&node, in, 3, 1, "1-D of X's channels");
  actx_bf16_node with_axis = node;
  with_axis.attrs.has_axis = true;
  in[2] = tensor_bf16(shape_of(1, &c3), b);
  CHECK_FAILS(&with_axis, in, 3, 1, "no axis");
}

/* The Skip ops: [B,S,H] input with skip [B,S,H], [1,S,H] or [S,H], 2-D input; beta and bias
 * present or not; every output. */
static void test_skip(void) {
  for (int ci = 2; ci < 4; ci++) {
    const norm_case *c = &cases[ci];
    for (int form = 0; form < 4; form++)
      for (int opt = 0; opt < 4; opt++) {
        const int64_t B = 1 + rng_u32() % 3, S = 1 + rng_u32() % 5, H = 1 + rng_u32() % 70;
        const int64_t xd3[3] = {B, S, H}, kd1[3] = {1, S, H}, kd2[2] = {S, H}, hd[1] = {H};
        const actx_shape xs = form == 3 ? shape_of(2, kd2) : shape_of(3, xd3);
        const actx_shape ks = form == 1 ? shape_of(3, kd1) : form == 2 ? shape_of(2, kd2) : xs;
        const int64_t total = actx_shape_elements(&xs), kn = actx_shape_elements(&ks);
        uint16_t *x = malloc((size_t)total * 2), *k = malloc((size_t)kn * 2);
        uint16_t g[70], bt[70], bias[70];
        fill_uniform(x, (size_t)total, -4.0f, 4.0f);
        fill_uniform(k, (size_t)kn, -4.0f, 4.0f);
        fill_uniform(g, 70, -2.0f, 2.0f);
        fill_uniform(bt, 70, -1.0f, 1.0f);
        fill_uniform(bias, 70, -1.0f, 1.0f);
        const bool with_beta = !c->rms && (opt & 1), with_bias = opt & 2;
        actx_tensor in[5] = {tensor_bf16(xs, x), tensor_bf16(ks, k),
                             tensor_bf16(shape_of(1, hd), g)};
        actx_elem elems[5] = {ACTX_ELEM_BF16, ACTX_ELEM_BF16, ACTX_ELEM_BF16, ACTX_ELEM_COUNT,
                              ACTX_ELEM_COUNT};
        size_t n_in = 3;
        in[3] = in[4] = ACTX_TENSOR_ABSENT;
        const size_t bias_i = c->rms ? 3 : 4;
        if (with_beta) {
          in[3] = tensor_bf16(shape_of(1, hd), bt);
          elems[3] = ACTX_ELEM_BF16;
          n_in = 4;
        }
        if (with_bias) {
          in[bias_i] = tensor_bf16(shape_of(1, hd), bias);
          elems[bias_i] = ACTX_ELEM_BF16;
          n_in = bias_i + 1;
        }
        actx_bf16_node node = node_make(c->op, 1, n_in, elems, 4);
        if (opt == 3) node.output_present[1] = node.output_present[2] = false;
        actx_tensor out[4];
        const char *why = "";
        const actx_status st = run_node(&node, in, n_in, out, 4, &test_par, &why);
        CHECK(st == ACTX_OK);
        if (st != ACTX_OK) {
          fprintf(stderr, "  refused: %s\n", why);
          continue;
        }
        CHECK(out[3].elem == ACTX_ELEM_BF16 && out[3].shape.rank == xs.rank);
        CHECK((out[1].elem == ACTX_ELEM_F32) == (opt != 3));
        bool ok = true;
        for (int64_t r = 0; r < total / H; r++) {
          const float *mean = out[1].data, *inv = out[2].data;
          ok &= row_check(c, H, x + r * H, k + (r * H) % kn, with_bias ? bias : NULL, g,
                          with_beta ? bt : NULL, (uint16_t *)out[0].data + r * H,
                          (uint16_t *)out[3].data + r * H, mean ? mean + r : NULL,
                          inv ? inv + r : NULL);
        }
        CHECK(ok);
        outputs_free(out, 4);
        free(x);
        free(k);
      }
  }
}

/* Runs op on one row of n (gamma 1, no beta) and returns y[0..n). */
static void one_row(int ci, const uint16_t *x, int64_t n, float eps, bool set_eps, uint16_t *y,
                    float *inv) {
  const norm_case *c = &cases[ci];
  uint16_t g[8], zero[8] = {0};
  for (int i = 0; i < 8; i++) g[i] = bf(1.0f);
  const actx_elem elems[3] = {ACTX_ELEM_BF16, ACTX_ELEM_BF16, ACTX_ELEM_BF16};
  actx_bf16_node node = node_make(c->op, c->skip ? 1 : c->rms ? 1 : 17, c->skip ? 3 : 2, elems,
                                  c->skip ? 3 : c->rms ? 2 : 3);
  node.attrs.has_epsilon = set_eps;
  node.attrs.epsilon = eps;
  const actx_shape xs = c->skip ? (actx_shape){2, {1, n}} : (actx_shape){1, {n}};
  actx_tensor in[3] = {tensor_bf16(xs, (uint16_t *)x), tensor_bf16(xs, zero),
                       tensor_bf16((actx_shape){1, {n}}, g)};
  if (!c->skip) in[1] = in[2];
  actx_tensor out[3];
  const char *why = "";
  CHECK(run_node(&node, in, c->skip ? 3 : 2, out, node.n_outputs, NULL, &why) == ACTX_OK);
  if (out[0].data == NULL) return;
  memcpy(y, out[0].data, (size_t)n * 2);
  *inv = *(float *)out[c->rms && !c->skip ? 1 : 2].data;
  outputs_free(out, node.n_outputs);
}

static void test_edges(void) {
  uint16_t y[8];
  float inv;
  const uint16_t qnan = 0x7FC0, pinf = 0x7F80;
  for (int ci = 0; ci < 4; ci++) {
    /* NaN in a row: NaN throughout; inf: NaN throughout in LayerNorm (inf - inf), and in RMS
     * norm (r = 1/inf = 0) 0 at the finite values, NaN at the inf (inf · 0), as float32 says */
    const uint16_t r1[3] = {bf(1), qnan, bf(2)}, r2[3] = {bf(1), pinf, bf(2)};
    one_row(ci, r1, 3, 0, false, y, &inv);
    for (int i = 0; i < 3; i++) CHECK(bf_is_nan(y[i]));
    one_row(ci, r2, 3, 0, false, y, &inv);
    for (int i = 0; i < 3; i++) CHECK(cases[ci].rms && i != 1 ? y[i] == 0 : bf_is_nan(y[i]));
    /* all equal: LayerNorm gives β (0) exactly; RMS gives x / sqrt(x² + ε) ~ sign */
    const uint16_t eq[4] = {bf(3), bf(3), bf(3), bf(3)};
    one_row(ci, eq, 4, 0, false, y, &inv);
    for (int i = 0; i < 4; i++) CHECK(y[i] == (cases[ci].rms ? bf(1.0f) : 0));
    /* all equal with ε = 0: LayerNorm's 0 · inf is NaN, as float32 says */
    one_row(ci, eq, 4, 0.0f, true, y, &inv);
    for (int i = 0; i < 4; i++) CHECK(cases[ci].rms ? y[i] == bf(1.0f) : bf_is_nan(y[i]));
    /* zeros (signed) with the default ε: 0 out, inv = 1/sqrt(ε) */
    const uint16_t z[2] = {0x8000, 0x0000};
    one_row(ci, z, 2, 0, false, y, &inv);
    CHECK((y[0] & 0x7FFF) == 0 && (y[1] & 0x7FFF) == 0);
    CHECK(inv == 1.0f / sqrtf(cases[ci].epsilon));
    /* one element: LayerNorm 0, RMS x / sqrt(x² + ε) */
    const uint16_t one[1] = {bf(-2)};
    one_row(ci, one, 1, 0, false, y, &inv);
    CHECK(y[0] == (cases[ci].rms ? bf(-1.0f) : 0));
    /* subnormals: exact inputs; with ε = 0 their squares underflow in float32, so the scale is
     * inf and the result ±inf (exactly ±1); with the default ε they come out as x / sqrt(ε) */
    const uint16_t sub[2] = {0x0001, 0x8001};
    one_row(ci, sub, 2, 0.0f, true, y, &inv);
    CHECK(y[0] == pinf && y[1] == 0xFF80 && inv == INFINITY);
    one_row(ci, sub, 2, 0, false, y, &inv);
    const float scale = 1.0f / sqrtf(cases[ci].epsilon);
    CHECK(y[0] == bf(fb(sub[0]) * scale) && y[1] == bf(fb(sub[1]) * scale));
  }
}

static void test_bad(void) {
  const int64_t d3[3] = {2, 3, 4}, d1[1] = {4}, d5[1] = {5};
  uint16_t buf[24] = {0};
  const actx_elem e3[5] = {ACTX_ELEM_BF16, ACTX_ELEM_BF16, ACTX_ELEM_BF16, ACTX_ELEM_BF16,
                           ACTX_ELEM_BF16};
  const actx_elem ef[3] = {ACTX_ELEM_BF16, ACTX_ELEM_F32, ACTX_ELEM_BF16};
  actx_tensor in[5] = {tensor_bf16(shape_of(3, d3), buf), tensor_bf16(shape_of(1, d1), buf),
                       tensor_bf16(shape_of(1, d1), buf), tensor_bf16(shape_of(1, d1), buf),
                       tensor_bf16(shape_of(1, d1), buf)};
  actx_bf16_node n = node_make(ACTX_BF16_OP_LAYER_NORM, 17, 2, e3, 1);
  n.attrs.has_axis = true;
  n.attrs.axis = 3;
  CHECK_FAILS(&n, in, 2, 1, "axis out of range");
  n.attrs.axis = -4;
  CHECK_FAILS(&n, in, 2, 1, "axis out of range");
  n.attrs.axis = 1; /* Scale [4] is not [3,4] */
  CHECK_FAILS(&n, in, 2, 1, "Scale and B");
  n.attrs.has_axis = false;
  n.attrs.has_epsilon = true;
  n.attrs.epsilon = -1.0f;
  CHECK_FAILS(&n, in, 2, 1, "epsilon");
  n.attrs.epsilon = NAN;
  CHECK_FAILS(&n, in, 2, 1, "epsilon");
  n.attrs.has_epsilon = false;
  n.attrs.has_stash_type = true;
  n.attrs.stash_type = 16;
  CHECK_FAILS(&n, in, 2, 1, "stash_type");
  n = node_make(ACTX_BF16_OP_LAYER_NORM, 17, 3, ef, 1);
  CHECK_FAILS(&n, in, 3, 1, "bfloat16");
  n = node_make(ACTX_BF16_OP_LAYER_NORM, 17, 3, e3, 1);
  actx_tensor bad_b[3] = {in[0], in[1], tensor_bf16(shape_of(1, d5), buf)};
  CHECK_FAILS(&n, bad_b, 3, 1, "Scale and B");
  bad_b[2].elem = ACTX_ELEM_F32;
  CHECK_FAILS(&n, bad_b, 3, 1, "bfloat16");
  bad_b[2] = in[2];
  bad_b[2].data = NULL;
  CHECK_FAILS(&n, bad_b, 3, 1, "no data");
  actx_tensor scalar[2] = {tensor_bf16((actx_shape){0}, buf), in[1]};
  n = node_make(ACTX_BF16_OP_LAYER_NORM, 17, 2, e3, 1);
  CHECK_FAILS(&n, scalar, 2, 1, "axis out of range");
  n = node_make(ACTX_BF16_OP_LAYER_NORM, 16, 2, e3, 1);
  CHECK_FAILS(&n, in, 2, 1, "version");
  /* the Skip ops */
  n = node_make(ACTX_BF16_OP_SKIP_LAYER_NORM, 1, 3, e3, 1);
  actx_tensor sk[3] = {in[0], tensor_bf16(shape_of(1, d1), buf), in[2]};
  CHECK_FAILS(&n, sk, 3, 1, "skip must have");
  const int64_t k2[3] = {2, 1, 4};
  sk[1] = tensor_bf16(shape_of(3, k2), buf);
  CHECK_FAILS(&n, sk, 3, 1, "skip must have");
  sk[1] = in[0];
  sk[2] = tensor_bf16(shape_of(1, d5), buf);
  CHECK_FAILS(&n, sk, 3, 1, "hidden size");
  sk[2] = tensor_bf16(shape_of(3, d3), buf);
  CHECK_FAILS(&n, sk, 3, 1, "hidden size");
  actx_tensor sk1[3] = {in[1], in[1], in[2]};
  CHECK_FAILS(&n, sk1, 3, 1, "2-D or 3-D");
  n.attrs.has_axis = true;
  CHECK_FAILS(&n, sk, 3, 1, "no axis");
  n = node_make(ACTX_BF16_OP_SKIP_SIMPLIFIED_LAYER_NORM, 1, 4, e3, 1);
  actx_tensor sb[4] = {in[0], in[0], in[2], tensor_bf16(shape_of(1, d5), buf)};
  CHECK_FAILS(&n, sb, 4, 1, "hidden size");
  n = node_make(ACTX_BF16_OP_SKIP_LAYER_NORM, 1, 2, e3, 1);
  CHECK_FAILS(&n, in, 2, 1, "inputs");
  n = node_make(ACTX_BF16_OP_SIMPLIFIED_LAYER_NORM, 1, 2, e3, 3);
  CHECK_FAILS(&n, in, 2, 3, "outputs");
}

/* many rows: the split over threads is used and changes nothing, every op and output */
static void test_split(void) {
  const int64_t d3[3] = {4, 32, 256}, h[1] = {256};
  uint16_t *x = malloc(4 * 32 * 256 * 2), *k = malloc(32 * 256 * 2), g[256], b[256];
  fill_uniform(x, 4 * 32 * 256, -3.0f, 3.0f);
  fill_uniform(k, 32 * 256, -3.0f, 3.0f);
  fill_uniform(g, 256, -2.0f, 2.0f);
  fill_uniform(b, 256, -1.0f, 1.0f);
  const int64_t kd[2] = {32, 256};
  const actx_elem e[5] = {ACTX_ELEM_BF16, ACTX_ELEM_BF16, ACTX_ELEM_BF16, ACTX_ELEM_BF16,
                          ACTX_ELEM_BF16};
  for (int ci = 0; ci < 4; ci++) {
    const norm_case *c = &cases[ci];
    actx_tensor in[5] = {tensor_bf16(shape_of(3, d3), x), tensor_bf16(shape_of(1, h), g),
                         tensor_bf16(shape_of(1, h), b)};
    size_t n_in = c->rms ? 2 : 3, n_out = c->rms ? 2 : 3;
    if (c->skip) {
      in[1] = tensor_bf16(shape_of(2, kd), k); /* broadcast over the batch */
      in[2] = in[3] = in[4] = tensor_bf16(shape_of(1, h), g);
      n_in = c->rms ? 4 : 5;
      n_out = 4;
    }
    const actx_bf16_node node = node_make(c->op, c->skip || c->rms ? 1 : 17, n_in, e, n_out);
    CHECK_SPLIT_SAME(&node, in, n_in, n_out);
  }
  free(x);
  free(k);
}

/* Inputs and bfloat16 outputs at odd addresses (a tensor may sit anywhere in a buffer): the
 * same bits as aligned, every op. */
static void test_misaligned(void) {
  enum { N = 2 * 77 }; /* rows of 77 */
  const int64_t xd[2] = {2, 77}, hd[1] = {77};
  uint16_t x[N], k[N], g[77], b[77];
  fill_uniform(x, N, -3.0f, 3.0f);
  fill_uniform(k, N, -3.0f, 3.0f);
  fill_uniform(g, 77, -2.0f, 2.0f);
  fill_uniform(b, 77, -1.0f, 1.0f);
  const actx_elem e[5] = {ACTX_ELEM_BF16, ACTX_ELEM_BF16, ACTX_ELEM_BF16, ACTX_ELEM_BF16,
                          ACTX_ELEM_BF16};
  for (int ci = 0; ci < 4; ci++) {
    const norm_case *c = &cases[ci];
    const size_t n_in = c->skip ? (c->rms ? 4 : 5) : (c->rms ? 2 : 3);
    const size_t n_out = c->skip ? 4 : c->rms ? 2 : 3;
    actx_tensor in[5] = {tensor_bf16(shape_of(2, xd), x), tensor_bf16(shape_of(1, hd), g),
                         tensor_bf16(shape_of(1, hd), b)};
    if (c->skip) {
      in[1] = tensor_bf16(shape_of(2, xd), k);
      in[2] = in[4] = tensor_bf16(shape_of(1, hd), g);
      in[3] = tensor_bf16(shape_of(1, hd), b);
    }
    const actx_bf16_node node = node_make(c->op, c->skip || c->rms ? 1 : 17, n_in, e, n_out);
    actx_tensor want[4];
    const char *why = "";
    CHECK(run_node(&node, in, n_in, want, n_out, NULL, &why) == ACTX_OK);
    if (want[0].data == NULL) continue;
    /* each input copied to an odd address; Y and input_skip_bias_sum written at one */
    unsigned char *odd = malloc(5 * (2 * N + 2) + 2 * (2 * N + 2));
    actx_tensor in_odd[5], out[4];
    for (size_t i = 0; i < n_in; i++) {
      in_odd[i] = in[i];
      in_odd[i].data = odd + i * (2 * N + 2) + 1;
      memcpy(in_odd[i].data, in[i].data, (size_t)actx_shape_elements(&in[i].shape) * 2);
    }
    actx_bf16_kernel *kern = NULL;
    CHECK(actx_bf16_kernel_create(&node, &kern, &why) == ACTX_OK);
    for (size_t i = 0; i < n_out; i++) {
      out[i] = want[i];
      out[i].data = want[i].elem == ACTX_ELEM_F32
                        ? calloc((size_t)actx_shape_elements(&want[i].shape), 4)
                        : odd + (5 + (i == 0 ? 0 : 1)) * (2 * N + 2) + 1;
    }
    CHECK(actx_bf16_kernel_run(kern, in_odd, n_in, out, n_out, NULL, &why) == ACTX_OK);
    for (size_t i = 0; i < n_out; i++) {
      const size_t bytes = (size_t)actx_shape_elements(&want[i].shape) *
                           (want[i].elem == ACTX_ELEM_F32 ? 4 : 2);
      CHECK(memcmp(out[i].data, want[i].data, bytes) == 0);
      if (want[i].elem == ACTX_ELEM_F32) free(out[i].data);
    }
    actx_bf16_kernel_destroy(kern);
    outputs_free(want, n_out);
    free(odd);
  }
}

int main(void) {
  test_instance_norm();
  test_split();
  test_misaligned();
  test_layer_norm();
  test_skip();
  test_edges();
  test_bad();
  return test_exit("test_bf16_norm", rows_checked,
                   "rows checked against the bound, edges and refusals");
}
