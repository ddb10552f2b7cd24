/* Reading ORT's graph view (OrtGraph, OrtNode, OrtValueInfo) the way the subgraph matchers need:
 * which operator a node is, who produces and who consumes a value, and the value of a scalar
 * constant. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "actx_ep.h"

const int actx_ep_binary_since[] = {7, 13, 14, 0};
const int actx_ep_pow_since[] = {7, 12, 13, 15, 0};
const int actx_ep_erf_since[] = {9, 13, 0};
const int actx_ep_activation_since[] = {6, 13, 0};

bool actx_ep_is_onnx_domain(const char *domain) {
  return domain == NULL || domain[0] == '\0' || strcmp(domain, "ai.onnx") == 0;
}

OrtStatus *actx_ep_node_is_others(const OrtApi *api, const OrtNode *node, bool *others) {
  const char *assigned = NULL;
  OrtStatus *st = api->Node_GetEpName(node, &assigned);
  *others = st == NULL && assigned != NULL && assigned[0] != '\0' &&
            strcmp(assigned, ACTX_EP_NAME) != 0;
  return st;
}

OrtStatus *actx_ep_node_is(const OrtApi *api, const OrtNode *node, const char *op_type,
                           const int *since, bool *out) {
  *out = false;
  if (node == NULL) return NULL;
  const char *domain = NULL, *type = NULL;
  OrtStatus *st = api->Node_GetDomain(node, &domain);
  if (st == NULL) st = api->Node_GetOperatorType(node, &type);
  if (st != NULL || !actx_ep_is_onnx_domain(domain) || type == NULL || strcmp(type, op_type) != 0)
    return st;
  if (since == NULL) {
    *out = true;
    return NULL;
  }
  int version = 0;
  if ((st = api->Node_GetSinceVersion(node, &version)) != NULL) return st;
  for (const int *v = since; *v != 0; v++)
    if (*v == version) *out = true;
  return NULL;
}

OrtStatus *actx_ep_node_inputs(const OrtApi *api, const OrtNode *node, const OrtValueInfo **in,
                               size_t max, size_t *n) {
  for (size_t i = 0; i < max; i++) in[i] = NULL;
  *n = 0;
  OrtStatus *st = api->Node_GetNumInputs(node, n);
  if (st != NULL || *n == 0) return st;
  if (*n <= max) return api->Node_GetInputs(node, in, *n);
  /* ORT fills all of them or none: read into a buffer of the full size */
  const OrtValueInfo **all = malloc(*n * sizeof *all);
  if (all == NULL) return actx_ep_error(api, ORT_FAIL, "out of memory reading %zu inputs", *n);
  if ((st = api->Node_GetInputs(node, all, *n)) == NULL)
    for (size_t i = 0; i < max; i++) in[i] = all[i];
  free(all);
  return st;
}

OrtStatus *actx_ep_node_output(const OrtApi *api, const OrtNode *node, const OrtValueInfo **out) {
  *out = NULL;
  size_t n = 0;
  OrtStatus *st = api->Node_GetNumOutputs(node, &n);
  if (st != NULL || n != 1) return st;
  return api->Node_GetOutputs(node, out, 1);
}

OrtStatus *actx_ep_value_producer(const OrtApi *api, const OrtValueInfo *value,
                                  const OrtNode **producer) {
  *producer = NULL;
  if (value == NULL) return NULL;
  size_t output_index = 0;
  return api->ValueInfo_GetValueProducer(value, producer, &output_index);
}

OrtStatus *actx_ep_value_consumers(const OrtApi *api, const OrtValueInfo *value,
                                   const OrtNode **nodes, size_t max, size_t *n,
                                   bool *graph_output) {
  *n = 0;
  *graph_output = false;
  OrtStatus *st = api->ValueInfo_IsGraphOutput(value, graph_output);
  if (st == NULL) st = api->ValueInfo_GetValueNumConsumers(value, n);
  if (st != NULL || *n == 0 || *n > max) return st;
  int64_t input_indices[ACTX_EP_MAX_CONSUMERS];
  return api->ValueInfo_GetValueConsumers(value, nodes, input_indices, *n);
}

OrtStatus *actx_ep_value_is_read(const OrtApi *api, const OrtValueInfo *value, bool *read) {
  const OrtNode *readers[ACTX_EP_MAX_CONSUMERS];
  size_t n = 0;
  bool graph_output = false;
  OrtStatus *st =
      actx_ep_value_consumers(api, value, readers, ACTX_EP_MAX_CONSUMERS, &n, &graph_output);
  *read = st == NULL && (n > 0 || graph_output);
  return st;
}

OrtStatus *actx_ep_single_consumer(const OrtApi *api, const OrtValueInfo *value,
                                   const OrtNode **consumer) {
  *consumer = NULL;
  if (value == NULL) return NULL;
  const OrtNode *nodes[ACTX_EP_MAX_CONSUMERS];
  size_t n = 0;
  bool graph_output = false;
  OrtStatus *st =
      actx_ep_value_consumers(api, value, nodes, ACTX_EP_MAX_CONSUMERS, &n, &graph_output);
  if (st == NULL && n == 1 && !graph_output) *consumer = nodes[0];
  return st;
}

OrtStatus *actx_ep_same_value(const OrtApi *api, const OrtValueInfo *a, const OrtValueInfo *b,
                              bool *out) {
  *out = false;
  if (a == NULL || b == NULL) return NULL;
  if (a == b) {
    *out = true;
    return NULL;
  }
  const char *na = NULL, *nb = NULL;
  OrtStatus *st = api->GetValueInfoName(a, &na);
  if (st == NULL) st = api->GetValueInfoName(b, &nb);
  if (st == NULL && na != NULL && nb != NULL) *out = strcmp(na, nb) == 0;
  return st;
}

OrtStatus *actx_ep_other_input(const OrtApi *api, const OrtNode *node, const OrtValueInfo *value,
                               const OrtValueInfo **other) {
  *other = NULL;
  const OrtValueInfo *in[2];
  size_t n = 0;
  OrtStatus *st = actx_ep_node_inputs(api, node, in, 2, &n);
  if (st != NULL || n != 2 || in[0] == NULL || in[1] == NULL) return st;
  for (int i = 0; i < 2; i++) {
    bool same = false;
    if ((st = actx_ep_same_value(api, in[i], value, &same)) != NULL) return st;
    if (same) {
      *other = in[1 - i];
      return NULL;
    }
  }
  return NULL;
}

float actx_ep_half_to_float(uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v;
  if (exp == 0)
    v = ldexpf((float)mant, -24);
  else if (exp == 31)
    v = mant ? NAN : INFINITY;
  else
    v = ldexpf((float)(mant | 0x400), exp - 25);
  return sign ? -v : v;
}

OrtStatus *actx_ep_scalar_constant(const OrtApi *api, const OrtValueInfo *value,
                                   actx_ep_constant *out, bool *ok) {
  memset(out, 0, sizeof *out);
  *ok = false;
  if (value == NULL) return NULL;
  bool is_const = false;
  OrtStatus *st = api->ValueInfo_IsConstantInitializer(value, &is_const);
  if (st != NULL || !is_const) return st;
  const OrtValue *tensor = NULL;
  if ((st = api->ValueInfo_GetInitializerValue(value, &tensor)) != NULL || tensor == NULL)
    return st;
  const int64_t *dims = NULL;
  size_t rank = 0;
  if ((st = api->GetTensorElementTypeAndShapeDataReference(tensor, &out->type, &dims, &rank)) !=
      NULL)
    return st;
  for (size_t i = 0; i < rank; i++)
    if (dims[i] != 1) return NULL;
  out->rank = rank;
  const void *data = NULL;
  if ((st = api->GetTensorData(tensor, &data)) != NULL || data == NULL) return st;
  switch (out->type) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: {
      float f;
      memcpy(&f, data, sizeof f);
      out->value = f;
      break;
    }
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE: memcpy(&out->value, data, sizeof out->value); break;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16: {
      uint16_t h;
      memcpy(&h, data, sizeof h);
      out->value = actx_ep_half_to_float(h);
      break;
    }
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16: {
      uint16_t b;
      memcpy(&b, data, sizeof b);
      const uint32_t bits = (uint32_t)b << 16;
      float f;
      memcpy(&f, &bits, sizeof f);
      out->value = f;
      break;
    }
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32: {
      int32_t i;
      memcpy(&i, data, sizeof i);
      out->value = i;
      break;
    }
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64: {
      int64_t i;
      memcpy(&i, data, sizeof i);
      out->value = (double)i;
      break;
    }
    default: return NULL;
  }
  *ok = true;
  return NULL;
}

OrtStatus *actx_ep_int_attr(const OrtApi *api, const OrtNode *node, const char *name,
                            int64_t *value, bool *found) {
  *found = false;
  const OrtOpAttr *attr = NULL;
  OrtStatus *st = api->Node_GetAttributeByName(node, name, &attr);
  if (st != NULL) {
    if (api->GetErrorCode(st) != ORT_NOT_FOUND) return st;
    api->ReleaseStatus(st);
    return NULL;
  }
  OrtOpAttrType type = ORT_OP_ATTR_UNDEFINED;
  if (attr == NULL || (st = api->OpAttr_GetType(attr, &type)) != NULL || type != ORT_OP_ATTR_INT)
    return st;
  size_t len = 0;
  if ((st = api->ReadOpAttr(attr, ORT_OP_ATTR_INT, value, sizeof *value, &len)) != NULL) return st;
  *found = true;
  return NULL;
}

/* ---- a value's type and shape ---- */

OrtStatus *actx_ep_value_meta(const OrtApi *api, const OrtValueInfo *value,
                              actx_ep_tensor_meta *m) {
  memset(m, 0, sizeof *m);
  if (value == NULL) return NULL;
  const OrtTypeInfo *type = NULL;
  OrtStatus *st = api->GetValueInfoTypeInfo(value, &type);
  if (st != NULL || type == NULL) return st;
  ONNXType onnx_type = ONNX_TYPE_UNKNOWN;
  if ((st = api->GetOnnxTypeFromTypeInfo(type, &onnx_type)) != NULL) return st;
  if (onnx_type != ONNX_TYPE_TENSOR) return NULL;
  const OrtTensorTypeAndShapeInfo *info = NULL;
  if ((st = api->CastTypeInfoToTensorInfo(type, &info)) != NULL || info == NULL) return st;
  if ((st = api->GetTensorElementType(info, &m->elem_type)) != NULL) return st;
  m->is_tensor = true;
  if (!api->TensorTypeAndShape_HasShape(info)) return NULL;
  size_t rank = 0;
  if ((st = api->GetDimensionsCount(info, &rank)) != NULL) return st;
  if (rank > ACTX_EP_MAX_RANK) return NULL; /* treated as an unknown shape */
  if ((st = api->GetDimensions(info, m->dims, rank)) != NULL) return st;
  if ((st = api->GetSymbolicDimensions(info, m->dim_params, rank)) != NULL) return st;
  for (size_t i = 0; i < rank; i++)
    if (m->dim_params[i] == NULL) m->dim_params[i] = "";
  m->rank = rank;
  m->has_shape = true;
  return NULL;
}

bool actx_ep_same_dim(const actx_ep_tensor_meta *a, size_t ia, const actx_ep_tensor_meta *b,
                      size_t ib) {
  const int64_t da = a->dims[ia], db = b->dims[ib];
  if (da >= 0 || db >= 0) return da == db;
  return a->dim_params[ia][0] != '\0' && strcmp(a->dim_params[ia], b->dim_params[ib]) == 0;
}

int64_t actx_ep_meta_elements(const actx_ep_tensor_meta *m, int64_t *min_elements) {
  *min_elements = 0;
  if (!m->has_shape) return -1;
  int64_t n = 1;
  bool known = true;
  for (size_t i = 0; i < m->rank; i++) {
    if (m->dims[i] < 0) {
      known = false;
      continue;
    }
    if (m->dims[i] != 0 && n > INT64_MAX / m->dims[i]) return -1;
    n *= m->dims[i];
  }
  *min_elements = n;
  return known ? n : -1;
}

bool actx_ep_elem_dtype(ONNXTensorElementDataType t, actx_dtype *out) {
  switch (t) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: *out = ACTX_F32; return true;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16: *out = ACTX_F16; return true;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16: *out = ACTX_BF16; return true;
    default: return false;
  }
}
