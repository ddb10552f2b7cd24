/* bfloat16 models through the EP's second service (ep/bf16_*.c): ORT alone refuses them (its CPU
 * EP has no bfloat16 arithmetic); with the EP the session is created, every node runs on actx,
 * and the outputs are the plain reference: the model's float32 twin run by ORT alone on the
 * widened inputs, rounded once to bfloat16 (exact for the elementwise ops, NaN as NaN; MatMul
 * within the bound its float32 accumulation allows).
 *
 * usage: test_ep_bf16_session <absolute path of the EP library> [probe]
 *
 * Run on the real EP, an op whose family is not yet served is left to ORT: the session then
 * fails with ORT's error naming the node, and the case prints "skipped". Run on the test build
 * actx_ep_bf16_probe (argument "probe": Relu, Add and Mul by tests/ep/bf16_probe_families.c),
 * those cases must run, so the EP's plumbing (claim, registry, PrePackWeight of constant
 * inputs, ORT's pool) is tested whatever the real families are. Also: `none` takes nothing (ORT's
 * error), a float32 Add stays ORT's, a bad attribute leaves the node to ORT (whose error names
 * it), a float32 feed of a bfloat16 input is refused with a clear status, empty tensors, and two
 * threads running one session give the same bits as one. The bfloat16 activations (claim.c's)
 * go to actx under `auto` at every size. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ep_test.h"

static bool g_probe; /* the test build of the EP: the probe's ops must be served */

/* ---- models ------------------------------------------------------------------------------ */

typedef enum case_id {
  CASE_ADD_BROADCAST,
  CASE_MUL_BROADCAST_13,
  CASE_RELU,
  CASE_CHAIN,
  CASE_MATMUL,
  CASE_ERF,
  CASE_EMPTY,
  CASE_COUNT
} case_id;

typedef struct case_def {
  const char *label;
  size_t n_inputs;
  size_t rank[2];
  int64_t dims[2][4];
  size_t y_rank;
  int64_t y_dims[4];
  size_t n_nodes;
  const char *node_names[3];
  bool probe_serves;  /* the probe families run it */
  bool always_served; /* an activation: served by the activation service */
  bool matmul;        /* compared within MatMul's bound */
  bool specials;      /* inputs may hold ±0, ±inf, NaN */
} case_def;

static const case_def g_cases[CASE_COUNT] = {
    [CASE_ADD_BROADCAST] = {"Add [2,3,4] + [4]", 2, {3, 1}, {{2, 3, 4}, {4}}, 3, {2, 3, 4}, 1,
                            {"add"}, true, false, false, true},
    [CASE_MUL_BROADCAST_13] = {"Mul-13 [2,1,4] * [3,1]", 2, {3, 2}, {{2, 1, 4}, {3, 1}}, 3,
                               {2, 3, 4}, 1, {"mul"}, true, false, false, true},
    [CASE_RELU] = {"Relu [5,7]", 1, {2}, {{5, 7}}, 2, {5, 7}, 1, {"relu"}, true, false, false,
                   false},
    [CASE_CHAIN] = {"Add(W) -> Relu -> Mul(C) [64,256], constant W, C", 1, {2}, {{64, 256}}, 2,
                    {64, 256}, 3, {"add1", "relu1", "mul1"}, true, false, false, false},
    [CASE_MATMUL] = {"MatMul [2,3,16] x constant [16,8]", 1, {3}, {{2, 3, 16}}, 3, {2, 3, 8}, 1,
                     {"matmul"}, false, false, true, false},
    [CASE_ERF] = {"Erf [4,8] (the activation service)", 1, {2}, {{4, 8}}, 2, {4, 8}, 1, {"erf"},
                  true, true, false, true},
    [CASE_EMPTY] = {"Add [0,4] + [4]", 2, {2, 1}, {{0, 4}, {4}}, 2, {0, 4}, 1, {"add"}, true,
                    false, false, true},
};

/* splitmix64 */
static uint64_t next_random(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static float bf16_to_float(uint16_t h) {
  const uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* n bfloat16 values: uniform in [-8, 8] and, with specials, ±0, ±inf and NaN among them; never
 * 0 without specials (Relu's -0 and NaN are the families' to define, not this test's). */
static void fill(uint16_t *v, size_t n, uint64_t seed, bool specials) {
  static const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-40f, 3e38f};
  uint64_t s = seed;
  for (size_t i = 0; i < n; i++) {
    const uint64_t r = next_random(&s);
    float f = (float)((double)(r >> 11) / 9007199254740992.0 * 16.0 - 8.0);
    if (specials && (r & 15) == 0) f = special[(r >> 4) % 7];
    if (f == 0.0f && !specials) f = 0.5f;
    v[i] = ep_float_to_bf16(f);
  }
}

/* The case's model with every float tensor of elem_type (bfloat16, or float32 for the twin);
 * the constants are the same bfloat16 values, widened in the twin. */
static int build(case_id id, int32_t elem_type, uint8_t **bytes, size_t *size) {
  const case_def *c = &g_cases[id];
  actx_model *m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION,
                                    id == CASE_MUL_BROADCAST_13 ? 13 : 20, 0);
  if (m == NULL) return -1;
  static const char *const in_names[2] = {"x", "b"};
  for (size_t i = 0; i < c->n_inputs; i++)
    actx_model_add_input(m, in_names[i], elem_type, c->rank[i], c->dims[i], NULL);
  actx_model_add_output(m, "y", elem_type, c->y_rank, c->y_dims, NULL);
  const char *x_b[2] = {"x", "b"}, *y[1] = {"y"};
  switch (id) {
    case CASE_ADD_BROADCAST:
    case CASE_EMPTY: actx_model_add_named_node(m, "add", "Add", "", 2, x_b, 1, y); break;
    case CASE_MUL_BROADCAST_13: actx_model_add_named_node(m, "mul", "Mul", "", 2, x_b, 1, y); break;
    case CASE_RELU: actx_model_add_named_node(m, "relu", "Relu", "", 1, x_b, 1, y); break;
    case CASE_ERF: actx_model_add_named_node(m, "erf", "Erf", "", 1, x_b, 1, y); break;
    case CASE_CHAIN:
    case CASE_MATMUL: {
      const bool chain = id == CASE_CHAIN;
      /* W: [256] (chain) or [16, 8] */
      const int64_t w_dims[2] = {chain ? 256 : 16, 8}, c_dims[2] = {64, 1};
      const size_t w_n = chain ? 256 : 16 * 8;
      uint16_t w[256], cc[64];
      float wf[256], cf[64];
      fill(w, w_n, 7, false);
      fill(cc, 64, 8, false);
      for (size_t i = 0; i < w_n; i++) wf[i] = bf16_to_float(w[i]);
      for (size_t i = 0; i < 64; i++) cf[i] = bf16_to_float(cc[i]);
      const bool twin = elem_type == ACTX_ELEM_FLOAT;
      actx_model_add_initializer(m, "W", elem_type, chain ? 1 : 2, w_dims,
                                 twin ? (const void *)wf : (const void *)w);
      if (!chain) {
        const char *in[2] = {"x", "W"};
        actx_model_add_named_node(m, "matmul", "MatMul", "", 2, in, 1, y);
        break;
      }
      actx_model_add_initializer(m, "C", elem_type, 2, c_dims,
                                 twin ? (const void *)cf : (const void *)cc);
      const char *a_in[2] = {"x", "W"}, *a_out[1] = {"t1"}, *r_out[1] = {"t2"};
      const char *m_in[2] = {"t2", "C"};
      actx_model_add_named_node(m, "add1", "Add", "", 2, a_in, 1, a_out);
      actx_model_add_named_node(m, "relu1", "Relu", "", 1, a_out, 1, r_out);
      actx_model_add_named_node(m, "mul1", "Mul", "", 2, m_in, 1, y);
      break;
    }
    case CASE_COUNT: break;
  }
  const int rc = actx_model_serialize(m, bytes, size);
  if (rc != 0) printf("model %s: %s\n", c->label, actx_model_error(m));
  actx_model_free(m);
  return rc;
}

/* ---- running ----------------------------------------------------------------------------- */

typedef struct case_inputs {
  size_t n[2];
  uint16_t *bf16[2];
  float *f32[2];
  actx_ort_tensor t16[2], t32[2];
} case_inputs;

static void make_inputs(case_id id, case_inputs *in) {
  const case_def *c = &g_cases[id];
  memset(in, 0, sizeof *in);
  for (size_t i = 0; i < c->n_inputs; i++) {
    in->n[i] = ep_shape_count(c->rank[i], c->dims[i]);
    in->bf16[i] = malloc((in->n[i] + 1) * sizeof *in->bf16[i]);
    in->f32[i] = malloc((in->n[i] + 1) * sizeof *in->f32[i]);
    fill(in->bf16[i], in->n[i], 100 + 10 * (uint64_t)id + i, c->specials);
    for (size_t k = 0; k < in->n[i]; k++) in->f32[i][k] = bf16_to_float(in->bf16[i][k]);
    actx_ort_tensor t = {.rank = c->rank[i]};
    memcpy(t.dims, c->dims[i], c->rank[i] * sizeof t.dims[0]);
    in->t16[i] = t;
    in->t16[i].elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16;
    in->t16[i].data = in->bf16[i];
    in->t32[i] = t;
    in->t32[i].elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
    in->t32[i].data = in->f32[i];
  }
}

static void free_inputs(case_inputs *in) {
  for (size_t i = 0; i < 2; i++) {
    free(in->bf16[i]);
    free(in->f32[i]);
  }
}

/* Runs s on the inputs; its one output (malloc'ed), or NULL with err. */
static void *run_once(actx_ort_session *s, size_t n_inputs, const actx_ort_tensor *in,
                      size_t *bytes, actx_ort_error *err) {
  actx_ort_tensor *out = NULL;
  size_t n_out = 0;
  if (actx_ort_run(s, n_inputs, in, &out, &n_out, err) != 0) return NULL;
  void *y = out[0].data;
  *bytes = out[0].bytes;
  out[0].data = NULL;
  actx_ort_tensors_free(out, n_out);
  return y != NULL ? y : malloc(1);
}

static bool names_a_node(const case_def *c, const char *message) {
  for (size_t i = 0; i < c->n_nodes; i++) {
    char quoted[64];
    snprintf(quoted, sizeof quoted, "'%s'", c->node_names[i]);
    if (strstr(message, quoted) != NULL) return true;
  }
  return false;
}

/* The chain's reference, node by node: each node's result is rounded to bfloat16 before the
 * next reads it, as in the bfloat16 model (its float32 twin would not round in between). */
static uint16_t *chain_reference(const case_inputs *in) {
  uint16_t w[256], cc[64];
  fill(w, 256, 7, false);
  fill(cc, 64, 8, false);
  uint16_t *want = malloc(64 * 256 * sizeof *want);
  for (size_t r = 0; want != NULL && r < 64; r++)
    for (size_t j = 0; j < 256; j++) {
      const float t1 = bf16_to_float(ep_float_to_bf16(in->f32[0][r * 256 + j] +
                                                      bf16_to_float(w[j])));
      const float t2 = t1 > 0.0f ? t1 : 0.0f; /* exact: no rounding */
      want[r * 256 + j] = ep_float_to_bf16(t2 * bf16_to_float(cc[r]));
    }
  return want;
}

/* The reference: ORT alone on the float32 twin, rounded once. NULL after a failed CHECK. */
static uint16_t *reference(case_id id, const case_inputs *in, float **sum_abs) {
  const case_def *c = &g_cases[id];
  *sum_abs = NULL;
  if (id == CASE_CHAIN) return chain_reference(in);
  uint8_t *model = NULL;
  size_t size = 0;
  if (build(id, ACTX_ELEM_FLOAT, &model, &size) != 0) return NULL;
  const ep_session_spec alone = {.threads = 1};
  actx_ort_session *s = NULL;
  actx_ort_error err;
  uint16_t *want = NULL;
  if (ep_session_create(model, size, &alone, &s, &err) != 0) {
    CHECK(false, "%s: the float32 twin: %s", c->label, err.message);
  } else {
    size_t bytes = 0;
    float *y = run_once(s, c->n_inputs, in->t32, &bytes, &err);
    CHECK(y != NULL, "%s: the float32 twin's run: %s", c->label, err.message);
    const size_t n = bytes / sizeof(float);
    want = y != NULL ? malloc((n + 1) * sizeof *want) : NULL;
    for (size_t k = 0; want != NULL && k < n; k++) want[k] = ep_float_to_bf16(y[k]);
    free(y);
    actx_ort_session_free(s);
  }
  free(model);
  if (want != NULL && c->matmul) { /* Σ|a·b| of each output, for MatMul's bound */
    const size_t rows = 6, k_dim = 16, cols = 8;
    uint16_t w[16 * 8];
    fill(w, 16 * 8, 7, false);
    *sum_abs = calloc(rows * cols, sizeof **sum_abs);
    for (size_t r = 0; *sum_abs != NULL && r < rows; r++)
      for (size_t j = 0; j < cols; j++)
        for (size_t k = 0; k < k_dim; k++)
          (*sum_abs)[r * cols + j] +=
              fabsf(in->f32[0][r * k_dim + k] * bf16_to_float(w[k * cols + j]));
  }
  return want;
}

/* got against want: bits, NaN as NaN; MatMul within |got - want| <= 2^-7·|want| (one bfloat16
 * rounding each) + 2·K·2^-24·Σ|a·b| (two float32 accumulations of K = 16 terms in any order). */
static void compare(const case_def *c, const char *policy, const uint16_t *got,
                    const uint16_t *want, const float *sum_abs, size_t n) {
  size_t bad = 0, first = 0;
  for (size_t k = 0; k < n; k++) {
    const float g = bf16_to_float(got[k]), w = bf16_to_float(want[k]);
    bool ok = got[k] == want[k] || (isnan(g) && isnan(w));
    if (!ok && c->matmul && sum_abs != NULL)
      ok = fabsf(g - w) <= ldexpf(fabsf(w), -7) + 2.0f * 16.0f * ldexpf(sum_abs[k], -24);
    if (!ok && bad++ == 0) first = k;
  }
  CHECK(bad == 0, "%s, policy %s: %zu of %zu differ from the reference, first at %zu: %04x, "
        "want %04x", c->label, policy, bad, n, first, bad ? got[first] : 0,
        bad ? want[first] : 0);
}

static void check_case(case_id id) {
  const case_def *c = &g_cases[id];
  uint8_t *model = NULL;
  size_t size = 0;
  if (build(id, ACTX_ELEM_BFLOAT16, &model, &size) != 0) {
    CHECK(false, "%s: model", c->label);
    return;
  }
  case_inputs in;
  make_inputs(id, &in);
  actx_ort_error err;
  actx_ort_session *s = NULL;

  /* ORT alone cannot run it, and says which node */
  const ep_session_spec alone = {.threads = 1};
  const int alone_rc = ep_session_create(model, size, &alone, &s, &err);
  CHECK(alone_rc != 0, "%s: ORT alone created the session", c->label);
  if (alone_rc == 0) actx_ort_session_free(s);
  else CHECK(names_a_node(c, err.message), "%s: ORT's error names no node: %s", c->label,
             err.message);

  float *sum_abs = NULL;
  uint16_t *want = reference(id, &in, &sum_abs);
  const size_t n_y = ep_shape_count(c->y_rank, c->y_dims);
  static const char *const policies[] = {"auto", "all"};
  for (size_t p = 0; p < 2 && want != NULL; p++) {
    const ep_session_spec spec = {.policy = policies[p], .threads = 2};
    if (ep_session_create(model, size, &spec, &s, &err) != 0) {
      const bool must = c->always_served || (g_probe && c->probe_serves);
      CHECK(!must, "%s, policy %s: %s", c->label, policies[p], err.message);
      /* left to ORT: its error names the node */
      CHECK(names_a_node(c, err.message), "%s: the error names no node: %s", c->label,
            err.message);
      if (!must && p == 0) printf("skipped: %s: not served yet (%s)\n", c->label, err.message);
      continue;
    }
    for (size_t k = 0; k < c->n_nodes; k++) {
      char ep[64];
      ep_node_ep(s, c->node_names[k], ep, sizeof ep);
      CHECK(strcmp(ep, "actx") == 0, "%s, policy %s: node '%s' runs on '%s'", c->label,
            policies[p], c->node_names[k], ep);
    }
    size_t bytes = 0;
    uint16_t *got = run_once(s, c->n_inputs, in.t16, &bytes, &err);
    CHECK(got != NULL, "%s, policy %s: run: %s", c->label, policies[p], err.message);
    CHECK(got == NULL || bytes == n_y * 2, "%s: %zu output bytes, want %zu", c->label, bytes,
          n_y * 2);
    if (got != NULL && bytes == n_y * 2) compare(c, policies[p], got, want, sum_abs, n_y);
    free(got);
    actx_ort_session_free(s);
  }
  free(want);
  free(sum_abs);
  free_inputs(&in);
  free(model);
}

/* `none` takes nothing: ORT's own error for the node. */
static void check_none(void) {
  const case_def *c = &g_cases[CASE_ADD_BROADCAST];
  uint8_t *model = NULL;
  size_t size = 0;
  if (build(CASE_ADD_BROADCAST, ACTX_ELEM_BFLOAT16, &model, &size) != 0) return;
  const ep_session_spec spec = {.policy = "none", .threads = 1};
  actx_ort_session *s = NULL;
  actx_ort_error err;
  const int rc = ep_session_create(model, size, &spec, &s, &err);
  CHECK(rc != 0, "policy none: the bfloat16 Add was taken");
  if (rc == 0) actx_ort_session_free(s);
  else CHECK(names_a_node(c, err.message), "policy none: %s", err.message);
  free(model);
}

/* A Resize whose mode no family accepts is left to ORT, whose error names it. */
static void check_bad_attribute(void) {
  actx_model *m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, 19, 0);
  const int64_t x_dims[4] = {1, 1, 4, 4}, y_dims[4] = {1, 1, 8, 8}, s_dims[1] = {4};
  const float scales[4] = {1, 1, 2, 2};
  actx_model_add_input(m, "x", ACTX_ELEM_BFLOAT16, 4, x_dims, NULL);
  actx_model_add_output(m, "y", ACTX_ELEM_BFLOAT16, 4, y_dims, NULL);
  actx_model_add_initializer(m, "scales", ACTX_ELEM_FLOAT, 1, s_dims, scales);
  const char *in[3] = {"x", "", "scales"}, *out[1] = {"y"};
  actx_model_node *node = actx_model_add_named_node(m, "resize", "Resize", "", 3, in, 1, out);
  actx_model_node_attr_string(node, "mode", "bogus");
  uint8_t *model = NULL;
  size_t size = 0;
  const int built = actx_model_serialize(m, &model, &size);
  CHECK(built == 0, "Resize model: %s", actx_model_error(m));
  actx_model_free(m);
  if (built != 0) return;
  const ep_session_spec spec = {.policy = "all", .threads = 1};
  actx_ort_session *s = NULL;
  actx_ort_error err;
  const int rc = ep_session_create(model, size, &spec, &s, &err);
  CHECK(rc != 0, "Resize mode 'bogus' was taken");
  if (rc == 0) actx_ort_session_free(s);
  else CHECK(strstr(err.message, "'resize'") != NULL, "bad attribute: %s", err.message);
  free(model);
}

/* A float32 Add is not the bfloat16 service's: ORT runs it (and its result is ORT's). */
static void check_float32_stays(void) {
  uint8_t *model = NULL;
  size_t size = 0;
  if (build(CASE_ADD_BROADCAST, ACTX_ELEM_FLOAT, &model, &size) != 0) return;
  const ep_session_spec spec = {.policy = "all", .threads = 1};
  actx_ort_session *s = NULL;
  actx_ort_error err;
  if (ep_session_create(model, size, &spec, &s, &err) != 0) {
    CHECK(false, "float32 Add: %s", err.message);
  } else {
    char ep[64];
    ep_node_ep(s, "add", ep, sizeof ep);
    CHECK(strcmp(ep, "CPUExecutionProvider") == 0, "a float32 Add runs on '%s'", ep);
    actx_ort_session_free(s);
  }
  free(model);
}

/* A float32 feed of a bfloat16 input: a clear status, no run. */
static void check_wrong_dtype(void) {
  uint8_t *model = NULL;
  size_t size = 0;
  if (build(CASE_ERF, ACTX_ELEM_BFLOAT16, &model, &size) != 0) return;
  const ep_session_spec spec = {.policy = "all", .threads = 1};
  actx_ort_session *s = NULL;
  actx_ort_error err;
  if (ep_session_create(model, size, &spec, &s, &err) != 0) {
    CHECK(false, "wrong dtype: %s", err.message);
    free(model);
    return;
  }
  float x[32] = {0};
  actx_ort_tensor t = {.elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, .rank = 2,
                       .dims = {4, 8}, .data = x};
  size_t bytes = 0;
  void *y = run_once(s, 1, &t, &bytes, &err);
  CHECK(y == NULL, "a float32 feed of a bfloat16 input ran");
  CHECK(y != NULL || strstr(err.message, "type") != NULL, "wrong dtype: %s", err.message);
  free(y);
  actx_ort_session_free(s);
  free(model);
}

/* The bfloat16 activations, the activation service's (ep/claim.c): `auto` takes them at any
 * size, since ORT cannot run them (a declined one would fail the session). */
static void check_activations(void) {
  static const struct {
    const char *op, *domain, *approximate;
    bool bias;
  } ops[] = {
      {"Erf", "", NULL, false},         {"Tanh", "", NULL, false},
      {"Sigmoid", "", NULL, false},     {"Gelu", "", NULL, false},
      {"Gelu", "", "tanh", false},      {"Gelu", ACTX_MODEL_MS_DOMAIN, NULL, false},
      {"FastGelu", ACTX_MODEL_MS_DOMAIN, NULL, false},
      {"FastGelu", ACTX_MODEL_MS_DOMAIN, NULL, true},
      {"BiasGelu", ACTX_MODEL_MS_DOMAIN, NULL, true},
      {"QuickGelu", ACTX_MODEL_MS_DOMAIN, NULL, false},
  };
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    ep_model_spec spec = {.op_type = ops[i].op, .domain = ops[i].domain,
                          .elem_type = ACTX_ELEM_BFLOAT16, .rank = 2, .dims = {3, 5},
                          .approximate = ops[i].approximate, .bias = ops[i].bias,
                          .bias_rank = 1, .bias_dims = {5}};
    if (!ops[i].bias) spec.bias_rank = 0;
    uint8_t *model = NULL;
    size_t size = 0;
    if (ep_build_model(&spec, &model, &size) != 0) {
      CHECK(false, "%s: model", ops[i].op);
      continue;
    }
    const ep_session_spec with_ep = {.policy = "auto", .threads = 1};
    actx_ort_session *s = NULL;
    actx_ort_error err;
    if (ep_session_create(model, size, &with_ep, &s, &err) != 0) {
      CHECK(false, "bfloat16 %s%s: %s", ops[i].op, ops[i].bias ? " with bias" : "", err.message);
    } else {
      char ep[64];
      ep_node_ep(s, EP_TEST_NODE, ep, sizeof ep);
      CHECK(strcmp(ep, "actx") == 0, "bfloat16 %s under auto runs on '%s'", ops[i].op, ep);
      actx_ort_session_free(s);
    }
    free(model);
  }
}

/* ---- concurrent Run() -------------------------------------------------------------------- */

#define N_THREADS 2
#define N_RUNS 50

typedef struct thread_job {
  actx_ort_session *s;
  const actx_ort_tensor *in;
  const uint16_t *want;
  size_t want_bytes;
  int mismatches, errors;
} thread_job;

static void *worker(void *arg) {
  thread_job *job = arg;
  for (int r = 0; r < N_RUNS; r++) {
    actx_ort_error err;
    size_t bytes = 0;
    uint16_t *y = run_once(job->s, 1, job->in, &bytes, &err);
    if (y == NULL) job->errors++;
    else if (bytes != job->want_bytes || memcmp(y, job->want, bytes) != 0) job->mismatches++;
    free(y);
  }
  return NULL;
}

static void check_concurrent(void) {
  uint8_t *model = NULL;
  size_t size = 0;
  if (build(CASE_CHAIN, ACTX_ELEM_BFLOAT16, &model, &size) != 0) return;
  const ep_session_spec spec = {.policy = "auto", .threads = 2};
  actx_ort_session *s = NULL;
  actx_ort_error err;
  if (ep_session_create(model, size, &spec, &s, &err) != 0) {
    CHECK(!g_probe, "concurrent runs: %s", err.message);
    if (!g_probe) printf("skipped: concurrent runs: not served yet\n");
    free(model);
    return;
  }
  case_inputs in;
  make_inputs(CASE_CHAIN, &in);
  size_t want_bytes = 0;
  uint16_t *want = run_once(s, 1, in.t16, &want_bytes, &err);
  CHECK(want != NULL, "concurrent runs: first run: %s", err.message);
  thread_job jobs[N_THREADS];
  pthread_t threads[N_THREADS];
  for (size_t t = 0; t < N_THREADS && want != NULL; t++) {
    jobs[t] = (thread_job){s, in.t16, want, want_bytes, 0, 0};
    CHECK(pthread_create(&threads[t], NULL, worker, &jobs[t]) == 0, "pthread_create");
  }
  for (size_t t = 0; t < N_THREADS && want != NULL; t++) {
    pthread_join(threads[t], NULL);
    CHECK(jobs[t].mismatches == 0 && jobs[t].errors == 0,
          "thread %zu: %d of %d runs differ, %d failed", t, jobs[t].mismatches, N_RUNS,
          jobs[t].errors);
  }
  free(want);
  free_inputs(&in);
  actx_ort_session_free(s);
  free(model);
}

/* A Cast model: x (from) -> Cast(to) -> y, and with a second target, y -> Cast(to2) -> z too. */
static int build_cast(int opset, int32_t from, int32_t to, int32_t to2, int64_t n,
                      uint8_t **bytes, size_t *size) {
  actx_model *m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, opset, 0);
  if (m == NULL) return -1;
  const int64_t dims[1] = {n};
  actx_model_add_input(m, "x", from, 1, dims, NULL);
  actx_model_add_output(m, "y", to, 1, dims, NULL);
  const char *x[1] = {"x"}, *y[1] = {"y"}, *z[1] = {"z"};
  actx_model_node_attr_int(actx_model_add_named_node(m, "cast", "Cast", "", 1, x, 1, y), "to", to);
  if (to2 != 0) {
    actx_model_add_output(m, "z", to2, 1, dims, NULL);
    actx_model_node_attr_int(actx_model_add_named_node(m, "cast2", "Cast", "", 1, y, 1, z), "to",
                             to2);
  }
  const int rc = actx_model_serialize(m, bytes, size);
  if (rc != 0) printf("Cast model: %s\n", actx_model_error(m));
  actx_model_free(m);
  return rc;
}

/* Casts from float32 to bfloat16 (ORT runs them too): the EP takes them under `auto` and gives
 * ORT alone's bits, at every Cast version, 1 and 2 threads, on float32 of every kind (NaNs of
 * both signs with payloads, signalling ones, subnormals, ties, values that overflow), and the
 * bfloat16 -> float32 Casts after them stay ORT's, as do every bfloat16 to float32 and float32
 * to float16. The probe build serves no Cast: ORT runs them there. */
static void check_casts(void) {
  const int64_t n = 100003;
  float *x = malloc((size_t)n * sizeof *x);
  uint16_t *all = malloc(65536 * sizeof *all);
  if (x == NULL || all == NULL) {
    free(x), free(all);
    return;
  }
  ep_fill_inputs(ACTX_ELEM_FLOAT, x, (size_t)n, 11);
  static const uint32_t planted[] = {0x7FC00000u, 0xFFC00001u, 0x7F800001u, 0xFF812345u,
                                     0x7FBFFFFFu, 0x00000001u, 0x807FFFFFu, 0x00008000u,
                                     0x00018000u, 0x3F808000u, 0x3F818000u, 0x7F7FFFFFu,
                                     0xFF7F8000u, 0x7F800000u, 0x80000000u};
  for (size_t i = 0; i < sizeof planted / sizeof planted[0]; i++)
    memcpy(&x[(int64_t)i * 6007 % n], &planted[i], sizeof planted[i]);
  for (uint32_t i = 0; i < 65536; i++) all[i] = (uint16_t)i;
  static const int opsets[] = {13, 19, 21, 23};
  for (size_t o = 0; o < sizeof opsets / sizeof opsets[0]; o++)
    for (int threads = 1; threads <= 2; threads++) {
      char label[96];
      uint8_t *model = NULL;
      size_t size = 0;
      const ep_session_spec spec = {.policy = "auto", .threads = threads};
      if (build_cast(opsets[o], ACTX_ELEM_FLOAT, ACTX_ELEM_BFLOAT16, ACTX_ELEM_FLOAT, n, &model,
                     &size) == 0) {
        const actx_ort_tensor in = {.elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, .rank = 1,
                                    .dims = {n}, .data = x};
        snprintf(label, sizeof label, "Cast-%d float -> bfloat16 -> float, %d thread(s)",
                 opsets[o], threads);
        const long ran = ep_check_against_ort(model, size, &spec, 1, &in, label);
        CHECK(ran == (g_probe ? 0 : 1), "%s: the EP ran %ld nodes", label, ran);
      }
      free(model);
      model = NULL;
      if (build_cast(opsets[o], ACTX_ELEM_BFLOAT16, ACTX_ELEM_FLOAT, 0, 65536, &model, &size) ==
          0) {
        const actx_ort_tensor in = {.elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16,
                                    .rank = 1, .dims = {65536}, .data = all};
        snprintf(label, sizeof label, "Cast-%d every bfloat16 -> float, %d thread(s)", opsets[o],
                 threads);
        const long ran = ep_check_against_ort(model, size, &spec, 1, &in, label);
        CHECK(ran == 0, "%s: the EP ran %ld nodes", label, ran);
      }
      free(model);
    }
  /* float32 -> float16 is not this service's */
  uint8_t *model = NULL;
  size_t size = 0;
  if (build_cast(21, ACTX_ELEM_FLOAT, ACTX_ELEM_FLOAT16, 0, n, &model, &size) == 0) {
    const ep_session_spec spec = {.policy = "all", .threads = 1};
    const actx_ort_tensor in = {.elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, .rank = 1,
                                .dims = {n}, .data = x};
    const long ran = ep_check_against_ort(model, size, &spec, 1, &in, "Cast float -> float16");
    CHECK(ran == 0, "Cast float -> float16: the EP ran %ld nodes", ran);
  }
  free(model);
  free(x);
  free(all);
}

int main(int argc, char **argv) {
  if (ep_test_init(argc, argv) != 0) return 2;
  g_probe = argc > 2 && strcmp(argv[2], "probe") == 0;
  for (int id = 0; id < CASE_COUNT; id++) check_case((case_id)id);
  check_activations();
  check_casts();
  check_float32_stays();
  check_none();
  check_bad_attribute();
  check_wrong_dtype();
  check_concurrent();
  actx_ort_shutdown();
  if (g_failures) {
    printf("%d failure(s)\n", g_failures);
    return 1;
  }
  printf("ok\n");
  return 0;
}
