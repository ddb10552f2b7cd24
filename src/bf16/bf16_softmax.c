/* bf16_softmax.c — Softmax and LogSoftmax (opset 13: along one axis, default -1) on bfloat16.
 *
 * Each row (the elements along the axis for one position of the other axes) is computed in
 * float32 from the widened inputs: m = max, e_i = expf(x_i - m), s = Σ e_i added sequentially;
 * Softmax y_i = e_i / s, LogSoftmax y_i = (x_i - m) - logf(s); each y_i rounded once to
 * bfloat16. Subtracting the maximum keeps expf from overflowing, so huge finite inputs are fine.
 * A row holding a NaN or +inf, or all -inf, gives NaN throughout (inf - inf), as float32 ORT and
 * numpy do. Rows are independent: they are split over the caller's threads, and the output may be
 * the input (a row is read whole before it is written). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bf16_family.h"
#include "half.h"

typedef struct softmax_state {
  bool log;
  int64_t axis; /* as the node gives it; normalised against each run's rank */
} softmax_state;

static actx_status softmax_create(const actx_bf16_node *node, void **state, const char **why) {
  *state = NULL;
  if (node->op != ACTX_BF16_OP_SOFTMAX && node->op != ACTX_BF16_OP_LOG_SOFTMAX)
    return actx_bf16_fail(why, "not a softmax");
  if (node->input_elems[0] != ACTX_ELEM_BF16)
    return actx_bf16_fail(why, "softmax input must be bfloat16");
  softmax_state *s = malloc(sizeof *s);
  if (s == NULL) return ACTX_ERROR_OUT_OF_MEMORY;
  s->log = node->op == ACTX_BF16_OP_LOG_SOFTMAX;
  s->axis = node->attrs.has_axis ? node->attrs.axis : -1;
  *state = s;
  return ACTX_OK;
}

/* rows = outer · inner, each of length len, its elements inner apart */
typedef struct softmax_plan {
  int64_t outer, len, inner;
} softmax_plan;

static actx_status softmax_plan_make(const softmax_state *s, const actx_tensor *in, size_t n_in,
                                     softmax_plan *p, const char **why) {
  if (n_in < 1 || in[0].elem != ACTX_ELEM_BF16)
    return actx_bf16_fail(why, "softmax input must be bfloat16");
  const actx_shape *x = &in[0].shape;
  const int64_t r = (int64_t)x->rank;
  if (r > ACTX_BF16_MAX_RANK) return actx_bf16_fail(why, "softmax input rank too high");
  if (s->axis < -r || s->axis >= r) return actx_bf16_fail(why, "softmax axis out of range");
  const int64_t axis = s->axis < 0 ? s->axis + r : s->axis;
  p->outer = p->inner = 1;
  for (int64_t d = 0; d < r; d++) {
    if (x->dims[d] < 0) return actx_bf16_fail(why, "negative dimension");
    if (d < axis) p->outer *= x->dims[d];
    else if (d > axis) p->inner *= x->dims[d];
  }
  p->len = x->dims[axis];
  return ACTX_OK;
}

static actx_status softmax_shapes(const void *state, const actx_tensor *in, size_t n_in,
                                  actx_tensor *out, size_t n_out, const char **why) {
  softmax_plan p;
  const actx_status st = softmax_plan_make(state, in, n_in, &p, why);
  if (st != ACTX_OK) return st;
  if (n_out < 1) return actx_bf16_fail(why, "no output");
  out[0].elem = ACTX_ELEM_BF16;
  out[0].shape = in[0].shape;
  return ACTX_OK;
}

typedef struct softmax_job {
  bool log;
  softmax_plan p;
  const uint16_t *x;
  uint16_t *y;
  float *scratch; /* len floats a task */
} softmax_job;

static void softmax_row(bool log, const uint16_t *x, uint16_t *y, int64_t len, int64_t stride,
                        float *e) {
  float m = actx_bf16_to_f32(x[0]);
  for (int64_t i = 0; i < len; i++) {
    const float v = actx_bf16_to_f32(x[i * stride]);
    e[i] = v;
    if (v > m || v != v) m = v; /* a NaN is kept: it must reach every output */
    if (m != m) break;
  }
  if (m != m) { /* NaN in the row */
    for (int64_t i = 0; i < len; i++) y[i * stride] = actx_f32_to_bf16(m);
    return;
  }
  float sum = 0.0f;
  for (int64_t i = 0; i < len; i++) {
    e[i] = log ? e[i] - m : expf(e[i] - m);
    sum += log ? expf(e[i]) : e[i];
  }
  if (log) {
    const float ls = logf(sum);
    for (int64_t i = 0; i < len; i++) y[i * stride] = actx_f32_to_bf16(e[i] - ls);
  } else {
    for (int64_t i = 0; i < len; i++) y[i * stride] = actx_f32_to_bf16(e[i] / sum);
  }
}

static void softmax_rows(const void *ctx, size_t task, int64_t begin, int64_t end) {
  const softmax_job *job = ctx;
  const softmax_plan *p = &job->p;
  float *e = job->scratch + task * (size_t)p->len;
  for (int64_t r = begin; r < end; r++) {
    const int64_t o = r / p->inner, i = r % p->inner;
    const int64_t base = o * p->len * p->inner + i;
    softmax_row(job->log, job->x + base, job->y + base, p->len, p->inner, e);
  }
}

/* Below this many elements a run stays on the calling thread. */
#define SOFTMAX_MIN_ELEMENTS_PER_TASK 8192

static actx_status softmax_run(const void *state, const actx_tensor *in, size_t n_in,
                               actx_tensor *out, size_t n_out, const actx_parallel *par,
                               const char **why) {
  const softmax_state *s = state;
  softmax_plan p;
  const actx_status st = softmax_plan_make(s, in, n_in, &p, why);
  if (st != ACTX_OK) return st;
  if (n_out < 1 || out[0].elem != ACTX_ELEM_BF16 || out[0].shape.rank != in[0].shape.rank ||
      memcmp(out[0].shape.dims, in[0].shape.dims, in[0].shape.rank * sizeof(int64_t)) != 0)
    return actx_bf16_fail(why, "softmax output is not the shape of its input");
  const int64_t rows = p.outer * p.inner, n = rows * p.len;
  if (n == 0) return ACTX_OK;
  if (in[0].data == NULL || out[0].data == NULL)
    return actx_bf16_fail(why, "softmax tensor has no data");
  const size_t tasks = actx_bf16_tasks(par, n, rows, SOFTMAX_MIN_ELEMENTS_PER_TASK);
  float *scratch = malloc(tasks * (size_t)p.len * sizeof(float));
  if (scratch == NULL) return ACTX_ERROR_OUT_OF_MEMORY;
  softmax_job job = {s->log, p, in[0].data, out[0].data, scratch};
  actx_bf16_run_split(par, tasks, rows, softmax_rows, &job);
  free(scratch);
  return ACTX_OK;
}

static void softmax_destroy(void *state) { free(state); }

const actx_bf16_family actx_bf16_family_softmax = {
    .create = softmax_create,
    .pack = NULL,
    .shapes = softmax_shapes,
    .run = softmax_run,
    .destroy = softmax_destroy,
};
