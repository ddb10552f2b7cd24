/* ab_cases.c — the A/B case table and its builders (see ab_cases.h). */
#include "ab_cases.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "rng.h"

/* The opsets the single-node models import: ai.onnx 20 is the first with Gelu; com.microsoft 1
 * holds BiasGelu, FastGelu, QuickGelu and its Gelu. */
#define AB_ONNX_OPSET 20
#define AB_MS_OPSET 1

static int build_single_node(const actx_ab_case *c, actx_dtype dtype, size_t n, uint64_t seed,
                             actx_ab_model *out, char *err, size_t err_size);

#define MS ACTX_MODEL_MS_DOMAIN
static const actx_ab_case k_cases[] = {
    {"Erf", build_single_node, "Erf", "", NULL, false, false, 0, ACTX_OP_ERF},
    {"Gelu", build_single_node, "Gelu", "", NULL, false, false, 0, ACTX_OP_GELU},
    {"Gelu(tanh)", build_single_node, "Gelu", "", "tanh", false, false, 0, ACTX_OP_GELU_TANH},
    {"ms.Gelu", build_single_node, "Gelu", MS, NULL, false, false, 0, ACTX_OP_GELU},
    {"ms.BiasGelu", build_single_node, "BiasGelu", MS, NULL, true, false, 0, ACTX_OP_GELU},
    {"ms.FastGelu", build_single_node, "FastGelu", MS, NULL, false, false, 0, ACTX_OP_GELU_TANH},
    {"ms.FastGelu+bias", build_single_node, "FastGelu", MS, NULL, true, false, 0,
     ACTX_OP_GELU_TANH},
    {"ms.QuickGelu", build_single_node, "QuickGelu", MS, NULL, false, true,
     ACTX_QUICK_GELU_DEFAULT_ALPHA, ACTX_OP_QUICK_GELU},
    {"Tanh", build_single_node, "Tanh", "", NULL, false, false, 0, ACTX_OP_TANH},
    {"Sigmoid", build_single_node, "Sigmoid", "", NULL, false, false, 0, ACTX_OP_SIGMOID},
};
#undef MS
#define N_CASES (sizeof k_cases / sizeof k_cases[0])

const actx_ab_case *actx_ab_cases(size_t *n) {
  *n = N_CASES;
  return k_cases;
}

static int32_t elem_type_of(actx_dtype dtype) {
  switch (dtype) {
  case ACTX_F16: return ACTX_ELEM_FLOAT16;
  case ACTX_BF16: return ACTX_ELEM_BFLOAT16;
  default: return ACTX_ELEM_FLOAT;
  }
}

void actx_ab_model_free(actx_ab_model *m) {
  free(m->bytes);
  for (size_t i = 0; i < m->n_inputs; i++)
    free(m->inputs[i].data);
  free(m->reference_bias);
  memset(m, 0, sizeof *m);
}

/* y = op(x [+ bias]) over x of shape [rows, width]; bias is an initializer, as in a model. */
static int build_single_node(const actx_ab_case *c, actx_dtype dtype, size_t n, uint64_t seed,
                             actx_ab_model *out, char *err, size_t err_size) {
  memset(out, 0, sizeof *out);
  if (n == 0) {
    snprintf(err, err_size, "%s: 0 elements", c->name);
    return -1;
  }
  const int32_t elem = elem_type_of(dtype);
  const size_t elem_size = actx_dtype_size(dtype);
  const size_t width = n % ACTX_AB_ROW == 0 ? ACTX_AB_ROW : n;
  const int64_t dims[2] = {(int64_t)(n / width), (int64_t)width};
  actx_rng rng;
  actx_rng_seed(&rng, seed);

  actx_ort_tensor *x = &out->inputs[0];
  x->elem_type = (ONNXTensorElementDataType)elem;
  x->rank = 2;
  x->dims[0] = dims[0];
  x->dims[1] = dims[1];
  x->count = n;
  x->bytes = n * elem_size;
  x->data = malloc(x->bytes);
  out->n_inputs = 1;
  out->elements = n;
  if (c->has_bias)
    out->reference_bias = malloc(width * elem_size);
  if (x->data == NULL || (c->has_bias && out->reference_bias == NULL)) {
    snprintf(err, err_size, "%s: out of memory for %zu elements", c->name, n);
    actx_ab_model_free(out);
    return -1;
  }
  actx_rng_fill(&rng, elem, x->data, n, ACTX_AB_INPUT_LO, ACTX_AB_INPUT_HI);
  if (c->has_bias)
    actx_rng_fill(&rng, elem, out->reference_bias, width, -1.0, 1.0);

  const bool ms = c->domain[0] != '\0';
  actx_model *m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, AB_ONNX_OPSET,
                                    ms ? AB_MS_OPSET : 0);
  if (m == NULL) {
    snprintf(err, err_size, "%s: out of memory", c->name);
    actx_ab_model_free(out);
    return -1;
  }
  actx_model_add_input(m, "x", elem, 2, dims, NULL);
  actx_model_add_output(m, "y", elem, 2, dims, NULL);
  const char *inputs[2] = {"x", "bias"}, *outputs[1] = {"y"};
  if (c->has_bias) {
    const int64_t bias_dims[1] = {(int64_t)width};
    actx_model_add_initializer(m, "bias", elem, 1, bias_dims, out->reference_bias);
  }
  actx_model_node *node = actx_model_add_named_node(m, "node", c->op_type, c->domain,
                                                    c->has_bias ? 2 : 1, inputs, 1, outputs);
  if (c->approximate != NULL)
    actx_model_node_attr_string(node, "approximate", c->approximate);
  if (c->has_alpha)
    actx_model_node_attr_float(node, "alpha", c->alpha);
  int rc = actx_model_serialize(m, &out->bytes, &out->size);
  if (rc != 0) {
    snprintf(err, err_size, "%s: building the model: %s", c->name, actx_model_error(m));
    actx_model_free(m);
    actx_ab_model_free(out);
    return -1;
  }
  actx_model_free(m);

  out->has_reference = true;
  out->reference.op = c->op;
  out->reference.dtype = dtype;
  out->reference.alpha = c->has_alpha ? c->alpha : 0;
  if (c->has_bias) {
    out->reference.bias = out->reference_bias;
    out->reference.bias_len = width;
  }
  return 0;
}

int actx_ab_reference(const actx_ab_model *m, void *y, char *err, size_t err_size) {
  if (!m->has_reference || m->n_inputs == 0) {
    snprintf(err, err_size, "no libactx reference for this model");
    return -1;
  }
  actx_status st = actx_compute(&m->reference, m->inputs[0].data, y, m->elements, NULL);
  if (st != ACTX_OK) {
    snprintf(err, err_size, "actx_compute: %s", actx_status_string(st));
    return -1;
  }
  return 0;
}
