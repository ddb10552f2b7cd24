/* Every operator the EP claims, against ORT's own kernel: the same bits.
 *
 * usage: test_ep_ops <absolute path of libactx_ep.so>
 *
 * For each operator (every served since-version and attribute form) and a set of shapes (N = 1,
 * N = 0, a scalar, [3,1,5], odd lengths, one large enough to be split over ORT's pool), builds
 * a one-node model and runs random and special inputs through ORT alone and through ORT + actx
 * (policy all, 1 and 2 intra-op threads); float32 inputs include those where ORT's FMA3 and
 * AVX-512F kernels differ (ep_plant_rule_inputs). float32 output must be bit-identical to
 * ORT's, and the node must have run on actx. float16 / bfloat16 outputs must equal libactx's
 * own result (ORT's CPU EP has no kernel for most of them). A model with symbolic dimensions
 * checks the same with the shapes only known at run time.
 *
 * A lone claimed node runs as a kernel from the EP's registry, not as a compiled node; ORT can
 * save a session's optimised graph only when no EP compiled a node, which tells the two apart:
 * every case here checks it ran as a registered kernel. One session per operator with a
 * symbolic dimension then runs small, large (split over the pool) and small inputs in turn,
 * each against ORT alone's session for the same sizes. */
#include <stdlib.h>
#include <string.h>

#include "actx.h"
#include "ep_test.h"

typedef struct op_case {
  const char *label;
  ep_model_spec spec; /* rank/dims/elem_type filled per shape */
  actx_op_desc desc;  /* what libactx computes (bias filled at run time) */
} op_case;

#define MS ACTX_MODEL_MS_DOMAIN

static const op_case cases[] = {
    {"Erf-13", {.op_type = "Erf", .domain = ""}, {.op = ACTX_OP_ERF}},
    {"Erf-9", {.op_type = "Erf", .domain = "", .onnx_opset = 11}, {.op = ACTX_OP_ERF}},
    {"Gelu-20", {.op_type = "Gelu", .domain = ""}, {.op = ACTX_OP_GELU}},
    {"Gelu-20(none)",
     {.op_type = "Gelu", .domain = "", .approximate = "none"},
     {.op = ACTX_OP_GELU}},
    {"Gelu-20(tanh)",
     {.op_type = "Gelu", .domain = "", .approximate = "tanh"},
     {.op = ACTX_OP_GELU_TANH}},
    {"Tanh-13", {.op_type = "Tanh", .domain = ""}, {.op = ACTX_OP_TANH}},
    {"Tanh-6", {.op_type = "Tanh", .domain = "", .onnx_opset = 11}, {.op = ACTX_OP_TANH}},
    {"Sigmoid-13", {.op_type = "Sigmoid", .domain = ""}, {.op = ACTX_OP_SIGMOID}},
    {"Sigmoid-6", {.op_type = "Sigmoid", .domain = "", .onnx_opset = 11}, {.op = ACTX_OP_SIGMOID}},
    {"ms.Gelu", {.op_type = "Gelu", .domain = MS}, {.op = ACTX_OP_GELU}},
    {"ms.BiasGelu", {.op_type = "BiasGelu", .domain = MS, .bias = true}, {.op = ACTX_OP_GELU}},
    {"ms.FastGelu", {.op_type = "FastGelu", .domain = MS}, {.op = ACTX_OP_GELU_TANH}},
    {"ms.FastGelu(bias)",
     {.op_type = "FastGelu", .domain = MS, .bias = true},
     {.op = ACTX_OP_GELU_TANH}},
    {"ms.QuickGelu",
     {.op_type = "QuickGelu", .domain = MS},
     {.op = ACTX_OP_QUICK_GELU, .alpha = ACTX_QUICK_GELU_DEFAULT_ALPHA}},
    {"ms.QuickGelu(alpha=1)",
     {.op_type = "QuickGelu", .domain = MS, .has_alpha = true, .alpha = 1.0f},
     {.op = ACTX_OP_QUICK_GELU, .alpha = 1.0f}},
    {"ms.QuickGelu(alpha=-0.375)",
     {.op_type = "QuickGelu", .domain = MS, .has_alpha = true, .alpha = -0.375f},
     {.op = ACTX_OP_QUICK_GELU, .alpha = -0.375f}},
};
#define N_CASES (sizeof cases / sizeof cases[0])

/* Where check_case lets ORT save the optimised graph (removed at the end). */
#define OPTIMIZED_PATH "ep_ops_optimized.onnx"

typedef struct shape {
  size_t rank;
  int64_t dims[4];
} shape;

static const shape shapes[] = {
    {1, {1}},       {1, {0}},        {0, {0}},       {3, {3, 1, 5}},  {3, {2, 0, 7}}, {1, {33}},
    {2, {1, 1024}}, {3, {2, 3, 67}}, {2, {5, 4099}}, {1, {512}},      {2, {6, 512}},
    /* split over ORT's pool at 2 threads: 120000 elements for erf and GELU, 270000 for every
     * op (ep/compute.c's thresholds: 64 Ki and 128 Ki) */
    {2, {3, 40000}}, {2, {3, 90000}},
};
#define N_SHAPES (sizeof shapes / sizeof shapes[0])

static const int32_t elem_types[] = {ACTX_ELEM_FLOAT, ACTX_ELEM_FLOAT16, ACTX_ELEM_BFLOAT16};

static actx_dtype dtype_of(int32_t elem_type) {
  return elem_type == ACTX_ELEM_FLOAT16    ? ACTX_F16
         : elem_type == ACTX_ELEM_BFLOAT16 ? ACTX_BF16
                                           : ACTX_F32;
}

/* Runs x (and bias) through a session; checks the node ran where expected. */
static void *run_session(const uint8_t *model, size_t size, const char *policy, int threads,
                         const char *label, const char *expect_ep, int32_t elem_type, const void *x,
                         const shape *sh, const void *bias, size_t bias_rank,
                         const int64_t *bias_dims, size_t *y_bytes) {
  const ep_session_spec spec = {.policy = policy, .threads = threads};
  actx_ort_session *s = NULL;
  actx_ort_error err;
  if (ep_session_create(model, size, &spec, &s, &err) != 0) {
    if (policy != NULL) CHECK(false, "%s: session with actx: %s", label, err.message);
    return NULL;
  }
  char ep[64];
  ep_node_ep(s, EP_TEST_NODE, ep, sizeof ep);
  if (expect_ep != NULL) CHECK(strcmp(ep, expect_ep) == 0, "%s: node ran on '%s'", label, ep);
  void *y = ep_run(s, elem_type, x, sh->rank, sh->dims, bias, bias_rank, bias_dims, y_bytes);
  CHECK(y != NULL, "%s: run (policy %s, %d threads)", label, policy ? policy : "-", threads);
  actx_ort_session_free(s);
  return y;
}

/* One operator, one element type, one shape; `symbolic`: the model's dims are all symbolic. */
static void check_case(const op_case *c, int32_t elem_type, const shape *sh, bool symbolic,
                       uint64_t seed) {
  /* BiasGelu / FastGelu need a last dimension (ORT rejects a scalar; test_ep_declines) */
  if ((strcmp(c->spec.op_type, "BiasGelu") == 0 || strcmp(c->spec.op_type, "FastGelu") == 0) &&
      sh->rank == 0)
    return;
  char label[160];
  snprintf(label, sizeof label, "%s %s [%zu:%lld,%lld,%lld]%s", c->label, actx_elem_name(elem_type),
           sh->rank, (long long)sh->dims[0], (long long)sh->dims[1], (long long)sh->dims[2],
           symbolic ? " symbolic" : "");

  ep_model_spec spec = c->spec;
  spec.elem_type = elem_type;
  spec.rank = sh->rank;
  for (size_t i = 0; i < sh->rank; i++) spec.dims[i] = symbolic ? -1 : sh->dims[i];
  int64_t bias_dims[1] = {sh->rank ? sh->dims[sh->rank - 1] : 0};
  if (spec.bias) {
    spec.bias_rank = 1;
    spec.bias_dims[0] = symbolic ? -1 : bias_dims[0];
  }
  uint8_t *model = NULL;
  size_t size = 0;
  if (ep_build_model(&spec, &model, &size) != 0) {
    CHECK(false, "%s: model", label);
    return;
  }

  /* A dtype the operator's schema (at this opset) does not allow: no model to test. */
  if (elem_type != ACTX_ELEM_FLOAT) {
    const ep_session_spec plain = {.threads = 1};
    actx_ort_session *s = NULL;
    actx_ort_error err;
    const int rc = ep_session_create(model, size, &plain, &s, &err);
    actx_ort_session_free(s);
    if (rc != 0 && err.code == ORT_INVALID_GRAPH && strstr(err.message, "Type Error") != NULL) {
      free(model);
      return;
    }
  }

  const size_t n = ep_shape_count(sh->rank, sh->dims), es = actx_elem_size(elem_type);
  const size_t nb = spec.bias ? (size_t)bias_dims[0] : 0;
  void *x = malloc(n * es + 1), *bias = spec.bias ? malloc(nb * es + 1) : NULL;
  ep_fill_inputs(elem_type, x, n, seed);
  if (elem_type == ACTX_ELEM_FLOAT) ep_plant_rule_inputs(x, n);
  if (bias) ep_fill_bias(elem_type, bias, nb, seed ^ 0xb1a5);
  const size_t bias_rank = spec.bias ? 1 : 0;

  /* reference: ORT alone for float32, libactx itself otherwise */
  void *want = NULL;
  size_t want_bytes = 0;
  if (elem_type == ACTX_ELEM_FLOAT) {
    want = run_session(model, size, NULL, 1, label, "CPUExecutionProvider", elem_type, x, sh, bias,
                       bias_rank, bias_dims, &want_bytes);
    if (n == 0 && want == NULL) want = malloc(1); /* an empty graph may list no node */
  } else {
    actx_op_desc d = c->desc;
    d.dtype = dtype_of(elem_type);
    if (bias) {
      d.bias = nb ? bias : NULL;
      d.bias_len = nb;
    }
    want = malloc(n * es + 1);
    want_bytes = n * es;
    const actx_status st = actx_compute(&d, x, want, n, NULL);
    CHECK(st == ACTX_OK, "%s: actx_compute: %s", label, actx_status_string(st));
  }
  CHECK(want != NULL, "%s: reference run", label);

  for (int threads = 1; threads <= 2 && want != NULL; threads++) {
    size_t got_bytes = 0;
    void *got = run_session(model, size, "all", threads, label, n ? "actx" : NULL, elem_type, x, sh,
                            bias, bias_rank, bias_dims, &got_bytes);
    if (got != NULL) {
      CHECK(got_bytes == want_bytes, "%s: %zu output bytes, want %zu", label, got_bytes,
            want_bytes);
      const long at = got_bytes == want_bytes ? ep_first_difference(got, want, got_bytes) : -1;
      CHECK(at < 0, "%s, %d threads: element %ld differs", label, threads, at / (long)es);
    }
    free(got);
  }
  if (n > 0) {
    size_t n_nodes = 0;
    actx_ort_error err;
    const int rc = ep_optimized_node_count(model, size, "all", OPTIMIZED_PATH, &n_nodes, &err);
    CHECK(rc == 0 && n_nodes == 1, "%s: not run as a registered kernel: %s", label,
          rc ? err.message : "node count");
  }
  free(want);
  free(x);
  free(bias);
  free(model);
}

/* One session with a symbolic [d0, d1] input, run at sizes that change between runs: each
 * result ORT alone's (float32) for the same input. */
static void check_changing_sizes(const op_case *c, uint64_t seed) {
  static const shape runs[] = {{2, {1, 7}}, {2, {3, 90000}}, {2, {2, 512}}, {2, {1, 7}}};
  ep_model_spec spec = c->spec;
  spec.elem_type = ACTX_ELEM_FLOAT;
  spec.rank = 2;
  spec.dims[0] = spec.dims[1] = -1;
  if (spec.bias) {
    spec.bias_rank = 1;
    spec.bias_dims[0] = -1; /* named d1, as x's last dimension */
  }
  uint8_t *model = NULL;
  size_t size = 0;
  if (ep_build_model(&spec, &model, &size) != 0) {
    CHECK(false, "%s: model", c->label);
    return;
  }
  const ep_session_spec alone_spec = {.threads = 2}, with_spec = {.policy = "all", .threads = 2};
  actx_ort_session *alone = NULL, *with = NULL;
  actx_ort_error err;
  if (ep_session_create(model, size, &alone_spec, &alone, &err) != 0 ||
      ep_session_create(model, size, &with_spec, &with, &err) != 0) {
    CHECK(false, "%s changing sizes: session: %s", c->label, err.message);
    actx_ort_session_free(alone);
    free(model);
    return;
  }
  char ep[64];
  ep_node_ep(with, EP_TEST_NODE, ep, sizeof ep);
  CHECK(strcmp(ep, "actx") == 0, "%s changing sizes: node ran on '%s'", c->label, ep);
  for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
    const shape *sh = &runs[r];
    const size_t n = ep_shape_count(sh->rank, sh->dims), nb = (size_t)sh->dims[1];
    float *x = malloc(n * sizeof *x), *bias = spec.bias ? malloc(nb * sizeof *bias) : NULL;
    ep_fill_inputs(ACTX_ELEM_FLOAT, x, n, seed + r);
    ep_plant_rule_inputs(x, n);
    if (bias) ep_fill_bias(ACTX_ELEM_FLOAT, bias, nb, (seed + r) ^ 0xb1a5);
    const int64_t bias_dims[1] = {(int64_t)nb};
    size_t want_bytes = 0, got_bytes = 0;
    void *want = ep_run(alone, ACTX_ELEM_FLOAT, x, sh->rank, sh->dims, bias, bias ? 1 : 0,
                        bias_dims, &want_bytes);
    void *got = ep_run(with, ACTX_ELEM_FLOAT, x, sh->rank, sh->dims, bias, bias ? 1 : 0,
                       bias_dims, &got_bytes);
    CHECK(want != NULL && got != NULL && want_bytes == got_bytes &&
              ep_first_difference(want, got, want_bytes) < 0,
          "%s changing sizes, run %zu ([%lld, %lld]): differs from ORT alone", c->label, r,
          (long long)sh->dims[0], (long long)sh->dims[1]);
    free(want);
    free(got);
    free(x);
    free(bias);
  }
  actx_ort_session_free(alone);
  actx_ort_session_free(with);
  free(model);
}

/* Tanh and Sigmoid may write over their input, as ORT's own kernels (registry.c): between two
 * Negs, with an input nothing else reads, ORT may hand the kernel one buffer as x and y. */
static void check_in_place(const char *op_type) {
  const int64_t dims[2] = {6, 512};
  actx_model *m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, 20, 0);
  actx_model_add_input(m, "x", ACTX_ELEM_FLOAT, 2, dims, NULL);
  actx_model_add_output(m, "y", ACTX_ELEM_FLOAT, 2, dims, NULL);
  actx_model_add_node(m, "Neg", "", 1, (const char *[]){"x"}, 1, (const char *[]){"negated"});
  actx_model_add_named_node(m, EP_TEST_NODE, op_type, "", 1, (const char *[]){"negated"}, 1,
                            (const char *[]){"activated"});
  actx_model_add_node(m, "Neg", "", 1, (const char *[]){"activated"}, 1, (const char *[]){"y"});
  uint8_t *bytes = NULL;
  size_t size = 0;
  const int rc = actx_model_serialize(m, &bytes, &size);
  actx_model_free(m);
  if (rc != 0) {
    CHECK(false, "%s in place: model", op_type);
    return;
  }
  float *x = malloc(6 * 512 * sizeof *x);
  ep_fill_inputs(ACTX_ELEM_FLOAT, x, 6 * 512, 4242);
  const actx_ort_tensor in[1] = {{.name = "x", .elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
                                  .rank = 2, .dims = {6, 512}, .data = x}};
  char label[64];
  snprintf(label, sizeof label, "%s between Negs", op_type);
  const ep_session_spec spec = {.policy = "all", .threads = 1};
  CHECK(ep_check_against_ort(bytes, size, &spec, 1, in, label) == 1, "%s: not on actx", label);
  free(x);
  free(bytes);
}

int main(int argc, char **argv) {
  if (ep_test_init(argc, argv) != 0) return 2;
  size_t checked = 0;
  for (size_t c = 0; c < N_CASES; c++) {
    for (size_t t = 0; t < sizeof elem_types / sizeof elem_types[0]; t++) {
      /* float16/bfloat16: fewer shapes (they test the plumbing, not ORT parity): the first
       * four, N = 512 and N = 3072 */
      const bool f32 = elem_types[t] == ACTX_ELEM_FLOAT;
      for (size_t s = 0; s < N_SHAPES; s++) {
        if (!f32 && s >= 4 && s != 9 && s != 10) continue;
        check_case(&cases[c], elem_types[t], &shapes[s], false, 1000 * c + 10 * s + t);
        checked++;
      }
    }
    /* the same model for every shape of one rank, sizes known only at run time */
    check_case(&cases[c], ACTX_ELEM_FLOAT, &shapes[3], true, 77 + c);
    check_case(&cases[c], ACTX_ELEM_FLOAT, &shapes[11], true, 78 + c);
    check_changing_sizes(&cases[c], 79 + c);
    checked += 3;
  }
  check_in_place("Tanh");
  check_in_place("Sigmoid");
  checked += 2;
  remove(OPTIMIZED_PATH);
  actx_ort_shutdown();
  printf("%zu cases, %d failures\n", checked, g_failures);
  return g_failures ? 1 : 0;
}
