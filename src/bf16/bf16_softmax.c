/* bf16_softmax.c — Softmax and LogSoftmax (opset 13: along one axis, default -1) on bfloat16.
 *
 * Each row (the elements along the axis for one position of the other axes) is computed in
 * float32 from the widened inputs: m = max, d_i = x_i - m, e_i = exp(d_i) by actx_bf16_exp
 * (bf16_exp.h, within 1 ulp), s = Σ e_i; Softmax y_i = e_i / s, LogSoftmax y_i = d_i - logf(s); each y_i
 * rounded once to bfloat16. Subtracting the maximum keeps exp from overflowing, so huge finite
 * inputs are fine. A row holding a NaN gives that NaN (the first, made quiet) throughout; a row
 * holding +inf, or all -inf, gives NaN throughout (inf - inf), as float32 ORT and numpy do.
 *
 * Speed without changing the bits by ISA: the loops are ACTX_BF16_VECTORISED and do only
 * element-wise float32 arithmetic; a row along the last axis is summed in SOFTMAX_LANES fixed
 * lanes (lane j takes the elements j, j + 32, ...; the lanes are then added in a fixed tree),
 * whatever the vector width. Along another axis the elements of a row are `inner` apart, so a
 * task takes a block of up to SOFTMAX_COLUMNS neighbouring rows ("columns") at once, walks the
 * axis outermost and vectorises over the contiguous columns: each column keeps its own max and
 * its own sum, added in axis order. The rows or column blocks are split over the caller's
 * threads (each result independent of the split), and the output may be the input (every
 * element a step writes was read by an earlier step, or is read by this one first). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bf16_exp.h"
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

/* The running maximum: a NaN, once in, stays (v > NaN and NaN != NaN are both false). */
static inline float softmax_max_step(float m, float v) { return v > m || v != v ? v : m; }

/* Lanes of a row's max and sum along the last axis. */
#define SOFTMAX_LANES 32

/* The tree's levels written out: with the halving as a loop GCC kept each level a scalar loop
 * of unknown count, a quarter of a 128-element row's time. */
#define SOFTMAX_TREE_(level) \
  SOFTMAX_TREE_LEVEL_(16, level) SOFTMAX_TREE_LEVEL_(8, level) SOFTMAX_TREE_LEVEL_(4, level) \
  SOFTMAX_TREE_LEVEL_(2, level) SOFTMAX_TREE_LEVEL_(1, level)
#define SOFTMAX_TREE_LEVEL_(w, level) \
  for (int j = 0; j < (w); j++) level(j, j + (w));
_Static_assert(SOFTMAX_LANES == 32, "SOFTMAX_TREE_ halves 32 lanes");

#define SOFTMAX_SUM_LEVEL_(j, k) acc[j] += acc[k];
static inline float softmax_lanes_sum(float *acc) {
  SOFTMAX_TREE_(SOFTMAX_SUM_LEVEL_)
  return acc[0];
}

/* A row's maximum, NaN when it holds one. Per lane the NaN-blind max (v > m ? v : m) and,
 * apart, a flag of NaNs seen, so the running maximum's dependency chain is one compare and one
 * select (the NaN test sits off it); the largest element is the same whichever lane sees it,
 * and the row's first NaN is found afterwards (softmax_row_nan). */
static inline void softmax_lane_max(float *acc, int32_t *nan, int j, uint16_t x) {
  const float v = actx_bf16_to_f32(x);
  acc[j] = v > acc[j] ? v : acc[j];
  nan[j] |= v != v;
}

ACTX_BF16_VECTORISED
static float softmax_row_max(const uint16_t *x, int64_t len) {
  float acc[SOFTMAX_LANES];
  int32_t nan[SOFTMAX_LANES];
  for (int j = 0; j < SOFTMAX_LANES; j++) acc[j] = -INFINITY, nan[j] = 0;
  int64_t i = 0;
  for (; i + SOFTMAX_LANES <= len; i += SOFTMAX_LANES)
    for (int j = 0; j < SOFTMAX_LANES; j++) softmax_lane_max(acc, nan, j, x[i + j]);
  for (int j = 0; i + j < len; j++) softmax_lane_max(acc, nan, j, x[i + j]);
#define SOFTMAX_MAX_LEVEL_(j, k) \
  acc[j] = acc[k] > acc[j] ? acc[k] : acc[j], nan[j] |= nan[k];
  SOFTMAX_TREE_(SOFTMAX_MAX_LEVEL_)
  return nan[0] ? NAN : acc[0];
}

/* Along the last axis: e[i] = exp(x_i - m) (Softmax) or x_i - m (LogSoftmax); both return
 * Σ exp(x_i - m), added in lanes. One function a kind (the body inlined with `log` constant):
 * the vectoriser takes no branch inside. */
static inline __attribute__((always_inline)) float softmax_row_exp_body(
    bool log, const uint16_t *x, int64_t len, float m, float *e) {
  float acc[SOFTMAX_LANES] = {0};
  int64_t i = 0;
  for (; i + SOFTMAX_LANES <= len; i += SOFTMAX_LANES)
    for (int j = 0; j < SOFTMAX_LANES; j++) {
      const float d = actx_bf16_to_f32(x[i + j]) - m, ed = actx_bf16_exp(d);
      e[i + j] = log ? d : ed;
      acc[j] += ed;
    }
  for (int j = 0; i + j < len; j++) {
    const float d = actx_bf16_to_f32(x[i + j]) - m, ed = actx_bf16_exp(d);
    e[i + j] = log ? d : ed;
    acc[j] += ed;
  }
  return softmax_lanes_sum(acc);
}

ACTX_BF16_VECTORISED
static float softmax_row_exp(const uint16_t *x, int64_t len, float m, float *e) {
  return softmax_row_exp_body(false, x, len, m, e);
}

ACTX_BF16_VECTORISED
static float softmax_row_log_exp(const uint16_t *x, int64_t len, float m, float *e) {
  return softmax_row_exp_body(true, x, len, m, e);
}

/* y_i = e_i / s (Softmax) or e_i - ls (LogSoftmax, e_i = d_i, ls = log s) */
ACTX_BF16_VECTORISED
static void softmax_row_out(bool log, const float *e, int64_t len, float s, uint16_t *y) {
  if (log)
    for (int64_t i = 0; i < len; i++) y[i] = actx_f32_to_bf16(e[i] - s);
  else
    for (int64_t i = 0; i < len; i++) y[i] = actx_f32_to_bf16(e[i] / s);
}

/* The NaN a row with a NaN or +inf, or all -inf, gives throughout: its first NaN, else
 * inf - inf. m is the row's maximum (NaN when it holds one). */
static float softmax_row_nan(const uint16_t *x, int64_t len, int64_t stride, float m) {
  if (m == m) return m - m;
  for (int64_t i = 0;; i++) {
    const float v = actx_bf16_to_f32(x[i * stride]);
    if (v != v) return v;
  }
}

/* A row along the last axis; e: len floats. */
static void softmax_row(bool log, const uint16_t *x, uint16_t *y, int64_t len, float *e) {
  const float m = softmax_row_max(x, len);
  if (m - m != 0.0f) { /* NaN or ±inf */
    const uint16_t nan = actx_f32_to_bf16(softmax_row_nan(x, len, 1, m));
    for (int64_t i = 0; i < len; i++) y[i] = nan;
    return;
  }
  const float s = log ? softmax_row_log_exp(x, len, m, e) : softmax_row_exp(x, len, m, e);
  softmax_row_out(log, e, len, log ? logf(s) : s, y);
}

/* Columns: w rows of length len whose elements are inner apart, the first one's at x[0], the
 * others' beside it. Per column c: m[c] its max, s[c] its sum (then log s), e[k·w + c] its k-th
 * exp(d) or d. */
ACTX_BF16_VECTORISED
static void softmax_cols_max(const uint16_t *x, int64_t len, int64_t inner, int64_t w,
                             float *restrict m) {
  for (int64_t c = 0; c < w; c++) m[c] = -INFINITY;
  for (int64_t k = 0; k < len; k++)
    for (int64_t c = 0; c < w; c++)
      m[c] = softmax_max_step(m[c], actx_bf16_to_f32(x[k * inner + c]));
}

/* e = exp(x - m) (Softmax) or x - m (LogSoftmax) column by column, s the columns' sums of
 * exp(x - m) in axis order; one function a kind, as for rows. */
static inline __attribute__((always_inline)) void softmax_cols_exp_body(
    bool log, const uint16_t *x, int64_t len, int64_t inner, int64_t w, const float *restrict m,
    float *restrict s, float *restrict e) {
  for (int64_t c = 0; c < w; c++) s[c] = 0.0f;
  for (int64_t k = 0; k < len; k++)
    for (int64_t c = 0; c < w; c++) {
      const float d = actx_bf16_to_f32(x[k * inner + c]) - m[c], ed = actx_bf16_exp(d);
      e[k * w + c] = log ? d : ed;
      s[c] += ed;
    }
}

ACTX_BF16_VECTORISED
static void softmax_cols_exp(const uint16_t *x, int64_t len, int64_t inner, int64_t w,
                             const float *restrict m, float *restrict s, float *restrict e) {
  softmax_cols_exp_body(false, x, len, inner, w, m, s, e);
}

ACTX_BF16_VECTORISED
static void softmax_cols_log_exp(const uint16_t *x, int64_t len, int64_t inner, int64_t w,
                                 const float *restrict m, float *restrict s, float *restrict e) {
  softmax_cols_exp_body(true, x, len, inner, w, m, s, e);
}

ACTX_BF16_VECTORISED
static void softmax_cols_out(bool log, const float *restrict e, int64_t len, int64_t inner,
                             int64_t w, const float *restrict s, uint16_t *y) {
  if (log)
    for (int64_t k = 0; k < len; k++)
      for (int64_t c = 0; c < w; c++) y[k * inner + c] = actx_f32_to_bf16(e[k * w + c] - s[c]);
  else
    for (int64_t k = 0; k < len; k++)
      for (int64_t c = 0; c < w; c++) y[k * inner + c] = actx_f32_to_bf16(e[k * w + c] / s[c]);
}

/* Neighbouring rows a task takes at once along an axis that is not the last: at most this
 * many, and fewer when len · SOFTMAX_COLUMNS floats of scratch would pass SOFTMAX_COLUMN_FLOATS
 * (never fewer than SOFTMAX_LANES). */
#define SOFTMAX_COLUMNS 1024
#define SOFTMAX_COLUMN_FLOATS 16384

static int64_t softmax_columns(const softmax_plan *p) {
  int64_t w = SOFTMAX_COLUMN_FLOATS / (p->len > 0 ? p->len : 1);
  if (w > SOFTMAX_COLUMNS) w = SOFTMAX_COLUMNS;
  if (w < SOFTMAX_LANES) w = SOFTMAX_LANES;
  return w < p->inner ? w : p->inner;
}

typedef struct softmax_job {
  bool log;
  softmax_plan p;
  int64_t w, blocks; /* columns a block; blocks along inner (1 along the last axis) */
  const uint16_t *x;
  uint16_t *y;
  float *scratch; /* scratch_floats a task */
  size_t scratch_floats;
} softmax_job;

/* Items: outer · blocks; along the last axis a block is one row. */
static void softmax_items(const void *ctx, size_t task, int64_t begin, int64_t end) {
  const softmax_job *job = ctx;
  const softmax_plan *p = &job->p;
  float *e = job->scratch + task * job->scratch_floats;
  if (p->inner == 1) {
    for (int64_t r = begin; r < end; r++)
      softmax_row(job->log, job->x + r * p->len, job->y + r * p->len, p->len, e);
    return;
  }
  float *m = e + (size_t)(p->len * job->w), *s = m + job->w, *nan = s + job->w;
  for (int64_t it = begin; it < end; it++) {
    const int64_t o = it / job->blocks, c0 = it % job->blocks * job->w;
    const int64_t w = p->inner - c0 < job->w ? p->inner - c0 : job->w;
    const int64_t base = o * p->len * p->inner + c0;
    const uint16_t *x = job->x + base;
    uint16_t *y = job->y + base;
    softmax_cols_max(x, p->len, p->inner, w, m);
    bool any_nan = false; /* a column with a NaN or ±inf: its fill, found before y is written */
    for (int64_t c = 0; c < w; c++) {
      nan[c] = 0.0f;
      if (m[c] - m[c] != 0.0f) {
        nan[c] = softmax_row_nan(x + c, p->len, p->inner, m[c]);
        any_nan = true;
      }
    }
    if (job->log) softmax_cols_log_exp(x, p->len, p->inner, w, m, s, e);
    else softmax_cols_exp(x, p->len, p->inner, w, m, s, e);
    if (job->log)
      for (int64_t c = 0; c < w; c++) s[c] = logf(s[c]);
    softmax_cols_out(job->log, e, p->len, p->inner, w, s, y);
    if (any_nan)
      for (int64_t c = 0; c < w; c++)
        if (nan[c] != 0.0f)
          for (int64_t k = 0; k < p->len; k++) y[k * p->inner + c] = actx_f32_to_bf16(nan[c]);
  }
}

/* Below this many elements a run stays on the calling thread. */
#define SOFTMAX_MIN_ELEMENTS_PER_TASK 8192
#define SOFTMAX_NS_PER_ELEMENT 0.6 /* [1, 12, 128, 128]: 148 us on AVX-512 */

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
  const int64_t n = p.outer * p.inner * p.len;
  if (n == 0) return ACTX_OK;
  if (in[0].data == NULL || out[0].data == NULL)
    return actx_bf16_fail(why, "softmax tensor has no data");
  softmax_job job = {.log = s->log, .p = p, .x = in[0].data, .y = out[0].data};
  if (p.inner == 1) {
    job.w = job.blocks = 1;
    job.scratch_floats = (size_t)p.len;
  } else {
    job.w = softmax_columns(&p);
    job.blocks = (p.inner + job.w - 1) / job.w;
    job.scratch_floats = (size_t)((p.len + 3) * job.w);
  }
  const int64_t items = p.outer * job.blocks;
  const size_t tasks = actx_bf16_tasks(par, n, items, SOFTMAX_MIN_ELEMENTS_PER_TASK,
                                       SOFTMAX_NS_PER_ELEMENT);
  job.scratch = malloc(tasks * job.scratch_floats * sizeof(float));
  if (job.scratch == NULL) return ACTX_ERROR_OUT_OF_MEMORY;
  actx_bf16_run_split(par, tasks, items, softmax_items, &job);
  free(job.scratch);
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
