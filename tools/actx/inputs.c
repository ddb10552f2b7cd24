/* inputs.c — a model's inputs from files or random (see inputs.h). */
#include "inputs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Random inputs are drawn from this range (floating types). */
#define RANDOM_LO (-3.0)
#define RANDOM_HI 3.0

static int split_name(const char *text, char *name, size_t name_size, const char **rest,
                      const char *what, char *err, size_t err_size) {
  const char *eq = strchr(text, '=');
  if (eq == NULL || eq == text) {
    snprintf(err, err_size, "%s '%s' is not name=value", what, text);
    return -1;
  }
  size_t len = (size_t)(eq - text);
  if (len >= name_size) {
    snprintf(err, err_size, "%s '%s': name too long", what, text);
    return -1;
  }
  memcpy(name, text, len);
  name[len] = '\0';
  *rest = eq + 1;
  return 0;
}

int actx_parse_input_arg(const char *text, actx_input_arg *out, char *err, size_t err_size) {
  memset(out, 0, sizeof *out);
  if (split_name(text, out->name, sizeof out->name, &out->path, "--in", err, err_size) != 0)
    return -1;
  if (out->path[0] == '\0') {
    snprintf(err, err_size, "--in '%s': no file", text);
    return -1;
  }
  return 0;
}

int actx_parse_shape_arg(const char *text, actx_shape_arg *out, char *err, size_t err_size) {
  memset(out, 0, sizeof *out);
  const char *p = NULL;
  if (split_name(text, out->name, sizeof out->name, &p, "--shape", err, err_size) != 0)
    return -1;
  while (*p != '\0') {
    char *end = NULL;
    errno = 0;
    long long d = strtoll(p, &end, 10);
    if (end == p || errno != 0 || d < 0 || (*end != 'x' && *end != '\0') ||
        out->rank == ACTX_MODEL_MAX_RANK) {
      snprintf(err, err_size, "--shape '%s' is not name=AxBxC with at most %d sizes >= 0", text,
               ACTX_MODEL_MAX_RANK);
      return -1;
    }
    out->dims[out->rank++] = d;
    p = *end == 'x' ? end + 1 : end;
  }
  return 0;
}

void actx_describe_tensor(int32_t elem_type, size_t rank, const int64_t *dims, char *buf,
                          size_t size) {
  int used = snprintf(buf, size, "%s[", actx_elem_name(elem_type));
  for (size_t d = 0; d < rank && used > 0 && (size_t)used < size; d++)
    used += snprintf(buf + used, size - (size_t)used, d ? "x%lld" : "%lld", (long long)dims[d]);
  if (used > 0 && (size_t)used < size)
    snprintf(buf + used, size - (size_t)used, "]");
}

void actx_model_inputs_free(actx_model_inputs *in) {
  for (size_t i = 0; in->tensors != NULL && i < in->n; i++)
    free(in->tensors[i].data);
  free(in->tensors);
  free(in->names);
  free(in->sources);
  memset(in, 0, sizeof *in);
}

static const char *file_extension(const char *path) {
  const char *slash = strrchr(path, '/');
  const char *dot = strrchr(slash != NULL ? slash : path, '.');
  return dot != NULL ? dot : "";
}

/* The model's declared shape, with --shape taking precedence; a --shape must agree with what
 * the model fixes (rank and every non-symbolic dimension). 0, or -1 with a message. */
static int declared_shape(const actx_model_value *v, const actx_shape_arg *shapes,
                          size_t n_shapes, size_t *rank, int64_t *dims, char *err,
                          size_t err_size) {
  for (size_t s = 0; s < n_shapes; s++) {
    if (strcmp(shapes[s].name, v->name) != 0)
      continue;
    bool fits = shapes[s].rank == v->rank;
    for (size_t d = 0; fits && d < v->rank; d++)
      fits = v->dims[d] < 0 || v->dims[d] == shapes[s].dims[d];
    if (!fits) {
      char have[160], want[160];
      actx_describe_tensor(v->elem_type, shapes[s].rank, shapes[s].dims, have, sizeof have);
      actx_describe_tensor(v->elem_type, v->rank, v->dims, want, sizeof want);
      snprintf(err, err_size, "--shape %s: %s does not fit the model's %s (-1: any size)",
               v->name, have, want);
      return -1;
    }
    *rank = shapes[s].rank;
    memcpy(dims, shapes[s].dims, shapes[s].rank * sizeof *dims);
    return 0;
  }
  *rank = v->rank;
  memcpy(dims, v->dims, v->rank * sizeof *dims);
  return 0;
}

static int load_pb(const actx_model_value *v, const char *path, actx_ort_tensor *t, char *err,
                   size_t err_size) {
  actx_tensor tensor;
  char why[512];
  if (actx_tensor_read_file(path, &tensor, why, sizeof why) != 0) {
    snprintf(err, err_size, "input '%s': %s", v->name, why);
    return -1;
  }
  if (tensor.elem_type != v->elem_type) {
    snprintf(err, err_size, "input '%s': %s holds %s, the model takes %s", v->name, path,
             actx_elem_name(tensor.elem_type), actx_elem_name(v->elem_type));
    actx_tensor_free(&tensor);
    return -1;
  }
  bool fits = tensor.rank == v->rank;
  for (size_t d = 0; fits && d < v->rank; d++)
    fits = v->dims[d] < 0 || v->dims[d] == tensor.dims[d];
  if (!fits) {
    char have[160], want[160];
    actx_describe_tensor(tensor.elem_type, tensor.rank, tensor.dims, have, sizeof have);
    actx_describe_tensor(v->elem_type, v->rank, v->dims, want, sizeof want);
    snprintf(err, err_size, "input '%s': %s holds %s, the model takes %s (-1: any size)",
             v->name, path, have, want);
    actx_tensor_free(&tensor);
    return -1;
  }
  t->elem_type = (ONNXTensorElementDataType)tensor.elem_type;
  t->rank = tensor.rank;
  memcpy(t->dims, tensor.dims, tensor.rank * sizeof *t->dims);
  t->count = tensor.count;
  t->bytes = tensor.bytes;
  t->data = tensor.data; /* ownership moves to t */
  if (t->data == NULL)
    t->data = malloc(1); /* an empty tensor still needs a pointer */
  return 0;
}

static int load_raw(const actx_model_value *v, const char *path, const actx_shape_arg *shapes,
                    size_t n_shapes, actx_ort_tensor *t, char *err, size_t err_size) {
  size_t elem_size = actx_elem_size(v->elem_type);
  if (elem_size == 0) {
    snprintf(err, err_size, "input '%s': element type %s is not supported", v->name,
             actx_elem_name(v->elem_type));
    return -1;
  }
  uint8_t *bytes = NULL;
  size_t size = 0;
  char why[512];
  if (actx_read_file(path, &bytes, &size, why, sizeof why) != 0) {
    snprintf(err, err_size, "input '%s': %s", v->name, why);
    return -1;
  }
  size_t rank = 0;
  int64_t dims[ACTX_MODEL_MAX_RANK];
  if (declared_shape(v, shapes, n_shapes, &rank, dims, err, err_size) != 0) {
    free(bytes);
    return -1;
  }
  size_t known = 1, unknown = 0, unknown_at = 0;
  for (size_t d = 0; d < rank; d++) {
    if (dims[d] < 0) {
      unknown++;
      unknown_at = d;
    } else {
      known *= (size_t)dims[d];
    }
  }
  if (unknown > 1) {
    snprintf(err, err_size, "input '%s': %zu dimensions are symbolic; give its shape with "
             "--shape %s=AxBxC", v->name, unknown, v->name);
    free(bytes);
    return -1;
  }
  if (unknown == 1) { /* infer the one symbolic dimension from the file size */
    size_t row = known * elem_size;
    if (row == 0 || size % row != 0) {
      snprintf(err, err_size, "input '%s': %s has %zu bytes, not a multiple of %zu (%zu %s "
               "elements)", v->name, path, size, row, known, actx_elem_name(v->elem_type));
      free(bytes);
      return -1;
    }
    dims[unknown_at] = (int64_t)(size / row);
    known *= (size_t)dims[unknown_at];
  }
  if (known * elem_size != size) {
    char want[160];
    actx_describe_tensor(v->elem_type, rank, dims, want, sizeof want);
    snprintf(err, err_size, "input '%s': %s has %zu bytes; %s needs %zu", v->name, path, size,
             want, known * elem_size);
    free(bytes);
    return -1;
  }
  t->elem_type = (ONNXTensorElementDataType)v->elem_type;
  t->rank = rank;
  memcpy(t->dims, dims, rank * sizeof *dims);
  t->count = known;
  t->bytes = size;
  t->data = bytes != NULL ? bytes : malloc(1);
  return 0;
}

static int make_random(const actx_model_value *v, const actx_shape_arg *shapes, size_t n_shapes,
                       actx_rng *rng, actx_ort_tensor *t, char *err, size_t err_size) {
  size_t elem_size = actx_elem_size(v->elem_type);
  if (elem_size == 0) {
    snprintf(err, err_size, "input '%s': element type %s cannot be made random; give a file "
             "with --in %s=FILE", v->name, actx_elem_name(v->elem_type), v->name);
    return -1;
  }
  size_t rank = 0;
  int64_t dims[ACTX_MODEL_MAX_RANK];
  if (declared_shape(v, shapes, n_shapes, &rank, dims, err, err_size) != 0)
    return -1;
  size_t count = 1;
  for (size_t d = 0; d < rank; d++) {
    if (dims[d] < 0)
      dims[d] = 1; /* a symbolic dimension nobody sized */
    count *= (size_t)dims[d];
  }
  t->elem_type = (ONNXTensorElementDataType)v->elem_type;
  t->rank = rank;
  memcpy(t->dims, dims, rank * sizeof *dims);
  t->count = count;
  t->bytes = count * elem_size;
  t->data = malloc(t->bytes > 0 ? t->bytes : 1);
  if (t->data == NULL) {
    snprintf(err, err_size, "input '%s': out of memory for %zu elements", v->name, count);
    return -1;
  }
  actx_rng_fill(rng, v->elem_type, t->data, count, RANDOM_LO, RANDOM_HI);
  return 0;
}

int actx_model_inputs_load(const actx_model_info *info, const actx_input_arg *files,
                           size_t n_files, const actx_shape_arg *shapes, size_t n_shapes,
                           actx_rng *rng, actx_model_inputs *out, char *err, size_t err_size) {
  memset(out, 0, sizeof *out);
  for (size_t f = 0; f < n_files; f++) { /* every --in must name a graph input */
    bool known = false;
    for (size_t i = 0; i < info->n_inputs && !known; i++)
      known = strcmp(info->inputs[i].name, files[f].name) == 0;
    if (!known) {
      int used = snprintf(err, err_size, "--in %s: the model has no input '%s' (inputs:",
                          files[f].name, files[f].name);
      for (size_t i = 0; i < info->n_inputs && used > 0 && (size_t)used < err_size; i++)
        used += snprintf(err + used, err_size - (size_t)used, " %s", info->inputs[i].name);
      if (used > 0 && (size_t)used < err_size)
        snprintf(err + used, err_size - (size_t)used, ")");
      return -1;
    }
  }
  out->n = info->n_inputs;
  out->tensors = calloc(out->n + 1, sizeof *out->tensors);
  out->names = calloc(out->n + 1, sizeof *out->names);
  out->sources = calloc(out->n + 1, sizeof *out->sources);
  if (out->tensors == NULL || out->names == NULL || out->sources == NULL) {
    snprintf(err, err_size, "out of memory");
    actx_model_inputs_free(out);
    return -1;
  }
  for (size_t i = 0; i < info->n_inputs; i++) {
    const actx_model_value *v = &info->inputs[i];
    snprintf(out->names[i], sizeof out->names[i], "%s", v->name);
    out->tensors[i].name = out->names[i];
    const char *path = NULL;
    for (size_t f = 0; f < n_files; f++)
      if (strcmp(files[f].name, v->name) == 0)
        path = files[f].path;
    int rc;
    if (path != NULL && strcmp(file_extension(path), ".pb") == 0) {
      rc = load_pb(v, path, &out->tensors[i], err, err_size);
      snprintf(out->sources[i], sizeof out->sources[i], "TensorProto file");
    } else if (path != NULL) {
      rc = load_raw(v, path, shapes, n_shapes, &out->tensors[i], err, err_size);
      snprintf(out->sources[i], sizeof out->sources[i], "raw file");
    } else if (rng != NULL) {
      rc = make_random(v, shapes, n_shapes, rng, &out->tensors[i], err, err_size);
      snprintf(out->sources[i], sizeof out->sources[i], "random");
    } else {
      char want[160];
      actx_describe_tensor(v->elem_type, v->rank, v->dims, want, sizeof want);
      snprintf(err, err_size, "input '%s' (%s) not given; use --in %s=FILE", v->name, want,
               v->name);
      rc = -1;
    }
    if (rc != 0) {
      actx_model_inputs_free(out);
      return -1;
    }
  }
  return 0;
}
