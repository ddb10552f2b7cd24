/* One reader of a bfloat16 node: its op, since-version, which inputs and outputs it has and their
 * element types, and its attributes into actx_bf16_attrs. GetCapability reads an OrtNode, a
 * registered kernel's creation an OrtKernelInfo; the four ways of reading (an int, a float, an
 * int list, a string) are the only code that differs, so the kernel is made from the node the
 * claim checked, read the same way.
 *
 * The attributes are one table (attr_rows): the ONNX name of each and where it lands. Every row
 * is read for every op: ORT's graph check refuses an attribute its schema does not define, so a
 * node only holds the ones of its op, and each family applies its op's defaults to the rest. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "bf16_ep.h"

typedef enum attr_kind { ATTR_INT, ATTR_FLOAT, ATTR_INTS, ATTR_STRING } attr_kind;

/* One attribute of actx_bf16_attrs: its ONNX name, kind, and the offsets of its has_ flag, its
 * value and (lists) its count; room is the field's capacity in elements (strings: bytes, the
 * terminating NUL included). */
typedef struct attr_row {
  const char *name;
  attr_kind kind;
  size_t has, value, count, room;
} attr_row;

#define FIELD_(f) offsetof(actx_bf16_attrs, f)
#define ROOM_(f) (sizeof ((actx_bf16_attrs *)0)->f / sizeof ((actx_bf16_attrs *)0)->f[0])
#define INT_(name, f) {name, ATTR_INT, FIELD_(has_##f), FIELD_(f), 0, 1}
#define FLOAT_(name, f) {name, ATTR_FLOAT, FIELD_(has_##f), FIELD_(f), 0, 1}
#define INTS_(name, f) {name, ATTR_INTS, FIELD_(has_##f), FIELD_(f), FIELD_(n_##f), ROOM_(f)}
#define STRING_(name, f) {name, ATTR_STRING, FIELD_(has_##f), FIELD_(f), 0, ROOM_(f)}

static const attr_row attr_rows[] = {
    INT_("axis", axis),
    INTS_("axes", axes),
    INT_("keepdims", keepdims),
    FLOAT_("epsilon", epsilon),
    FLOAT_("alpha", alpha),
    FLOAT_("beta", beta),
    INT_("transA", trans_a),
    INT_("transB", trans_b),
    INT_("group", group),
    INTS_("strides", strides),
    INTS_("pads", pads),
    INTS_("dilations", dilations),
    INTS_("kernel_shape", kernel_shape),
    STRING_("auto_pad", auto_pad),
    INT_("ceil_mode", ceil_mode),
    INT_("count_include_pad", count_include_pad),
    STRING_("mode", mode),
    STRING_("coordinate_transformation_mode", coordinate_mode),
    STRING_("nearest_mode", nearest_mode),
    FLOAT_("cubic_coeff_a", cubic_coeff_a),
    INT_("exclude_outside", exclude_outside),
    FLOAT_("extrapolation_value", extrapolation_value),
    INT_("stash_type", stash_type),
    INT_("noop_with_empty_axes", noop_with_empty_axes),
    INT_("storage_order", storage_order),
    INT_("antialias", antialias),
    STRING_("keep_aspect_ratio_policy", keep_aspect_ratio_policy),
    INT_("to", to),
    INT_("saturate", saturate),
    INT_("training_mode", training_mode),
    INTS_("output_padding", output_padding),
    INTS_("output_shape", output_shape),
};
#define N_ATTR_ROWS (sizeof attr_rows / sizeof attr_rows[0])

actx_elem actx_ep_bf16_elem(ONNXTensorElementDataType type) {
  switch (type) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16: return ACTX_ELEM_BF16;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: return ACTX_ELEM_F32;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64: return ACTX_ELEM_I64;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL: return ACTX_ELEM_BOOL;
    default: return ACTX_ELEM_COUNT;
  }
}

const char *actx_ep_bf16_elem_name(actx_elem elem) {
  static const char *const names[ACTX_ELEM_COUNT] = {"bfloat16", "float", "int64", "bool"};
  return (unsigned)elem < ACTX_ELEM_COUNT ? names[elem] : "an unserved type";
}

/* ---- the two sources: one attribute of the row's kind into dst ----------------------------- */

/* *found false when the node does not set the attribute; *why set (and *found false) when it
 * sets it in a form the row cannot hold. */
typedef struct attr_read {
  bool found;
  const char *why;
} attr_read;

static OrtStatus *node_attr(const OrtApi *api, const OrtNode *node, const attr_row *row,
                            void *dst, size_t *count, attr_read *r) {
  const OrtOpAttr *attr = NULL;
  OrtStatus *st = api->Node_GetAttributeByName(node, row->name, &attr);
  if (st != NULL && api->GetErrorCode(st) == ORT_NOT_FOUND) {
    api->ReleaseStatus(st);
    return NULL;
  }
  if (st != NULL || attr == NULL) return st;
  static const OrtOpAttrType want[] = {ORT_OP_ATTR_INT, ORT_OP_ATTR_FLOAT, ORT_OP_ATTR_INTS,
                                       ORT_OP_ATTR_STRING};
  OrtOpAttrType type = ORT_OP_ATTR_UNDEFINED;
  if ((st = api->OpAttr_GetType(attr, &type)) != NULL) return st;
  if (type != want[row->kind]) {
    r->why = "an attribute has another type than its operator defines";
    return NULL;
  }
  size_t size = 0; /* bytes */
  switch (row->kind) {
    case ATTR_INT:
      if ((st = api->ReadOpAttr(attr, type, dst, sizeof(int64_t), &size)) != NULL) return st;
      break;
    case ATTR_FLOAT:
      if ((st = api->ReadOpAttr(attr, type, dst, sizeof(float), &size)) != NULL) return st;
      break;
    case ATTR_INTS:
    case ATTR_STRING: {
      const size_t elem = row->kind == ATTR_INTS ? sizeof(int64_t) : 1;
      /* asking with no room gives the size (and an error, which says only that) */
      st = api->ReadOpAttr(attr, type, NULL, 0, &size);
      if (st != NULL) api->ReleaseStatus(st);
      const size_t room = row->kind == ATTR_INTS ? row->room : row->room - 1;
      if (size / elem > room) {
        r->why = "an attribute list or string is longer than any served value";
        return NULL;
      }
      if (size > 0 && (st = api->ReadOpAttr(attr, type, dst, size, &size)) != NULL) return st;
      if (row->kind == ATTR_INTS) {
        *count = size / elem;
      } else {
        ((char *)dst)[size] = '\0';
        if (memchr(dst, '\0', size) != NULL) { /* ORT compares strings as bytes */
          r->why = "a string attribute holds a NUL byte";
          return NULL;
        }
      }
      break;
    }
  }
  r->found = true;
  return NULL;
}

/* ORT's kernel info reports a missing attribute and one of another type alike, as an error;
 * the claim has refused mistyped ones, so an error here is a missing attribute. */
static OrtStatus *info_attr(const OrtApi *api, const OrtKernelInfo *info, const attr_row *row,
                            void *dst, size_t *count, attr_read *r) {
  OrtStatus *st = NULL;
  size_t size = 0;
  switch (row->kind) {
    case ATTR_INT: st = api->KernelInfoGetAttribute_int64(info, row->name, dst); break;
    case ATTR_FLOAT: st = api->KernelInfoGetAttribute_float(info, row->name, dst); break;
    case ATTR_INTS:
      st = api->KernelInfoGetAttributeArray_int64(info, row->name, NULL, &size);
      if (st == NULL && size > row->room) {
        r->why = "an attribute list or string is longer than any served value";
        return NULL;
      }
      if (st == NULL && size > 0)
        st = api->KernelInfoGetAttributeArray_int64(info, row->name, dst, &size);
      *count = size;
      break;
    case ATTR_STRING:
      /* size counts the NUL ORT appends */
      st = api->KernelInfoGetAttribute_string(info, row->name, NULL, &size);
      if (st == NULL && size > row->room) {
        r->why = "an attribute list or string is longer than any served value";
        return NULL;
      }
      if (st == NULL) st = api->KernelInfoGetAttribute_string(info, row->name, dst, &size);
      if (st == NULL && (size == 0 || strlen(dst) != size - 1)) {
        r->why = "a string attribute holds a NUL byte";
        return NULL;
      }
      break;
  }
  if (st != NULL) {
    api->ReleaseStatus(st);
    return NULL;
  }
  r->found = true;
  return NULL;
}

static OrtStatus *read_attrs(const actx_ep_node_source *src, actx_bf16_attrs *attrs,
                             const char **why) {
  memset(attrs, 0, sizeof *attrs);
  for (size_t i = 0; i < N_ATTR_ROWS; i++) {
    const attr_row *row = &attr_rows[i];
    char *base = (char *)attrs;
    size_t count = 0;
    attr_read r = {false, NULL};
    OrtStatus *st = src->node != NULL
                        ? node_attr(src->api, src->node, row, base + row->value, &count, &r)
                        : info_attr(src->api, src->info, row, base + row->value, &count, &r);
    if (st != NULL) return st;
    if (r.why != NULL) {
      *why = r.why;
      return NULL;
    }
    *(bool *)(base + row->has) = r.found;
    if (row->kind == ATTR_INTS) *(size_t *)(base + row->count) = r.found ? count : 0;
  }
  return NULL;
}

/* ---- the operator, inputs and outputs ------------------------------------------------------ */

static OrtStatus *info_string(const OrtKernelInfo *info,
                              OrtStatus *(*get)(const OrtKernelInfo *, char *, size_t *),
                              char *out, size_t out_size) {
  size_t size = 0;
  OrtStatus *st = get(info, NULL, &size);
  if (st != NULL) return st;
  if (size > out_size) {
    out[0] = '\0'; /* longer than any served operator or domain */
    return NULL;
  }
  return get(info, out, &size);
}

static OrtStatus *info_type(const OrtApi *api, const OrtKernelInfo *info, bool input,
                            size_t index, ONNXTensorElementDataType *out) {
  *out = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  OrtTypeInfo *type = NULL;
  OrtStatus *st = input ? api->KernelInfo_GetInputTypeInfo(info, index, &type)
                        : api->KernelInfo_GetOutputTypeInfo(info, index, &type);
  if (st != NULL || type == NULL) return st;
  const OrtTensorTypeAndShapeInfo *tensor = NULL;
  st = api->CastTypeInfoToTensorInfo(type, &tensor);
  if (st == NULL && tensor != NULL) st = api->GetTensorElementType(tensor, out);
  api->ReleaseTypeInfo(type);
  return st;
}

/* Whether value `index` is present and its element type: an optional one left out is a NULL
 * value info (OrtNode) or has an empty name (OrtKernelInfo). */
static OrtStatus *value_at(const actx_ep_node_source *src, bool input, size_t index,
                           const OrtValueInfo *value, bool *present, actx_elem *elem) {
  const OrtApi *api = src->api;
  *present = false;
  *elem = ACTX_ELEM_COUNT;
  ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  OrtStatus *st = NULL;
  if (src->node != NULL) {
    if (value == NULL) return NULL;
    actx_ep_tensor_meta meta;
    if ((st = actx_ep_value_meta(api, value, &meta)) != NULL) return st;
    if (meta.is_tensor) type = meta.elem_type;
  } else {
    size_t size = 0;
    st = input ? api->KernelInfo_GetInputName(src->info, index, NULL, &size)
               : api->KernelInfo_GetOutputName(src->info, index, NULL, &size);
    if (st != NULL || size <= 1) return st;
    if ((st = info_type(api, src->info, input, index, &type)) != NULL) return st;
  }
  *present = true;
  *elem = actx_ep_bf16_elem(type);
  return NULL;
}

OrtStatus *actx_ep_bf16_node_name(const actx_ep_node_source *src, char *out, size_t out_size) {
  const OrtApi *api = src->api;
  if (out_size == 0) return NULL;
  out[0] = '\0';
  if (src->node != NULL) {
    const char *name = NULL;
    OrtStatus *st = api->Node_GetName(src->node, &name);
    if (st == NULL) snprintf(out, out_size, "%s", name != NULL ? name : "");
    return st;
  }
  size_t size = 0;
  OrtStatus *st = api->KernelInfo_GetNodeName(src->info, NULL, &size);
  if (st != NULL) return st;
  if (size <= out_size) return api->KernelInfo_GetNodeName(src->info, out, &size);
  return NULL; /* a label only: a name longer than out is left out rather than cut */
}

OrtStatus *actx_ep_bf16_read_node(const actx_ep_node_source *src, actx_bf16_node *out,
                                  actx_elem *output_elems, const char **why) {
  const OrtApi *api = src->api;
  memset(out, 0, sizeof *out);
  out->op = ACTX_BF16_OP_COUNT;
  for (size_t j = 0; j < ACTX_BF16_MAX_OUTPUTS; j++) output_elems[j] = ACTX_ELEM_COUNT;
  *why = NULL;
  char domain_buf[64], op_buf[64];
  const char *domain = NULL, *op_type = NULL;
  size_t n_in = 0, n_out = 0;
  OrtStatus *st = NULL;
  if (src->node != NULL) {
    if ((st = api->Node_GetDomain(src->node, &domain)) != NULL ||
        (st = api->Node_GetOperatorType(src->node, &op_type)) != NULL ||
        (st = api->Node_GetSinceVersion(src->node, &out->since_version)) != NULL ||
        (st = api->Node_GetNumInputs(src->node, &n_in)) != NULL ||
        (st = api->Node_GetNumOutputs(src->node, &n_out)) != NULL)
      return st;
  } else {
    if ((st = info_string(src->info, api->KernelInfo_GetOperatorDomain, domain_buf,
                          sizeof domain_buf)) != NULL ||
        (st = info_string(src->info, api->KernelInfo_GetOperatorType, op_buf,
                          sizeof op_buf)) != NULL ||
        (st = api->KernelInfo_GetOperatorSinceVersion(src->info, &out->since_version)) != NULL ||
        (st = api->KernelInfo_GetInputCount(src->info, &n_in)) != NULL ||
        (st = api->KernelInfo_GetOutputCount(src->info, &n_out)) != NULL)
      return st;
    domain = domain_buf;
    op_type = op_buf;
  }
  out->op = actx_bf16_op_find(domain, op_type);
  if (out->op == ACTX_BF16_OP_COUNT) {
    *why = "operator not served in bfloat16";
    return NULL;
  }
  if (n_in > ACTX_BF16_MAX_INPUTS || n_out > ACTX_BF16_MAX_OUTPUTS) {
    *why = "more inputs or outputs than any served operator has";
    return NULL;
  }
  out->n_inputs = n_in;
  out->n_outputs = n_out;
  const OrtValueInfo *ins[ACTX_BF16_MAX_INPUTS] = {NULL}, *outs[ACTX_BF16_MAX_OUTPUTS] = {NULL};
  if (src->node != NULL && ((n_in > 0 && (st = api->Node_GetInputs(src->node, ins, n_in))) ||
                            (n_out > 0 && (st = api->Node_GetOutputs(src->node, outs, n_out)))))
    return st;
  for (size_t i = 0; i < n_in; i++) {
    if ((st = value_at(src, true, i, ins[i], &out->input_present[i], &out->input_elems[i])) !=
        NULL)
      return st;
    if (out->input_present[i] && out->input_elems[i] == ACTX_ELEM_COUNT) {
      *why = "an input's element type is not one the bfloat16 service reads";
      return NULL;
    }
  }
  for (size_t j = 0; j < n_out; j++) {
    if ((st = value_at(src, false, j, outs[j], &out->output_present[j], &output_elems[j])) !=
        NULL)
      return st;
    if (out->output_present[j] && output_elems[j] == ACTX_ELEM_COUNT) {
      *why = "an output's element type is not one the bfloat16 service writes";
      return NULL;
    }
  }
  return read_attrs(src, &out->attrs, why);
}
