/* A bfloat16 Conv and the table activation that alone reads its result, run as one compiled node
 * (ep/bf16_conv_act.c), against the same Conv and activation run as two nodes; and a Conv and
 * its SiLU x · sigmoid(x) (a Sigmoid and a Mul) as one node, against the Conv and the SiLU the
 * exact activations fuse (x · sigmoid(x) as one op, rounded once: not the bits of a Sigmoid and
 * a Mul run apart, which round twice) as two.
 *
 * usage: test_ep_bf16_conv_act <absolute path of the EP library>
 *
 * Each model holds the same Conv twice on one input: Conv A and its activation (fused), and
 * Conv B, whose result is a graph output as well as its activation's input (not fused). The two
 * activations' results must be the same bits and shapes, with NaN, ±inf, -0 and a subnormal in
 * the input (the Conv's repair of their windows), at 1 and 2 threads, for five table
 * activations (Relu, HardSwish, LeakyRelu, HardSigmoid, Neg) and SiLU; weights and bias
 * constant or given at run time, no bias, depthwise and unpadded, the image itself a constant
 * (a Conv input the fused node keeps a copy of). Also: which nodes ORT fused (the
 * assignments), a pair whose result nothing reads (not fused: ORT 1.30 crashed on a fused node
 * without an output), a Conv
 * whose result a Relu reads beside its SiLU, or whose SiLU's result nothing reads, the pair
 * inside If branches with the weights outside, an empty batch, and weights of the wrong shape at
 * run time (a clear status naming the fused node). */
#define _POSIX_C_SOURCE 200809L /* setenv */
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
#define BF16 ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16

typedef struct activation {
  const char *op; /* "SiLU": two nodes, a Sigmoid "<name>_sigmoid" (its result "<out>_s") and
                     the Mul "<name>" of the input by it */
  int n_attrs;    /* alpha, then beta */
  float alpha, beta;
} activation;

static const activation g_activations[] = {
    {"Relu", 0, 0, 0},         {"HardSwish", 0, 0, 0},         {"LeakyRelu", 1, 0.2f, 0},
    {"HardSigmoid", 2, 0.3f, 0.4f}, {"Neg", 0, 0, 0},          {"SiLU", 0, 0, 0},
};

static bool is_silu(const activation *a) { return strcmp(a->op, "SiLU") == 0; }
#define N_ACTIVATIONS (sizeof g_activations / sizeof g_activations[0])

/* Where a Conv input comes from. */
typedef enum source { CONSTANT, RUN_TIME, ABSENT } source;

typedef struct conv_case {
  const activation *act;
  source x, w, b; /* x: CONSTANT or RUN_TIME */
  int64_t group, pads;
} conv_case;

/* Conv A's and Conv B's weights and bias: values of their own, each the same for both (ORT
 * merges two identical nodes into one). */
static const char *const g_w_names[2] = {"wa", "wb"}, *const g_b_names[2] = {"ba", "bb"};

/* n bfloat16 values in [-scale, scale), reproducibly from seed. */
static void fill_uniform(uint16_t *v, size_t n, uint64_t seed, float scale) {
  uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
  for (size_t i = 0; i < n; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    v[i] = ep_float_to_bf16(scale * ((float)(s >> 40) / 8388608.0f - 1.0f));
  }
}

/* The image: uniform, and with specials NaN, +inf, -inf, -0 and a subnormal at fixed places. */
static void fill_image(uint16_t *x, bool specials) {
  fill_uniform(x, C_IN * H * W, 3 + (uint64_t)specials, 4.0f);
  static const uint16_t special[5] = {0x7fc0, 0x7f80, 0xff80, 0x8000, 0x0001};
  static const size_t at[5] = {0, 40, 300, 777, 1000};
  _Static_assert(C_IN * H * W > 1000, "the specials' places lie in the image");
  for (size_t i = 0; specials && i < 5; i++) x[at[i]] = special[i];
}

static void add_activation(actx_model *g, const activation *a, const char *name, const char *in,
                           const char *out) {
  if (is_silu(a)) {
    char sigmoid[64], s[64];
    snprintf(sigmoid, sizeof sigmoid, "%s_sigmoid", name);
    snprintf(s, sizeof s, "%s_s", out);
    const char *s_name = s, *mul_in[2] = {in, s};
    actx_model_add_named_node(g, sigmoid, "Sigmoid", "", 1, &in, 1, &s_name);
    actx_model_add_named_node(g, name, "Mul", "", 2, mul_in, 1, &out);
    return;
  }
  actx_model_node *n = actx_model_add_named_node(g, name, a->op, "", 1, &in, 1, &out);
  if (a->n_attrs > 0) actx_model_node_attr_float(n, "alpha", a->alpha);
  if (a->n_attrs > 1) actx_model_node_attr_float(n, "beta", a->beta);
}

static size_t w_count(const conv_case *c) { return C_OUT * (C_IN / c->group) * KERNEL * KERNEL; }
static int64_t out_size(const conv_case *c, int64_t in) { return in + 2 * c->pads - KERNEL + 1; }

/* x -> conv_a -> act_a -> ya (fused); x -> conv_b -> zb (an output) -> act_b -> yb. The batch
 * and the run-time weights' dims are symbolic, so a run can feed any shape. */
static int build(const conv_case *c, uint8_t **bytes, size_t *size) {
  actx_model *m = actx_model_create(IR_VERSION, OPSET, 0);
  const int64_t x_dims[4] = {-1, C_IN, H, W}, x_const_dims[4] = {1, C_IN, H, W};
  const int64_t y_dims[4] = {-1, C_OUT, out_size(c, H), out_size(c, W)};
  const int64_t w_dims[4] = {C_OUT, C_IN / c->group, KERNEL, KERNEL}, b_dims[1] = {C_OUT};
  const int64_t w_symbolic[4] = {-1, -1, KERNEL, KERNEL};
  uint16_t x[C_IN * H * W], w[C_OUT * C_IN * KERNEL * KERNEL], b[C_OUT];
  fill_image(x, false);
  fill_uniform(w, w_count(c), 1, 0.5f);
  fill_uniform(b, C_OUT, 2, 1.0f);
  if (c->x == RUN_TIME) actx_model_add_input(m, "x", BF16, 4, x_dims, NULL);
  else actx_model_add_initializer(m, "x", BF16, 4, x_const_dims, x);
  for (size_t k = 0; k < 2; k++) {
    if (c->w == RUN_TIME) actx_model_add_input(m, g_w_names[k], BF16, 4, w_symbolic, NULL);
    else actx_model_add_initializer(m, g_w_names[k], BF16, 4, w_dims, w);
    if (c->b == RUN_TIME) actx_model_add_input(m, g_b_names[k], BF16, 1, b_dims, NULL);
    else if (c->b == CONSTANT) actx_model_add_initializer(m, g_b_names[k], BF16, 1, b_dims, b);
  }
  static const char *const out_names[3] = {"ya", "yb", "zb"};
  for (size_t i = 0; i < 3; i++) actx_model_add_output(m, out_names[i], BF16, 4, y_dims, NULL);
  static const char *const conv_names[2] = {"conv_a", "conv_b"}, *const conv_out[2] = {"ca", "zb"};
  for (size_t k = 0; k < 2; k++) {
    const char *in[3] = {"x", g_w_names[k], g_b_names[k]};
    actx_model_node *n = actx_model_add_named_node(m, conv_names[k], "Conv", "",
                                                   c->b == ABSENT ? 2 : 3, in, 1, &conv_out[k]);
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

/* CHECKs that the nodes named pair[0], pair[1] run on actx, as one compiled node of their own
 * (fused) or not. */
static void check_fused(const actx_ort_session *s, const char *const pair[2], bool fused,
                        const char *label) {
  ep_node_place p[2];
  for (size_t k = 0; k < 2; k++) {
    ep_node_place_of(s, pair[k], &p[k]);
    CHECK(strcmp(p[k].ep, "actx") == 0, "%s: node '%s' runs on '%s'", label, pair[k], p[k].ep);
  }
  if (fused)
    CHECK(p[0].subgraph == p[1].subgraph && p[0].members == 2,
          "%s: '%s' and '%s' are not one node of their own", label, pair[0], pair[1]);
  else
    CHECK(p[0].subgraph != p[1].subgraph && p[0].members == 1 && p[1].members == 1,
          "%s: '%s' and '%s' are not single nodes", label, pair[0], pair[1]);
}

/* The same for a Conv and its SiLU: conv, its Sigmoid and its Mul one node of their own
 * (fused), or conv alone and the SiLU one node (the exact activations' fusion). */
static void check_fused_silu(const actx_ort_session *s, const char *conv, const char *act,
                             bool fused, const char *label) {
  char sigmoid[64];
  snprintf(sigmoid, sizeof sigmoid, "%s_sigmoid", act);
  const char *const names[3] = {conv, sigmoid, act};
  ep_node_place p[3];
  for (size_t k = 0; k < 3; k++) {
    ep_node_place_of(s, names[k], &p[k]);
    CHECK(strcmp(p[k].ep, "actx") == 0, "%s: node '%s' runs on '%s'", label, names[k], p[k].ep);
  }
  if (fused)
    CHECK(p[0].subgraph == p[1].subgraph && p[0].subgraph == p[2].subgraph && p[0].members == 3,
          "%s: '%s' and its SiLU are not one node of their own", label, conv);
  else
    CHECK(p[0].members == 1 && p[1].subgraph == p[2].subgraph && p[1].members == 2,
          "%s: '%s' is not alone, or '%s' and '%s' not one node", label, conv, sigmoid, act);
}

typedef struct feeds {
  uint16_t x[C_IN * H * W], w[C_OUT * C_IN * KERNEL * KERNEL], b[C_OUT];
  actx_ort_tensor t[5];
  size_t n;
} feeds;

/* The run-time inputs of the case: x of n images (0 or 1), the weights. */
static void make_feeds(const conv_case *c, int64_t n, bool specials, feeds *f) {
  memset(f, 0, sizeof *f);
  fill_image(f->x, specials);
  fill_uniform(f->w, w_count(c), 1, 0.5f);
  fill_uniform(f->b, C_OUT, 2, 1.0f);
  if (c->x == RUN_TIME)
    f->t[f->n++] = (actx_ort_tensor){
        .name = "x", .elem_type = BF16, .rank = 4, .dims = {n, C_IN, H, W}, .data = f->x};
  for (size_t k = 0; k < 2; k++) {
    if (c->w == RUN_TIME)
      f->t[f->n++] = (actx_ort_tensor){.name = g_w_names[k], .elem_type = BF16, .rank = 4,
                                       .dims = {C_OUT, C_IN / c->group, KERNEL, KERNEL},
                                       .data = f->w};
    if (c->b == RUN_TIME)
      f->t[f->n++] = (actx_ort_tensor){
          .name = g_b_names[k], .elem_type = BF16, .rank = 1, .dims = {C_OUT}, .data = f->b};
  }
}

/* Runs s on n images; ya against yb (the two nodes), bit for bit, and both of the Conv's output
 * shape. */
static void check_run(actx_ort_session *s, const conv_case *c, const feeds *f, int64_t n,
                      const char *label) {
  actx_ort_tensor *out = NULL;
  size_t n_out = 0;
  actx_ort_error err;
  if (actx_ort_run(s, f->n, f->t, &out, &n_out, &err) != 0) {
    CHECK(false, "%s: run: %s", label, err.message);
    return;
  }
  const int64_t want[4] = {n, C_OUT, out_size(c, H), out_size(c, W)};
  bool shapes = n_out == 3;
  for (size_t i = 0; shapes && i < 3; i++)
    shapes = out[i].rank == 4 && memcmp(out[i].dims, want, sizeof want) == 0 &&
             out[i].bytes == ep_shape_count(4, want) * 2;
  CHECK(shapes, "%s: the outputs are not 3 of [%lld, %d, %lld, %lld]", label, (long long)n,
        C_OUT, (long long)want[2], (long long)want[3]);
  if (shapes) {
    const long d = ep_first_difference(out[0].data, out[1].data, out[0].bytes);
    CHECK(d < 0, "%s: fused %04x, the two nodes %04x at element %ld", label,
          d < 0 ? 0 : ((const uint16_t *)out[0].data)[d / 2],
          d < 0 ? 0 : ((const uint16_t *)out[1].data)[d / 2], d / 2);
    /* the activation did run: Conv B's result differs from its activation's somewhere */
    CHECK(n == 0 || ep_first_difference(out[1].data, out[2].data, out[1].bytes) >= 0,
          "%s: the activation changed nothing", label);
  }
  actx_ort_tensors_free(out, n_out);
}

static const char *source_name(source s) {
  return s == CONSTANT ? "constant" : s == RUN_TIME ? "an input" : "none";
}

static void check_case(const conv_case *c, int threads) {
  char label[192];
  snprintf(label, sizeof label,
           "Conv + %s (x %s, W %s, B %s, group %lld, pads %lld), %d thread(s)", c->act->op,
           source_name(c->x), source_name(c->w), source_name(c->b), (long long)c->group,
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
  static const char *const pair_a[2] = {"conv_a", "act_a"}, *const pair_b[2] = {"conv_b", "act_b"};
  if (is_silu(c->act)) {
    check_fused_silu(s, "conv_a", "act_a", true, label);
    check_fused_silu(s, "conv_b", "act_b", false, label);
  } else {
    check_fused(s, pair_a, true, label);
    check_fused(s, pair_b, false, label);
  }
  feeds f;
  for (int specials = 0; specials < 2; specials++) {
    make_feeds(c, 1, specials, &f);
    check_run(s, c, &f, 1, label);
    check_run(s, c, &f, 1, label); /* a second run of the same kernel */
  }
  if (c->x == RUN_TIME) { /* no image: empty results */
    make_feeds(c, 0, false, &f);
    check_run(s, c, &f, 0, label);
  }
  if (c->w == RUN_TIME) { /* Conv A's weights of the wrong shape: a clear status, no result */
    make_feeds(c, 1, false, &f);
    for (size_t i = 0; i < f.n; i++)
      if (strcmp(f.t[i].name, "wa") == 0)
        f.t[i].dims[1] = C_IN / c->group - 1; /* fewer elements: the buffer holds them */
    actx_ort_tensor *out = NULL;
    size_t n_out = 0;
    const int rc = actx_ort_run(s, f.n, f.t, &out, &n_out, &err);
    CHECK(rc != 0, "%s: W of %d channels ran", label, C_IN / (int)c->group - 1);
    if (rc == 0) actx_ort_tensors_free(out, n_out);
    else CHECK(strstr(err.message, "Conv 'conv_a'") != NULL && strstr(err.message, "channels"),
               "%s: the status names neither the Conv nor the channels: %s", label,
               err.message);
  }
  actx_ort_session_free(s);
  free(model);
}

/* A model of input x [1, C_IN, H, W], constant w and two Convs of them: conv[0] unpadded,
 * its result out[0], and conv[1] padded (two identical Convs would be merged by ORT), out[1];
 * outputs[0 .. n) graph outputs of the unpadded Conv's shape. The caller adds the rest. */
static actx_model *two_convs(const char *const conv[2], const char *const out[2],
                             const char *const *outputs, size_t n) {
  actx_model *m = actx_model_create(IR_VERSION, OPSET, 0);
  const int64_t x_dims[4] = {1, C_IN, H, W}, w_dims[4] = {C_OUT, C_IN, KERNEL, KERNEL};
  const int64_t y_dims[4] = {1, C_OUT, H - 2, W - 2};
  uint16_t w[C_OUT * C_IN * KERNEL * KERNEL];
  fill_uniform(w, sizeof w / sizeof w[0], 1, 0.5f);
  actx_model_add_input(m, "x", BF16, 4, x_dims, NULL);
  actx_model_add_initializer(m, "w", BF16, 4, w_dims, w);
  for (size_t i = 0; i < n; i++) actx_model_add_output(m, outputs[i], BF16, 4, y_dims, NULL);
  const char *in[2] = {"x", "w"};
  const int64_t pads[4] = {1, 1, 1, 1};
  actx_model_add_named_node(m, conv[0], "Conv", "", 2, in, 1, &out[0]);
  actx_model_node_attr_ints(actx_model_add_named_node(m, conv[1], "Conv", "", 2, in, 1, &out[1]),
                            "pads", 4, pads);
  return m;
}

/* m (freed) as a session under `auto` at 1 thread, or NULL (CHECKed); *bytes, the model, to
 * free after the session. */
static actx_ort_session *open_model(actx_model *m, const char *label, uint8_t **bytes) {
  size_t size = 0;
  *bytes = NULL;
  const int built = actx_model_serialize(m, bytes, &size);
  CHECK(built == 0, "%s: %s", label, actx_model_error(m));
  actx_model_free(m);
  if (built != 0) return NULL;
  const ep_session_spec spec = {.policy = "auto", .threads = 1};
  actx_ort_session *s = NULL;
  actx_ort_error err;
  if (ep_session_create(*bytes, size, &spec, &s, &err) != 0) {
    CHECK(false, "%s: %s", label, err.message);
    return NULL;
  }
  return s;
}

/* One run of s on an image: it must succeed. */
static void run_image(actx_ort_session *s, const char *label) {
  uint16_t x[C_IN * H * W];
  fill_image(x, false);
  const actx_ort_tensor t = {.elem_type = BF16, .rank = 4, .dims = {1, C_IN, H, W}, .data = x};
  actx_ort_tensor *out = NULL;
  size_t n_out = 0;
  actx_ort_error err;
  CHECK(actx_ort_run(s, 1, &t, &out, &n_out, &err) == 0, "%s: run: %s", label, err.message);
  actx_ort_tensors_free(out, n_out);
}

/* x -> conv_d -> relu_d, whose result nothing reads, beside a read pair: the read pair is one
 * node, the unread one two; the session runs. */
static void check_unread(void) {
  static const char *const convs[2] = {"conv", "conv_d"}, *const outs[2] = {"c", "cd"};
  static const char *const outputs[1] = {"y"};
  actx_model *m = two_convs(convs, outs, outputs, 1);
  add_activation(m, &g_activations[0], "relu", "c", "y");
  add_activation(m, &g_activations[0], "relu_d", "cd", "unread");
  uint8_t *model = NULL;
  actx_ort_session *s = open_model(m, "unread", &model);
  if (s != NULL) {
    static const char *const read[2] = {"conv", "relu"}, *const unread[2] = {"conv_d", "relu_d"};
    check_fused(s, read, true, "unread");
    check_fused(s, unread, false, "unread");
    run_image(s, "unread");
    actx_ort_session_free(s);
  }
  free(model);
}

/* Conv t's result read by its SiLU and by a Relu as well; Conv u's SiLU's result read by
 * nothing: neither Conv is one node with its SiLU (Conv t's SiLU is the exact activations' one
 * node); the session runs. */
static void check_silu_declined(void) {
  const activation *silu = &g_activations[N_ACTIVATIONS - 1];
  static const char *const convs[2] = {"conv_t", "conv_u"}, *const outs[2] = {"ct", "cu"};
  static const char *const outputs[2] = {"yt", "rt"};
  actx_model *m = two_convs(convs, outs, outputs, 2);
  add_activation(m, silu, "silu_t", "ct", "yt");
  add_activation(m, &g_activations[0], "relu_t", "ct", "rt");
  add_activation(m, silu, "silu_u", "cu", "unread");
  uint8_t *model = NULL;
  actx_ort_session *s = open_model(m, "SiLU declined", &model);
  if (s != NULL) {
    check_fused_silu(s, "conv_t", "silu_t", false, "SiLU and a Relu");
    ep_node_place conv_u;
    ep_node_place_of(s, "conv_u", &conv_u);
    CHECK(strcmp(conv_u.ep, "actx") == 0 && conv_u.members == 1,
          "SiLU unread: conv_u runs on '%s' in a node of %zu", conv_u.ep, conv_u.members);
    run_image(s, "SiLU declined");
    actx_ort_session_free(s);
  }
  free(model);
}

/* The pair inside both branches of an If, its weights initializers of the main graph: each
 * branch's pair is one node, and both give the bits of the flat model's two nodes (yb). */
static void check_if_branches(void) {
  const conv_case c = {&g_activations[1], RUN_TIME, CONSTANT, CONSTANT, 1, 1}; /* HardSwish */
  const int64_t x_dims[4] = {1, C_IN, H, W}, w_dims[4] = {C_OUT, C_IN, KERNEL, KERNEL};
  const int64_t b_dims[1] = {C_OUT}, y_dims[4] = {1, C_OUT, H, W};
  uint16_t w[C_OUT * C_IN * KERNEL * KERNEL], b[C_OUT];
  fill_uniform(w, w_count(&c), 1, 0.5f);
  fill_uniform(b, C_OUT, 2, 1.0f);
  actx_model *m = actx_model_create(IR_VERSION, OPSET, 0);
  actx_model_add_input(m, "x", BF16, 4, x_dims, NULL);
  actx_model_add_input(m, "cond", ACTX_ELEM_BOOL, 0, NULL, NULL);
  actx_model_add_initializer(m, "wa", BF16, 4, w_dims, w);
  actx_model_add_initializer(m, "ba", BF16, 1, b_dims, b);
  actx_model_add_output(m, "y", BF16, 4, y_dims, NULL);
  const char *cond[1] = {"cond"}, *y[1] = {"y"};
  actx_model_node *if_node = actx_model_add_named_node(m, "if", "If", "", 1, cond, 1, y);
  static const char *const branch_names[2] = {"then_branch", "else_branch"};
  static const char *const pairs[2][2] = {{"conv_0", "act_0"}, {"conv_1", "act_1"}};
  for (size_t k = 0; k < 2; k++) {
    actx_model *g = actx_part_if_branch(BF16, 4, y_dims, NULL);
    const char *in[3] = {"x", "wa", "ba"}, *ci[1] = {"ci"};
    const int64_t pads[4] = {1, 1, 1, 1};
    actx_model_node_attr_ints(actx_model_add_named_node(g, pairs[k][0], "Conv", "", 3, in, 1, ci),
                              "pads", 4, pads);
    add_activation(g, c.act, pairs[k][1], "ci", ACTX_PART_OUT);
    actx_model_node_attr_graph(if_node, branch_names[k], g); /* takes g */
  }
  uint8_t *nested = NULL, *flat = NULL;
  size_t nested_size = 0, flat_size = 0;
  const int built = actx_model_serialize(m, &nested, &nested_size);
  CHECK(built == 0, "If: %s", actx_model_error(m));
  actx_model_free(m);
  const int flat_built = built == 0 ? build(&c, &flat, &flat_size) : -1;
  CHECK(built != 0 || flat_built == 0, "If: the flat model");
  const ep_session_spec spec = {.policy = "auto", .threads = 2};
  actx_ort_session *sn = NULL, *sf = NULL;
  actx_ort_error err;
  if (built != 0 || flat_built != 0) {
    /* CHECKed above */
  } else if (ep_session_create(nested, nested_size, &spec, &sn, &err) != 0) {
    CHECK(false, "If: %s", err.message);
  } else if (ep_session_create(flat, flat_size, &spec, &sf, &err) != 0) {
    CHECK(false, "If, flat: %s", err.message);
  } else {
    check_fused(sn, pairs[0], true, "If");
    check_fused(sn, pairs[1], true, "If");
    feeds f;
    make_feeds(&c, 1, true, &f);
    actx_ort_tensor *want = NULL;
    size_t n_want = 0;
    const int rc = actx_ort_run(sf, f.n, f.t, &want, &n_want, &err);
    CHECK(rc == 0 && n_want == 3, "If, flat: %s", rc == 0 ? "not 3 outputs" : err.message);
    for (int k = 0; k < 2 && rc == 0 && n_want == 3; k++) {
      const bool c_value = k == 0;
      const actx_ort_tensor t[2] = {
          f.t[0], {.name = "cond", .elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL,
                   .data = (void *)&c_value}};
      actx_ort_tensor *got = NULL;
      size_t n_got = 0;
      if (actx_ort_run(sn, 2, t, &got, &n_got, &err) != 0) {
        CHECK(false, "If, cond %d: %s", c_value, err.message);
        continue;
      }
      CHECK(n_got == 1 && got[0].bytes == want[1].bytes &&
                ep_first_difference(got[0].data, want[1].data, got[0].bytes) < 0,
            "If, cond %d: not the two nodes' bits", c_value);
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
  /* the wrong-shape runs fail on purpose: ORT would log each at error level */
  setenv("ACTX_ORT_LOG", "fatal", 0);
  for (size_t a = 0; a < N_ACTIVATIONS; a++)
    for (source w = CONSTANT; w <= RUN_TIME; w++)
      for (int threads = 1; threads <= 2; threads++) {
        const conv_case c = {&g_activations[a], RUN_TIME, w, CONSTANT, 1, 1};
        check_case(&c, threads);
      }
  const conv_case more[] = {
      {&g_activations[1], RUN_TIME, CONSTANT, CONSTANT, C_IN, 0}, /* depthwise, unpadded */
      {&g_activations[0], RUN_TIME, CONSTANT, RUN_TIME, 1, 1},    /* B at run time */
      {&g_activations[2], RUN_TIME, RUN_TIME, ABSENT, 1, 2},      /* no B */
      {&g_activations[3], CONSTANT, RUN_TIME, CONSTANT, 1, 1},    /* x a constant: copied */
  };
  for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) check_case(&more[i], 2);
  check_unread();
  check_silu_declined();
  check_if_branches();
  printf("%s\n", g_failures ? "FAILED" : "ok");
  return g_failures ? 1 : 0;
}
