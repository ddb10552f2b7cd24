/* model.h — builds ONNX models in memory and reads ONNX tensors (over protobuf-c).
 *
 * Building: create a model, add graph inputs/outputs, initializers and nodes, serialize to bytes
 * that ORT's CreateSessionFromArray takes. Errors are sticky: the first failing call records a
 * message (actx_model_error) and makes every later call on that model a no-op that fails, so a
 * builder can make many calls and check once, at actx_model_serialize.
 *
 *   actx_model *m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, 20, 1);
 *   int64_t dims[2] = {-1, 768};                       (-1: symbolic, named by dim_params)
 *   const char *names[2] = {"N", NULL};
 *   actx_model_add_input(m, "x", ACTX_ELEM_FLOAT, 2, dims, names);
 *   actx_model_add_output(m, "y", ACTX_ELEM_FLOAT, 2, dims, names);
 *   const char *in[] = {"x"}, *out[] = {"y"};
 *   actx_model_node *n = actx_model_add_node(m, "Gelu", "", 1, in, 1, out);
 *   actx_model_node_attr_string(n, "approximate", "tanh");
 *   if (actx_model_serialize(m, &bytes, &len) != 0) puts(actx_model_error(m));
 *
 * Reading: the files of ONNX's node tests (model.onnx, test_data_set_N/input_K.pb) and
 * TensorProto messages in general, into a raw little-endian buffer with element type and dims.
 */
#ifndef ACTX_TOOLS_ORT_MODEL_H
#define ACTX_TOOLS_ORT_MODEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ONNX element types (TensorProto.DataType; ORT's ONNXTensorElementDataType has the same
 * numbers). Only the ones the builder and reader handle. */
typedef enum actx_elem_type {
  ACTX_ELEM_UNDEFINED = 0,
  ACTX_ELEM_FLOAT = 1,
  ACTX_ELEM_UINT8 = 2,
  ACTX_ELEM_INT8 = 3,
  ACTX_ELEM_UINT16 = 4,
  ACTX_ELEM_INT16 = 5,
  ACTX_ELEM_INT32 = 6,
  ACTX_ELEM_INT64 = 7,
  ACTX_ELEM_BOOL = 9,
  ACTX_ELEM_FLOAT16 = 10,
  ACTX_ELEM_DOUBLE = 11,
  ACTX_ELEM_UINT32 = 12,
  ACTX_ELEM_UINT64 = 13,
  ACTX_ELEM_BFLOAT16 = 16,
} actx_elem_type;

/* Bytes per element; 0 for a type the builder does not handle (strings, packed 4-bit, ...). */
size_t actx_elem_size(int32_t elem_type);
/* "float", "float16", ...; "unknown" otherwise. */
const char *actx_elem_name(int32_t elem_type);

/* Most dimensions a tensor may have here (ONNX allows more; nothing in actx needs them). */
#define ACTX_MODEL_MAX_RANK 8
/* IR version 9 goes with opset 20 (the first with ai.onnx Gelu); ORT 1.30 reads up to 11+. */
#define ACTX_MODEL_DEFAULT_IR_VERSION 9
#define ACTX_MODEL_MS_DOMAIN "com.microsoft"

/* ---- Building ---------------------------------------------------------------------------- */

typedef struct actx_model actx_model;
typedef struct actx_model_node actx_model_node;

/* A model importing opset `onnx_opset` of the default domain and, when ms_opset > 0, opset
 * `ms_opset` of com.microsoft. Never NULL unless out of memory. */
actx_model *actx_model_create(int64_t ir_version, int64_t onnx_opset, int64_t ms_opset);
void actx_model_free(actx_model *model);
/* The first error, or NULL if none. Valid until the model is freed. */
const char *actx_model_error(const actx_model *model);

/* A graph input or output. dims[i] >= 0 is a fixed size; dims[i] < 0 is symbolic, named
 * dim_params[i] (dim_params may be NULL, or hold NULL, for an unnamed dimension). rank 0 is a
 * scalar (dims may be NULL). All strings are copied. Return 0, or -1 (see actx_model_error). */
int actx_model_add_input(actx_model *model, const char *name, int32_t elem_type, size_t rank,
                         const int64_t *dims, const char *const *dim_params);
int actx_model_add_output(actx_model *model, const char *name, int32_t elem_type, size_t rank,
                          const int64_t *dims, const char *const *dim_params);

/* A constant tensor of any element type with a fixed size (float, float16, bfloat16, int64,
 * ...; not strings); data holds prod(dims) elements and is copied (as raw_data). */
int actx_model_add_initializer(actx_model *model, const char *name, int32_t elem_type, size_t rank,
                               const int64_t *dims, const void *data);

/* A node. domain "" (or NULL) is ai.onnx; node_name may be NULL (a unique one is made up).
 * An input name "" marks an omitted optional input. Returns NULL after an error; the attribute
 * functions accept that NULL and fail. */
actx_model_node *actx_model_add_node(actx_model *model, const char *op_type, const char *domain,
                                     size_t n_inputs, const char *const *inputs, size_t n_outputs,
                                     const char *const *outputs);
/* The same, naming the node. */
actx_model_node *actx_model_add_named_node(actx_model *model, const char *node_name,
                                           const char *op_type, const char *domain, size_t n_inputs,
                                           const char *const *inputs, size_t n_outputs,
                                           const char *const *outputs);
int actx_model_node_attr_float(actx_model_node *node, const char *name, float value);
int actx_model_node_attr_int(actx_model_node *node, const char *name, int64_t value);
int actx_model_node_attr_string(actx_model_node *node, const char *name, const char *value);
int actx_model_node_attr_floats(actx_model_node *node, const char *name, size_t n,
                                const float *values);
int actx_model_node_attr_ints(actx_model_node *node, const char *name, size_t n,
                              const int64_t *values);
/* A string attribute of len bytes: ONNX strings are bytes, so it may hold NULs. */
int actx_model_node_attr_bytes(actx_model_node *node, const char *name, const void *data,
                               size_t len);
/* A graph attribute (If's then_branch / else_branch, Loop's body). Build the subgraph as a model
 * of its own (its opset imports are ignored: a subgraph uses the outer model's) with inputs,
 * outputs, initializers and nodes, then hand it over here: the node takes its graph and frees
 * body, whether or not the call succeeds. A failed body fails the node's model with its error. */
int actx_model_node_attr_graph(actx_model_node *node, const char *name, actx_model *body);

/* Serializes to a malloc'ed buffer (free() it). Fails with the model's first error, if any. */
int actx_model_serialize(actx_model *model, uint8_t **bytes, size_t *size);

/* ---- Reading ----------------------------------------------------------------------------- */

/* A tensor as plain data: count elements of elem_type, little-endian, in data (malloc'ed;
 * NULL when count is 0). name is "" when the TensorProto had none. */
typedef struct actx_tensor {
  char name[128];
  int32_t elem_type;
  size_t rank;
  int64_t dims[ACTX_MODEL_MAX_RANK];
  size_t count;
  size_t bytes;
  void *data;
} actx_tensor;

void actx_tensor_free(actx_tensor *tensor);

/* Reads a whole file into a malloc'ed buffer. Returns 0, or -1 with a message in err. */
int actx_read_file(const char *path, uint8_t **bytes, size_t *size, char *err, size_t err_size);

/* Parses a serialized TensorProto (raw_data or the typed fields float_data, int32_data,
 * int64_data, double_data, uint64_data) into out. Returns 0, or -1 with a message in err
 * (strings, external data, a size that does not match dims, ...). */
int actx_tensor_parse(const uint8_t *bytes, size_t size, actx_tensor *out, char *err,
                      size_t err_size);
/* The same, from a .pb file. */
int actx_tensor_read_file(const char *path, actx_tensor *out, char *err, size_t err_size);

/* What a model's graph declares: its inputs and outputs, in order. */
typedef struct actx_model_value {
  char name[128];
  int32_t elem_type;
  size_t rank;
  int64_t dims[ACTX_MODEL_MAX_RANK]; /* -1 for a symbolic or unknown dimension */
} actx_model_value;

typedef struct actx_model_info {
  int64_t ir_version;
  int64_t onnx_opset; /* 0 if the model does not import the default domain */
  int64_t ms_opset;   /* 0 if it does not import com.microsoft */
  size_t n_nodes;
  size_t n_inputs, n_outputs;         /* graph inputs that are initializers are not counted */
  actx_model_value *inputs, *outputs; /* malloc'ed */
} actx_model_info;

/* Parses a serialized ModelProto (a .onnx file's bytes). Returns 0, or -1 with a message. */
int actx_model_info_parse(const uint8_t *bytes, size_t size, actx_model_info *out, char *err,
                          size_t err_size);
void actx_model_info_free(actx_model_info *info);

/* ---- The float32 twin of a float16 model (model_widen.c) ---------------------------------- */

/* Writes to *out (malloc'ed) the model with every float16 turned into a float32 of the same
 * value: initializers, tensor attributes, graph inputs / outputs / value_info, Cast targets,
 * subgraphs and functions. Feed it the float16 inputs widened; its outputs are float32. Models
 * with external or sparse float16 data are refused. 0, or -1 with a message. */
int actx_model_widen_half(const uint8_t *bytes, size_t size, uint8_t **out, size_t *out_size,
                          char *err, size_t err_size);

#ifdef __cplusplus
}
#endif

#endif /* ACTX_TOOLS_ORT_MODEL_H */
