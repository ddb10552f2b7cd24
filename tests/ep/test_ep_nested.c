/* Nested graphs: claimed nodes and fused subgraphs inside Loop bodies and If branches.
 *
 * usage: test_ep_nested <absolute path of libactx_ep.so>
 *
 * Exporters write every Loop body and every If branch with the same value names (v_in → v_out,
 * the same initializer names), so two graphs of one model can hold different activations under
 * the same names. Each model here puts two activations in two such graphs (two Loops one after
 * the other, or the two branches of an If) in both orders, fused subgraphs and single nodes,
 * with and without a bias, and compares ORT alone with ORT + actx bit for bit under `auto` and
 * `all`, checking that actx ran some of the nodes (else the comparison proves nothing). */
#include <stdlib.h>
#include <string.h>

#include "ep_test.h"

/* [16, 1024]: 16 Ki elements, where `auto` claims every kind below in float32 but Erf. */
#define ROWS 16
#define COLS 1024

typedef enum body_kind {
  BODY_QUICK_GELU, /* x·Sigmoid(1.702·x), fused */
  BODY_QUICK_GELU_OTHER_ALPHA,
  BODY_SILU,          /* x·Sigmoid(x), fused */
  BODY_ERF_GELU,      /* (x·(1 + erf(x/√2)))·0.5, fused */
  BODY_BIAS_ERF_GELU, /* the same after Add(x, b), fused into one BiasGelu */
  BODY_TANH,          /* single nodes from here on */
  BODY_SIGMOID,
  BODY_MS_GELU,
  BODY_MS_FAST_GELU,
  BODY_MS_QUICK_GELU, /* alpha 1.702 */
  BODY_MS_QUICK_GELU_OTHER_ALPHA,
  BODY_MS_BIAS_GELU, /* bias "b" */
  BODY_KIND_COUNT
} body_kind;

static const char *const body_names[BODY_KIND_COUNT] = {
    "QuickGelu(1.702) subgraph",
    "QuickGelu(-0.625) subgraph",
    "SiLU subgraph",
    "erf GELU subgraph",
    "bias + erf GELU subgraph",
    "Tanh",
    "Sigmoid",
    "ms.Gelu",
    "ms.FastGelu",
    "ms.QuickGelu(1.702)",
    "ms.QuickGelu(-0.625)",
    "ms.BiasGelu",
};

static void add_scalar(actx_model *g, const char *name, float value) {
  actx_model_add_initializer(g, name, ACTX_ELEM_FLOAT, 0, NULL, &value);
}

/* The activation's nodes, reading `in` and writing `out`. Every graph uses the same names for
 * its intermediates and initializers; seed makes the bias values differ between graphs. */
static void add_activation(actx_model *g, body_kind kind, const char *in, const char *out,
                           uint64_t seed) {
  const char *x = in;
  if (kind == BODY_BIAS_ERF_GELU || kind == BODY_MS_BIAS_GELU) {
    float bias[COLS];
    ep_fill_inputs(ACTX_ELEM_FLOAT, bias, COLS, seed);
    for (size_t i = 0; i < COLS; i++) /* finite: a bias NaN would hide the input's */
      if (!(bias[i] > -1e30f && bias[i] < 1e30f)) bias[i] = (float)(i % 7) - 3.0f;
    const int64_t dims[1] = {COLS};
    actx_model_add_initializer(g, "b", ACTX_ELEM_FLOAT, 1, dims, bias);
  }
  switch (kind) {
    case BODY_QUICK_GELU:
    case BODY_QUICK_GELU_OTHER_ALPHA:
    case BODY_SILU: {
      const char *arg = x;
      if (kind != BODY_SILU) {
        add_scalar(g, "alpha", kind == BODY_QUICK_GELU ? 1.702f : -0.625f);
        actx_model_add_node(g, "Mul", "", 2, (const char *[]){x, "alpha"}, 1,
                            (const char *[]){"t"});
        arg = "t";
      }
      actx_model_add_node(g, "Sigmoid", "", 1, (const char *[]){arg}, 1, (const char *[]){"s"});
      actx_model_add_node(g, "Mul", "", 2, (const char *[]){x, "s"}, 1, (const char *[]){out});
      break;
    }
    case BODY_BIAS_ERF_GELU:
      actx_model_add_node(g, "Add", "", 2, (const char *[]){x, "b"}, 1, (const char *[]){"r"});
      x = "r";
      /* fall through */
    case BODY_ERF_GELU:
      add_scalar(g, "sqrt2", 1.41421356f);
      add_scalar(g, "one", 1.0f);
      add_scalar(g, "half", 0.5f);
      actx_model_add_node(g, "Div", "", 2, (const char *[]){x, "sqrt2"}, 1, (const char *[]){"a"});
      actx_model_add_node(g, "Erf", "", 1, (const char *[]){"a"}, 1, (const char *[]){"e"});
      actx_model_add_node(g, "Add", "", 2, (const char *[]){"e", "one"}, 1, (const char *[]){"f"});
      actx_model_add_node(g, "Mul", "", 2, (const char *[]){x, "f"}, 1, (const char *[]){"m"});
      actx_model_add_node(g, "Mul", "", 2, (const char *[]){"m", "half"}, 1,
                          (const char *[]){out});
      break;
    case BODY_TANH:
    case BODY_SIGMOID:
      actx_model_add_node(g, kind == BODY_TANH ? "Tanh" : "Sigmoid", "", 1, (const char *[]){x}, 1,
                          (const char *[]){out});
      break;
    case BODY_MS_GELU:
    case BODY_MS_FAST_GELU:
      actx_model_add_node(g, kind == BODY_MS_GELU ? "Gelu" : "FastGelu", ACTX_MODEL_MS_DOMAIN, 1,
                          (const char *[]){x}, 1, (const char *[]){out});
      break;
    case BODY_MS_QUICK_GELU:
    case BODY_MS_QUICK_GELU_OTHER_ALPHA: {
      actx_model_node *n = actx_model_add_node(g, "QuickGelu", ACTX_MODEL_MS_DOMAIN, 1,
                                               (const char *[]){x}, 1, (const char *[]){out});
      actx_model_node_attr_float(n, "alpha", kind == BODY_MS_QUICK_GELU ? 1.702f : -0.625f);
      break;
    }
    case BODY_MS_BIAS_GELU:
      actx_model_add_node(g, "BiasGelu", ACTX_MODEL_MS_DOMAIN, 2, (const char *[]){x, "b"}, 1,
                          (const char *[]){out});
      break;
    case BODY_KIND_COUNT: break;
  }
}

static const int64_t g_dims[2] = {ROWS, COLS};

/* A Loop body running the activation once per iteration on its carried value. */
static actx_model *loop_body(body_kind kind, uint64_t seed) {
  actx_model *b = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, 17, 1);
  actx_model_add_input(b, "i", ACTX_ELEM_INT64, 0, NULL, NULL);
  actx_model_add_input(b, "c_in", ACTX_ELEM_BOOL, 0, NULL, NULL);
  actx_model_add_input(b, "v_in", ACTX_ELEM_FLOAT, 2, g_dims, NULL);
  actx_model_add_output(b, "c_out", ACTX_ELEM_BOOL, 0, NULL, NULL);
  actx_model_add_output(b, "v_out", ACTX_ELEM_FLOAT, 2, g_dims, NULL);
  actx_model_add_node(b, "Identity", "", 1, (const char *[]){"c_in"}, 1,
                      (const char *[]){"c_out"});
  add_activation(b, kind, "v_in", "v_out", seed);
  return b;
}

/* An If branch applying the activation to the outer graph's x. */
static actx_model *branch(body_kind kind, uint64_t seed) {
  actx_model *b = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, 17, 1);
  actx_model_add_output(b, "v_out", ACTX_ELEM_FLOAT, 2, g_dims, NULL);
  add_activation(b, kind, "x", "v_out", seed);
  return b;
}

/* x → Loop(first) → Loop(second) → y, one iteration each. */
static int build_loops(body_kind first, body_kind second, uint8_t **bytes, size_t *size) {
  actx_model *m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, 17, 1);
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
static int build_if(body_kind then_kind, body_kind else_kind, uint8_t **bytes, size_t *size) {
  actx_model *m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, 17, 1);
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
static const body_kind g_pairs[][2] = {
    {BODY_QUICK_GELU, BODY_SILU},
    {BODY_QUICK_GELU, BODY_QUICK_GELU_OTHER_ALPHA},
    {BODY_ERF_GELU, BODY_BIAS_ERF_GELU},
    {BODY_BIAS_ERF_GELU, BODY_BIAS_ERF_GELU}, /* the same names, other bias values */
    {BODY_SILU, BODY_ERF_GELU},
    {BODY_TANH, BODY_SIGMOID},
    {BODY_MS_GELU, BODY_MS_FAST_GELU},
    {BODY_MS_QUICK_GELU, BODY_MS_QUICK_GELU_OTHER_ALPHA},
    {BODY_MS_BIAS_GELU, BODY_MS_BIAS_GELU},
    {BODY_SILU, BODY_SIGMOID},
    {BODY_QUICK_GELU, BODY_MS_QUICK_GELU_OTHER_ALPHA},
};

int main(int argc, char **argv) {
  if (ep_test_init(argc, argv) != 0) return 2;
  ep_fill_inputs(ACTX_ELEM_FLOAT, g_x, ROWS * COLS, 7);
  size_t n_models = 0;
  for (size_t i = 0; i < sizeof g_pairs / sizeof g_pairs[0]; i++)
    for (int order = 0; order < 2; order++) {
      const body_kind a = g_pairs[i][order], b = g_pairs[i][1 - order];
      char label[256];
      uint8_t *bytes = NULL;
      size_t size = 0;
      snprintf(label, sizeof label, "loops: %s, then %s", body_names[a], body_names[b]);
      if (build_loops(a, b, &bytes, &size) == 0) check_model(bytes, size, false, label);
      else CHECK(false, "%s: model", label);
      free(bytes);
      snprintf(label, sizeof label, "if: then %s, else %s", body_names[a], body_names[b]);
      if (build_if(a, b, &bytes, &size) == 0) check_model(bytes, size, true, label);
      else CHECK(false, "%s: model", label);
      free(bytes);
      n_models += 2;
    }
  actx_ort_shutdown();
  printf("%zu nested models, %d failures\n", n_models, g_failures);
  return g_failures ? 1 : 0;
}
