/* The ONNX model builder and tensor reader (tools/ort/model.h), without ORT.
 *
 * usage: test_ort_model [<onnx node-test directory, e.g. .../node/test_erf>]
 *
 * Builds models, serializes them and reads them back; parses TensorProtos written by hand in
 * every encoding ONNX allows; checks that errors are sticky values with useful messages. With a
 * directory argument, also reads ONNX's own test_data_set_0/input_0.pb and model.onnx. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

static int g_failures;

#define CHECK(cond, ...)                                     \
  do {                                                       \
    if (!(cond)) {                                           \
      g_failures++;                                          \
      printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      printf(__VA_ARGS__);                                   \
      printf("\n");                                          \
    }                                                        \
  } while (0)

/* ---- Protobuf wire encoding, by hand, to test the reader on encodings we do not write ---- */

typedef struct wire {
  uint8_t bytes[4096];
  size_t size;
} wire;

static void put_varint(wire *w, uint64_t v) {
  do {
    uint8_t b = v & 0x7f;
    v >>= 7;
    w->bytes[w->size++] = b | (v != 0 ? 0x80 : 0);
  } while (v != 0);
}

static void put_key(wire *w, unsigned field, unsigned wire_type) {
  put_varint(w, (uint64_t)field << 3 | wire_type);
}

static void put_bytes(wire *w, unsigned field, const void *data, size_t len) {
  put_key(w, field, 2);
  put_varint(w, len);
  memcpy(w->bytes + w->size, data, len);
  w->size += len;
}

/* TensorProto field numbers (onnx.proto). */
enum {
  TP_DIMS = 1,
  TP_DATA_TYPE = 2,
  TP_FLOAT_DATA = 4,
  TP_INT32_DATA = 5,
  TP_INT64_DATA = 7,
  TP_NAME = 8,
  TP_RAW_DATA = 9,
  TP_DOUBLE_DATA = 10,
  TP_DATA_LOCATION = 14
};

static void put_header(wire *w, const char *name, int32_t type, size_t rank, const int64_t *dims) {
  w->size = 0;
  for (size_t i = 0; i < rank; i++) {
    put_key(w, TP_DIMS, 0);
    put_varint(w, (uint64_t)dims[i]);
  }
  put_key(w, TP_DATA_TYPE, 0);
  put_varint(w, (uint64_t)type);
  put_bytes(w, TP_NAME, name, strlen(name));
}

static void test_tensor_encodings(void) {
  char err[256];
  actx_tensor t;
  wire w;
  const int64_t dims[2] = {2, 3};

  /* float_data, packed */
  float f[6] = {0.0f, -1.5f, 3.25f, 1e-40f, -0.0f, 65504.0f};
  put_header(&w, "f", ACTX_ELEM_FLOAT, 2, dims);
  put_bytes(&w, TP_FLOAT_DATA, f, sizeof f);
  CHECK(actx_tensor_parse(w.bytes, w.size, &t, err, sizeof err) == 0, "%s", err);
  CHECK(t.elem_type == ACTX_ELEM_FLOAT && t.rank == 2 && t.dims[0] == 2 && t.dims[1] == 3 &&
            t.count == 6 && t.bytes == 24 && strcmp(t.name, "f") == 0,
        "float_data header");
  CHECK(t.data != NULL && memcmp(t.data, f, sizeof f) == 0, "float_data bits");
  actx_tensor_free(&t);

  /* float16 bit patterns in int32_data (packed varints), including 0x8000 and 0xffff */
  uint16_t h[6] = {0x0000, 0x8000, 0x3c00, 0x7bff, 0x7e01, 0xffff};
  put_header(&w, "h", ACTX_ELEM_FLOAT16, 2, dims);
  wire packed = {.size = 0};
  for (int i = 0; i < 6; i++)
    put_varint(&packed, h[i]);
  put_bytes(&w, TP_INT32_DATA, packed.bytes, packed.size);
  CHECK(actx_tensor_parse(w.bytes, w.size, &t, err, sizeof err) == 0, "%s", err);
  CHECK(t.elem_type == ACTX_ELEM_FLOAT16 && t.bytes == 12 && memcmp(t.data, h, 12) == 0,
        "float16 from int32_data");
  actx_tensor_free(&t);

  /* bfloat16 as raw_data */
  uint16_t b[6] = {0x3f80, 0xbf80, 0x7f80, 0xff80, 0x0001, 0x7fc1};
  put_header(&w, "b", ACTX_ELEM_BFLOAT16, 2, dims);
  put_bytes(&w, TP_RAW_DATA, b, sizeof b);
  CHECK(actx_tensor_parse(w.bytes, w.size, &t, err, sizeof err) == 0, "%s", err);
  CHECK(t.elem_type == ACTX_ELEM_BFLOAT16 && memcmp(t.data, b, sizeof b) == 0, "bfloat16 raw");
  actx_tensor_free(&t);

  /* int64_data, unpacked (one key per value), with negatives */
  int64_t q[6] = {0, -1, INT64_MIN, INT64_MAX, 42, -7};
  put_header(&w, "q", ACTX_ELEM_INT64, 2, dims);
  for (int i = 0; i < 6; i++) {
    put_key(&w, TP_INT64_DATA, 0);
    put_varint(&w, (uint64_t)q[i]);
  }
  CHECK(actx_tensor_parse(w.bytes, w.size, &t, err, sizeof err) == 0, "%s", err);
  CHECK(t.elem_type == ACTX_ELEM_INT64 && memcmp(t.data, q, sizeof q) == 0, "int64_data");
  actx_tensor_free(&t);

  /* double_data */
  double d[6] = {1.0, -2.0, 1e300, -0.0, 5e-324, 3.5};
  put_header(&w, "d", ACTX_ELEM_DOUBLE, 2, dims);
  put_bytes(&w, TP_DOUBLE_DATA, d, sizeof d);
  CHECK(actx_tensor_parse(w.bytes, w.size, &t, err, sizeof err) == 0, "%s", err);
  CHECK(t.elem_type == ACTX_ELEM_DOUBLE && memcmp(t.data, d, sizeof d) == 0, "double_data");
  actx_tensor_free(&t);

  /* a scalar and an empty tensor */
  put_header(&w, "s", ACTX_ELEM_FLOAT, 0, NULL);
  put_bytes(&w, TP_RAW_DATA, f, 4);
  CHECK(actx_tensor_parse(w.bytes, w.size, &t, err, sizeof err) == 0 && t.rank == 0 && t.count == 1,
        "scalar: %s", err);
  actx_tensor_free(&t);
  const int64_t empty_dims[2] = {0, 5};
  put_header(&w, "e", ACTX_ELEM_FLOAT, 2, empty_dims);
  CHECK(actx_tensor_parse(w.bytes, w.size, &t, err, sizeof err) == 0 && t.count == 0 &&
            t.data == NULL,
        "empty: %s", err);
  actx_tensor_free(&t);

  /* errors: too few values, raw_data of the wrong size, external data, strings, garbage */
  put_header(&w, "short", ACTX_ELEM_FLOAT, 2, dims);
  put_bytes(&w, TP_FLOAT_DATA, f, 5 * sizeof(float));
  CHECK(actx_tensor_parse(w.bytes, w.size, &t, err, sizeof err) != 0 && strstr(err, "short"),
        "too few values not reported: %s", err);
  put_header(&w, "raw", ACTX_ELEM_FLOAT, 2, dims);
  put_bytes(&w, TP_RAW_DATA, f, 23);
  CHECK(actx_tensor_parse(w.bytes, w.size, &t, err, sizeof err) != 0 && strstr(err, "raw_data"),
        "wrong raw size not reported: %s", err);
  put_header(&w, "ext", ACTX_ELEM_FLOAT, 2, dims);
  put_key(&w, TP_DATA_LOCATION, 0);
  put_varint(&w, 1);
  CHECK(actx_tensor_parse(w.bytes, w.size, &t, err, sizeof err) != 0 && strstr(err, "external"),
        "external data not reported: %s", err);
  put_header(&w, "str", 8 /* STRING */, 2, dims);
  CHECK(actx_tensor_parse(w.bytes, w.size, &t, err, sizeof err) != 0, "string tensor accepted");
  const uint8_t garbage[] = {0xff, 0xff, 0xff, 0xff, 0xff};
  CHECK(actx_tensor_parse(garbage, sizeof garbage, &t, err, sizeof err) != 0, "garbage accepted");
  CHECK(actx_tensor_read_file("/nonexistent/input_0.pb", &t, err, sizeof err) != 0 &&
            strstr(err, "/nonexistent/input_0.pb") != NULL,
        "missing file: %s", err);
}

static void test_build_and_read_back(void) {
  actx_model *m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, 20, 1);
  CHECK(m != NULL && actx_model_error(m) == NULL, "create");
  const int64_t dims[3] = {-1, 4, 768};
  const char *params[3] = {"batch", NULL, NULL};
  actx_model_add_input(m, "x", ACTX_ELEM_FLOAT16, 3, dims, params);
  const int64_t bias_dims[1] = {768};
  uint16_t bias[768];
  for (int i = 0; i < 768; i++)
    bias[i] = (uint16_t)(0x3c00 + i);
  actx_model_add_initializer(m, "bias", ACTX_ELEM_FLOAT16, 1, bias_dims, bias);
  const int64_t shape_dims[1] = {2};
  const int64_t shape[2] = {-1, 768};
  actx_model_add_initializer(m, "shape", ACTX_ELEM_INT64, 1, shape_dims, shape);
  const char *in1[2] = {"x", "bias"}, *out1[1] = {"g"};
  actx_model_node *n1 = actx_model_add_node(m, "BiasGelu", ACTX_MODEL_MS_DOMAIN, 2, in1, 1, out1);
  CHECK(n1 != NULL, "node");
  const char *in2[2] = {"g", "shape"}, *out2[1] = {"y"};
  actx_model_node *n2 = actx_model_add_named_node(m, "reshape", "Reshape", "", 2, in2, 1, out2);
  CHECK(actx_model_node_attr_int(n2, "allowzero", 0) == 0, "int attr");
  CHECK(actx_model_node_attr_float(n1, "alpha", 1.702f) == 0, "float attr");
  CHECK(actx_model_node_attr_string(n1, "approximate", "tanh") == 0, "string attr");
  const float fs[3] = {1, 2, 3};
  const int64_t is[2] = {-1, 1};
  CHECK(actx_model_node_attr_floats(n1, "fs", 3, fs) == 0, "floats attr");
  CHECK(actx_model_node_attr_ints(n1, "is", 2, is) == 0, "ints attr");
  const int64_t out_dims[2] = {-1, 768};
  const char *out_params[2] = {"rows", NULL};
  actx_model_add_output(m, "y", ACTX_ELEM_FLOAT16, 2, out_dims, out_params);

  uint8_t *bytes = NULL;
  size_t size = 0;
  CHECK(actx_model_serialize(m, &bytes, &size) == 0 && size > 768 * 2, "serialize: %s",
        actx_model_error(m) != NULL ? actx_model_error(m) : "");
  actx_model_free(m);

  char err[256];
  actx_model_info info;
  CHECK(actx_model_info_parse(bytes, size, &info, err, sizeof err) == 0, "parse: %s", err);
  CHECK(info.ir_version == ACTX_MODEL_DEFAULT_IR_VERSION && info.onnx_opset == 20 &&
            info.ms_opset == 1 && info.n_nodes == 2,
        "model header: ir %lld opsets %lld/%lld nodes %zu", (long long)info.ir_version,
        (long long)info.onnx_opset, (long long)info.ms_opset, info.n_nodes);
  CHECK(info.n_inputs == 1 && strcmp(info.inputs[0].name, "x") == 0 &&
            info.inputs[0].elem_type == ACTX_ELEM_FLOAT16 && info.inputs[0].rank == 3 &&
            info.inputs[0].dims[0] == -1 && info.inputs[0].dims[1] == 4 &&
            info.inputs[0].dims[2] == 768,
        "input read back");
  CHECK(info.n_outputs == 1 && strcmp(info.outputs[0].name, "y") == 0 &&
            info.outputs[0].rank == 2 && info.outputs[0].dims[0] == -1,
        "output read back");
  actx_model_info_free(&info);

  /* Truncated bytes must be an error, not a crash. */
  CHECK(actx_model_info_parse(bytes, size / 2, &info, err, sizeof err) != 0, "truncated model");
  free(bytes);
}

/* rc must be a failure and the model's first error must contain expect; frees the model. */
static void expect_error(actx_model *m, int rc, const char *expect) {
  const char *message = actx_model_error(m);
  CHECK(rc != 0 && message != NULL && strstr(message, expect) != NULL,
        "expected an error containing \"%s\", got rc %d, \"%s\"", expect, rc,
        message != NULL ? message : "(none)");
  actx_model_free(m);
}

static void test_errors_are_sticky(void) {
  actx_model *m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, 13, 0);
  const int64_t dims[1] = {4};
  CHECK(actx_model_add_input(m, "", ACTX_ELEM_FLOAT, 1, dims, NULL) != 0, "empty name accepted");
  const char *first = actx_model_error(m);
  CHECK(first != NULL && strstr(first, "name") != NULL, "message: %s", first ? first : "(none)");
  /* Later calls fail without replacing the first message. */
  CHECK(actx_model_add_input(m, "x", ACTX_ELEM_FLOAT, 1, dims, NULL) != 0, "call after error");
  const char *in[1] = {"x"}, *out[1] = {"y"};
  actx_model_node *n = actx_model_add_node(m, "Erf", "", 1, in, 1, out);
  CHECK(n == NULL, "node after error");
  CHECK(actx_model_node_attr_int(n, "a", 1) != 0, "attribute on a NULL node");
  uint8_t *bytes = (uint8_t *)1;
  size_t size = 99;
  CHECK(actx_model_serialize(m, &bytes, &size) != 0 && bytes == NULL && size == 0,
        "serialize after error");
  CHECK(strstr(actx_model_error(m), "name") != NULL, "first message kept: %s", actx_model_error(m));
  actx_model_free(m);

  /* Each kind of bad argument fails and names what was wrong. */
  m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, 13, 0);
  expect_error(m, actx_model_add_initializer(m, "w", 8 /* STRING */, 1, dims, "abcd"),
               "not supported");
  m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, 13, 0);
  const int64_t negative[1] = {-3};
  expect_error(m, actx_model_add_initializer(m, "w", ACTX_ELEM_FLOAT, 1, negative, NULL),
               "'w': dims must be non-negative");
  m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, 13, 0);
  expect_error(m, actx_model_add_input(m, "x", ACTX_ELEM_FLOAT, 9, dims, NULL), "rank 9");
  m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, 13, 0);
  expect_error(m, actx_model_add_output(m, "y", 0, 1, dims, NULL), "element type 0");
  m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, 13, 0);
  const char *null_input[1] = {NULL};
  expect_error(m, actx_model_add_node(m, "Erf", "", 1, null_input, 1, out) == NULL ? -1 : 0,
               "input 0 is NULL");
  m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, 13, 0);
  expect_error(
      m,
      actx_model_node_attr_string(actx_model_add_node(m, "Erf", "", 1, in, 1, out), "mode", NULL),
      "mode is NULL");
  m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, 13, 0);
  expect_error(m, actx_model_serialize(m, &bytes, &size), "at least one node");
  m = actx_model_create(0, 13, 0);
  expect_error(m, actx_model_error(m) != NULL ? -1 : 0, "must be positive");
}

static void test_onnx_node_test_files(const char *dir) {
  char path[1024], err[512];
  snprintf(path, sizeof path, "%s/test_data_set_0/input_0.pb", dir);
  actx_tensor t;
  CHECK(actx_tensor_read_file(path, &t, err, sizeof err) == 0, "%s", err);
  CHECK(t.elem_type == ACTX_ELEM_FLOAT && t.count > 0 && t.bytes == t.count * 4,
        "%s: type %d count %zu", path, (int)t.elem_type, t.count);
  printf("read %s: %s '%s' rank %zu, %zu elements\n", path, actx_elem_name(t.elem_type), t.name,
         t.rank, t.count);
  actx_tensor_free(&t);

  snprintf(path, sizeof path, "%s/model.onnx", dir);
  uint8_t *bytes = NULL;
  size_t size = 0;
  CHECK(actx_read_file(path, &bytes, &size, err, sizeof err) == 0, "%s", err);
  actx_model_info info;
  CHECK(actx_model_info_parse(bytes, size, &info, err, sizeof err) == 0, "%s", err);
  CHECK(info.n_nodes == 1 && info.n_inputs >= 1 && info.n_outputs == 1, "%s: %zu nodes", path,
        info.n_nodes);
  printf("read %s: ir %lld, opset %lld, %zu input(s), first '%s'\n", path,
         (long long)info.ir_version, (long long)info.onnx_opset, info.n_inputs,
         info.n_inputs > 0 ? info.inputs[0].name : "");
  actx_model_info_free(&info);
  free(bytes);
}

int main(int argc, char **argv) {
  test_tensor_encodings();
  test_build_and_read_back();
  test_errors_are_sticky();
  if (argc > 1)
    test_onnx_node_test_files(argv[1]);
  printf(g_failures == 0 ? "PASS\n" : "FAILED (%d)\n", g_failures);
  return g_failures == 0 ? 0 : 1;
}
