/* A bfloat16 Conv and the table activation that alone reads its result, run as one compiled node
 * (ep/bf16_conv_act.c), against the same Conv and activation run as two nodes.
 *
 * usage: test_ep_bf16_conv_act <absolute path of the EP library>
 *
 * Each model holds the same Conv twice on one input: Conv A and its activation (fused), and
 * Conv B, whose result is a graph output too (two values leave it: not fused), and its
 * activation. The two activations' results must be the same bits, with ±0, ±inf, NaN and
 * subnormals in the input (the Conv's repair of their windows), at 1 and 2 threads, for each
 * table activation, weights and bias constant or given at run time, depthwise and unpadded.
 * Also: which nodes ORT fused (the assignments), a pair whose result nothing reads (not fused:
 * ORT 1.30 crashed on a fused node without an output), the pair inside If branches with the
 * weights outside, an empty input, and weights of the wrong shape at run time (a clear status).
 */
#include <stdlib.h>
#include <string.h>

#include "ep_test.h"
#include "model_parts.h"

#define OPSET 22 /* Conv, HardSwish and HardSigmoid take bfloat16 from opset 22 */
#define IR_VERSION 10
#define C_IN 8
#define C_OUT 16
#define H 13
#define W 11
#define KERNEL 3

typedef struct activation {
  const char *op;
  int n_attrs; /* alpha, then beta */
  float alpha, beta;
} activation;

static const activation g_activations[] = {
    {"Relu", 0, 0, 0},         {"HardSwish", 0, 0, 0},         {"LeakyRelu", 1, 0.2f, 0},
    {"HardSigmoid", 2, 0.3f, 0.4f}, {"Neg", 0, 0, 0},
};
#define N_ACTIVATIONS (sizeof g_activations / sizeof g_activations[0])

typedef struct conv_case {
  const activation *act;
  bool runtime_w, runtime_b, no_bias;
  int64_t group, pads;
} conv_case;

/* n bfloat16 values in [-scale, scale), reproducibly from seed. */
static void fill_uniform(uint16_t *v, size_t n, uint64_t seed, float scale) {
  uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
  for (size_t i = 0; i < n; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    v[i] = ep_float_to_bf16(scale * ((float)(s >> 40) / 8388608.0f - 1.0f));
  }
}

static void add_activation(actx_model *g, const activation *a, const char *name, const char *in,
                           const char *out) {
  actx_model_node *n = actx_model_add_named_node(g, name, a->op, "", 1, &in, 1, &out);
  if (a->n_attrs > 0) actx_model_node_attr_float(n, "alpha", a->alpha);
  if (a->n_attrs > 1) actx_model_node_attr_float(n, "beta", a->beta);
}

static size_t w_count(const conv_case *c) { return C_OUT * (C_IN / c->group) * KERNEL * KERNEL; }

/* x -> conv_a -> act_a -> ya (fused); x -> conv_b -> zb (an output) -> act_b -> yb. The two
 * Convs read weights of their own (wa, wb; ba, bb) of the same values: ORT would merge two
 * identical Convs into one. x's and the run-time weights' dims are symbolic, so a run can feed
 * any shape. */
static int build(const conv_case *c, uint8_t **bytes, size_t *size) {
  actx_model *m = actx_model_create(IR_VERSION, OPSET, 0);
  const int64_t x_dims[4] = {-1, C_IN, -1, -1}, y_dims[4] = {-1, C_OUT, -1, -1};
  const int64_t w_dims[4] = {C_OUT, C_IN / c->group, KERNEL, KERNEL}, b_dims[1] = {C_OUT};
  const int64_t w_symbolic[4] = {-1, -1, KERNEL, KERNEL};
  actx_model_add_input(m, "x", ACTX_ELEM_BFLOAT16, 4, x_dims, NULL);
  uint16_t w[C_OUT * C_IN * KERNEL * KERNEL], b[C_OUT];
  fill_uniform(w, w_count(c), 1, 0.5f);
  fill_uniform(b, C_OUT, 2, 1.0f);
  static const char *const w_names[2] = {"wa", "wb"}, *const b_names[2] = {"ba", "bb"};
  const int32_t bf16 = ACTX_ELEM_BFLOAT16;
  for (size_t k = 0; k < 2; k++) {
    if (c->runtime_w) actx_model_add_input(m, w_names[k], bf16, 4, w_symbolic, NULL);
    else actx_model_add_initializer(m, w_names[k], bf16, 4, w_dims, w);
    if (c->runtime_b) actx_model_add_input(m, b_names[k], bf16, 1, b_dims, NULL);
    else if (!c->no_bias) actx_model_add_initializer(m, b_names[k], bf16, 1, b_dims, b);
  }
  static const char *const out_names[3] = {"ya", "yb", "zb"};
  for (size_t i = 0; i < 3; i++)
    actx_model_add_output(m, out_names[i], ACTX_ELEM_BFLOAT16, 4, y_dims, NULL);
  static const char *const conv_names[2] = {"conv_a", "conv_b"}, *const conv_out[2] = {"ca", "zb"};
  for (size_t k = 0; k < 2; k++) {
    const char *in[3] = {"x", w_names[k], b_names[k]};
    actx_model_node *n = actx_model_add_named_node(m, conv_names[k], "Conv", "",
                                                   c->no_bias ? 2 : 3, in, 1, &conv_out[k]);
    const int64_t pads[4] = {c->pads, c->pads, c->pads, c->pads};
    actx_model_node_attr_ints(n, "pads", 4, pads);
    actx_model_node_attr_int(n, "group", c->group);
  }
  add_activation(m, c->act, "act_a", "ca", "ya");
  add_activation(m, c->act, "act_b", "zb", "yb");
  const int rc = actx_model_serialize(m, bytes, size);
  if (rc != 0) printf("model: %s\n", actx_model_error(m));
  actx_model_free(m);
  return rc;
}

/* The subgraph ORT assigned each named node to (SIZE_MAX: none), and whether all are actx's. */
static bool subgraphs(const actx_ort_session *s, size_t n, const char *const *names,
                      size_t *subgraph, size_t *members) {
  actx_ort_assignment *list = NULL;
  size_t n_list = 0;
  actx_ort_error err;
  if (actx_ort_session_assignments(s, &list, &n_list, &err) != 0) {
    CHECK(false, "assignments: %s", err.message);
    return false;
  }
  bool ours = true;
  for (size_t k = 0; k < n; k++) {
    subgraph[k] = SIZE_MAX;
    members[k] = 0;
    for (size_t i = 0; i < n_list; i++)
      if (strcmp(list[i].node_name, names[k]) == 0) {
        subgraph[k] = list[i].subgraph;
        ours = ours && strcmp(list[i].ep_name, "actx") == 0;
      }
    for (size_t i = 0; i < n_list; i++) members[k] += list[i].subgraph == subgraph[k];
  }
  free(list);
  return ours;
}

typedef struct feeds {
  uint16_t x[C_IN * H * W], w[C_OUT * C_IN * KERNEL * KERNEL], b[C_OUT];
  actx_ort_tensor t[5];
  size_t n;
} feeds;

/* x of n images (n 0 or 1) with special values or not, and the run-time weights of the case. */
static void make_feeds(const conv_case *c, int64_t n, bool specials, feeds *f) {
  memset(f, 0, sizeof *f);
  fill_uniform(f->x, C_IN * H * W, 3 + (uint64_t)specials, 4.0f);
  if (specials) {
    static const uint16_t special[5] = {0x7fc0, 0x7f80, 0xff80, 0x8000, 0x0001};
    static const size_t at[5] = {0, 40, 300, 777, 1000};
    for (size_t i = 0; i < 5; i++) f->x[at[i]] = special[i];
  }
  fill_uniform(f->w, w_count(c), 1, 0.5f);
  fill_uniform(f->b, C_OUT, 2, 1.0f);
  f->t[f->n++] = (actx_ort_tensor){.name = "x", .elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16,
                                   .rank = 4, .dims = {n, C_IN, H, W}, .data = f->x};
  static const char *const w_names[2] = {"wa", "wb"}, *const b_names[2] = {"ba", "bb"};
  for (size_t k = 0; k < 2; k++) {
    if (c->runtime_w)
      f->t[f->n++] = (actx_ort_tensor){.name = w_names[k],
                                       .elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16,
                                       .rank = 4,
                                       .dims = {C_OUT, C_IN / c->group, KERNEL, KERNEL},
                                       .data = f->w};
    if (c->runtime_b)
      f->t[f->n++] = (actx_ort_tensor){.name = b_names[k],
                                       .elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16,
                                       .rank = 1, .dims = {C_OUT}, .data = f->b};
  }
}

/* Runs s; ya against yb, bit for bit. */
static void check_run(actx_ort_session *s, const feeds *f, const char *label) {
  actx_ort_tensor *out = NULL;
  size_t n_out = 0;
  actx_ort_error err;
  if (actx_ort_run(s, f->n, f->t, &out, &n_out, &err) != 0) {
    CHECK(false, "%s: run: %s", label, err.message);
    return;
  }
  CHECK(n_out == 3 && out[0].bytes == out[1].bytes, "%s: outputs", label);
  if (n_out == 3 && out[0].bytes == out[1].bytes) {
    const long d = ep_first_difference(out[0].data, out[1].data, out[0].bytes);
    CHECK(d < 0, "%s: fused %04x, the two nodes %04x at element %ld", label,
          ((const uint16_t *)out[0].data)[d / 2], ((const uint16_t *)out[1].data)[d / 2], d / 2);
    /* the activation did run: Conv B's result differs from its activation's somewhere */
    CHECK(out[0].count == 0 || ep_first_difference(out[1].data, out[2].data, out[1].bytes) >= 0,
          "%s: the activation changed nothing", label);
  }
  actx_ort_tensors_free(out, n_out);
}

static void check_case(const conv_case *c, int threads) {
  char label[160];
  snprintf(label, sizeof label, "Conv + %s (W %s, B %s, group %lld, pads %lld), %d thread(s)",
           c->act->op, c->runtime_w ? "an input" : "constant",
           c->no_bias ? "none" : c->runtime_b ? "an input" : "constant", (long long)c->group,
           (long long)c->pads, threads);
  uint8_t *model = NULL;
  size_t size = 0;
  if (build(c, &model, &size) != 0) {
    CHECK(false, "%s: model", label);
    return;
  }
  const ep_session_spec spec = {.policy = "auto", .threads = threads};
  actx_ort_session *s = NULL;
  actx_ort_error err;
  if (ep_session_create(model, size, &spec, &s, &err) != 0) {
    CHECK(false, "%s: %s", label, err.message);
    free(model);
    return;
  }
  static const char *const names[4] = {"conv_a", "act_a", "conv_b", "act_b"};
  size_t sub[4], members[4];
  if (subgraphs(s, 4, names, sub, members)) {
    CHECK(sub[0] == sub[1] && members[0] == 2, "%s: Conv A and its activation not one node",
          label);
    CHECK(sub[2] != sub[3] && members[2] == 1, "%s: Conv B (its result read twice) fused",
          label);
  } else {
    CHECK(false, "%s: a node is not actx's", label);
  }
  feeds f;
  for (int specials = 0; specials < 2; specials++) {
    make_feeds(c, 1, specials, &f);
    check_run(s, &f, label);
    check_run(s, &f, label); /* a second run of the same kernel */
  }
  /* no image: empty results */
  make_feeds(c, 0, false, &f);
  check_run(s, &f, label);
  /* Conv A's weights of the wrong shape: a clear status, no result */
  if (c->runtime_w) {
    make_feeds(c, 1, false, &f);
    f.t[1].dims[1] = C_IN / c->group - 1; /* fewer elements: the buffer holds them */
    actx_ort_tensor *out = NULL;
    size_t n_out = 0;
    const int rc = actx_ort_run(s, f.n, f.t, &out, &n_out, &err);
    CHECK(rc != 0, "%s: W with %lld channels ran", label, (long long)f.t[1].dims[1]);
    if (rc == 0) actx_ort_tensors_free(out, n_out);
    else CHECK(strstr(err.message, "Conv 'conv_a'") != NULL && strstr(err.message, "channels"),
               "%s: the status names neither the Conv nor the channels: %s", label,
               err.message);
  }
  actx_ort_session_free(s);
  free(model);
}

/* x -> conv_d -> relu_d, whose result nothing reads, beside a read pair: the read pair is one
 * node, the unread one two; the session runs. */
static void check_unread(void) {
  actx_model *m = actx_model_create(IR_VERSION, OPSET, 0);
  const int64_t x_dims[4] = {1, C_IN, H, W}, w_dims[4] = {C_OUT, C_IN, KERNEL, KERNEL};
  const int64_t y_dims[4] = {1, C_OUT, H - 2, W - 2};
  uint16_t w[C_OUT * C_IN * KERNEL * KERNEL];
  fill_uniform(w, sizeof w / sizeof w[0], 1, 0.5f);
  actx_model_add_input(m, "x", ACTX_ELEM_BFLOAT16, 4, x_dims, NULL);
  actx_model_add_initializer(m, "w", ACTX_ELEM_BFLOAT16, 4, w_dims, w);
  actx_model_add_output(m, "y", ACTX_ELEM_BFLOAT16, 4, y_dims, NULL);
  const char *in[2] = {"x", "w"}, *c[1] = {"c"}, *cd[1] = {"cd"};
  const int64_t pads[4] = {1, 1, 1, 1}; /* two identical Convs would be merged by ORT */
  actx_model_add_named_node(m, "conv", "Conv", "", 2, in, 1, c);
  actx_model_node_attr_ints(actx_model_add_named_node(m, "conv_d", "Conv", "", 2, in, 1, cd),
                            "pads", 4, pads);
  add_activation(m, &g_activations[0], "relu", "c", "y");
  add_activation(m, &g_activations[0], "relu_d", "cd", "unread");
  uint8_t *model = NULL;
  size_t size = 0;
  const int built = actx_model_serialize(m, &model, &size);
  CHECK(built == 0, "unread: %s", actx_model_error(m));
  actx_model_free(m);
  if (built != 0) return;
  const ep_session_spec spec = {.policy = "auto", .threads = 1};
  actx_ort_session *s = NULL;
  actx_ort_error err;
  if (ep_session_create(model, size, &spec, &s, &err) != 0) {
    CHECK(false, "unread: %s", err.message);
  } else {
    static const char *const names[4] = {"conv", "relu", "conv_d", "relu_d"};
    size_t sub[4], members[4];
    if (subgraphs(s, 4, names, sub, members)) {
      CHECK(sub[0] == sub[1], "unread: the read pair is not one node");
      CHECK(sub[2] != sub[3], "unread: the unread pair is one node");
    }
    uint16_t x[C_IN * H * W];
    fill_uniform(x, sizeof x / sizeof x[0], 5, 2.0f);
    const actx_ort_tensor t = {.elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16, .rank = 4,
                               .dims = {1, C_IN, H, W}, .data = x};
    actx_ort_tensor *out = NULL;
    size_t n_out = 0;
    CHECK(actx_ort_run(s, 1, &t, &out, &n_out, &err) == 0, "unread: run: %s", err.message);
    actx_ort_tensors_free(out, n_out);
    actx_ort_session_free(s);
  }
  free(model);
}

/* The pair inside both branches of an If, the weights an initializer of the main graph: each
 * branch's pair is one node, and both give the flat model's bits (Conv B's activation). */
static void check_if_branches(void) {
  const conv_case c = {&g_activations[1], false, false, false, 1, 1}; /* HardSwish */
  const int64_t x_dims[4] = {1, C_IN, H, W}, w_dims[4] = {C_OUT, C_IN, KERNEL, KERNEL};
  const int64_t b_dims[1] = {C_OUT}, y_dims[4] = {1, C_OUT, H, W};
  uint16_t w[C_OUT * C_IN * KERNEL * KERNEL], b[C_OUT];
  fill_uniform(w, w_count(&c), 1, 0.5f);
  fill_uniform(b, C_OUT, 2, 1.0f);
  actx_model *m = actx_model_create(IR_VERSION, OPSET, 0);
  actx_model_add_input(m, "x", ACTX_ELEM_BFLOAT16, 4, x_dims, NULL);
  actx_model_add_input(m, "cond", ACTX_ELEM_BOOL, 0, NULL, NULL);
  actx_model_add_initializer(m, "wa", ACTX_ELEM_BFLOAT16, 4, w_dims, w);
  actx_model_add_initializer(m, "ba", ACTX_ELEM_BFLOAT16, 1, b_dims, b);
  actx_model_add_output(m, "y", ACTX_ELEM_BFLOAT16, 4, y_dims, NULL);
  const char *cond[1] = {"cond"}, *y[1] = {"y"};
  actx_model_node *if_node = actx_model_add_named_node(m, "if", "If", "", 1, cond, 1, y);
  static const char *const branch_names[2] = {"then_branch", "else_branch"};
  for (size_t k = 0; k < 2; k++) {
    actx_model *g = actx_part_if_branch(ACTX_ELEM_BFLOAT16, 4, y_dims, NULL);
    const char *in[3] = {"x", "wa", "ba"}, *ci[1] = {"ci"};
    char conv_name[16], act_name[16];
    snprintf(conv_name, sizeof conv_name, "conv_%zu", k);
    snprintf(act_name, sizeof act_name, "act_%zu", k);
    const int64_t pads[4] = {1, 1, 1, 1};
    actx_model_node_attr_ints(actx_model_add_named_node(g, conv_name, "Conv", "", 3, in, 1, ci),
                              "pads", 4, pads);
    add_activation(g, c.act, act_name, "ci", ACTX_PART_OUT);
    actx_model_node_attr_graph(if_node, branch_names[k], g);
  }
  uint8_t *nested = NULL, *flat = NULL;
  size_t nested_size = 0, flat_size = 0;
  const int built = actx_model_serialize(m, &nested, &nested_size);
  CHECK(built == 0, "If: %s", actx_model_error(m));
  actx_model_free(m);
  if (built != 0 || build(&c, &flat, &flat_size) != 0) {
    free(nested);
    return;
  }
  const ep_session_spec spec = {.policy = "auto", .threads = 2};
  actx_ort_session *sn = NULL, *sf = NULL;
  actx_ort_error err;
  if (ep_session_create(nested, nested_size, &spec, &sn, &err) != 0) {
    CHECK(false, "If: %s", err.message);
  } else if (ep_session_create(flat, flat_size, &spec, &sf, &err) != 0) {
    CHECK(false, "If, flat: %s", err.message);
  } else {
    static const char *const names[4] = {"conv_0", "act_0", "conv_1", "act_1"};
    size_t sub[4], members[4];
    if (subgraphs(sn, 4, names, sub, members))
      CHECK(sub[0] == sub[1] && sub[2] == sub[3] && members[0] == 2 && members[2] == 2,
            "If: a branch's Conv and activation are not one node");
    else CHECK(false, "If: a node is not actx's");
    feeds f;
    make_feeds(&c, 1, true, &f);
    actx_ort_tensor *want = NULL;
    size_t n_want = 0;
    CHECK(actx_ort_run(sf, f.n, f.t, &want, &n_want, &err) == 0, "If, flat: %s", err.message);
    for (int k = 0; k < 2 && n_want == 3; k++) {
      const bool c_value = k == 0;
      const actx_ort_tensor t[2] = {
          f.t[0], {.name = "cond", .elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL,
                   .data = (void *)&c_value}};
      actx_ort_tensor *got = NULL;
      size_t n_got = 0;
      if (actx_ort_run(sn, 2, t, &got, &n_got, &err) != 0) {
        CHECK(false, "If, cond %d: %s", !k, err.message);
        continue;
      }
      CHECK(n_got == 1 && got[0].bytes == want[1].bytes &&
                ep_first_difference(got[0].data, want[1].data, got[0].bytes) < 0,
            "If, cond %d: not the two nodes' bits", !k);
      actx_ort_tensors_free(got, n_got);
    }
    actx_ort_tensors_free(want, n_want);
  }
  if (sn != NULL) actx_ort_session_free(sn);
  if (sf != NULL) actx_ort_session_free(sf);
  free(nested);
  free(flat);
}

int main(int argc, char **argv) {
  if (ep_test_init(argc, argv) != 0) return 2;
  for (size_t a = 0; a < N_ACTIVATIONS; a++)
    for (int runtime_w = 0; runtime_w < 2; runtime_w++)
      for (int threads = 1; threads <= 2; threads++) {
        const conv_case c = {&g_activations[a], runtime_w, false, false, 1, 1};
        check_case(&c, threads);
      }
  const conv_case more[] = {
      {&g_activations[1], false, false, false, C_IN, 0}, /* depthwise, no padding */
      {&g_activations[0], false, true, false, 1, 1},     /* B a run-time input */
      {&g_activations[2], true, false, true, 1, 2},      /* no B */
  };
  for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) check_case(&more[i], 2);
  check_unread();
  check_if_branches();
  printf("%s\n", g_failures ? "FAILED" : "ok");
  return g_failures ? 1 : 0;
}
