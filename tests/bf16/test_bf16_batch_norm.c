/* BatchNormalization in bfloat16 (src/bf16/bf16_batch_norm.c) against the formula it states,
 * written out here in float32: a = (1 / sqrtf(var + eps)) * scale, b = B - mean * a,
 * y = round(x * a + b), to the bit (every non-NaN result; a NaN result is x's own NaN made quiet
 * where x is one, else any NaN), and within two bfloat16 steps of the same value in double
 * where it is finite. Shapes of rank 1 to 5, statistics in bfloat16 and float32 mixed, edge
 * values (NaN, inf, -0, subnormals, a negative variance), split and unsplit runs, in place, at
 * odd addresses; then what is refused, at creation and at the run. */
#include "bf16_test_run.h"

enum { N_IN = 5 };

static uint16_t expected(float x, float g, float b, float m, float v, float eps, bool *any_nan) {
  const float a = (1.0f / sqrtf(v + eps)) * g;
  const float off = b - m * a;
  const float t = x * a + off;
  *any_nan = false;
  if (x != x) return actx_f32_to_bf16(x); /* quiet, sign and payload kept */
  if (t != t) *any_nan = true;
  return actx_f32_to_bf16(t);
}

/* A statistic of c channels in elem (bfloat16 or float32), from float values already
 * representable in bfloat16 where elem is bfloat16. */
typedef struct stat {
  actx_elem elem;
  uint16_t h[64];
  float f[64];
} stat;

static float stat_value(const stat *s, int64_t c) {
  return s->elem == ACTX_ELEM_F32 ? s->f[c] : fb(s->h[c]);
}

static void stat_fill(stat *s, actx_elem elem, int64_t c, float lo, float hi) {
  s->elem = elem;
  for (int64_t i = 0; i < c; i++) {
    s->f[i] = rng_uniform(lo, hi);
    s->h[i] = bf(s->f[i]);
  }
}

static actx_tensor stat_tensor(stat *s, int64_t c) {
  const int64_t dims[1] = {c};
  return (actx_tensor){.elem = s->elem, .shape = shape_of(1, dims),
                       .data = s->elem == ACTX_ELEM_F32 ? (void *)s->f : (void *)s->h};
}

static actx_bf16_node bn_node(int version, const stat *st, float eps, bool set_eps) {
  const actx_elem elems[N_IN] = {ACTX_ELEM_BF16, st[0].elem, st[1].elem, st[2].elem, st[3].elem};
  actx_bf16_node n = node_make(ACTX_BF16_OP_BATCH_NORM, version, N_IN, elems, 1);
  n.attrs.has_epsilon = set_eps;
  n.attrs.epsilon = eps;
  return n;
}

static int checked;

/* One case: X of the given shape, edge values mixed in; run split (test_par) or not, in place
 * or not, X at an odd address or not. */
static void check_case(size_t rank, const int64_t *dims, const actx_elem *elems, bool edges,
                       const actx_parallel *par, bool in_place, bool odd) {
  const int64_t channels = rank == 1 ? 1 : dims[1];
  int64_t n = 1;
  for (size_t d = 0; d < rank; d++) n *= dims[d];
  const int64_t inner = rank == 1 ? n : (channels > 0 ? n / (dims[0] * channels) : 0);
  stat st[4];
  stat_fill(&st[0], elems[0], channels, -2.0f, 2.0f);  /* scale */
  stat_fill(&st[1], elems[1], channels, -1.0f, 1.0f);  /* B */
  stat_fill(&st[2], elems[2], channels, -3.0f, 3.0f);  /* mean */
  stat_fill(&st[3], elems[3], channels, 0.0f, 4.0f);   /* var */
  if (edges && channels >= 3) {
    st[3].f[1] = -0.5f; /* below -eps: a NaN channel */
    st[3].h[1] = bf(-0.5f);
    st[0].f[2] = 0.0f; /* a zero scale */
    st[0].h[2] = 0;
  }
  const float eps = 1e-3f;
  unsigned char *buf = malloc((size_t)(2 * n + 2)), *ybuf = malloc((size_t)(2 * n + 2));
  uint16_t *x = malloc((size_t)(n > 0 ? n : 1) * 2);
  for (int64_t i = 0; i < n; i++) x[i] = bf(rng_uniform(-5.0f, 5.0f));
  if (edges) {
    static const uint16_t specials[] = {0x7FC0, 0xFF81, 0x7F80, 0xFF80, 0x8000, 0x0001,
                                        0x807F, 0x7F7F, 0x0000};
    for (int64_t i = 0; i < n; i += 7) x[i] = specials[(i / 7) % 9];
  }
  unsigned char *xp = buf + (odd ? 1 : 0);
  memcpy(xp, x, (size_t)n * 2);
  actx_tensor in[N_IN] = {{.elem = ACTX_ELEM_BF16, .shape = shape_of(rank, dims), .data = xp}};
  for (int k = 0; k < 4; k++) in[1 + k] = stat_tensor(&st[k], channels);
  actx_bf16_node node = bn_node(15, st, eps, true);
  actx_bf16_kernel *kernel = NULL;
  const char *why = NULL;
  CHECK(actx_bf16_kernel_create(&node, &kernel, &why) == ACTX_OK);
  actx_tensor out[1];
  CHECK(actx_bf16_kernel_shapes(kernel, in, N_IN, out, 1, &why) == ACTX_OK);
  CHECK(out[0].elem == ACTX_ELEM_BF16 && out[0].shape.rank == rank);
  out[0].data = in_place ? xp : ybuf + (odd ? 1 : 0);
  CHECK(actx_bf16_kernel_run(kernel, in, N_IN, out, 1, par, &why) == ACTX_OK);
  const unsigned char *y = out[0].data;
  int bad = 0;
  for (int64_t i = 0; i < n; i++) {
    const int64_t c = rank == 1 ? 0 : (i / inner) % channels;
    bool any_nan = false;
    const float xi = fb(x[i]);
    const uint16_t want = expected(xi, stat_value(&st[0], c), stat_value(&st[1], c),
                                   stat_value(&st[2], c), stat_value(&st[3], c), eps, &any_nan);
    uint16_t got;
    memcpy(&got, y + 2 * i, 2);
    const bool ok = any_nan ? bf_is_nan(got) : got == want;
    /* the double value, where it is finite and not near bfloat16's edges */
    const double a = 1.0 / sqrt((double)stat_value(&st[3], c) + eps) * stat_value(&st[0], c);
    const double t = (double)xi * a + (stat_value(&st[1], c) - stat_value(&st[2], c) * a);
    const bool close = !isfinite(t) || fabs(t) > 1e30 || fabs(t) < 1e-30 ||
                       fabs(fb(got) - t) <= fabs(t) * 0x1p-7 + 1e-6;
    if ((!ok || !close) && bad++ < 4)
      fprintf(stderr, "  rank %zu [%lld] x %a c %lld: got 0x%04x want 0x%04x (double %a)\n", rank,
              (long long)i, xi, (long long)c, got, want, t);
    checked++;
  }
  CHECK(bad == 0);
  actx_bf16_kernel_destroy(kernel);
  free(buf);
  free(ybuf);
  free(x);
}

static void test_values(void) {
  const actx_elem all_bf16[4] = {ACTX_ELEM_BF16, ACTX_ELEM_BF16, ACTX_ELEM_BF16, ACTX_ELEM_BF16};
  const actx_elem mixed[4] = {ACTX_ELEM_BF16, ACTX_ELEM_F32, ACTX_ELEM_F32, ACTX_ELEM_BF16};
  const actx_elem all_f32[4] = {ACTX_ELEM_F32, ACTX_ELEM_F32, ACTX_ELEM_F32, ACTX_ELEM_F32};
  const int64_t d4[4] = {2, 3, 5, 7}, d3[3] = {1, 16, 9}, d1[1] = {37}, d2[2] = {4, 6},
                d5[5] = {1, 2, 3, 4, 5}, big[4] = {2, 8, 64, 64};
  check_case(4, d4, all_bf16, true, NULL, false, false);
  check_case(3, d3, mixed, true, NULL, false, true);
  check_case(1, d1, all_f32, true, NULL, true, false);
  check_case(2, d2, mixed, false, NULL, false, false);
  check_case(5, d5, all_bf16, true, NULL, true, true);
  const size_t calls = par_calls;
  check_case(4, big, mixed, true, &test_par, false, false);
  CHECK(par_calls == calls + 1 && last_num_tasks > 1); /* 128 Ki elements: split */
  check_case(4, big, all_bf16, true, &test_par, true, true);
}

/* A scale of NaN, a variance of exactly -eps (1 / sqrt(0) = inf): the per-channel constants'
 * own non-finite values. And a channel whose offset cancels x·a exactly at x = 3 (a = 1/√2,
 * rounded, so x·a rounds; b = -(3·a)): +0 there, where an fma would leave x·a's rounding error. */
static void test_channel_edges(void) {
  const int64_t dims[4] = {1, 3, 1, 4};
  uint16_t x[12] = {bf(1.0f), bf(-2.0f), 0,        0x8000,    bf(3.0f), bf(0.5f),
                    0,        bf(-1.0f), bf(3.0f), bf(1.5f), bf(-3.0f), 0x8000};
  uint16_t g[3] = {0x7FC1, bf(1.0f), bf(1.0f)}, b[3] = {0, 0, 0};
  uint16_t m[3] = {0, bf(0.5f), bf(3.0f)}, v[3] = {bf(1.0f), bf(-0.25f), bf(1.75f)};
  const int64_t c3[1] = {3};
  actx_tensor in[N_IN] = {tensor_bf16(shape_of(4, dims), x), tensor_bf16(shape_of(1, c3), g),
                          tensor_bf16(shape_of(1, c3), b), tensor_bf16(shape_of(1, c3), m),
                          tensor_bf16(shape_of(1, c3), v)};
  const actx_elem elems[N_IN] = {ACTX_ELEM_BF16, ACTX_ELEM_BF16, ACTX_ELEM_BF16, ACTX_ELEM_BF16,
                                 ACTX_ELEM_BF16};
  actx_bf16_node node = node_make(ACTX_BF16_OP_BATCH_NORM, 14, N_IN, elems, 1);
  node.attrs.has_epsilon = true;
  node.attrs.epsilon = 0.25f;
  actx_tensor out[1];
  const char *why = NULL;
  CHECK(run_node(&node, in, N_IN, out, 1, NULL, &why) == ACTX_OK);
  uint16_t y[12];
  memcpy(y, out[0].data, sizeof y);
  free(out[0].data);
  /* channel 0: the scale's NaN, made quiet, everywhere */
  for (int i = 0; i < 4; i++) CHECK(y[i] == 0x7FC1);
  /* channel 1: a = inf, b = 0 - 0.5·inf = -inf */
  CHECK(bf_is_nan(y[4]));       /* 3·inf - inf */
  CHECK(bf_is_nan(y[5]));       /* 0.5·inf - inf */
  CHECK(bf_is_nan(y[6]));       /* 0·inf */
  CHECK(y[7] == bf(-INFINITY)); /* -inf - inf */
  /* channel 2 */
  CHECK(y[8] == 0x0000);
  for (int i = 9; i < 12; i++) {
    bool any_nan = false;
    CHECK(y[i] == expected(fb(x[i]), 1.0f, 0.0f, 3.0f, 1.75f, 0.25f, &any_nan) && !any_nan);
  }
}

static void test_refusals(void) {
  const actx_elem ok_elems[N_IN] = {ACTX_ELEM_BF16, ACTX_ELEM_BF16, ACTX_ELEM_F32, ACTX_ELEM_BF16,
                                    ACTX_ELEM_F32};
  actx_bf16_kernel *k = NULL;
  const char *why = NULL;
  actx_bf16_node n = node_make(ACTX_BF16_OP_BATCH_NORM, 15, N_IN, ok_elems, 1);
  n.attrs.has_training_mode = true;
  n.attrs.training_mode = 1;
  CHECK(actx_bf16_kernel_create(&n, &k, &why) == ACTX_ERROR_INVALID_ARGUMENT && k == NULL);
  CHECK(strstr(why, "training") != NULL);
  n.attrs.training_mode = 0;
  n.attrs.has_epsilon = true;
  const float bad_eps[3] = {-1e-5f, NAN, INFINITY};
  for (int i = 0; i < 3; i++) {
    n.attrs.epsilon = bad_eps[i];
    CHECK(actx_bf16_kernel_create(&n, &k, &why) == ACTX_ERROR_INVALID_ARGUMENT);
  }
  n = node_make(ACTX_BF16_OP_BATCH_NORM, 9, N_IN, ok_elems, 1); /* no bfloat16 before 14 */
  CHECK(actx_bf16_kernel_create(&n, &k, &why) == ACTX_ERROR_INVALID_ARGUMENT);
  n = node_make(ACTX_BF16_OP_BATCH_NORM, 15, 4, ok_elems, 1);
  CHECK(actx_bf16_kernel_create(&n, &k, &why) == ACTX_ERROR_INVALID_ARGUMENT);
  n = node_make(ACTX_BF16_OP_BATCH_NORM, 15, N_IN, ok_elems, 3); /* training's outputs */
  CHECK(actx_bf16_kernel_create(&n, &k, &why) == ACTX_ERROR_INVALID_ARGUMENT);
  actx_elem i64_stats[N_IN] = {ACTX_ELEM_BF16, ACTX_ELEM_BF16, ACTX_ELEM_BF16, ACTX_ELEM_I64,
                               ACTX_ELEM_BF16};
  n = node_make(ACTX_BF16_OP_BATCH_NORM, 15, N_IN, i64_stats, 1);
  CHECK(actx_bf16_kernel_create(&n, &k, &why) == ACTX_ERROR_INVALID_ARGUMENT);

  /* at the run: statistics of the wrong length or rank, X of rank 0 or float32 */
  n = node_make(ACTX_BF16_OP_BATCH_NORM, 15, N_IN, ok_elems, 1);
  CHECK(actx_bf16_kernel_create(&n, &k, &why) == ACTX_OK);
  uint16_t x[12] = {0}, s16[4] = {0};
  float s32[4] = {0};
  const int64_t dx[3] = {1, 3, 4}, d3[1] = {3}, d4[1] = {4}, d13[2] = {1, 3};
  actx_tensor in[N_IN] = {tensor_bf16(shape_of(3, dx), x), tensor_bf16(shape_of(1, d3), s16),
                          {.elem = ACTX_ELEM_F32, .shape = shape_of(1, d3), .data = s32},
                          tensor_bf16(shape_of(1, d3), s16),
                          {.elem = ACTX_ELEM_F32, .shape = shape_of(1, d3), .data = s32}};
  actx_tensor out[1];
  CHECK(actx_bf16_kernel_shapes(k, in, N_IN, out, 1, &why) == ACTX_OK);
  in[1].shape = shape_of(1, d4);
  CHECK(actx_bf16_kernel_shapes(k, in, N_IN, out, 1, &why) == ACTX_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(why, "channels") != NULL);
  in[1].shape = shape_of(2, d13);
  CHECK(actx_bf16_kernel_shapes(k, in, N_IN, out, 1, &why) == ACTX_ERROR_INVALID_ARGUMENT);
  in[1].shape = shape_of(1, d3);
  in[0].shape.rank = 0;
  CHECK(actx_bf16_kernel_shapes(k, in, N_IN, out, 1, &why) == ACTX_ERROR_INVALID_ARGUMENT);
  in[0].shape = shape_of(3, dx);
  in[0].elem = ACTX_ELEM_F32;
  CHECK(actx_bf16_kernel_shapes(k, in, N_IN, out, 1, &why) == ACTX_ERROR_INVALID_ARGUMENT);
  in[0].elem = ACTX_ELEM_BF16;
  /* the run checks as much: a good output, then each fault alone */
  uint16_t y[12];
  CHECK(actx_bf16_kernel_shapes(k, in, N_IN, out, 1, &why) == ACTX_OK);
  out[0].data = y;
  CHECK(actx_bf16_kernel_run(k, in, N_IN, out, 1, NULL, &why) == ACTX_OK);
  CHECK(actx_bf16_kernel_run(k, in, 4, out, 1, NULL, &why) == ACTX_ERROR_INVALID_ARGUMENT);
  in[4].shape = shape_of(1, d4); /* var of 4 channels */
  CHECK(actx_bf16_kernel_run(k, in, N_IN, out, 1, NULL, &why) == ACTX_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(why, "channels") != NULL);
  in[4].shape = shape_of(1, d3);
  out[0].shape.dims[2] = 3; /* an output not of X's shape */
  CHECK(actx_bf16_kernel_run(k, in, N_IN, out, 1, NULL, &why) == ACTX_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(why, "not the shape of X") != NULL);
  out[0].shape.dims[2] = 4;
  out[0].data = NULL;
  CHECK(actx_bf16_kernel_run(k, in, N_IN, out, 1, NULL, &why) == ACTX_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(why, "no data") != NULL);
  /* empty: no batch, no positions, no channels (statistics of 0) */
  const int64_t e0[3] = {0, 3, 4}, e1[3] = {1, 3, 0}, e2[3] = {2, 0, 5}, d0[1] = {0};
  const int64_t *empties[3] = {e0, e1, e2};
  for (int e = 0; e < 3; e++) {
    in[0] = (actx_tensor){.elem = ACTX_ELEM_BF16, .shape = shape_of(3, empties[e]), .data = NULL};
    for (int s = 1; s < N_IN; s++) in[s].shape = shape_of(1, e == 2 ? d0 : d3);
    actx_tensor o[1];
    CHECK(actx_bf16_kernel_shapes(k, in, N_IN, o, 1, &why) == ACTX_OK);
    o[0].data = NULL;
    CHECK(actx_bf16_kernel_run(k, in, N_IN, o, 1, &test_par, &why) == ACTX_OK);
  }
  actx_bf16_kernel_destroy(k);
}

int main(void) {
  test_values();
  test_channel_edges();
  test_refusals();
  if (failures != 0) {
    fprintf(stderr, "test_bf16_batch_norm: %d failures\n", failures);
    return 1;
  }
  printf("test_bf16_batch_norm: %d values, checks passed\n", checked);
  return 0;
}
