/* conform_cases.c — generated conformance tests (see conform_cases.h). */
#include "conform_cases.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "actx.h"
#include "cli.h"
#include "half.h"
#include "model.h"
#include "rng.h"
#include "tensor_write.h"

#define GEN_ONNX_OPSET 20 /* the first with Gelu; Erf, Tanh, Sigmoid are at their version 13 */
#define GEN_MS_OPSET 1
#define GEN_SEED 0x61637478u /* "actx" */
#define MS ACTX_MODEL_MS_DOMAIN

#define SQRT_HALF 0.70710678118654752440
#define SQRT_2_OVER_PI 0.79788456080286535588
#define TANH_GELU_CUBIC 0.044715

/* ---- Double-precision references ---------------------------------------------------------- */

static double ref_erf(double x, double alpha) { (void)alpha; return erf(x); }
static double ref_tanh(double x, double alpha) { (void)alpha; return tanh(x); }
static double ref_sigmoid(double x, double alpha) { (void)alpha; return 1.0 / (1.0 + exp(-x)); }
static double ref_gelu(double x, double alpha) {
  (void)alpha;
  return 0.5 * x * (1.0 + erf(x * SQRT_HALF));
}
static double ref_gelu_tanh(double x, double alpha) {
  (void)alpha;
  return 0.5 * x * (1.0 + tanh(SQRT_2_OVER_PI * (x + TANH_GELU_CUBIC * x * x * x)));
}
static double ref_quick_gelu(double x, double alpha) { return x / (1.0 + exp(-alpha * x)); }

/* ---- The cases ------------------------------------------------------------------------------- */

typedef enum gen_shape {
  SHAPE_EXAMPLE, /* [3]: -1, 0, 1, as ONNX's *_1 / *_example tests */
  SHAPE_RANDOM,  /* [3, 4, 5]: edge values, then random normal * 2 */
} gen_shape;

enum { F32 = 1, F16 = 2, BF16 = 4, HALVES = F16 | BF16, ALL = F32 | F16 | BF16 };

typedef struct gen_case {
  const char *name;
  const char *op_type;
  const char *domain;
  const char *approximate;
  bool has_bias;
  bool has_alpha;
  float alpha;
  double (*ref)(double x, double alpha);
  gen_shape shape;
  unsigned dtypes;
} gen_case;

static const gen_case k_cases[] = {
    /* ai.onnx Gelu, as ONNX's own (newer) node tests name them */
    {"gelu_default_1", "Gelu", "", NULL, false, false, 0, ref_gelu, SHAPE_EXAMPLE, F32},
    {"gelu_default_2", "Gelu", "", NULL, false, false, 0, ref_gelu, SHAPE_RANDOM, ALL},
    {"gelu_tanh_1", "Gelu", "", "tanh", false, false, 0, ref_gelu_tanh, SHAPE_EXAMPLE, F32},
    {"gelu_tanh_2", "Gelu", "", "tanh", false, false, 0, ref_gelu_tanh, SHAPE_RANDOM, ALL},
    /* com.microsoft */
    {"ms_gelu", "Gelu", MS, NULL, false, false, 0, ref_gelu, SHAPE_RANDOM, ALL},
    {"ms_bias_gelu", "BiasGelu", MS, NULL, true, false, 0, ref_gelu, SHAPE_RANDOM, ALL},
    {"ms_fast_gelu", "FastGelu", MS, NULL, false, false, 0, ref_gelu_tanh, SHAPE_RANDOM, ALL},
    {"ms_fast_gelu_bias", "FastGelu", MS, NULL, true, false, 0, ref_gelu_tanh, SHAPE_RANDOM,
     ALL},
    {"ms_quick_gelu", "QuickGelu", MS, NULL, false, false, ACTX_QUICK_GELU_DEFAULT_ALPHA,
     ref_quick_gelu, SHAPE_RANDOM, ALL},
    {"ms_quick_gelu_alpha_1", "QuickGelu", MS, NULL, false, true, 1.0f, ref_quick_gelu,
     SHAPE_RANDOM, ALL},
    {"ms_quick_gelu_alpha_neg", "QuickGelu", MS, NULL, false, true, -0.5f, ref_quick_gelu,
     SHAPE_RANDOM, ALL},
    /* the ops the test data has only in float32 */
    {"erf", "Erf", "", NULL, false, false, 0, ref_erf, SHAPE_RANDOM, HALVES},
    {"tanh", "Tanh", "", NULL, false, false, 0, ref_tanh, SHAPE_RANDOM, HALVES},
    {"sigmoid", "Sigmoid", "", NULL, false, false, 0, ref_sigmoid, SHAPE_RANDOM, HALVES},
};
#define N_CASES (sizeof k_cases / sizeof k_cases[0])

/* The inputs' first values: zeros, the curve's middle, and the points where MLAS's kernels
 * change branch or clamp (erf near 3.9, tanh near 9, the logistic near 18), both signs. */
static const double k_edge_values[] = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 3.9, -3.9,
                                       9.5, -9.5, 20.0, -20.0, 1e-3, -1e-3};
#define N_EDGE_VALUES (sizeof k_edge_values / sizeof k_edge_values[0])

/* Operators actx serves, as test names spell them after "test_" (case-insensitive). */
static const char *const k_served_prefixes[] = {"erf", "tanh", "sigmoid", "gelu", "ms_"};

bool actx_conform_served(const char *test_name) {
  if (strncmp(test_name, "test_", 5) != 0)
    return false;
  const char *op = test_name + 5;
  for (size_t i = 0; i < sizeof k_served_prefixes / sizeof *k_served_prefixes; i++) {
    size_t len = strlen(k_served_prefixes[i]);
    if (strncasecmp(op, k_served_prefixes[i], len) == 0 &&
        (op[len] == '\0' || op[len] == '_' || k_served_prefixes[i][len - 1] == '_'))
      return true;
  }
  return false;
}

/* ---- Writing one test ---------------------------------------------------------------------- */

typedef struct dtype_info {
  const char *suffix;
  int32_t elem_type;
  size_t size;
} dtype_info;

static const dtype_info k_dtype_infos[] = {
    {"", ACTX_ELEM_FLOAT, 4}, {"_fp16", ACTX_ELEM_FLOAT16, 2}, {"_bf16", ACTX_ELEM_BFLOAT16, 2}};

/* Rounds v to the element type, stores it at index i, and returns the stored value. */
static double store(const dtype_info *t, void *data, size_t i, double v) {
  if (t->elem_type == ACTX_ELEM_FLOAT) {
    float f = (float)v;
    memcpy((char *)data + 4 * i, &f, 4);
    return f;
  }
  uint16_t h = t->elem_type == ACTX_ELEM_FLOAT16 ? actx_f64_to_f16(v) : actx_f64_to_bf16(v);
  memcpy((char *)data + 2 * i, &h, 2);
  return t->elem_type == ACTX_ELEM_FLOAT16 ? actx_f16_to_f32(h) : actx_bf16_to_f32(h);
}

static int write_pb(const char *dir, const char *file, const char *name, const dtype_info *t,
                    size_t rank, const int64_t *dims, const void *data, size_t count, char *err,
                    size_t err_size) {
  char path[4200];
  snprintf(path, sizeof path, "%.4000s/%.100s", dir, file);
  if (actx_tensor_proto_write(path, name, t->elem_type, rank, dims, data, count * t->size, err,
                              err_size) != 0)
    return -1;
  /* read it back with the parser the tests use: the encoder and the reader must agree */
  actx_tensor back;
  char why[256];
  if (actx_tensor_read_file(path, &back, why, sizeof why) != 0) {
    snprintf(err, err_size, "%s does not read back: %s", path, why);
    return -1;
  }
  bool same = back.elem_type == t->elem_type && back.count == count && back.rank == rank &&
              (count == 0 || memcmp(back.data, data, count * t->size) == 0);
  actx_tensor_free(&back);
  if (!same) {
    snprintf(err, err_size, "%s reads back different from what was written", path);
    return -1;
  }
  return 0;
}

static int write_model(const char *dir, const gen_case *c, const dtype_info *t, size_t rank,
                       const int64_t *dims, int64_t bias_len, char *err, size_t err_size) {
  const bool ms = c->domain[0] != '\0';
  actx_model *m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, GEN_ONNX_OPSET,
                                    ms ? GEN_MS_OPSET : 0);
  if (m == NULL) {
    snprintf(err, err_size, "out of memory");
    return -1;
  }
  actx_model_add_input(m, "x", t->elem_type, rank, dims, NULL);
  if (c->has_bias)
    actx_model_add_input(m, "bias", t->elem_type, 1, &bias_len, NULL);
  actx_model_add_output(m, "y", t->elem_type, rank, dims, NULL);
  const char *inputs[2] = {"x", "bias"}, *outputs[1] = {"y"};
  actx_model_node *node = actx_model_add_named_node(m, "node", c->op_type, c->domain,
                                                    c->has_bias ? 2 : 1, inputs, 1, outputs);
  if (c->approximate != NULL)
    actx_model_node_attr_string(node, "approximate", c->approximate);
  if (c->has_alpha)
    actx_model_node_attr_float(node, "alpha", c->alpha);
  uint8_t *bytes = NULL;
  size_t size = 0;
  int rc = actx_model_serialize(m, &bytes, &size);
  if (rc != 0) {
    snprintf(err, err_size, "building %s: %s", c->name, actx_model_error(m));
  } else {
    char path[4200];
    snprintf(path, sizeof path, "%.4000s/model.onnx", dir);
    rc = actx_write_file(path, bytes, size);
    if (rc != 0)
      snprintf(err, err_size, "cannot write %s: %s", path, strerror(errno));
  }
  free(bytes);
  actx_model_free(m);
  return rc;
}

static int write_case(const char *root, const gen_case *c, const dtype_info *t, char *err,
                      size_t err_size) {
  char dir[4200], set_dir[4300];
  snprintf(dir, sizeof dir, "%.3900s/test_%.100s%s", root, c->name, t->suffix);
  snprintf(set_dir, sizeof set_dir, "%.4100s/test_data_set_0", dir);
  if (actx_make_dirs(set_dir) != 0) {
    snprintf(err, err_size, "cannot create %s: %s", set_dir, strerror(errno));
    return -1;
  }
  const size_t rank = c->shape == SHAPE_EXAMPLE ? 1 : 3;
  const int64_t dims[3] = {3, 4, 5};
  const int64_t example_dims[1] = {3};
  const int64_t *shape = c->shape == SHAPE_EXAMPLE ? example_dims : dims;
  const size_t count = c->shape == SHAPE_EXAMPLE ? 3 : 60;
  const int64_t bias_len = shape[rank - 1];

  actx_rng rng;
  actx_rng_seed(&rng, actx_hash_string(GEN_SEED, c->name));
  void *x = malloc(count * t->size), *bias = malloc((size_t)bias_len * t->size),
       *y = malloc(count * t->size);
  double *xv = malloc(count * sizeof *xv), *bv = malloc((size_t)bias_len * sizeof *bv);
  int rc = -1;
  if (x == NULL || bias == NULL || y == NULL || xv == NULL || bv == NULL) {
    snprintf(err, err_size, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < count; i++) {
    double v = c->shape == SHAPE_EXAMPLE ? (double)i - 1.0
               : i < N_EDGE_VALUES       ? k_edge_values[i]
                                         : 2.0 * actx_rng_normal(&rng);
    xv[i] = store(t, x, i, v);
  }
  for (int64_t j = 0; j < bias_len; j++)
    bv[j] = c->has_bias ? store(t, bias, (size_t)j, actx_rng_normal(&rng)) : 0.0;
  /* The EP adds the bias in float32: x and bias of a half type sum exactly there, and a float32
   * sum is rounded once, so the reference takes the float32 sum too. */
  for (size_t i = 0; i < count; i++) {
    double in = c->has_bias ? (double)(float)(xv[i] + bv[i % (size_t)bias_len]) : xv[i];
    store(t, y, i, c->ref(in, c->alpha));
  }
  if (write_model(dir, c, t, rank, shape, bias_len, err, err_size) != 0 ||
      write_pb(set_dir, "input_0.pb", "x", t, rank, shape, x, count, err, err_size) != 0 ||
      (c->has_bias && write_pb(set_dir, "input_1.pb", "bias", t, 1, &bias_len, bias,
                               (size_t)bias_len, err, err_size) != 0) ||
      write_pb(set_dir, "output_0.pb", "y", t, rank, shape, y, count, err, err_size) != 0)
    goto done;
  rc = 0;
done:
  free(x);
  free(bias);
  free(y);
  free(xv);
  free(bv);
  return rc;
}

int actx_conform_generate(const char *dir, size_t *n_written, char *err, size_t err_size) {
  *n_written = 0;
  if (actx_make_dirs(dir) != 0) {
    snprintf(err, err_size, "cannot create %s: %s", dir, strerror(errno));
    return -1;
  }
  for (size_t i = 0; i < N_CASES; i++) {
    for (size_t d = 0; d < sizeof k_dtype_infos / sizeof *k_dtype_infos; d++) {
      if (!(k_cases[i].dtypes & (1u << d)))
        continue;
      if (write_case(dir, &k_cases[i], &k_dtype_infos[d], err, err_size) != 0)
        return -1;
      (*n_written)++;
    }
  }
  return 0;
}
