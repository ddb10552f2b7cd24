/* bf16_pool.c — MaxPool, AveragePool (opset 22), GlobalAveragePool, GlobalMaxPool on bfloat16,
 * NCHW-style layout: [N, C, D1..Dk], k = 1, 2 or 3 spatial dims (the global pools: any k >= 1).
 *
 * Windows: kernel_shape (required), strides, dilations (default 1s), pads [b1..bk, e1..ek]
 * (default 0s; each smaller than its kernel, as ORT requires), auto_pad NOTSET / VALID /
 * SAME_UPPER / SAME_LOWER (SAME: out = ceil(in / stride), the odd pad at the end for UPPER,
 * the start for LOWER), ceil_mode (the last window is dropped when it would start past the
 * input and its start pad, as ONNX and ORT say). A window's positions are taken in row-major
 * order; positions in the padding are skipped.
 *
 * MaxPool: the largest value (exact; between equal values the first), -inf for a window that
 * holds no input position (ORT's float32 -FLT_MAX, which rounds to -inf in bfloat16); a NaN in
 * the window gives NaN (the first met, made quiet) as numpy and the ONNX reference do (ORT's
 * float32 kernels differ by code path). The optional Indices output (int64) is the flat input
 * index of that element: (n·C + c)·(D1·…·Dk) plus the spatial offset, row-major
 * (storage_order 0) or column-major (storage_order 1: D1 varies fastest), as ORT.
 * AveragePool: the float32 sum of the window's input values, sequential in window order,
 * divided in float32 by the count of positions inside the input (count_include_pad 0) or
 * inside the input and its pads (count_include_pad 1; not past the end pad that ceil_mode may
 * add, as ORT), rounded once; a window with no position counted is 0 / 0 = NaN.
 * Global pools: one window over all spatial dims (an empty one: Average NaN, Max -inf). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bf16_family.h"
#include "half.h"

#define SP ACTX_BF16_MAX_SPATIAL

typedef enum pool_auto { AUTO_NOTSET, AUTO_VALID, AUTO_SAME_UPPER, AUTO_SAME_LOWER } pool_auto;

typedef struct pool_state {
  bool max, global;
  size_t k; /* spatial dims (windowed pools) */
  int64_t kernel[SP], stride[SP], dilation[SP], pad_b[SP], pad_e[SP];
  pool_auto auto_pad;
  bool ceil_mode, count_include_pad, col_major, has_indices;
} pool_state;

static actx_status pool_create(const actx_bf16_node *node, void **state, const char **why) {
  *state = NULL;
  const actx_bf16_attrs *a = &node->attrs;
  pool_state s = {0};
  switch (node->op) {
  case ACTX_BF16_OP_MAX_POOL: s.max = true; break;
  case ACTX_BF16_OP_AVERAGE_POOL: break;
  case ACTX_BF16_OP_GLOBAL_MAX_POOL: s.max = s.global = true; break;
  case ACTX_BF16_OP_GLOBAL_AVERAGE_POOL: s.global = true; break;
  default: return actx_bf16_fail(why, "not a pooling op");
  }
  if (node->input_elems[0] != ACTX_ELEM_BF16)
    return actx_bf16_fail(why, "pooling input must be bfloat16");
  s.has_indices = node->n_outputs > 1 && node->output_present[1];
  if (!s.global) {
    if (!a->has_kernel_shape || a->n_kernel_shape < 1 || a->n_kernel_shape > SP)
      return actx_bf16_fail(why, "kernel_shape must be set, with 1 to 3 dims");
    s.k = a->n_kernel_shape;
    if (a->has_strides && a->n_strides != s.k)
      return actx_bf16_fail(why, "strides must have one value per kernel dim");
    if (a->has_dilations && a->n_dilations != s.k)
      return actx_bf16_fail(why, "dilations must have one value per kernel dim");
    if (a->has_pads && a->n_pads != 2 * s.k)
      return actx_bf16_fail(why, "pads must have two values per kernel dim");
    for (size_t d = 0; d < s.k; d++) {
      s.kernel[d] = a->kernel_shape[d];
      s.stride[d] = a->has_strides ? a->strides[d] : 1;
      s.dilation[d] = a->has_dilations ? a->dilations[d] : 1;
      s.pad_b[d] = a->has_pads ? a->pads[d] : 0;
      s.pad_e[d] = a->has_pads ? a->pads[s.k + d] : 0;
      if (s.kernel[d] < 1) return actx_bf16_fail(why, "kernel_shape values must be >= 1");
      if (s.stride[d] < 1) return actx_bf16_fail(why, "strides must be >= 1");
      if (s.dilation[d] < 1) return actx_bf16_fail(why, "dilations must be >= 1");
      if (s.pad_b[d] < 0 || s.pad_e[d] < 0) return actx_bf16_fail(why, "pads must be >= 0");
      if (s.pad_b[d] >= s.kernel[d] || s.pad_e[d] >= s.kernel[d])
        return actx_bf16_fail(why, "pads must be smaller than the kernel");
    }
    const char *ap = a->has_auto_pad ? a->auto_pad : "";
    if (ap[0] == '\0' || strcmp(ap, "NOTSET") == 0) s.auto_pad = AUTO_NOTSET;
    else if (strcmp(ap, "VALID") == 0) s.auto_pad = AUTO_VALID;
    else if (strcmp(ap, "SAME_UPPER") == 0) s.auto_pad = AUTO_SAME_UPPER;
    else if (strcmp(ap, "SAME_LOWER") == 0) s.auto_pad = AUTO_SAME_LOWER;
    else return actx_bf16_fail(why, "auto_pad must be NOTSET, VALID, SAME_UPPER or SAME_LOWER");
    if (s.auto_pad != AUTO_NOTSET && a->has_pads)
      for (size_t d = 0; d < 2 * s.k; d++)
        if (a->pads[d] != 0) return actx_bf16_fail(why, "pads are not allowed with auto_pad");
    if (a->has_ceil_mode) {
      if (a->ceil_mode != 0 && a->ceil_mode != 1)
        return actx_bf16_fail(why, "ceil_mode must be 0 or 1");
      s.ceil_mode = a->ceil_mode == 1;
    }
  }
  if (a->has_storage_order) {
    if (node->op != ACTX_BF16_OP_MAX_POOL)
      return actx_bf16_fail(why, "storage_order is an attribute of MaxPool only");
    if (a->storage_order != 0 && a->storage_order != 1)
      return actx_bf16_fail(why, "storage_order must be 0 or 1");
    s.col_major = a->storage_order == 1;
  }
  if (a->has_count_include_pad) {
    if (node->op != ACTX_BF16_OP_AVERAGE_POOL)
      return actx_bf16_fail(why, "count_include_pad is an attribute of AveragePool only");
    if (a->count_include_pad != 0 && a->count_include_pad != 1)
      return actx_bf16_fail(why, "count_include_pad must be 0 or 1");
    s.count_include_pad = a->count_include_pad == 1;
  }
  pool_state *p = malloc(sizeof *p);
  if (p == NULL) return ACTX_ERROR_OUT_OF_MEMORY;
  *p = s;
  *state = p;
  return ACTX_OK;
}

/* A run's geometry, always 3 spatial dims: the missing ones are 1 with a kernel of 1. */
typedef struct pool_plan {
  int64_t nc, in[SP], out[SP], kernel[SP], stride[SP], dilation[SP], pad_b[SP], pad_e[SP];
  actx_shape out_shape;
} pool_plan;

static actx_status pool_plan_make(const pool_state *s, const actx_tensor *in, size_t n_in,
                                  pool_plan *p, const char **why) {
  if (n_in < 1 || in[0].elem != ACTX_ELEM_BF16)
    return actx_bf16_fail(why, "pooling input must be bfloat16");
  const actx_shape *x = &in[0].shape;
  if (x->rank < 3) return actx_bf16_fail(why, "pooling input must be [N, C, spatial...]");
  const size_t k = x->rank - 2;
  if (!s->global && k != s->k)
    return actx_bf16_fail(why, "pooling input rank is not 2 + the kernel's dims");
  for (size_t d = 0; d < x->rank; d++)
    if (x->dims[d] < 0) return actx_bf16_fail(why, "negative dimension");
  memset(p, 0, sizeof *p);
  p->nc = x->dims[0] * x->dims[1];
  p->out_shape = *x;
  for (size_t d = 0; d < SP; d++) {
    p->in[d] = p->out[d] = p->kernel[d] = p->stride[d] = p->dilation[d] = 1;
  }
  if (s->global) {
    /* all spatial dims as one: the window is the whole of them */
    int64_t n = 1;
    for (size_t d = 0; d < k; d++) {
      n *= x->dims[2 + d];
      p->out_shape.dims[2 + d] = 1;
    }
    p->in[0] = p->kernel[0] = n;
    return ACTX_OK;
  }
  for (size_t d = 0; d < k; d++) {
    const int64_t in_d = x->dims[2 + d], kd = s->kernel[d], st = s->stride[d],
                  dil = s->dilation[d], ext = dil * (kd - 1) + 1;
    int64_t pb = s->pad_b[d], pe = s->pad_e[d], out;
    switch (s->auto_pad) {
    case AUTO_VALID:
      pb = pe = 0;
      out = in_d >= ext ? (in_d - ext) / st + 1 : 0;
      break;
    case AUTO_SAME_UPPER:
    case AUTO_SAME_LOWER: {
      out = (in_d + st - 1) / st;
      int64_t total = (out - 1) * st + ext - in_d;
      if (total < 0) total = 0;
      pb = s->auto_pad == AUTO_SAME_UPPER ? total / 2 : total - total / 2;
      pe = total - pb;
      break;
    }
    default: {
      /* floor or ceil of span / stride, + 1; span < 0 when the kernel passes the padded
       * input: floor then gives no window, ceil one (if span > -stride), as the spec's formula
       * and ORT */
      const int64_t span = in_d + pb + pe - ext;
      const int64_t fl = span >= 0 ? span / st : -((-span + st - 1) / st);
      const int64_t cl = span >= 0 ? (span + st - 1) / st : -(-span / st);
      out = (s->ceil_mode ? cl : fl) + 1;
      if (s->ceil_mode && (out - 1) * st >= in_d + pb) out--; /* a window starting in the pad */
    }
    }
    if (out < 1) return actx_bf16_fail(why, "pooling kernel is larger than the padded input");
    p->in[d] = in_d;
    p->out[d] = out;
    p->kernel[d] = kd;
    p->stride[d] = st;
    p->dilation[d] = dil;
    p->pad_b[d] = pb;
    p->pad_e[d] = pe;
    p->out_shape.dims[2 + d] = out;
  }
  return ACTX_OK;
}

static actx_status pool_shapes(const void *state, const actx_tensor *in, size_t n_in,
                               actx_tensor *out, size_t n_out, const char **why) {
  const pool_state *s = state;
  pool_plan p;
  const actx_status st = pool_plan_make(s, in, n_in, &p, why);
  if (st != ACTX_OK) return st;
  if (n_out < 1) return actx_bf16_fail(why, "no output");
  out[0] = (actx_tensor){.elem = ACTX_ELEM_BF16, .shape = p.out_shape};
  if (n_out > 1)
    out[1] = s->has_indices ? (actx_tensor){.elem = ACTX_ELEM_I64, .shape = p.out_shape}
                            : ACTX_TENSOR_ABSENT;
  return ACTX_OK;
}

typedef struct pool_job {
  const pool_state *s;
  const pool_plan *p;
  const uint16_t *x;
  uint16_t *y;
  int64_t *indices;
  int64_t spatial_mul[SP]; /* Indices: each input spatial dim's multiplier */
} pool_job;

/* One output element at (nc, o0, o1, o2). */
static void pool_one(const pool_job *job, int64_t nc, const int64_t *o, int64_t oi) {
  const pool_state *s = job->s;
  const pool_plan *p = job->p;
  const int64_t in_sp = p->in[0] * p->in[1] * p->in[2];
  /* an empty input has no data (x NULL); nothing of it is read then */
  const uint16_t *x = in_sp > 0 ? job->x + nc * in_sp : job->x;
  int64_t start[SP];
  for (int d = 0; d < SP; d++) start[d] = o[d] * p->stride[d] - p->pad_b[d];
  float acc = s->max ? -INFINITY : 0.0f;
  int64_t count = 0, arg = -1;
  bool nan = false;
  for (int64_t j0 = 0; j0 < p->kernel[0] && !nan; j0++) {
    const int64_t q0 = start[0] + j0 * p->dilation[0];
    if (q0 < -p->pad_b[0] || q0 >= p->in[0] + p->pad_e[0]) continue;
    for (int64_t j1 = 0; j1 < p->kernel[1] && !nan; j1++) {
      const int64_t q1 = start[1] + j1 * p->dilation[1];
      if (q1 < -p->pad_b[1] || q1 >= p->in[1] + p->pad_e[1]) continue;
      for (int64_t j2 = 0; j2 < p->kernel[2]; j2++) {
        const int64_t q2 = start[2] + j2 * p->dilation[2];
        if (q2 < -p->pad_b[2] || q2 >= p->in[2] + p->pad_e[2]) continue;
        const bool inside = q0 >= 0 && q0 < p->in[0] && q1 >= 0 && q1 < p->in[1] && q2 >= 0 &&
                            q2 < p->in[2];
        if (s->count_include_pad || inside) count++;
        if (!inside) continue;
        const int64_t off = (q0 * p->in[1] + q1) * p->in[2] + q2;
        const float v = actx_bf16_to_f32(x[off]);
        if (s->max) {
          if (v != v) {
            acc = v;
            arg = off;
            nan = true;
            break;
          }
          if (arg < 0 || v > acc) {
            acc = v;
            arg = off;
          }
        } else {
          acc += v;
        }
      }
    }
  }
  job->y[oi] = actx_f32_to_bf16(s->max ? acc : acc / (float)count);
  if (job->indices != NULL) {
    int64_t idx = nc * in_sp;
    if (arg >= 0) {
      const int64_t q[SP] = {arg / (p->in[1] * p->in[2]), (arg / p->in[2]) % p->in[1],
                             arg % p->in[2]};
      for (int d = 0; d < SP; d++) idx += q[d] * job->spatial_mul[d];
    }
    job->indices[oi] = idx;
  }
}

static void pool_range(const void *ctx, size_t task, int64_t begin, int64_t end) {
  (void)task;
  const pool_job *job = ctx;
  const pool_plan *p = job->p;
  const int64_t per_nc = p->out[0] * p->out[1] * p->out[2];
  for (int64_t oi = begin; oi < end; oi++) {
    const int64_t nc = oi / per_nc, r = oi % per_nc;
    const int64_t o[SP] = {r / (p->out[1] * p->out[2]), (r / p->out[2]) % p->out[1],
                           r % p->out[2]};
    pool_one(job, nc, o, oi);
  }
}

#define POOL_MIN_WORK_PER_TASK 16384

static bool same_shape(const actx_shape *a, const actx_shape *b) {
  return a->rank == b->rank && memcmp(a->dims, b->dims, a->rank * sizeof a->dims[0]) == 0;
}

static actx_status pool_run(const void *state, const actx_tensor *in, size_t n_in,
                            actx_tensor *out, size_t n_out, const actx_parallel *par,
                            const char **why) {
  const pool_state *s = state;
  pool_plan p;
  const actx_status st = pool_plan_make(s, in, n_in, &p, why);
  if (st != ACTX_OK) return st;
  if (n_out < 1 || out[0].elem != ACTX_ELEM_BF16 || !same_shape(&out[0].shape, &p.out_shape))
    return actx_bf16_fail(why, "pooling output is not the shape its input gives");
  const bool want_indices = s->has_indices && n_out > 1;
  if (want_indices && (out[1].elem != ACTX_ELEM_I64 || !same_shape(&out[1].shape, &p.out_shape)))
    return actx_bf16_fail(why, "MaxPool Indices output is not int64 of the output's shape");
  const int64_t n = p.nc * p.out[0] * p.out[1] * p.out[2];
  if (n == 0) return ACTX_OK;
  const int64_t in_sp = p.in[0] * p.in[1] * p.in[2];
  if (out[0].data == NULL || (want_indices && out[1].data == NULL) ||
      (in_sp > 0 && in[0].data == NULL))
    return actx_bf16_fail(why, "pooling tensor has no data");
  pool_job job = {s, &p, in[0].data, out[0].data, want_indices ? out[1].data : NULL, {0}};
  /* Indices' spatial multipliers, over the input's real spatial dims (the global pools have no
   * Indices) */
  for (size_t d = 0; d < SP; d++) {
    int64_t m = 1;
    if (s->col_major)
      for (size_t e = 0; e < d; e++) m *= p.in[e];
    else
      for (size_t e = d + 1; e < SP; e++) m *= p.in[e];
    job.spatial_mul[d] = m;
  }
  const int64_t work = n * p.kernel[0] * p.kernel[1] * p.kernel[2];
  const size_t tasks = actx_bf16_tasks(par, work, n, POOL_MIN_WORK_PER_TASK);
  actx_bf16_run_split(par, tasks, n, pool_range, &job);
  return ACTX_OK;
}

static void pool_destroy(void *state) { free(state); }

const actx_bf16_family actx_bf16_family_pool = {
    .create = pool_create,
    .pack = NULL,
    .shapes = pool_shapes,
    .run = pool_run,
    .destroy = pool_destroy,
};
