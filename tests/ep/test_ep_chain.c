/* Chains of claimed nodes: session creation stays linear, and the results stay ORT's.
 *
 * usage: test_ep_chain <absolute path of libactx_ep.so>
 *
 * ORT's partitioner checks each group of nodes an EP asks to fuse against the whole graph, so
 * one group per claimed node made session creation grow with the cube of their number (1000
 * separately claimed nodes: 7-9 s, ORT alone 0.015 s). The EP now hands ORT a run of claims that
 * follow one another as one group, which one compiled node computes step by step. Checked here:
 *   - a chain of 1000 claimed nodes is created in about ORT alone's time, and runs with its bits;
 *   - so are 1000 claimed nodes side by side (single nodes, run as registered kernels);
 *   - mixed chains (single nodes, fused subgraphs, a constant bias, a bias that is a graph input)
 *     give ORT alone's bits, with and without a thread pool, on tensors large enough to split;
 *   - chains that must not become one group: an intermediate read by a node we do not claim, or
 *     a graph output, or a bias computed from an earlier value of the chain (a path that leaves
 *     the group and comes back, which ORT refuses): the nodes still run on actx, with ORT's
 *     bits;
 *   - the same chain in a Loop body.
 * Every comparison is ORT alone against ORT + actx (policy all), bit for bit. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ep_test.h"

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* What one link of a chain is. */
typedef enum link_kind {
  LINK_ERF,
  LINK_TANH,
  LINK_SIGMOID,
  LINK_GELU,        /* ai.onnx Gelu-20 */
  LINK_BIAS_GELU,   /* com.microsoft BiasGelu, bias a constant */
  LINK_BIAS_INPUT,  /* com.microsoft FastGelu, bias the graph input "bias" */
  LINK_SILU,        /* x·Sigmoid(x): a fused subgraph */
  LINK_ERF_GELU,    /* Div √2 → Erf → Add 1 → Mul x → Mul 0.5: a fused subgraph */
  LINK_FAN_OUT,     /* Tanh, whose output an Abs (not ours) reads too, added to the end */
  LINK_OUTPUT,      /* Sigmoid, whose output is also a graph output */
  LINK_LOOPED_BIAS, /* BiasGelu whose bias is Neg(the chain's value one link back) */
  LINK_KIND_COUNT
} link_kind;

#define COLS 512

typedef struct chain {
  actx_model *m;
  char value[32]; /* the chain's current value */
  char prev[32];  /* the one before */
  int nodes;      /* how many nodes were added */
  int ours;       /* how many of them actx can run */
  int extra_outputs;
  char side[8][32]; /* values an unclaimed node reads, joined at the end */
  int n_side;
} chain;

static void next_value(chain *c, char *out) {
  snprintf(out, 32, "v%d", c->nodes);
}

static void add(chain *c, const char *op, const char *domain, size_t n_in, const char *const *in,
                const char *out, bool ours) {
  actx_model_add_node(c->m, op, domain, n_in, in, 1, (const char *[]){out});
  c->nodes++;
  c->ours += ours;
}

static void add_link(chain *c, link_kind kind, int64_t rows, bool in_loop) {
  char y[32], t[40], u[40];
  const char *x = c->value;
  next_value(c, y);
  switch (kind) {
    case LINK_ERF: add(c, "Erf", "", 1, (const char *[]){x}, y, true); break;
    case LINK_TANH:
    case LINK_FAN_OUT: add(c, "Tanh", "", 1, (const char *[]){x}, y, true); break;
    case LINK_SIGMOID:
    case LINK_OUTPUT: add(c, "Sigmoid", "", 1, (const char *[]){x}, y, true); break;
    case LINK_GELU: add(c, "Gelu", "", 1, (const char *[]){x}, y, true); break;
    case LINK_BIAS_GELU:
    case LINK_BIAS_INPUT:
    case LINK_LOOPED_BIAS: {
      char b[32];
      if (kind == LINK_BIAS_INPUT) {
        snprintf(b, sizeof b, "bias");
      } else if (kind == LINK_BIAS_GELU) {
        float bias[COLS];
        ep_fill_inputs(ACTX_ELEM_FLOAT, bias, COLS, (uint64_t)c->nodes);
        for (int i = 0; i < COLS; i++)
          if (!(bias[i] > -1e3f && bias[i] < 1e3f)) bias[i] = 0.25f * (float)(i % 9) - 1.0f;
        snprintf(b, sizeof b, "b%d", c->nodes);
        actx_model_add_initializer(c->m, b, ACTX_ELEM_FLOAT, 1, (const int64_t[]){COLS}, bias);
      } else { /* a bias of the chain's own earlier value: not 1-D, so a Slice of it */
        char r[32];
        snprintf(r, sizeof r, "r%d", c->nodes);
        snprintf(b, sizeof b, "b%d", c->nodes);
        const int64_t starts[2] = {0, 0}, ends[2] = {1, COLS};
        char s0[32], s1[32], ax[32];
        snprintf(s0, sizeof s0, "s0_%d", c->nodes);
        snprintf(s1, sizeof s1, "s1_%d", c->nodes);
        snprintf(ax, sizeof ax, "ax_%d", c->nodes);
        actx_model_add_initializer(c->m, s0, ACTX_ELEM_INT64, 1, (const int64_t[]){2}, starts);
        actx_model_add_initializer(c->m, s1, ACTX_ELEM_INT64, 1, (const int64_t[]){2}, ends);
        const int64_t shape[1] = {COLS};
        actx_model_add_initializer(c->m, ax, ACTX_ELEM_INT64, 1, (const int64_t[]){1}, shape);
        add(c, "Slice", "", 3, (const char *[]){c->prev[0] ? c->prev : x, s0, s1}, r, false);
        add(c, "Reshape", "", 2, (const char *[]){r, ax}, b, false);
        next_value(c, y);
      }
      add(c, kind == LINK_BIAS_INPUT ? "FastGelu" : "BiasGelu", ACTX_MODEL_MS_DOMAIN, 2,
          (const char *[]){x, b}, y, true);
      break;
    }
    case LINK_SILU:
      snprintf(t, sizeof t, "%s_s", y);
      add(c, "Sigmoid", "", 1, (const char *[]){x}, t, true);
      add(c, "Mul", "", 2, (const char *[]){x, t}, y, true);
      break;
    case LINK_ERF_GELU:
      /* (0.5·x)·(1 + erf(x/√2)): at opset 20 ORT's level-1 GeluFusion makes one Gelu node of
       * the five, whatever produces x */
      snprintf(t, sizeof t, "%s_a", y);
      snprintf(u, sizeof u, "%s_e", y);
      add(c, "Div", "", 2, (const char *[]){x, "sqrt2"}, t, false);
      add(c, "Erf", "", 1, (const char *[]){t}, u, false);
      snprintf(t, sizeof t, "%s_f", y);
      add(c, "Add", "", 2, (const char *[]){u, "one"}, t, false);
      snprintf(u, sizeof u, "%s_h", y);
      add(c, "Mul", "", 2, (const char *[]){x, "half"}, u, false);
      add(c, "Mul", "", 2, (const char *[]){u, t}, y, true);
      break;
    case LINK_KIND_COUNT: break;
  }
  if (kind == LINK_FAN_OUT && c->n_side < 8) {
    snprintf(c->side[c->n_side], 32, "side%d", c->nodes);
    add(c, "Abs", "", 1, (const char *[]){y}, c->side[c->n_side++], false);
  }
  if (kind == LINK_OUTPUT && !in_loop) { /* a Loop body's outputs are the Loop's */
    const int64_t dims[2] = {rows, COLS};
    actx_model_add_output(c->m, y, ACTX_ELEM_FLOAT, 2, dims, NULL);
    c->extra_outputs++;
  }
  snprintf(c->prev, sizeof c->prev, "%s", c->value);
  snprintf(c->value, sizeof c->value, "%s", y);
}

/* Builds x → links → y (plus the side values, added to y by nodes we do not claim). */
static int build_chain(const link_kind *links, size_t n_links, int64_t rows, bool in_loop,
                       uint8_t **bytes, size_t *size, int *ours) {
  const int64_t dims[2] = {rows, COLS};
  chain c = {.m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, 20, 1)};
  actx_model *outer = NULL;
  if (in_loop) {
    outer = c.m;
    c.m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, 20, 1);
    actx_model_add_input(c.m, "i", ACTX_ELEM_INT64, 0, NULL, NULL);
    actx_model_add_input(c.m, "c_in", ACTX_ELEM_BOOL, 0, NULL, NULL);
    actx_model_add_input(c.m, "v_in", ACTX_ELEM_FLOAT, 2, dims, NULL);
    actx_model_add_node(c.m, "Identity", "", 1, (const char *[]){"c_in"}, 1,
                        (const char *[]){"c_out"});
    actx_model_add_output(c.m, "c_out", ACTX_ELEM_BOOL, 0, NULL, NULL);
    snprintf(c.value, sizeof c.value, "v_in");
  } else {
    actx_model_add_input(c.m, "x", ACTX_ELEM_FLOAT, 2, dims, NULL);
    snprintf(c.value, sizeof c.value, "x");
  }
  actx_model *g = in_loop ? outer : c.m;
  actx_model_add_input(g, "bias", ACTX_ELEM_FLOAT, 1, (const int64_t[]){COLS}, NULL);
  const float sqrt2 = 1.41421356f, one = 1.0f, half = 0.5f;
  actx_model_add_initializer(c.m, "sqrt2", ACTX_ELEM_FLOAT, 0, NULL, &sqrt2);
  actx_model_add_initializer(c.m, "one", ACTX_ELEM_FLOAT, 0, NULL, &one);
  actx_model_add_initializer(c.m, "half", ACTX_ELEM_FLOAT, 0, NULL, &half);
  for (size_t i = 0; i < n_links; i++) add_link(&c, links[i], rows, in_loop);
  for (int i = 0; i < c.n_side; i++) {
    char y[32];
    next_value(&c, y);
    add(&c, "Add", "", 2, (const char *[]){c.value, c.side[i]}, y, false);
    snprintf(c.value, sizeof c.value, "%s", y);
  }
  const char *final = in_loop ? "v_out" : "y";
  add(&c, "Identity", "", 1, (const char *[]){c.value}, final, false);
  actx_model_add_output(c.m, final, ACTX_ELEM_FLOAT, 2, dims, NULL);
  if (in_loop) {
    const int64_t trips = 2;
    const uint8_t yes = 1;
    actx_model_add_input(outer, "x", ACTX_ELEM_FLOAT, 2, dims, NULL);
    actx_model_add_output(outer, "y", ACTX_ELEM_FLOAT, 2, dims, NULL);
    actx_model_add_initializer(outer, "trips", ACTX_ELEM_INT64, 0, NULL, &trips);
    actx_model_add_initializer(outer, "keep_going", ACTX_ELEM_BOOL, 0, NULL, &yes);
    actx_model_node *loop = actx_model_add_named_node(
        outer, "loop", "Loop", "", 3, (const char *[]){"trips", "keep_going", "x"}, 1,
        (const char *[]){"y"});
    actx_model_node_attr_graph(loop, "body", c.m);
    c.m = outer;
  }
  *ours = c.ours;
  const int rc = actx_model_serialize(c.m, bytes, size);
  if (rc != 0) printf("chain: %s\n", actx_model_error(c.m));
  actx_model_free(c.m);
  return rc;
}

static float *g_x, g_bias[COLS];

/* ORT alone vs ORT + actx on a chain; returns the nodes on actx (-1 on failure). */
static long check_chain(const link_kind *links, size_t n_links, int64_t rows, bool in_loop,
                        int threads, const char *label, int *ours) {
  uint8_t *bytes = NULL;
  size_t size = 0;
  if (build_chain(links, n_links, rows, in_loop, &bytes, &size, ours) != 0) {
    CHECK(false, "%s: model", label);
    return -1;
  }
  const actx_ort_tensor in[2] = {
      {.name = "x",
       .elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
       .rank = 2,
       .dims = {rows, COLS},
       .data = g_x},
      {.name = "bias",
       .elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
       .rank = 1,
       .dims = {COLS},
       .data = g_bias},
  };
  const ep_session_spec spec = {.policy = "all", .threads = threads};
  const long on_actx = ep_check_against_ort(bytes, size, &spec, 2, in, label);
  free(bytes);
  return on_actx;
}

/* Creates the model's session with ORT alone and with actx (policy all): with actx, `ours` nodes
 * on actx, and a creation time no further from ORT alone's than a linear cost allows (a bound
 * that only a superlinear partitioning crosses, not a timing). */
static void check_creation(const uint8_t *bytes, size_t size, long ours, const char *label) {
  double took[2] = {0, 0};
  for (int p = 0; p < 2; p++) {
    const ep_session_spec spec = {.policy = p ? "all" : NULL, .threads = 1};
    actx_ort_session *s = NULL;
    actx_ort_error err;
    const double t0 = seconds();
    const int rc = ep_session_create(bytes, size, &spec, &s, &err);
    took[p] = seconds() - t0;
    CHECK(rc == 0, "%s, %s: %s", label, p ? "actx" : "ORT alone", err.message);
    if (rc == 0 && p == 1) {
      const long on_actx = actx_ort_count_nodes_on(s, "actx", &err);
      CHECK(on_actx == ours, "%s: %ld of %ld nodes on actx", label, on_actx, ours);
    }
    actx_ort_session_free(s);
  }
  printf("  %ld claimed nodes %s: session created in %.3f s (ORT alone %.3f s)\n", ours, label,
         took[1], took[0]);
  CHECK(took[1] <= 1.0 + 10 * took[0], "%s: %.3f s to create the session (ORT alone %.3f)", label,
        took[1], took[0]);
}

/* 1000 separately claimed nodes: creation in about ORT alone's time. */
static void test_long_chain(void) {
  enum { N = 1000 };
  static link_kind links[N];
  static const link_kind cycle[] = {LINK_ERF, LINK_TANH, LINK_SIGMOID, LINK_GELU, LINK_BIAS_GELU};
  for (int i = 0; i < N; i++) links[i] = cycle[i % 5];
  uint8_t *bytes = NULL;
  size_t size = 0;
  int ours = 0;
  if (build_chain(links, N, 1, false, &bytes, &size, &ours) != 0) {
    CHECK(false, "long chain: model");
    return;
  }
  /* one group per node took 7-9 s */
  check_creation(bytes, size, ours, "in a chain");
  /* and the results */
  const actx_ort_tensor in[2] = {
      {.name = "x", .elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, .rank = 2, .dims = {1, COLS},
       .data = g_x},
      {.name = "bias", .elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, .rank = 1,
       .dims = {COLS}, .data = g_bias},
  };
  const ep_session_spec spec = {.policy = "all", .threads = 1};
  ep_check_against_ort(bytes, size, &spec, 2, in, "long chain");
  free(bytes);
}

/* 1000 claimed nodes that all read x, none another's output: no two of them are one group, so
 * each is a single node ORT runs with the EP's registered kernel (AddSingleNode, which ORT does
 * not check against the whole graph as it does a group to fuse): creation in about ORT alone's
 * time too, and ORT's bits. */
static void test_wide_fan(void) {
  enum { N = 1000 };
  static const char *const cycle[] = {"Erf", "Tanh", "Sigmoid", "Gelu"};
  const int64_t dims[2] = {1, COLS};
  actx_model *m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, 20, 1);
  actx_model_add_input(m, "x", ACTX_ELEM_FLOAT, 2, dims, NULL);
  for (int i = 0; i < N; i++) {
    char y[32];
    snprintf(y, sizeof y, "y%d", i);
    actx_model_add_node(m, cycle[i % 4], "", 1, (const char *[]){"x"}, 1, (const char *[]){y});
    actx_model_add_output(m, y, ACTX_ELEM_FLOAT, 2, dims, NULL);
  }
  uint8_t *bytes = NULL;
  size_t size = 0;
  const int rc = actx_model_serialize(m, &bytes, &size);
  actx_model_free(m);
  if (rc != 0) {
    CHECK(false, "wide fan: model");
    return;
  }
  check_creation(bytes, size, N, "side by side");
  const actx_ort_tensor in[1] = {{.name = "x", .elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
                                  .rank = 2, .dims = {1, COLS}, .data = g_x}};
  const ep_session_spec spec = {.policy = "all", .threads = 1};
  ep_check_against_ort(bytes, size, &spec, 1, in, "wide fan");
  free(bytes);
}

/* Under `auto`, a node the table declines joins the claim it directly follows (ep.c,
 * follows_claim); before the first claim nothing changes. Erf f32 is declined by both host
 * classes' tables, Tanh at 2 Ki too, BiasGelu always claimed. */
static void test_auto_joins(void) {
  static const struct {
    const char *label;
    link_kind links[4];
    size_t n_links;
    long want_on_actx;
  } joins[] = {
      {"auto: BiasGelu, then declined Erf, Tanh, Erf", {LINK_BIAS_GELU, LINK_ERF, LINK_TANH, LINK_ERF}, 4, 4},
      {"auto: declined Erf before the first claim", {LINK_ERF, LINK_BIAS_GELU, LINK_ERF}, 3, 2},
  };
  const actx_ort_tensor in[2] = {
      {.name = "x", .elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, .rank = 2, .dims = {4, COLS},
       .data = g_x},
      {.name = "bias", .elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, .rank = 1,
       .dims = {COLS}, .data = g_bias},
  };
  for (size_t i = 0; i < sizeof joins / sizeof joins[0]; i++) {
    uint8_t *bytes = NULL;
    size_t size = 0;
    int ours = 0;
    if (build_chain(joins[i].links, joins[i].n_links, 4, false, &bytes, &size, &ours) != 0) {
      CHECK(false, "%s: model", joins[i].label);
      continue;
    }
    const ep_session_spec spec = {.policy = "auto", .threads = 1};
    const long on_actx = ep_check_against_ort(bytes, size, &spec, 2, in, joins[i].label);
    CHECK(on_actx == joins[i].want_on_actx, "%s: %ld nodes on actx, want %ld", joins[i].label,
          on_actx, joins[i].want_on_actx);
    free(bytes);
  }
}

typedef struct chain_case {
  const char *label;
  link_kind links[12];
  size_t n_links;
} chain_case;

static const chain_case cases[] = {
    {"singles", {LINK_ERF, LINK_TANH, LINK_SIGMOID, LINK_GELU, LINK_ERF}, 5},
    {"biases", {LINK_BIAS_GELU, LINK_TANH, LINK_BIAS_INPUT, LINK_BIAS_GELU, LINK_SIGMOID}, 5},
    {"subgraphs", {LINK_SILU, LINK_ERF_GELU, LINK_TANH, LINK_SILU, LINK_BIAS_GELU, LINK_ERF_GELU},
     6},
    {"fan-out", {LINK_ERF, LINK_FAN_OUT, LINK_SIGMOID, LINK_FAN_OUT, LINK_TANH}, 5},
    {"graph output", {LINK_TANH, LINK_OUTPUT, LINK_ERF, LINK_OUTPUT, LINK_SIGMOID}, 5},
    {"bias from the chain", {LINK_TANH, LINK_ERF, LINK_LOOPED_BIAS, LINK_SIGMOID}, 4},
    {"everything",
     {LINK_SILU, LINK_FAN_OUT, LINK_BIAS_INPUT, LINK_OUTPUT, LINK_ERF_GELU, LINK_LOOPED_BIAS,
      LINK_GELU, LINK_BIAS_GELU, LINK_ERF, LINK_SILU},
     10},
};

int main(int argc, char **argv) {
  if (ep_test_init(argc, argv) != 0) return 2;
  enum { MAX_ROWS = 540 }; /* 276 480 elements: every op splits over ORT's pool */
  g_x = malloc((size_t)MAX_ROWS * COLS * sizeof *g_x);
  ep_fill_inputs(ACTX_ELEM_FLOAT, g_x, (size_t)MAX_ROWS * COLS, 17);
  ep_fill_inputs(ACTX_ELEM_FLOAT, g_bias, COLS, 18);
  for (int i = 0; i < COLS; i++) /* a finite bias: a NaN one would hide the input's */
    if (!(g_bias[i] > -1e3f && g_bias[i] < 1e3f)) g_bias[i] = 0.125f * (float)(i % 11);
  test_long_chain();
  test_wide_fan();
  test_auto_joins();
  static const int64_t rows[] = {4, MAX_ROWS};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (int r = 0; r < 2; r++)
      for (int loop = 0; loop < 2; loop++)
        for (int threads = 1; threads <= 2; threads++) {
          char label[128];
          snprintf(label, sizeof label, "%s%s, %lld x %d, %d threads", cases[i].label,
                   loop ? " (Loop body)" : "", (long long)rows[r], COLS, threads);
          int ours = 0;
          const long on_actx =
              check_chain(cases[i].links, cases[i].n_links, rows[r], loop, threads, label, &ours);
          CHECK(on_actx < 0 || on_actx == ours, "%s: %ld of the %d nodes actx can run on it",
                label, on_actx, ours);
        }
  free(g_x);
  actx_ort_shutdown();
  printf("%d failures\n", g_failures);
  return g_failures ? 1 : 0;
}
