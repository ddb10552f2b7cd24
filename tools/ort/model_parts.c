/* model_parts.c — activations and control-flow graphs shared by the EP tests and the EP fuzzer
 * (see model_parts.h). */
#include "model_parts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/half.h"

static const char *const kind_names[ACTX_ACT_COUNT] = {
    "QuickGelu(1.702) subgraph",
    "QuickGelu(-0.625) subgraph",
    "SiLU subgraph",
    "erf GELU subgraph",
    "bias + erf GELU subgraph",
    "Tanh",
    "Sigmoid",
    "ms.Gelu",
    "ms.FastGelu",
    "ms.QuickGelu(1.702)",
    "ms.QuickGelu(-0.625)",
    "ms.BiasGelu",
    "tanh GELU subgraph",
    "bias + ms.Gelu",
    "ms.FastGelu(bias)",
    "Erf",
    "Gelu",
    "Gelu(tanh)",
    "Relu",
};

const char *actx_act_name(actx_act_kind kind) {
  return (unsigned)kind < ACTX_ACT_COUNT ? kind_names[kind] : "?";
}

bool actx_act_is_subgraph(actx_act_kind kind) {
  switch (kind) {
    case ACTX_ACT_QUICK_GELU:
    case ACTX_ACT_QUICK_GELU_OTHER_ALPHA:
    case ACTX_ACT_SILU:
    case ACTX_ACT_ERF_GELU:
    case ACTX_ACT_BIAS_ERF_GELU:
    case ACTX_ACT_TANH_GELU:
    case ACTX_ACT_BIAS_MS_GELU: return true;
    default: return false;
  }
}

bool actx_act_has_bias(actx_act_kind kind) {
  return kind == ACTX_ACT_BIAS_ERF_GELU || kind == ACTX_ACT_MS_BIAS_GELU ||
         kind == ACTX_ACT_BIAS_MS_GELU || kind == ACTX_ACT_MS_FAST_GELU_BIAS;
}

int64_t actx_act_min_opset(actx_act_kind kind) {
  return kind == ACTX_ACT_GELU || kind == ACTX_ACT_GELU_TANH ? 20 : 1;
}

/* One value of elem_type at p; the type the initializer gets. */
static int32_t put_value(int32_t elem_type, float v, void *p) {
  switch (elem_type) {
    case ACTX_ELEM_FLOAT16: {
      const uint16_t h = actx_f32_to_f16(v);
      memcpy(p, &h, 2);
      return elem_type;
    }
    case ACTX_ELEM_BFLOAT16: {
      const uint16_t h = actx_f32_to_bf16(v);
      memcpy(p, &h, 2);
      return elem_type;
    }
    case ACTX_ELEM_DOUBLE: {
      const double d = v;
      memcpy(p, &d, 8);
      return elem_type;
    }
    default: memcpy(p, &v, 4); return ACTX_ELEM_FLOAT;
  }
}

static void add_scalar(actx_model *g, int32_t elem_type, const char *prefix, const char *name,
                       float value) {
  char full[64];
  snprintf(full, sizeof full, "%s%s", prefix, name);
  uint8_t data[8];
  actx_model_add_initializer(g, full, put_value(elem_type, value, data), 0, NULL, data);
}

static void add_bias(actx_model *g, int32_t elem_type, const char *name, const float *bias,
                     size_t n) {
  uint8_t *data = malloc(n * 8 + 8);
  if (data == NULL) return; /* the model then lacks the initializer and fails to load */
  int32_t type = ACTX_ELEM_FLOAT;
  const size_t size = elem_type == ACTX_ELEM_DOUBLE                                     ? 8
                      : elem_type == ACTX_ELEM_FLOAT16 || elem_type == ACTX_ELEM_BFLOAT16 ? 2
                                                                                          : 4;
  for (size_t i = 0; i < n; i++) type = put_value(elem_type, bias[i], data + i * size);
  const int64_t dims[1] = {(int64_t)n};
  actx_model_add_initializer(g, name, type, 1, dims, data);
  free(data);
}

void actx_part_add_activation(actx_model *g, actx_act_kind kind, int32_t elem_type,
                              const char *in, const char *out, const char *prefix, float alpha,
                              const float *bias, size_t bias_len) {
  char t[64], sv[64], al[64], b[64], r[64], sq[64], one[64], half[64], a[64], e[64], f[64],
      m[64], three[64], cubic[64], scale[64];
#define NAME(var, s) snprintf(var, sizeof var, "%s" s, prefix)
  NAME(t, "t");
  NAME(sv, "s");
  NAME(al, "alpha");
  NAME(b, "b");
  NAME(r, "r");
  NAME(sq, "sqrt2");
  NAME(one, "one");
  NAME(half, "half");
  NAME(a, "a");
  NAME(e, "e");
  NAME(f, "f");
  NAME(m, "m");
  NAME(three, "three");
  NAME(cubic, "cubic");
  NAME(scale, "scale");
#undef NAME
  if (alpha == 0)
    alpha = kind == ACTX_ACT_QUICK_GELU_OTHER_ALPHA || kind == ACTX_ACT_MS_QUICK_GELU_OTHER_ALPHA
                ? -0.625f
                : 1.702f;
  const char *x = in;
  if (actx_act_has_bias(kind)) add_bias(g, elem_type, b, bias, bias_len);
  switch (kind) {
    case ACTX_ACT_QUICK_GELU:
    case ACTX_ACT_QUICK_GELU_OTHER_ALPHA:
    case ACTX_ACT_SILU: {
      const char *arg = x;
      if (kind != ACTX_ACT_SILU) {
        add_scalar(g, elem_type, prefix, "alpha", alpha);
        actx_model_add_node(g, "Mul", "", 2, (const char *[]){x, al}, 1, (const char *[]){t});
        arg = t;
      }
      actx_model_add_node(g, "Sigmoid", "", 1, (const char *[]){arg}, 1, (const char *[]){sv});
      actx_model_add_node(g, "Mul", "", 2, (const char *[]){x, sv}, 1, (const char *[]){out});
      break;
    }
    case ACTX_ACT_BIAS_ERF_GELU:
      actx_model_add_node(g, "Add", "", 2, (const char *[]){x, b}, 1, (const char *[]){r});
      x = r;
      /* fall through */
    case ACTX_ACT_ERF_GELU:
      add_scalar(g, elem_type, prefix, "sqrt2", 1.41421356f);
      add_scalar(g, elem_type, prefix, "one", 1.0f);
      add_scalar(g, elem_type, prefix, "half", 0.5f);
      actx_model_add_node(g, "Div", "", 2, (const char *[]){x, sq}, 1, (const char *[]){a});
      actx_model_add_node(g, "Erf", "", 1, (const char *[]){a}, 1, (const char *[]){e});
      actx_model_add_node(g, "Add", "", 2, (const char *[]){e, one}, 1, (const char *[]){f});
      actx_model_add_node(g, "Mul", "", 2, (const char *[]){x, f}, 1, (const char *[]){m});
      actx_model_add_node(g, "Mul", "", 2, (const char *[]){m, half}, 1, (const char *[]){out});
      break;
    case ACTX_ACT_TANH_GELU:
      add_scalar(g, elem_type, prefix, "half", 0.5f);
      add_scalar(g, elem_type, prefix, "three", 3.0f);
      add_scalar(g, elem_type, prefix, "cubic", 0.044715f);
      add_scalar(g, elem_type, prefix, "scale", 0.7978845608f);
      add_scalar(g, elem_type, prefix, "one", 1.0f);
      actx_model_add_node(g, "Mul", "", 2, (const char *[]){x, half}, 1, (const char *[]){m});
      actx_model_add_node(g, "Pow", "", 2, (const char *[]){x, three}, 1, (const char *[]){t});
      actx_model_add_node(g, "Mul", "", 2, (const char *[]){t, cubic}, 1, (const char *[]){r});
      actx_model_add_node(g, "Add", "", 2, (const char *[]){x, r}, 1, (const char *[]){a});
      actx_model_add_node(g, "Mul", "", 2, (const char *[]){a, scale}, 1, (const char *[]){sv});
      actx_model_add_node(g, "Tanh", "", 1, (const char *[]){sv}, 1, (const char *[]){e});
      actx_model_add_node(g, "Add", "", 2, (const char *[]){e, one}, 1, (const char *[]){f});
      actx_model_add_node(g, "Mul", "", 2, (const char *[]){m, f}, 1, (const char *[]){out});
      break;
    case ACTX_ACT_TANH:
    case ACTX_ACT_SIGMOID:
    case ACTX_ACT_ERF:
    case ACTX_ACT_RELU:
    case ACTX_ACT_GELU:
    case ACTX_ACT_GELU_TANH: {
      static const char *const ops[ACTX_ACT_COUNT] = {
          [ACTX_ACT_TANH] = "Tanh", [ACTX_ACT_SIGMOID] = "Sigmoid", [ACTX_ACT_ERF] = "Erf",
          [ACTX_ACT_RELU] = "Relu", [ACTX_ACT_GELU] = "Gelu",       [ACTX_ACT_GELU_TANH] = "Gelu"};
      actx_model_node *n = actx_model_add_node(g, ops[kind], "", 1, (const char *[]){x}, 1,
                                               (const char *[]){out});
      if (kind == ACTX_ACT_GELU_TANH) actx_model_node_attr_string(n, "approximate", "tanh");
      break;
    }
    case ACTX_ACT_MS_GELU:
    case ACTX_ACT_MS_FAST_GELU:
      actx_model_add_node(g, kind == ACTX_ACT_MS_GELU ? "Gelu" : "FastGelu", ACTX_MODEL_MS_DOMAIN,
                          1, (const char *[]){x}, 1, (const char *[]){out});
      break;
    case ACTX_ACT_MS_QUICK_GELU:
    case ACTX_ACT_MS_QUICK_GELU_OTHER_ALPHA: {
      actx_model_node *n = actx_model_add_node(g, "QuickGelu", ACTX_MODEL_MS_DOMAIN, 1,
                                               (const char *[]){x}, 1, (const char *[]){out});
      actx_model_node_attr_float(n, "alpha", alpha);
      break;
    }
    case ACTX_ACT_MS_BIAS_GELU:
    case ACTX_ACT_MS_FAST_GELU_BIAS:
      actx_model_add_node(g, kind == ACTX_ACT_MS_BIAS_GELU ? "BiasGelu" : "FastGelu",
                          ACTX_MODEL_MS_DOMAIN, 2, (const char *[]){x, b}, 1,
                          (const char *[]){out});
      break;
    case ACTX_ACT_BIAS_MS_GELU:
      actx_model_add_node(g, "Add", "", 2, (const char *[]){x, b}, 1, (const char *[]){r});
      actx_model_add_node(g, "Gelu", ACTX_MODEL_MS_DOMAIN, 1, (const char *[]){r}, 1,
                          (const char *[]){out});
      break;
    case ACTX_ACT_COUNT: break;
  }
}

/* A subgraph's opset imports are ignored (it uses its model's), so any will do. */
static actx_model *new_graph(void) {
  return actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, 20, 1);
}

actx_model *actx_part_loop_body(const char *cond_out, int32_t elem_type, size_t rank,
                                const int64_t *dims, const char *const *dim_params) {
  if (cond_out == NULL) cond_out = "c_out";
  actx_model *b = new_graph();
  if (b == NULL) return NULL;
  actx_model_add_input(b, "i", ACTX_ELEM_INT64, 0, NULL, NULL);
  actx_model_add_input(b, "c_in", ACTX_ELEM_BOOL, 0, NULL, NULL);
  actx_model_add_input(b, ACTX_PART_IN, elem_type, rank, dims, dim_params);
  actx_model_add_output(b, cond_out, ACTX_ELEM_BOOL, 0, NULL, NULL);
  actx_model_add_output(b, ACTX_PART_OUT, elem_type, rank, dims, dim_params);
  actx_model_add_node(b, "Identity", "", 1, (const char *[]){"c_in"}, 1,
                      (const char *[]){cond_out});
  return b;
}

actx_model *actx_part_if_branch(int32_t elem_type, size_t rank, const int64_t *dims,
                                const char *const *dim_params) {
  actx_model *b = new_graph();
  if (b == NULL) return NULL;
  actx_model_add_output(b, ACTX_PART_OUT, elem_type, rank, dims, dim_params);
  return b;
}
