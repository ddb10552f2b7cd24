/* Which single nodes the EP can run: the ORT operator (domain, type, since-version), the element
 * type, the attributes, and for the bias ops the shapes. Everything else is declined and stays
 * with ORT's CPU EP, which then also reports any error the node has (a bias of the wrong
 * length, an unknown `approximate`, ...) exactly as it would without us. */
#include <stdio.h>
#include <string.h>

#include "actx_ep.h"

typedef actx_ep_op_rule op_rule;

/* The schemas whose semantics actx reproduces. Older ones (Tanh-1, Sigmoid-1 with
 * consumed_inputs) and newer ones we have not checked are declined. */
static const op_rule op_rules[] = {
    {"", "Erf", {9, 13}, ACTX_EP_ERF},
    {"", "Gelu", {20, 0}, ACTX_EP_GELU}, /* or ACTX_EP_GELU_TANH, by attribute */
    {"", "Tanh", {6, 13}, ACTX_EP_TANH},
    {"", "Sigmoid", {6, 13}, ACTX_EP_SIGMOID},
    {"com.microsoft", "Gelu", {1, 0}, ACTX_EP_MS_GELU},
    {"com.microsoft", "BiasGelu", {1, 0}, ACTX_EP_BIAS_GELU},
    {"com.microsoft", "FastGelu", {1, 0}, ACTX_EP_FAST_GELU}, /* or _BIAS, by inputs */
    {"com.microsoft", "QuickGelu", {1, 0}, ACTX_EP_QUICK_GELU},
};
#define N_OP_RULES (sizeof op_rules / sizeof op_rules[0])

const actx_ep_op_rule *actx_ep_op_rules(size_t *n) {
  *n = N_OP_RULES;
  return op_rules;
}

const char *actx_ep_kind_name(actx_ep_kind kind) {
  static const char *const names[ACTX_EP_KIND_COUNT] = {
      "Erf",
      "Gelu",
      "Gelu(tanh)",
      "com.microsoft.Gelu",
      "com.microsoft.BiasGelu",
      "com.microsoft.FastGelu",
      "com.microsoft.FastGelu(bias)",
      "com.microsoft.QuickGelu",
      "Tanh",
      "Sigmoid",
      "com.microsoft.QuickGelu(alpha=1)",
  };
  return (unsigned)kind < ACTX_EP_KIND_COUNT ? names[kind] : "unknown";
}

static const actx_op kind_ops[ACTX_EP_KIND_COUNT] = {
    [ACTX_EP_ERF] = ACTX_OP_ERF,
    [ACTX_EP_GELU] = ACTX_OP_GELU,
    [ACTX_EP_GELU_TANH] = ACTX_OP_GELU_TANH,
    [ACTX_EP_MS_GELU] = ACTX_OP_GELU,
    [ACTX_EP_BIAS_GELU] = ACTX_OP_GELU,
    [ACTX_EP_FAST_GELU] = ACTX_OP_GELU_TANH,
    [ACTX_EP_FAST_GELU_BIAS] = ACTX_OP_GELU_TANH,
    [ACTX_EP_QUICK_GELU] = ACTX_OP_QUICK_GELU,
    [ACTX_EP_TANH] = ACTX_OP_TANH,
    [ACTX_EP_SIGMOID] = ACTX_OP_SIGMOID,
    [ACTX_EP_SILU] = ACTX_OP_QUICK_GELU,
};

actx_op actx_ep_kind_op(actx_ep_kind kind) {
  return (unsigned)kind < ACTX_EP_KIND_COUNT ? kind_ops[kind] : ACTX_OP_COUNT;
}

actx_ep_kind actx_ep_node_kind(actx_ep_kind rule_kind, bool approximate_tanh, float alpha,
                               bool has_bias) {
  switch (rule_kind) {
    case ACTX_EP_GELU: return approximate_tanh ? ACTX_EP_GELU_TANH : ACTX_EP_GELU;
    case ACTX_EP_QUICK_GELU: /* alpha 1: ORT runs MlasComputeSilu */
      return alpha == 1.0f ? ACTX_EP_SILU : ACTX_EP_QUICK_GELU;
    case ACTX_EP_FAST_GELU: return has_bias ? ACTX_EP_FAST_GELU_BIAS : ACTX_EP_FAST_GELU;
    default: return rule_kind;
  }
}

OrtStatus *actx_ep_output_shape_holds(const OrtApi *api, const OrtValueInfo *y_value,
                                      const actx_ep_tensor_meta *x, const actx_ep_tensor_meta *y,
                                      bool *holds) {
  *holds = true;
  if (x->has_shape != y->has_shape) { /* only in a subgraph, whose outputs ORT may pre-allocate */
    bool graph_output = false;
    const OrtNode *producer = NULL, *parent = NULL;
    const OrtGraph *graph = NULL;
    OrtStatus *st = api->ValueInfo_IsGraphOutput(y_value, &graph_output);
    if (st != NULL || !graph_output) return st;
    if ((st = actx_ep_value_producer(api, y_value, &producer)) != NULL || producer == NULL)
      return st;
    if ((st = api->Node_GetGraph(producer, &graph)) != NULL || graph == NULL) return st;
    if ((st = api->Graph_GetParentNode(graph, &parent)) != NULL) return st;
    *holds = parent == NULL;
    return NULL;
  }
  if (!x->has_shape) return NULL;
  if (x->rank != y->rank) {
    *holds = false;
    return NULL;
  }
  for (size_t i = 0; i < x->rank; i++)
    if (x->dims[i] >= 0 && y->dims[i] >= 0 && x->dims[i] != y->dims[i]) *holds = false;
  return NULL;
}

/* Looks up an attribute; *attr is NULL when the node does not set it. */
static OrtStatus *find_attr(const OrtApi *api, const OrtNode *node, const char *name,
                            const OrtOpAttr **attr) {
  *attr = NULL;
  OrtStatus *st = api->Node_GetAttributeByName(node, name, attr);
  if (st != NULL && api->GetErrorCode(st) == ORT_NOT_FOUND) {
    api->ReleaseStatus(st);
    *attr = NULL;
    return NULL;
  }
  return st;
}

const char *const actx_ep_approximate_values[2] = {"none", "tanh"};

int actx_ep_string_choice(const char *value, size_t len, const char *const *accepted, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (len == strlen(accepted[i]) && memcmp(value, accepted[i], len) == 0) return (int)i;
  return -1;
}

/* Which of the n values in `accepted` a string attribute holds (actx_ep_string_choice); *index
 * is -1 for anything else (not a string, another value). */
static OrtStatus *string_attr_value(const OrtApi *api, const OrtOpAttr *attr,
                                    const char *const *accepted, size_t n, int *index) {
  *index = -1;
  OrtOpAttrType type = ORT_OP_ATTR_UNDEFINED;
  OrtStatus *st = api->OpAttr_GetType(attr, &type);
  if (st != NULL || type != ORT_OP_ATTR_STRING) return st;
  char value[ACTX_EP_MAX_STRING_ATTR];
  size_t len = 0;
  st = api->ReadOpAttr(attr, ORT_OP_ATTR_STRING, value, sizeof value, &len);
  if (st != NULL) { /* longer than any value we accept */
    api->ReleaseStatus(st);
    return NULL;
  }
  if (len <= sizeof value) *index = actx_ep_string_choice(value, len, accepted, n);
  return NULL;
}

static OrtStatus *read_float_attr(const OrtApi *api, const OrtOpAttr *attr, float *value,
                                  bool *ok) {
  *ok = false;
  OrtOpAttrType type = ORT_OP_ATTR_UNDEFINED;
  OrtStatus *st = api->OpAttr_GetType(attr, &type);
  if (st != NULL || type != ORT_OP_ATTR_FLOAT) return st;
  size_t len = 0;
  if ((st = api->ReadOpAttr(attr, ORT_OP_ATTR_FLOAT, value, sizeof *value, &len)) != NULL)
    return st;
  *ok = true;
  return NULL;
}

/* BiasGelu / FastGelu: the bias must be 1-D and as long as the input's last dimension (ORT's
 * kernels check the same at run time; what we cannot prove here we leave to them). */
static const char *check_bias(const actx_ep_tensor_meta *x, const actx_ep_tensor_meta *bias) {
  if (!bias->is_tensor || bias->elem_type != x->elem_type)
    return "bias element type differs from the input's";
  if (!bias->has_shape || !x->has_shape) return "bias or input shape unknown";
  if (bias->rank != 1) return "bias is not 1-D";
  if (x->rank < 1) return "input is a scalar";
  /* equal sizes, or the same named symbolic dimension */
  if (actx_ep_same_dim(bias, 0, x, x->rank - 1)) return NULL;
  if (bias->dims[0] >= 0 && x->dims[x->rank - 1] >= 0)
    return "bias length differs from the last dimension";
  return "bias length not provably equal to the last dimension";
}

OrtStatus *actx_ep_claim(const OrtApi *api, const OrtNode *node, actx_ep_node *out,
                         const char **reason) {
  memset(out, 0, sizeof *out);
  *reason = NULL;

  const char *domain = NULL, *op_type = NULL;
  int since = 0;
  OrtStatus *st = api->Node_GetDomain(node, &domain);
  if (st == NULL) st = api->Node_GetOperatorType(node, &op_type);
  if (st == NULL) st = api->Node_GetSinceVersion(node, &since);
  if (st != NULL) return st;
  if (domain == NULL) domain = "";
  if (strcmp(domain, "ai.onnx") == 0) domain = "";

  const op_rule *rule = NULL;
  bool op_known = false;
  for (size_t i = 0; i < N_OP_RULES; i++) {
    if (strcmp(op_rules[i].domain, domain) != 0 || strcmp(op_rules[i].op_type, op_type) != 0)
      continue;
    op_known = true;
    if (since == op_rules[i].since[0] ||
        (op_rules[i].since[1] != 0 && since == op_rules[i].since[1]))
      rule = &op_rules[i];
  }
  if (rule == NULL) {
    *reason = op_known ? "opset version not served" : "operator not served";
    return NULL;
  }

  size_t n_in = 0, n_out = 0;
  if ((st = api->Node_GetNumInputs(node, &n_in)) != NULL) return st;
  if ((st = api->Node_GetNumOutputs(node, &n_out)) != NULL) return st;
  const bool bias_op = rule->kind == ACTX_EP_BIAS_GELU || rule->kind == ACTX_EP_FAST_GELU;
  if (n_in < 1 || n_in > (bias_op ? 2u : 1u) || n_out != 1) {
    *reason = "unexpected number of inputs or outputs";
    return NULL;
  }
  const OrtValueInfo *inputs[2] = {NULL, NULL}, *output = NULL;
  if ((st = api->Node_GetInputs(node, inputs, n_in)) != NULL) return st;
  if ((st = api->Node_GetOutputs(node, &output, 1)) != NULL) return st;

  actx_ep_tensor_meta x, y;
  if ((st = actx_ep_value_meta(api, inputs[0], &x)) != NULL) return st;
  if ((st = actx_ep_value_meta(api, output, &y)) != NULL) return st;
  if (!x.is_tensor || !actx_ep_elem_dtype(x.elem_type, &out->dtype)) {
    *reason = "element type not served";
    return NULL;
  }
  if (!y.is_tensor || y.elem_type != x.elem_type) {
    *reason = "output element type differs from the input's";
    return NULL;
  }
  bool shape_holds = false;
  if ((st = actx_ep_output_shape_holds(api, output, &x, &y, &shape_holds)) != NULL) return st;
  if (!shape_holds) {
    *reason = "the graph gives the output a shape the input's may not be";
    return NULL;
  }

  out->kind = rule->kind;
  out->elem_type = x.elem_type;
  out->elements = actx_ep_meta_elements(&x, &out->min_elements);

  bool approximate_tanh = false;
  switch (rule->kind) {
    case ACTX_EP_GELU: {
      const OrtOpAttr *attr = NULL;
      if ((st = find_attr(api, node, "approximate", &attr)) != NULL) return st;
      if (attr != NULL) {
        int which = -1;
        if ((st = string_attr_value(api, attr, actx_ep_approximate_values, 2, &which)) != NULL)
          return st;
        if (which < 0) {
          *reason = "unknown approximate value";
          return NULL;
        }
        approximate_tanh = which == ACTX_EP_APPROXIMATE_TANH;
      }
      break;
    }
    case ACTX_EP_QUICK_GELU: {
      out->alpha = ACTX_QUICK_GELU_DEFAULT_ALPHA;
      const OrtOpAttr *attr = NULL;
      if ((st = find_attr(api, node, "alpha", &attr)) != NULL) return st;
      if (attr != NULL) {
        bool ok = false;
        if ((st = read_float_attr(api, attr, &out->alpha, &ok)) != NULL) return st;
        if (!ok) {
          *reason = "alpha is not a float";
          return NULL;
        }
      }
      break;
    }
    case ACTX_EP_BIAS_GELU:
    case ACTX_EP_FAST_GELU: {
      /* ORT's kernel rejects a scalar input; keep that error ORT's */
      if (!x.has_shape || x.rank < 1) {
        *reason = "input rank unknown or 0";
        return NULL;
      }
      const bool bias_present = n_in == 2 && inputs[1] != NULL;
      if (!bias_present) {
        if (rule->kind == ACTX_EP_BIAS_GELU) {
          *reason = "BiasGelu without a bias";
          return NULL;
        }
        break; /* FastGelu without bias */
      }
      actx_ep_tensor_meta bias;
      if ((st = actx_ep_value_meta(api, inputs[1], &bias)) != NULL) return st;
      if ((*reason = check_bias(&x, &bias)) != NULL) return NULL;
      out->has_bias = true;
      break;
    }
    default: break;
  }
  out->kind = actx_ep_node_kind(rule->kind, approximate_tanh, out->alpha, out->has_bias);
  out->op = kind_ops[out->kind];
  return NULL;
}
