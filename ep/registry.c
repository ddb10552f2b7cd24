/* The EP's kernel registry (OrtEp::GetKernelRegistry): a kernel for every operator claim.c
 * serves, so that a single claimed node (EpGraphSupportInfo_AddSingleNode) runs like one of
 * ORT's own kernels instead of as a compiled node, whose wrapper costs more per Run() than
 * these activations do on small tensors.
 *
 * ORT matches a registered kernel to a node by domain, operator type, since-version, element
 * type (constraint "T" of every schema we serve) and EP, and only to nodes GetCapability handed
 * us: the registry does not widen what we take. A kernel is built from what OrtKernelInfo says
 * about its node. claim.c has already checked everything a kernel relies on (attribute types
 * and values, shapes where known), so here an attribute is only read to tell the claimed forms
 * apart, byte for byte as claim.c compares them; anything else is refused with an error rather
 * than guessed.
 *
 * The bfloat16 service's kernels (bf16_kernels.c) are registered here too, after these.
 *
 * ORT copies the registry when it takes it, and kernels are created while the session is
 * initialised, so the registry and the per-kernel states live as long as the OrtEp. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actx_ep.h"
#include "bf16_ep.h"

/* Most operator versions we register (claim.c: at most two since-versions per operator). */
#define MAX_KERNELS 32

/* What a kernel's creation function gets: the operator it was registered for. */
typedef struct kernel_state {
  const OrtApi *api;
  const actx_ep_op_rule *rule;
} kernel_state;

struct actx_ep_registry {
  const OrtApi *api;
  OrtKernelRegistry *registry;
  kernel_state states[MAX_KERNELS];
  size_t n_states;
  actx_ep_bf16_states *bf16; /* the bfloat16 service's kernels (bf16_kernels.c) */
};

/* A string attribute's value when it is one of `accepted`, byte for byte: *index, or -1 when
 * the node does not set it (ORT cannot tell a missing attribute from one of another type, and
 * claim.c claims neither of another type). */
static OrtStatus *string_attr(const OrtApi *api, const OrtKernelInfo *info, const char *name,
                              const char *const *accepted, size_t n, int *index, bool *present) {
  *index = -1;
  *present = false;
  size_t size = 0;
  OrtStatus *st = api->KernelInfoGetAttribute_string(info, name, NULL, &size);
  if (st != NULL) {
    api->ReleaseStatus(st);
    return NULL;
  }
  *present = true;
  char value[ACTX_EP_MAX_STRING_ATTR];
  if (size == 0 || size > sizeof value) return NULL; /* longer than any accepted value */
  if ((st = api->KernelInfoGetAttribute_string(info, name, value, &size)) != NULL) return st;
  /* size counts the terminating NUL ORT adds; an embedded NUL makes the rest count too */
  if (size > 0 && value[size - 1] == '\0')
    *index = actx_ep_string_choice(value, size - 1, accepted, n);
  return NULL;
}

static OrtStatus *node_name(const OrtApi *api, const OrtKernelInfo *info, char *out,
                            size_t out_size) {
  size_t size = 0;
  OrtStatus *st = api->KernelInfo_GetNodeName(info, NULL, &size);
  if (st != NULL) return st;
  if (size > out_size) { /* a label only: keep its start */
    char *full = malloc(size);
    if (full == NULL) return actx_ep_error(api, ORT_FAIL, "out of memory reading a node name");
    st = api->KernelInfo_GetNodeName(info, full, &size);
    if (st == NULL) snprintf(out, out_size, "%s", full);
    free(full);
    return st;
  }
  return api->KernelInfo_GetNodeName(info, out, &size);
}

/* Whether the node's input `index` is present (an optional input left out has an empty name). */
static OrtStatus *input_present(const OrtApi *api, const OrtKernelInfo *info, size_t index,
                                bool *present) {
  *present = false;
  size_t n = 0, size = 0;
  OrtStatus *st = api->KernelInfo_GetInputCount(info, &n);
  if (st != NULL || index >= n) return st;
  if ((st = api->KernelInfo_GetInputName(info, index, NULL, &size)) != NULL) return st;
  *present = size > 1;
  return NULL;
}

static OrtStatus *input_elem_type(const OrtApi *api, const OrtKernelInfo *info,
                                  ONNXTensorElementDataType *out) {
  *out = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  OrtTypeInfo *type = NULL;
  OrtStatus *st = api->KernelInfo_GetInputTypeInfo(info, 0, &type);
  if (st != NULL || type == NULL) return st;
  const OrtTensorTypeAndShapeInfo *tensor = NULL;
  st = api->CastTypeInfoToTensorInfo(type, &tensor);
  if (st == NULL && tensor != NULL) st = api->GetTensorElementType(tensor, out);
  api->ReleaseTypeInfo(type);
  return st;
}

/* What the kernel computes: claim.c's decision, remade from the kernel info. */
static OrtStatus *node_from_info(const OrtApi *api, const actx_ep_op_rule *rule,
                                 const OrtKernelInfo *info, const char *label,
                                 actx_ep_node *out) {
  memset(out, 0, sizeof *out);
  out->kind = rule->kind;
  out->elements = -1;
  OrtStatus *st = input_elem_type(api, info, &out->elem_type);
  if (st != NULL) return st;
  if (!actx_ep_elem_dtype(out->elem_type, &out->dtype))
    return actx_ep_error(api, ORT_EP_FAIL, "%s: element type %d not served", label,
                         (int)out->elem_type);
  bool approximate_tanh = false;
  switch (rule->kind) {
    case ACTX_EP_GELU: {
      int which = -1;
      bool present = false;
      if ((st = string_attr(api, info, "approximate", actx_ep_approximate_values, 2, &which,
                            &present)) != NULL)
        return st;
      if (present && which < 0)
        return actx_ep_error(api, ORT_EP_FAIL, "%s: unknown approximate value", label);
      approximate_tanh = which == ACTX_EP_APPROXIMATE_TANH;
      break;
    }
    case ACTX_EP_QUICK_GELU: {
      /* ORT's kernel: GetAttrOrDefault("alpha", 1.702f); claim.c claims only a float alpha */
      float alpha = 0;
      st = api->KernelInfoGetAttribute_float(info, "alpha", &alpha);
      if (st != NULL) {
        api->ReleaseStatus(st);
        alpha = ACTX_QUICK_GELU_DEFAULT_ALPHA;
      }
      out->alpha = alpha;
      break;
    }
    case ACTX_EP_BIAS_GELU: out->has_bias = true; break;
    case ACTX_EP_FAST_GELU: {
      if ((st = input_present(api, info, 1, &out->has_bias)) != NULL) return st;
      break;
    }
    default: break;
  }
  out->kind = actx_ep_node_kind(rule->kind, approximate_tanh, out->alpha, out->has_bias);
  out->op = actx_ep_kind_op(out->kind);
  return NULL;
}

static OrtStatus *create_kernel(void *state, const OrtKernelInfo *info, OrtKernelImpl **out) {
  const kernel_state *ks = state;
  const OrtApi *api = ks->api;
  *out = NULL;
  char name[96] = "";
  OrtStatus *st = node_name(api, info, name, sizeof name);
  if (st != NULL) return st;
  char label[112];
  snprintf(label, sizeof label, "node '%s'", name);
  actx_ep_node node;
  if ((st = node_from_info(api, ks->rule, info, label, &node)) != NULL) return st;
  return actx_ep_single_kernel_create(api, &node, label, out);
}

/* ORT's own kernels for Tanh and Sigmoid may write over their input (MayInplace(0, 0)); ours do
 * the same, so that ORT plans the session's memory as it would without us. */
static bool may_inplace(actx_ep_kind kind) {
  return kind == ACTX_EP_TANH || kind == ACTX_EP_SIGMOID;
}

static OrtStatus *add_kernel(actx_ep_registry *r, const OrtEpApi *ep_api,
                             const actx_ep_op_rule *rule, int since,
                             const OrtDataType *const *types, size_t n_types) {
  const OrtApi *api = r->api;
  if (r->n_states == MAX_KERNELS)
    return actx_ep_error(api, ORT_FAIL, "more operator versions than the registry holds");
  OrtKernelDefBuilder *b = NULL;
  OrtKernelDef *def = NULL;
  OrtStatus *st = ep_api->CreateKernelDefBuilder(&b);
  if (st == NULL) st = ep_api->KernelDefBuilder_SetOperatorType(b, rule->op_type);
  if (st == NULL) st = ep_api->KernelDefBuilder_SetDomain(b, rule->domain);
  if (st == NULL) st = ep_api->KernelDefBuilder_SetSinceVersion(b, since, since);
  if (st == NULL) st = ep_api->KernelDefBuilder_SetExecutionProvider(b, ACTX_EP_NAME);
  if (st == NULL) st = ep_api->KernelDefBuilder_AddTypeConstraint(b, "T", types, n_types);
  if (st == NULL && may_inplace(rule->kind)) {
    static const int zero[1] = {0};
    st = ep_api->KernelDefBuilder_AddInputOutputMutableAliases(b, zero, zero, 1);
  }
  if (st == NULL) st = ep_api->KernelDefBuilder_Build(b, &def);
  if (b != NULL) ep_api->ReleaseKernelDefBuilder(b);
  if (st != NULL) return st;
  kernel_state *ks = &r->states[r->n_states];
  *ks = (kernel_state){api, rule};
  st = ep_api->KernelRegistry_AddKernel(r->registry, def, create_kernel, ks);
  ep_api->ReleaseKernelDef(def); /* the registry keeps its own copy */
  if (st == NULL) r->n_states++;
  return st;
}

OrtStatus *actx_ep_registry_create(const OrtApi *api, actx_ep_registry **out) {
  *out = NULL;
  const OrtEpApi *ep_api = api->GetEpApi();
  actx_ep_registry *r = calloc(1, sizeof *r);
  if (r == NULL) return actx_ep_error(api, ORT_FAIL, "out of memory creating the kernel registry");
  r->api = api;
  static const ONNXTensorElementDataType elem_types[] = {
      ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16,
      ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16};
  const size_t n_types = sizeof elem_types / sizeof elem_types[0];
  const OrtDataType *types[sizeof elem_types / sizeof elem_types[0]];
  OrtStatus *st = ep_api->CreateKernelRegistry(&r->registry);
  for (size_t i = 0; i < n_types && st == NULL; i++)
    st = ep_api->GetTensorDataType(elem_types[i], &types[i]);
  size_t n_rules = 0;
  const actx_ep_op_rule *rules = actx_ep_op_rules(&n_rules);
  for (size_t i = 0; i < n_rules && st == NULL; i++)
    for (size_t v = 0; v < 2 && st == NULL; v++)
      if (rules[i].since[v] != 0)
        st = add_kernel(r, ep_api, &rules[i], rules[i].since[v], types, n_types);
  if (st == NULL) st = actx_ep_bf16_register(api, r->registry, &r->bf16);
  if (st != NULL) {
    actx_ep_registry_free(r);
    return st;
  }
  *out = r;
  return NULL;
}

const OrtKernelRegistry *actx_ep_registry_get(const actx_ep_registry *r) {
  return r != NULL ? r->registry : NULL;
}

void actx_ep_registry_free(actx_ep_registry *r) {
  if (r == NULL) return;
  if (r->registry != NULL) r->api->GetEpApi()->ReleaseKernelRegistry(r->registry);
  actx_ep_bf16_registry_free(r->bf16);
  free(r);
}
