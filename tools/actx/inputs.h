/* inputs.h — the inputs of a user's model, from files or random.
 *
 * `--in name=FILE`: a TensorProto (.pb, as ONNX's tests store them) or raw little-endian
 * elements of the input's type. A raw file's shape is the model's, or `--shape name=AxBxC`;
 * one symbolic dimension is inferred from the file's size. An input without a file is random
 * (seeded) when a generator is given, its symbolic dimensions 1 unless --shape sets them;
 * without a generator it is an error naming the input. */
#ifndef ACTX_TOOLS_INPUTS_H
#define ACTX_TOOLS_INPUTS_H

#include <stddef.h>
#include <stdint.h>

#include "host.h"
#include "model.h"
#include "rng.h"

typedef struct actx_input_arg {
  char name[128];
  const char *path;
} actx_input_arg;

typedef struct actx_shape_arg {
  char name[128];
  size_t rank;
  int64_t dims[ACTX_MODEL_MAX_RANK];
} actx_shape_arg;

/* "name=path"; 0, or -1 with a message. */
int actx_parse_input_arg(const char *text, actx_input_arg *out, char *err, size_t err_size);
/* "name=1x128x768" ("name=" alone is a scalar); 0, or -1 with a message. */
int actx_parse_shape_arg(const char *text, actx_shape_arg *out, char *err, size_t err_size);

typedef struct actx_model_inputs {
  size_t n;
  actx_ort_tensor *tensors; /* names and data owned here */
  char (*names)[128];
  char (*sources)[64]; /* "random", "file.pb", "raw file": for printing */
} actx_model_inputs;

/* Loads every graph input of info. rng NULL: an input without a file is an error. 0, or -1
 * with a message naming the input and what was wrong. */
int actx_model_inputs_load(const actx_model_info *info, const actx_input_arg *files,
                           size_t n_files, const actx_shape_arg *shapes, size_t n_shapes,
                           actx_rng *rng, actx_model_inputs *out, char *err, size_t err_size);
void actx_model_inputs_free(actx_model_inputs *in);

/* "float[1x128x768]" into buf. */
void actx_describe_tensor(int32_t elem_type, size_t rank, const int64_t *dims, char *buf,
                          size_t size);

#endif /* ACTX_TOOLS_INPUTS_H */
