/* timed_session.c — ORT sessions with pre-created inputs and outputs (see timed_session.h). */
#include "timed_session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* Output buffers start on a cache line, as ORT's own allocations do. */
#define BUFFER_ALIGNMENT 64

struct actx_timed_session {
  const OrtApi *api;
  actx_ort_session *session;
  OrtMemoryInfo *memory;
  size_t n_inputs, n_outputs;
  const char **input_names, **output_names;
  OrtValue **inputs, **outputs;
  actx_ort_tensor *output_info; /* data points into output_buffers */
  void **output_buffers;
};

static int fail(actx_ort_error *err, OrtErrorCode code, const char *message) {
  if (err != NULL) {
    err->code = code;
    snprintf(err->message, sizeof err->message, "%s", message);
  }
  return -1;
}

void actx_timed_session_free(actx_timed_session *ts) {
  if (ts == NULL)
    return;
  for (size_t i = 0; ts->inputs != NULL && i < ts->n_inputs; i++)
    if (ts->inputs[i] != NULL)
      ts->api->ReleaseValue(ts->inputs[i]);
  for (size_t i = 0; ts->outputs != NULL && i < ts->n_outputs; i++)
    if (ts->outputs[i] != NULL)
      ts->api->ReleaseValue(ts->outputs[i]);
  for (size_t i = 0; ts->output_buffers != NULL && i < ts->n_outputs; i++)
    free(ts->output_buffers[i]);
  if (ts->memory != NULL)
    ts->api->ReleaseMemoryInfo(ts->memory);
  actx_ort_session_free(ts->session);
  free(ts->input_names);
  free(ts->output_names);
  free(ts->inputs);
  free(ts->outputs);
  free(ts->output_info);
  free(ts->output_buffers);
  free(ts);
}

/* Elements in a shape, or -1 for a negative dimension. */
static long long shape_count(size_t rank, const int64_t *dims) {
  long long count = 1;
  for (size_t d = 0; d < rank; d++) {
    if (dims[d] < 0)
      return -1;
    count *= dims[d];
  }
  return count;
}

static int wrap(actx_timed_session *ts, void *data, size_t bytes, const int64_t *dims,
                size_t rank, ONNXTensorElementDataType type, const char *name, OrtValue **value,
                actx_ort_error *err) {
  char what[256];
  snprintf(what, sizeof what, "CreateTensorWithDataAsOrtValue(%s)", name);
  return actx_ort_check(ts->api->CreateTensorWithDataAsOrtValue(ts->memory, data, bytes, dims,
                                                                rank, type, value),
                        what, err);
}

/* The first run: ORT allocates the outputs; we copy them into buffers of our own and wrap
 * those for every later run. */
static int prepare_outputs(actx_timed_session *ts, actx_ort_error *err) {
  const OrtApi *api = ts->api;
  OrtValue **first = calloc(ts->n_outputs + 1, sizeof *first);
  if (first == NULL)
    return fail(err, ORT_FAIL, "out of memory");
  int rc = actx_ort_check(api->Run(actx_ort_session_handle(ts->session), NULL, ts->input_names,
                                   (const OrtValue *const *)ts->inputs, ts->n_inputs,
                                   ts->output_names, ts->n_outputs, first),
                          "Run", err);
  for (size_t i = 0; rc == 0 && i < ts->n_outputs; i++) {
    actx_ort_tensor *t = &ts->output_info[i];
    t->name = ts->output_names[i];
    char what[256];
    snprintf(what, sizeof what, "output '%s'", t->name);
    int is_tensor = 0;
    rc = actx_ort_check(api->IsTensor(first[i], &is_tensor), what, err);
    if (rc == 0 && !is_tensor) {
      snprintf(what, sizeof what, "output '%s' is not a tensor (sequences and maps are not "
                                  "supported)", t->name);
      rc = fail(err, ORT_NOT_IMPLEMENTED, what);
    }
    OrtTensorTypeAndShapeInfo *shape = NULL;
    if (rc == 0)
      rc = actx_ort_check(api->GetTensorTypeAndShape(first[i], &shape), what, err);
    size_t rank = 0;
    if (rc == 0)
      rc = actx_ort_check(api->GetTensorElementType(shape, &t->elem_type), what, err);
    if (rc == 0)
      rc = actx_ort_check(api->GetDimensionsCount(shape, &rank), what, err);
    if (rc == 0 && rank > ACTX_ORT_MAX_RANK)
      rc = fail(err, ORT_NOT_IMPLEMENTED, "an output has more dimensions than supported");
    if (rc == 0) {
      t->rank = rank;
      rc = actx_ort_check(api->GetDimensions(shape, t->dims, rank), what, err);
    }
    if (shape != NULL)
      api->ReleaseTensorTypeAndShapeInfo(shape);
    size_t elem_size = actx_elem_size((int32_t)t->elem_type);
    if (rc == 0 && elem_size == 0) {
      snprintf(what, sizeof what, "output '%s' has element type %d, which is not supported",
               t->name, (int)t->elem_type);
      rc = fail(err, ORT_NOT_IMPLEMENTED, what);
    }
    if (rc != 0)
      break;
    t->count = (size_t)shape_count(t->rank, t->dims);
    t->bytes = t->count * elem_size;
    size_t alloc = (t->bytes + BUFFER_ALIGNMENT - 1) / BUFFER_ALIGNMENT * BUFFER_ALIGNMENT;
    ts->output_buffers[i] = aligned_alloc(BUFFER_ALIGNMENT, alloc > 0 ? alloc : BUFFER_ALIGNMENT);
    if (ts->output_buffers[i] == NULL) {
      rc = fail(err, ORT_FAIL, "out of memory for an output");
      break;
    }
    t->data = ts->output_buffers[i];
    void *data = NULL;
    rc = actx_ort_check(api->GetTensorMutableData(first[i], &data), what, err);
    if (rc == 0 && t->bytes > 0)
      memcpy(t->data, data, t->bytes);
    if (rc == 0)
      rc = wrap(ts, t->data, t->bytes, t->dims, t->rank, t->elem_type, t->name, &ts->outputs[i],
                err);
  }
  for (size_t i = 0; i < ts->n_outputs; i++)
    if (first[i] != NULL)
      api->ReleaseValue(first[i]);
  free(first);
  return rc;
}

int actx_timed_session_create(const void *model, size_t model_size,
                              const actx_ort_session_options *opt, size_t n_inputs,
                              const actx_ort_tensor *inputs, actx_timed_session **out,
                              actx_ort_error *err) {
  *out = NULL;
  const OrtApi *api = actx_ort_api(err);
  if (api == NULL)
    return -1;
  actx_timed_session *ts = calloc(1, sizeof *ts);
  if (ts == NULL)
    return fail(err, ORT_FAIL, "out of memory");
  ts->api = api;
  if (actx_ort_session_create(model, model_size, opt, &ts->session, err) != 0) {
    free(ts);
    return -1;
  }
  ts->n_inputs = n_inputs;
  ts->n_outputs = actx_ort_session_output_count(ts->session);
  ts->input_names = calloc(n_inputs + 1, sizeof *ts->input_names);
  ts->inputs = calloc(n_inputs + 1, sizeof *ts->inputs);
  ts->output_names = calloc(ts->n_outputs + 1, sizeof *ts->output_names);
  ts->outputs = calloc(ts->n_outputs + 1, sizeof *ts->outputs);
  ts->output_info = calloc(ts->n_outputs + 1, sizeof *ts->output_info);
  ts->output_buffers = calloc(ts->n_outputs + 1, sizeof *ts->output_buffers);
  int rc = 0;
  if (ts->input_names == NULL || ts->inputs == NULL || ts->output_names == NULL ||
      ts->outputs == NULL || ts->output_info == NULL || ts->output_buffers == NULL)
    rc = fail(err, ORT_FAIL, "out of memory");
  if (rc == 0)
    rc = actx_ort_check(api->CreateCpuMemoryInfo(OrtDeviceAllocator, OrtMemTypeDefault,
                                                 &ts->memory),
                        "CreateCpuMemoryInfo", err);
  if (rc == 0 && n_inputs > actx_ort_session_input_count(ts->session)) {
    char message[128];
    snprintf(message, sizeof message, "%zu inputs given to a model with %zu", n_inputs,
             actx_ort_session_input_count(ts->session));
    rc = fail(err, ORT_INVALID_ARGUMENT, message);
  }
  for (size_t i = 0; rc == 0 && i < ts->n_outputs; i++) {
    actx_ort_tensor info;
    rc = actx_ort_session_output_info(ts->session, i, &info, err);
    ts->output_names[i] = info.name;
  }
  for (size_t i = 0; rc == 0 && i < n_inputs; i++) {
    const actx_ort_tensor *in = &inputs[i];
    if (in->name != NULL) {
      ts->input_names[i] = in->name;
    } else {
      actx_ort_tensor info;
      rc = actx_ort_session_input_info(ts->session, i, &info, err);
      ts->input_names[i] = info.name;
    }
    long long count = shape_count(in->rank, in->dims);
    size_t elem_size = actx_elem_size((int32_t)in->elem_type);
    if (rc == 0 && (count < 0 || elem_size == 0 || in->rank > ACTX_ORT_MAX_RANK))
      rc = fail(err, ORT_INVALID_ARGUMENT, "an input has a negative dimension or an element "
                                           "type that is not supported");
    if (rc == 0)
      rc = wrap(ts, in->data, (size_t)count * elem_size, in->dims, in->rank, in->elem_type,
                ts->input_names[i], &ts->inputs[i], err);
  }
  if (rc == 0)
    rc = prepare_outputs(ts, err);
  if (rc != 0) {
    actx_timed_session_free(ts);
    return -1;
  }
  *out = ts;
  return 0;
}

int actx_timed_session_run(actx_timed_session *ts, actx_ort_error *err) {
  return actx_ort_check(ts->api->Run(actx_ort_session_handle(ts->session), NULL, ts->input_names,
                                     (const OrtValue *const *)ts->inputs, ts->n_inputs,
                                     ts->output_names, ts->n_outputs, ts->outputs),
                        "Run", err);
}

size_t actx_timed_session_output_count(const actx_timed_session *ts) { return ts->n_outputs; }

const actx_ort_tensor *actx_timed_session_output(const actx_timed_session *ts, size_t i) {
  return i < ts->n_outputs ? &ts->output_info[i] : NULL;
}

const actx_ort_session *actx_timed_session_host(const actx_timed_session *ts) {
  return ts->session;
}

int actx_timed_session_end_profiling(actx_timed_session *ts, char *path, size_t path_size,
                                     actx_ort_error *err) {
  return actx_ort_session_end_profiling(ts->session, path, path_size, err);
}
