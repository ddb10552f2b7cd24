/* The assignment policy and the provider options.
 *
 * usage: test_ep_policy <absolute path of libactx_ep.so>
 *
 *   - `none` claims nothing, `all` claims every node it can run, `auto` claims exactly what its
 *     table (ep/policy.c) says, for known and for symbolic sizes;
 *   - the option arrives both as a provider option (policy=...) and as the session config entry
 *     ep.actx.policy; a bad value or an unknown key fails session creation with a message naming
 *     it;
 *   - exported activation subgraphs (erf GELU, tanh GELU, SiLU, QuickGelu) and Add(bias) →
 *     Gelu: where the table says ORT's fused kernel wins (1 Ki elements), `auto` leaves the whole
 *     subgraph to ORT, which fuses it into one kernel of its own (never taking its Erf / Tanh /
 *     Sigmoid alone, which would stop that fusion); where ours wins (64 Ki) `auto` takes the whole
 *     subgraph as one node; `all` always takes it (test_ep_fusion.c checks the variants).
 * For opset 20 the erf GELU is fused by ORT before partitioning, and the fused ai.onnx Gelu is
 * ours. This is also the experiment behind the note in ep/ep.c on which graph GetCapability sees.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "actx_ep.h"
#include "ep_test.h"

/* Where ORT saves an optimised graph: one name per process, since ctest runs this test once per
 * host table at the same time in the same directory. */
static char g_optimized_path[64];

#define MS ACTX_MODEL_MS_DOMAIN

typedef struct kind_case {
  actx_ep_kind kind;
  ep_model_spec spec;
} kind_case;

static const kind_case kinds[] = {
    {ACTX_EP_ERF, {.op_type = "Erf", .domain = ""}},
    {ACTX_EP_GELU, {.op_type = "Gelu", .domain = ""}},
    {ACTX_EP_GELU_TANH, {.op_type = "Gelu", .domain = "", .approximate = "tanh"}},
    {ACTX_EP_MS_GELU, {.op_type = "Gelu", .domain = MS}},
    {ACTX_EP_BIAS_GELU, {.op_type = "BiasGelu", .domain = MS, .bias = true}},
    {ACTX_EP_FAST_GELU, {.op_type = "FastGelu", .domain = MS}},
    {ACTX_EP_FAST_GELU_BIAS, {.op_type = "FastGelu", .domain = MS, .bias = true}},
    {ACTX_EP_QUICK_GELU, {.op_type = "QuickGelu", .domain = MS}},
    {ACTX_EP_SILU, {.op_type = "QuickGelu", .domain = MS, .has_alpha = true, .alpha = 1.0f}},
    {ACTX_EP_TANH, {.op_type = "Tanh", .domain = ""}},
    {ACTX_EP_SIGMOID, {.op_type = "Sigmoid", .domain = ""}},
};
#define N_KINDS (sizeof kinds / sizeof kinds[0])

static const int32_t elem_types[] = {ACTX_ELEM_FLOAT, ACTX_ELEM_FLOAT16, ACTX_ELEM_BFLOAT16};
static const actx_dtype dtypes[] = {ACTX_F32, ACTX_F16, ACTX_BF16};

/* Creates a session and returns the EP of node `node` ("" if the session failed: *err). */
static int node_ep(const uint8_t *model, size_t size, const ep_session_spec *spec, const char *node,
                   char *ep, size_t ep_size, actx_ort_error *err) {
  actx_ort_session *s = NULL;
  if (ep_session_create(model, size, spec, &s, err) != 0) {
    snprintf(ep, ep_size, "%s", "");
    return -1;
  }
  ep_node_ep(s, node, ep, ep_size);
  actx_ort_session_free(s);
  return 0;
}

/* The table itself: for every kind and dtype, rows that tile [0, INT64_MAX) without gaps or
 * overlaps (a gap would silently decline, an overlap make the answer depend on row order). */
static void test_table_shape(void) {
  size_t n = 0;
  const actx_ep_policy_row *rows = actx_ep_policy_table(&n);
  for (int k = 0; k < ACTX_EP_KIND_COUNT; k++)
    for (int d = 0; d < ACTX_DTYPE_COUNT; d++) {
      int64_t covered = 0; /* [0, covered) is tiled so far */
      for (bool grew = true; grew && covered != INT64_MAX;) {
        grew = false;
        for (size_t i = 0; i < n; i++)
          if ((int)rows[i].kind == k && (rows[i].dtype_mask & (1u << d)) &&
              rows[i].min_elements == covered) {
            CHECK(rows[i].max_elements > rows[i].min_elements, "row %zu is empty", i);
            covered = rows[i].max_elements;
            grew = true;
            break;
          }
      }
      CHECK(covered == INT64_MAX, "%s %s: sizes from %lld have no row",
            actx_ep_kind_name((actx_ep_kind)k), actx_dtype_name((actx_dtype)d), (long long)covered);
      int64_t total = 0; /* overlaps: the row lengths must add up to exactly the tiling */
      for (size_t i = 0; i < n; i++)
        if ((int)rows[i].kind == k && (rows[i].dtype_mask & (1u << d)))
          total +=
              rows[i].max_elements == INT64_MAX ? 0 : rows[i].max_elements - rows[i].min_elements;
      int64_t last_min = 0;
      for (size_t i = 0; i < n; i++)
        if ((int)rows[i].kind == k && (rows[i].dtype_mask & (1u << d)) &&
            rows[i].max_elements == INT64_MAX)
          last_min = rows[i].min_elements;
      CHECK(total == last_min, "%s %s: rows overlap", actx_ep_kind_name((actx_ep_kind)k),
            actx_dtype_name((actx_dtype)d));
    }
}

/* Sizes the graph leaves open: claimed where the table claims some size and declines the others
 * only for a node's fixed cost (PER_NODE); never where ORT's kernel is as fast per element. The
 * expectations are the host classes' tables as docs/ep-policy.md gives them. */
static void test_open_sizes(void) {
  const actx_ort_rule rule = actx_get_ort_rule();
  static const struct {
    actx_ep_kind kind;
    int64_t min_elements;     /* what the known dimensions give */
    bool avx2, avx512, arm64; /* claimed by each host class's table */
  } cases[] = {
      {ACTX_EP_TANH, 1, true, true, false},       {ACTX_EP_SIGMOID, 1, true, true, false},
      {ACTX_EP_ERF, 1, false, false, false},      {ACTX_EP_ERF, 1 << 20, false, false, false},
      {ACTX_EP_GELU, 1, true, false, true},       {ACTX_EP_MS_GELU, 768, true, false, true},
      {ACTX_EP_GELU, 1 << 20, true, true, true},  {ACTX_EP_SILU, 1, true, false, true},
      {ACTX_EP_FAST_GELU, 1, true, true, true},   {ACTX_EP_QUICK_GELU, 512, true, true, true},
      {ACTX_EP_BIAS_GELU, 1, true, true, true},   {ACTX_EP_TANH, 1 << 21, false, true, false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const bool want = rule == ACTX_ORT_RULE_AVX512 ? cases[i].avx512
                      : rule == ACTX_ORT_RULE_ARM64 ? cases[i].arm64
                                                    : cases[i].avx2;
    const bool got =
        actx_ep_policy_auto_claims(cases[i].kind, ACTX_F32, -1, cases[i].min_elements);
    CHECK(got == want, "%s table, %s of open size >= %lld: %s", actx_ort_rule_name(rule),
          actx_ep_kind_name(cases[i].kind), (long long)cases[i].min_elements,
          got ? "claimed" : "declined");
  }
}

/* none / all / auto on one-node models of every kind, dtype and several sizes. */
static void test_policies(void) {
  /* [rows, cols]: 512, 4 Ki, 64 Ki, 1 Mi elements; -1 = symbolic */
  static const int64_t shapes[][2] = {{1, 512},  {8, 512},   {128, 512}, {2048, 512},
                                      {-1, 512}, {-1, 8192}, {-1, -1}};
  size_t checked = 0;
  for (size_t k = 0; k < N_KINDS; k++)
    for (size_t t = 0; t < 3; t++)
      for (size_t r = 0; r < sizeof shapes / sizeof shapes[0]; r++) {
        ep_model_spec spec = kinds[k].spec;
        spec.elem_type = elem_types[t];
        spec.rank = 2;
        spec.dims[0] = shapes[r][0];
        spec.dims[1] = shapes[r][1];
        spec.bias_rank = 1;
        spec.bias_dims[0] = shapes[r][1]; /* symbolic: the same name as x's last dim */
        uint8_t *model = NULL;
        size_t size = 0;
        if (ep_build_model(&spec, &model, &size) != 0) continue;
        const bool known = shapes[r][0] > 0 && shapes[r][1] > 0;
        const int64_t elements = known ? shapes[r][0] * shapes[r][1] : -1;
        const int64_t min_elements =
            (shapes[r][0] > 0 ? shapes[r][0] : 1) * (shapes[r][1] > 0 ? shapes[r][1] : 1);
        char ep[64];
        actx_ort_error err;
        /* Can ORT run it alone? Not a valid model at all: nothing to test. No ORT kernel for
         * this dtype: the session then exists only with actx, and `auto` must claim it. */
        const ep_session_spec alone = {.threads = 1};
        const bool ort_runs = node_ep(model, size, &alone, EP_TEST_NODE, ep, sizeof ep, &err) == 0;
        if (!ort_runs && err.code == ORT_INVALID_GRAPH) {
          free(model);
          continue;
        }
        CHECK(ort_runs || err.code == ORT_NOT_IMPLEMENTED, "%s %s alone: %s",
              actx_ep_kind_name(kinds[k].kind), actx_elem_name(elem_types[t]), err.message);
        const char *policies[] = {"none", "all", "auto", ""}; /* "": the default, auto */
        for (size_t p = 0; p < 4; p++) {
          const ep_session_spec ss = {.policy = policies[p], .threads = 1};
          const bool created = node_ep(model, size, &ss, EP_TEST_NODE, ep, sizeof ep, &err) == 0;
          bool want;
          if (p == 0)
            want = false;
          else if (p == 1)
            want = true;
          else
            want = actx_ep_policy_auto_claims(kinds[k].kind, dtypes[t], elements, min_elements);
          const bool got = created && strcmp(ep, "actx") == 0;
          CHECK(got == want, "%s %s, %lld elements, policy '%s': node on '%s' %s",
                actx_ep_kind_name(kinds[k].kind), actx_elem_name(elem_types[t]),
                (long long)elements, policies[p], ep, created ? "" : err.message);
          CHECK(created == (ort_runs || want), "%s %s, %lld elements, policy '%s': %s",
                actx_ep_kind_name(kinds[k].kind), actx_elem_name(elem_types[t]),
                (long long)elements, policies[p], created ? "created" : err.message);
          if (p == 2 && !ort_runs)
            CHECK(want, "%s %s, %lld elements: auto declines a node ORT cannot run",
                  actx_ep_kind_name(kinds[k].kind), actx_elem_name(elem_types[t]),
                  (long long)elements);
          checked++;
        }
        if (r == 0)
          printf("  %-30s %-8s ORT alone %s\n", actx_ep_kind_name(kinds[k].kind),
                 actx_elem_name(elem_types[t]), ort_runs ? "runs it" : "has no kernel");
        free(model);
      }
  printf("policies: %zu sessions checked\n", checked);
}

static void test_options(void) {
  ep_model_spec spec = {
      .op_type = "Gelu", .domain = "", .elem_type = ACTX_ELEM_FLOAT, .rank = 1, .dims = {1 << 20}};
  uint8_t *model = NULL;
  size_t size = 0;
  if (ep_build_model(&spec, &model, &size) != 0) return;
  char ep[64];
  actx_ort_error err;

  /* bad value */
  ep_session_spec bad = {.policy = "fastest"};
  CHECK(node_ep(model, size, &bad, EP_TEST_NODE, ep, sizeof ep, &err) != 0,
        "policy=fastest accepted");
  CHECK(strstr(err.message, "'policy'") && strstr(err.message, "'fastest'") &&
            strstr(err.message, "auto, all or none"),
        "message: %s", err.message);
  printf("bad value: %s\n", err.message);
  bad.policy = "ALL";
  CHECK(node_ep(model, size, &bad, EP_TEST_NODE, ep, sizeof ep, &err) != 0, "policy=ALL accepted");
  bad.policy = " all";
  CHECK(node_ep(model, size, &bad, EP_TEST_NODE, ep, sizeof ep, &err) != 0,
        "policy=' all' accepted");

  /* unknown key */
  const char *keys[] = {"polcy"}, *values[] = {"all"};
  const ep_session_spec unknown = {
      .policy = "", .n_ep_options = 1, .ep_option_keys = keys, .ep_option_values = values};
  CHECK(node_ep(model, size, &unknown, EP_TEST_NODE, ep, sizeof ep, &err) != 0,
        "key polcy accepted");
  CHECK(strstr(err.message, "'polcy'") && strstr(err.message, "ep.actx.polcy"), "message: %s",
        err.message);
  printf("unknown key: %s\n", err.message);

  /* session-config style, no provider options */
  const char *ck[] = {"ep.actx.policy"}, *cv_none[] = {"none"}, *cv_all[] = {"all"},
             *cv_bad[] = {"most"};
  ep_session_spec config = {
      .policy = "", .n_config = 1, .config_keys = ck, .config_values = cv_none};
  CHECK(node_ep(model, size, &config, EP_TEST_NODE, ep, sizeof ep, &err) == 0 &&
            strcmp(ep, "CPUExecutionProvider") == 0,
        "ep.actx.policy=none: '%s' %s", ep, err.message);
  config.config_values = cv_all;
  CHECK(node_ep(model, size, &config, EP_TEST_NODE, ep, sizeof ep, &err) == 0 &&
            strcmp(ep, "actx") == 0,
        "ep.actx.policy=all: '%s' %s", ep, err.message);
  config.config_values = cv_bad;
  CHECK(node_ep(model, size, &config, EP_TEST_NODE, ep, sizeof ep, &err) != 0 &&
            strstr(err.message, "'most'") != NULL,
        "ep.actx.policy=most: %s", err.message);
  const char *ck_unknown[] = {"ep.actx.threads"}, *cv_unknown[] = {"2"};
  const ep_session_spec config_unknown = {
      .policy = "", .n_config = 1, .config_keys = ck_unknown, .config_values = cv_unknown};
  CHECK(node_ep(model, size, &config_unknown, EP_TEST_NODE, ep, sizeof ep, &err) != 0 &&
            strstr(err.message, "'threads'") != NULL,
        "ep.actx.threads: %s", err.message);

  /* other EPs' keys are not ours to judge */
  const char *ck_other[] = {"ep.cuda.whatever"}, *cv_other[] = {"1"};
  const ep_session_spec other = {
      .policy = "all", .n_config = 1, .config_keys = ck_other, .config_values = cv_other};
  CHECK(node_ep(model, size, &other, EP_TEST_NODE, ep, sizeof ep, &err) == 0 &&
            strcmp(ep, "actx") == 0,
        "ep.cuda.whatever: '%s' %s", ep, err.message);
  free(model);
}

/* ---- exported activation subgraphs ---- */

typedef enum pattern_kind { ERF_GELU, TANH_GELU, SILU, QUICK_GELU_PATTERN, ADD_GELU } pattern_kind;

/* x: [rows, 1024] float. The core node (Erf / Tanh / Sigmoid) is named EP_TEST_NODE. */
static int build_pattern(pattern_kind kind, int64_t opset, int64_t rows, uint8_t **bytes,
                         size_t *size) {
  actx_model *m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, opset, 0);
  const int64_t dims[2] = {rows, 1024};
  actx_model_add_input(m, "x", ACTX_ELEM_FLOAT, 2, dims, NULL);
  actx_model_add_output(m, "y", ACTX_ELEM_FLOAT, 2, dims, NULL);
  const float sqrt2 = 1.4142135623730951f, one = 1.0f, half = 0.5f, c = 0.044715f,
              s = 0.7978845608028654f, alpha = 1.702f;
  actx_model_add_initializer(m, "one", ACTX_ELEM_FLOAT, 0, NULL, &one);
  actx_model_add_initializer(m, "half", ACTX_ELEM_FLOAT, 0, NULL, &half);
  switch (kind) {
    case ERF_GELU: {
      actx_model_add_initializer(m, "sqrt2", ACTX_ELEM_FLOAT, 0, NULL, &sqrt2);
      const char *a[] = {"x", "sqrt2"}, *ao[] = {"d"}, *eo[] = {"e"}, *b[] = {"e", "one"},
                 *bo[] = {"a"}, *cc[] = {"x", "a"}, *co[] = {"m"}, *d[] = {"m", "half"},
                 *dout[] = {"y"};
      actx_model_add_named_node(m, "div", "Div", "", 2, a, 1, ao);
      actx_model_add_named_node(m, EP_TEST_NODE, "Erf", "", 1, ao, 1, eo);
      actx_model_add_named_node(m, "add", "Add", "", 2, b, 1, bo);
      actx_model_add_named_node(m, "mul", "Mul", "", 2, cc, 1, co);
      actx_model_add_named_node(m, "mul_half", "Mul", "", 2, d, 1, dout);
      break;
    }
    case TANH_GELU: { /* 0.5·x · (1 + tanh(x · 0.7978845608 · (1 + 0.044715·x·x))) */
      actx_model_add_initializer(m, "c", ACTX_ELEM_FLOAT, 0, NULL, &c);
      actx_model_add_initializer(m, "s", ACTX_ELEM_FLOAT, 0, NULL, &s);
      const char *m1_in[] = {"x", "c"}, *m1_out[] = {"cx"};
      const char *m2_in[] = {"cx", "x"}, *m2_out[] = {"cxx"};
      const char *a1_in[] = {"cxx", "one"}, *a1_out[] = {"inner"};
      const char *m4_in[] = {"x", "s"}, *m4_out[] = {"sx"};
      const char *m3_in[] = {"sx", "inner"}, *m3_out[] = {"arg"};
      const char *t_out[] = {"t"};
      const char *a2_in[] = {"t", "one"}, *a2_out[] = {"t1"};
      const char *m6_in[] = {"x", "half"}, *m6_out[] = {"xh"};
      /* FastGeluFusion leaves a subgraph whose last Mul is a graph output alone: add a Neg */
      const char *m5_in[] = {"xh", "t1"}, *m5_out[] = {"g"}, *neg_out[] = {"y"};
      actx_model_add_named_node(m, "mul_c", "Mul", "", 2, m1_in, 1, m1_out);
      actx_model_add_named_node(m, "mul_x", "Mul", "", 2, m2_in, 1, m2_out);
      actx_model_add_named_node(m, "add_one", "Add", "", 2, a1_in, 1, a1_out);
      actx_model_add_named_node(m, "mul_s", "Mul", "", 2, m4_in, 1, m4_out);
      actx_model_add_named_node(m, "mul_arg", "Mul", "", 2, m3_in, 1, m3_out);
      actx_model_add_named_node(m, EP_TEST_NODE, "Tanh", "", 1, m3_out, 1, t_out);
      actx_model_add_named_node(m, "add_t", "Add", "", 2, a2_in, 1, a2_out);
      actx_model_add_named_node(m, "mul_half", "Mul", "", 2, m6_in, 1, m6_out);
      actx_model_add_named_node(m, "mul_out", "Mul", "", 2, m5_in, 1, m5_out);
      actx_model_add_named_node(m, "neg", "Neg", "", 1, m5_out, 1, neg_out);
      break;
    }
    case SILU: {
      const char *so[] = {"sg"}, *mi[] = {"x", "sg"}, *mo[] = {"y"}, *xi[] = {"x"};
      actx_model_add_named_node(m, EP_TEST_NODE, "Sigmoid", "", 1, xi, 1, so);
      actx_model_add_named_node(m, "mul", "Mul", "", 2, mi, 1, mo);
      break;
    }
    case ADD_GELU: { /* Add(x, bias[1024]) → Gelu: ORT's BiasGeluFusion */
      static float bias[1024];
      for (int i = 0; i < 1024; i++) bias[i] = (float)(i % 17) * 0.125f - 1.0f;
      const int64_t bdim[1] = {1024};
      actx_model_add_initializer(m, "bias", ACTX_ELEM_FLOAT, 1, bdim, bias);
      const char *ai[] = {"x", "bias"}, *ao[] = {"xb"}, *go[] = {"y"};
      actx_model_add_named_node(m, "add", "Add", "", 2, ai, 1, ao);
      actx_model_add_named_node(m, EP_TEST_NODE, "Gelu", "", 1, ao, 1, go);
      break;
    }
    case QUICK_GELU_PATTERN: {
      actx_model_add_initializer(m, "alpha", ACTX_ELEM_FLOAT, 0, NULL, &alpha);
      const char *ai[] = {"x", "alpha"}, *ao[] = {"ax"}, *so[] = {"sg"}, *mi[] = {"sg", "x"},
                 *mo[] = {"y"};
      actx_model_add_named_node(m, "mul_alpha", "Mul", "", 2, ai, 1, ao);
      actx_model_add_named_node(m, EP_TEST_NODE, "Sigmoid", "", 1, ao, 1, so);
      actx_model_add_named_node(m, "mul", "Mul", "", 2, mi, 1, mo);
      break;
    }
  }
  int rc = actx_model_serialize(m, bytes, size);
  if (rc != 0) printf("pattern model: %s\n", actx_model_error(m));
  actx_model_free(m);
  return rc;
}

/* Whether the session's final graph has an op_type node on ep. */
static bool has_op_on(const actx_ort_session *s, const char *op_type, const char *ep) {
  actx_ort_assignment *list = NULL;
  size_t n = 0;
  actx_ort_error err;
  bool found = false;
  if (actx_ort_session_assignments(s, &list, &n, &err) != 0) return false;
  for (size_t i = 0; i < n; i++)
    found = found || (strcmp(list[i].op_type, op_type) == 0 && strcmp(list[i].ep_name, ep) == 0);
  free(list);
  return found;
}

static void print_assignments(const actx_ort_session *s) {
  actx_ort_assignment *list = NULL;
  size_t n = 0;
  actx_ort_error err;
  if (actx_ort_session_assignments(s, &list, &n, &err) != 0) return;
  for (size_t i = 0; i < n; i++)
    printf("    %s:%s '%s' on %s\n", list[i].domain[0] ? list[i].domain : "ai.onnx",
           list[i].op_type, list[i].node_name, list[i].ep_name);
  free(list);
}

/* How many of the session's nodes each EP runs. */
static void count_on(const actx_ort_session *s, size_t *on_actx, size_t *total) {
  actx_ort_assignment *list = NULL;
  size_t n = 0;
  actx_ort_error err;
  *on_actx = *total = 0;
  if (actx_ort_session_assignments(s, &list, &n, &err) != 0) return;
  for (size_t i = 0; i < n; i++) *on_actx += strcmp(list[i].ep_name, "actx") == 0;
  *total = n;
  free(list);
}

static void test_patterns(void) {
  static const struct {
    const char *label;
    pattern_kind kind;
    int64_t opset;
    const char *core_op;  /* the node we must not take alone under auto */
    size_t fused_nodes;   /* nodes left once ORT fused the subgraph */
    size_t pattern_nodes; /* the subgraph's nodes, all ours when we take it */
    actx_ep_kind as_kind; /* the kernel it amounts to: the row of the table */
  } cases[] = {
      {"erf GELU, opset 17", ERF_GELU, 17, "Erf", 1, 5, ACTX_EP_MS_GELU},
      {"tanh GELU, opset 17", TANH_GELU, 17, "Tanh", 2, 9, ACTX_EP_FAST_GELU},
      {"SiLU, opset 17", SILU, 17, "Sigmoid", 1, 2, ACTX_EP_SILU},
      {"QuickGelu pattern, opset 17", QUICK_GELU_PATTERN, 17, "Sigmoid", 1, 3, ACTX_EP_QUICK_GELU},
      {"Add(bias) + Gelu, opset 20", ADD_GELU, 20, "Gelu", 1, 2, ACTX_EP_BIAS_GELU},
  };
  const int64_t sizes[] = {1, 64}; /* rows of 1024: 1 Ki and 64 Ki elements */
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (size_t r = 0; r < 2; r++) {
      uint8_t *model = NULL;
      size_t size = 0;
      if (build_pattern(cases[i].kind, cases[i].opset, sizes[r], &model, &size) != 0) continue;
      const int64_t elements = sizes[r] * 1024;
      const bool auto_takes =
          actx_ep_policy_auto_claims(cases[i].as_kind, ACTX_F32, elements, elements);
      const char *policies[] = {NULL, "auto", "all"};
      for (size_t p = 0; p < 3; p++) {
        const char *label = policies[p] ? policies[p] : "ORT alone";
        const bool ours = p == 2 || (p == 1 && auto_takes);
        if (!ours) {
          /* ORT keeps the subgraph and fuses it (a graph with our nodes cannot be saved) */
          size_t n_nodes = 0;
          actx_ort_error err;
          const int rc = ep_optimized_node_count(model, size, policies[p], g_optimized_path,
                                                 &n_nodes, &err);
          CHECK(rc == 0 && n_nodes == cases[i].fused_nodes,
                "%s, %lld elements, %s: %zu nodes after ORT's optimisations %s", cases[i].label,
                (long long)elements, label, n_nodes, rc ? err.message : "");
          printf("  %s, %lld elements, %s: %zu node(s) after optimisation\n", cases[i].label,
                 (long long)elements, label, n_nodes);
        }
        const ep_session_spec ss = {.policy = policies[p], .threads = 1};
        actx_ort_session *s = NULL;
        actx_ort_error err;
        if (ep_session_create(model, size, &ss, &s, &err) != 0) {
          CHECK(false, "%s: %s", cases[i].label, err.message);
          continue;
        }
        /* ours: the whole subgraph as one node; else none of it, its core least of all */
        size_t on_actx = 0, total = 0;
        count_on(s, &on_actx, &total);
        CHECK(has_op_on(s, cases[i].core_op, "actx") == ours &&
                  on_actx == (ours ? cases[i].pattern_nodes : 0),
              "%s, %lld elements, %s: %zu of %zu nodes on actx, want %zu", cases[i].label,
              (long long)elements, label, on_actx, total, ours ? cases[i].pattern_nodes : 0);
        if (p == 2 && r == 0) {
          printf("  %s, all:\n", cases[i].label);
          print_assignments(s);
        }
        actx_ort_session_free(s);
      }
      free(model);
    }
  remove(g_optimized_path);

  /* opset 20: ORT fuses the erf GELU at level 1, before partitioning, into ai.onnx Gelu: that
   * is the node GetCapability sees, and auto (64 Ki elements) takes it. */
  uint8_t *model = NULL;
  size_t size = 0;
  if (build_pattern(ERF_GELU, 20, 64, &model, &size) == 0) {
    const ep_session_spec ss = {.policy = "auto", .threads = 1};
    actx_ort_session *s = NULL;
    actx_ort_error err;
    if (ep_session_create(model, size, &ss, &s, &err) == 0) {
      printf("  erf GELU, opset 20, auto:\n");
      print_assignments(s);
      const bool want = actx_ep_policy_auto_claims(ACTX_EP_GELU, ACTX_F32, 64 * 1024, 0);
      CHECK(has_op_on(s, "Gelu", want ? "actx" : "CPUExecutionProvider") &&
                !has_op_on(s, "Erf", "CPUExecutionProvider") && !has_op_on(s, "Erf", "actx"),
            "opset 20: the fused Gelu is not where the table says");
      actx_ort_session_free(s);
    } else {
      CHECK(false, "opset 20: %s", err.message);
    }
    free(model);
  }
}

int main(int argc, char **argv) {
  snprintf(g_optimized_path, sizeof g_optimized_path, "ep_policy_optimized_%ld.onnx",
           (long)getpid());
  if (ep_test_init(argc, argv) != 0) return 2;
  test_table_shape();
  test_open_sizes();
  test_policies();
  test_options();
  test_patterns();
  actx_ort_shutdown();
  printf("%d failures\n", g_failures);
  return g_failures ? 1 : 0;
}
