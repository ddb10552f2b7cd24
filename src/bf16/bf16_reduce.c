/* bf16_reduce.c — ReduceMean, ReduceSum, ReduceMax, ReduceMin on bfloat16 tensors.
 *
 * Axes: the attribute before opset 18 (ReduceSum: an input already at 13), optional input 1
 * (int64, 1-D) from 18; negative axes count from the end; a repeated axis is an error. No axes
 * (or an empty list) reduces every axis, or, with noop_with_empty_axes = 1, copies the input.
 *
 * Numerics: each output element is computed on its own (so any split over threads gives the
 * same bits). Sum and Mean add the widened inputs in float32, sequentially, in row-major order
 * of the reduced coordinates, starting from +0; Mean then divides by the count in float32; the
 * result is rounded once to bfloat16. The error of the float32 sum is below
 * (n - 1) · 2^-24 · Σ|x| before the final rounding. Max / Min return one of the inputs exactly;
 * a NaN anywhere in the reduced set makes the result NaN (the first NaN met, made quiet), as
 * numpy and the ONNX reference do (ORT's float32 kernels leave NaN to Eigen's maxCoeff, whose
 * result differs between its code paths); between +0 and -0 the first met is kept.
 *
 * Reducing over an empty set (a reduced axis of length 0): Sum 0, Max -inf, Min +inf, as the
 * ONNX spec says; Mean 0, as ORT's float32 ReduceMean does (it fills the empty set as its sum),
 * so that a bfloat16 twin agrees with its float32 original. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bf16_family.h"
#include "half.h"

typedef enum reduce_kind { REDUCE_SUM, REDUCE_MEAN, REDUCE_MAX, REDUCE_MIN } reduce_kind;

typedef struct reduce_state {
  reduce_kind kind;
  bool keepdims, noop_with_empty_axes;
  bool axes_input; /* axes come from input 1 (opset 18, ReduceSum 13), else the attribute */
  size_t n_axes;
  int64_t axes[ACTX_BF16_MAX_RANK];
} reduce_state;

/* A run's layout: the input's dims split into kept and reduced ones, adjacent dims of the same
 * kind merged and dims of length 1 dropped (neither changes the order of the additions). */
typedef struct reduce_plan {
  actx_shape out_shape;
  bool copy; /* noop_with_empty_axes with no axes: the output is the input */
  size_t n_kept, n_red;
  int64_t kept_ext[ACTX_BF16_MAX_RANK], kept_stride[ACTX_BF16_MAX_RANK];
  int64_t red_ext[ACTX_BF16_MAX_RANK], red_stride[ACTX_BF16_MAX_RANK];
  int64_t n_out, n_red_elems;
} reduce_plan;

static actx_status reduce_create(const actx_bf16_node *node, void **state, const char **why) {
  *state = NULL;
  const actx_bf16_attrs *a = &node->attrs;
  reduce_state s = {.keepdims = true};
  switch (node->op) {
  case ACTX_BF16_OP_REDUCE_SUM: s.kind = REDUCE_SUM; break;
  case ACTX_BF16_OP_REDUCE_MEAN: s.kind = REDUCE_MEAN; break;
  case ACTX_BF16_OP_REDUCE_MAX: s.kind = REDUCE_MAX; break;
  case ACTX_BF16_OP_REDUCE_MIN: s.kind = REDUCE_MIN; break;
  default: return actx_bf16_fail(why, "not a reduction");
  }
  s.axes_input = s.kind == REDUCE_SUM || node->since_version >= 18;
  if (node->input_elems[0] != ACTX_ELEM_BF16)
    return actx_bf16_fail(why, "reduction input must be bfloat16");
  const bool has_axes_input = node->n_inputs > 1 && node->input_present[1];
  if (has_axes_input && !s.axes_input)
    return actx_bf16_fail(why, "reduction axes are an attribute in this version, not an input");
  if (has_axes_input && node->input_elems[1] != ACTX_ELEM_I64)
    return actx_bf16_fail(why, "reduction axes input must be int64");
  if (a->has_axes && s.axes_input)
    return actx_bf16_fail(why, "reduction axes are an input in this version, not an attribute");
  if (a->has_noop_with_empty_axes && !s.axes_input)
    return actx_bf16_fail(why, "noop_with_empty_axes is not an attribute of this version");
  if (a->has_keepdims) {
    if (a->keepdims != 0 && a->keepdims != 1)
      return actx_bf16_fail(why, "keepdims must be 0 or 1");
    s.keepdims = a->keepdims == 1;
  }
  if (a->has_noop_with_empty_axes) {
    if (a->noop_with_empty_axes != 0 && a->noop_with_empty_axes != 1)
      return actx_bf16_fail(why, "noop_with_empty_axes must be 0 or 1");
    s.noop_with_empty_axes = a->noop_with_empty_axes == 1;
  }
  if (a->has_axes) {
    if (a->n_axes > ACTX_BF16_MAX_RANK) return actx_bf16_fail(why, "too many reduction axes");
    s.n_axes = a->n_axes;
    memcpy(s.axes, a->axes, a->n_axes * sizeof a->axes[0]);
  }
  reduce_state *p = malloc(sizeof *p);
  if (p == NULL) return ACTX_ERROR_OUT_OF_MEMORY;
  *p = s;
  *state = p;
  return ACTX_OK;
}

static actx_status reduce_plan_make(const reduce_state *s, const actx_tensor *in, size_t n_in,
                                    reduce_plan *plan, const char **why) {
  if (n_in < 1 || in[0].elem != ACTX_ELEM_BF16)
    return actx_bf16_fail(why, "reduction input must be bfloat16");
  const actx_shape *x = &in[0].shape;
  if (x->rank > ACTX_BF16_MAX_RANK) return actx_bf16_fail(why, "reduction input rank too high");
  const int64_t *axes = s->axes;
  size_t n_axes = s->n_axes;
  if (s->axes_input && n_in > 1 && in[1].elem != ACTX_ELEM_COUNT) {
    if (in[1].elem != ACTX_ELEM_I64) return actx_bf16_fail(why, "reduction axes must be int64");
    if (in[1].shape.rank != 1) return actx_bf16_fail(why, "reduction axes must be 1-D");
    const int64_t n = in[1].shape.dims[0];
    if (n > (int64_t)x->rank || n > ACTX_BF16_MAX_RANK)
      return actx_bf16_fail(why, "more reduction axes than input dimensions");
    if (n > 0 && in[1].data == NULL) return actx_bf16_fail(why, "reduction axes have no data");
    axes = in[1].data;
    n_axes = (size_t)n;
  }
  bool reduced[ACTX_BF16_MAX_RANK] = {false};
  for (size_t i = 0; i < n_axes; i++) {
    int64_t ax = axes[i];
    if (ax < -(int64_t)x->rank || ax >= (int64_t)x->rank)
      return actx_bf16_fail(why, "reduction axis out of range");
    if (ax < 0) ax += (int64_t)x->rank;
    if (reduced[ax]) return actx_bf16_fail(why, "reduction axis repeated");
    reduced[ax] = true;
  }
  memset(plan, 0, sizeof *plan);
  if (n_axes == 0) {
    if (s->noop_with_empty_axes) {
      plan->copy = true;
      plan->out_shape = *x;
      plan->n_out = actx_shape_elements(x);
      return ACTX_OK;
    }
    for (size_t d = 0; d < x->rank; d++) reduced[d] = true;
  }
  for (size_t d = 0; d < x->rank; d++) {
    if (x->dims[d] < 0) return actx_bf16_fail(why, "negative dimension");
    if (!reduced[d]) plan->out_shape.dims[plan->out_shape.rank++] = x->dims[d];
    else if (s->keepdims) plan->out_shape.dims[plan->out_shape.rank++] = 1;
  }
  /* strides of the input, then the merged kept / reduced dims, outermost first */
  int64_t stride = 1, strides[ACTX_BF16_MAX_RANK];
  for (size_t d = x->rank; d-- > 0;) {
    strides[d] = stride;
    stride *= x->dims[d];
  }
  int last_kind = -1; /* 0 kept, 1 reduced: the kind of the last dim appended */
  plan->n_out = 1;
  plan->n_red_elems = 1;
  for (size_t d = 0; d < x->rank; d++) {
    const int64_t e = x->dims[d];
    if (reduced[d]) plan->n_red_elems *= e;
    else plan->n_out *= e;
    if (e == 1) continue;
    const int kind = reduced[d] ? 1 : 0;
    int64_t *ext = kind ? plan->red_ext : plan->kept_ext;
    int64_t *str = kind ? plan->red_stride : plan->kept_stride;
    size_t *n = kind ? &plan->n_red : &plan->n_kept;
    if (kind == last_kind) { /* contiguous with the previous dim of its kind: merge */
      ext[*n - 1] *= e;
      str[*n - 1] = strides[d];
    } else {
      ext[*n] = e;
      str[*n] = strides[d];
      (*n)++;
    }
    last_kind = kind;
  }
  return ACTX_OK;
}

static actx_status reduce_shapes(const void *state, const actx_tensor *in, size_t n_in,
                                 actx_tensor *out, size_t n_out, const char **why) {
  reduce_plan plan;
  const actx_status st = reduce_plan_make(state, in, n_in, &plan, why);
  if (st != ACTX_OK) return st;
  if (n_out < 1) return actx_bf16_fail(why, "no output");
  out[0].elem = ACTX_ELEM_BF16;
  out[0].shape = plan.out_shape;
  return ACTX_OK;
}

typedef struct reduce_job {
  const reduce_state *s;
  const reduce_plan *plan;
  const uint16_t *x;
  uint16_t *y;
} reduce_job;

/* One output element: the reduced set under input offset base, in row-major order. */
static uint16_t reduce_one(const reduce_state *s, const reduce_plan *p, const uint16_t *x,
                           int64_t base) {
  if (p->n_red_elems == 0) {
    switch (s->kind) {
    case REDUCE_MAX: return actx_f32_to_bf16(-INFINITY);
    case REDUCE_MIN: return actx_f32_to_bf16(INFINITY);
    default: return 0; /* +0: Sum, and Mean as ORT's float32 kernel */
    }
  }
  const size_t inner = p->n_red > 0 ? p->n_red - 1 : 0;
  const int64_t inner_ext = p->n_red > 0 ? p->red_ext[inner] : 1;
  const int64_t inner_stride = p->n_red > 0 ? p->red_stride[inner] : 1;
  int64_t idx[ACTX_BF16_MAX_RANK] = {0};
  float acc = 0.0f;
  bool first = true;
  for (;;) {
    int64_t off = base;
    for (size_t k = 0; k < inner; k++) off += idx[k] * p->red_stride[k];
    const uint16_t *row = x + off;
    if (s->kind == REDUCE_SUM || s->kind == REDUCE_MEAN) {
      for (int64_t i = 0; i < inner_ext; i++) acc += actx_bf16_to_f32(row[i * inner_stride]);
    } else {
      for (int64_t i = 0; i < inner_ext; i++) {
        const float v = actx_bf16_to_f32(row[i * inner_stride]);
        if (v != v) return actx_f32_to_bf16(v); /* the first NaN, made quiet */
        if (first) {
          acc = v;
          first = false;
        } else if (s->kind == REDUCE_MAX ? v > acc : v < acc) {
          acc = v;
        }
      }
    }
    /* next outer reduced coordinate */
    size_t k = inner;
    while (k > 0) {
      k--;
      if (++idx[k] < p->red_ext[k]) break;
      idx[k] = 0;
      if (k == 0) goto done;
    }
    if (inner == 0) break;
  }
done:
  if (s->kind == REDUCE_MEAN) acc /= (float)p->n_red_elems;
  return actx_f32_to_bf16(acc);
}

static void reduce_range(const void *ctx, size_t task, int64_t begin, int64_t end) {
  (void)task;
  const reduce_job *job = ctx;
  const reduce_plan *p = job->plan;
  for (int64_t o = begin; o < end; o++) {
    int64_t rem = o, base = 0;
    for (size_t k = p->n_kept; k-- > 0;) {
      base += (rem % p->kept_ext[k]) * p->kept_stride[k];
      rem /= p->kept_ext[k];
    }
    job->y[o] = reduce_one(job->s, p, job->x, base);
  }
}

/* Below this many input elements a run stays on the calling thread. */
#define REDUCE_MIN_ELEMENTS_PER_TASK 16384
#define REDUCE_NS_PER_ELEMENT 0.05

static actx_status reduce_run(const void *state, const actx_tensor *in, size_t n_in,
                              actx_tensor *out, size_t n_out, const actx_parallel *par,
                              const char **why) {
  const reduce_state *s = state;
  reduce_plan plan;
  const actx_status st = reduce_plan_make(s, in, n_in, &plan, why);
  if (st != ACTX_OK) return st;
  if (n_out < 1 || out[0].elem != ACTX_ELEM_BF16 || out[0].shape.rank != plan.out_shape.rank ||
      memcmp(out[0].shape.dims, plan.out_shape.dims, plan.out_shape.rank * sizeof(int64_t)) != 0)
    return actx_bf16_fail(why, "reduction output is not the shape its inputs give");
  if (plan.n_out == 0) return ACTX_OK;
  if (out[0].data == NULL || (plan.n_red_elems > 0 && in[0].data == NULL))
    return actx_bf16_fail(why, "reduction tensor has no data");
  if (plan.copy) {
    memmove(out[0].data, in[0].data, (size_t)plan.n_out * sizeof(uint16_t));
    return ACTX_OK;
  }
  reduce_job job = {s, &plan, in[0].data, out[0].data};
  const int64_t work = plan.n_out * (plan.n_red_elems > 0 ? plan.n_red_elems : 1);
  const size_t tasks = actx_bf16_tasks(par, work, plan.n_out, REDUCE_MIN_ELEMENTS_PER_TASK,
                                       REDUCE_NS_PER_ELEMENT);
  actx_bf16_run_split(par, tasks, plan.n_out, reduce_range, &job);
  return ACTX_OK;
}

static void reduce_destroy(void *state) { free(state); }

const actx_bf16_family actx_bf16_family_reduce = {
    .create = reduce_create,
    .pack = NULL,
    .shapes = reduce_shapes,
    .run = reduce_run,
    .destroy = reduce_destroy,
};
