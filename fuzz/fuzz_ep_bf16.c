/* libFuzzer harness for the EP's bfloat16 claims (ep/bf16_*.c): arbitrary bytes become a one-node
 * model of an op of src/bf16/bf16_ops.h (or a near miss: another domain, an unknown name), at any
 * opset, with inputs present, omitted or constant (initializers: the PrePackWeight path), of
 * bfloat16 and other element types, fixed / symbolic / zero dimensions, any number of outputs,
 * and attributes of the names the reader knows (and others) with any kind and value: ints, floats,
 * int lists of any length, strings empty, long or holding NUL bytes. The same model goes to ORT
 * alone and to ORT with the EP (policy all or auto). With the input's last byte a multiple of 3,
 * the node's first output is read by a second node 'f' instead (Relu, Add of it to itself, or Mul
 * by a constant), so that element-wise nodes form chains (ep/bf16_chain.c). Then:
 *   - a model ORT alone accepts, the EP must accept too (a bfloat16 node it takes must build);
 *   - a session the EP refuses is refused with a message naming a node ('n' or 'f');
 *   - a session the EP creates must run or refuse the run with a status, on inputs shaped as
 *     declared (symbolic dimensions 1 to 3);
 *   - never a crash, a hang or a sanitizer report.
 * The EP library defaults to the test build over the probe families (actx_ep_bf16_probe: Relu,
 * Add and Mul run, Gemm / Conv / Resize / ReduceMean kernels are made from exact attributes only),
 * so kernels are made and run whatever families exist; ACTX_FUZZ_EP_LIBRARY overrides (the real
 * EP: its families as they are, and its chains; fuzz_ep_bf16_real). */
#define _GNU_SOURCE /* readlink */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/bf16/bf16_ops.h"
#include "host.h"
#include "model.h"

#define FAIL(...)                                  \
  do {                                             \
    fprintf(stderr, "fuzz_ep_bf16: " __VA_ARGS__); \
    fputc('\n', stderr);                           \
    abort();                                       \
  } while (0)

#define MAX_RANK 4
#define MAX_IO 6

static char ep_library[PATH_MAX + 64];

typedef struct reader {
  const uint8_t *p;
  size_t n;
} reader;

static unsigned byte(reader *r) {
  if (r->n == 0) return 0;
  r->n--;
  return *r->p++;
}
static unsigned pick(reader *r, unsigned k) { return byte(r) % k; }

/* The ops, with their domains and the since-versions the service names. */
#define OP_ROW_(name, e, dom, fam, a, b, c, d, ...) {#name, dom, {__VA_ARGS__}},
static const struct {
  const char *name, *domain;
  int since[4];
} ops[] = {ACTX_BF16_OPS(OP_ROW_)};
#undef OP_ROW_
#define N_OPS (sizeof ops / sizeof ops[0])

static const char *const attr_names[] = {
    "axis",      "axes",      "keepdims",         "epsilon",  "alpha",        "beta",
    "transA",    "transB",    "group",            "strides",  "pads",         "dilations",
    "kernel_shape", "auto_pad", "ceil_mode",      "count_include_pad", "mode",
    "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a", "exclude_outside",
    "extrapolation_value", "stash_type", "noop_with_empty_axes", "storage_order", "antialias",
    "keep_aspect_ratio_policy", "training_mode", "momentum", "output_padding", "output_shape",
    "unknown_attr"};
#define N_ATTR_NAMES (sizeof attr_names / sizeof attr_names[0])

static const char *const strings[] = {"", "NOTSET", "SAME_UPPER", "VALID", "constant", "reflect",
                                      "edge", "nearest", "linear", "cubic", "half_pixel",
                                      "align_corners", "asymmetric", "floor", "round_prefer_floor",
                                      "stretch", "not_larger", "a_string_longer_than_any_field"};
#define N_STRINGS (sizeof strings / sizeof strings[0])

static const int32_t elem_types[] = {ACTX_ELEM_BFLOAT16, ACTX_ELEM_BFLOAT16, ACTX_ELEM_BFLOAT16,
                                     ACTX_ELEM_FLOAT,    ACTX_ELEM_INT64,    ACTX_ELEM_BOOL,
                                     ACTX_ELEM_FLOAT16};

typedef struct value {
  int32_t elem_type;
  size_t rank;
  int64_t dims[MAX_RANK]; /* -1: symbolic */
} value;

static int64_t run_dim(int64_t d) { return d < 0 ? 2 : d; }

static size_t count_of(const value *v) {
  size_t n = 1;
  for (size_t i = 0; i < v->rank; i++) n *= (size_t)run_dim(v->dims[i]);
  return n;
}

static void random_value(reader *r, value *v) {
  v->elem_type = elem_types[pick(r, sizeof elem_types / sizeof elem_types[0])];
  v->rank = pick(r, MAX_RANK + 1);
  for (size_t i = 0; i < v->rank; i++) {
    const unsigned k = pick(r, 8);
    v->dims[i] = k == 0 ? -1 : k == 1 ? 0 : (int64_t)(k % 4) + 1;
  }
}

static void *fill(reader *r, const value *v) {
  const size_t n = count_of(v), size = actx_elem_size(v->elem_type);
  uint8_t *data = calloc(n ? n : 1, size ? size : 1);
  if (data == NULL) FAIL("out of memory");
  for (size_t i = 0; i < n * size; i++) data[i] = (uint8_t)byte(r);
  if (v->elem_type == ACTX_ELEM_BOOL)
    for (size_t i = 0; i < n; i++) data[i] &= 1;
  return data;
}

static void add_attribute(reader *r, actx_model_node *node) {
  const char *name = attr_names[pick(r, N_ATTR_NAMES)];
  switch (pick(r, 5)) {
    case 0: actx_model_node_attr_int(node, name, (int64_t)(int8_t)byte(r)); break;
    case 1: actx_model_node_attr_float(node, name, (float)(int8_t)byte(r) / 4.0f); break;
    case 2: {
      int64_t v[24];
      const size_t n = pick(r, 24);
      for (size_t i = 0; i < n; i++) v[i] = (int64_t)(int8_t)byte(r) % 5;
      actx_model_node_attr_ints(node, name, n, v);
      break;
    }
    case 3: actx_model_node_attr_string(node, name, strings[pick(r, N_STRINGS)]); break;
    default: {
      char bytes[8];
      const size_t n = pick(r, sizeof bytes + 1);
      for (size_t i = 0; i < n; i++) bytes[i] = (char)(byte(r) & 1 ? 'x' : '\0');
      actx_model_node_attr_bytes(node, name, bytes, n);
      break;
    }
  }
}

/* The omitted inputs ("") ORT 1.30 itself crashes on, whoever runs the node; they say nothing
 * about the EP, so they are given as graph inputs instead. (ONNX allows "" only for an optional
 * input.) Max's and Min's inputs are variadic: ORT's float kernels read an omitted trailing one as
 * a tensor in Run, so a bfloat16 node (only the EP runs one) still gets them. LayerNormalization's
 * bias: ORT crashes creating the session, float32 or bfloat16. */
static bool ort_crashes_omitting(const char *op, size_t input, int32_t first_elem_type) {
  if (strcmp(op, "Max") == 0 || strcmp(op, "Min") == 0)
    return first_elem_type != ACTX_ELEM_BFLOAT16;
  return strcmp(op, "LayerNormalization") == 0 && input == 2;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  const char *env = getenv("ACTX_FUZZ_EP_LIBRARY");
  if (env != NULL) {
    snprintf(ep_library, sizeof ep_library, "%s", env);
  } else {
    char exe[PATH_MAX];
    const ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) FAIL("cannot find the fuzzer's own path");
    exe[len] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash != NULL) *slash = '\0';
    snprintf(ep_library, sizeof ep_library, "%s/lib/libactx_ep_bf16_probe.so", exe);
  }
  if (access(ep_library, R_OK) != 0)
    FAIL("no EP library at %s (set ACTX_FUZZ_EP_LIBRARY)", ep_library);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  reader r = {data, size};
  /* the second node, read from the last byte so that the rest reads as before */
  const unsigned last = size > 0 ? data[size - 1] : 1u;
  const bool follow = last % 3 == 0;
  static const char *const follow_ops[] = {"Relu", "Add", "Mul"};
  const char *follow_op = follow_ops[last / 3 % 3];
  const unsigned which = pick(&r, N_OPS + 2);
  const char *op = which < N_OPS ? ops[which].name : which == N_OPS ? "Add" : "NoSuchOp";
  const char *domain = which < N_OPS ? ops[which].domain : which == N_OPS ? "com.microsoft" : "";
  const bool ms = strcmp(domain, "com.microsoft") == 0;
  int64_t opset = 13 + pick(&r, 10);
  if (which < N_OPS && pick(&r, 4) != 0) opset = ops[which].since[0] > 1 ? ops[which].since[0] : 20;
  actx_model *m = actx_model_create(opset >= 21 ? 10 : ACTX_MODEL_DEFAULT_IR_VERSION, opset,
                                    ms || pick(&r, 2) ? 1 : 0);
  if (m == NULL) FAIL("out of memory");

  const size_t n_in = pick(&r, MAX_IO), n_out = 1 + pick(&r, 3);
  value in[MAX_IO], out[MAX_IO];
  char in_names[MAX_IO][8], out_names[MAX_IO][8];
  const char *in_refs[MAX_IO], *out_refs[MAX_IO];
  void *feeds[MAX_IO];
  size_t n_feeds = 0;
  actx_ort_tensor feed_tensors[MAX_IO];
  for (size_t i = 0; i < n_in; i++) {
    random_value(&r, &in[i]);
    snprintf(in_names[i], sizeof in_names[i], "i%zu", i);
    in_refs[i] = in_names[i];
    unsigned kind = pick(&r, 4); /* 0: omitted, 1: constant, else a graph input */
    if (kind == 0 && ort_crashes_omitting(op, i, in[0].elem_type)) kind = 2;
    if (kind == 0) {
      in_refs[i] = "";
    } else if (kind == 1) {
      value c = in[i];
      for (size_t d = 0; d < c.rank; d++) c.dims[d] = run_dim(c.dims[d]);
      void *bytes = fill(&r, &c);
      actx_model_add_initializer(m, in_names[i], c.elem_type, c.rank, c.dims, bytes);
      free(bytes);
    } else {
      actx_model_add_input(m, in_names[i], in[i].elem_type, in[i].rank, in[i].dims, NULL);
      actx_ort_tensor *t = &feed_tensors[n_feeds];
      memset(t, 0, sizeof *t);
      t->name = in_refs[i];
      t->elem_type = (ONNXTensorElementDataType)in[i].elem_type;
      t->rank = in[i].rank;
      for (size_t d = 0; d < in[i].rank; d++) t->dims[d] = run_dim(in[i].dims[d]);
      t->data = feeds[n_feeds] = fill(&r, &in[i]);
      n_feeds++;
    }
  }
  for (size_t j = 0; j < n_out; j++) {
    random_value(&r, &out[j]);
    snprintf(out_names[j], sizeof out_names[j], "o%zu", j);
    out_refs[j] = follow && j == 0 ? "t0" : out_names[j];
    actx_model_add_output(m, out_names[j], out[j].elem_type, out[j].rank, out[j].dims, NULL);
  }
  actx_model_node *node = actx_model_add_named_node(m, "n", op, domain, n_in, in_refs, n_out,
                                                    out_refs);
  const size_t n_attrs = pick(&r, 5);
  for (size_t a = 0; a < n_attrs; a++) add_attribute(&r, node);
  if (follow) {
    const char *f_in[2] = {"t0", strcmp(follow_op, "Mul") == 0 ? "fc" : "t0"}, *f_out[1] = {"o0"};
    if (strcmp(follow_op, "Mul") == 0) {
      const unsigned hi = byte(&r), lo = byte(&r);
      const uint16_t c = (uint16_t)(hi << 8 | lo);
      const int32_t type =
          out[0].elem_type == ACTX_ELEM_BFLOAT16 ? ACTX_ELEM_BFLOAT16 : ACTX_ELEM_FLOAT16;
      actx_model_add_initializer(m, "fc", type, 0, NULL, &c);
    }
    actx_model_add_named_node(m, "f", follow_op, "", strcmp(follow_op, "Relu") == 0 ? 1 : 2, f_in,
                              1, f_out);
  }
  uint8_t *model = NULL;
  size_t model_size = 0;
  const int built = actx_model_serialize(m, &model, &model_size);
  actx_model_free(m);

  if (built == 0) {
    actx_ort_error err;
    actx_ort_session *alone = NULL, *with_ep = NULL;
    actx_ort_session_options o = {.intra_op_threads = 1 + (int)pick(&r, 2)};
    const int alone_rc = actx_ort_session_create(model, model_size, &o, &alone, &err);
    const char *keys[1] = {"policy"}, *values[1] = {pick(&r, 2) ? "all" : "auto"};
    o.ep_library_path = ep_library;
    o.ep_name = "actx";
    o.n_ep_options = 1;
    o.ep_option_keys = keys;
    o.ep_option_values = values;
    const int ep_rc = actx_ort_session_create(model, model_size, &o, &with_ep, &err);
    if (alone_rc == 0 && ep_rc != 0)
      FAIL("ORT alone accepts %s (opset %lld), with the EP: %s", op, (long long)opset,
           err.message);
    if (ep_rc != 0 && alone_rc != 0 && strstr(err.message, "actx") != NULL &&
        strstr(err.message, "'n'") == NULL && strstr(err.message, "'f'") == NULL)
      FAIL("the EP refused %s without naming the node: %s", op, err.message);
    if (ep_rc == 0) {
      actx_ort_tensor *outputs = NULL;
      size_t n_outputs = 0;
      if (actx_ort_run(with_ep, n_feeds, feed_tensors, &outputs, &n_outputs, &err) == 0)
        actx_ort_tensors_free(outputs, n_outputs);
      actx_ort_session_free(with_ep);
    }
    if (alone_rc == 0) actx_ort_session_free(alone);
  }
  free(model);
  for (size_t i = 0; i < n_feeds; i++) free(feeds[i]);
  return 0;
}
