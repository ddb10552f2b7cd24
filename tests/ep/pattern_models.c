/* Builders of the exported activation subgraphs (see pattern_models.h). */
#include "pattern_models.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ep_test.h"
#include "model.h"

#define DEFAULT_OPSET 17
#define SQRT_2 1.4142135623730951
#define SQRT_2_SHORT 1.4142099618911743
#define RSQRT_2 0.7071067811865476
#define SQRT_2_OVER_PI 0.7978845608028654
#define CUBIC 0.044715
#define DEFAULT_ALPHA 1.702

/* The model being built and the names it has handed out. */
typedef struct builder {
  actx_model *m;
  const ep_pattern_spec *spec;
  int32_t elem_type;
  size_t n_values, n_nodes, n_consts;
  char names[64][24];
  size_t n_names;
  actx_model_node *last;     /* the node added last */
  const char *leaked_output; /* an intermediate declared a graph output, after y */
} builder;

static const char *new_name(builder *b, const char *prefix, size_t index) {
  if (b->n_names == sizeof b->names / sizeof b->names[0]) return "overflow";
  char *name = b->names[b->n_names++];
  snprintf(name, sizeof b->names[0], "%s%zu", prefix, index);
  return name;
}

static float half_value(uint16_t h) {
  const int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  const float v = exp == 0 ? ldexpf((float)mant, -24) : ldexpf((float)(mant | 0x400), exp - 25);
  return (h >> 15) ? -v : v;
}

static float bf16_value(uint16_t b) {
  const uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* A scalar constant of the model's element type (a near miss scales the one it names). */
static const char *constant(builder *b, ep_pattern_const role, double value) {
  if (role != EP_CONST_NONE && role == b->spec->wrong) value *= b->spec->wrong_scale;
  const char *name = new_name(b, "c", b->n_consts++);
  const float f = (float)value;
  uint16_t h;
  switch (b->elem_type) {
    case ACTX_ELEM_FLOAT16: h = ep_float_to_half(f); break;
    case ACTX_ELEM_BFLOAT16: h = ep_float_to_bf16(f); break;
    default: actx_model_add_initializer(b->m, name, b->elem_type, 0, NULL, &f); return name;
  }
  actx_model_add_initializer(b->m, name, b->elem_type, 0, NULL, &h);
  return name;
}

/* A pattern node with one or two inputs; returns its output's name. */
static const char *node(builder *b, const char *op_type, const char *domain, const char *a,
                        const char *c) {
  const char *out = new_name(b, "v", b->n_values++);
  const char *inputs[2] = {a, c};
  const char *outputs[1] = {out};
  char name[16];
  snprintf(name, sizeof name, "p%zu", b->n_nodes++);
  b->last =
      actx_model_add_named_node(b->m, name, op_type, domain, c != NULL ? 2 : 1, inputs, 1, outputs);
  return out;
}

/* A commutative node, operands swapped when the spec says so. */
static const char *commutative(builder *b, const char *op_type, const char *a, const char *c) {
  return b->spec->swap ? node(b, op_type, "", c, a) : node(b, op_type, "", a, c);
}

/* 0.5·x·f in the spec's placement of the 0.5. */
static const char *times_half_x(builder *b, const char *x, const char *f) {
  if (b->spec->half == EP_HALF_DIV_TWO)
    return node(b, "Div", "", commutative(b, "Mul", x, f), constant(b, EP_CONST_HALF, 2.0));
  const char *half = constant(b, EP_CONST_HALF, 0.5);
  switch (b->spec->half) {
    case EP_HALF_LAST: return commutative(b, "Mul", commutative(b, "Mul", x, f), half);
    case EP_HALF_CDF: return commutative(b, "Mul", x, commutative(b, "Mul", f, half));
    default: return commutative(b, "Mul", commutative(b, "Mul", x, half), f);
  }
}

/* The core node's output, where a near miss leaks it. */
static void leak(builder *b, const char *value, ep_pattern_leak where) {
  if (b->spec->leak != where) return;
  const char *in[1] = {value}, *out[1] = {"extra_out"};
  if (where == EP_LEAK_OUTPUT) { /* declared after y, so that y stays output 0 */
    b->leaked_output = value;
    return;
  }
  actx_model_add_named_node(b->m, "extra", "Neg", "", 1, in, 1, out);
}

static const char *erf_gelu(builder *b, const char *x) {
  const ep_pattern_spec *s = b->spec;
  const char *scaled;
  switch (s->erf_scale) {
    case EP_ERF_MUL_RSQRT2:
      scaled = commutative(b, "Mul", x, constant(b, EP_CONST_SCALE, RSQRT_2));
      break;
    case EP_ERF_DIV_SQRT2_SHORT:
      scaled = node(b, "Div", "", x, constant(b, EP_CONST_SCALE, SQRT_2_SHORT));
      break;
    default: scaled = node(b, "Div", "", x, constant(b, EP_CONST_SCALE, SQRT_2)); break;
  }
  const char *e = node(b, "Erf", "", scaled, NULL);
  leak(b, e, EP_LEAK_CONSUMER);
  leak(b, e, EP_LEAK_OUTPUT);
  const char *f = commutative(b, "Add", e, constant(b, EP_CONST_ONE, 1.0));
  return times_half_x(b, x, f);
}

static const char *tanh_gelu(builder *b, const char *x) {
  const ep_pattern_spec *s = b->spec;
  const char *arg;
  if (s->tanh_form == EP_TANH_INNER) {
    const char *cx = commutative(b, "Mul", x, constant(b, EP_CONST_CUBIC, CUBIC));
    const char *inner =
        commutative(b, "Add", commutative(b, "Mul", cx, x), constant(b, EP_CONST_ONE, 1.0));
    const char *kx = commutative(b, "Mul", x, constant(b, EP_CONST_SCALE, SQRT_2_OVER_PI));
    arg = commutative(b, "Mul", inner, kx);
  } else {
    const char *x3;
    if (s->tanh_form == EP_TANH_POW)
      x3 = node(b, "Pow", "", x, constant(b, EP_CONST_NONE, 3.0));
    else
      x3 = commutative(b, "Mul", commutative(b, "Mul", x, x), x);
    const char *cubic = commutative(b, "Mul", x3, constant(b, EP_CONST_CUBIC, CUBIC));
    const char *sum = commutative(b, "Add", cubic, x);
    arg = commutative(b, "Mul", sum, constant(b, EP_CONST_SCALE, SQRT_2_OVER_PI));
  }
  const char *t = node(b, "Tanh", "", arg, NULL);
  leak(b, t, EP_LEAK_CONSUMER);
  leak(b, t, EP_LEAK_OUTPUT);
  const char *f = commutative(b, "Add", t, constant(b, EP_CONST_ONE, 1.0));
  return times_half_x(b, x, f);
}

static const char *silu(builder *b, const char *x, bool quick) {
  const char *arg = x;
  if (quick) {
    const double alpha = b->spec->alpha != 0 ? b->spec->alpha : DEFAULT_ALPHA;
    arg = commutative(b, "Mul", x, constant(b, EP_CONST_SCALE, alpha));
  }
  const char *sg = node(b, "Sigmoid", "", arg, NULL);
  leak(b, sg, EP_LEAK_CONSUMER);
  leak(b, sg, EP_LEAK_OUTPUT);
  return commutative(b, "Mul", sg, x);
}

static const char *gelu_node(builder *b, const char *x) {
  const char *op = b->spec->gelu_op != NULL ? b->spec->gelu_op : "Gelu";
  const bool ms = strncmp(op, "ms.", 3) == 0;
  const bool tanh = strstr(op, "(tanh)") != NULL;
  const char *op_type = ms ? op + 3 : tanh ? "Gelu" : op;
  const char *y = node(b, op_type, ms ? ACTX_MODEL_MS_DOMAIN : "", x, NULL);
  if (tanh) actx_model_node_attr_string(b->last, "approximate", "tanh");
  return y;
}

void ep_pattern_describe(const ep_pattern_spec *s, char *buf, size_t size) {
  static const char *const scales[] = {"Div √2", "Div 1.4142099", "Mul 1/√2"};
  static const char *const halves[] = {"(0.5x)·f", "(x·f)·0.5", "x·(0.5f)", "(x·f)/2"};
  static const char *const forms[] = {"Pow", "x·x·x", "inner"};
  static const char *const leaks[] = {"", ", core output also consumed elsewhere",
                                      ", core output also a graph output",
                                      ", bias sum also consumed elsewhere"};
  static const char *const consts[] = {"", "scale", "one", "half", "0.044715"};
  const char *type = actx_elem_name(s->elem_type ? s->elem_type : ACTX_ELEM_FLOAT);
  int n = 0;
  switch (s->family) {
    case EP_PATTERN_ERF_GELU:
      n = snprintf(buf, size, "erf GELU %s, %s, %s", type, scales[s->erf_scale], halves[s->half]);
      break;
    case EP_PATTERN_TANH_GELU:
      n = snprintf(buf, size, "tanh GELU %s, %s, %s", type, forms[s->tanh_form], halves[s->half]);
      break;
    case EP_PATTERN_SILU: n = snprintf(buf, size, "SiLU %s", type); break;
    case EP_PATTERN_QUICK_GELU:
      n = snprintf(buf, size, "QuickGelu %s, alpha %g", type,
                   s->alpha != 0 ? s->alpha : DEFAULT_ALPHA);
      break;
    case EP_PATTERN_GELU_NODE:
      n = snprintf(buf, size, "%s %s", s->gelu_op ? s->gelu_op : "Gelu", type);
      break;
  }
  if (n < 0 || (size_t)n >= size) return;
  snprintf(buf + n, size - (size_t)n, "%s%s%s%s%s%s%s%s%s, opset %lld",
           s->x_from_mul ? ", x from a Mul" : "", s->swap ? ", swapped" : "",
           s->bias ? (s->bias_rank == 2 ? ", 2-D bias" : ", bias") : "",
           s->bias && s->bias_first ? " first" : "", s->bias && s->bias_input ? " (input)" : "",
           leaks[s->leak], s->wrong ? ", wrong " : "", consts[s->wrong],
           s->y_through_neg ? ", then Neg" : "", (long long)(s->opset ? s->opset : DEFAULT_OPSET));
}

int ep_pattern_build(const ep_pattern_spec *s, uint64_t seed, ep_pattern_model *out) {
  memset(out, 0, sizeof *out);
  builder b = {.spec = s, .elem_type = s->elem_type ? s->elem_type : ACTX_ELEM_FLOAT};
  const bool ms =
      s->family == EP_PATTERN_GELU_NODE && s->gelu_op != NULL && strncmp(s->gelu_op, "ms.", 3) == 0;
  b.m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, s->opset ? s->opset : DEFAULT_OPSET,
                          ms ? 1 : 0);
  if (b.m == NULL) return -1;
  char dim_names[4][8];
  const char *params[4];
  for (size_t i = 0; i < s->rank && i < 4; i++) {
    snprintf(dim_names[i], sizeof dim_names[i], "d%zu", i);
    params[i] = dim_names[i];
  }
  actx_model_add_input(b.m, "x", b.elem_type, s->rank, s->dims, params);

  const char *x = "x";
  size_t n_extra = 0;
  if (s->x_from_mul) {
    const char *in[2] = {"x", constant(&b, EP_CONST_NONE, 2.0)}, *o[1] = {"x2"};
    actx_model_add_named_node(b.m, "pre", "Mul", "", 2, in, 1, o);
    x = "x2";
    n_extra++;
  }
  if (s->bias) {
    const int64_t h = s->rank > 0 ? s->dims[s->rank - 1] : 1;
    const size_t bias_rank = s->bias_rank ? s->bias_rank : 1;
    const int64_t bias_dims[2] = {bias_rank == 2 ? 1 : h, h};
    const int64_t *dims = bias_rank == 2 ? bias_dims : &bias_dims[0];
    const char *bias_params[2] = {"b0", params[s->rank - 1]};
    out->bias_len = h > 0 ? (size_t)h : 0;
    if (s->bias_input) {
      actx_model_add_input(b.m, "bias", b.elem_type, bias_rank, dims,
                           bias_rank == 2 ? bias_params : &bias_params[1]);
    } else {
      const size_t es = actx_elem_size(b.elem_type);
      out->bias = malloc(out->bias_len * es + 1);
      if (out->bias == NULL) {
        actx_model_free(b.m);
        return -1;
      }
      /* moderate values: a bias shifts the input, it does not replace it */
      uint64_t state = seed;
      for (size_t i = 0; i < out->bias_len; i++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        const float v = (float)((double)(state >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
        if (b.elem_type == ACTX_ELEM_FLOAT)
          ((float *)out->bias)[i] = v;
        else if (b.elem_type == ACTX_ELEM_FLOAT16)
          ((uint16_t *)out->bias)[i] = ep_float_to_half(v);
        else
          ((uint16_t *)out->bias)[i] = ep_float_to_bf16(v);
      }
      actx_model_add_initializer(b.m, "bias", b.elem_type, bias_rank, dims, out->bias);
    }
    x = s->bias_first ? node(&b, "Add", "", "bias", x) : node(&b, "Add", "", x, "bias");
    leak(&b, x, EP_LEAK_ROOT);
  }

  const char *y = NULL;
  switch (s->family) {
    case EP_PATTERN_ERF_GELU:
      y = erf_gelu(&b, x);
      out->op = ACTX_OP_GELU;
      break;
    case EP_PATTERN_TANH_GELU:
      y = tanh_gelu(&b, x);
      out->op = ACTX_OP_GELU_TANH;
      break;
    case EP_PATTERN_SILU:
      y = silu(&b, x, false);
      out->op = ACTX_OP_QUICK_GELU;
      out->alpha = 1.0f;
      break;
    case EP_PATTERN_QUICK_GELU: {
      y = silu(&b, x, true);
      out->op = ACTX_OP_QUICK_GELU;
      /* alpha as the model stores it */
      const float alpha = s->alpha != 0 ? s->alpha : (float)DEFAULT_ALPHA;
      out->alpha = b.elem_type == ACTX_ELEM_FLOAT16    ? half_value(ep_float_to_half(alpha))
                   : b.elem_type == ACTX_ELEM_BFLOAT16 ? bf16_value(ep_float_to_bf16(alpha))
                                                       : alpha;
      break;
    }
    case EP_PATTERN_GELU_NODE:
      y = gelu_node(&b, x);
      out->op = s->gelu_op && (strstr(s->gelu_op, "tanh") || strstr(s->gelu_op, "FastGelu"))
                    ? ACTX_OP_GELU_TANH
                    : ACTX_OP_GELU;
      break;
  }
  out->n_pattern_nodes = b.n_nodes;
  n_extra += (s->y_through_neg ? 1 : 0) + (s->leak == EP_LEAK_CONSUMER || s->leak == EP_LEAK_ROOT);
  out->n_nodes = b.n_nodes + n_extra;
  if (s->y_through_neg) {
    const char *in[1] = {y}, *o[1] = {"y"};
    actx_model_add_named_node(b.m, "neg", "Neg", "", 1, in, 1, o);
    y = "y";
  }
  actx_model_add_output(b.m, y, b.elem_type, s->rank, s->dims, params);
  if (s->leak == EP_LEAK_CONSUMER || s->leak == EP_LEAK_ROOT)
    actx_model_add_output(b.m, "extra_out", b.elem_type, s->rank, s->dims, params);
  if (b.leaked_output != NULL)
    actx_model_add_output(b.m, b.leaked_output, b.elem_type, s->rank, s->dims, params);
  const int rc = actx_model_serialize(b.m, &out->bytes, &out->size);
  if (rc != 0) {
    char what[160];
    ep_pattern_describe(s, what, sizeof what);
    printf("pattern model %s: %s\n", what, actx_model_error(b.m));
    free(out->bias);
    out->bias = NULL;
  }
  actx_model_free(b.m);
  return rc;
}

void ep_pattern_model_free(ep_pattern_model *m) {
  free(m->bytes);
  free(m->bias);
  memset(m, 0, sizeof *m);
}
