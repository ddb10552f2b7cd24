/* The EP's one reader of a bfloat16 node (ep/bf16_attrs.c), from both of its sources: every
 * attribute kind (int, float, int list, string), set and unset, and left-out optional inputs.
 *
 * usage: test_ep_bf16_attrs <absolute path of actx_ep_bf16_probe's library>
 *
 * Run on the test build of the EP whose probe families (bf16_probe_families.c) make a Gemm,
 * Conv, Resize or ReduceMean kernel only when the node reads exactly as this test built it
 * (bf16_probe.h): the claim reads the OrtNode, the kernel's creation the OrtKernelInfo, and each
 * read goes through that check, so a session whose node runs on actx means both reads were
 * right. A string attribute holding a NUL byte ("linear\0junk", which a reader stopping at the
 * NUL would take for "linear") is refused, and the node left to ORT, whose error names it. */
#include <stdlib.h>
#include <string.h>

#include "bf16_probe.h"
#include "ep_test.h"

static actx_model *new_model(int64_t opset) {
  return actx_model_create(opset >= 21 ? 10 : ACTX_MODEL_DEFAULT_IR_VERSION, opset, 0);
}

static int finish(actx_model *m, uint8_t **bytes, size_t *size) {
  const int rc = actx_model_serialize(m, bytes, size);
  if (rc != 0) printf("model: %s\n", actx_model_error(m));
  actx_model_free(m);
  return rc;
}

static int gemm_model(uint8_t **bytes, size_t *size) {
  actx_model *m = new_model(13);
  const int64_t a[2] = {4, 3}, b[2] = {4, 5}, y[2] = {3, 5};
  actx_model_add_input(m, "a", ACTX_ELEM_BFLOAT16, 2, a, NULL);
  actx_model_add_input(m, "b", ACTX_ELEM_BFLOAT16, 2, b, NULL);
  actx_model_add_output(m, "y", ACTX_ELEM_BFLOAT16, 2, y, NULL);
  const char *in[3] = {"a", "b", ""}, *out[1] = {"y"};
  actx_model_node *n = actx_model_add_named_node(m, "gemm", "Gemm", "", 3, in, 1, out);
  actx_model_node_attr_float(n, "alpha", PROBE_GEMM_ALPHA);
  actx_model_node_attr_float(n, "beta", PROBE_GEMM_BETA);
  actx_model_node_attr_int(n, "transA", 1);
  actx_model_node_attr_int(n, "transB", 0);
  return finish(m, bytes, size);
}

static int conv_model(uint8_t **bytes, size_t *size) {
  actx_model *m = new_model(22);
  const int64_t x[4] = {1, 2, 9, 9}, w[4] = {4, 1, 3, 3}, y[4] = {1, 4, 5, 5};
  actx_model_add_input(m, "x", ACTX_ELEM_BFLOAT16, 4, x, NULL);
  actx_model_add_input(m, "w", ACTX_ELEM_BFLOAT16, 4, w, NULL);
  actx_model_add_output(m, "y", ACTX_ELEM_BFLOAT16, 4, y, NULL);
  const char *in[2] = {"x", "w"}, *out[1] = {"y"};
  actx_model_node *n = actx_model_add_named_node(m, "conv", "Conv", "", 2, in, 1, out);
  static const int64_t strides[] = PROBE_CONV_STRIDES, pads[] = PROBE_CONV_PADS,
                       dilations[] = PROBE_CONV_DILATIONS, kernel[] = {3, 3};
  actx_model_node_attr_int(n, "group", 2);
  actx_model_node_attr_ints(n, "strides", 2, strides);
  actx_model_node_attr_ints(n, "pads", 4, pads);
  actx_model_node_attr_ints(n, "dilations", 2, dilations);
  actx_model_node_attr_ints(n, "kernel_shape", 2, kernel);
  actx_model_node_attr_string(n, "auto_pad", "NOTSET");
  return finish(m, bytes, size);
}

/* mode_len: the bytes of mode (it may hold a NUL) */
static int resize_model(const char *mode, size_t mode_len, uint8_t **bytes, size_t *size) {
  actx_model *m = new_model(19);
  const int64_t x[4] = {1, 1, 4, 4}, y[4] = {1, 1, 8, 8}, s[1] = {4};
  const float scales[4] = {1, 1, 2, 2};
  actx_model_add_input(m, "x", ACTX_ELEM_BFLOAT16, 4, x, NULL);
  actx_model_add_output(m, "y", ACTX_ELEM_BFLOAT16, 4, y, NULL);
  actx_model_add_initializer(m, "scales", ACTX_ELEM_FLOAT, 1, s, scales);
  const char *in[3] = {"x", "", "scales"}, *out[1] = {"y"};
  actx_model_node *n = actx_model_add_named_node(m, "resize", "Resize", "", 3, in, 1, out);
  actx_model_node_attr_bytes(n, "mode", mode, mode_len);
  actx_model_node_attr_string(n, "coordinate_transformation_mode", "align_corners");
  actx_model_node_attr_string(n, "nearest_mode", "floor");
  actx_model_node_attr_float(n, "cubic_coeff_a", PROBE_RESIZE_CUBIC);
  actx_model_node_attr_int(n, "exclude_outside", 1);
  actx_model_node_attr_float(n, "extrapolation_value", PROBE_RESIZE_EXTRAPOLATION);
  actx_model_node_attr_int(n, "antialias", 0);
  return finish(m, bytes, size);
}

static int reduce_model(uint8_t **bytes, size_t *size) {
  actx_model *m = new_model(13);
  const int64_t x[3] = {2, 3, 4}, y[1] = {2};
  static const int64_t axes[] = PROBE_REDUCE_AXES;
  actx_model_add_input(m, "x", ACTX_ELEM_BFLOAT16, 3, x, NULL);
  actx_model_add_output(m, "y", ACTX_ELEM_BFLOAT16, 1, y, NULL);
  const char *in[1] = {"x"}, *out[1] = {"y"};
  actx_model_node *n = actx_model_add_named_node(m, "reduce", "ReduceMean", "", 1, in, 1, out);
  actx_model_node_attr_ints(n, "axes", 2, axes);
  actx_model_node_attr_int(n, "keepdims", 0);
  return finish(m, bytes, size);
}

/* Creates the session (policy all); taken: the node must run on actx, else the session must fail
 * with ORT's error naming it. */
static void check(const char *label, int built, const uint8_t *model, size_t size,
                  const char *node, bool taken) {
  CHECK(built == 0, "%s: model", label);
  if (built != 0) return;
  const ep_session_spec spec = {.policy = "all", .threads = 1};
  actx_ort_session *s = NULL;
  actx_ort_error err;
  const int rc = ep_session_create(model, size, &spec, &s, &err);
  char quoted[64];
  snprintf(quoted, sizeof quoted, "'%s'", node);
  if (taken) {
    CHECK(rc == 0, "%s: %s", label, err.message);
  } else {
    CHECK(rc != 0, "%s: the node was taken", label);
    /* left to ORT at the claim: the error is ORT's, not a kernel of ours refusing it */
    CHECK(rc == 0 || (strstr(err.message, quoted) != NULL && strstr(err.message, "actx") == NULL),
          "%s: %s", label, err.message);
  }
  if (rc != 0) return;
  char ep[64];
  ep_node_ep(s, node, ep, sizeof ep);
  CHECK(strcmp(ep, "actx") == 0, "%s: node '%s' runs on '%s'", label, node, ep);
  actx_ort_session_free(s);
}

int main(int argc, char **argv) {
  if (ep_test_init(argc, argv) != 0) return 2;
  uint8_t *model = NULL;
  size_t size = 0;
  int built = gemm_model(&model, &size);
  check("Gemm: floats, ints, C left out", built, model, size, "gemm", true);
  free(model);
  built = conv_model(&model, &size);
  check("Conv: int lists, a string", built, model, size, "conv", true);
  free(model);
  built = resize_model("linear", 6, &model, &size);
  check("Resize: strings, floats, roi left out", built, model, size, "resize", true);
  free(model);
  built = reduce_model(&model, &size);
  check("ReduceMean-13: axes, keepdims", built, model, size, "reduce", true);
  free(model);
  built = resize_model("linear\0junk", 11, &model, &size);
  check("Resize: mode with a NUL byte", built, model, size, "resize", false);
  free(model);
  actx_ort_shutdown();
  if (g_failures) {
    printf("%d failure(s)\n", g_failures);
    return 1;
  }
  printf("ok\n");
  return 0;
}
