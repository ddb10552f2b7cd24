/* ab_cases.c — the A/B case table and its builders (see ab_cases.h). */
#include "ab_cases.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "half.h"
#include "model.h"
#include "rng.h"

/* The opsets the single-node models import: ai.onnx 20 is the first with Gelu; com.microsoft 1
 * holds BiasGelu, FastGelu, QuickGelu and its Gelu. */
#define AB_ONNX_OPSET 20
#define AB_MS_OPSET 1

static int build_single_node(const actx_ab_case *c, actx_dtype dtype, size_t n, uint64_t seed,
                             actx_ab_model *out, char *err, size_t err_size);
static int build_exported(const actx_ab_case *c, actx_dtype dtype, size_t n, uint64_t seed,
                          actx_ab_model *out, char *err, size_t err_size);
static int build_bert(const actx_ab_case *c, actx_dtype dtype, size_t n, uint64_t seed,
                      actx_ab_model *out, char *err, size_t err_size);

/* The exported activation subgraphs (build_exported's models). */
enum exported_model {
  EXPORTED_ERF_GELU = 1, /* PyTorch's GELU below opset 20: (x·(1 + erf(x/√2)))·0.5 */
  EXPORTED_TANH_GELU,    /* GPT-2, HF NewGELU: (0.5·x)·(1 + tanh(√(2/π)·(x + 0.044715·x^3))) */
  EXPORTED_SILU,         /* x·sigmoid(x) */
  EXPORTED_QUICK_GELU,   /* x·sigmoid(1.702·x) */
  EXPORTED_GELU_NODE,    /* ai.onnx Gelu (opset 20): after the bias Add, ORT fuses BiasGelu */
};
#define EXPORTED_BIAS 16 /* or'ed in: Add(x, bias[512]) first */

#define MS ACTX_MODEL_MS_DOMAIN
#define SINGLE(name, op_type, domain, approximate, bias, has_alpha, alpha, op)                    \
  {name, build_single_node, 0, op_type, domain, approximate, bias, has_alpha, alpha, op, NULL, 0, false}
#define EXPORTED(name, model, op)                                                               \
  {name, build_exported, model, NULL, "", NULL, false, false, 0, op, NULL, 0, false}
/* The BERT blocks at sequence lengths 32, 128 and 512 (X is [1, S, 768]); ORT has no bfloat16
 * MatMul, so a bfloat16 block runs in neither arm. */
static const long k_bert_sizes[] = {32 * ACTX_AB_BERT_HIDDEN, 128 * ACTX_AB_BERT_HIDDEN,
                                    512 * ACTX_AB_BERT_HIDDEN};
#define BERT(name, model)                                                                       \
  {name, build_bert, model, NULL, "", NULL, false, false, 0, ACTX_OP_GELU, k_bert_sizes,         \
   sizeof k_bert_sizes / sizeof k_bert_sizes[0], true}
static const actx_ab_case k_cases[] = {
    SINGLE("Erf", "Erf", "", NULL, false, false, 0, ACTX_OP_ERF),
    SINGLE("Gelu", "Gelu", "", NULL, false, false, 0, ACTX_OP_GELU),
    SINGLE("Gelu(tanh)", "Gelu", "", "tanh", false, false, 0, ACTX_OP_GELU_TANH),
    SINGLE("ms.Gelu", "Gelu", MS, NULL, false, false, 0, ACTX_OP_GELU),
    SINGLE("ms.BiasGelu", "BiasGelu", MS, NULL, true, false, 0, ACTX_OP_GELU),
    SINGLE("ms.FastGelu", "FastGelu", MS, NULL, false, false, 0, ACTX_OP_GELU_TANH),
    SINGLE("ms.FastGelu+bias", "FastGelu", MS, NULL, true, false, 0, ACTX_OP_GELU_TANH),
    SINGLE("ms.QuickGelu", "QuickGelu", MS, NULL, false, true, ACTX_QUICK_GELU_DEFAULT_ALPHA,
           ACTX_OP_QUICK_GELU),
    /* alpha 1 is SiLU, which ORT runs with a kernel of its own (AVX-512F where the host has it) */
    SINGLE("ms.QuickGelu(1.0)", "QuickGelu", MS, NULL, false, true, 1.0f, ACTX_OP_QUICK_GELU),
    SINGLE("Tanh", "Tanh", "", NULL, false, false, 0, ACTX_OP_TANH),
    SINGLE("Sigmoid", "Sigmoid", "", NULL, false, false, 0, ACTX_OP_SIGMOID),
    EXPORTED("exported-gelu", EXPORTED_ERF_GELU, ACTX_OP_GELU),
    EXPORTED("bias+exported-gelu", EXPORTED_ERF_GELU | EXPORTED_BIAS, ACTX_OP_GELU),
    EXPORTED("exported-tanh-gelu", EXPORTED_TANH_GELU, ACTX_OP_GELU_TANH),
    EXPORTED("bias+exported-tanh-gelu", EXPORTED_TANH_GELU | EXPORTED_BIAS, ACTX_OP_GELU_TANH),
    EXPORTED("exported-silu", EXPORTED_SILU, ACTX_OP_QUICK_GELU),
    EXPORTED("exported-quickgelu", EXPORTED_QUICK_GELU, ACTX_OP_QUICK_GELU),
    EXPORTED("bias+Gelu", EXPORTED_GELU_NODE | EXPORTED_BIAS, ACTX_OP_GELU),
    BERT("bert-mlp", ACTX_AB_BERT_MLP),
    BERT("bert-encoder", ACTX_AB_BERT_ENCODER),
};
#undef SINGLE
#undef EXPORTED
#undef BERT
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

/* ---- Multi-node models ------------------------------------------------------------------ */

/* The opset exporters of these subgraphs write: below 20, where ORT fuses the exact GELU only
 * after partitioning (at 20 it would find an ai.onnx Gelu node). */
#define EXPORT_OPSET 17
#define SQRT_2 1.4142135623730951
#define SQRT_2_OVER_PI 0.7978845608028654
#define TANH_GELU_CUBIC 0.044715

/* A scalar constant of the model's element type; returns the value it holds (after rounding). */
static double add_scalar(actx_model *m, const char *name, int32_t elem, double value) {
  switch (elem) {
  case ACTX_ELEM_FLOAT16: {
    const uint16_t h = actx_f64_to_f16(value);
    actx_model_add_initializer(m, name, elem, 0, NULL, &h);
    return actx_f16_to_f32(h);
  }
  case ACTX_ELEM_BFLOAT16: {
    const uint16_t b = actx_f64_to_bf16(value);
    actx_model_add_initializer(m, name, elem, 0, NULL, &b);
    return actx_bf16_to_f32(b);
  }
  default: {
    const float f = actx_f64_to_f32(value);
    actx_model_add_initializer(m, name, elem, 0, NULL, &f);
    return f;
  }
  }
}

/* out = op(a [, b]), the node named name. */
static void add_op(actx_model *m, const char *name, const char *op_type, const char *a,
                   const char *b, const char *out) {
  const char *inputs[2] = {a, b}, *outputs[1] = {out};
  actx_model_add_named_node(m, name, op_type, "", b != NULL ? 2 : 1, inputs, 1, outputs);
}

/* y = GELU(x) as exporters write it below opset 20, from five nodes named <prefix>div,
 * <prefix>erf, <prefix>add_one, <prefix>mul_x, <prefix>mul_half (their values named alike) over
 * the scalars <constants>sqrt2, <constants>one, <constants>half (add_exported_gelu_constants):
 * PyTorch's (x·(1 + erf(x/√2)))·0.5, or with half_first (0.5·x)·(1 + erf(x/√2)), the spelling
 * ORT's GeluFusion also finds when x is a Mul's output. */
static void add_exported_gelu(actx_model *m, const char *prefix, const char *constants,
                              bool half_first, const char *x, const char *y) {
  char node[5][64], value[4][64], c_sqrt2[64], c_one[64], c_half[64];
  static const char *const node_names[5] = {"div", "erf", "add_one", "mul_x", "mul_half"};
  static const char *const value_names[4] = {"scaled", "erf", "cdf2", "x_cdf2"};
  for (int i = 0; i < 5; i++)
    snprintf(node[i], sizeof node[i], "%s%s", prefix, node_names[i]);
  for (int i = 0; i < 4; i++)
    snprintf(value[i], sizeof value[i], "%s%s", prefix, value_names[i]);
  snprintf(c_sqrt2, sizeof c_sqrt2, "%ssqrt2", constants);
  snprintf(c_one, sizeof c_one, "%sone", constants);
  snprintf(c_half, sizeof c_half, "%shalf", constants);
  add_op(m, node[0], "Div", x, c_sqrt2, value[0]);
  add_op(m, node[1], "Erf", value[0], NULL, value[1]);
  add_op(m, node[2], "Add", value[1], c_one, value[2]);
  if (half_first) {
    snprintf(value[3], sizeof value[3], "%shalf_x", prefix);
    add_op(m, node[4], "Mul", x, c_half, value[3]);
    add_op(m, node[3], "Mul", value[3], value[2], y);
  } else {
    add_op(m, node[3], "Mul", x, value[2], value[3]);
    add_op(m, node[4], "Mul", value[3], c_half, y);
  }
}

/* The scalars add_exported_gelu reads, named <constants>sqrt2, <constants>one, <constants>half. */
static void add_exported_gelu_constants(actx_model *m, const char *constants, int32_t elem) {
  char name[64];
  snprintf(name, sizeof name, "%ssqrt2", constants);
  add_scalar(m, name, elem, SQRT_2);
  snprintf(name, sizeof name, "%sone", constants);
  add_scalar(m, name, elem, 1.0);
  snprintf(name, sizeof name, "%shalf", constants);
  add_scalar(m, name, elem, 0.5);
}

/* An input tensor of the case, filled uniformly in [lo, hi). */
static int add_input_tensor(actx_ab_model *out, int32_t elem, size_t rank, const int64_t *dims,
                            actx_rng *rng, double lo, double hi) {
  actx_ort_tensor *t = &out->inputs[out->n_inputs];
  size_t count = 1;
  for (size_t i = 0; i < rank; i++)
    count *= (size_t)dims[i];
  t->elem_type = (ONNXTensorElementDataType)elem;
  t->rank = rank;
  memcpy(t->dims, dims, rank * sizeof *dims);
  t->count = count;
  t->bytes = count * actx_elem_size(elem);
  t->data = malloc(t->bytes > 0 ? t->bytes : 1);
  if (t->data == NULL)
    return -1;
  out->n_inputs++;
  return actx_rng_fill(rng, elem, t->data, count, lo, hi);
}

/* One exported activation subgraph on x [N / 512, 512], optionally after Add(x, bias). */
static int build_exported(const actx_ab_case *c, actx_dtype dtype, size_t n, uint64_t seed,
                          actx_ab_model *out, char *err, size_t err_size) {
  memset(out, 0, sizeof *out);
  if (n == 0) {
    snprintf(err, err_size, "%s: 0 elements", c->name);
    return -1;
  }
  const int32_t elem = elem_type_of(dtype);
  const size_t width = n % ACTX_AB_ROW == 0 ? ACTX_AB_ROW : n;
  const int64_t dims[2] = {(int64_t)(n / width), (int64_t)width};
  const bool bias = (c->model & EXPORTED_BIAS) != 0;
  const int model = c->model & ~EXPORTED_BIAS;
  actx_rng rng;
  actx_rng_seed(&rng, seed);
  actx_model *m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION,
                                    model == EXPORTED_GELU_NODE ? AB_ONNX_OPSET : EXPORT_OPSET, 0);
  if (m == NULL ||
      add_input_tensor(out, elem, 2, dims, &rng, ACTX_AB_INPUT_LO, ACTX_AB_INPUT_HI) != 0) {
    snprintf(err, err_size, "%s: out of memory for %zu elements", c->name, n);
    actx_model_free(m);
    actx_ab_model_free(out);
    return -1;
  }
  out->elements = n;
  actx_model_add_input(m, "x", elem, 2, dims, NULL);
  actx_model_add_output(m, "y", elem, 2, dims, NULL);
  const char *x = "x";
  if (bias) {
    const int64_t bias_dims[1] = {(int64_t)width};
    out->reference_bias = malloc(width * actx_elem_size(elem));
    if (out->reference_bias == NULL) {
      snprintf(err, err_size, "%s: out of memory", c->name);
      actx_model_free(m);
      actx_ab_model_free(out);
      return -1;
    }
    actx_rng_fill(&rng, elem, out->reference_bias, width, -1.0, 1.0);
    actx_model_add_initializer(m, "bias", elem, 1, bias_dims, out->reference_bias);
    add_op(m, "bias_add", "Add", "x", "bias", "xb");
    x = "xb";
  }
  if (model == EXPORTED_ERF_GELU) {
    add_exported_gelu_constants(m, "", elem);
  } else if (model != EXPORTED_GELU_NODE) {
    add_scalar(m, "one", elem, 1.0);
    add_scalar(m, "half", elem, 0.5);
  }
  double alpha = 1.0;
  switch (model) {
  case EXPORTED_ERF_GELU:
    add_exported_gelu(m, "", "", false, x, "y");
    break;
  case EXPORTED_TANH_GELU:
    /* ORT fuses it only when the result is not a graph output: a Neg follows, as the next
     * layer would (in bfloat16, for which ORT has no Neg and no fusion, an Identity) */
    add_scalar(m, "three", elem, 3.0);
    add_scalar(m, "kappa", elem, TANH_GELU_CUBIC);
    add_scalar(m, "beta", elem, SQRT_2_OVER_PI);
    add_op(m, "mul_half", "Mul", "half", x, "half_x");
    add_op(m, "pow", "Pow", x, "three", "cube");
    add_op(m, "mul_kappa", "Mul", "kappa", "cube", "kappa_cube");
    add_op(m, "add_x", "Add", x, "kappa_cube", "inner");
    add_op(m, "mul_beta", "Mul", "beta", "inner", "arg");
    add_op(m, "tanh", "Tanh", "arg", NULL, "th");
    add_op(m, "add_one", "Add", "one", "th", "cdf2");
    add_op(m, "mul_x", "Mul", "half_x", "cdf2", "gelu");
    add_op(m, "neg", elem == ACTX_ELEM_BFLOAT16 ? "Identity" : "Neg", "gelu", NULL, "y");
    break;
  case EXPORTED_GELU_NODE:
    add_op(m, "gelu", "Gelu", x, NULL, "y");
    break;
  case EXPORTED_QUICK_GELU:
    alpha = add_scalar(m, "alpha", elem, ACTX_QUICK_GELU_DEFAULT_ALPHA);
    add_op(m, "mul_alpha", "Mul", x, "alpha", "ax");
    add_op(m, "sigmoid", "Sigmoid", "ax", NULL, "sg");
    add_op(m, "mul_x", "Mul", x, "sg", "y");
    break;
  default: /* EXPORTED_SILU */
    add_op(m, "sigmoid", "Sigmoid", x, NULL, "sg");
    add_op(m, "mul_x", "Mul", x, "sg", "y");
    break;
  }
  if (actx_model_serialize(m, &out->bytes, &out->size) != 0) {
    snprintf(err, err_size, "%s: building the model: %s", c->name, actx_model_error(m));
    actx_model_free(m);
    actx_ab_model_free(out);
    return -1;
  }
  actx_model_free(m);
  /* libactx's result, for the cells ORT alone cannot run (the Neg has no such reference; the
   * bfloat16 Identity leaves it as it is) */
  out->has_reference = model != EXPORTED_TANH_GELU || elem == ACTX_ELEM_BFLOAT16;
  out->reference.op = c->op;
  out->reference.dtype = dtype;
  out->reference.alpha = c->op == ACTX_OP_QUICK_GELU ? (float)alpha : 0;
  if (bias) {
    out->reference.bias = out->reference_bias;
    out->reference.bias_len = width;
  }
  return 0;
}

/* A weight tensor, uniform in [lo, hi). */
static void add_weight(actx_model *m, const char *name, int32_t elem, size_t rank,
                       const int64_t *dims, actx_rng *rng, double lo, double hi, bool *failed) {
  size_t count = 1;
  for (size_t i = 0; i < rank; i++)
    count *= (size_t)dims[i];
  void *data = malloc(count * actx_elem_size(elem));
  if (data == NULL) {
    *failed = true;
    return;
  }
  actx_rng_fill(rng, elem, data, count, lo, hi);
  actx_model_add_initializer(m, name, elem, rank, dims, data);
  free(data);
}

/* A weight initialised so that a product with unit-variance inputs keeps unit variance. */
static double unit_bound(size_t fan_in) { return sqrt(3.0 / (double)fan_in); }

/* MatMul(in, W1) → Add b1 → exact GELU as PyTorch exports it below opset 20 → MatMul(·, W2) →
 * Add b2. The GELU's nodes (with the Add of b1) are named ACTX_AB_GELU_PREFIX... */
static void add_mlp(actx_model *m, int32_t elem, const char *in, const char *out, actx_rng *rng,
                    bool *failed) {
  const int64_t w1[2] = {ACTX_AB_BERT_HIDDEN, ACTX_AB_BERT_FFN};
  const int64_t w2[2] = {ACTX_AB_BERT_FFN, ACTX_AB_BERT_HIDDEN};
  const int64_t b1[1] = {ACTX_AB_BERT_FFN}, b2[1] = {ACTX_AB_BERT_HIDDEN};
  add_weight(m, "mlp_w1", elem, 2, w1, rng, -unit_bound(ACTX_AB_BERT_HIDDEN),
             unit_bound(ACTX_AB_BERT_HIDDEN), failed);
  add_weight(m, "mlp_b1", elem, 1, b1, rng, -0.1, 0.1, failed);
  add_weight(m, "mlp_w2", elem, 2, w2, rng, -unit_bound(ACTX_AB_BERT_FFN),
             unit_bound(ACTX_AB_BERT_FFN), failed);
  add_weight(m, "mlp_b2", elem, 1, b2, rng, -0.1, 0.1, failed);
  add_exported_gelu_constants(m, ACTX_AB_GELU_PREFIX, elem);
  add_op(m, "mlp_matmul1", "MatMul", in, "mlp_w1", "mlp_h");
  add_op(m, ACTX_AB_GELU_PREFIX "bias_add", "Add", "mlp_h", "mlp_b1", "mlp_hb");
  add_exported_gelu(m, ACTX_AB_GELU_PREFIX, ACTX_AB_GELU_PREFIX, false, "mlp_hb", "mlp_g");
  add_op(m, "mlp_matmul2", "MatMul", "mlp_g", "mlp_w2", "mlp_f");
  add_op(m, "mlp_bias_add2", "Add", "mlp_f", "mlp_b2", out);
}

/* LayerNormalization(in) with its own scale and bias, named prefix_... */
static void add_layer_norm(actx_model *m, int32_t elem, const char *prefix, const char *in,
                           const char *out, actx_rng *rng, bool *failed) {
  const int64_t h[1] = {ACTX_AB_BERT_HIDDEN};
  char gamma[32], beta[32];
  snprintf(gamma, sizeof gamma, "%s_gamma", prefix);
  snprintf(beta, sizeof beta, "%s_beta", prefix);
  add_weight(m, gamma, elem, 1, h, rng, 0.9, 1.1, failed);
  add_weight(m, beta, elem, 1, h, rng, -0.1, 0.1, failed);
  const char *inputs[3] = {in, gamma, beta}, *outputs[1] = {out};
  actx_model_node *node =
      actx_model_add_named_node(m, prefix, "LayerNormalization", "", 3, inputs, 1, outputs);
  actx_model_node_attr_int(node, "axis", -1);
  actx_model_node_attr_float(node, "epsilon", 1e-12f);
}

/* Self-attention over x [batch, sequence, 768], 12 heads of 64, as BERT exports it. */
static void add_attention(actx_model *m, int32_t elem, const char *x, const char *out,
                          actx_rng *rng, bool *failed) {
  const int64_t w[2] = {ACTX_AB_BERT_HIDDEN, ACTX_AB_BERT_HIDDEN}, b[1] = {ACTX_AB_BERT_HIDDEN};
  const double bound = unit_bound(ACTX_AB_BERT_HIDDEN);
  const int64_t heads_shape[4] = {0, 0, ACTX_AB_BERT_HEADS,
                                  ACTX_AB_BERT_HIDDEN / ACTX_AB_BERT_HEADS};
  const int64_t merged_shape[3] = {0, 0, ACTX_AB_BERT_HIDDEN};
  const int64_t rank4[1] = {4}, rank3[1] = {3};
  actx_model_add_initializer(m, "attn_heads_shape", ACTX_ELEM_INT64, 1, rank4, heads_shape);
  actx_model_add_initializer(m, "attn_merged_shape", ACTX_ELEM_INT64, 1, rank3, merged_shape);
  add_scalar(m, "attn_scale", elem, sqrt((double)(ACTX_AB_BERT_HIDDEN / ACTX_AB_BERT_HEADS)));
  static const char *const names[3] = {"q", "k", "v"};
  static const int64_t perm_qv[4] = {0, 2, 1, 3}, perm_k[4] = {0, 2, 3, 1};
  for (int i = 0; i < 3; i++) {
    char wn[24], bn[24], proj[24], biased[24], split[24], heads[24], node[32];
    snprintf(wn, sizeof wn, "attn_w%s", names[i]);
    snprintf(bn, sizeof bn, "attn_b%s", names[i]);
    snprintf(proj, sizeof proj, "attn_%s_proj", names[i]);
    snprintf(biased, sizeof biased, "attn_%s", names[i]);
    snprintf(split, sizeof split, "attn_%s_split", names[i]);
    snprintf(heads, sizeof heads, "attn_%s_heads", names[i]);
    add_weight(m, wn, elem, 2, w, rng, -bound, bound, failed);
    add_weight(m, bn, elem, 1, b, rng, -0.1, 0.1, failed);
    snprintf(node, sizeof node, "attn_%s_matmul", names[i]);
    add_op(m, node, "MatMul", x, wn, proj);
    snprintf(node, sizeof node, "attn_%s_bias_add", names[i]);
    add_op(m, node, "Add", proj, bn, biased);
    snprintf(node, sizeof node, "attn_%s_reshape", names[i]);
    add_op(m, node, "Reshape", biased, "attn_heads_shape", split);
    const char *in[1] = {split}, *o[1] = {heads};
    snprintf(node, sizeof node, "attn_%s_transpose", names[i]);
    actx_model_node *t = actx_model_add_named_node(m, node, "Transpose", "", 1, in, 1, o);
    actx_model_node_attr_ints(t, "perm", 4, i == 1 ? perm_k : perm_qv);
  }
  add_op(m, "attn_scores", "MatMul", "attn_q_heads", "attn_k_heads", "attn_scores");
  add_op(m, "attn_scale", "Div", "attn_scores", "attn_scale", "attn_scaled");
  const char *sm_in[1] = {"attn_scaled"}, *sm_out[1] = {"attn_probs"};
  actx_model_node *sm =
      actx_model_add_named_node(m, "attn_softmax", "Softmax", "", 1, sm_in, 1, sm_out);
  actx_model_node_attr_int(sm, "axis", -1);
  add_op(m, "attn_context", "MatMul", "attn_probs", "attn_v_heads", "attn_ctx_heads");
  const char *tr_in[1] = {"attn_ctx_heads"}, *tr_out[1] = {"attn_ctx_split"};
  actx_model_node *t =
      actx_model_add_named_node(m, "attn_ctx_transpose", "Transpose", "", 1, tr_in, 1, tr_out);
  actx_model_node_attr_ints(t, "perm", 4, perm_qv);
  add_op(m, "attn_ctx_reshape", "Reshape", "attn_ctx_split", "attn_merged_shape", "attn_ctx");
  add_weight(m, "attn_wo", elem, 2, w, rng, -bound, bound, failed);
  add_weight(m, "attn_bo", elem, 1, b, rng, -0.1, 0.1, failed);
  add_op(m, "attn_out_matmul", "MatMul", "attn_ctx", "attn_wo", "attn_out_proj");
  add_op(m, "attn_out_bias_add", "Add", "attn_out_proj", "attn_bo", out);
}

int actx_ab_build_block(const actx_ab_block_spec *spec, uint64_t seed, actx_ab_model *out,
                        char *err, size_t err_size) {
  memset(out, 0, sizeof *out);
  if (spec->seq == 0 || spec->seq > ACTX_AB_BERT_MAX_SEQ ||
      (spec->static_2d && spec->block != ACTX_AB_BERT_MLP)) {
    snprintf(err, err_size, "BERT block: sequence length %zu (1 to %d; 2-D input: MLP only)",
             spec->seq, ACTX_AB_BERT_MAX_SEQ);
    return -1;
  }
  const int32_t elem = elem_type_of(spec->dtype);
  actx_rng rng;
  actx_rng_seed(&rng, seed);
  actx_model *m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, EXPORT_OPSET, 0);
  if (m == NULL) {
    snprintf(err, err_size, "BERT block: out of memory");
    return -1;
  }
  /* exporters declare batch and sequence symbolic; the run gives [1, S, 768] */
  const int64_t symbolic[3] = {-1, -1, ACTX_AB_BERT_HIDDEN};
  const char *params[3] = {"batch", "sequence", NULL};
  const int64_t run_3d[3] = {1, (int64_t)spec->seq, ACTX_AB_BERT_HIDDEN};
  const int64_t run_2d[2] = {(int64_t)spec->seq, ACTX_AB_BERT_HIDDEN};
  const size_t rank = spec->static_2d ? 2 : 3;
  const int64_t *declared = spec->static_2d ? run_2d : symbolic;
  actx_model_add_input(m, "x", elem, rank, declared, spec->static_2d ? NULL : params);
  actx_model_add_output(m, "y", elem, rank, declared, spec->static_2d ? NULL : params);
  bool failed = add_input_tensor(out, elem, rank, spec->static_2d ? run_2d : run_3d, &rng,
                                 -sqrt(3.0), sqrt(3.0)) != 0;
  out->elements = spec->seq * ACTX_AB_BERT_HIDDEN;
  if (spec->block == ACTX_AB_BERT_MLP) {
    add_mlp(m, elem, "x", "y", &rng, &failed);
  } else {
    add_attention(m, elem, "x", "attn", &rng, &failed);
    add_op(m, "residual1", "Add", "x", "attn", "res1");
    add_layer_norm(m, elem, "layer_norm1", "res1", "h1", &rng, &failed);
    add_mlp(m, elem, "h1", "mlp_out", &rng, &failed);
    add_op(m, "residual2", "Add", "h1", "mlp_out", "res2");
    add_layer_norm(m, elem, "layer_norm2", "res2", "y", &rng, &failed);
  }
  if (failed || actx_model_serialize(m, &out->bytes, &out->size) != 0) {
    snprintf(err, err_size, "BERT block: %s",
             actx_model_error(m) != NULL ? actx_model_error(m) : "out of memory");
    actx_model_free(m);
    actx_ab_model_free(out);
    return -1;
  }
  actx_model_free(m);
  return 0;
}

static int build_bert(const actx_ab_case *c, actx_dtype dtype, size_t n, uint64_t seed,
                      actx_ab_model *out, char *err, size_t err_size) {
  size_t seq = n / ACTX_AB_BERT_HIDDEN;
  if (seq < 1)
    seq = 1;
  if (seq > ACTX_AB_BERT_MAX_SEQ)
    seq = ACTX_AB_BERT_MAX_SEQ;
  const actx_ab_block_spec spec = {.block = (actx_ab_block)c->model, .seq = seq, .dtype = dtype};
  return actx_ab_build_block(&spec, seed, out, err, err_size);
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

/* ---- Chains ------------------------------------------------------------------------------- */

/* Nodes in one exported GELU (add_exported_gelu). */
#define EXPORTED_GELU_NODES 5

const char *actx_ab_chain_name(actx_ab_chain chain) {
  return chain == ACTX_AB_CHAIN_EXPORTED_GELU ? "exported-gelu" : "activations";
}

int actx_ab_build_chain(actx_ab_chain chain, size_t nodes, uint8_t **bytes, size_t *size,
                        size_t *n_nodes, char *err, size_t err_size) {
  static const char *const cycle[] = {"Tanh", "Sigmoid", "Gelu"};
  const bool exported = chain == ACTX_AB_CHAIN_EXPORTED_GELU;
  const size_t links = exported ? (nodes + EXPORTED_GELU_NODES - 1) / EXPORTED_GELU_NODES : nodes;
  *bytes = NULL;
  *size = 0;
  *n_nodes = exported ? links * EXPORTED_GELU_NODES : links;
  if (links == 0) {
    snprintf(err, err_size, "%s chain: 0 nodes", actx_ab_chain_name(chain));
    return -1;
  }
  const int64_t dims[2] = {ACTX_AB_CHAIN_ROWS, ACTX_AB_CHAIN_COLS};
  actx_model *m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION,
                                    exported ? EXPORT_OPSET : AB_ONNX_OPSET, 0);
  if (m == NULL) {
    snprintf(err, err_size, "%s chain: out of memory", actx_ab_chain_name(chain));
    return -1;
  }
  actx_model_add_input(m, "x", ACTX_ELEM_FLOAT, 2, dims, NULL);
  actx_model_add_output(m, "y", ACTX_ELEM_FLOAT, 2, dims, NULL);
  if (exported)
    add_exported_gelu_constants(m, "", ACTX_ELEM_FLOAT);
  char x[32] = "x", y[32], prefix[32];
  for (size_t i = 0; i < links; i++) {
    if (i + 1 == links)
      snprintf(y, sizeof y, "y");
    else
      snprintf(y, sizeof y, "v%zu", i);
    snprintf(prefix, sizeof prefix, "l%zu_", i);
    /* each link's x is the previous link's last Mul: ORT fuses only the half-first spelling
     * there (ep/ort_fusions.c), and actx claims only what ORT would fuse */
    if (exported)
      add_exported_gelu(m, prefix, "", true, x, y);
    else
      add_op(m, prefix, cycle[i % 3], x, NULL, y);
    snprintf(x, sizeof x, "%s", y);
  }
  const int rc = actx_model_serialize(m, bytes, size);
  if (rc != 0)
    snprintf(err, err_size, "%s chain: %s", actx_ab_chain_name(chain), actx_model_error(m));
  actx_model_free(m);
  return rc;
}
