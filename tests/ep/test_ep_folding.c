/* Subgraphs whose constants fold into a one-node activation only in exact arithmetic.
 *
 * usage: test_ep_folding <absolute path of libactx_ep.so>
 *
 * The fusion matcher evaluates an activation's argument as a polynomial in x. IEEE arithmetic is
 * not that algebra: (x·1e30)·1e30 is not x·1e60 (which is +inf in float32, and inf·0 is NaN), x /
 * 1e-39 is not x·1e39, x/√2 + 0·x² is NaN at x = ±inf, x·1.5 − x·0.5 is NaN there too, x + 0
 * turns −0 into +0. Each model here is an exact GELU, SiLU or QuickGelu subgraph spelt with such
 * a term, with constants at ±0, denormals, ±inf, NaN and the overflow boundaries; ORT alone and
 * ORT + actx (auto and all) must give the same bits on inputs holding ±0, ±inf, NaN, denormals
 * and ±FLT_MAX. Well-formed spellings (a plain Mul(x, α), Div by a power of two) are there too:
 * their comparison is the same, and they show the matcher still recognises something.
 *
 * bfloat16, where ORT has no kernels to compare with and the EP takes what the matcher finds:
 * the same models must be fused exactly where the fold is exact (then with libactx's bits), and
 * otherwise not at all. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "actx.h"
#include "ep_test.h"

#define ROWS 4
#define COLS 1024 /* 4 Ki elements: `auto` claims every GELU kind at this size */

typedef enum arg_form {
  ARG_MUL,        /* x·a */
  ARG_MUL_MUL,    /* (x·a)·b */
  ARG_DIV,        /* x / a */
  ARG_PLUS_ZERO_SQUARE, /* x·a + b·(x·x) */
  ARG_PLUS_X_TIMES, /* x·a + x·b */
  ARG_PLUS_CONST, /* x·a + b */
} arg_form;

typedef struct fold_case {
  const char *label;
  bool gelu; /* erf GELU: (x·(1 + erf(arg)))·0.5; else x·sigmoid(arg) */
  arg_form form;
  float a, b;
  int folds; /* 1: the matcher folds it (bfloat16 is then fused); 0: it must not; -1: either,
                as ORT's own level-1 rewrites leave it (Mul by 1, Add of 0) */
} fold_case;

#define SQRT1_2 0.70710677f
static const fold_case cases[] = {
    /* the sigmoid family: alpha folded from the argument */
    {"x*sigmoid((x*1e30)*1e30)", false, ARG_MUL_MUL, 1e30f, 1e30f, 0},
    {"x*sigmoid((x*1e20)*1e-20)", false, ARG_MUL_MUL, 1e20f, 1e-20f, 0},
    {"x*sigmoid((x*2)*0.5)", false, ARG_MUL_MUL, 2.0f, 0.5f, 0},
    {"x*sigmoid((x*1.702)*1)", false, ARG_MUL_MUL, 1.702f, 1.0f, -1},
    {"x*sigmoid((x*3)*0.5673)", false, ARG_MUL_MUL, 3.0f, 0.5673f, 0},
    {"x*sigmoid(x/1e-39)", false, ARG_DIV, 1e-39f, 0, 0},
    {"x*sigmoid(x/3)", false, ARG_DIV, 3.0f, 0, 0},
    {"x*sigmoid(x/0.5)", false, ARG_DIV, 0.5f, 0, 1},
    {"x*sigmoid(x/2)", false, ARG_DIV, 2.0f, 0, 1},
    {"x*sigmoid(x/2^-126)", false, ARG_DIV, 0x1p-126f, 0, 0},
    {"x*sigmoid(x/2^127)", false, ARG_DIV, 0x1p127f, 0, 0},
    {"x*sigmoid(x/0)", false, ARG_DIV, 0.0f, 0, 0},
    {"x*sigmoid(x/-0)", false, ARG_DIV, -0.0f, 0, 0},
    {"x*sigmoid(x/inf)", false, ARG_DIV, INFINITY, 0, 0},
    {"x*sigmoid(x/nan)", false, ARG_DIV, NAN, 0, 0},
    {"x*sigmoid(x*0)", false, ARG_MUL, 0.0f, 0, 0},
    {"x*sigmoid(x*-0)", false, ARG_MUL, -0.0f, 0, 0},
    {"x*sigmoid(x*1e-40)", false, ARG_MUL, 1e-40f, 0, 0},
    {"x*sigmoid(x*-1e-45)", false, ARG_MUL, -1e-45f, 0, 0},
    {"x*sigmoid(x*FLT_MAX)", false, ARG_MUL, 3.4028235e38f, 0, 0},
    {"x*sigmoid(x*inf)", false, ARG_MUL, INFINITY, 0, 0},
    {"x*sigmoid(x*-inf)", false, ARG_MUL, -INFINITY, 0, 0},
    {"x*sigmoid(x*nan)", false, ARG_MUL, NAN, 0, 0},
    {"x*sigmoid(x*1.702)", false, ARG_MUL, 1.702f, 0, 1},
    {"x*sigmoid(x*-0.625)", false, ARG_MUL, -0.625f, 0, 1},
    {"x*sigmoid(x*1)", false, ARG_MUL, 1.0f, 0, 1},
    {"x*sigmoid(x*1.5 + x*-0.5)", false, ARG_PLUS_X_TIMES, 1.5f, -0.5f, 0},
    {"x*sigmoid(x + 0)", false, ARG_PLUS_CONST, 1.0f, 0.0f, -1},
    {"x*sigmoid(x + 0*x*x)", false, ARG_PLUS_ZERO_SQUARE, 1.0f, 0.0f, 0},
    /* exact GELU: the argument is recognised as x/√2 */
    {"erf GELU, x*(1/sqrt2) + 0*x*x", true, ARG_PLUS_ZERO_SQUARE, SQRT1_2, 0.0f, 0},
    {"erf GELU, x*(1/sqrt2) + -0*x*x", true, ARG_PLUS_ZERO_SQUARE, SQRT1_2, -0.0f, 0},
    {"erf GELU, x*(1/sqrt2) + x*0", true, ARG_PLUS_X_TIMES, SQRT1_2, 0.0f, 0},
    {"erf GELU, x*(1/sqrt2) + 0", true, ARG_PLUS_CONST, SQRT1_2, 0.0f, 0},
    {"erf GELU, x*(1/sqrt2) + -0", true, ARG_PLUS_CONST, SQRT1_2, -0.0f, 0},
    {"erf GELU, x*1.2071068 + x*-0.5", true, ARG_PLUS_X_TIMES, 1.2071068f, -0.5f, 0},
    {"erf GELU, (x*1e30)*(1/sqrt2 * 1e-30)", true, ARG_MUL_MUL, 1e30f, SQRT1_2 * 1e-30f, 0},
    {"erf GELU, (x*1e-30)*(1/sqrt2 * 1e30)", true, ARG_MUL_MUL, 1e-30f, SQRT1_2 * 1e30f, 0},
    {"erf GELU, (x*2)*(1/sqrt2 / 2)", true, ARG_MUL_MUL, 2.0f, SQRT1_2 / 2, 1},
    {"erf GELU, x/1.4142135", true, ARG_DIV, 1.4142135f, 0, 1},
    {"erf GELU, x*(1/sqrt2)", true, ARG_MUL, SQRT1_2, 0, 1},
};

/* A scalar initializer of the model's element type. */
static void add_constant(actx_model *m, const char *name, float value, int32_t elem_type) {
  const uint16_t bf16 = ep_float_to_bf16(value);
  actx_model_add_initializer(m, name, elem_type, 0, NULL,
                             elem_type == ACTX_ELEM_BFLOAT16 ? (const void *)&bf16 : &value);
}

/* Adds the argument's nodes reading x and writing "arg". */
static void add_argument(actx_model *m, const fold_case *c, int32_t elem_type) {
  add_constant(m, "ca", c->a, elem_type);
  const char *mul_a[] = {"x", "ca"};
  switch (c->form) {
    case ARG_MUL:
      actx_model_add_node(m, "Mul", "", 2, mul_a, 1, (const char *[]){"arg"});
      return;
    case ARG_DIV:
      actx_model_add_node(m, "Div", "", 2, mul_a, 1, (const char *[]){"arg"});
      return;
    default: break;
  }
  add_constant(m, "cb", c->b, elem_type);
  actx_model_add_node(m, "Mul", "", 2, mul_a, 1, (const char *[]){"xa"});
  switch (c->form) {
    case ARG_MUL_MUL:
      actx_model_add_node(m, "Mul", "", 2, (const char *[]){"xa", "cb"}, 1,
                          (const char *[]){"arg"});
      break;
    case ARG_PLUS_ZERO_SQUARE:
      actx_model_add_node(m, "Mul", "", 2, (const char *[]){"x", "x"}, 1, (const char *[]){"xx"});
      actx_model_add_node(m, "Mul", "", 2, (const char *[]){"cb", "xx"}, 1,
                          (const char *[]){"bxx"});
      actx_model_add_node(m, "Add", "", 2, (const char *[]){"xa", "bxx"}, 1,
                          (const char *[]){"arg"});
      break;
    case ARG_PLUS_X_TIMES:
      actx_model_add_node(m, "Mul", "", 2, (const char *[]){"x", "cb"}, 1, (const char *[]){"xb"});
      actx_model_add_node(m, "Add", "", 2, (const char *[]){"xa", "xb"}, 1,
                          (const char *[]){"arg"});
      break;
    case ARG_PLUS_CONST:
      actx_model_add_node(m, "Add", "", 2, (const char *[]){"xa", "cb"}, 1,
                          (const char *[]){"arg"});
      break;
    default: break;
  }
}

/* The model; *n_nodes: how many nodes it has. */
static int build(const fold_case *c, int32_t elem_type, uint8_t **bytes, size_t *size,
                 size_t *n_nodes) {
  actx_model *m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, 17, 0);
  const int64_t dims[2] = {ROWS, COLS};
  actx_model_add_input(m, "x", elem_type, 2, dims, NULL);
  actx_model_add_output(m, "y", elem_type, 2, dims, NULL);
  add_argument(m, c, elem_type);
  if (c->gelu) {
    add_constant(m, "one", 1.0f, elem_type);
    add_constant(m, "half", 0.5f, elem_type);
    actx_model_add_node(m, "Erf", "", 1, (const char *[]){"arg"}, 1, (const char *[]){"e"});
    actx_model_add_node(m, "Add", "", 2, (const char *[]){"e", "one"}, 1, (const char *[]){"f"});
    actx_model_add_node(m, "Mul", "", 2, (const char *[]){"x", "f"}, 1, (const char *[]){"xf"});
    actx_model_add_node(m, "Mul", "", 2, (const char *[]){"xf", "half"}, 1,
                        (const char *[]){"y"});
  } else {
    actx_model_add_node(m, "Sigmoid", "", 1, (const char *[]){"arg"}, 1, (const char *[]){"s"});
    actx_model_add_node(m, "Mul", "", 2, (const char *[]){"x", "s"}, 1, (const char *[]){"y"});
  }
  const int rc = actx_model_serialize(m, bytes, size);
  if (rc != 0) printf("%s: %s\n", c->label, actx_model_error(m));
  actx_model_info info;
  char err[128];
  *n_nodes = rc == 0 && actx_model_info_parse(*bytes, *size, &info, err, sizeof err) == 0
                 ? info.n_nodes
                 : 0;
  if (*n_nodes > 0) actx_model_info_free(&info);
  actx_model_free(m);
  return rc;
}

/* bfloat16: fused into one node exactly where the fold is exact, with libactx's bits. */
static void check_bfloat16(const fold_case *c) {
  uint8_t *bytes = NULL;
  size_t size = 0, n_nodes = 0;
  char label[128];
  snprintf(label, sizeof label, "%s, bfloat16", c->label);
  if (build(c, ACTX_ELEM_BFLOAT16, &bytes, &size, &n_nodes) != 0) {
    CHECK(false, "%s: model", label);
    return;
  }
  static uint16_t x[ROWS * COLS], want[ROWS * COLS];
  ep_fill_inputs(ACTX_ELEM_BFLOAT16, x, ROWS * COLS, 5);
  const ep_session_spec spec = {.policy = "all", .threads = 1};
  actx_ort_session *s = NULL;
  actx_ort_error err;
  long on_actx = -1, groups = -1;
  void *y = NULL;
  size_t y_bytes = 0;
  const int64_t dims[2] = {ROWS, COLS};
  if (ep_session_create(bytes, size, &spec, &s, &err) == 0) {
    on_actx = actx_ort_count_nodes_on(s, "actx", &err);
    groups = actx_ort_count_subgraphs_on(s, "actx", &err);
    y = ep_run(s, ACTX_ELEM_BFLOAT16, x, 2, dims, NULL, 0, NULL, &y_bytes);
    actx_ort_session_free(s);
  } /* else: a node left to ORT, which has no bfloat16 kernel for it */
  /* all of it as one compiled node; the bfloat16 service may run it node by node instead */
  const bool fused = on_actx == (long)n_nodes && groups == 1;
  if (c->folds >= 0)
    CHECK(fused == (c->folds > 0), "%s: %ld of %zu nodes on actx", label, on_actx, n_nodes);
  if (fused && y != NULL) {
    /* the model holds the constant rounded to bfloat16 */
    const uint32_t a_bits = (uint32_t)ep_float_to_bf16(c->a) << 16;
    float a = 0;
    memcpy(&a, &a_bits, sizeof a);
    const actx_op_desc desc = {.op = c->gelu ? ACTX_OP_GELU : ACTX_OP_QUICK_GELU,
                               .dtype = ACTX_BF16,
                               .alpha = c->gelu ? 0 : c->form == ARG_DIV ? 1 / a : a};
    CHECK(actx_compute(&desc, x, want, ROWS * COLS, NULL) == ACTX_OK, "%s: actx_compute", label);
    const long at = y_bytes == sizeof want ? ep_first_difference(y, want, sizeof want) : 0;
    CHECK(at < 0, "%s: element %ld differs from libactx's", label, at / 2);
  }
  printf("  %-44s bf16 %ld of %zu nodes on actx\n", c->label, on_actx, n_nodes);
  free(y);
  free(bytes);
}

int main(int argc, char **argv) {
  if (ep_test_init(argc, argv) != 0) return 2;
  static float x[ROWS * COLS];
  ep_fill_inputs(ACTX_ELEM_FLOAT, x, ROWS * COLS, 3);
  /* the overflow boundaries of the folded constants, and the values next to them */
  static const float edges[] = {3.4e8f,  -3.4e8f, 3.5e8f,    -3.5e8f, 1e-9f,   1e-30f,
                                1e-38f, 2e-39f,  1.7e38f,   -1.7e38f, 1e38f, 3.4028235e38f};
  memcpy(x + 64, edges, sizeof edges);
  const actx_ort_tensor in = {
      .elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, .rank = 2, .dims = {ROWS, COLS}, .data = x};
  static const char *const policies[] = {"auto", "all"};
  size_t fused = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint8_t *bytes = NULL;
    size_t size = 0, n_nodes = 0;
    if (build(&cases[i], ACTX_ELEM_FLOAT, &bytes, &size, &n_nodes) != 0) {
      CHECK(false, "%s: model", cases[i].label);
      continue;
    }
    for (int p = 0; p < 2; p++)
      for (int threads = 1; threads <= 2; threads++) {
        const ep_session_spec spec = {.policy = policies[p], .threads = threads};
        const long on_actx = ep_check_against_ort(bytes, size, &spec, 1, &in, cases[i].label);
        if (threads == 1) {
          printf("  %-44s %-4s %ld nodes on actx\n", cases[i].label, policies[p], on_actx);
          fused += on_actx > 1;
        }
      }
    free(bytes);
    check_bfloat16(&cases[i]);
  }
  CHECK(fused > 0, "no subgraph was fused: the comparisons prove nothing");
  actx_ort_shutdown();
  printf("%zu models, %zu fused runs, %d failures\n", sizeof cases / sizeof cases[0], fused,
         g_failures);
  return g_failures ? 1 : 0;
}
