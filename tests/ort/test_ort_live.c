/* ep/ort_abi.h and tools/ort/host.h against the real libonnxruntime.so.1.
 *
 * usage: test_ort_live [<path of a plugin EP library> <its EP name>]
 *
 * Calls typed slots of every area the header covers and checks their results: version and API
 * lookup, status round trips, env, key-value pairs, EP devices, sessions from built models
 * (float, float16, bfloat16, int64 initializers, symbolic dims), run, type/shape info, the EP
 * assignment, and clean errors for
 * bad EP libraries, unknown EPs, bad models and bad inputs. With an EP library, also registers it
 * twice and runs a session on it. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"
#include "model.h"
#include "ort_abi.h"

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

static const char k_cpu_ep[] = "CPUExecutionProvider";

static void test_api_base(void) {
  const OrtApiBase *base = OrtGetApiBase();
  CHECK(base != NULL, "OrtGetApiBase");
  const char *version = base->GetVersionString();
  CHECK(strcmp(version, "1.30.0") == 0, "version %s", version);
  CHECK(base->GetApi(ORT_API_VERSION) != NULL, "GetApi(%d)", ORT_API_VERSION);
  CHECK(base->GetApi(ORT_API_VERSION) == actx_ort_api(NULL), "one OrtApi table");
  printf("ORT %s, API %d\n", version, ORT_API_VERSION);
}

static void test_status_round_trip(const OrtApi *api) {
  const OrtErrorCode codes[] = {ORT_FAIL,          ORT_INVALID_ARGUMENT, ORT_NO_SUCHFILE,
                                ORT_INVALID_GRAPH, ORT_EP_FAIL,          ORT_NOT_FOUND};
  for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
    char message[64];
    snprintf(message, sizeof message, "status %zu: %s", i, actx_ort_error_code_name(codes[i]));
    OrtStatus *status = api->CreateStatus(codes[i], message);
    CHECK(status != NULL, "CreateStatus");
    CHECK(api->GetErrorCode(status) == codes[i], "code %d", (int)api->GetErrorCode(status));
    CHECK(strcmp(api->GetErrorMessage(status), message) == 0, "message '%s'",
          api->GetErrorMessage(status));
    actx_ort_error err;
    CHECK(actx_ort_check(status, "round trip", &err) == -1 && err.code == codes[i] &&
              strstr(err.message, message) != NULL &&
              strstr(err.message, actx_ort_error_code_name(codes[i])) != NULL,
          "actx_ort_check: %s", err.message);
  }
  CHECK(actx_ort_check(NULL, "success", NULL) == 0, "NULL status is success");
}

static void test_key_value_pairs_and_devices(const OrtApi *api, OrtEnv *env) {
  OrtKeyValuePairs *kv = NULL;
  api->CreateKeyValuePairs(&kv);
  api->AddKeyValuePair(kv, "alpha", "1");
  api->AddKeyValuePair(kv, "beta", "two");
  CHECK(strcmp(api->GetKeyValue(kv, "beta"), "two") == 0, "GetKeyValue");
  const char *const *keys = NULL, *const *values = NULL;
  size_t n = 0;
  api->GetKeyValuePairs(kv, &keys, &values, &n);
  CHECK(n == 2, "%zu pairs", n);
  api->RemoveKeyValuePair(kv, "alpha");
  CHECK(api->GetKeyValue(kv, "alpha") == NULL, "RemoveKeyValuePair");
  api->ReleaseKeyValuePairs(kv);

  const OrtEpDevice *const *devices = NULL;
  size_t n_devices = 0;
  CHECK(actx_ort_check(api->GetEpDevices(env, &devices, &n_devices), "GetEpDevices", NULL) == 0,
        "GetEpDevices");
  bool cpu = false;
  for (size_t i = 0; i < n_devices; i++) {
    const OrtHardwareDevice *hw = api->EpDevice_Device(devices[i]);
    printf("device %zu: EP %s (%s), hardware type %d vendor %s\n", i,
           api->EpDevice_EpName(devices[i]), api->EpDevice_EpVendor(devices[i]),
           (int)api->HardwareDevice_Type(hw), api->HardwareDevice_Vendor(hw));
    if (strcmp(api->EpDevice_EpName(devices[i]), k_cpu_ep) == 0)
      cpu = api->HardwareDevice_Type(hw) == OrtHardwareDeviceType_CPU;
  }
  CHECK(cpu, "the CPU EP is listed on a CPU device");
}

/* y = Sigmoid(x + b): float input with a symbolic batch, a float initializer. */
static uint8_t *build_sigmoid_add(size_t *size) {
  actx_model *m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, 13, 0);
  const int64_t dims[2] = {-1, 4};
  const char *params[2] = {"N", NULL};
  const int64_t b_dims[1] = {4};
  const float b[4] = {0.5f, -0.25f, 1.0f, 0.0f};
  actx_model_add_input(m, "x", ACTX_ELEM_FLOAT, 2, dims, params);
  actx_model_add_initializer(m, "b", ACTX_ELEM_FLOAT, 1, b_dims, b);
  const char *add_in[2] = {"x", "b"}, *add_out[1] = {"s"};
  actx_model_add_named_node(m, "add", "Add", "", 2, add_in, 1, add_out);
  const char *sig_in[1] = {"s"}, *sig_out[1] = {"y"};
  actx_model_add_named_node(m, "sigmoid", "Sigmoid", "", 1, sig_in, 1, sig_out);
  actx_model_add_output(m, "y", ACTX_ELEM_FLOAT, 2, dims, params);
  uint8_t *bytes = NULL;
  if (actx_model_serialize(m, &bytes, size) != 0)
    printf("FAIL building the model: %s\n", actx_model_error(m));
  actx_model_free(m);
  return bytes;
}

static void test_session_run(void) {
  size_t size = 0;
  uint8_t *model = build_sigmoid_add(&size);
  CHECK(model != NULL, "model");
  for (int threads = 1; threads <= 2; threads++) {
    actx_ort_session_options opt = {.intra_op_threads = threads, .record_assignments = true};
    actx_ort_session *s = NULL;
    actx_ort_error err = {0};
    CHECK(actx_ort_session_create(model, size, &opt, &s, &err) == 0, "%s", err.message);
    if (s == NULL)
      continue;

    CHECK(actx_ort_session_input_count(s) == 1 && actx_ort_session_output_count(s) == 1,
          "io counts");
    actx_ort_tensor info;
    CHECK(actx_ort_session_input_info(s, 0, &info, &err) == 0, "%s", err.message);
    CHECK(strcmp(info.name, "x") == 0 && info.elem_type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT &&
              info.rank == 2 && info.dims[0] == -1 && info.dims[1] == 4,
          "input info: %s type %d rank %zu dims %lld,%lld", info.name, (int)info.elem_type,
          info.rank, (long long)info.dims[0], (long long)info.dims[1]);
    CHECK(actx_ort_session_output_info(s, 0, &info, &err) == 0 && strcmp(info.name, "y") == 0,
          "output info");
    CHECK(actx_ort_session_output_info(s, 1, &info, &err) != 0 && err.code == ORT_INVALID_ARGUMENT,
          "output index out of range");

    float x[3][4] = {{0, 1, 2, 3}, {-1, -2, -3, -4}, {10, -10, 0.5f, -0.5f}};
    actx_ort_tensor in = {
        .elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, .rank = 2, .dims = {3, 4}, .data = x};
    actx_ort_tensor *out = NULL;
    size_t n_out = 0;
    CHECK(actx_ort_run(s, 1, &in, &out, &n_out, &err) == 0, "%s", err.message);
    if (out != NULL) {
      CHECK(n_out == 1 && out[0].elem_type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT &&
                out[0].rank == 2 && out[0].dims[0] == 3 && out[0].dims[1] == 4 &&
                out[0].count == 12 && out[0].bytes == 48 && strcmp(out[0].name, "y") == 0,
            "output shape");
      const float b[4] = {0.5f, -0.25f, 1.0f, 0.0f};
      const float *y = out[0].data;
      for (int i = 0; i < 12; i++) {
        double want = 1.0 / (1.0 + exp(-((double)x[i / 4][i % 4] + b[i % 4])));
        CHECK(fabs(y[i] - want) < 1e-6, "y[%d] = %.9g, want %.9g", i, y[i], want);
      }
    }
    actx_ort_tensors_free(out, n_out);

    /* Every node is on the CPU EP and the assignment names them. */
    actx_ort_assignment *list = NULL;
    size_t n = 0;
    CHECK(actx_ort_session_assignments(s, &list, &n, &err) == 0, "%s", err.message);
    CHECK(n == 2, "%zu assigned nodes", n);
    for (size_t i = 0; i < n; i++) {
      printf("threads %d: node %s (%s:%s) on %s\n", threads, list[i].node_name, list[i].domain,
             list[i].op_type, list[i].ep_name);
      CHECK(strcmp(list[i].ep_name, k_cpu_ep) == 0, "node %s on %s", list[i].node_name,
            list[i].ep_name);
    }
    free(list);
    CHECK(actx_ort_count_nodes_on(s, k_cpu_ep, &err) == 2, "count on CPU");

    /* Wrong element type and wrong shape are errors, not crashes. */
    double wrong[12] = {0};
    actx_ort_tensor bad = {.elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE,
                           .rank = 2,
                           .dims = {3, 4},
                           .data = wrong};
    CHECK(actx_ort_run(s, 1, &bad, &out, &n_out, &err) != 0 && out == NULL &&
              err.code == ORT_INVALID_ARGUMENT,
          "double input accepted: %s", err.message);
    printf("wrong type: %s\n", err.message);
    actx_ort_tensor bad_shape = {
        .elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, .rank = 2, .dims = {2, 6}, .data = x};
    CHECK(actx_ort_run(s, 1, &bad_shape, &out, &n_out, &err) != 0, "[2,6] accepted");
    actx_ort_tensor null_data = {
        .elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, .rank = 2, .dims = {3, 4}, .data = NULL};
    CHECK(actx_ort_run(s, 1, &null_data, &out, &n_out, &err) != 0 &&
              strstr(err.message, "NULL") != NULL,
          "NULL data: %s", err.message);
    actx_ort_session_free(s);
  }

  /* Without record_assignments, asking for them is an error. */
  actx_ort_session *s = NULL;
  actx_ort_error err = {0};
  CHECK(actx_ort_session_create(model, size, NULL, &s, &err) == 0, "%s", err.message);
  actx_ort_assignment *list = NULL;
  size_t n = 0;
  CHECK(actx_ort_session_assignments(s, &list, &n, &err) != 0 && err.code == ORT_FAIL,
        "assignments without recording: %s", err.message);
  actx_ort_session_free(s);
  free(model);
}

/* float16 / bfloat16 through a Reshape whose shape is an int64 initializer: the bits must come
 * back as sent. */
static void test_half_types_and_int64(int32_t elem_type) {
  actx_model *m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, 14, 0);
  const int64_t in_dims[2] = {2, 3}, out_dims[2] = {3, 2}, shape_dims[1] = {2};
  actx_model_add_input(m, "x", elem_type, 2, in_dims, NULL);
  actx_model_add_initializer(m, "shape", ACTX_ELEM_INT64, 1, shape_dims, out_dims);
  const char *in[2] = {"x", "shape"}, *out_names[1] = {"y"};
  actx_model_add_node(m, "Reshape", "", 2, in, 1, out_names);
  actx_model_add_output(m, "y", elem_type, 2, out_dims, NULL);
  uint8_t *model = NULL;
  size_t size = 0;
  CHECK(actx_model_serialize(m, &model, &size) == 0, "%s", actx_model_error(m));
  actx_model_free(m);

  actx_ort_session *s = NULL;
  actx_ort_error err = {0};
  CHECK(actx_ort_session_create(model, size, NULL, &s, &err) == 0, "%s", err.message);
  /* zeros, infinities, a NaN with payload, the smallest subnormal (in either format) */
  uint16_t x[6] = {0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e01, 0x0001};
  actx_ort_tensor t = {
      .elem_type = (ONNXTensorElementDataType)elem_type, .rank = 2, .dims = {2, 3}, .data = x};
  actx_ort_tensor *out = NULL;
  size_t n_out = 0;
  CHECK(s != NULL && actx_ort_run(s, 1, &t, &out, &n_out, &err) == 0, "%s", err.message);
  if (out != NULL)
    CHECK((int32_t)out[0].elem_type == elem_type && out[0].dims[0] == 3 && out[0].dims[1] == 2 &&
              out[0].bytes == 12 && memcmp(out[0].data, x, 12) == 0,
          "%s round trip", actx_elem_name(elem_type));
  actx_ort_tensors_free(out, n_out);
  actx_ort_session_free(s);
  free(model);
}

/* A float16 model and its float32 twin (model_widen.c): y = Cast16(Tanh(x·c + k)) inside an If,
 * c an initializer of the main graph, k one of each branch. The twin must take and give float32, and compute what the
 * float16 model's nodes compute without rounding between them: tanh(x·c + k) in float32. */
static void test_widen_half(void) {
  actx_model *m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, 17, 0);
  const int64_t dims[1] = {4};
  actx_model_add_input(m, "x", ACTX_ELEM_FLOAT16, 1, dims, NULL);
  actx_model_add_input(m, "cond", ACTX_ELEM_BOOL, 0, NULL, NULL);
  actx_model_add_output(m, "y", ACTX_ELEM_FLOAT16, 1, dims, NULL);
  const uint16_t c = 0x3e66; /* 1.599609375 */
  actx_model_add_initializer(m, "c", ACTX_ELEM_FLOAT16, 0, NULL, &c);
  const char *cond = "cond", *y = "y";
  actx_model_node *iff = actx_model_add_node(m, "If", "", 1, &cond, 1, &y);
  for (int b = 0; b < 2; b++) {
    actx_model *g = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, 17, 0);
    actx_model_add_output(g, "v", ACTX_ELEM_FLOAT16, 1, dims, NULL);
    const char *mul_in[2] = {"x", "c"}, *t = "t", *u = "u", *w = "w", *v = "v";
    const char *add_in[2] = {"t", "k"};
    actx_model_add_node(g, "Mul", "", 2, mul_in, 1, &t);
    const uint16_t k = b ? 0x3400 : 0xb400; /* ±0.25 */
    actx_model_add_initializer(g, "k", ACTX_ELEM_FLOAT16, 0, NULL, &k);
    actx_model_add_node(g, "Add", "", 2, add_in, 1, &u);
    actx_model_add_node(g, "Tanh", "", 1, &u, 1, &w);
    actx_model_node *cast = actx_model_add_node(g, "Cast", "", 1, &w, 1, &v);
    actx_model_node_attr_int(cast, "to", ACTX_ELEM_FLOAT16);
    actx_model_node_attr_graph(iff, b ? "then_branch" : "else_branch", g);
  }
  uint8_t *model = NULL, *twin = NULL;
  size_t size = 0, twin_size = 0;
  char msg[256] = "";
  CHECK(actx_model_serialize(m, &model, &size) == 0, "%s", actx_model_error(m));
  actx_model_free(m);
  CHECK(model != NULL && actx_model_widen_half(model, size, &twin, &twin_size, msg, sizeof msg) == 0,
        "widen: %s", msg);
  actx_model_info info;
  CHECK(twin != NULL && actx_model_info_parse(twin, twin_size, &info, msg, sizeof msg) == 0, "%s",
        msg);
  if (twin != NULL) {
    CHECK(info.n_inputs == 2 && info.inputs[0].elem_type == ACTX_ELEM_FLOAT &&
              info.outputs[0].elem_type == ACTX_ELEM_FLOAT,
          "twin's input / output types %d / %d", info.inputs[0].elem_type,
          info.outputs[0].elem_type);
    actx_model_info_free(&info);
  }
  actx_ort_session *s = NULL;
  actx_ort_error err = {0};
  CHECK(twin != NULL && actx_ort_session_create(twin, twin_size, NULL, &s, &err) == 0, "twin: %s",
        err.message);
  const float x[4] = {-2.5f, -0.0f, 0.375f, 1e-5f}; /* each a float16 value */
  for (int b = 0; s != NULL && b < 2; b++) {
    const uint8_t cv = (uint8_t)b;
    const actx_ort_tensor in[2] = {
        {.elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, .rank = 1, .dims = {4}, .data = (void *)x},
        {.elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL, .data = (void *)&cv}};
    actx_ort_tensor *out = NULL;
    size_t n_out = 0;
    CHECK(actx_ort_run(s, 2, in, &out, &n_out, &err) == 0, "%s", err.message);
    for (int i = 0; out != NULL && i < 4; i++) {
      const float want = tanhf(x[i] * 1.599609375f + (b ? 0.25f : -0.25f));
      const float got = ((const float *)out[0].data)[i];
      CHECK(out[0].elem_type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT && fabsf(got - want) <= 1e-6f,
            "twin, branch %d, x %g: %.9g, want %.9g", b, x[i], got, want);
    }
    actx_ort_tensors_free(out, n_out);
  }
  actx_ort_session_free(s);
  free(twin);
  const uint8_t garbage[3] = {0xff, 0xff, 0xff};
  CHECK(actx_model_widen_half(garbage, sizeof garbage, &twin, &twin_size, msg, sizeof msg) != 0 &&
            twin == NULL,
        "garbage widened");
  free(model);
}

static void test_errors(void) {
  actx_ort_error err = {0};
  /* A missing EP library: ORT's error, code and path in the message. */
  CHECK(actx_ort_register_ep_library("/nonexistent/libnot_an_ep.so", &err) != 0 &&
            err.code != ORT_OK && strstr(err.message, "/nonexistent/libnot_an_ep.so") != NULL,
        "missing library: %s", err.message);
  printf("missing EP library: %s\n", err.message);
  /* A relative path that names nothing is reported before ORT sees it. */
  CHECK(actx_ort_register_ep_library("libnot_an_ep.so", &err) != 0 && err.code == ORT_NO_SUCHFILE &&
            strstr(err.message, "libnot_an_ep.so") != NULL,
        "relative path: %s", err.message);
  /* A file that is not a shared library. */
  CHECK(actx_ort_register_ep_library("/proc/self/status", &err) != 0, "not a library");

  size_t size = 0;
  uint8_t *model = build_sigmoid_add(&size);
  actx_ort_session *s = NULL;
  /* An EP nobody registered. */
  actx_ort_session_options opt = {.ep_name = "NoSuchExecutionProvider"};
  CHECK(actx_ort_session_create(model, size, &opt, &s, &err) != 0 && s == NULL &&
            err.code == ORT_NOT_FOUND && strstr(err.message, k_cpu_ep) != NULL,
        "unknown EP: %s", err.message);
  /* A library path without an EP name. */
  actx_ort_session_options no_name = {.ep_library_path = "/nonexistent/lib.so"};
  CHECK(actx_ort_session_create(model, size, &no_name, &s, &err) != 0, "EP path without name");
  /* The CPU EP appended by name through SessionOptionsAppendExecutionProvider_V2. */
  actx_ort_session_options cpu = {.ep_name = k_cpu_ep, .intra_op_threads = 1};
  CHECK(actx_ort_session_create(model, size, &cpu, &s, &err) == 0, "CPU EP by name: %s",
        err.message);
  actx_ort_session_free(s);
  s = NULL;
  /* Bad config entries and thread counts. */
  const char *keys[1] = {"session.intra_op.allow_spinning"}, *values[1] = {"0"};
  actx_ort_session_options config = {.n_config = 1, .config_keys = keys, .config_values = values};
  CHECK(actx_ort_session_create(model, size, &config, &s, &err) == 0, "config entry: %s",
        err.message);
  actx_ort_session_free(s);
  s = NULL;
  actx_ort_session_options negative = {.intra_op_threads = -2};
  CHECK(actx_ort_session_create(model, size, &negative, &s, &err) != 0, "-2 threads accepted");
  /* Corrupt model bytes. */
  CHECK(actx_ort_session_create(model, size / 3, NULL, &s, &err) != 0 && s == NULL,
        "truncated model accepted");
  printf("truncated model: %s\n", err.message);
  const uint8_t junk[16] = {0x08, 0xff, 0xff};
  CHECK(actx_ort_session_create(junk, sizeof junk, NULL, &s, &err) != 0, "junk accepted");
  CHECK(actx_ort_session_create(NULL, 0, NULL, &s, &err) != 0, "no bytes accepted");
  free(model);

  /* A model ORT refuses: a node with an unknown op. */
  actx_model *m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, 13, 0);
  const int64_t dims[1] = {4};
  actx_model_add_input(m, "x", ACTX_ELEM_FLOAT, 1, dims, NULL);
  const char *in[1] = {"x"}, *out[1] = {"y"};
  actx_model_add_node(m, "NotAnOperator", "", 1, in, 1, out);
  actx_model_add_output(m, "y", ACTX_ELEM_FLOAT, 1, dims, NULL);
  uint8_t *bad = NULL;
  CHECK(actx_model_serialize(m, &bad, &size) == 0, "%s", actx_model_error(m));
  actx_model_free(m);
  CHECK(actx_ort_session_create(bad, size, NULL, &s, &err) != 0 &&
            strstr(err.message, "NotAnOperator") != NULL,
        "unknown op: %s", err.message);
  printf("unknown op: %s\n", err.message);
  free(bad);
}

/* A real plugin EP library, registered twice, then used. */
static void test_ep_library(const char *path, const char *ep_name) {
  actx_ort_error err = {0};
  CHECK(actx_ort_register_ep_library(path, &err) == 0, "%s", err.message);
  CHECK(actx_ort_register_ep_library(path, &err) == 0, "second registration: %s", err.message);
  /* The same file by another spelling is the same library. */
  char other[4096];
  const char *slash = strrchr(path, '/');
  if (slash != NULL) {
    snprintf(other, sizeof other, "%.*s/./%s", (int)(slash - path), path, slash + 1);
    CHECK(actx_ort_register_ep_library(other, &err) == 0, "%s: %s", other, err.message);
  }
  size_t size = 0;
  uint8_t *model = build_sigmoid_add(&size);
  actx_ort_session_options opt = {
      .ep_library_path = path, .ep_name = ep_name, .record_assignments = true};
  actx_ort_session *s = NULL;
  CHECK(actx_ort_session_create(model, size, &opt, &s, &err) == 0, "%s", err.message);
  if (s != NULL) {
    long on_ep = actx_ort_count_nodes_on(s, ep_name, &err);
    printf("%s: %ld of 2 nodes on %s\n", path, on_ep, ep_name);
    CHECK(on_ep >= 0, "%s", err.message);
  }
  actx_ort_session_free(s);
  free(model);
}

int main(int argc, char **argv) {
  actx_ort_error err = {0};
  const OrtApi *api = actx_ort_api(&err);
  CHECK(api != NULL, "%s", err.message);
  if (api == NULL)
    return 1;
  test_api_base();
  test_status_round_trip(api);
  OrtEnv *env = actx_ort_env(&err);
  CHECK(env != NULL && env == actx_ort_env(NULL), "one env: %s", err.message);
  test_key_value_pairs_and_devices(api, env);
  test_session_run();
  test_half_types_and_int64(ACTX_ELEM_FLOAT16);
  test_half_types_and_int64(ACTX_ELEM_BFLOAT16);
  test_widen_half();
  test_errors();
  if (argc >= 3)
    test_ep_library(argv[1], argv[2]);
  /* Shut down and start again: host.h must recover. */
  actx_ort_shutdown();
  CHECK(actx_ort_env(&err) != NULL, "env after shutdown: %s", err.message);
  test_half_types_and_int64(ACTX_ELEM_FLOAT16);
  actx_ort_shutdown();
  printf(g_failures == 0 ? "PASS\n" : "FAILED (%d)\n", g_failures);
  return g_failures == 0 ? 0 : 1;
}
