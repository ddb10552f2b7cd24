/* libFuzzer harness for the actx EP inside ONNX Runtime: arbitrary bytes become a small model
 * (one node, a chain of two (the second reading the first's output once, or as x and bias), one
 * of the activation patterns ORT fuses, a linked chain of them and of single nodes, each on the
 * one before (build_linked), or a nested model: Ifs and Loops, two deep at most, whose
 * branches and bodies hold chains of the activations actx serves,
 * single nodes and the subgraphs exporters write (tools/ort/model_parts.h), under the names
 * exporters reuse in every such graph: v_in -> v_out, the same intermediates and initializers),
 * mutated in every way a model can be wrong or unusual: element types (also mismatched between
 * input, output and bias), ranks, fixed / symbolic / zero dimensions, attributes (missing,
 * unknown, wrongly typed, odd values), missing, omitted or extra inputs, extra outputs,
 * constants, opsets, IR versions, domains, provider options and thread counts; then run-time
 * shapes that may disagree with the model. The same model goes to ORT alone and to ORT with
 * actx, and:
 *   - provider options actx does not know must make session creation fail;
 *   - a model ORT alone accepts, actx must accept too (it may only decline nodes);
 *   - a Run ORT alone completes, actx must complete with the same outputs: the same element
 *     types and shapes, and float32 (or any type actx does not serve) bit for bit, under every
 *     policy: libactx follows the rule ORT applies on the host (actx_get_ort_rule(): on an
 *     AVX-512 host ORT's SiLU and Gelu kernels pass a NaN's payload through unquieted), so the
 *     subgraphs `all` fuses beyond `auto` owe ORT's bits too. float16 and bfloat16 within
 *     conformance's tolerance (rtol 1e-3 / 8e-3, atol 1e-5, NaN where ORT has NaN, loosened as
 *     outputs_agree says): actx computes them in float32 and rounds once, ORT's own kernels and
 *     float32 islands for them do not (docs/ep-policy.md). With optimisations off, a model with
 *     one fusable subgraph must give the bits of ORT alone either unoptimised or optimised (see
 *     LLVMFuzzerTestOneInput); a nested model with more is always optimised (see build);
 *   - a Run ORT alone refuses, actx must refuse too;
 *   - whatever ORT alone does, never a crash, a hang (libFuzzer's -timeout) or a leak
 *     (LeakSanitizer after every input; ORT's own leaks are suppressed, see
 *     tests/ort/data/lsan-onnxruntime.supp).
 * Where ORT alone cannot create the session at all (no kernel for a float16 op, say) but actx
 * can, the actx session only has to run without crashing.
 *
 * The EP library is the one built with this tree; LLVMFuzzerInitialize finds it next to the
 * fuzzer (ACTX_FUZZ_EP_LIBRARY overrides). ACTX_FUZZ_EP_STATS=1 prints at exit what the inputs
 * came to; ACTX_FUZZ_EP_VERBOSE=1 prints each input's model and outcome (to check a seed). */
#define _GNU_SOURCE /* readlink */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/half.h"
#include "host.h"
#include "model.h"
#include "model_parts.h"

#define FAIL(...)                              \
  do {                                         \
    fprintf(stderr, "fuzz_ep: " __VA_ARGS__);  \
    fputc('\n', stderr);                       \
    abort();                                   \
  } while (0)

/* Most elements of one run-time tensor: big enough to cross the EP's split threshold now and
 * then (65536), small enough to keep executions fast. */
#define MAX_ELEMENTS 70000
#define MAX_RANK 4
#define MAX_INPUTS 4
#define MAX_OUTPUTS 2

static char ep_library[PATH_MAX];
static bool want_stats;   /* ACTX_FUZZ_EP_STATS */
static bool want_verbose; /* ACTX_FUZZ_EP_VERBOSE: each input's model and outcome */

/* ---- reading the bytes ---- */

typedef struct reader {
  const uint8_t *p;
  size_t n;
} reader;

static unsigned byte(reader *r) {
  if (r->n == 0) return 0;
  r->n--;
  return *r->p++;
}
static unsigned pick(reader *r, unsigned k) { return byte(r) % k; }
static float read_float(reader *r) {
  uint32_t u = byte(r) | byte(r) << 8 | byte(r) << 16 | (uint32_t)byte(r) << 24;
  return actx_f32_from_bits(u);
}

/* ---- what the bytes choose ---- */

typedef struct op_def {
  const char *op_type, *domain;
  int bias; /* 0: none, 1: optional second input, 2: required */
} op_def;

#define MS ACTX_MODEL_MS_DOMAIN
static const op_def ops[] = {
    {"Erf", "", 0},      {"Gelu", "", 0},         {"Tanh", "", 0},          {"Sigmoid", "", 0},
    {"Gelu", MS, 0},     {"BiasGelu", MS, 2},     {"FastGelu", MS, 1},      {"QuickGelu", MS, 0},
    {"Relu", "", 0},     {"Softplus", "", 0},     {"Erf", MS, 0} /* no such op */,
    {"Gelu", "ai.onnx", 0},
};
#define N_OPS (sizeof ops / sizeof ops[0])

static const char *const domains[] = {"", "ai.onnx", MS, "org.bogus"};
static const int64_t onnx_opsets[] = {20, 13, 11, 6, 1, 9, 17, 21, 22, 24, 99};
static const int64_t ir_versions[] = {9, 7, 8, 10, 3, 11, 99};
static const int32_t elem_types[] = {
    ACTX_ELEM_FLOAT,  ACTX_ELEM_FLOAT16, ACTX_ELEM_BFLOAT16, ACTX_ELEM_FLOAT, ACTX_ELEM_DOUBLE,
    ACTX_ELEM_INT32,  ACTX_ELEM_INT64,   ACTX_ELEM_UINT8,    ACTX_ELEM_BOOL,  ACTX_ELEM_FLOAT16};
static const int64_t dim_values[] = {1, 2, 3, 7, 8, 33, 0, 64, 1000, 40000};
static const char *const dim_names[] = {"a", "b", "c"};
static const char *const policies[] = {"all", "all", "auto", "none", "", "bogus", "ALL"};
static const char *const approximates[] = {"none", "tanh", "Tanh", "", "bogus"};
/* near the constants ORT's fusions look for, and some that are not */
static const float constants[] = {1.4142135f, 1.4142099f, 0.70710678f, 1.0f,        0.5f,
                                  0.044715f,  0.7978846f, 1.702f,      -1.0f,       0.0f,
                                  1.4143f,    2.0f,       NAN,         INFINITY,    1e-30f};

typedef struct tensor_spec {
  char name[16];
  int32_t elem_type;
  size_t rank;
  int64_t dims[MAX_RANK]; /* -1: symbolic */
  const char *params[MAX_RANK];
} tensor_spec;

typedef struct run_input {
  int32_t elem_type;
  size_t rank;
  int64_t dims[MAX_RANK];
} run_input;

typedef struct fuzz_model {
  bool fusable; /* a pattern ORT's level-2 fusions rewrite */
  uint8_t *bytes;
  size_t size;
  size_t n_inputs;
  run_input inputs[MAX_INPUTS];
  /* session options */
  const char *policy;
  bool unknown_option;
  int threads;
  actx_ort_optimization optimization;
  bool nested;
  unsigned half_steps; /* activations one element goes through, at most (outputs_agree) */
  char label[1024];
} fuzz_model;

static void random_shape(reader *r, tensor_spec *t) {
  t->rank = pick(r, MAX_RANK + 1);
  for (size_t i = 0; i < t->rank; i++) {
    const unsigned b = byte(r);
    if (b % 4 == 0) {
      t->dims[i] = -1;
      t->params[i] = dim_names[(b / 4) % 3];
    } else {
      t->dims[i] = dim_values[(b / 4) % (sizeof dim_values / sizeof dim_values[0])];
      t->params[i] = NULL;
    }
  }
}

static size_t elements_of(const tensor_spec *t) {
  size_t n = 1;
  for (size_t i = 0; i < t->rank; i++) n *= t->dims[i] < 0 ? 1 : (size_t)t->dims[i];
  return n;
}

/* A scalar-or-small constant of elem_type holding v (converted). */
static int add_constant(actx_model *m, const char *name, int32_t elem_type, float v, size_t count) {
  uint8_t data[8 * 4];
  const size_t es = actx_elem_size(elem_type) ? actx_elem_size(elem_type) : 4;
  if (count > 4) count = 4;
  for (size_t i = 0; i < count; i++) {
    uint8_t *p = data + i * es;
    switch (elem_type) {
      case ACTX_ELEM_FLOAT16: { uint16_t h = actx_f32_to_f16(v); memcpy(p, &h, 2); break; }
      case ACTX_ELEM_BFLOAT16: { uint16_t h = actx_f32_to_bf16(v); memcpy(p, &h, 2); break; }
      case ACTX_ELEM_DOUBLE: { double d = v; memcpy(p, &d, 8); break; }
      case ACTX_ELEM_FLOAT: memcpy(p, &v, 4); break;
      default: memset(p, isfinite(v) ? (int)fmaxf(fminf(v, 127.0f), -128.0f) : 0, es); break;
    }
  }
  const int64_t dims[1] = {(int64_t)count};
  return actx_model_add_initializer(m, name, elem_type == 0 ? ACTX_ELEM_FLOAT : elem_type,
                                    count == 1 ? 0 : 1, dims, data);
}

static float pick_constant(reader *r, float want) {
  const unsigned b = byte(r);
  if (b < 160) return want; /* mostly the value the pattern needs */
  return constants[b % (sizeof constants / sizeof constants[0])];
}

/* Attributes of one activation node, as the bytes say. */
static void add_attributes(reader *r, actx_model_node *node) {
  const unsigned b = byte(r);
  if (b & 1) actx_model_node_attr_string(node, "approximate", approximates[(b >> 1) % 5]);
  if (b & 8) actx_model_node_attr_int(node, "approximate", 1); /* wrong type (maybe twice) */
  if (b & 16) actx_model_node_attr_float(node, "alpha", (b & 32) ? read_float(r) : 1.702f);
  if (b & 64) actx_model_node_attr_string(node, "alpha", "1.0"); /* wrong type */
  if (b & 128) actx_model_node_attr_int(node, "unknown_attribute", 7);
}

typedef enum pattern {
  P_SINGLE = 0,
  P_CHAIN,
  P_ERF_GELU,
  P_TANH_GELU,
  P_SILU,
  P_QUICK_GELU,
  P_ADD_GELU,
  P_NESTED,
  P_LINKED,
  P_COUNT
} pattern;

static const char *const pattern_names[P_COUNT] = {
    "single",     "chain",    "erf-gelu", "tanh-gelu", "silu",
    "quick-gelu", "add+gelu", "nested",   "linked"};

/* ---- nested graphs: If branches and Loop bodies holding activations ---- */

/* Control flow inside control flow at most: the depth exporters write, and each level multiplies
 * a model's graphs. */
#define NEST_DEPTH 2
#define NEST_LINKS 3
/* Bounds on one model's graphs (bodies and branches) and activations: executions stay fast. */
#define NEST_MAX_GRAPHS 8
#define NEST_MAX_ACTIVATIONS 12

/* Loop trip counts, as initializers trips<k> of the main graph (bodies read them from there) */
static const int64_t trip_counts[] = {1, 2, 0, 3};
#define N_TRIPS (sizeof trip_counts / sizeof trip_counts[0])

typedef struct nest {
  reader *r;
  const tensor_spec *x; /* every graph's carried value has x's type and shape */
  size_t graphs, activations, subgraphs;
  char *label; /* fuzz_model's, appended to */
  size_t label_size;
} nest;

static void nest_say(nest *n, const char *text) {
  const size_t used = strlen(n->label);
  snprintf(n->label + used, n->label_size - used, "%s", text);
}

static unsigned nest_chain(nest *n, actx_model *g, const char *in, const char *out, int depth,
                           bool i_in_scope);

/* One of model_parts.h's activations, from `in` to `out`; its names start with prefix, the same
 * in every graph at one depth, as exporters write them. */
static void nest_activation_of(nest *n, actx_model *g, actx_act_kind kind, const char *in,
                               const char *out, const char *prefix) {
  const bool quick = kind == ACTX_ACT_QUICK_GELU || kind == ACTX_ACT_QUICK_GELU_OTHER_ALPHA ||
                     kind == ACTX_ACT_MS_QUICK_GELU || kind == ACTX_ACT_MS_QUICK_GELU_OTHER_ALPHA;
  const unsigned b = quick ? byte(n->r) : 0;
  /* 0 is the kind's own α; now and then one of the constants near and far from it */
  const float alpha = b < 192 ? 0 : constants[b % (sizeof constants / sizeof constants[0])];
  float *bias = NULL;
  size_t bias_len = 0;
  if (actx_act_has_bias(kind)) {
    /* the innermost dimension when it is fixed; a symbolic one gets a bias that broadcasts */
    const tensor_spec *x = n->x;
    bias_len = x->rank && x->dims[x->rank - 1] >= 0 ? (size_t)x->dims[x->rank - 1] : 1;
    /* Now and then one that does not fit, where it makes the node fail: one that broadcast x
     * to a bigger shape (x a scalar, its innermost dimension 1 or symbolic, which a run may
     * make 1) would make every graph's
     * declared shape a lie that ORT's If pre-allocates its output from, so that which of ORT's
     * kernels fails on that lie depended on where the nodes were placed. */
    const bool misfit = byte(n->r) >= 248;
    if (misfit && x->rank > 0 && x->dims[x->rank - 1] > 1) bias_len = dim_values[pick(n->r, 6)];
    bias = malloc((bias_len + 1) * sizeof *bias);
    const unsigned seed = byte(n->r);
    for (size_t i = 0; i < bias_len; i++) /* ep_fill-like values, -4 .. 4 */
      bias[i] = (float)((int)((seed + 37 * i) & 0xff) - 128) / 32.0f;
    if (bias_len && seed >= 240) /* now and then a NaN, an infinity, ... among them */
      bias[seed % bias_len] = constants[seed % (sizeof constants / sizeof constants[0])];
  }
  actx_part_add_activation(g, kind, n->x->elem_type, in, out, prefix, alpha, bias, bias_len);
  free(bias);
  n->activations++;
  n->subgraphs += actx_act_is_subgraph(kind);
  nest_say(n, actx_act_name(kind));
  if (alpha != 0) {
    char text[32];
    snprintf(text, sizeof text, " α %g", (double)alpha);
    nest_say(n, text);
  }
}

static void nest_activation(nest *n, actx_model *g, const char *in, const char *out,
                            const char *prefix) {
  nest_activation_of(n, g, (actx_act_kind)pick(n->r, ACTX_ACT_COUNT), in, out, prefix);
}

/* An If or a Loop from `in` to `out` whose graphs (at depth) hold chains of their own. Returns
 * the most activations one element goes through in it. */
static unsigned nest_control(nest *n, actx_model *g, const char *in, const char *out,
                             const char *prefix, int depth, bool i_in_scope) {
  const tensor_spec *x = n->x;
  const unsigned b = byte(n->r);
  if (b & 1) {
    /* on the graph input c, or (where a Loop's iteration number is in scope) on i < 1, which
     * takes both branches in one run of a Loop of two or three trips */
    char cond[32] = "c";
    if (i_in_scope && (b & 2)) {
      char one[32];
      snprintf(cond, sizeof cond, "%sfirst", prefix);
      snprintf(one, sizeof one, "%sone_i", prefix);
      const int64_t v = 1;
      actx_model_add_initializer(g, one, ACTX_ELEM_INT64, 0, NULL, &v);
      actx_model_add_node(g, "Less", "", 2, (const char *[]){"i", one}, 1,
                          (const char *[]){cond});
    }
    actx_model_node *node =
        actx_model_add_node(g, "If", "", 1, (const char *[]){cond}, 1, (const char *[]){out});
    nest_say(n, "If(");
    nest_say(n, cond[0] == 'c' ? "c" : "i<1");
    nest_say(n, ")[");
    unsigned steps = 0;
    for (int k = 0; k < 2; k++) {
      actx_model *branch = actx_part_if_branch(x->elem_type, x->rank, x->dims, x->params);
      n->graphs++;
      const unsigned branch_steps = nest_chain(n, branch, in, ACTX_PART_OUT, depth, i_in_scope);
      if (branch_steps > steps) steps = branch_steps;
      actx_model_node_attr_graph(node, k ? "else_branch" : "then_branch", branch);
      nest_say(n, k ? "]" : " | ");
    }
    return steps;
  } else {
    const size_t trips = (b >> 1) % N_TRIPS;
    char trip_name[16];
    snprintf(trip_name, sizeof trip_name, "trips%zu", trips);
    actx_model_node *node = actx_model_add_node(
        g, "Loop", "", 3, (const char *[]){trip_name, "keep_going", in}, 1, (const char *[]){out});
    /* c_out once per depth: a body's own would come before the Loop inside it (model_parts.h) */
    char cond_out[16];
    snprintf(cond_out, sizeof cond_out, depth == 1 ? "c_out" : "c_out_%d", depth);
    actx_model *body =
        actx_part_loop_body(cond_out, x->elem_type, x->rank, x->dims, x->params);
    n->graphs++;
    char text[32];
    snprintf(text, sizeof text, "Loop x%lld[", (long long)trip_counts[trips]);
    nest_say(n, text);
    /* mostly on the carried value; now and then on the outer value itself, which the body
     * reads from the enclosing scope (unless its own v_in shadows it) */
    const unsigned steps =
        nest_chain(n, body, (b & 0x30) == 0x30 ? in : ACTX_PART_IN, ACTX_PART_OUT, depth, true);
    actx_model_node_attr_graph(node, "body", body);
    nest_say(n, "]");
    return steps * (unsigned)trip_counts[trips];
  }
}

/* in -> h<d>_0 -> h<d>_1 -> ... -> out in graph g at depth d (0: the main graph): activations
 * and, below NEST_DEPTH, Ifs and Loops. Every graph at one depth uses the same names (h<d>_<i>,
 * k<d>_<i>_...); graphs nested in one another cannot (model_parts.h). */
static unsigned nest_chain(nest *n, actx_model *g, const char *in, const char *out, int depth,
                           bool i_in_scope) {
  const size_t links = 1 + pick(n->r, NEST_LINKS);
  unsigned steps = 0;
  char prev[16], next[16], prefix[16];
  snprintf(prev, sizeof prev, "%s", in);
  bool control_seen = false;
  for (size_t i = 0; i < links; i++) {
    snprintf(prefix, sizeof prefix, "k%d_%zu_", depth, i);
    if (i + 1 == links) snprintf(next, sizeof next, "%s", out);
    else snprintf(next, sizeof next, "h%d_%zu", depth, i);
    if (i) nest_say(n, ", ");
    const unsigned b = byte(n->r);
    /* the main graph always holds one If or Loop at least; their graphs, now and then */
    const bool want = depth == 0 ? b % 4 != 0 || (i + 1 == links && !control_seen) : b % 4 == 0;
    if (want && depth < NEST_DEPTH && n->graphs + 2 <= NEST_MAX_GRAPHS) {
      steps += nest_control(n, g, prev, next, prefix, depth + 1, i_in_scope);
      control_seen = true;
    } else if (n->activations < NEST_MAX_ACTIVATIONS) {
      nest_activation(n, g, prev, next, prefix);
      steps++;
    } else {
      actx_model_add_node(g, "Identity", "", 1, (const char *[]){prev}, 1, (const char *[]){next});
      nest_say(n, "Identity");
    }
    snprintf(prev, sizeof prev, "%s", next);
  }
  return steps;
}

/* The main graph of a nested model: x (and c, the Ifs' condition) -> y. Returns how many of
 * its activations are subgraphs ORT fuses. */
static size_t build_nested(reader *r, actx_model *m, const tensor_spec *x, fuzz_model *fm) {
  for (size_t k = 0; k < N_TRIPS; k++) {
    char name[16];
    snprintf(name, sizeof name, "trips%zu", k);
    actx_model_add_initializer(m, name, ACTX_ELEM_INT64, 0, NULL, &trip_counts[k]);
  }
  const uint8_t yes = 1;
  actx_model_add_initializer(m, "keep_going", ACTX_ELEM_BOOL, 0, NULL, &yes);
  nest n = {.r = r, .x = x, .label = fm->label, .label_size = sizeof fm->label};
  nest_say(&n, ": ");
  fm->half_steps = nest_chain(&n, m, "x", "y", 0, false);
  return n.subgraphs;
}

/* The links of a linked model: the exported patterns and the single nodes around them. */
static const actx_act_kind link_kinds[] = {
    ACTX_ACT_ERF_GELU, ACTX_ACT_TANH_GELU,     ACTX_ACT_SILU,  ACTX_ACT_QUICK_GELU,
    ACTX_ACT_ERF_GELU, ACTX_ACT_BIAS_ERF_GELU, ACTX_ACT_TANH,  ACTX_ACT_ERF,
    ACTX_ACT_SIGMOID,  ACTX_ACT_MS_GELU,       ACTX_ACT_GELU,  ACTX_ACT_MS_FAST_GELU};
#define N_LINK_KINDS (sizeof link_kinds / sizeof link_kinds[0])
#define MAX_LINKS 4

/* x -> h0 -> h1 -> ... -> y in the main graph, each link on the one before: exported patterns in
 * a row (whether ORT fuses one depends on what became of the node before it: ORT's own fusion
 * of the previous pattern, or our claim), single nodes, a Neg (no node of actx's), and
 * BiasGelu / FastGelu(v, v), one value as both x and bias of a node, after a claim or not.
 * Returns how many links are subgraphs ORT fuses. */
static size_t build_linked(reader *r, actx_model *m, const tensor_spec *x, fuzz_model *fm) {
  nest n = {.r = r, .x = x, .label = fm->label, .label_size = sizeof fm->label};
  nest_say(&n, ": ");
  const size_t links = 2 + pick(r, MAX_LINKS - 1);
  char prev[16] = "x", next[16], prefix[16];
  for (size_t i = 0; i < links; i++) {
    snprintf(prefix, sizeof prefix, "k%zu_", i);
    if (i + 1 == links) snprintf(next, sizeof next, "y");
    else snprintf(next, sizeof next, "h%zu", i);
    if (i) nest_say(&n, ", ");
    const unsigned b = pick(r, N_LINK_KINDS + 3);
    if (b < N_LINK_KINDS) {
      nest_activation_of(&n, m, link_kinds[b], prev, next, prefix);
    } else if (b < N_LINK_KINDS + 2) {
      const char *op = b == N_LINK_KINDS ? "BiasGelu" : "FastGelu";
      actx_model_add_node(m, op, MS, 2, (const char *[]){prev, prev}, 1, (const char *[]){next});
      nest_say(&n, op);
      nest_say(&n, "(v, v)");
    } else {
      actx_model_add_node(m, "Neg", "", 1, (const char *[]){prev}, 1, (const char *[]){next});
      nest_say(&n, "Neg");
    }
    snprintf(prev, sizeof prev, "%s", next);
  }
  fm->half_steps = (unsigned)links;
  return n.subgraphs;
}

/* Builds the model the bytes describe; 0 on success. */
static int build(reader *r, fuzz_model *fm) {
  memset(fm, 0, sizeof *fm);
  const pattern pat = (pattern)pick(r, P_COUNT);
  const int64_t ir = byte(r) < 240 ? ACTX_MODEL_DEFAULT_IR_VERSION : ir_versions[pick(r, 7)];
  /* a linked chain is mostly opset 17: exported subgraphs are what models below opset 20 hold
   * (from 20 on, ORT fuses the erf GELU before the EP looks) */
  const int64_t opset =
      byte(r) < 128 ? (pat == P_LINKED ? 17 : 20) : onnx_opsets[pick(r, 11)];
  const unsigned ms_byte = byte(r);
  const int64_t ms_opset = ms_byte < 220 ? 1 : (ms_byte & 1 ? 0 : 2);
  actx_model *m = actx_model_create(ir, opset, ms_opset);
  if (m == NULL) return -1;

  tensor_spec x = {.name = "x"};
  x.elem_type = byte(r) < 160 ? ACTX_ELEM_FLOAT : elem_types[pick(r, 10)];
  random_shape(r, &x);
  tensor_spec y = x;
  snprintf(y.name, sizeof y.name, "y");
  if (byte(r) >= 240) y.elem_type = elem_types[pick(r, 10)];
  if (byte(r) >= 240) random_shape(r, &y);

  tensor_spec graph_inputs[MAX_INPUTS];
  size_t n_graph_inputs = 0;
  graph_inputs[n_graph_inputs++] = x;
  const char *outputs[MAX_OUTPUTS] = {"y", "y2"};
  size_t n_outputs = 1;

  fm->fusable = pat >= P_ERF_GELU && pat != P_NESTED && pat != P_LINKED;
  fm->nested = pat == P_NESTED;
  size_t nested_subgraphs = 0;
  const op_def *op = &ops[pick(r, N_OPS)];
  const char *domain = byte(r) >= 232 ? domains[pick(r, 4)] : op->domain;
  char node[96] = "";
  if (pat <= P_CHAIN)
    snprintf(node, sizeof node, " %s%s%s", domain, domain[0] ? "." : "", op->op_type);
  snprintf(fm->label, sizeof fm->label, "%s%s %s rank %zu ir %lld opset %lld/%lld",
           pattern_names[pat], node, actx_elem_name(x.elem_type), x.rank, (long long)ir,
           (long long)opset, (long long)ms_opset);

  switch (pat) {
    case P_SINGLE:
    case P_CHAIN: {
      const char *in[MAX_INPUTS] = {"x", NULL, NULL, NULL};
      size_t n_in = 1;
      const unsigned bias_byte = byte(r);
      const bool bias = op->bias == 2 ? bias_byte < 240 : op->bias == 1 ? bias_byte < 128 : bias_byte >= 250;
      if (bias) {
        tensor_spec b = {.name = "bias", .elem_type = x.elem_type, .rank = 1};
        b.dims[0] = x.rank ? x.dims[x.rank - 1] : 1;
        b.params[0] = x.rank ? x.params[x.rank - 1] : NULL;
        const unsigned how = byte(r);
        if (how >= 200) b.elem_type = elem_types[pick(r, 10)];
        if ((how & 7) == 7) random_shape(r, &b);
        if (how & 8 && elements_of(&b) <= 64 && b.rank > 0) {
          /* a constant bias: ep_fill-like values from the bytes */
          float vals[64];
          const size_t n = elements_of(&b);
          for (size_t i = 0; i < n; i++) vals[i] = (float)((int)byte(r) - 128) / 32.0f;
          uint8_t data[64 * 8];
          const size_t es = actx_elem_size(b.elem_type) ? actx_elem_size(b.elem_type) : 1;
          for (size_t i = 0; i < n; i++) {
            if (b.elem_type == ACTX_ELEM_FLOAT) memcpy(data + 4 * i, &vals[i], 4);
            else if (b.elem_type == ACTX_ELEM_FLOAT16) { uint16_t h = actx_f32_to_f16(vals[i]); memcpy(data + 2 * i, &h, 2); }
            else if (b.elem_type == ACTX_ELEM_BFLOAT16) { uint16_t h = actx_f32_to_bf16(vals[i]); memcpy(data + 2 * i, &h, 2); }
            else memset(data + es * i, (int)i, es);
          }
          int64_t fixed[MAX_RANK];
          for (size_t i = 0; i < b.rank; i++) fixed[i] = b.dims[i] < 0 ? 1 : b.dims[i];
          actx_model_add_initializer(m, "bias", b.elem_type, b.rank, fixed, data);
        } else {
          graph_inputs[n_graph_inputs++] = b;
        }
        in[n_in++] = "bias";
      }
      const unsigned io = byte(r);
      if (io >= 248) in[0] = ""; /* the required input omitted */
      if ((io & 0x1f) == 0x1f && n_in < MAX_INPUTS) {
        tensor_spec extra = x;
        snprintf(extra.name, sizeof extra.name, "extra");
        graph_inputs[n_graph_inputs++] = extra;
        in[n_in++] = "extra";
      }
      if ((io & 0x3f) == 0x3e) n_outputs = 2;
      const char *mid[1] = {pat == P_CHAIN ? "t" : "y"};
      actx_model_node *node =
          actx_model_add_node(m, op->op_type, domain, n_in, in, pat == P_CHAIN ? 1 : n_outputs,
                              pat == P_CHAIN ? mid : outputs);
      add_attributes(r, node);
      if (pat == P_CHAIN) {
        /* the second node reads t once, or, where it takes a bias, now and then as both */
        const op_def *op2 = &ops[pick(r, N_OPS)];
        const char *in2[2] = {"t", "t"};
        const size_t n_in2 = op2->bias && byte(r) < 128 ? 2 : 1;
        add_attributes(r, actx_model_add_node(m, op2->op_type, op2->domain, n_in2, in2,
                                              n_outputs, outputs));
      }
      break;
    }
    case P_ERF_GELU: { /* Div(x, √2) -> Erf -> Add(1) -> Mul(x) -> Mul(0.5) */
      add_constant(m, "c_sqrt2", x.elem_type, pick_constant(r, 1.4142135f), 1 + pick(r, 2));
      add_constant(m, "c_one", x.elem_type, pick_constant(r, 1.0f), 1);
      add_constant(m, "c_half", x.elem_type, pick_constant(r, 0.5f), 1);
      const char *a[2] = {"x", "c_sqrt2"}, *b[1] = {"t1"}, *c[2] = {"t2", "c_one"},
                 *d[2] = {"x", "t3"}, *e[2] = {"t4", "c_half"};
      const char *o1[1] = {"t1"}, *o2[1] = {"t2"}, *o3[1] = {"t3"}, *o4[1] = {"t4"};
      actx_model_add_node(m, byte(r) < 200 ? "Div" : "Mul", "", 2, a, 1, o1);
      actx_model_add_node(m, "Erf", "", 1, b, 1, o2);
      actx_model_add_node(m, "Add", "", 2, c, 1, o3);
      actx_model_add_node(m, "Mul", "", 2, d, 1, o4);
      actx_model_add_node(m, "Mul", "", 2, e, 1, outputs);
      break;
    }
    case P_TANH_GELU: { /* 0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³))) */
      add_constant(m, "c_k", x.elem_type, pick_constant(r, 0.044715f), 1);
      add_constant(m, "c_s", x.elem_type, pick_constant(r, 0.7978846f), 1);
      add_constant(m, "c_one", x.elem_type, pick_constant(r, 1.0f), 1);
      add_constant(m, "c_half", x.elem_type, pick_constant(r, 0.5f), 1);
      const char *n1[2] = {"x", "x"}, *n2[2] = {"x2", "x"}, *n3[2] = {"x3", "c_k"},
                 *n4[2] = {"x", "kx3"}, *n5[2] = {"inner", "c_s"}, *n6[1] = {"u"},
                 *n7[2] = {"th", "c_one"}, *n8[2] = {"x", "th1"}, *n9[2] = {"xth", "c_half"};
      const char *o1[1] = {"x2"}, *o2[1] = {"x3"}, *o3[1] = {"kx3"}, *o4[1] = {"inner"},
                 *o5[1] = {"u"}, *o6[1] = {"th"}, *o7[1] = {"th1"}, *o8[1] = {"xth"};
      actx_model_add_node(m, "Mul", "", 2, n1, 1, o1);
      actx_model_add_node(m, "Mul", "", 2, n2, 1, o2);
      actx_model_add_node(m, "Mul", "", 2, n3, 1, o3);
      actx_model_add_node(m, "Add", "", 2, n4, 1, o4);
      actx_model_add_node(m, "Mul", "", 2, n5, 1, o5);
      actx_model_add_node(m, "Tanh", "", 1, n6, 1, o6);
      actx_model_add_node(m, "Add", "", 2, n7, 1, o7);
      actx_model_add_node(m, "Mul", "", 2, n8, 1, o8);
      actx_model_add_node(m, "Mul", "", 2, n9, 1, outputs);
      break;
    }
    case P_SILU:
    case P_QUICK_GELU: { /* x · Sigmoid(x) or x · Sigmoid(α x) */
      const char *s_in[1] = {pat == P_SILU ? "x" : "ax"}, *s_out[1] = {"s"};
      if (pat == P_QUICK_GELU) {
        add_constant(m, "c_alpha", x.elem_type, pick_constant(r, 1.702f), 1);
        const char *a[2] = {"x", "c_alpha"}, *ao[1] = {"ax"};
        actx_model_add_node(m, "Mul", "", 2, a, 1, ao);
      }
      actx_model_add_node(m, "Sigmoid", "", 1, s_in, 1, s_out);
      const char *mul[2] = {byte(r) < 240 ? "x" : "s", "s"};
      actx_model_add_node(m, "Mul", "", 2, mul, 1, outputs);
      break;
    }
    case P_ADD_GELU: { /* Add(x, bias) -> Gelu: what BiasGeluFusion rewrites */
      tensor_spec b = {.name = "bias", .elem_type = x.elem_type, .rank = 1};
      b.dims[0] = x.rank ? x.dims[x.rank - 1] : 1;
      b.params[0] = x.rank ? x.params[x.rank - 1] : NULL;
      if (byte(r) >= 224) random_shape(r, &b);
      graph_inputs[n_graph_inputs++] = b;
      const char *a[2] = {"x", "bias"}, *ao[1] = {"xb"};
      actx_model_add_node(m, "Add", "", 2, a, 1, ao);
      add_attributes(r, actx_model_add_node(m, "Gelu", byte(r) < 128 ? "" : MS, 1, ao, 1,
                                            outputs));
      break;
    }
    case P_NESTED: {
      const tensor_spec c = {.name = "c", .elem_type = ACTX_ELEM_BOOL, .rank = 0};
      graph_inputs[n_graph_inputs++] = c;
      nested_subgraphs = build_nested(r, m, &x, fm);
      fm->fusable = nested_subgraphs > 0;
      break;
    }
    case P_LINKED:
      nested_subgraphs = build_linked(r, m, &x, fm);
      fm->fusable = nested_subgraphs > 0;
      break;
    default:
      break;
  }

  for (size_t i = 0; i < n_graph_inputs; i++)
    actx_model_add_input(m, graph_inputs[i].name, graph_inputs[i].elem_type,
                         graph_inputs[i].rank, graph_inputs[i].dims, graph_inputs[i].params);
  actx_model_add_output(m, "y", y.elem_type, y.rank, y.dims, y.params);
  if (n_outputs == 2) actx_model_add_output(m, "y2", y.elem_type, y.rank, y.dims, y.params);

  const int rc = actx_model_serialize(m, &fm->bytes, &fm->size);
  actx_model_free(m);
  if (rc != 0) return -1;

  /* run-time inputs: symbolic dimensions get one value per name; some shapes and types lie */
  int64_t named[3];
  for (int i = 0; i < 3; i++) named[i] = dim_values[pick(r, 6)];
  fm->n_inputs = n_graph_inputs;
  for (size_t i = 0; i < n_graph_inputs; i++) {
    const tensor_spec *t = &graph_inputs[i];
    run_input *in = &fm->inputs[i];
    in->elem_type = t->elem_type;
    in->rank = t->rank;
    for (size_t d = 0; d < t->rank; d++) {
      in->dims[d] = t->dims[d];
      if (t->dims[d] < 0)
        for (int k = 0; k < 3; k++)
          if (strcmp(t->params[d], dim_names[k]) == 0) in->dims[d] = named[k];
    }
    const unsigned lie = byte(r);
    if (lie >= 248 && in->rank > 0) in->dims[pick(r, (unsigned)in->rank)] = dim_values[pick(r, 10)];
    if (lie == 247) in->rank = pick(r, MAX_RANK + 1);
    if (lie == 246) in->elem_type = elem_types[pick(r, 10)];
  }

  const unsigned opt = byte(r);
  fm->policy = policies[opt % 7];
  fm->unknown_option = (opt & 0x38) == 0x38;
  fm->threads = 1 + ((opt >> 6) & 1);
  fm->optimization = (opt & 0x80) ? ACTX_ORT_OPTIMIZE_NONE : ACTX_ORT_OPTIMIZE_ALL;
  /* Unoptimised, actx fuses the subgraphs ORT's level 2 would (it cannot read the level) and
   * leaves to ORT, unfused, those it declines; each output then holds ORT optimised's bits or
   * ORT unoptimised's only while one subgraph decides (see LLVMFuzzerTestOneInput). With more,
   * a chain can mix the two. */
  if (nested_subgraphs > 1) fm->optimization = ACTX_ORT_OPTIMIZE_ALL;
  return 0;
}

/* ---- running ---- */

typedef struct outcome {
  int created, ran;
  long on_actx; /* nodes the actx session ran, where counted (stats) */
  actx_ort_error err;
  actx_ort_tensor *outputs;
  size_t n_outputs;
} outcome;

static void run_model(const fuzz_model *fm, bool with_actx, actx_ort_optimization optimization,
                      void *const *data, outcome *o) {
  memset(o, 0, sizeof *o);
  static const char *const unknown_key[] = {"policy", "no_such_option"};
  const char *keys[2] = {"policy", "no_such_option"}, *values[2] = {fm->policy, "1"};
  actx_ort_session_options opt = {.intra_op_threads = fm->threads, .optimization = optimization};
  if (with_actx) {
    opt.ep_library_path = ep_library;
    opt.ep_name = "actx";
    const bool has_policy = fm->policy[0] != '\0';
    opt.n_ep_options = (size_t)has_policy + fm->unknown_option;
    opt.ep_option_keys = has_policy ? keys : unknown_key + 1;
    opt.ep_option_values = has_policy ? values : values + 1;
    /* whether a nested model's graphs had nodes for actx at all (else it proved little) */
    opt.record_assignments = (want_stats && fm->nested) || want_verbose;
  }
  actx_ort_session *s = NULL;
  if (actx_ort_session_create(fm->bytes, fm->size, &opt, &s, &o->err) != 0) return;
  o->created = 1;
  if (opt.record_assignments) o->on_actx = actx_ort_count_nodes_on(s, "actx", NULL);
  actx_ort_tensor in[MAX_INPUTS];
  memset(in, 0, sizeof in);
  for (size_t i = 0; i < fm->n_inputs; i++) {
    in[i].elem_type = (ONNXTensorElementDataType)fm->inputs[i].elem_type;
    in[i].rank = fm->inputs[i].rank;
    memcpy(in[i].dims, fm->inputs[i].dims, sizeof in[i].dims);
    in[i].data = data[i];
  }
  /* by position: the session lists the graph inputs in the model's order, as built */
  const size_t n_in = fm->n_inputs < actx_ort_session_input_count(s)
                          ? fm->n_inputs
                          : actx_ort_session_input_count(s);
  if (actx_ort_run(s, n_in, in, &o->outputs, &o->n_outputs, &o->err) == 0) o->ran = 1;
  actx_ort_session_free(s);
}

static void free_outcome(outcome *o) { actx_ort_tensors_free(o->outputs, o->n_outputs); }

/* For a failure report: which EP ran each node of the actx session. */
static void print_assignments(const fuzz_model *fm) {
  const char *keys[1] = {"policy"}, *values[1] = {fm->policy};
  const actx_ort_session_options opt = {.intra_op_threads = fm->threads,
                                        .optimization = fm->optimization,
                                        .ep_library_path = ep_library,
                                        .ep_name = "actx",
                                        .n_ep_options = fm->policy[0] != '\0',
                                        .ep_option_keys = keys,
                                        .ep_option_values = values,
                                        .record_assignments = true};
  actx_ort_session *s = NULL;
  actx_ort_assignment *list = NULL;
  size_t n = 0;
  if (actx_ort_session_create(fm->bytes, fm->size, &opt, &s, NULL) == 0 &&
      actx_ort_session_assignments(s, &list, &n, NULL) == 0)
    for (size_t i = 0; i < n; i++)
      fprintf(stderr, "  node %s (%s%s%s) on %s\n", list[i].node_name, list[i].domain,
              list[i].domain[0] ? "." : "", list[i].op_type, list[i].ep_name);
  free(list);
  actx_ort_session_free(s);
}

static bool options_valid(const fuzz_model *fm) {
  return !fm->unknown_option && (strcmp(fm->policy, "all") == 0 || strcmp(fm->policy, "auto") == 0 ||
                                 strcmp(fm->policy, "none") == 0 || fm->policy[0] == '\0');
}

/* float16 / bfloat16 element i as a float */
static float half_at(int32_t elem_type, const void *data, size_t i) {
  uint16_t h;
  memcpy(&h, (const uint8_t *)data + 2 * i, 2);
  return elem_type == ACTX_ELEM_FLOAT16 ? actx_f16_to_f32(h) : actx_bf16_to_f32(h);
}

/* Whether two outputs agree (see the header for the rule); *where is the first element that
 * does not. */
static bool outputs_agree(const fuzz_model *fm, const actx_ort_tensor *a, const actx_ort_tensor *b,
                          size_t *where) {
  *where = 0;
  const bool half = a->elem_type == ACTX_ELEM_FLOAT16 || a->elem_type == ACTX_ELEM_BFLOAT16;
  if (!half) {
    if (a->bytes == 0 || memcmp(a->data, b->data, a->bytes) == 0) return true;
    while (((const uint8_t *)a->data)[*where] == ((const uint8_t *)b->data)[*where]) ++*where;
    return false;
  }
  const double rtol = a->elem_type == ACTX_ELEM_FLOAT16 ? 1e-3 : 8e-3, atol = 1e-5;
  for (size_t i = 0; i < a->count; i++) {
    const float x = half_at(a->elem_type, a->data, i), y = half_at(b->elem_type, b->data, i);
    /* Per node conformance's tolerance; but ORT alone runs a float16 subgraph (or the
     * function body it inlines for a float16 node it has no kernel for) as one float32 island
     * between two Casts, and a float16 node actx takes inside it adds roundings the island does
     * not have, which a later node amplifies where its output is small beside its input (GELU's
     * negative tail). So: two nodes' worth, against max(|x|, 1); in a nested model, two for
     * each activation an element goes through (a chain of them, through Loops' trips), since
     * each can round where the island does not and amplify what came before. */
    const double nodes = fm->half_steps > 1 ? 2.0 * fm->half_steps : 2;
    const double bound = nodes * rtol * fmax(fabs((double)x), 1.0) + atol;
    if (isnan(x) != isnan(y) || (!isnan(x) && x != y && !(fabs((double)x - y) <= bound))) {
      *where = i;
      return false;
    }
  }
  return true;
}

/* ---- what the inputs came to: printed at exit when ACTX_FUZZ_EP_STATS is set ---- */

enum { S_NO_MODEL, S_TOO_BIG, S_BAD_OPTIONS, S_BOTH_REFUSE, S_ACTX_ONLY, S_RUN_REFUSED, S_RAN, S_COUNT };
static const char *const stat_names[S_COUNT] = {
    "bytes made no model", "inputs too big to run", "bad provider options refused",
    "both sessions refused", "only the actx session created (ran: see below)",
    "both created, both runs refused", "both ran and agreed"};
static unsigned long stats[S_COUNT], actx_only_ran, nested_ran, nested_on_actx;

static void print_stats(void) {
  fprintf(stderr, "fuzz_ep outcomes:\n");
  for (int i = 0; i < S_COUNT; i++) fprintf(stderr, "  %-50s %lu\n", stat_names[i], stats[i]);
  fprintf(stderr, "  %-50s %lu\n", "  of which the actx session ran", actx_only_ran);
  fprintf(stderr, "  %-50s %lu\n", "nested models both ran and agreed on", nested_ran);
  fprintf(stderr, "  %-50s %lu\n", "  of which with nodes on actx", nested_on_actx);
}

/* ---- libFuzzer ---- */

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  want_stats = getenv("ACTX_FUZZ_EP_STATS") != NULL;
  want_verbose = getenv("ACTX_FUZZ_EP_VERBOSE") != NULL;
  if (want_stats) atexit(print_stats);
  const char *env = getenv("ACTX_FUZZ_EP_LIBRARY");
  if (env != NULL) {
    snprintf(ep_library, sizeof ep_library, "%s", env);
  } else {
    char exe[PATH_MAX];
    const ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) FAIL("cannot find the fuzzer's own path");
    exe[len] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash != NULL) *slash = '\0';
    snprintf(ep_library, sizeof ep_library, "%s/lib/libactx_ep.so", exe);
  }
  if (access(ep_library, R_OK) != 0) FAIL("no EP library at %s (set ACTX_FUZZ_EP_LIBRARY)", ep_library);
  actx_ort_error err;
  if (actx_ort_env(&err) == NULL) FAIL("ORT: %s", err.message);
  if (actx_ort_register_ep_library(ep_library, &err) != 0) FAIL("%s", err.message);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size) {
  reader r = {bytes, size};
  fuzz_model fm;
  if (build(&r, &fm) != 0) {
    free(fm.bytes);
    stats[S_NO_MODEL]++;
    return 0;
  }
  const char *dump = getenv("ACTX_FUZZ_EP_DUMP"); /* the model, to rerun it outside the fuzzer */
  if (dump != NULL) {
    FILE *f = fopen(dump, "wb");
    if (f == NULL || fwrite(fm.bytes, 1, fm.size, f) != fm.size) FAIL("cannot write %s", dump);
    fclose(f);
  }
  /* input data: from a seed in the bytes, any bit pattern (NaNs, infinities, subnormals) */
  void *data[MAX_INPUTS] = {NULL};
  uint64_t seed = byte(&r) | (uint64_t)byte(&r) << 8;
  for (size_t i = 0; i < fm.n_inputs; i++) {
    size_t n = 1;
    for (size_t d = 0; d < fm.inputs[i].rank; d++) n *= (size_t)fm.inputs[i].dims[d];
    if (n > MAX_ELEMENTS) { /* too slow to be worth it */
      stats[S_TOO_BIG]++;
      goto done;
    }
    const size_t es = actx_elem_size(fm.inputs[i].elem_type) ? actx_elem_size(fm.inputs[i].elem_type) : 1;
    uint8_t *p = malloc(n * es + 8);
    for (size_t k = 0; k < n * es; k += 8) {
      uint64_t z = (seed += 0x9E3779B97F4A7C15ull);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      z ^= z >> 31;
      memcpy(p + k, &z, 8);
    }
    /* a bool is 0 or 1: any other byte is no bool at all to ORT's C++ (the Ifs' c) */
    if (fm.inputs[i].elem_type == ACTX_ELEM_BOOL)
      for (size_t k = 0; k < n; k++) p[k] &= 1;
    data[i] = p;
  }

  outcome alone, actx, alone_optimised = {0};
  run_model(&fm, false, fm.optimization, data, &alone);
  run_model(&fm, true, fm.optimization, data, &actx);
  /* A pattern under `auto` or `all` with optimisations off: the EP cannot read the level and
   * fuses the subgraph where ORT's level-2 fusion would, so ORT alone optimised is the other
   * right answer (tests/reliability's bad_input_ep has the case). */
  const bool either_level = fm.fusable && fm.optimization != ACTX_ORT_OPTIMIZE_ALL &&
                            strcmp(fm.policy, "none") != 0;
  if (either_level && alone.ran && actx.ran)
    run_model(&fm, false, ACTX_ORT_OPTIMIZE_ALL, data, &alone_optimised);

  if (!options_valid(&fm)) stats[S_BAD_OPTIONS]++;
  else if (!alone.created && !actx.created) stats[S_BOTH_REFUSE]++;
  else if (!alone.created) stats[S_ACTX_ONLY]++, actx_only_ran += actx.ran;
  else if (!alone.ran) stats[S_RUN_REFUSED]++;
  else {
    stats[S_RAN]++;
    if (fm.nested && actx.ran) nested_ran++, nested_on_actx += actx.on_actx > 0;
  }
  if (want_verbose)
    fprintf(stderr,
            "fuzz_ep: %s (policy '%s', %s): ORT alone %s%s%s, with actx %s%s%s (%ld on actx)\n",
            fm.label, fm.policy,
            fm.optimization == ACTX_ORT_OPTIMIZE_ALL ? "optimised" : "not optimised",
            !alone.created ? "refuses the model" : alone.ran ? "runs" : "refuses the run",
            alone.ran ? "" : ": ", alone.ran ? "" : alone.err.message,
            !actx.created ? "refuses the model" : actx.ran ? "runs" : "refuses the run",
            actx.ran ? "" : ": ", actx.ran ? "" : actx.err.message, actx.on_actx);

  if (!options_valid(&fm)) {
    if (actx.created)
      FAIL("%s: provider options policy='%s'%s accepted", fm.label, fm.policy,
           fm.unknown_option ? " + an unknown key" : "");
  } else if (alone.created && !actx.created) {
    FAIL("%s: ORT alone takes the model, with actx: %s", fm.label, actx.err.message);
  } else if (alone.created && actx.created) {
    if (alone.ran && !actx.ran)
      FAIL("%s: ORT alone runs it, with actx: %s", fm.label, actx.err.message);
    if (!alone.ran && actx.ran)
      FAIL("%s: ORT alone refuses the run (%s), actx runs it", fm.label, alone.err.message);
    if (alone.ran && actx.ran) {
      if (alone.n_outputs != actx.n_outputs) FAIL("%s: output counts differ", fm.label);
      for (size_t i = 0; i < alone.n_outputs; i++) {
        const actx_ort_tensor *a = &alone.outputs[i], *b = &actx.outputs[i];
        if (a->elem_type != b->elem_type || a->rank != b->rank ||
            memcmp(a->dims, b->dims, a->rank * sizeof a->dims[0]) != 0 || a->bytes != b->bytes)
          FAIL("%s: output %zu: type or shape differs from ORT alone's", fm.label, i);
        size_t k = 0, k2 = 0;
        const bool agree = outputs_agree(&fm, a, b, &k) ||
                           (alone_optimised.ran && i < alone_optimised.n_outputs &&
                            alone_optimised.outputs[i].bytes == b->bytes &&
                            outputs_agree(&fm, &alone_optimised.outputs[i], b, &k2));
        if (!agree) {
          const bool half = a->elem_type == ACTX_ELEM_FLOAT16 || a->elem_type == ACTX_ELEM_BFLOAT16;
          char values[96] = "";
          if (half)
            snprintf(values, sizeof values, ": ORT %a, actx %a", half_at(a->elem_type, a->data, k),
                     half_at(b->elem_type, b->data, k));
          print_assignments(&fm);
          FAIL("%s (policy %s, %d threads, %s): output %zu differs from ORT alone's at %s %zu%s",
               fm.label, fm.policy, fm.threads,
               fm.optimization == ACTX_ORT_OPTIMIZE_ALL ? "optimised" : "not optimised", i,
               half ? "element" : "byte", k, values);
        }
      }
    }
  }
  free_outcome(&alone);
  free_outcome(&actx);
  free_outcome(&alone_optimised);
done:
  for (size_t i = 0; i < MAX_INPUTS; i++) free(data[i]);
  free(fm.bytes);
  return 0;
}
