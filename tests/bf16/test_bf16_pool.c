/* MaxPool / AveragePool / GlobalMaxPool / GlobalAveragePool in bfloat16 (src/bf16/bf16_pool.c)
 * against a plain reference written from the ONNX spec: output sizes (floor / ceil / auto_pad),
 * each window walked in double. MaxPool and Indices exactly (NaN first, then the first of equal
 * values); AveragePool within the bound of a sequential float32 sum and one division,
 * (count - 1) · 2^-24 · Σ|x| / count + 2^-24 · |mean|, then the one rounding. */
#include "bf16_test_run.h"

static const double U = 1.0 / 16777216.0;
static int windows_checked;

typedef struct pool_cfg {
  actx_bf16_op op;
  size_t k;
  int64_t kernel[3], stride[3], dil[3], pb[3], pe[3];
  const char *auto_pad;
  int ceil_mode, count_include_pad, storage_order; /* -1: unset */
  bool set_strides, set_dil, set_pads, indices;
} pool_cfg;

/* The output size of one dim as ORT's pool_attributes.h computes it (the model's float32 twin
 * gets it from ORT), in double with the rounding written out: span / stride truncated toward
 * zero (the spec floors: they differ where the kernel passes the padded input), ceil_mode
 * rounding up; SAME's pads from the undilated kernel. *refused: a negative SAME pad. A result
 * below 0 is refused too. */
static int64_t ref_out(const pool_cfg *c, size_t d, int64_t in, int64_t *pb, int64_t *pe,
                       bool *refused) {
  const int64_t ext = c->dil[d] * (c->kernel[d] - 1) + 1, s = c->stride[d];
  *refused = false;
  *pb = c->pb[d];
  *pe = c->pe[d];
  if (c->auto_pad && strcmp(c->auto_pad, "VALID") == 0) *pb = *pe = 0;
  if (c->auto_pad && strncmp(c->auto_pad, "SAME", 4) == 0) {
    const int64_t target = (int64_t)ceil((double)in / (double)s);
    const int64_t total = (target - 1) * s + c->kernel[d] - in;
    *pb = (int64_t)trunc((double)(strcmp(c->auto_pad, "SAME_UPPER") == 0 ? total : total + 1) /
                         2.0);
    *pe = total - *pb;
    *refused = *pb < 0;
  }
  const double span = (double)(in + *pb + *pe - ext) / (double)s;
  int64_t out = (int64_t)(c->ceil_mode == 1 ? ceil(span) : trunc(span)) + 1;
  if (c->ceil_mode == 1 && (out - 1) * s >= in + *pb) out--;
  *refused |= out < 0;
  if (*pe < 0) *pe = 0; /* counted in the size only */
  return out;
}

static actx_bf16_node cfg_node(const pool_cfg *c) {
  const actx_elem e[1] = {ACTX_ELEM_BF16};
  actx_bf16_node n = node_make(c->op, 22, 1, e, c->indices ? 2 : 1);
  actx_bf16_attrs *a = &n.attrs;
  if (c->op == ACTX_BF16_OP_MAX_POOL || c->op == ACTX_BF16_OP_AVERAGE_POOL) {
    a->has_kernel_shape = true;
    a->n_kernel_shape = c->k;
    memcpy(a->kernel_shape, c->kernel, c->k * sizeof(int64_t));
  }
  if (c->set_strides) {
    a->has_strides = true;
    a->n_strides = c->k;
    memcpy(a->strides, c->stride, c->k * sizeof(int64_t));
  }
  if (c->set_dil) {
    a->has_dilations = true;
    a->n_dilations = c->k;
    memcpy(a->dilations, c->dil, c->k * sizeof(int64_t));
  }
  if (c->set_pads) {
    a->has_pads = true;
    a->n_pads = 2 * c->k;
    memcpy(a->pads, c->pb, c->k * sizeof(int64_t));
    memcpy(a->pads + c->k, c->pe, c->k * sizeof(int64_t));
  }
  if (c->auto_pad) {
    a->has_auto_pad = true;
    snprintf(a->auto_pad, sizeof a->auto_pad, "%s", c->auto_pad);
  }
  if (c->ceil_mode >= 0) {
    a->has_ceil_mode = true;
    a->ceil_mode = c->ceil_mode;
  }
  if (c->count_include_pad >= 0) {
    a->has_count_include_pad = true;
    a->count_include_pad = c->count_include_pad;
  }
  if (c->storage_order >= 0) {
    a->has_storage_order = true;
    a->storage_order = c->storage_order;
  }
  return n;
}

/* Runs c on x and compares every output with the reference. */
static void check_pool(const pool_cfg *c, const actx_shape *xs, const uint16_t *x) {
  const bool global = c->op == ACTX_BF16_OP_GLOBAL_MAX_POOL ||
                      c->op == ACTX_BF16_OP_GLOBAL_AVERAGE_POOL;
  const bool is_max = c->op == ACTX_BF16_OP_MAX_POOL || c->op == ACTX_BF16_OP_GLOBAL_MAX_POOL;
  pool_cfg g = *c;
  const size_t k = xs->rank - 2;
  if (global) { /* the reference's view: a kernel over everything, stride 1, no pads */
    g.k = k;
    for (size_t d = 0; d < k; d++) {
      g.kernel[d] = xs->dims[2 + d];
      g.stride[d] = g.dil[d] = 1;
      g.pb[d] = g.pe[d] = 0;
    }
    g.auto_pad = NULL;
    g.ceil_mode = 0;
  }
  int64_t out[3] = {1, 1, 1}, pb[3] = {0}, pe[3] = {0}, in[3] = {1, 1, 1};
  for (size_t d = 0; d < k; d++) {
    in[d] = xs->dims[2 + d];
    bool refused = false;
    out[d] = global ? 1 : ref_out(&g, d, in[d], &pb[d], &pe[d], &refused);
  }
  actx_bf16_node node = cfg_node(c);
  actx_tensor tin[1] = {tensor_bf16(*xs, (uint16_t *)x)}, tout[2];
  const char *why = "";
  const actx_status st = run_node(&node, tin, 1, tout, node.n_outputs, &test_par, &why);
  CHECK(st == ACTX_OK);
  if (st != ACTX_OK) {
    fprintf(stderr, "  refused: %s\n", why);
    return;
  }
  CHECK(tout[0].shape.rank == xs->rank && tout[0].shape.dims[0] == xs->dims[0] &&
        tout[0].shape.dims[1] == xs->dims[1]);
  for (size_t d = 0; d < k; d++) CHECK(tout[0].shape.dims[2 + d] == out[d]);
  if (c->indices) CHECK(tout[1].elem == ACTX_ELEM_I64);
  const int64_t nc = xs->dims[0] * xs->dims[1], in_sp = in[0] * in[1] * in[2];
  const int64_t kr[3] = {g.kernel[0], k > 1 ? g.kernel[1] : 1, k > 2 ? g.kernel[2] : 1};
  const int64_t sr[3] = {g.stride[0], k > 1 ? g.stride[1] : 1, k > 2 ? g.stride[2] : 1};
  const int64_t dr[3] = {g.dil[0], k > 1 ? g.dil[1] : 1, k > 2 ? g.dil[2] : 1};
  const uint16_t *y = tout[0].data;
  const int64_t *ind = c->indices ? tout[1].data : NULL;
  int bad = 0;
  int64_t oi = 0;
  for (int64_t ch = 0; ch < nc; ch++)
    for (int64_t o0 = 0; o0 < out[0]; o0++)
      for (int64_t o1 = 0; o1 < out[1]; o1++)
        for (int64_t o2 = 0; o2 < out[2]; o2++, oi++) {
          double sum = 0, sum_abs = 0;
          int64_t count = 0, best = -1;
          bool nan = false;
          const int64_t o[3] = {o0, o1, o2};
          for (int64_t j0 = 0; j0 < kr[0]; j0++)
            for (int64_t j1 = 0; j1 < kr[1]; j1++)
              for (int64_t j2 = 0; j2 < kr[2]; j2++) {
                const int64_t j[3] = {j0, j1, j2};
                int64_t q[3];
                bool inside = true, in_pads = true;
                for (int d = 0; d < 3; d++) {
                  q[d] = o[d] * sr[d] - pb[d] + j[d] * dr[d];
                  inside &= q[d] >= 0 && q[d] < in[d];
                  in_pads &= q[d] >= -pb[d] && q[d] < in[d] + pe[d];
                }
                if (in_pads && (inside || c->count_include_pad == 1)) count++;
                if (!inside) continue;
                const int64_t off = (q[0] * in[1] + q[1]) * in[2] + q[2];
                const uint16_t v = x[ch * in_sp + off];
                sum += fb(v);
                sum_abs += fabs(fb(v));
                if (nan) continue;
                if (bf_is_nan(v)) {
                  nan = true;
                  best = off;
                } else if (best < 0 || (is_max && fb(v) > fb(x[ch * in_sp + best]))) {
                  best = off;
                }
              }
          bool ok;
          if (is_max) {
            const uint16_t want = best < 0 ? 0xFF80
                                  : nan    ? (uint16_t)(x[ch * in_sp + best] | 0x0040)
                                           : x[ch * in_sp + best];
            ok = y[oi] == want;
            if (ind != NULL && best >= 0) {
              const int64_t q[3] = {best / (in[1] * in[2]), (best / in[2]) % in[1],
                                    best % in[2]};
              const int64_t sp = c->storage_order == 1 ? q[0] + q[1] * in[0] + q[2] * in[0] * in[1]
                                                       : best;
              ok &= ind[oi] == ch * in_sp + sp;
            }
          } else if (count == 0) { /* all on pads: 0, as ORT's */
            ok = y[oi] == 0x0000;
          } else if (sum != sum) {
            ok = bf_is_nan(y[oi]);
          } else {
            const double mean = sum / (double)count;
            const double e = (double)(count - 1) * U * sum_abs / (double)count + U * fabs(mean);
            ok = bf16_within(y[oi], mean, e);
          }
          windows_checked++;
          if (!ok && bad++ < 3)
            fprintf(stderr, "  op %d k %zu out %lld: got %a (%04x)%s\n", (int)c->op, k,
                    (long long)oi, fb(y[oi]), y[oi], ind ? " (or its index)" : "");
        }
  CHECK(bad == 0);
  outputs_free(tout, node.n_outputs);
}

static void test_random(void) {
  static const char *pads[5] = {NULL, "NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"};
  for (int rep = 0; rep < 400; rep++) {
    pool_cfg c = {.op = rep % 2 ? ACTX_BF16_OP_MAX_POOL : ACTX_BF16_OP_AVERAGE_POOL,
                  .k = 1 + (size_t)(rep / 2) % 3};
    int64_t dims[5] = {1 + rng_u32() % 2, 1 + rng_u32() % 3};
    for (size_t d = 0; d < c.k; d++) {
      dims[2 + d] = 1 + rng_u32() % (c.k == 3 ? 6 : 11);
      c.kernel[d] = 1 + rng_u32() % 4;
      c.stride[d] = 1 + rng_u32() % 3;
      c.dil[d] = 1 + rng_u32() % 2;
      c.pb[d] = rng_u32() % c.kernel[d];
      c.pe[d] = rng_u32() % c.kernel[d];
    }
    c.set_strides = rng_u32() & 1;
    c.set_dil = rng_u32() & 1;
    c.set_pads = rng_u32() & 1;
    for (size_t d = 0; d < c.k; d++) {
      if (!c.set_strides) c.stride[d] = 1;
      if (!c.set_dil) c.dil[d] = 1;
      if (!c.set_pads) c.pb[d] = c.pe[d] = 0;
    }
    c.auto_pad = pads[rng_u32() % 5];
    if (c.auto_pad && strcmp(c.auto_pad, "NOTSET") != 0) c.set_pads = false;
    c.ceil_mode = (int)(rng_u32() % 3) - 1;
    c.count_include_pad = c.op == ACTX_BF16_OP_AVERAGE_POOL ? (int)(rng_u32() % 3) - 1 : -1;
    c.storage_order = c.op == ACTX_BF16_OP_MAX_POOL ? (int)(rng_u32() % 3) - 1 : -1;
    c.indices = c.op == ACTX_BF16_OP_MAX_POOL && (rng_u32() & 1);
    const actx_shape xs = shape_of(2 + c.k, dims);
    /* configurations ORT refuses (a negative output size or SAME pad) are refused; those it
     * makes empty run to an empty output (check_pool) */
    bool refused = false;
    for (size_t d = 0; d < c.k; d++) {
      int64_t pb, pe;
      bool r = false;
      ref_out(&c, d, dims[2 + d], &pb, &pe, &r);
      refused |= r;
    }
    if (refused) {
      const actx_bf16_node n = cfg_node(&c);
      uint16_t buf[1] = {0};
      actx_tensor in[1] = {tensor_bf16(xs, buf)};
      CHECK_FAILS(&n, in, 1, n.n_outputs, "negative");
      continue;
    }
    const int64_t n = actx_shape_elements(&xs);
    uint16_t *x = malloc((size_t)n * 2);
    /* few distinct values: ties, so "the first of equal values" is exercised */
    for (int64_t i = 0; i < n; i++)
      x[i] = rep % 4 == 1 ? bf((float)(rng_u32() % 4)) : bf(rng_uniform(-8.0f, 8.0f));
    check_pool(&c, &xs, x);
    free(x);
  }
}

/* MaxPool of many small planes runs across the planes (bf16_pool.c's pool_chunk_across, from
 * 32 planes of at most 400 positions): random windows, strides, dilations, pads and ceil_mode
 * over 32..79 planes, with ties, signed zeros, infinities and NaNs (payloads kept, made quiet:
 * the first in a window wins) among the values; and its split over tasks gives one run's bits. */
static void test_across(void) {
  static const uint16_t specials[] = {0x7FC1, 0xFFA3, 0x7F81, 0x8000, 0x0000, 0x7F80, 0xFF80,
                                      0x0001};
  for (int rep = 0; rep < 60; rep++) {
    pool_cfg c = {.op = ACTX_BF16_OP_MAX_POOL, .k = 1 + (size_t)rep % 3, .ceil_mode = -1,
                  .count_include_pad = -1, .storage_order = -1};
    int64_t dims[5] = {1 + rng_u32() % 2, 32 + rng_u32() % 48};
    for (size_t d = 0; d < c.k; d++) {
      dims[2 + d] = 1 + rng_u32() % (c.k == 1 ? 40 : c.k == 2 ? 20 : 7);
      c.kernel[d] = 1 + rng_u32() % 5;
      c.stride[d] = 1 + rng_u32() % 2;
      c.dil[d] = 1 + rng_u32() % 2;
      c.pb[d] = rng_u32() % c.kernel[d];
      c.pe[d] = rng_u32() % c.kernel[d];
    }
    c.set_strides = c.set_dil = c.set_pads = true;
    c.ceil_mode = (int)(rng_u32() % 2);
    const actx_shape xs = shape_of(2 + c.k, dims);
    bool fits = true;
    for (size_t d = 0; d < c.k; d++) {
      int64_t pb, pe;
      bool refused = false;
      fits &= ref_out(&c, d, dims[2 + d], &pb, &pe, &refused) >= 1 && !refused;
    }
    if (!fits) continue;
    const int64_t n = actx_shape_elements(&xs);
    uint16_t *x = malloc((size_t)n * 2);
    for (int64_t i = 0; i < n; i++) {
      const uint32_t r = rng_u32() % 100;
      x[i] = r < 3    ? specials[rng_u32() % (sizeof specials / sizeof specials[0])]
             : rep % 2 ? bf((float)(rng_u32() % 4))
                       : bf(rng_uniform(-8.0f, 8.0f));
    }
    check_pool(&c, &xs, x);
    free(x);
  }
  const int64_t d4[4] = {4, 128, 10, 10}; /* enough window positions to be split */
  uint16_t *x = malloc(4 * 128 * 10 * 10 * 2);
  fill_uniform(x, 4 * 128 * 10 * 10, -5.0f, 5.0f);
  actx_tensor in[1] = {tensor_bf16(shape_of(4, d4), x)};
  const pool_cfg c = {.op = ACTX_BF16_OP_MAX_POOL, .k = 2, .kernel = {5, 5}, .stride = {1, 1},
                      .dil = {1, 1}, .pb = {2, 2}, .pe = {2, 2}, .ceil_mode = -1,
                      .count_include_pad = -1, .storage_order = -1, .set_pads = true};
  const actx_bf16_node node = cfg_node(&c);
  CHECK_SPLIT_SAME(&node, in, 1, node.n_outputs);
  free(x);
}

/* Output sizes ORT 1.30's CPU EP gives (measured, one float32 node each; input 1..in): a kernel
 * past the padded input by less than a stride (one window, clipped: ONNX's floor gives none),
 * by a stride (an empty output), by more (refused); VALID alike; SAME with a dilated kernel (pads
 * from the undilated one); a negative SAME start pad (refused: ORT's MaxPool refuses it), a
 * negative end pad (taken: ORT's AveragePool's windows, which MaxPool's would be). */
static void test_ort_sizes(void) {
  static const struct {
    const char *auto_pad;
    int64_t in, kernel, stride, dil;
    int ceil;
    int64_t out; /* -1: refused */
    float first, second;  /* MaxPool's first two outputs, where there are */
  } cases[] = {
      {NULL, 1, 2, 2, 1, 0, 1, 1, 0},         {NULL, 1, 3, 2, 1, 0, 0, 0, 0},
      {NULL, 1, 3, 1, 1, 0, -1, 0, 0},        {NULL, 1, 4, 2, 1, 0, 0, 0, 0},
      {NULL, 1, 5, 2, 1, 0, -1, 0, 0},        {NULL, 1, 2, 2, 2, 0, 0, 0, 0},
      {NULL, 1, 2, 2, 1, 1, 1, 1, 0},         {NULL, 4, 3, 2, 1, 1, 2, 3, 4},
      {"VALID", 1, 2, 2, 1, 0, 1, 1, 0},      {"VALID", 1, 3, 2, 1, 0, 0, 0, 0},
      {"VALID", 2, 4, 1, 1, 0, -1, 0, 0},     {"SAME_UPPER", 5, 3, 1, 2, 0, 3, 4, 5},
      {"SAME_LOWER", 5, 3, 1, 2, 0, 3, 4, 5}, {"SAME_UPPER", 5, 3, 2, 2, 0, 2, 4, 4},
      {"SAME_UPPER", 7, 2, 3, 3, 0, 2, 4, 7}, {"SAME_UPPER", 6, 1, 3, 1, 0, -1, 0, 0},
      {"SAME_LOWER", 7, 2, 4, 1, 0, 2, 2, 6}, {"SAME_UPPER", 5, 1, 3, 1, 0, 2, 1, 4},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    pool_cfg c = {.op = ACTX_BF16_OP_MAX_POOL, .k = 1, .kernel = {cases[i].kernel},
                  .stride = {cases[i].stride}, .dil = {cases[i].dil}, .auto_pad = cases[i].auto_pad,
                  .ceil_mode = cases[i].ceil, .count_include_pad = -1, .storage_order = -1,
                  .set_strides = true, .set_dil = true};
    uint16_t x[8];
    for (int64_t k = 0; k < cases[i].in; k++) x[k] = bf((float)(k + 1));
    const int64_t d3[3] = {1, 1, cases[i].in};
    const actx_bf16_node n = cfg_node(&c);
    actx_tensor in[1] = {tensor_bf16(shape_of(3, d3), x)}, out[1];
    if (cases[i].out < 0) {
      CHECK_FAILS(&n, in, 1, 1, "negative");
      continue;
    }
    const char *why = "";
    const actx_status st = run_node(&n, in, 1, out, 1, NULL, &why);
    CHECK(st == ACTX_OK);
    if (st != ACTX_OK) {
      fprintf(stderr, "  case %zu refused: %s\n", i, why);
      continue;
    }
    CHECK(out[0].shape.dims[2] == cases[i].out);
    const uint16_t *y = out[0].data;
    if (cases[i].out >= 1) CHECK(y[0] == bf(cases[i].first));
    if (cases[i].out >= 2) CHECK(y[1] == bf(cases[i].second));
    outputs_free(out, 1);
  }
}

/* AveragePool's windows on pads only (a dilated kernel): 0, as ORT 1.30 gives (measured: input
 * 1..in, pads 1 and 1, dilation 2). */
static void test_ort_empty_average(void) {
  static const struct {
    int64_t in, kernel, stride;
    int ceil;
    float want[2];
  } cases[] = {{1, 2, 1, 0, {0, 0}}, {3, 2, 3, 1, {2, 3}}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const pool_cfg c = {.op = ACTX_BF16_OP_AVERAGE_POOL, .k = 1, .kernel = {cases[i].kernel},
                        .stride = {cases[i].stride}, .dil = {2}, .pb = {1}, .pe = {1},
                        .ceil_mode = cases[i].ceil, .count_include_pad = -1,
                        .storage_order = -1, .set_strides = true, .set_dil = true,
                        .set_pads = true};
    uint16_t x[4];
    for (int64_t k = 0; k < cases[i].in; k++) x[k] = bf((float)(k + 1));
    const int64_t d3[3] = {1, 1, cases[i].in};
    const actx_bf16_node n = cfg_node(&c);
    actx_tensor in[1] = {tensor_bf16(shape_of(3, d3), x)}, out[1];
    const char *why = "";
    CHECK(run_node(&n, in, 1, out, 1, NULL, &why) == ACTX_OK);
    if (out[0].data == NULL) continue;
    const uint16_t *y = out[0].data;
    for (int64_t k = 0; k < out[0].shape.dims[2] && k < 2; k++) CHECK(y[k] == bf(cases[i].want[k]));
    outputs_free(out, 1);
  }
}

static void test_known(void) {
  /* ONNX's maxpool_2d_ceil: 4x4 of 1..16, kernel 3, stride 2, ceil -> [[11,12],[15,16]] */
  uint16_t x[25];
  for (int i = 0; i < 16; i++) x[i] = bf((float)(i + 1));
  pool_cfg c = {.op = ACTX_BF16_OP_MAX_POOL, .k = 2, .kernel = {3, 3}, .stride = {2, 2},
                .dil = {1, 1}, .ceil_mode = 1, .count_include_pad = -1, .storage_order = -1,
                .set_strides = true, .indices = true};
  const int64_t d4[4] = {1, 1, 4, 4};
  actx_bf16_node n = cfg_node(&c);
  actx_tensor in[1] = {tensor_bf16(shape_of(4, d4), x)}, out[2];
  const char *why = "";
  CHECK(run_node(&n, in, 1, out, 2, NULL, &why) == ACTX_OK);
  if (out[0].data) {
    const uint16_t *y = out[0].data;
    const int64_t *ix = out[1].data;
    CHECK(out[0].shape.dims[2] == 2 && out[0].shape.dims[3] == 2);
    CHECK(y[0] == bf(11) && y[1] == bf(12) && y[2] == bf(15) && y[3] == bf(16));
    CHECK(ix[0] == 10 && ix[1] == 11 && ix[2] == 14 && ix[3] == 15);
    outputs_free(out, 2);
  }
  c.storage_order = 1; /* column-major indices: h + w·H */
  n = cfg_node(&c);
  CHECK(run_node(&n, in, 1, out, 2, NULL, &why) == ACTX_OK);
  if (out[0].data) {
    const int64_t *ix = out[1].data;
    CHECK(ix[0] == 10 && ix[1] == 14 && ix[2] == 11 && ix[3] == 15);
    outputs_free(out, 2);
  }
  c.ceil_mode = 0; /* floor: one window */
  n = cfg_node(&c);
  CHECK(run_node(&n, in, 1, out, 2, NULL, &why) == ACTX_OK);
  if (out[0].data) {
    CHECK(out[0].shape.dims[2] == 1 && *(uint16_t *)out[0].data == bf(11));
    outputs_free(out, 2);
  }
  /* between equal values the first met: -0 and +0 compare equal, so a window of zeros (the
   * rest negative) gives the sign of its first zero, in row-major window order; with and
   * without Indices (two code paths), and a stride of 2 (a third) */
  for (int ind = 0; ind < 2; ind++)
    for (int stride = 1; stride <= 2; stride++) {
      const uint16_t z[8] = {bf(-1), 0x8000, 0x0000, bf(-2), 0x0000, 0x8000, bf(-3), bf(-4)};
      pool_cfg zc = {.op = ACTX_BF16_OP_MAX_POOL, .k = 2, .kernel = {1, 3},
                     .stride = {1, stride}, .dil = {1, 1}, .pb = {0, 1}, .pe = {0, 1},
                     .ceil_mode = -1, .count_include_pad = -1, .storage_order = -1,
                     .set_strides = true, .set_pads = true, .indices = ind == 1};
      const int64_t dz[4] = {1, 1, 1, 8};
      actx_tensor zin[1] = {tensor_bf16(shape_of(4, dz), (uint16_t *)z)};
      n = cfg_node(&zc);
      CHECK(run_node(&n, zin, 1, out, n.n_outputs, NULL, &why) == ACTX_OK);
      if (out[0].data) {
        /* windows (pad, -1, -0) (-1, -0, +0) (-0, +0, -2) (+0, -2, +0) (-2, +0, -0) ... */
        const uint16_t want[8] = {0x8000, 0x8000, 0x8000, 0x0000, 0x0000, 0x0000, 0x8000,
                                  bf(-3)};
        const uint16_t *y = out[0].data;
        for (int64_t i = 0; i < out[0].shape.dims[3]; i++) CHECK(y[i] == want[i * stride]);
        outputs_free(out, n.n_outputs);
      }
    }
  /* ONNX's averagepool_2d_pads_count_include_pad: 5x5 of 1..25, kernel 3, pads 2 -> 7x7;
   * the corner is (1 + 2 + 6 + 7) / 9 with the pads counted, / 4 without */
  for (int i = 0; i < 25; i++) x[i] = bf((float)(i + 1));
  const int64_t d5[4] = {1, 1, 5, 5};
  in[0] = tensor_bf16(shape_of(4, d5), x);
  for (int cip = 0; cip < 2; cip++) {
    pool_cfg a = {.op = ACTX_BF16_OP_AVERAGE_POOL, .k = 2, .kernel = {3, 3}, .stride = {1, 1},
                  .dil = {1, 1}, .pb = {2, 2}, .pe = {2, 2}, .ceil_mode = -1,
                  .count_include_pad = cip, .storage_order = -1, .set_pads = true};
    n = cfg_node(&a);
    CHECK(run_node(&n, in, 1, out, 1, NULL, &why) == ACTX_OK);
    if (out[0].data) {
      CHECK(out[0].shape.dims[2] == 7 && out[0].shape.dims[3] == 7);
      CHECK(((uint16_t *)out[0].data)[0] == bf(cip ? 1.0f / 9.0f : 1.0f)); /* one position */
      CHECK(((uint16_t *)out[0].data)[8] == bf(cip ? 16.0f / 9.0f : 4.0f));
      outputs_free(out, 1);
    }
  }
}

static void test_global_and_edges(void) {
  /* global pools over 1, 2 and 3 spatial dims, and an empty spatial extent */
  for (int gi = 0; gi < 2; gi++) {
    const actx_bf16_op op = gi ? ACTX_BF16_OP_GLOBAL_MAX_POOL : ACTX_BF16_OP_GLOBAL_AVERAGE_POOL;
    for (size_t k = 1; k <= 3; k++) {
      int64_t dims[5] = {2, 3, 4, 5, 6};
      const actx_shape xs = shape_of(2 + k, dims);
      const int64_t n = actx_shape_elements(&xs);
      uint16_t *x = malloc((size_t)n * 2);
      fill_uniform(x, (size_t)n, -3.0f, 5.0f);
      pool_cfg c = {.op = op, .ceil_mode = -1, .count_include_pad = -1, .storage_order = -1};
      check_pool(&c, &xs, x);
      free(x);
    }
    const int64_t ed[4] = {1, 2, 0, 3};
    actx_bf16_node n = node_make(op, 22, 1, (const actx_elem[]){ACTX_ELEM_BF16}, 1);
    actx_tensor in[1] = {tensor_bf16(shape_of(4, ed), NULL)}, out[1];
    const char *why = "";
    CHECK(run_node(&n, in, 1, out, 1, NULL, &why) == ACTX_OK);
    if (out[0].data) {
      const uint16_t *y = out[0].data;
      CHECK(out[0].shape.dims[2] == 1 && out[0].shape.dims[3] == 1);
      CHECK(gi ? y[0] == 0xFF80 && y[1] == 0xFF80 : bf_is_nan(y[0]) && bf_is_nan(y[1]));
      outputs_free(out, 1);
    }
  }
  /* NaN, inf, signed zeros in windows */
  const uint16_t qnan = 0xFFC3, pinf = 0x7F80, ninf = 0xFF80;
  uint16_t x[8] = {bf(1), qnan, bf(3), bf(2), 0x8000, 0x0000, ninf, pinf};
  const int64_t d3[3] = {1, 1, 8};
  const actx_shape xs = shape_of(3, d3);
  for (int op = 0; op < 2; op++) {
    pool_cfg c = {.op = op ? ACTX_BF16_OP_MAX_POOL : ACTX_BF16_OP_AVERAGE_POOL, .k = 1,
                  .kernel = {2}, .stride = {2}, .dil = {1}, .ceil_mode = -1,
                  .count_include_pad = -1, .storage_order = -1, .set_strides = true,
                  .indices = op == 1};
    check_pool(&c, &xs, x); /* [1,NaN] [3,2] [-0,+0] [-inf,inf] */
    actx_bf16_node n = cfg_node(&c);
    actx_tensor in[1] = {tensor_bf16(xs, x)}, out[2];
    const char *why = "";
    CHECK(run_node(&n, in, 1, out, n.n_outputs, NULL, &why) == ACTX_OK);
    if (out[0].data) {
      const uint16_t *y = out[0].data;
      CHECK((op ? y[0] == qnan : bf_is_nan(y[0])) && (op ? y[1] == bf(3) : y[1] == bf(2.5f)));
      CHECK(op ? y[2] == 0x8000 : y[2] == 0x0000); /* max keeps the first zero; -0 + +0 = +0 */
      CHECK(op ? y[3] == pinf : bf_is_nan(y[3]));
      if (op) CHECK(((int64_t *)out[1].data)[0] == 1 && ((int64_t *)out[1].data)[2] == 4);
      outputs_free(out, n.n_outputs);
    }
  }
  /* empty batch: nothing to do */
  const int64_t e0[4] = {0, 3, 4, 4};
  pool_cfg c = {.op = ACTX_BF16_OP_MAX_POOL, .k = 2, .kernel = {2, 2}, .stride = {1, 1},
                .dil = {1, 1}, .ceil_mode = -1, .count_include_pad = -1, .storage_order = -1};
  check_pool(&c, &(actx_shape){4, {e0[0], e0[1], e0[2], e0[3]}}, NULL);
}

static void test_bad(void) {
  uint16_t buf[64] = {0};
  const int64_t d4[4] = {1, 1, 3, 3}, d3[3] = {1, 1, 3};
  actx_tensor in[1] = {tensor_bf16(shape_of(4, d4), buf)};
  pool_cfg base = {.op = ACTX_BF16_OP_MAX_POOL, .k = 2, .kernel = {2, 2}, .stride = {1, 1},
                   .dil = {1, 1}, .ceil_mode = -1, .count_include_pad = -1, .storage_order = -1};
  pool_cfg c = base;
  c.kernel[0] = 5; /* kernel past the input by 2 strides, no pad: a negative size (ORT's) */
  actx_bf16_node n = cfg_node(&c);
  CHECK_FAILS(&n, in, 1, 1, "negative output size");
  c = base;
  c.set_pads = true;
  c.pb[0] = 2;
  n = cfg_node(&c);
  CHECK_FAILS(&n, in, 1, 1, "smaller than the kernel");
  c.pb[0] = -1;
  n = cfg_node(&c);
  CHECK_FAILS(&n, in, 1, 1, "pads must be >= 0");
  c = base;
  c.set_strides = true;
  c.stride[1] = 0;
  n = cfg_node(&c);
  CHECK_FAILS(&n, in, 1, 1, "strides");
  c = base;
  c.set_dil = true;
  c.dil[0] = 0;
  n = cfg_node(&c);
  CHECK_FAILS(&n, in, 1, 1, "dilations");
  c = base;
  c.kernel[1] = 0;
  n = cfg_node(&c);
  CHECK_FAILS(&n, in, 1, 1, "kernel_shape");
  n = cfg_node(&base);
  n.attrs.has_kernel_shape = false;
  CHECK_FAILS(&n, in, 1, 1, "kernel_shape must be set");
  n = cfg_node(&base);
  n.attrs.has_strides = true;
  n.attrs.n_strides = 1;
  CHECK_FAILS(&n, in, 1, 1, "one value per kernel dim");
  n = cfg_node(&base);
  n.attrs.has_pads = true;
  n.attrs.n_pads = 2;
  CHECK_FAILS(&n, in, 1, 1, "two values per kernel dim");
  c = base;
  c.auto_pad = "SAME";
  n = cfg_node(&c);
  CHECK_FAILS(&n, in, 1, 1, "auto_pad must be");
  c.auto_pad = "VALID";
  c.set_pads = true;
  c.pb[0] = 1;
  n = cfg_node(&c);
  CHECK_FAILS(&n, in, 1, 1, "not allowed with auto_pad");
  c = base;
  c.ceil_mode = 2;
  n = cfg_node(&c);
  CHECK_FAILS(&n, in, 1, 1, "ceil_mode");
  c = base;
  c.storage_order = 3;
  n = cfg_node(&c);
  CHECK_FAILS(&n, in, 1, 1, "storage_order");
  c = base;
  c.op = ACTX_BF16_OP_AVERAGE_POOL;
  c.storage_order = 0;
  n = cfg_node(&c);
  CHECK_FAILS(&n, in, 1, 1, "MaxPool only");
  c = base;
  c.count_include_pad = 1;
  n = cfg_node(&c);
  CHECK_FAILS(&n, in, 1, 1, "AveragePool only");
  c.op = ACTX_BF16_OP_AVERAGE_POOL;
  c.count_include_pad = 5;
  n = cfg_node(&c);
  CHECK_FAILS(&n, in, 1, 1, "count_include_pad must be");
  /* ranks: kernel 2-D on a 1-D input, a [N, C] input */
  n = cfg_node(&base);
  actx_tensor in3[1] = {tensor_bf16(shape_of(3, d3), buf)};
  CHECK_FAILS(&n, in3, 1, 1, "rank");
  actx_tensor in2[1] = {tensor_bf16(shape_of(2, d3), buf)};
  CHECK_FAILS(&n, in2, 1, 1, "[N, C, spatial...]");
  n = node_make(ACTX_BF16_OP_GLOBAL_AVERAGE_POOL, 22, 1, (const actx_elem[]){ACTX_ELEM_BF16}, 1);
  CHECK_FAILS(&n, in2, 1, 1, "[N, C, spatial...]");
  n = node_make(ACTX_BF16_OP_GLOBAL_MAX_POOL, 22, 1, (const actx_elem[]){ACTX_ELEM_F32}, 1);
  CHECK_FAILS(&n, in, 1, 1, "bfloat16");
  n = node_make(ACTX_BF16_OP_MAX_POOL, 12, 1, (const actx_elem[]){ACTX_ELEM_BF16}, 1);
  CHECK_FAILS(&n, in, 1, 1, "version");
  n = node_make(ACTX_BF16_OP_AVERAGE_POOL, 22, 1, (const actx_elem[]){ACTX_ELEM_BF16}, 2);
  CHECK_FAILS(&n, in, 1, 2, "outputs");
}

/* big enough to split over threads: the split changes nothing, Indices included */
static void test_split(void) {
  const int64_t d4[4] = {4, 16, 40, 40};
  uint16_t *x = malloc(4 * 16 * 40 * 40 * 2);
  fill_uniform(x, 4 * 16 * 40 * 40, -5.0f, 5.0f);
  actx_tensor in[1] = {tensor_bf16(shape_of(4, d4), x)};
  const actx_bf16_op ops[4] = {ACTX_BF16_OP_MAX_POOL, ACTX_BF16_OP_AVERAGE_POOL,
                               ACTX_BF16_OP_GLOBAL_MAX_POOL, ACTX_BF16_OP_GLOBAL_AVERAGE_POOL};
  for (int i = 0; i < 4; i++) {
    pool_cfg c = {.op = ops[i], .k = 2, .kernel = {5, 5}, .stride = {1, 1}, .dil = {1, 1},
                  .pb = {2, 2}, .pe = {2, 2}, .ceil_mode = -1, .count_include_pad = -1,
                  .storage_order = -1, .set_pads = i < 2, .indices = i == 0};
    const actx_bf16_node n = cfg_node(&c);
    CHECK_SPLIT_SAME(&n, in, 1, n.n_outputs);
  }
  free(x);
}

int main(void) {
  test_split();
  test_random();
  test_across();
  test_known();
  test_ort_sizes();
  test_ort_empty_average();
  test_global_and_edges();
  test_bad();
  return test_exit("test_bf16_pool", windows_checked,
                   "windows checked against the reference, edges and refusals");
}
