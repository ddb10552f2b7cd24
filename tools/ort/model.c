/* model.c — ONNX model builder and tensor reader over protobuf-c (see model.h).
 *
 * Every part of the ModelProto tree is malloc'ed, so one onnx__model_proto__free_unpacked()
 * (which frees through the system allocator) releases a model however far it got. */
#include "model.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"

#define ERROR_SIZE 512
#define NAME_SIZE sizeof(((actx_tensor *)0)->name)

struct actx_model_node {
  actx_model *model;
  Onnx__NodeProto *proto;
};

struct actx_model {
  Onnx__ModelProto *proto;
  actx_model_node **nodes; /* handles given out, freed with the model */
  size_t n_nodes;
  bool failed;
  char error[ERROR_SIZE];
};

size_t actx_elem_size(int32_t elem_type) {
  switch (elem_type) {
    case ACTX_ELEM_UINT8:
    case ACTX_ELEM_INT8:
    case ACTX_ELEM_BOOL: return 1;
    case ACTX_ELEM_UINT16:
    case ACTX_ELEM_INT16:
    case ACTX_ELEM_FLOAT16:
    case ACTX_ELEM_BFLOAT16: return 2;
    case ACTX_ELEM_FLOAT:
    case ACTX_ELEM_INT32:
    case ACTX_ELEM_UINT32: return 4;
    case ACTX_ELEM_INT64:
    case ACTX_ELEM_DOUBLE:
    case ACTX_ELEM_UINT64: return 8;
    default: return 0;
  }
}

const char *actx_elem_name(int32_t elem_type) {
  switch (elem_type) {
    case ACTX_ELEM_FLOAT: return "float";
    case ACTX_ELEM_UINT8: return "uint8";
    case ACTX_ELEM_INT8: return "int8";
    case ACTX_ELEM_UINT16: return "uint16";
    case ACTX_ELEM_INT16: return "int16";
    case ACTX_ELEM_INT32: return "int32";
    case ACTX_ELEM_INT64: return "int64";
    case ACTX_ELEM_BOOL: return "bool";
    case ACTX_ELEM_FLOAT16: return "float16";
    case ACTX_ELEM_DOUBLE: return "double";
    case ACTX_ELEM_UINT32: return "uint32";
    case ACTX_ELEM_UINT64: return "uint64";
    case ACTX_ELEM_BFLOAT16: return "bfloat16";
    default: return "unknown";
  }
}

/* ---- Small utilities ---------------------------------------------------------------------- */

static void format_error(char *err, size_t err_size, const char *fmt, ...) {
  if (err == NULL || err_size == 0)
    return;
  va_list args;
  va_start(args, fmt);
  vsnprintf(err, err_size, fmt, args);
  va_end(args);
}

/* Records the model's first error; always returns -1 so callers can `return fail(...)`. */
static int fail(actx_model *model, const char *fmt, ...) {
  if (model != NULL && !model->failed) {
    model->failed = true;
    va_list args;
    va_start(args, fmt);
    vsnprintf(model->error, sizeof model->error, fmt, args);
    va_end(args);
  }
  return -1;
}

static char *copy_string(const char *s) {
  size_t len = strlen(s) + 1;
  char *copy = malloc(len);
  if (copy != NULL)
    memcpy(copy, s, len);
  return copy;
}

/* Appends item to a protobuf-c repeated pointer field (arrays here stay small). */
static bool push(void *array_field, size_t *count, void *item) {
  void ***array = array_field;
  void **grown = realloc(*array, (*count + 1) * sizeof *grown);
  if (grown == NULL)
    return false;
  grown[*count] = item;
  *array = grown;
  *count += 1;
  return true;
}

/* prod(dims) with overflow and sign checks. */
static bool element_count(size_t rank, const int64_t *dims, size_t *count) {
  size_t total = 1;
  for (size_t i = 0; i < rank; i++) {
    if (dims[i] < 0 || (uint64_t)dims[i] > SIZE_MAX)
      return false;
    size_t d = (size_t)dims[i];
    if (d != 0 && total > SIZE_MAX / d)
      return false;
    total *= d;
  }
  *count = total;
  return true;
}

/* ---- Building ---------------------------------------------------------------------------- */

static Onnx__OperatorSetIdProto *make_opset(const char *domain, int64_t version) {
  Onnx__OperatorSetIdProto *opset = malloc(sizeof *opset);
  if (opset == NULL)
    return NULL;
  onnx__operator_set_id_proto__init(opset);
  opset->domain = copy_string(domain);
  opset->has_version = 1;
  opset->version = version;
  if (opset->domain == NULL) {
    onnx__operator_set_id_proto__free_unpacked(opset, NULL);
    return NULL;
  }
  return opset;
}

actx_model *actx_model_create(int64_t ir_version, int64_t onnx_opset, int64_t ms_opset) {
  actx_model *model = calloc(1, sizeof *model);
  if (model == NULL)
    return NULL;
  Onnx__ModelProto *proto = malloc(sizeof *proto);
  Onnx__GraphProto *graph = malloc(sizeof *graph);
  if (proto == NULL || graph == NULL) {
    free(proto);
    free(graph);
    free(model);
    return NULL;
  }
  onnx__model_proto__init(proto);
  onnx__graph_proto__init(graph);
  proto->graph = graph;
  model->proto = proto;
  proto->has_ir_version = 1;
  proto->ir_version = ir_version;
  proto->producer_name = copy_string("actx");
  graph->name = copy_string("actx_graph");
  if (proto->producer_name == NULL || graph->name == NULL) {
    fail(model, "out of memory creating the model");
    return model;
  }
  if (onnx_opset <= 0 || ir_version <= 0) {
    fail(model, "ir_version (%lld) and the ai.onnx opset (%lld) must be positive",
         (long long)ir_version, (long long)onnx_opset);
    return model;
  }
  Onnx__OperatorSetIdProto *onnx = make_opset("", onnx_opset);
  if (onnx == NULL || !push(&proto->opset_import, &proto->n_opset_import, onnx)) {
    if (onnx != NULL)
      onnx__operator_set_id_proto__free_unpacked(onnx, NULL);
    fail(model, "out of memory adding the ai.onnx opset import");
    return model;
  }
  if (ms_opset > 0) {
    Onnx__OperatorSetIdProto *ms = make_opset(ACTX_MODEL_MS_DOMAIN, ms_opset);
    if (ms == NULL || !push(&proto->opset_import, &proto->n_opset_import, ms)) {
      if (ms != NULL)
        onnx__operator_set_id_proto__free_unpacked(ms, NULL);
      fail(model, "out of memory adding the com.microsoft opset import");
    }
  }
  return model;
}

void actx_model_free(actx_model *model) {
  if (model == NULL)
    return;
  if (model->proto != NULL)
    onnx__model_proto__free_unpacked(model->proto, NULL);
  for (size_t i = 0; i < model->n_nodes; i++)
    free(model->nodes[i]);
  free(model->nodes);
  free(model);
}

const char *actx_model_error(const actx_model *model) {
  if (model == NULL)
    return "no model (out of memory?)";
  return model->failed ? model->error : NULL;
}

static Onnx__ValueInfoProto *make_value_info(actx_model *model, const char *what, const char *name,
                                             int32_t elem_type, size_t rank, const int64_t *dims,
                                             const char *const *dim_params) {
  if (name == NULL || name[0] == '\0') {
    fail(model, "%s: a name is required", what);
    return NULL;
  }
  if (rank > ACTX_MODEL_MAX_RANK || (rank > 0 && dims == NULL)) {
    fail(model, "%s '%s': rank %zu needs %zu dims (at most %d)", what, name, rank, rank,
         ACTX_MODEL_MAX_RANK);
    return NULL;
  }
  if (elem_type <= ACTX_ELEM_UNDEFINED) {
    fail(model, "%s '%s': element type %d is not valid", what, name, (int)elem_type);
    return NULL;
  }
  Onnx__ValueInfoProto *info = malloc(sizeof *info);
  Onnx__TypeProto *type = malloc(sizeof *type);
  Onnx__TypeProto__Tensor *tensor = malloc(sizeof *tensor);
  Onnx__TensorShapeProto *shape = malloc(sizeof *shape);
  if (info == NULL || type == NULL || tensor == NULL || shape == NULL) {
    free(info);
    free(type);
    free(tensor);
    free(shape);
    fail(model, "%s '%s': out of memory", what, name);
    return NULL;
  }
  /* Link the tree first so one free_unpacked of info releases whatever follows. */
  onnx__value_info_proto__init(info);
  onnx__type_proto__init(type);
  onnx__type_proto__tensor__init(tensor);
  onnx__tensor_shape_proto__init(shape);
  info->type = type;
  type->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  type->tensor_type = tensor;
  tensor->has_elem_type = 1;
  tensor->elem_type = elem_type;
  tensor->shape = shape;
  info->name = copy_string(name);
  bool ok = info->name != NULL;
  for (size_t i = 0; ok && i < rank; i++) {
    Onnx__TensorShapeProto__Dimension *dim = malloc(sizeof *dim);
    if (dim == NULL) {
      ok = false;
      break;
    }
    onnx__tensor_shape_proto__dimension__init(dim);
    if (dims[i] >= 0) {
      dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
      dim->dim_value = dims[i];
    } else if (dim_params != NULL && dim_params[i] != NULL) {
      dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
      dim->dim_param = copy_string(dim_params[i]);
      ok = dim->dim_param != NULL;
    } /* else: an unnamed dimension of unknown size */
    if (!push(&shape->dim, &shape->n_dim, dim)) {
      protobuf_c_message_free_unpacked(&dim->base, NULL);
      ok = false;
    }
  }
  if (!ok) {
    onnx__value_info_proto__free_unpacked(info, NULL);
    fail(model, "%s '%s': out of memory", what, name);
    return NULL;
  }
  return info;
}

static int add_value(actx_model *model, bool is_input, const char *name, int32_t elem_type,
                     size_t rank, const int64_t *dims, const char *const *dim_params) {
  if (model == NULL || model->failed)
    return -1;
  const char *what = is_input ? "graph input" : "graph output";
  Onnx__ValueInfoProto *info =
      make_value_info(model, what, name, elem_type, rank, dims, dim_params);
  if (info == NULL)
    return -1;
  Onnx__GraphProto *graph = model->proto->graph;
  bool ok = is_input ? push(&graph->input, &graph->n_input, info)
                     : push(&graph->output, &graph->n_output, info);
  if (!ok) {
    onnx__value_info_proto__free_unpacked(info, NULL);
    return fail(model, "%s '%s': out of memory", what, name);
  }
  return 0;
}

int actx_model_add_input(actx_model *model, const char *name, int32_t elem_type, size_t rank,
                         const int64_t *dims, const char *const *dim_params) {
  return add_value(model, true, name, elem_type, rank, dims, dim_params);
}

int actx_model_add_output(actx_model *model, const char *name, int32_t elem_type, size_t rank,
                          const int64_t *dims, const char *const *dim_params) {
  return add_value(model, false, name, elem_type, rank, dims, dim_params);
}

int actx_model_add_initializer(actx_model *model, const char *name, int32_t elem_type, size_t rank,
                               const int64_t *dims, const void *data) {
  if (model == NULL || model->failed)
    return -1;
  if (name == NULL || name[0] == '\0')
    return fail(model, "initializer: a name is required");
  size_t elem_size = actx_elem_size(elem_type);
  if (elem_size == 0)
    return fail(model, "initializer '%s': element type %d is not supported", name, (int)elem_type);
  if (rank > ACTX_MODEL_MAX_RANK || (rank > 0 && dims == NULL))
    return fail(model, "initializer '%s': rank %zu needs dims (at most %d)", name, rank,
                ACTX_MODEL_MAX_RANK);
  size_t count = 0;
  if (!element_count(rank, dims, &count) || count > SIZE_MAX / elem_size)
    return fail(model, "initializer '%s': dims must be non-negative and not overflow", name);
  size_t bytes = count * elem_size;
  if (bytes > 0 && data == NULL)
    return fail(model, "initializer '%s': data is NULL", name);

  Onnx__TensorProto *tensor = malloc(sizeof *tensor);
  if (tensor == NULL)
    return fail(model, "initializer '%s': out of memory", name);
  onnx__tensor_proto__init(tensor);
  tensor->name = copy_string(name);
  tensor->has_data_type = 1;
  tensor->data_type = elem_type;
  tensor->dims = rank > 0 ? malloc(rank * sizeof *tensor->dims) : NULL;
  tensor->n_dims = tensor->dims != NULL ? rank : 0;
  tensor->has_raw_data = 1;
  tensor->raw_data.len = bytes;
  tensor->raw_data.data = bytes > 0 ? malloc(bytes) : NULL;
  Onnx__GraphProto *graph = model->proto->graph;
  if (tensor->name == NULL || (rank > 0 && tensor->dims == NULL) ||
      (bytes > 0 && tensor->raw_data.data == NULL) ||
      !push(&graph->initializer, &graph->n_initializer, tensor)) {
    tensor->raw_data.len = tensor->raw_data.data != NULL ? bytes : 0;
    onnx__tensor_proto__free_unpacked(tensor, NULL);
    return fail(model, "initializer '%s': out of memory (%zu bytes)", name, bytes);
  }
  if (rank > 0)
    memcpy(tensor->dims, dims, rank * sizeof *dims);
  if (bytes > 0)
    memcpy(tensor->raw_data.data, data, bytes);
  return 0;
}

static bool push_names(char ***field, size_t *count, size_t n, const char *const *names) {
  for (size_t i = 0; i < n; i++) {
    char *copy = copy_string(names[i]);
    if (copy == NULL || !push(field, count, copy)) {
      free(copy);
      return false;
    }
  }
  return true;
}

actx_model_node *actx_model_add_named_node(actx_model *model, const char *node_name,
                                           const char *op_type, const char *domain, size_t n_inputs,
                                           const char *const *inputs, size_t n_outputs,
                                           const char *const *outputs) {
  if (model == NULL || model->failed)
    return NULL;
  if (op_type == NULL || op_type[0] == '\0') {
    fail(model, "node: an op_type is required");
    return NULL;
  }
  if ((n_inputs > 0 && inputs == NULL) || n_outputs == 0 || outputs == NULL) {
    fail(model, "node %s: needs its input names and at least one output name", op_type);
    return NULL;
  }
  for (size_t i = 0; i < n_inputs; i++)
    if (inputs[i] == NULL) {
      fail(model, "node %s: input %zu is NULL (use \"\" for an omitted input)", op_type, i);
      return NULL;
    }
  for (size_t i = 0; i < n_outputs; i++)
    if (outputs[i] == NULL || outputs[i][0] == '\0') {
      fail(model, "node %s: output %zu has no name", op_type, i);
      return NULL;
    }

  char generated[64];
  if (node_name == NULL) {
    snprintf(generated, sizeof generated, "%s_%zu", op_type, model->proto->graph->n_node);
    node_name = generated;
  }
  Onnx__NodeProto *node = malloc(sizeof *node);
  actx_model_node *handle = malloc(sizeof *handle);
  if (node == NULL || handle == NULL) {
    free(node);
    free(handle);
    fail(model, "node %s: out of memory", op_type);
    return NULL;
  }
  onnx__node_proto__init(node);
  node->name = copy_string(node_name);
  node->op_type = copy_string(op_type);
  node->domain = copy_string(domain != NULL ? domain : "");
  Onnx__GraphProto *graph = model->proto->graph;
  bool ok = node->name != NULL && node->op_type != NULL && node->domain != NULL &&
            push_names(&node->input, &node->n_input, n_inputs, inputs) &&
            push_names(&node->output, &node->n_output, n_outputs, outputs);
  if (ok && !push(&graph->node, &graph->n_node, node))
    ok = false;
  if (!ok) {
    onnx__node_proto__free_unpacked(node, NULL);
    free(handle);
    fail(model, "node %s: out of memory", op_type);
    return NULL;
  }
  handle->model = model;
  handle->proto = node;
  if (!push(&model->nodes, &model->n_nodes, handle)) {
    free(handle); /* the node stays in the graph; the model is unusable anyway */
    fail(model, "node %s: out of memory", op_type);
    return NULL;
  }
  return handle;
}

actx_model_node *actx_model_add_node(actx_model *model, const char *op_type, const char *domain,
                                     size_t n_inputs, const char *const *inputs, size_t n_outputs,
                                     const char *const *outputs) {
  return actx_model_add_named_node(model, NULL, op_type, domain, n_inputs, inputs, n_outputs,
                                   outputs);
}

/* A new attribute appended to node, or NULL after recording why. */
static Onnx__AttributeProto *new_attribute(actx_model_node *node, const char *name,
                                           Onnx__AttributeProto__AttributeType type) {
  if (node == NULL || node->model->failed)
    return NULL;
  if (name == NULL || name[0] == '\0') {
    fail(node->model, "node %s: attribute needs a name", node->proto->name);
    return NULL;
  }
  Onnx__AttributeProto *attr = malloc(sizeof *attr);
  if (attr == NULL) {
    fail(node->model, "node %s: out of memory for attribute %s", node->proto->name, name);
    return NULL;
  }
  onnx__attribute_proto__init(attr);
  attr->name = copy_string(name);
  attr->has_type = 1;
  attr->type = type;
  if (attr->name == NULL || !push(&node->proto->attribute, &node->proto->n_attribute, attr)) {
    onnx__attribute_proto__free_unpacked(attr, NULL);
    fail(node->model, "node %s: out of memory for attribute %s", node->proto->name, name);
    return NULL;
  }
  return attr;
}

int actx_model_node_attr_float(actx_model_node *node, const char *name, float value) {
  Onnx__AttributeProto *attr =
      new_attribute(node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
  if (attr == NULL)
    return -1;
  attr->has_f = 1;
  attr->f = value;
  return 0;
}

int actx_model_node_attr_int(actx_model_node *node, const char *name, int64_t value) {
  Onnx__AttributeProto *attr =
      new_attribute(node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
  if (attr == NULL)
    return -1;
  attr->has_i = 1;
  attr->i = value;
  return 0;
}

int actx_model_node_attr_bytes(actx_model_node *node, const char *name, const void *data,
                               size_t len) {
  if (node != NULL && data == NULL && len > 0)
    return fail(node->model, "node %s: string attribute %s is NULL", node->proto->name,
                name != NULL ? name : "?");
  Onnx__AttributeProto *attr =
      new_attribute(node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
  if (attr == NULL)
    return -1;
  attr->s.data = malloc(len > 0 ? len : 1);
  if (attr->s.data == NULL)
    return fail(node->model, "node %s: out of memory for attribute %s", node->proto->name, name);
  if (len > 0)
    memcpy(attr->s.data, data, len);
  attr->s.len = len;
  attr->has_s = 1;
  return 0;
}

int actx_model_node_attr_string(actx_model_node *node, const char *name, const char *value) {
  if (node != NULL && value == NULL)
    return fail(node->model, "node %s: string attribute %s is NULL", node->proto->name,
                name != NULL ? name : "?");
  return actx_model_node_attr_bytes(node, name, value, value != NULL ? strlen(value) : 0);
}

int actx_model_node_attr_graph(actx_model_node *node, const char *name, actx_model *body) {
  if (node != NULL && body == NULL)
    return fail(node->model, "node %s: graph attribute %s has no graph", node->proto->name,
                name != NULL ? name : "?");
  if (node != NULL && body->failed) {
    fail(node->model, "node %s: graph attribute %s: %s", node->proto->name,
         name != NULL ? name : "?", body->error);
    actx_model_free(body);
    return -1;
  }
  Onnx__AttributeProto *attr =
      new_attribute(node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
  if (attr == NULL) {
    actx_model_free(body);
    return -1;
  }
  attr->g = body->proto->graph;
  body->proto->graph = NULL;
  actx_model_free(body);
  return 0;
}

int actx_model_node_attr_floats(actx_model_node *node, const char *name, size_t n,
                                const float *values) {
  if (node != NULL && n > 0 && values == NULL)
    return fail(node->model, "node %s: attribute %s has no values", node->proto->name,
                name != NULL ? name : "?");
  Onnx__AttributeProto *attr =
      new_attribute(node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);
  if (attr == NULL)
    return -1;
  if (n > 0) {
    attr->floats = malloc(n * sizeof *values);
    if (attr->floats == NULL)
      return fail(node->model, "node %s: out of memory for attribute %s", node->proto->name, name);
    memcpy(attr->floats, values, n * sizeof *values);
    attr->n_floats = n;
  }
  return 0;
}

int actx_model_node_attr_ints(actx_model_node *node, const char *name, size_t n,
                              const int64_t *values) {
  if (node != NULL && n > 0 && values == NULL)
    return fail(node->model, "node %s: attribute %s has no values", node->proto->name,
                name != NULL ? name : "?");
  Onnx__AttributeProto *attr =
      new_attribute(node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  if (attr == NULL)
    return -1;
  if (n > 0) {
    attr->ints = malloc(n * sizeof *values);
    if (attr->ints == NULL)
      return fail(node->model, "node %s: out of memory for attribute %s", node->proto->name, name);
    memcpy(attr->ints, values, n * sizeof *values);
    attr->n_ints = n;
  }
  return 0;
}

int actx_model_serialize(actx_model *model, uint8_t **bytes, size_t *size) {
  if (model == NULL || bytes == NULL || size == NULL)
    return fail(model, "serialize: NULL argument");
  *bytes = NULL;
  *size = 0;
  if (model->failed)
    return -1;
  Onnx__GraphProto *graph = model->proto->graph;
  if (graph->n_node == 0 || graph->n_output == 0)
    return fail(model, "serialize: the graph needs at least one node and one output");
  size_t packed = onnx__model_proto__get_packed_size(model->proto);
  uint8_t *buffer = malloc(packed > 0 ? packed : 1);
  if (buffer == NULL)
    return fail(model, "serialize: out of memory (%zu bytes)", packed);
  size_t written = onnx__model_proto__pack(model->proto, buffer);
  if (written != packed) {
    free(buffer);
    return fail(model, "serialize: protobuf-c wrote %zu of %zu bytes", written, packed);
  }
  *bytes = buffer;
  *size = packed;
  return 0;
}

/* ---- Reading ----------------------------------------------------------------------------- */

void actx_tensor_free(actx_tensor *tensor) {
  if (tensor == NULL)
    return;
  free(tensor->data);
  tensor->data = NULL;
  tensor->count = 0;
  tensor->bytes = 0;
}

int actx_read_file(const char *path, uint8_t **bytes, size_t *size, char *err, size_t err_size) {
  *bytes = NULL;
  *size = 0;
  FILE *file = fopen(path, "rb");
  if (file == NULL) {
    format_error(err, err_size, "cannot open %s", path);
    return -1;
  }
  uint8_t *buffer = NULL;
  size_t used = 0, capacity = 0;
  for (;;) {
    if (used == capacity) {
      size_t grown = capacity == 0 ? 1 << 16 : capacity * 2;
      uint8_t *bigger = realloc(buffer, grown);
      if (bigger == NULL) {
        free(buffer);
        fclose(file);
        format_error(err, err_size, "out of memory reading %s", path);
        return -1;
      }
      buffer = bigger;
      capacity = grown;
    }
    size_t got = fread(buffer + used, 1, capacity - used, file);
    used += got;
    if (got == 0)
      break;
  }
  bool failed = ferror(file) != 0;
  fclose(file);
  if (failed) {
    free(buffer);
    format_error(err, err_size, "error reading %s", path);
    return -1;
  }
  *bytes = buffer;
  *size = used;
  return 0;
}

/* Copies the typed repeated field matching elem_type into data (count elements). */
static bool copy_typed_field(const Onnx__TensorProto *proto, int32_t elem_type, size_t count,
                             void *data, char *err, size_t err_size) {
  size_t available = 0;
  switch (elem_type) {
    case ACTX_ELEM_FLOAT: available = proto->n_float_data; break;
    case ACTX_ELEM_INT64: available = proto->n_int64_data; break;
    case ACTX_ELEM_DOUBLE: available = proto->n_double_data; break;
    case ACTX_ELEM_UINT32:
    case ACTX_ELEM_UINT64: available = proto->n_uint64_data; break;
    default: /* every narrower type travels in int32_data, one element per int32 */
      available = proto->n_int32_data;
      break;
  }
  if (available != count) {
    format_error(err, err_size, "tensor '%s' has %zu %s values for %zu elements",
                 proto->name != NULL ? proto->name : "", available, actx_elem_name(elem_type),
                 count);
    return false;
  }
  for (size_t i = 0; i < count; i++) {
    switch (elem_type) {
      case ACTX_ELEM_FLOAT: ((float *)data)[i] = proto->float_data[i]; break;
      case ACTX_ELEM_INT64: ((int64_t *)data)[i] = proto->int64_data[i]; break;
      case ACTX_ELEM_DOUBLE: ((double *)data)[i] = proto->double_data[i]; break;
      case ACTX_ELEM_UINT32: ((uint32_t *)data)[i] = (uint32_t)proto->uint64_data[i]; break;
      case ACTX_ELEM_UINT64: ((uint64_t *)data)[i] = proto->uint64_data[i]; break;
      case ACTX_ELEM_INT32: ((int32_t *)data)[i] = proto->int32_data[i]; break;
      case ACTX_ELEM_UINT16:
      case ACTX_ELEM_INT16:
      case ACTX_ELEM_FLOAT16:
      case ACTX_ELEM_BFLOAT16:
        ((uint16_t *)data)[i] = (uint16_t)(uint32_t)proto->int32_data[i];
        break;
      default: /* uint8, int8, bool */
        ((uint8_t *)data)[i] = (uint8_t)(uint32_t)proto->int32_data[i];
        break;
    }
  }
  return true;
}

static int tensor_from_proto(const Onnx__TensorProto *proto, actx_tensor *out, char *err,
                             size_t err_size) {
  const char *name = proto->name != NULL ? proto->name : "";
  if (strlen(name) >= NAME_SIZE) {
    format_error(err, err_size, "tensor name '%.40s...' is longer than %zu characters", name,
                 NAME_SIZE - 1);
    return -1;
  }
  strcpy(out->name, name);
  if (proto->has_data_location &&
      proto->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
    format_error(err, err_size, "tensor '%s' keeps its data in an external file", name);
    return -1;
  }
  int32_t elem_type = proto->has_data_type ? proto->data_type : ACTX_ELEM_UNDEFINED;
  size_t elem_size = actx_elem_size(elem_type);
  if (elem_size == 0) {
    format_error(err, err_size, "tensor '%s' has element type %d, which is not supported", name,
                 (int)elem_type);
    return -1;
  }
  if (proto->n_dims > ACTX_MODEL_MAX_RANK) {
    format_error(err, err_size, "tensor '%s' has rank %zu (at most %d)", name, proto->n_dims,
                 ACTX_MODEL_MAX_RANK);
    return -1;
  }
  size_t count = 0;
  if (!element_count(proto->n_dims, proto->dims, &count) || count > SIZE_MAX / elem_size) {
    format_error(err, err_size, "tensor '%s' has negative or overflowing dims", name);
    return -1;
  }
  out->elem_type = elem_type;
  out->rank = proto->n_dims;
  for (size_t i = 0; i < proto->n_dims; i++)
    out->dims[i] = proto->dims[i];
  out->count = count;
  out->bytes = count * elem_size;
  if (count == 0)
    return 0;
  /* The data must be there before we allocate for it: dims can claim terabytes. */
  const size_t typed = proto->n_float_data + proto->n_int32_data + proto->n_int64_data +
                       proto->n_double_data + proto->n_uint64_data;
  if (proto->has_raw_data ? proto->raw_data.len != out->bytes : typed < count) {
    format_error(err, err_size, "tensor '%s' declares %zu elements of %s but holds %zu %s", name,
                 count, actx_elem_name(elem_type),
                 proto->has_raw_data ? proto->raw_data.len : typed,
                 proto->has_raw_data ? "bytes of raw_data" : "typed values");
    memset(out, 0, sizeof *out);
    return -1;
  }
  out->data = malloc(out->bytes);
  if (out->data == NULL) {
    format_error(err, err_size, "out of memory for tensor '%s' (%zu bytes)", name, out->bytes);
    return -1;
  }
  if (proto->has_raw_data) {
    memcpy(out->data, proto->raw_data.data, out->bytes);
    return 0;
  }
  if (!copy_typed_field(proto, elem_type, count, out->data, err, err_size)) {
    actx_tensor_free(out);
    return -1;
  }
  return 0;
}

int actx_tensor_parse(const uint8_t *bytes, size_t size, actx_tensor *out, char *err,
                      size_t err_size) {
  memset(out, 0, sizeof *out);
  if (bytes == NULL && size > 0) {
    format_error(err, err_size, "tensor bytes are NULL");
    return -1;
  }
  Onnx__TensorProto *proto = onnx__tensor_proto__unpack(NULL, size, bytes);
  if (proto == NULL) {
    format_error(err, err_size, "not a valid TensorProto (%zu bytes)", size);
    return -1;
  }
  int rc = tensor_from_proto(proto, out, err, err_size);
  onnx__tensor_proto__free_unpacked(proto, NULL);
  return rc;
}

int actx_tensor_read_file(const char *path, actx_tensor *out, char *err, size_t err_size) {
  memset(out, 0, sizeof *out);
  uint8_t *bytes = NULL;
  size_t size = 0;
  if (actx_read_file(path, &bytes, &size, err, err_size) != 0)
    return -1;
  int rc = actx_tensor_parse(bytes, size, out, err, err_size);
  free(bytes);
  if (rc != 0 && err != NULL && err_size > 0) {
    char detail[ERROR_SIZE];
    snprintf(detail, sizeof detail, "%s", err);
    snprintf(err, err_size, "%s: %s", path, detail);
  }
  return rc;
}

static bool is_initializer(const Onnx__GraphProto *graph, const char *name) {
  for (size_t i = 0; i < graph->n_initializer; i++)
    if (graph->initializer[i]->name != NULL && strcmp(graph->initializer[i]->name, name) == 0)
      return true;
  return false;
}

static bool describe_value(const Onnx__ValueInfoProto *info, actx_model_value *out, char *err,
                           size_t err_size) {
  memset(out, 0, sizeof *out);
  const char *name = info->name != NULL ? info->name : "";
  if (strlen(name) >= sizeof out->name) {
    format_error(err, err_size, "value name '%.40s...' is too long", name);
    return false;
  }
  strcpy(out->name, name);
  const Onnx__TypeProto *type = info->type;
  if (type == NULL || type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
    return true; /* not a tensor: elem_type stays undefined */
  const Onnx__TypeProto__Tensor *tensor = type->tensor_type;
  out->elem_type = tensor->has_elem_type ? tensor->elem_type : ACTX_ELEM_UNDEFINED;
  if (tensor->shape == NULL)
    return true;
  if (tensor->shape->n_dim > ACTX_MODEL_MAX_RANK) {
    format_error(err, err_size, "value '%s' has rank %zu (at most %d)", name, tensor->shape->n_dim,
                 ACTX_MODEL_MAX_RANK);
    return false;
  }
  out->rank = tensor->shape->n_dim;
  for (size_t i = 0; i < out->rank; i++) {
    const Onnx__TensorShapeProto__Dimension *dim = tensor->shape->dim[i];
    out->dims[i] = dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE
                       ? dim->dim_value
                       : -1;
  }
  return true;
}

int actx_model_info_parse(const uint8_t *bytes, size_t size, actx_model_info *out, char *err,
                          size_t err_size) {
  memset(out, 0, sizeof *out);
  if (bytes == NULL && size > 0) {
    format_error(err, err_size, "model bytes are NULL");
    return -1;
  }
  Onnx__ModelProto *proto = onnx__model_proto__unpack(NULL, size, bytes);
  if (proto == NULL) {
    format_error(err, err_size, "not a valid ModelProto (%zu bytes)", size);
    return -1;
  }
  int rc = -1;
  const Onnx__GraphProto *graph = proto->graph;
  if (graph == NULL) {
    format_error(err, err_size, "the model has no graph");
    goto done;
  }
  out->ir_version = proto->has_ir_version ? proto->ir_version : 0;
  for (size_t i = 0; i < proto->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *opset = proto->opset_import[i];
    const char *domain = opset->domain != NULL ? opset->domain : "";
    if (strcmp(domain, "") == 0 || strcmp(domain, "ai.onnx") == 0)
      out->onnx_opset = opset->version;
    else if (strcmp(domain, ACTX_MODEL_MS_DOMAIN) == 0)
      out->ms_opset = opset->version;
  }
  out->n_nodes = graph->n_node;
  out->inputs = calloc(graph->n_input + 1, sizeof *out->inputs);
  out->outputs = calloc(graph->n_output + 1, sizeof *out->outputs);
  if (out->inputs == NULL || out->outputs == NULL) {
    format_error(err, err_size, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < graph->n_input; i++) {
    const Onnx__ValueInfoProto *info = graph->input[i];
    if (info->name != NULL && is_initializer(graph, info->name))
      continue;
    if (!describe_value(info, &out->inputs[out->n_inputs], err, err_size))
      goto done;
    out->n_inputs++;
  }
  for (size_t i = 0; i < graph->n_output; i++) {
    if (!describe_value(graph->output[i], &out->outputs[out->n_outputs], err, err_size))
      goto done;
    out->n_outputs++;
  }
  rc = 0;
done:
  onnx__model_proto__free_unpacked(proto, NULL);
  if (rc != 0)
    actx_model_info_free(out);
  return rc;
}

void actx_model_info_free(actx_model_info *info) {
  if (info == NULL)
    return;
  free(info->inputs);
  free(info->outputs);
  info->inputs = info->outputs = NULL;
  info->n_inputs = info->n_outputs = 0;
}
