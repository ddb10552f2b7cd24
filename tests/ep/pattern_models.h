/* pattern_models.h — models of the activation subgraphs exporters write, for the fusion tests:
 * exact GELU (erf), tanh GELU, SiLU, QuickGelu, a Gelu node, each optionally after
 * an Add of a bias, in the operand orders and spellings exporters use, and near-miss variants
 * (a wrong constant, an intermediate consumed elsewhere, a 2-D bias) that must not be fused.
 *
 * Every node of the pattern itself (the bias Add included) is named "p<k>"; the nodes a variant
 * adds around it are named "pre", "extra" and "neg". The graph input is "x" (and "bias" when the
 * bias is a graph input); the outputs are "y" and, for variants with a second output, "extra_out".
 */
#ifndef ACTX_TESTS_EP_PATTERN_MODELS_H
#define ACTX_TESTS_EP_PATTERN_MODELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "actx.h"

typedef enum ep_pattern_family {
  EP_PATTERN_ERF_GELU,   /* 0.5·x·(1 + erf(x/√2)) */
  EP_PATTERN_TANH_GELU,  /* 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) */
  EP_PATTERN_SILU,       /* x·sigmoid(x) */
  EP_PATTERN_QUICK_GELU, /* x·sigmoid(α·x) */
  EP_PATTERN_GELU_NODE,  /* one Gelu-like node (gelu_op), for Add(bias) → Gelu */
} ep_pattern_family;

/* How the erf argument is scaled. */
typedef enum ep_erf_scale {
  EP_ERF_DIV_SQRT2 = 0,   /* Div(x, 1.4142135) */
  EP_ERF_DIV_SQRT2_SHORT, /* Div(x, 1.4142099), the value some BERT exporters write */
  EP_ERF_MUL_RSQRT2,      /* Mul(x, 0.70710677) */
} ep_erf_scale;

/* Where the 0.5 goes, around f = 1 + erf(...) or 1 + tanh(...). */
typedef enum ep_half_place {
  EP_HALF_X_FIRST = 0, /* (0.5·x)·f */
  EP_HALF_LAST,        /* (x·f)·0.5 */
  EP_HALF_CDF,         /* x·(0.5·f), as in the original BERT code */
  EP_HALF_DIV_TWO,     /* (x·f) / 2, as in JAX's */
} ep_half_place;

/* How the tanh argument is spelt. */
typedef enum ep_tanh_form {
  EP_TANH_POW = 0, /* (x + 0.044715·Pow(x, 3))·√(2/π): GPT-2, HF NewGELU */
  EP_TANH_MUL_X3,  /* the same with x³ as (x·x)·x */
  EP_TANH_INNER,   /* (√(2/π)·x)·(1 + (0.044715·x)·x): Megatron's gelu_fast */
} ep_tanh_form;

/* A constant of the pattern a near miss changes, by its role. */
typedef enum ep_pattern_const {
  EP_CONST_NONE = 0,
  EP_CONST_SCALE, /* √2, 1/√2 or √(2/π) */
  EP_CONST_ONE,   /* the 1 added to erf / tanh */
  EP_CONST_HALF,  /* 0.5 */
  EP_CONST_CUBIC, /* 0.044715 */
} ep_pattern_const;

/* Which intermediate a near miss also sends elsewhere. */
typedef enum ep_pattern_leak {
  EP_LEAK_NONE = 0,
  EP_LEAK_CONSUMER, /* the core node's output (erf, tanh, sigmoid) also feeds a Neg → extra_out */
  EP_LEAK_OUTPUT,   /* the core node's output is also a graph output (extra_out) */
  EP_LEAK_ROOT,     /* the bias Add's output also feeds a Neg → extra_out */
} ep_pattern_leak;

typedef struct ep_pattern_spec {
  ep_pattern_family family;
  int32_t elem_type; /* 0: float */
  int64_t opset;     /* default-domain opset; 0: 17 */
  size_t rank;
  int64_t dims[4]; /* x's shape; -1: symbolic, named "d<i>" */
  ep_erf_scale erf_scale;
  ep_half_place half;
  ep_tanh_form tanh_form;
  bool swap;              /* every commutative node takes its operands the other way round */
  float alpha;            /* QuickGelu (0: 1.702) */
  const char *gelu_op;    /* GELU_NODE: "Gelu", "Gelu(tanh)", "ms.Gelu", "ms.FastGelu" */
  bool bias;              /* Add(x, bias) first */
  bool bias_first;        /* Add(bias, x) */
  bool bias_input;        /* the bias is a graph input "bias", not an initializer */
  size_t bias_rank;       /* 0: 1; 2 makes the near miss [1, H] */
  ep_pattern_const wrong; /* a constant off by wrong_scale (relative) */
  double wrong_scale;
  ep_pattern_leak leak;
  bool y_through_neg; /* the pattern's result feeds a Neg whose output is y */
  bool x_from_mul;    /* the pattern's input is Mul(x, 2) (node "pre"), not x itself */
} ep_pattern_spec;

/* What libactx computes for the pattern (bias: the bias values, when an initializer). */
typedef struct ep_pattern_model {
  uint8_t *bytes;
  size_t size;
  size_t n_pattern_nodes; /* p0 .. p<n-1> */
  size_t n_nodes;         /* the whole model's */
  actx_op op;
  float alpha;
  size_t bias_len; /* 0: no bias */
  void *bias;      /* bias_len elements of elem_type (malloc'ed), when the bias is an initializer */
} ep_pattern_model;

/* Builds the model; the bias initializer (if any) gets values from seed. 0, or -1 with a message
 * printed. Free with ep_pattern_model_free. */
int ep_pattern_build(const ep_pattern_spec *spec, uint64_t seed, ep_pattern_model *out);
void ep_pattern_model_free(ep_pattern_model *m);

/* "erf GELU, Div √2, 0.5·x first" and so on, for messages. */
void ep_pattern_describe(const ep_pattern_spec *spec, char *buf, size_t size);

#endif /* ACTX_TESTS_EP_PATTERN_MODELS_H */
