/* Nodes the EP must leave to ORT: the session still loads (with policy all), ORT's CPU EP runs
 * the node, and whatever ORT then does (a result, or its own error) is what it does without us.
 *
 * usage: test_ep_declines <absolute path of libactx_ep.so>
 *
 * Declined: double inputs, int inputs, a bias of the wrong length or rank, a bias length not
 * provably equal to the last dimension, an unknown `approximate`, a FastGelu on a scalar, an
 * opset we do not serve (Tanh-1, Sigmoid-1), operators we do not serve.
 *
 * The EP's kernel registry has a kernel for several of these nodes (a float32 Gelu-20 with an
 * unknown `approximate`, a float32 BiasGelu with a short bias), and for a float32 Tanh-13 that
 * policy none leaves: ORT must use a registered kernel only for the nodes GetCapability took. */
#include <stdlib.h>
#include <string.h>

#include "ep_test.h"

#define MS ACTX_MODEL_MS_DOMAIN

typedef struct decline_case {
  const char *label;
  ep_model_spec spec;
  /* run inputs: x shape (and bias shape when spec.bias) */
  size_t rank;
  int64_t dims[3];
  size_t bias_rank;
  int64_t bias_dims[2];
} decline_case;

#define F32 .elem_type = ACTX_ELEM_FLOAT
static const decline_case cases[] = {
    {.label = "Tanh double",
     .spec = {.op_type = "Tanh",
              .domain = "",
              .elem_type = ACTX_ELEM_DOUBLE,
              .rank = 2,
              .dims = {3, 5}},
     .rank = 2,
     .dims = {3, 5}},
    {.label = "Sigmoid double",
     .spec = {.op_type = "Sigmoid",
              .domain = "",
              .elem_type = ACTX_ELEM_DOUBLE,
              .rank = 1,
              .dims = {7}},
     .rank = 1,
     .dims = {7}},
    {.label = "Erf double",
     .spec =
         {.op_type = "Erf", .domain = "", .elem_type = ACTX_ELEM_DOUBLE, .rank = 1, .dims = {7}},
     .rank = 1,
     .dims = {7}},
    {.label = "Erf int32",
     .spec = {.op_type = "Erf", .domain = "", .elem_type = ACTX_ELEM_INT32, .rank = 1, .dims = {7}},
     .rank = 1,
     .dims = {7}},
    {.label = "Erf int64",
     .spec = {.op_type = "Erf", .domain = "", .elem_type = ACTX_ELEM_INT64, .rank = 1, .dims = {7}},
     .rank = 1,
     .dims = {7}},
    {.label = "BiasGelu bias too short",
     .spec = {.op_type = "BiasGelu",
              .domain = MS,
              F32,
              .rank = 2,
              .dims = {2, 8},
              .bias = true,
              .bias_rank = 1,
              .bias_dims = {4}},
     .rank = 2,
     .dims = {2, 8},
     .bias_rank = 1,
     .bias_dims = {4}},
    {.label = "BiasGelu bias 2-D",
     .spec = {.op_type = "BiasGelu",
              .domain = MS,
              F32,
              .rank = 2,
              .dims = {2, 8},
              .bias = true,
              .bias_rank = 2,
              .bias_dims = {1, 8}},
     .rank = 2,
     .dims = {2, 8},
     .bias_rank = 2,
     .bias_dims = {1, 8}},
    {.label = "FastGelu bias too long",
     .spec = {.op_type = "FastGelu",
              .domain = MS,
              F32,
              .rank = 2,
              .dims = {2, 8},
              .bias = true,
              .bias_rank = 1,
              .bias_dims = {16}},
     .rank = 2,
     .dims = {2, 8},
     .bias_rank = 1,
     .bias_dims = {16}},
    {.label = "FastGelu bias 0-D",
     .spec = {.op_type = "FastGelu",
              .domain = MS,
              F32,
              .rank = 2,
              .dims = {2, 1},
              .bias = true,
              .bias_rank = 0},
     .rank = 2,
     .dims = {2, 1},
     .bias_rank = 0},
    {.label = "BiasGelu bias dim named differently",
     .spec = {.op_type = "BiasGelu",
              .domain = MS,
              F32,
              .rank = 2,
              .dims = {2, -1},
              .bias = true,
              .bias_rank = 1,
              .bias_dims = {-1},
              .bias_dim_param = "k"},
     .rank = 2,
     .dims = {2, 8},
     .bias_rank = 1,
     .bias_dims = {8}},
    {.label = "Gelu approximate=erf",
     .spec = {.op_type = "Gelu", .domain = "", .approximate = "erf", F32, .rank = 1, .dims = {9}},
     .rank = 1,
     .dims = {9}},
    {.label = "Gelu approximate=TANH",
     .spec = {.op_type = "Gelu", .domain = "", .approximate = "TANH", F32, .rank = 1, .dims = {9}},
     .rank = 1,
     .dims = {9}},
    {.label = "FastGelu scalar",
     .spec = {.op_type = "FastGelu", .domain = MS, F32, .rank = 0},
     .rank = 0},
    {.label = "Tanh-1 (opset 5)",
     .spec = {.op_type = "Tanh", .domain = "", .onnx_opset = 5, F32, .rank = 1, .dims = {4}},
     .rank = 1,
     .dims = {4}},
    {.label = "Sigmoid-1 (opset 5)",
     .spec = {.op_type = "Sigmoid", .domain = "", .onnx_opset = 5, F32, .rank = 1, .dims = {4}},
     .rank = 1,
     .dims = {4}},
    {.label = "Relu",
     .spec = {.op_type = "Relu", .domain = "", F32, .rank = 1, .dims = {4}},
     .rank = 1,
     .dims = {4}},
    {.label = "HardSigmoid",
     .spec = {.op_type = "HardSigmoid", .domain = "", F32, .rank = 1, .dims = {4}},
     .rank = 1,
     .dims = {4}},
};
#define N_CASES (sizeof cases / sizeof cases[0])

/* What one configuration did: session creation and run outcome, and the node's EP. */
typedef struct outcome {
  int created;
  char create_error[1024];
  char ep[64];
  void *y;
  size_t y_bytes;
  char run_error[1024];
} outcome;

static void run_case(const decline_case *c, const uint8_t *model, size_t size, const char *policy,
                     const void *x, const void *bias, outcome *o) {
  memset(o, 0, sizeof *o);
  const ep_session_spec spec = {.policy = policy, .threads = 1};
  actx_ort_session *s = NULL;
  actx_ort_error err;
  if (ep_session_create(model, size, &spec, &s, &err) != 0) {
    snprintf(o->create_error, sizeof o->create_error, "%s", err.message);
    return;
  }
  o->created = 1;
  ep_node_ep(s, EP_TEST_NODE, o->ep, sizeof o->ep);
  actx_ort_tensor in[2];
  memset(in, 0, sizeof in);
  in[0].elem_type = c->spec.elem_type;
  in[0].rank = c->rank;
  memcpy(in[0].dims, c->dims, sizeof c->dims);
  in[0].data = (void *)x;
  in[1].elem_type = c->spec.elem_type;
  in[1].rank = c->bias_rank;
  memcpy(in[1].dims, c->bias_dims, sizeof c->bias_dims);
  in[1].data = (void *)bias;
  actx_ort_tensor *out = NULL;
  size_t n_out = 0;
  if (actx_ort_run(s, c->spec.bias ? 2 : 1, in, &out, &n_out, &err) != 0) {
    snprintf(o->run_error, sizeof o->run_error, "%s", err.message);
  } else {
    o->y = out[0].data;
    o->y_bytes = out[0].bytes;
    out[0].data = NULL;
    actx_ort_tensors_free(out, n_out);
  }
  actx_ort_session_free(s);
}

static void check_case(const decline_case *c) {
  uint8_t *model = NULL;
  size_t size = 0;
  if (ep_build_model(&c->spec, &model, &size) != 0) {
    CHECK(false, "%s: model", c->label);
    return;
  }
  /* inputs: 64 elements of anything is enough for these shapes */
  double x[64], bias[64];
  for (int i = 0; i < 64; i++) x[i] = bias[i] = (i % 7) - 3.0;
  if (c->spec.elem_type == ACTX_ELEM_FLOAT) {
    for (int i = 0; i < 64; i++) ((float *)x)[i] = ((float *)bias)[i] = (float)((i % 7) - 3) * 0.5f;
  } else if (c->spec.elem_type == ACTX_ELEM_INT32) {
    for (int i = 0; i < 64; i++) ((int32_t *)x)[i] = (i % 7) - 3;
  } else if (c->spec.elem_type == ACTX_ELEM_INT64) {
    for (int i = 0; i < 64; i++) ((int64_t *)x)[i] = (i % 7) - 3;
  }

  outcome alone, with;
  run_case(c, model, size, NULL, x, bias, &alone);
  run_case(c, model, size, "all", x, bias, &with);

  CHECK(alone.created == with.created, "%s: session %s without actx, %s with: %s%s", c->label,
        alone.created ? "created" : "failed", with.created ? "created" : "failed",
        alone.create_error, with.create_error);
  if (!alone.created && !with.created)
    CHECK(strcmp(alone.create_error, with.create_error) == 0, "%s: errors differ:\n  %s\n  %s",
          c->label, alone.create_error, with.create_error);
  if (alone.created && with.created) {
    CHECK(strcmp(with.ep, "CPUExecutionProvider") == 0, "%s: node ran on '%s'", c->label, with.ep);
    CHECK((alone.y == NULL) == (with.y == NULL), "%s: run %s without actx, %s with: %s%s", c->label,
          alone.y ? "ok" : "failed", with.y ? "ok" : "failed", alone.run_error, with.run_error);
    if (alone.y && with.y)
      CHECK(
          alone.y_bytes == with.y_bytes && ep_first_difference(alone.y, with.y, alone.y_bytes) < 0,
          "%s: outputs differ", c->label);
    if (!alone.y && !with.y)
      CHECK(strcmp(alone.run_error, with.run_error) == 0, "%s: run errors differ:\n  %s\n  %s",
            c->label, alone.run_error, with.run_error);
  }
  printf("%-36s %s%s\n", c->label,
         !with.created ? "session fails as without actx: "
         : with.y      ? "ORT ran it: "
                       : "ORT's own error: ",
         !with.created ? with.create_error
         : with.y      ? with.ep
                       : with.run_error);
  free(alone.y);
  free(with.y);
  free(model);
}

/* A node the registry has a kernel for, which policy none leaves: ORT's CPU EP runs it. */
static void check_registered_but_left(void) {
  const decline_case c = {.label = "Tanh-13 float, policy none",
                          .spec = {.op_type = "Tanh", .domain = "", F32, .rank = 2, .dims = {3, 5}},
                          .rank = 2,
                          .dims = {3, 5}};
  uint8_t *model = NULL;
  size_t size = 0;
  if (ep_build_model(&c.spec, &model, &size) != 0) {
    CHECK(false, "%s: model", c.label);
    return;
  }
  float x[15];
  for (int i = 0; i < 15; i++) x[i] = (float)(i - 7) * 0.25f;
  outcome o;
  run_case(&c, model, size, "none", x, NULL, &o);
  CHECK(o.created && o.y != NULL, "%s: %s%s", c.label, o.create_error, o.run_error);
  CHECK(strcmp(o.ep, "CPUExecutionProvider") == 0, "%s: node ran on '%s'", c.label, o.ep);
  printf("%-36s ORT ran it: %s\n", c.label, o.ep);
  free(o.y);
  free(model);
}

int main(int argc, char **argv) {
  if (ep_test_init(argc, argv) != 0) return 2;
  for (size_t i = 0; i < N_CASES; i++) check_case(&cases[i]);
  check_registered_but_left();
  actx_ort_shutdown();
  printf("%zu cases, %d failures\n", N_CASES, g_failures);
  return g_failures ? 1 : 0;
}
