/* A float16 model's float32 twin: the reference a float16 result is measured against.
 *
 * Every float16 in the model becomes a float32 of the same value (float32 holds each float16
 * exactly): initializers and Constant / tensor attributes, the element types of inputs,
 * outputs and value_info, and Cast / CastLike targets; subgraphs (If, Loop, Scan) too. What the
 * twin computes is the float16 graph's arithmetic with 13 more bits at every step, so against a
 * float16 result its error is far below one float16 unit: a reference for "how far from the
 * model's mathematics" that ORT runs like any other model. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "onnx.pb-c.h"

#define FLOAT16 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16
#define FLOAT ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT

static float half_to_float(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | man << 13; /* inf, NaN (payload kept) */
  } else if (exp != 0) {
    bits = sign | (exp + 112) << 23 | man << 13;
  } else if (man == 0) {
    bits = sign;
  } else { /* subnormal: normalise */
    exp = 113;
    while (!(man & 0x400)) {
      man <<= 1;
      exp--;
    }
    bits = sign | exp << 23 | (man & 0x3ff) << 13;
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static size_t tensor_elements(const Onnx__TensorProto *t) {
  size_t n = 1;
  for (size_t i = 0; i < t->n_dims; i++) n *= (size_t)t->dims[i];
  return n;
}

/* A float16 tensor's data, from raw_data or int32_data (one value each), as float32 raw_data. */
static int widen_tensor(Onnx__TensorProto *t, char *err, size_t err_size) {
  if (t == NULL || !t->has_data_type || t->data_type != FLOAT16) return 0;
  if (t->n_external_data > 0) {
    snprintf(err, err_size, "tensor '%s': external data is not supported",
             t->name ? t->name : "");
    return -1;
  }
  const size_t n = tensor_elements(t);
  const bool raw = t->has_raw_data && t->raw_data.len > 0;
  if (raw ? t->raw_data.len != 2 * n : t->n_int32_data != n) {
    snprintf(err, err_size, "tensor '%s': %zu elements but %zu values",
             t->name ? t->name : "", n, raw ? t->raw_data.len / 2 : t->n_int32_data);
    return -1;
  }
  float *f = malloc(n * sizeof *f + 1);
  if (f == NULL) {
    snprintf(err, err_size, "out of memory widening %zu elements", n);
    return -1;
  }
  for (size_t i = 0; i < n; i++) {
    uint16_t h;
    if (raw)
      memcpy(&h, t->raw_data.data + 2 * i, sizeof h);
    else
      h = (uint16_t)t->int32_data[i];
    f[i] = half_to_float(h);
  }
  free(t->raw_data.data);
  free(t->int32_data);
  t->int32_data = NULL;
  t->n_int32_data = 0;
  t->raw_data.data = (uint8_t *)f;
  t->raw_data.len = n * sizeof *f;
  t->has_raw_data = true;
  t->data_type = FLOAT;
  return 0;
}

static void widen_type(Onnx__TypeProto *type) {
  while (type != NULL) {
    switch (type->value_case) {
      case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
        if (type->tensor_type->elem_type == FLOAT16) type->tensor_type->elem_type = FLOAT;
        return;
      case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE: type = type->sequence_type->elem_type; break;
      case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE: type = type->optional_type->elem_type; break;
      case ONNX__TYPE_PROTO__VALUE_MAP_TYPE: type = type->map_type->value_type; break;
      default: return;
    }
  }
}

static void widen_values(Onnx__ValueInfoProto **values, size_t n) {
  for (size_t i = 0; i < n; i++) widen_type(values[i]->type);
}

static int widen_graph(Onnx__GraphProto *g, char *err, size_t err_size);

static int widen_node(Onnx__NodeProto *node, char *err, size_t err_size) {
  const bool cast = node->op_type != NULL && (strcmp(node->op_type, "Cast") == 0 ||
                                              strcmp(node->op_type, "CastLike") == 0);
  for (size_t i = 0; i < node->n_attribute; i++) {
    Onnx__AttributeProto *a = node->attribute[i];
    if (cast && a->name != NULL && strcmp(a->name, "to") == 0 && a->i == FLOAT16) a->i = FLOAT;
    if (widen_tensor(a->t, err, err_size) != 0) return -1;
    for (size_t k = 0; k < a->n_tensors; k++)
      if (widen_tensor(a->tensors[k], err, err_size) != 0) return -1;
    if (a->g != NULL && widen_graph(a->g, err, err_size) != 0) return -1;
    for (size_t k = 0; k < a->n_graphs; k++)
      if (widen_graph(a->graphs[k], err, err_size) != 0) return -1;
  }
  return 0;
}

static int widen_graph(Onnx__GraphProto *g, char *err, size_t err_size) {
  for (size_t i = 0; i < g->n_initializer; i++)
    if (widen_tensor(g->initializer[i], err, err_size) != 0) return -1;
  if (g->n_sparse_initializer > 0) {
    snprintf(err, err_size, "sparse initializers are not supported");
    return -1;
  }
  widen_values(g->input, g->n_input);
  widen_values(g->output, g->n_output);
  widen_values(g->value_info, g->n_value_info);
  for (size_t i = 0; i < g->n_node; i++)
    if (widen_node(g->node[i], err, err_size) != 0) return -1;
  return 0;
}

int actx_model_widen_half(const uint8_t *bytes, size_t size, uint8_t **out, size_t *out_size,
                          char *err, size_t err_size) {
  *out = NULL;
  *out_size = 0;
  Onnx__ModelProto *proto = onnx__model_proto__unpack(NULL, size, bytes);
  if (proto == NULL || proto->graph == NULL) {
    snprintf(err, err_size, "not a valid ModelProto (%zu bytes)", size);
    if (proto != NULL) onnx__model_proto__free_unpacked(proto, NULL);
    return -1;
  }
  int rc = widen_graph(proto->graph, err, err_size);
  for (size_t i = 0; rc == 0 && i < proto->n_functions; i++)
    for (size_t k = 0; rc == 0 && k < proto->functions[i]->n_node; k++)
      rc = widen_node(proto->functions[i]->node[k], err, err_size);
  if (rc == 0) {
    const size_t n = onnx__model_proto__get_packed_size(proto);
    *out = malloc(n + 1);
    if (*out == NULL) {
      snprintf(err, err_size, "out of memory for %zu bytes", n);
      rc = -1;
    } else {
      *out_size = onnx__model_proto__pack(proto, *out);
    }
  }
  onnx__model_proto__free_unpacked(proto, NULL);
  return rc;
}
