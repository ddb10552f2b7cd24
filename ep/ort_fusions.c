/* Whether ORT alone would turn a matched activation subgraph into one kernel of its own.
 *
 * Our fused node computes the activation in one pass, with the same arithmetic as ORT's fused
 * kernels (com.microsoft Gelu, BiasGelu, FastGelu, QuickGelu). When ORT's level-2 fusions would
 * have produced exactly that kernel from the same nodes, a session with our node gives ORT's bits;
 * when they would not, ORT runs the nodes one by one, rounding after each, and our result can
 * differ in the last bits. So this file repeats the conditions of ORT 1.30's GeluFusion,
 * FastGelu's two formulas, QuickGeluFusion and BiasGeluFusion, quirks included (which operand
 * may be the constant, which intermediates may be graph outputs, the producer of x), and the
 * policies take only subgraphs that pass. The producer of x is judged as ORT's fusions will find
 * it, which depends on what became of it before (actx_ep_ort_view): ORT alone may have fused it
 * into the previous GELU of a chain, or our claim may have taken it; so takes.c asks twice, of
 * ORT alone's graph and of the graph we hand back. The tests check every variant against ORT.
 *
 * Only float32: ORT rewrites a float16 subgraph into a float32 island of unfused nodes between
 * two Casts (its fusions then find nothing assigned to one EP), and has no bfloat16 kernels. */
#include <math.h>
#include <string.h>

#include "actx_ep.h"

/* ORT's tolerance for a fusion's constants (optimizer_utils::IsInitializerWithExpectedValue). */
#define ORT_ATOL 1e-8
#define ORT_RTOL 1e-5
/* The float constants ORT's fusions compare with: the formulas' constants rounded to float. */
#define ORT_SQRT_2 ((float)ACTX_EP_SQRT_2)
#define ORT_SQRT_2_SHORT ((float)ACTX_EP_SQRT_2_SHORT)
#define ORT_FAST_GELU_SCALE ((float)ACTX_EP_SQRT_2_OVER_PI)
#define ORT_FAST_GELU_CUBIC ((float)ACTX_EP_CUBIC_COEFF)
#define ORT_POW_THREE 3.0f


/* A scalar (rank 0 or [1]) constant initializer of a float type equal to want within ORT's
 * tolerance. float16 constants only occur in float16 models, which never count as fused. */
static OrtStatus *ort_constant_is(const OrtApi *api, const OrtValueInfo *value, float want,
                                  bool *out) {
  *out = false;
  actx_ep_constant c;
  bool ok = false;
  OrtStatus *st = actx_ep_scalar_constant(api, value, &c, &ok);
  if (st != NULL || !ok || c.rank > 1) return st;
  if (c.type != ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT &&
      c.type != ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE)
    return NULL;
  *out = isfinite(c.value) && fabs(c.value - want) <= ORT_ATOL + ORT_RTOL * fabs((double)want);
  return NULL;
}

/* value's producer, when it is op_type (default domain, a version ORT's fusions accept) with two
 * inputs; else NULL. */
static OrtStatus *producer_of(const OrtApi *api, const OrtValueInfo *value, const char *op_type,
                              const int *since, const OrtNode **node) {
  *node = NULL;
  const OrtNode *p = NULL;
  bool is = false;
  OrtStatus *st = actx_ep_value_producer(api, value, &p);
  if (st == NULL) st = actx_ep_node_is(api, p, op_type, since, &is);
  if (st != NULL || !is) return st;
  size_t n = 0;
  if ((st = api->Node_GetNumInputs(p, &n)) == NULL && n == 2) *node = p;
  return st;
}

/* value's only consumer, when it is op_type with two inputs; else NULL. */
static OrtStatus *consumer_of(const OrtApi *api, const OrtValueInfo *value, const char *op_type,
                              const int *since, const OrtNode **node) {
  *node = NULL;
  const OrtNode *c = NULL;
  bool is = false;
  OrtStatus *st = actx_ep_single_consumer(api, value, &c);
  if (st == NULL) st = actx_ep_node_is(api, c, op_type, since, &is);
  if (st != NULL || !is) return st;
  size_t n = 0;
  if ((st = api->Node_GetNumInputs(c, &n)) == NULL && n == 2) *node = c;
  return st;
}

/* Whether node's two inputs are `a` and a constant ORT accepts as want, in either order. */
static OrtStatus *takes_and_constant(const OrtApi *api, const OrtNode *node, const OrtValueInfo *a,
                                     float want, bool *out) {
  *out = false;
  const OrtValueInfo *other = NULL;
  OrtStatus *st = actx_ep_other_input(api, node, a, &other);
  if (st != NULL || other == NULL) return st;
  return ort_constant_is(api, other, want, out);
}

/* Whether node's two inputs are `a` and `b`, in either order. */
static OrtStatus *takes_both(const OrtApi *api, const OrtNode *node, const OrtValueInfo *a,
                             const OrtValueInfo *b, bool *out) {
  *out = false;
  const OrtValueInfo *other = NULL;
  OrtStatus *st = actx_ep_other_input(api, node, a, &other);
  if (st != NULL || other == NULL) return st;
  return actx_ep_same_value(api, other, b, out);
}

static OrtStatus *output_of(const OrtApi *api, const OrtNode *node, const OrtValueInfo **value) {
  return actx_ep_node_output(api, node, value);
}

static bool in_subgraph(const actx_ep_fusion *f, const OrtNode *node) {
  for (size_t i = 0; i < f->n_nodes; i++)
    if (f->nodes[i] == node) return true;
  return false;
}

/* One question to ORT's fusions about one subgraph, in one view of the graph. */
typedef struct judge {
  const OrtApi *api;
  const actx_ep_ort_view *view;
  bool unsure; /* the answer hung on a node of unknown fate */
} judge;

/* Whether the node producing value is, when ORT's fusions look at it, still an op_type node
 * (its rules compare only the operator). A node that became part of another kernel, ORT's fused
 * node or ours, is not; where its fate is unknown, *out is false and the judge unsure. */
static OrtStatus *producer_still_is(judge *j, const OrtValueInfo *value, const char *op_type,
                                    bool *out) {
  *out = false;
  const OrtNode *p = NULL;
  bool is = false;
  OrtStatus *st = actx_ep_value_producer(j->api, value, &p);
  if (st == NULL) st = actx_ep_node_is(j->api, p, op_type, NULL, &is);
  if (st != NULL || !is) return st;
  actx_ep_node_fate fate = ACTX_EP_NODE_UNKNOWN;
  if (j->view != NULL && j->view->fate != NULL &&
      (st = j->view->fate(j->view->ctx, p, &fate)) != NULL)
    return st;
  *out = fate == ACTX_EP_NODE_KEPT;
  if (fate == ACTX_EP_NODE_UNKNOWN) j->unsure = true;
  return NULL;
}

/* GeluFusion: Div(x, √2) → Erf → Add(1) → Mul, with the 0.5 either on x before the last Mul
 * (its pattern 1) or on the product after it (pattern 2). Pattern 2 is not found when x is
 * the output of a Mul *when GeluFusion looks*: ORT looks for pattern 1's Mul(x, 0.5) as the
 * first Mul feeding the last Mul, and takes x's producer for it. That Mul may by then be gone:
 * the last node of the previous GELU of a chain, which ORT fused before this one (it visits the
 * graph in topological order, and repeats its level-2 fusions while they change the graph), or
 * a node of one of our claims. */
/* The default-domain opset of the model holding node (0 if it says none). */
static OrtStatus *onnx_opset(const OrtApi *api, const OrtNode *node, int64_t *opset) {
  *opset = 0;
  const OrtGraph *graph = NULL;
  size_t n = 0;
  OrtStatus *st = api->Node_GetGraph(node, &graph);
  if (st == NULL && graph != NULL) st = api->Graph_GetNumOperatorSets(graph, &n);
  if (st != NULL || graph == NULL || n == 0 || n > 64) return st;
  const char *domains[64];
  int64_t versions[64];
  if ((st = api->Graph_GetOperatorSets(graph, domains, versions, n)) != NULL) return st;
  for (size_t i = 0; i < n; i++)
    if (actx_ep_is_onnx_domain(domains[i])) *opset = versions[i];
  return NULL;
}

static OrtStatus *erf_gelu(judge *j, const actx_ep_fusion *f, const OrtValueInfo **y) {
  const OrtApi *api = j->api;
  *y = NULL;
  /* From opset 20 on, GeluFusion does its work at level 1, into ai.onnx Gelu, before any EP
   * sees the graph, and its level-2 run leaves such models alone: a GELU we still see is one
   * ORT runs node by node, even where its x's producer is fused later (measured: after
   * QuickGelu, SiLU or a tanh GELU, ORT 1.30 fuses it at opset 17 and not at opset 20). */
  int64_t opset = 0;
  OrtStatus *st0 = onnx_opset(api, f->core, &opset);
  if (st0 != NULL || opset >= 20) return st0;
  const OrtValueInfo *arg = NULL, *erf_out = NULL, *sum = NULL, *prod = NULL, *other = NULL;
  const OrtNode *div = NULL, *add = NULL, *mul = NULL, *half = NULL;
  bool ok = false, same = false;
  size_t n = 0;
  OrtStatus *st = actx_ep_node_inputs(api, f->core, &arg, 1, &n);
  if (st == NULL) st = producer_of(api, arg, "Div", actx_ep_binary_since, &div);
  if (st != NULL || div == NULL) return st;
  const OrtValueInfo *div_in[2];
  if ((st = actx_ep_node_inputs(api, div, div_in, 2, &n)) != NULL) return st;
  if ((st = actx_ep_same_value(api, div_in[0], f->root, &same)) != NULL || !same) return st;
  if ((st = ort_constant_is(api, div_in[1], ORT_SQRT_2, &ok)) != NULL) return st;
  if (!ok && (st = ort_constant_is(api, div_in[1], ORT_SQRT_2_SHORT, &ok)) != NULL) return st;
  if (!ok) return NULL;
  if ((st = output_of(api, f->core, &erf_out)) != NULL ||
      (st = consumer_of(api, erf_out, "Add", actx_ep_binary_since, &add)) != NULL || add == NULL)
    return st;
  if ((st = takes_and_constant(api, add, erf_out, 1.0f, &ok)) != NULL || !ok) return st;
  if ((st = output_of(api, add, &sum)) != NULL ||
      (st = consumer_of(api, sum, "Mul", actx_ep_binary_since, &mul)) != NULL || mul == NULL)
    return st;
  if ((st = actx_ep_other_input(api, mul, sum, &other)) != NULL || other == NULL) return st;
  /* ORT takes the first Mul among the last Mul's inputs' producers for pattern 1's Mul(x, 0.5):
   * our pattern 1's own, or, in pattern 2, x's producer unless that is by then part of a fused
   * kernel (then it tries pattern 2). */
  if ((st = producer_of(api, other, "Mul", actx_ep_binary_since, &half)) != NULL) return st;
  if (half != NULL && !in_subgraph(f, half)) {
    bool still_mul = false;
    if ((st = producer_still_is(j, other, "Mul", &still_mul)) != NULL || j->unsure) return st;
    if (!still_mul) half = NULL;
  }
  if (half != NULL) { /* pattern 1: Mul(x, 0.5) feeding only the last Mul */
    const OrtNode *only = NULL;
    if ((st = actx_ep_single_consumer(api, other, &only)) != NULL || only != mul) return st;
    if ((st = takes_and_constant(api, half, f->root, 0.5f, &ok)) != NULL || !ok) return st;
    return output_of(api, mul, y);
  }
  if ((st = actx_ep_same_value(api, other, f->root, &same)) != NULL || !same) return st;
  if ((st = output_of(api, mul, &prod)) != NULL ||
      (st = consumer_of(api, prod, "Mul", actx_ep_binary_since, &half)) != NULL || half == NULL)
    return st;
  if ((st = takes_and_constant(api, half, prod, 0.5f, &ok)) != NULL || !ok) return st;
  return output_of(api, half, y);
}

/* FastGeluFusion's first formula: Tanh(Mul(Add(Mul(Mul(x, 0.044715), x), 1), Mul(x, √(2/π)))). */
static OrtStatus *fast_gelu_first(const OrtApi *api, const actx_ep_fusion *f, const OrtNode *mul3,
                                  bool *out) {
  *out = false;
  const OrtValueInfo *in[2];
  size_t n = 0;
  OrtStatus *st = actx_ep_node_inputs(api, mul3, in, 2, &n);
  if (st != NULL || n != 2) return st;
  for (int i = 0; i < 2 && !*out; i++) {
    const OrtNode *add1 = NULL, *mul2 = NULL, *mul1 = NULL, *mul4 = NULL;
    const OrtValueInfo *cubic = NULL;
    bool ok = false;
    if ((st = producer_of(api, in[i], "Add", actx_ep_binary_since, &add1)) != NULL ||
        (st = producer_of(api, in[1 - i], "Mul", actx_ep_binary_since, &mul4)) != NULL)
      return st;
    if (add1 == NULL || mul4 == NULL) continue;
    if ((st = takes_and_constant(api, mul4, f->root, ORT_FAST_GELU_SCALE, &ok)) != NULL) return st;
    if (!ok) continue;
    /* add1 = Add(mul2, 1) */
    const OrtValueInfo *add_in[2];
    if ((st = actx_ep_node_inputs(api, add1, add_in, 2, &n)) != NULL) return st;
    for (int j = 0; j < 2 && mul2 == NULL; j++) {
      if ((st = ort_constant_is(api, add_in[1 - j], 1.0f, &ok)) != NULL) return st;
      if (ok && (st = producer_of(api, add_in[j], "Mul", actx_ep_binary_since, &mul2)) != NULL)
        return st;
    }
    if (mul2 == NULL) continue;
    /* mul2 = Mul(mul1, x), mul1 = Mul(x, 0.044715) */
    if ((st = actx_ep_other_input(api, mul2, f->root, &cubic)) != NULL) return st;
    if (cubic == NULL) continue;
    if ((st = producer_of(api, cubic, "Mul", actx_ep_binary_since, &mul1)) != NULL) return st;
    if (mul1 == NULL) continue;
    if ((st = takes_and_constant(api, mul1, f->root, ORT_FAST_GELU_CUBIC, &ok)) != NULL) return st;
    *out = ok;
  }
  return NULL;
}

/* FastGeluFusion's second formula: Tanh(Mul(Add(Mul(Pow(x, 3), 0.044715), x), √(2/π))). It also
 * looks for a Cast in front of x and gives up when x comes from a Cast feeding more than Pow and
 * Add, which x always does here (the 0.5·x Mul reads it too); a Cast we took into a claim
 * (fusion.c, match_half_casts) is no Cast to it. */
static OrtStatus *fast_gelu_second(judge *j, const actx_ep_fusion *f, const OrtNode *mul2,
                                   bool *out) {
  const OrtApi *api = j->api;
  *out = false;
  const OrtValueInfo *in[2];
  size_t n = 0;
  OrtStatus *st = actx_ep_node_inputs(api, mul2, in, 2, &n);
  if (st != NULL || n != 2) return st;
  for (int i = 0; i < 2 && !*out; i++) {
    const OrtNode *add1 = NULL, *mul1 = NULL, *pow = NULL;
    const OrtValueInfo *scaled = NULL;
    bool ok = false;
    if ((st = ort_constant_is(api, in[1 - i], ORT_FAST_GELU_SCALE, &ok)) != NULL) return st;
    if (!ok) continue;
    if ((st = producer_of(api, in[i], "Add", actx_ep_binary_since, &add1)) != NULL) return st;
    if (add1 == NULL) continue;
    /* add1 = Add(mul1, x), mul1 = Mul(Pow(x, 3), 0.044715) */
    if ((st = actx_ep_other_input(api, add1, f->root, &scaled)) != NULL) return st;
    if (scaled == NULL) continue;
    if ((st = producer_of(api, scaled, "Mul", actx_ep_binary_since, &mul1)) != NULL) return st;
    if (mul1 == NULL) continue;
    const OrtValueInfo *mul1_in[2];
    if ((st = actx_ep_node_inputs(api, mul1, mul1_in, 2, &n)) != NULL) return st;
    for (int j = 0; j < 2 && pow == NULL; j++) {
      if ((st = ort_constant_is(api, mul1_in[1 - j], ORT_FAST_GELU_CUBIC, &ok)) != NULL) return st;
      if (ok && (st = producer_of(api, mul1_in[j], "Pow", actx_ep_pow_since, &pow)) != NULL)
        return st;
    }
    if (pow == NULL) continue;
    const OrtValueInfo *pow_in[2];
    bool same = false;
    if ((st = actx_ep_node_inputs(api, pow, pow_in, 2, &n)) != NULL ||
        (st = actx_ep_same_value(api, pow_in[0], f->root, &same)) != NULL)
      return st;
    if (!same) continue;
    if ((st = ort_constant_is(api, pow_in[1], ORT_POW_THREE, &ok)) != NULL) return st;
    *out = ok;
  }
  bool x_from_cast = false;
  if (*out && (st = producer_still_is(j, f->root, "Cast", &x_from_cast)) != NULL) return st;
  if (x_from_cast || j->unsure) *out = false;
  return NULL;
}

/* FastGeluFusion: either formula, then Tanh → Add(1) → Mul with Mul(x, 0.5). Its result must not
 * be a graph output (the fused node gets a new output name). */
static OrtStatus *tanh_gelu(judge *j, const actx_ep_fusion *f, const OrtValueInfo **y) {
  const OrtApi *api = j->api;
  *y = NULL;
  const OrtValueInfo *arg = NULL, *tanh_out = NULL, *sum = NULL, *other = NULL, *out = NULL;
  const OrtNode *mul3 = NULL, *add = NULL, *mul5 = NULL, *mul6 = NULL;
  size_t n = 0;
  bool ok = false;
  OrtStatus *st = actx_ep_node_inputs(api, f->core, &arg, 1, &n);
  if (st == NULL) st = producer_of(api, arg, "Mul", actx_ep_binary_since, &mul3);
  if (st != NULL || mul3 == NULL) return st;
  if ((st = fast_gelu_first(api, f, mul3, &ok)) != NULL) return st;
  if (!ok && (st = fast_gelu_second(j, f, mul3, &ok)) != NULL) return st;
  if (!ok) return NULL;
  if ((st = output_of(api, f->core, &tanh_out)) != NULL ||
      (st = consumer_of(api, tanh_out, "Add", actx_ep_binary_since, &add)) != NULL || add == NULL)
    return st;
  if ((st = takes_and_constant(api, add, tanh_out, 1.0f, &ok)) != NULL || !ok) return st;
  if ((st = output_of(api, add, &sum)) != NULL ||
      (st = consumer_of(api, sum, "Mul", actx_ep_binary_since, &mul5)) != NULL || mul5 == NULL)
    return st;
  if ((st = actx_ep_other_input(api, mul5, sum, &other)) != NULL || other == NULL) return st;
  if ((st = producer_of(api, other, "Mul", actx_ep_binary_since, &mul6)) != NULL || mul6 == NULL)
    return st;
  bool graph_output = false;
  if ((st = api->ValueInfo_IsGraphOutput(other, &graph_output)) != NULL || graph_output) return st;
  if ((st = takes_and_constant(api, mul6, f->root, 0.5f, &ok)) != NULL || !ok) return st;
  if ((st = output_of(api, mul5, &out)) != NULL || out == NULL) return st;
  if ((st = api->ValueInfo_IsGraphOutput(out, &graph_output)) != NULL || graph_output) return st;
  *y = out;
  return NULL;
}

/* QuickGeluFusion: Mul(x, α) → Sigmoid → Mul(·, x), α any float scalar constant (the first
 * scalar constant input of that Mul), or Sigmoid(x) → Mul(·, x). */
static OrtStatus *quick_gelu(const OrtApi *api, const actx_ep_fusion *f, const OrtValueInfo **y) {
  *y = NULL;
  const OrtValueInfo *arg = NULL, *sig_out = NULL;
  const OrtNode *mul = NULL;
  size_t n = 0;
  bool same = false;
  OrtStatus *st = actx_ep_node_inputs(api, f->core, &arg, 1, &n);
  if (st == NULL) st = actx_ep_same_value(api, arg, f->root, &same);
  if (st != NULL) return st;
  if (!same) {
    const OrtNode *scale = NULL;
    if ((st = producer_of(api, arg, "Mul", actx_ep_binary_since, &scale)) != NULL || scale == NULL)
      return st;
    const OrtValueInfo *in[2];
    if ((st = actx_ep_node_inputs(api, scale, in, 2, &n)) != NULL) return st;
    int alpha_index = -1;
    for (int i = 0; i < 2 && alpha_index < 0; i++) {
      actx_ep_constant c;
      bool ok = false;
      if ((st = actx_ep_scalar_constant(api, in[i], &c, &ok)) != NULL) return st;
      if (ok && c.rank <= 1 &&
          (c.type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT ||
           c.type == ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE ||
           c.type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16))
        alpha_index = i;
    }
    if (alpha_index < 0) return NULL;
    if ((st = actx_ep_same_value(api, in[1 - alpha_index], f->root, &same)) != NULL || !same)
      return st;
  }
  if ((st = output_of(api, f->core, &sig_out)) != NULL ||
      (st = consumer_of(api, sig_out, "Mul", actx_ep_binary_since, &mul)) != NULL || mul == NULL)
    return st;
  if ((st = takes_both(api, mul, sig_out, f->root, &same)) != NULL || !same) return st;
  return output_of(api, mul, y);
}

OrtStatus *actx_ep_ort_fuses(const OrtApi *api, const actx_ep_fusion *f,
                             const actx_ep_ort_view *view, actx_ep_ort_verdict *out) {
  *out = ACTX_EP_ORT_UNFUSED;
  if (f->node.dtype != ACTX_F32) return NULL;
  /* BiasGeluFusion's conditions on the Add (a 1-D input along the other's last dimension, the
   * Add feeding only the activation) are the ones fusion.c matched the bias with. */
  judge j = {.api = api, .view = view};
  const OrtValueInfo *y = NULL;
  OrtStatus *st = NULL;
  switch (f->family) {
    case ACTX_EP_FUSION_ERF_GELU: st = erf_gelu(&j, f, &y); break;
    case ACTX_EP_FUSION_TANH_GELU: st = tanh_gelu(&j, f, &y); break;
    case ACTX_EP_FUSION_SIGMOID: st = quick_gelu(api, f, &y); break;
    case ACTX_EP_FUSION_GELU_NODE: y = f->y; break; /* the Gelu node is ORT's already */
    /* ORT drops the Casts and runs its float32 kernel on x (fusion.c, match_half_casts); but
     * not for Erf on an AArch64 core with FP16 arithmetic, where ORT arm64 has a float16 Erf
     * kernel and keeps the Casts (found against it under qemu, tests/emu) */
    case ACTX_EP_FUSION_HALF_CASTS:
      if (f->node.op == ACTX_OP_ERF && actx_ort_has_fp16_kernels()) return NULL;
      y = f->y;
      break;
  }
  if (st != NULL) return st;
  if (y == NULL) {
    if (j.unsure) *out = ACTX_EP_ORT_UNSURE;
    return NULL;
  }
  bool same = false;
  if ((st = actx_ep_same_value(api, y, f->y, &same)) == NULL && same) *out = ACTX_EP_ORT_FUSES;
  return st;
}
