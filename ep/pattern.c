/* Recognises lone nodes that ORT would fuse with their neighbours if we left them alone: an Erf,
 * Tanh or Sigmoid at the core of an exported activation subgraph, or a Gelu after a bias Add.
 * It decides about a node the EP did not take as part of a whole fused subgraph (fusion.c):
 * under `auto` that is a subgraph ORT would fuse into the same bits but that is too small for us
 * to win, or one ORT runs differently (float16, or a spelling its fusions miss).
 *
 * ORT runs its graph optimisations in two phases around partitioning: level 1 (ONNX-only
 * rewrites) before the EPs' GetCapability, level 2 and up after it, and only on nodes assigned
 * to ORT's own EPs. So a plugin EP sees the graph *before* the level-2 fusions GeluFusion (for
 * models below opset 20), FastGeluFusion, BiasGeluFusion and QuickGeluFusion. If we claimed the
 * Erf of Div → Erf → Add → Mul → Mul, ORT could no longer fuse the five nodes into its one Gelu
 * kernel and would run four elementwise kernels around ours: slower for the whole session even
 * though our Erf is not. (For opset >= 20 models GeluFusion also runs at level 1 and we see the
 * fused ai.onnx Gelu, which we do want.)
 *
 * The match is deliberately looser than ORT's own: declining a node ORT would not have fused
 * costs little (ORT runs it at its own speed), claiming one it would have fused costs a lot. */
#include <math.h>
#include <string.h>

#include "actx_ep.h"

/* Relative tolerance when comparing a constant with √2, 1/√2, √(2/π) or 1. ORT accepts both
 * float √2 and the 1.4142099... some exporters use (relative difference 1.5e-6). A float16 or
 * bfloat16 constant is further off by its own rounding (float16 √2 by 1.1e-4). */
#define CONSTANT_TOLERANCE 1e-4
#define HALF_CONSTANT_TOLERANCE 1e-2

/* A one-element constant initializer (of any rank); *ok false if value is not one. */
static OrtStatus *scalar_constant(const OrtApi *api, const OrtValueInfo *value,
                                  actx_ep_constant *out, bool *ok) {
  return actx_ep_scalar_constant(api, value, out, ok);
}

static bool near(const actx_ep_constant *c, double want) {
  const bool half = c->type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16 ||
                    c->type == ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16;
  return fabs(c->value - want) <=
         (half ? HALF_CONSTANT_TOLERANCE : CONSTANT_TOLERANCE) * fabs(want);
}

static bool is_op(const OrtApi *api, const OrtNode *node, const char *op_type, OrtStatus **st) {
  bool is = false;
  *st = actx_ep_node_is(api, node, op_type, NULL, &is);
  return *st == NULL && is;
}

/* A two-input node's inputs (NULL-filled if it has another count). */
static OrtStatus *two_inputs(const OrtApi *api, const OrtNode *node, const OrtValueInfo *in[2]) {
  size_t n = 0;
  OrtStatus *st = actx_ep_node_inputs(api, node, in, 2, &n);
  if (st == NULL && n != 2) in[0] = in[1] = NULL;
  return st;
}

/* The node's first input and output, and the output's only consumer (NULL if it has none or
 * several, or the output is also a graph output: ORT fuses neither case). */
typedef struct node_edges {
  const OrtValueInfo *input, *output;
  const OrtNode *producer; /* of input; NULL for a graph input or initializer */
  const OrtNode *consumer; /* the single consumer of output */
} node_edges;

static OrtStatus *read_edges(const OrtApi *api, const OrtNode *node, node_edges *e) {
  memset(e, 0, sizeof *e);
  OrtStatus *st = api->Node_GetInputs(node, &e->input, 1);
  if (st == NULL) st = api->Node_GetOutputs(node, &e->output, 1);
  if (st != NULL || e->input == NULL || e->output == NULL) return st;
  if ((st = actx_ep_value_producer(api, e->input, &e->producer)) != NULL) return st;
  return actx_ep_single_consumer(api, e->output, &e->consumer);
}

/* Whether node (two inputs) combines `value` with a scalar constant near `want`. */
static OrtStatus *has_constant_operand(const OrtApi *api, const OrtNode *node,
                                       const OrtValueInfo *value, double want, bool *out) {
  *out = false;
  const OrtValueInfo *other = NULL;
  OrtStatus *st = actx_ep_other_input(api, node, value, &other);
  if (st != NULL || other == NULL) return st;
  actx_ep_constant c;
  bool ok = false;
  if ((st = scalar_constant(api, other, &c, &ok)) != NULL) return st;
  *out = ok && near(&c, want);
  return NULL;
}

/* Div(x, √2) → Erf → Add(1), or Mul(x, 1/√2) → Erf → Add(1). */
static OrtStatus *erf_in_gelu(const OrtApi *api, const node_edges *e, bool *out) {
  *out = false;
  OrtStatus *st = NULL;
  bool scaled = false;
  const OrtValueInfo *in[2] = {NULL, NULL};
  if (e->producer != NULL && (st = two_inputs(api, e->producer, in)) != NULL) return st;
  if (in[0] == NULL || in[1] == NULL) return NULL;
  actx_ep_constant c;
  bool ok = false;
  if (is_op(api, e->producer, "Div", &st)) {
    if ((st = scalar_constant(api, in[1], &c, &ok)) != NULL) return st;
    scaled = ok && (near(&c, ACTX_EP_SQRT_2) || near(&c, ACTX_EP_SQRT_2_SHORT));
  } else if (st == NULL && is_op(api, e->producer, "Mul", &st)) {
    for (int i = 0; i < 2 && !scaled; i++) {
      if ((st = scalar_constant(api, in[i], &c, &ok)) != NULL) return st;
      scaled = ok && near(&c, ACTX_EP_SQRT_1_2);
    }
  }
  if (st != NULL || !scaled) return st;
  if (!is_op(api, e->consumer, "Add", &st)) return st;
  return has_constant_operand(api, e->consumer, e->output, 1.0, out);
}

/* Div(x, Sqrt(·)) → Erf → Sum: ONNX's function body of Gelu-20, which ORT inlines where it
 * leaves a Gelu node to its CPU EP without a kernel (float16, where ORT then computes the body
 * as a float32 island; also when it declines the node's `approximate`). Taken alone, the Erf
 * would round to float16 in the middle of that island. */
static OrtStatus *erf_in_gelu_function(const OrtApi *api, const node_edges *e, bool *out) {
  *out = false;
  OrtStatus *st = NULL;
  if (!is_op(api, e->producer, "Div", &st)) return st;
  const OrtValueInfo *in[2] = {NULL, NULL};
  const OrtNode *divisor = NULL;
  if ((st = two_inputs(api, e->producer, in)) != NULL || in[1] == NULL) return st;
  if ((st = actx_ep_value_producer(api, in[1], &divisor)) != NULL) return st;
  if (!is_op(api, divisor, "Sqrt", &st)) return st;
  *out = is_op(api, e->consumer, "Sum", &st);
  return st;
}

/* Mul(...) → Tanh → Add(1): the core of FastGeluFusion's two patterns (0.5·x·(1 + tanh(√(2/π)·
 * (x + 0.044715·x³)))), whose Tanh input is always a Mul. */
static OrtStatus *tanh_in_gelu(const OrtApi *api, const node_edges *e, bool *out) {
  *out = false;
  OrtStatus *st = NULL;
  if (!is_op(api, e->producer, "Mul", &st)) return st;
  if (!is_op(api, e->consumer, "Add", &st)) return st;
  return has_constant_operand(api, e->consumer, e->output, 1.0, out);
}

/* x·Sigmoid(x) (SiLU) or x·Sigmoid(α·x) (QuickGelu): the Sigmoid's only consumer is a Mul whose
 * other input is x. */
static OrtStatus *sigmoid_in_silu(const OrtApi *api, const node_edges *e, bool *out) {
  *out = false;
  OrtStatus *st = NULL;
  if (!is_op(api, e->consumer, "Mul", &st)) return st;
  const OrtValueInfo *x = NULL;
  if ((st = actx_ep_other_input(api, e->consumer, e->output, &x)) != NULL || x == NULL) return st;
  bool same = false;
  if ((st = actx_ep_same_value(api, x, e->input, &same)) != NULL) return st;
  if (same) { /* x · sigmoid(x) */
    *out = true;
    return NULL;
  }
  /* x · sigmoid(α·x): the Sigmoid input is Mul(x, α) with the same x */
  if (!is_op(api, e->producer, "Mul", &st)) return st;
  const OrtValueInfo *alpha = NULL;
  if ((st = actx_ep_other_input(api, e->producer, x, &alpha)) != NULL || alpha == NULL) return st;
  actx_ep_constant a;
  return scalar_constant(api, alpha, &a, out);
}

/* Add(x, bias) → Gelu, where one Add input is 1-D and as long as the other's last dimension:
 * ORT's BiasGeluFusion turns the pair into BiasGelu (FastGelu for the tanh forms). The Add must
 * feed only the Gelu and not be a graph output. Measured: ORT's Add + our Gelu is slower than
 * ORT's fused BiasGelu (docs/ep-policy.md); fusion.c takes the pair as one node where it can. */
static OrtStatus *gelu_after_bias_add(const OrtApi *api, const node_edges *e, bool *out) {
  *out = false;
  OrtStatus *st = NULL;
  if (!is_op(api, e->producer, "Add", &st)) return st;
  const OrtNode *add_consumer = NULL;
  if ((st = actx_ep_single_consumer(api, e->input, &add_consumer)) != NULL || add_consumer == NULL)
    return st;
  const OrtValueInfo *in[2];
  if ((st = two_inputs(api, e->producer, in)) != NULL || in[0] == NULL || in[1] == NULL) return st;
  actx_ep_tensor_meta a, b;
  if ((st = actx_ep_value_meta(api, in[0], &a)) != NULL) return st;
  if ((st = actx_ep_value_meta(api, in[1], &b)) != NULL) return st;
  if (!a.has_shape || !b.has_shape || a.rank < 1 || b.rank < 1) return NULL;
  if (a.rank != 1 && b.rank != 1) return NULL;
  /* ORT compares the two last dimensions as written in the model; a symbolic one may match */
  const int64_t da = a.dims[a.rank - 1], db = b.dims[b.rank - 1];
  *out = da < 0 || db < 0 || da == db;
  return NULL;
}

OrtStatus *actx_ep_in_fusable_pattern(const OrtApi *api, const OrtNode *node, actx_ep_kind kind,
                                      bool *out) {
  *out = false;
  switch (kind) {
    case ACTX_EP_ERF:
    case ACTX_EP_TANH:
    case ACTX_EP_SIGMOID:
    case ACTX_EP_GELU:
    case ACTX_EP_GELU_TANH:
    case ACTX_EP_MS_GELU:
    case ACTX_EP_FAST_GELU: break;
    default: return NULL;
  }
  node_edges e;
  OrtStatus *st = read_edges(api, node, &e);
  if (st != NULL || e.input == NULL || e.output == NULL) return st;
  switch (kind) {
    case ACTX_EP_ERF:
      if ((st = erf_in_gelu(api, &e, out)) != NULL || *out) return st;
      return erf_in_gelu_function(api, &e, out);
    case ACTX_EP_TANH: return tanh_in_gelu(api, &e, out);
    case ACTX_EP_SIGMOID: return sigmoid_in_silu(api, &e, out);
    default: return gelu_after_bias_add(api, &e, out);
  }
}
