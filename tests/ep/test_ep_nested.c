/* Nested graphs: claimed nodes and fused subgraphs inside Loop bodies and If branches.
 *
 * usage: test_ep_nested <absolute path of libactx_ep.so>
 *
 * Exporters write every Loop body and every If branch with the same value names (v_in → v_out,
 * the same initializer names), so two graphs of one model can hold different activations under
 * the same names. Each model here puts two activations in two such graphs (two Loops one after
 * the other, or the two branches of an If) in both orders, fused subgraphs and single nodes,
 * with and without a bias, and compares ORT alone with ORT + actx bit for bit under `auto` and
 * `all`, checking that actx ran some of the nodes (else the comparison proves nothing).
 *
 * Then random models: one to three Loops and Ifs in a row, each graph holding a chain of one to
 * three activations (any of tools/ort/model_parts.h's, single nodes and subgraphs, QuickGelu's α
 * drawn from ordinary values and IEEE boundaries) under the same value and initializer names in
 * every graph, at sizes on both sides of the `auto` table's thresholds, against ORT alone the
 * same way. fuzz/fuzz_ep.c makes such models from its bytes, nested two deep. */
#include <stdlib.h>
#include <string.h>

#include "ep_test.h"
#include "model_parts.h"

/* [1024, 1024]: 1 Mi elements, where both host classes' `auto` tables claim every kind of the
 * pairs below in float32. */
#define ROWS 1024
#define COLS 1024
/* 20: the first with ai.onnx Gelu, one of the kinds the random models draw. */
#define OPSET 20

/* The activation's nodes (model_parts.h), reading `in` and writing `out`, shaped [rows, COLS],
 * under the same names in every graph; seed makes the bias values differ between graphs. */
static void add_activation(actx_model *g, actx_act_kind kind, const char *in, const char *out,
                           const char *prefix, float alpha, uint64_t seed) {
  float bias[COLS];
  ep_fill_inputs(ACTX_ELEM_FLOAT, bias, COLS, seed);
  for (size_t i = 0; i < COLS; i++) /* finite: a bias NaN would hide the input's */
    if (!(bias[i] > -1e30f && bias[i] < 1e30f)) bias[i] = (float)(i % 7) - 3.0f;
  actx_part_add_activation(g, kind, ACTX_ELEM_FLOAT, in, out, prefix, alpha, bias, COLS);
}

static const int64_t g_dims[2] = {ROWS, COLS};

/* A Loop body running the activation once per iteration on its carried value. */
static actx_model *loop_body(actx_act_kind kind, uint64_t seed) {
  actx_model *b = actx_part_loop_body(NULL, ACTX_ELEM_FLOAT, 2, g_dims, NULL);
  add_activation(b, kind, ACTX_PART_IN, ACTX_PART_OUT, "", 0, seed);
  return b;
}

/* An If branch applying the activation to the outer graph's x. */
static actx_model *branch(actx_act_kind kind, uint64_t seed) {
  actx_model *b = actx_part_if_branch(ACTX_ELEM_FLOAT, 2, g_dims, NULL);
  add_activation(b, kind, "x", ACTX_PART_OUT, "", 0, seed);
  return b;
}

/* x → Loop(first) → Loop(second) → y, one iteration each. */
static int build_loops(actx_act_kind first, actx_act_kind second, uint8_t **bytes, size_t *size) {
  actx_model *m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, OPSET, 1);
  actx_model_add_input(m, "x", ACTX_ELEM_FLOAT, 2, g_dims, NULL);
  actx_model_add_output(m, "y", ACTX_ELEM_FLOAT, 2, g_dims, NULL);
  const int64_t trips = 1;
  const uint8_t yes = 1;
  actx_model_add_initializer(m, "trips", ACTX_ELEM_INT64, 0, NULL, &trips);
  actx_model_add_initializer(m, "keep_going", ACTX_ELEM_BOOL, 0, NULL, &yes);
  actx_model_node *l1 = actx_model_add_named_node(
      m, "loop1", "Loop", "", 3, (const char *[]){"trips", "keep_going", "x"}, 1,
      (const char *[]){"y1"});
  actx_model_node_attr_graph(l1, "body", loop_body(first, 11));
  actx_model_node *l2 = actx_model_add_named_node(
      m, "loop2", "Loop", "", 3, (const char *[]){"trips", "keep_going", "y1"}, 1,
      (const char *[]){"y"});
  actx_model_node_attr_graph(l2, "body", loop_body(second, 22));
  const int rc = actx_model_serialize(m, bytes, size);
  if (rc != 0) printf("loops model: %s\n", actx_model_error(m));
  actx_model_free(m);
  return rc;
}

/* y = If(c) then first(x) else second(x). */
static int build_if(actx_act_kind then_kind, actx_act_kind else_kind, uint8_t **bytes, size_t *size) {
  actx_model *m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, OPSET, 1);
  actx_model_add_input(m, "x", ACTX_ELEM_FLOAT, 2, g_dims, NULL);
  actx_model_add_input(m, "c", ACTX_ELEM_BOOL, 0, NULL, NULL);
  actx_model_add_output(m, "y", ACTX_ELEM_FLOAT, 2, g_dims, NULL);
  actx_model_node *n = actx_model_add_named_node(m, "if", "If", "", 1, (const char *[]){"c"}, 1,
                                                 (const char *[]){"y"});
  actx_model_node_attr_graph(n, "then_branch", branch(then_kind, 33));
  actx_model_node_attr_graph(n, "else_branch", branch(else_kind, 44));
  const int rc = actx_model_serialize(m, bytes, size);
  if (rc != 0) printf("if model: %s\n", actx_model_error(m));
  actx_model_free(m);
  return rc;
}

static float g_x[ROWS * COLS];

static void check_model(const uint8_t *bytes, size_t size, bool with_cond, const char *label) {
  static const char *const policies[] = {"auto", "all"};
  for (int p = 0; p < 2; p++)
    for (int cond = 0; cond <= (with_cond ? 1 : 0); cond++) {
      const uint8_t c = (uint8_t)cond;
      actx_ort_tensor in[2] = {
          {.elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, .rank = 2, .dims = {ROWS, COLS}, .data = g_x},
          {.elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL, .rank = 0, .data = (void *)&c},
      };
      char what[256];
      snprintf(what, sizeof what, "%s%s", label,
               !with_cond ? ""
               : cond     ? " (then)"
                          : " (else)");
      const ep_session_spec spec = {.policy = policies[p], .threads = 1};
      const long on_actx = ep_check_against_ort(bytes, size, &spec, with_cond ? 2 : 1, in, what);
      CHECK(on_actx != 0, "%s, policy %s: no node ran on actx", what, policies[p]);
    }
}

/* Pairs whose activations differ but whose graphs use the same names. */
static const actx_act_kind g_pairs[][2] = {
    {ACTX_ACT_QUICK_GELU, ACTX_ACT_SILU},
    {ACTX_ACT_QUICK_GELU, ACTX_ACT_QUICK_GELU_OTHER_ALPHA},
    {ACTX_ACT_ERF_GELU, ACTX_ACT_BIAS_ERF_GELU},
    {ACTX_ACT_BIAS_ERF_GELU, ACTX_ACT_BIAS_ERF_GELU}, /* the same names, other bias values */
    {ACTX_ACT_SILU, ACTX_ACT_ERF_GELU},
    {ACTX_ACT_TANH, ACTX_ACT_SIGMOID},
    {ACTX_ACT_MS_GELU, ACTX_ACT_MS_FAST_GELU},
    {ACTX_ACT_MS_QUICK_GELU, ACTX_ACT_MS_QUICK_GELU_OTHER_ALPHA},
    {ACTX_ACT_MS_BIAS_GELU, ACTX_ACT_MS_BIAS_GELU},
    {ACTX_ACT_SILU, ACTX_ACT_SIGMOID},
    {ACTX_ACT_QUICK_GELU, ACTX_ACT_MS_QUICK_GELU_OTHER_ALPHA},
};

/* ---- random models ------------------------------------------------------------------------ */

static uint64_t next_random(uint64_t *state) { /* splitmix64 */
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static size_t pick(uint64_t *state, size_t n) { return (size_t)(next_random(state) % n); }

/* QuickGelu's α: ordinary values, and values at the IEEE boundaries the fold rules are about. */
static const float g_alphas[] = {1.702f, 1.0f, -0.625f, 0.5f,     2.0f,     1e-30f,
                                 3e38f,  -0.0f, 0x1p-20f, 0x1p20f, 1e-40f, -1.702f};
#define N_ALPHAS (sizeof g_alphas / sizeof g_alphas[0])

#define MAX_LINKS 3
#define MAX_FLOWS 3

typedef struct random_graph {
  size_t n_links;
  actx_act_kind kinds[MAX_LINKS];
  float alphas[MAX_LINKS]; /* for the QuickGelu kinds; never 0, which means the default */
} random_graph;

static void random_chain(uint64_t *state, random_graph *rg) {
  rg->n_links = 1 + pick(state, MAX_LINKS);
  for (size_t i = 0; i < rg->n_links; i++) {
    rg->kinds[i] = (actx_act_kind)pick(state, ACTX_ACT_COUNT);
    const float alpha = g_alphas[pick(state, N_ALPHAS)];
    rg->alphas[i] = alpha == 0 ? 1.0f : alpha;
  }
}

/* The chain in -> h0 -> h1 -> ... -> out, under the same names in every graph. */
static void add_chain(actx_model *g, const random_graph *rg, const char *in, const char *out,
                      uint64_t seed) {
  char prev[16], next[16], prefix[16];
  snprintf(prev, sizeof prev, "%s", in);
  for (size_t i = 0; i < rg->n_links; i++) {
    snprintf(prefix, sizeof prefix, "k%zu_", i);
    if (i + 1 == rg->n_links) snprintf(next, sizeof next, "%s", out);
    else snprintf(next, sizeof next, "h%zu", i);
    add_activation(g, rg->kinds[i], prev, next, prefix, rg->alphas[i], seed + i);
    snprintf(prev, sizeof prev, "%s", next);
  }
}

/* x -> flow 0 -> flow 1 -> ... -> y, each a Loop (one or two iterations) or an If on c. */
static int build_random(uint64_t *state, int64_t rows, bool *has_if, uint8_t **bytes,
                        size_t *size, char *description, size_t description_size) {
  const int64_t dims[2] = {rows, COLS};
  actx_model *m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, OPSET, 1);
  actx_model_add_input(m, "x", ACTX_ELEM_FLOAT, 2, dims, NULL);
  actx_model_add_input(m, "c", ACTX_ELEM_BOOL, 0, NULL, NULL);
  actx_model_add_output(m, "y", ACTX_ELEM_FLOAT, 2, dims, NULL);
  const int64_t one = 1, two = 2;
  const uint8_t yes = 1;
  actx_model_add_initializer(m, "trips1", ACTX_ELEM_INT64, 0, NULL, &one);
  actx_model_add_initializer(m, "trips2", ACTX_ELEM_INT64, 0, NULL, &two);
  actx_model_add_initializer(m, "keep_going", ACTX_ELEM_BOOL, 0, NULL, &yes);
  const size_t n_flows = 1 + pick(state, MAX_FLOWS);
  *has_if = false;
  size_t used = (size_t)snprintf(description, description_size, "%lld x %d:", (long long)rows,
                                 COLS);
  char in[32] = "x", out[32];
  for (size_t k = 0; k < n_flows; k++) {
    if (k + 1 == n_flows) snprintf(out, sizeof out, "y");
    else snprintf(out, sizeof out, "y%zu", k);
    const bool is_if = pick(state, 2) == 0;
    random_graph graphs[2];
    random_chain(state, &graphs[0]);
    random_chain(state, &graphs[1]);
    actx_model_node *node = NULL;
    if (is_if) {
      *has_if = true;
      node = actx_model_add_node(m, "If", "", 1, (const char *[]){"c"}, 1, (const char *[]){out});
      for (int b = 0; b < 2; b++) {
        actx_model *branch = actx_part_if_branch(ACTX_ELEM_FLOAT, 2, dims, NULL);
        add_chain(branch, &graphs[b], in, ACTX_PART_OUT, 100 * k + 10 * (uint64_t)b);
        actx_model_node_attr_graph(node, b ? "else_branch" : "then_branch", branch);
      }
    } else {
      const bool twice = pick(state, 2) == 0;
      node = actx_model_add_node(m, "Loop", "", 3,
                                 (const char *[]){twice ? "trips2" : "trips1", "keep_going", in},
                                 1, (const char *[]){out});
      actx_model *body = actx_part_loop_body(NULL, ACTX_ELEM_FLOAT, 2, dims, NULL);
      add_chain(body, &graphs[0], ACTX_PART_IN, ACTX_PART_OUT, 100 * k);
      actx_model_node_attr_graph(node, "body", body);
    }
    for (int b = 0; b < (is_if ? 2 : 1) && used < description_size; b++) {
      used += (size_t)snprintf(description + used, description_size - used, " %s[",
                               is_if ? (b ? "else" : "If then") : "Loop");
      for (size_t i = 0; i < graphs[b].n_links && used < description_size; i++)
        used += (size_t)snprintf(description + used, description_size - used, "%s%s(%g)",
                                 i ? ", " : "", actx_act_name(graphs[b].kinds[i]),
                                 (double)graphs[b].alphas[i]);
      if (used < description_size)
        used += (size_t)snprintf(description + used, description_size - used, "]");
    }
    snprintf(in, sizeof in, "%s", out);
  }
  const int rc = actx_model_serialize(m, bytes, size);
  if (rc != 0) printf("random model: %s\n", actx_model_error(m));
  actx_model_free(m);
  return rc;
}

static size_t test_random(size_t n_models, uint64_t seed) {
  uint64_t state = seed;
  static const int64_t rows[] = {1, 4, 16}; /* 1 Ki, 4 Ki, 16 Ki elements */
  static const char *const policies[] = {"auto", "all"};
  size_t exercised = 0;
  for (size_t i = 0; i < n_models; i++) {
    const int64_t r = rows[pick(&state, 3)];
    bool has_if = false;
    uint8_t *bytes = NULL;
    size_t size = 0;
    char label[1024];
    if (build_random(&state, r, &has_if, &bytes, &size, label, sizeof label) != 0) {
      CHECK(false, "random model %zu: model", i);
      continue;
    }
    long most = 0;
    for (int p = 0; p < 2; p++)
      for (int cond = 0; cond <= (has_if ? 1 : 0); cond++) {
        const uint8_t c = (uint8_t)cond;
        actx_ort_tensor in[2] = {
            {.elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, .rank = 2, .dims = {r, COLS},
             .data = g_x},
            {.elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL, .rank = 0, .data = (void *)&c},
        };
        const ep_session_spec spec = {.policy = policies[p], .threads = 1 + (int)(i % 2)};
        const long on_actx = ep_check_against_ort(bytes, size, &spec, 2, in, label);
        if (on_actx > most) most = on_actx;
      }
    exercised += most > 0;
    free(bytes);
  }
  return exercised;
}

int main(int argc, char **argv) {
  if (ep_test_init(argc, argv) != 0) return 2;
  ep_fill_inputs(ACTX_ELEM_FLOAT, g_x, ROWS * COLS, 7);
  size_t n_models = 0;
  for (size_t i = 0; i < sizeof g_pairs / sizeof g_pairs[0]; i++)
    for (int order = 0; order < 2; order++) {
      const actx_act_kind a = g_pairs[i][order], b = g_pairs[i][1 - order];
      char label[256];
      uint8_t *bytes = NULL;
      size_t size = 0;
      snprintf(label, sizeof label, "loops: %s, then %s", actx_act_name(a), actx_act_name(b));
      if (build_loops(a, b, &bytes, &size) == 0) check_model(bytes, size, false, label);
      else CHECK(false, "%s: model", label);
      free(bytes);
      snprintf(label, sizeof label, "if: then %s, else %s", actx_act_name(a), actx_act_name(b));
      if (build_if(a, b, &bytes, &size) == 0) check_model(bytes, size, true, label);
      else CHECK(false, "%s: model", label);
      free(bytes);
      n_models += 2;
    }
  enum { N_RANDOM = 120 };
  const size_t exercised = test_random(N_RANDOM, 2025);
  CHECK(exercised > N_RANDOM / 2, "only %zu of %d random models ran a node on actx", exercised,
        N_RANDOM);
  actx_ort_shutdown();
  printf("%zu nested models, %d random ones (%zu with nodes on actx), %d failures\n", n_models,
         N_RANDOM, exercised, g_failures);
  return g_failures ? 1 : 0;
}
