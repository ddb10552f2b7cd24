/* bf16_pool.c — MaxPool, AveragePool (opset 22), GlobalAveragePool, GlobalMaxPool on bfloat16,
 * NCHW-style layout: [N, C, D1..Dk], k = 1, 2 or 3 spatial dims (the global pools: any k >= 1).
 *
 * Windows: kernel_shape (required), strides, dilations (default 1s), pads [b1..bk, e1..ek]
 * (default 0s; each smaller than its kernel, as ORT requires), auto_pad NOTSET / VALID /
 * SAME_UPPER / SAME_LOWER, ceil_mode. The output size is ORT's (pool_attributes.h), which a
 * twin's float32 model gets from ORT: (in + pads - extent) / stride + 1, the division truncated
 * toward zero (so a kernel that passes the padded input by less than a stride still gives one
 * window, clipped; ONNX's floor would give none), or with ceil_mode rounded up, the last window
 * dropped when it would start past the input and its start pad; 0 windows an empty output,
 * fewer an error. VALID: no pads, the same formula. SAME: pads (target - 1) · stride + kernel -
 * in for target = ceil(in / stride), the odd one at the end for UPPER, the start for LOWER, the
 * kernel undilated (ORT's; so a dilated kernel may give fewer windows than ceil(in / stride)),
 * then the same formula; a negative start pad there (a stride past the kernel by 2 or more) is
 * refused (ORT's undilated MaxPool refuses it; its AveragePool and dilated MaxPool move every
 * window by it), a negative end pad is taken (no window reaches it; ORT's undilated MaxPool
 * refuses it). A window's positions are taken in row-major order; positions in the
 * padding are skipped.
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
 * add, as ORT), rounded once; a window with no position counted (all its positions on pads,
 * which a dilated kernel allows) is 0, as ORT's.
 * Global pools: one window over all spatial dims (an empty one: Average NaN, Max -inf). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bf16_family.h"
#include "bf16_transpose.h"
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
    int64_t pb = s->pad_b[d], pe = s->pad_e[d];
    if (s->auto_pad == AUTO_VALID) pb = pe = 0;
    if (s->auto_pad == AUTO_SAME_UPPER || s->auto_pad == AUTO_SAME_LOWER) {
      const int64_t target = (in_d + st - 1) / st, total = (target - 1) * st + kd - in_d;
      pb = s->auto_pad == AUTO_SAME_UPPER ? total / 2 : (total + 1) / 2; /* C's truncation */
      pe = total - pb;
      if (pb < 0) /* ORT's undilated MaxPool refuses it; its other pools move every window */
        return actx_bf16_fail(why, "auto_pad SAME gives a negative start pad");
    }
    /* ORT's output size (the file comment): span / stride truncated toward zero, or rounded
     * up with ceil_mode; a negative end pad counts here and nowhere after: no window reaches
     * it */
    const int64_t span = in_d + pb + pe - ext;
    if (pe < 0) pe = 0;
    const int64_t cl = span >= 0 ? (span + st - 1) / st : -(-span / st);
    int64_t out = (s->ceil_mode ? cl : span / st) + 1;
    if (s->ceil_mode && (out - 1) * st >= in_d + pb) out--; /* a window starting in the pad */
    if (out < 0)
      return actx_bf16_fail(why, "pooling kernel is larger than the padded input by a stride "
                                 "or more (a negative output size)");
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

/* A windowed pool without Indices runs plane by plane on a float32 copy of the plane, padded on
 * every side to all its windows' extent, P[d] = (out - 1) · stride + (kernel - 1) · dilation
 * + 1, the padding (and any ceil_mode tail) holding the fold's identity: -inf for max (never
 * greater), +0 for the sum (x + 0 is x for every x but -0, and a sum from +0 is never -0).
 * Every output lane then takes each window position in row-major order with no bounds test,
 * as passes over rows of lanes (all strides 1: over the whole plane at once, at the padded
 * row pitch); AveragePool's divisor is a product of per-dim counts. */
typedef struct pool_job {
  const pool_state *s;
  const pool_plan *p;
  const uint16_t *x;
  uint16_t *y;
  int64_t *indices;
  int64_t spatial_mul[SP]; /* Indices: each input spatial dim's multiplier */
  int64_t padded[SP];      /* P[d] */
  int64_t *count[SP];      /* AveragePool: each dim's positions counted, per output index */
  float *scratch;          /* per task: chunk_planes padded planes, then the accumulators */
  size_t scratch_per_task;
  int64_t chunk_planes;    /* planes taken at once (all strides 1: in one run of lanes) */
  bool across;             /* MaxPool of small planes: across the planes (pool_chunk_across) */
} pool_job;

/* the max fold: a NaN stays (the first met), else a greater value replaces (the first of equal
 * values stays) */
static inline float max_fold(float a, float v) { return a == a && !(v <= a) ? v : a; }

ACTX_BF16_VECTORISED
static void max_pass(float *restrict acc, const float *restrict src, int64_t n, int64_t step) {
  if (step == 1)
    for (int64_t i = 0; i < n; i++) acc[i] = max_fold(acc[i], src[i]);
  else
    for (int64_t i = 0; i < n; i++) acc[i] = max_fold(acc[i], src[i * step]);
}

ACTX_BF16_VECTORISED
static void sum_pass(float *restrict acc, const float *restrict src, int64_t n, int64_t step) {
  if (step == 1)
    for (int64_t i = 0; i < n; i++) acc[i] = acc[i] + src[i];
  else
    for (int64_t i = 0; i < n; i++) acc[i] = acc[i] + src[i * step];
}

/* rows of n elements, src_pitch and dst_pitch apart: a plane's rows into the padded plane, and
 * back, each one function call for all the rows (SPPF's rows are 10 or 20 elements: a call or
 * a memcpy a row cost more than the pool's arithmetic) */
ACTX_BF16_VECTORISED
static void widen_rows(float *restrict dst, int64_t dst_pitch, const uint16_t *restrict src,
                       int64_t src_pitch, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; r++)
    for (int64_t i = 0; i < n; i++)
      dst[r * dst_pitch + i] = actx_bf16_to_f32(src[r * src_pitch + i]);
}

ACTX_BF16_VECTORISED
static void round_rows(uint16_t *restrict dst, int64_t dst_pitch, const float *restrict src,
                       int64_t src_pitch, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; r++)
    for (int64_t i = 0; i < n; i++)
      dst[r * dst_pitch + i] = actx_f32_to_bf16(src[r * src_pitch + i]);
}

ACTX_BF16_VECTORISED
static void fill_row(float *restrict dst, float v, int64_t n) {
  for (int64_t i = 0; i < n; i++) dst[i] = v;
}

/* y (out0 x out1 x out2) from the accumulators at the padded pitches, each divided first by
 * its window's count, c0[o0] · c1[o1] · c2[o2] as int64 then float (ORT) */
ACTX_BF16_VECTORISED
static void mean_plane(uint16_t *restrict y, const float *restrict acc, const int64_t *out,
                       int64_t P1, int64_t P2, int64_t *const *count) {
  const int64_t *c2 = count[2];
  for (int64_t o0 = 0; o0 < out[0]; o0++)
    for (int64_t o1 = 0; o1 < out[1]; o1++) {
      uint16_t *yr = y + (o0 * out[1] + o1) * out[2];
      const float *a = acc + (o0 * P1 + o1) * P2;
      const int64_t c01 = count[0][o0] * count[1][o1];
      /* a window with no position counted (all on pads: a dilated kernel) is 0, as ORT's */
      for (int64_t i = 0; i < out[2]; i++)
        yr[i] = c01 * c2[i] == 0 ? 0 : actx_f32_to_bf16(a[i] / (float)(c01 * c2[i]));
    }
}

/* Lanes of accumulators (one output row, or at the padded pitches every output of a run of
 * planes), window position by position. */
static void pool_lanes(const pool_job *job, float *acc, const float *plane, int64_t lanes,
                       int64_t step) {
  const pool_plan *p = job->p;
  const int64_t P1 = job->padded[1], P2 = job->padded[2];
  fill_row(acc, job->s->max ? -INFINITY : 0.0f, lanes);
  for (int64_t j0 = 0; j0 < p->kernel[0]; j0++)
    for (int64_t j1 = 0; j1 < p->kernel[1]; j1++)
      for (int64_t j2 = 0; j2 < p->kernel[2]; j2++) {
        const float *src =
            plane + (j0 * p->dilation[0] * P1 + j1 * p->dilation[1]) * P2 + j2 * p->dilation[2];
        if (job->s->max) max_pass(acc, src, lanes, step);
        else sum_pass(acc, src, lanes, step);
      }
}

/* The max of every lane at once (all strides 1) one kernel dimension at a time, innermost first:
 * 5 + 5 passes for a 5 x 5 window, not 25. The fold (the first NaN, else the first largest:
 * ties keep the earlier) picks the same element whichever way the window is grouped, as long as
 * the inner dimensions are folded first, so the bits are the window-by-window ones. Each fold
 * reads the previous one's lanes (the padded planes, buf, first) and writes another buffer:
 * tmp, or buf once nothing reads it, and the last writes acc. */
static void max_separable(const pool_job *job, float *acc, float *buf, float *tmp,
                          int64_t lanes) {
  const pool_plan *p = job->p;
  const int64_t P1 = job->padded[1], P2 = job->padded[2];
  const int64_t step0 = p->dilation[0] * P1 * P2, step1 = p->dilation[1] * P2;
  const int64_t n1 = lanes + (p->kernel[0] - 1) * step0; /* lanes the middle fold gives */
  const int64_t n2 = n1 + (p->kernel[1] - 1) * step1;    /* lanes the innermost fold gives */
  const float *inner = buf; /* a kernel of 1 there (2-D and 1-D pools): the planes themselves */
  if (p->kernel[2] > 1) {
    fill_row(tmp, -INFINITY, n2);
    for (int64_t j2 = 0; j2 < p->kernel[2]; j2++)
      max_pass(tmp, buf + j2 * p->dilation[2], n2, 1);
    inner = tmp;
  }
  float *middle = p->kernel[0] == 1 ? acc : inner == tmp ? buf : tmp;
  fill_row(middle, -INFINITY, n1);
  for (int64_t j1 = 0; j1 < p->kernel[1]; j1++) max_pass(middle, inner + j1 * step1, n1, 1);
  if (middle == acc) return;
  fill_row(acc, -INFINITY, lanes);
  for (int64_t j0 = 0; j0 < p->kernel[0]; j0++) max_pass(acc, middle + j0 * step0, lanes, 1);
}

/* Planes [nc, nc + planes), planes <= job->chunk_planes: each input row widened into its place
 * in the padded planes, the max computed over all the lanes, each output row rounded out of
 * them (widen_rows, round_rows: one call a plane's rows). */
static void pool_chunk(const pool_job *job, size_t task, int64_t nc, int64_t planes) {
  const pool_plan *p = job->p;
  const int64_t P0 = job->padded[0], P1 = job->padded[1], P2 = job->padded[2];
  const int64_t psize = P0 * P1 * P2, in_sp = p->in[0] * p->in[1] * p->in[2],
                out_sp = p->out[0] * p->out[1] * p->out[2];
  float *buf = job->scratch + job->scratch_per_task * task, *acc = buf + job->chunk_planes * psize,
        *tmp = acc + job->chunk_planes * psize;
  fill_row(buf, job->s->max ? -INFINITY : 0.0f, planes * psize);
  const int64_t n0 = p->in[0] < P0 - p->pad_b[0] ? p->in[0] : P0 - p->pad_b[0];
  const int64_t n1 = p->in[1] < P1 - p->pad_b[1] ? p->in[1] : P1 - p->pad_b[1];
  const int64_t n2 = p->in[2] < P2 - p->pad_b[2] ? p->in[2] : P2 - p->pad_b[2];
  const uint16_t *x = job->x + nc * in_sp;
  for (int64_t b = 0; b < planes; b++)
    for (int64_t q0 = 0; q0 < n0; q0++)
      widen_rows(buf + b * psize + ((q0 + p->pad_b[0]) * P1 + p->pad_b[1]) * P2 + p->pad_b[2],
                 P2, x + b * in_sp + q0 * p->in[1] * p->in[2], p->in[2], n1, n2);
  /* at the padded pitches, lane b·psize + (o0·P1 + o1)·P2 + o2 is output (nc + b, o0, o1, o2) */
  const int64_t lanes =
      (planes - 1) * psize + ((p->out[0] - 1) * P1 + p->out[1] - 1) * P2 + p->out[2];
  if (p->stride[0] == 1 && p->stride[1] == 1 && p->stride[2] == 1) {
    /* every lane at once; those between the outputs (past out[2] in a row, ...) are computed
     * and not used */
    if (job->s->max) max_separable(job, acc, buf, tmp, lanes);
    else pool_lanes(job, acc, buf, lanes, 1);
  } else {
    fill_row(acc, 0.0f, lanes); /* the lanes between the rows, rounded below and not used */
    for (int64_t b = 0; b < planes; b++)
      for (int64_t o0 = 0; o0 < p->out[0]; o0++)
        for (int64_t o1 = 0; o1 < p->out[1]; o1++)
          pool_lanes(job, acc + b * psize + (o0 * P1 + o1) * P2,
                     buf + b * psize + (o0 * p->stride[0] * P1 + o1 * p->stride[1]) * P2,
                     p->out[2], p->stride[2]);
  }
  uint16_t *y = job->y + nc * out_sp;
  if (!job->s->max) {
    for (int64_t b = 0; b < planes; b++)
      mean_plane(y + b * out_sp, acc + b * psize, p->out, P1, P2, job->count);
    return;
  }
  for (int64_t b = 0; b < planes; b++)
    for (int64_t o0 = 0; o0 < p->out[0]; o0++)
      round_rows(y + (b * p->out[0] + o0) * p->out[1] * p->out[2], p->out[2],
                 acc + b * psize + o0 * P1 * P2, P2, p->out[1], p->out[2]);
}

/* The window positions j inside the input along dim d for output o: [*lo, *hi). */
static void inside_range(const pool_plan *p, int d, int64_t o, int64_t *lo, int64_t *hi) {
  const int64_t start = o * p->stride[d] - p->pad_b[d], dil = p->dilation[d];
  int64_t l = start < 0 ? (-start + dil - 1) / dil : 0;
  int64_t h = p->in[d] > start ? (p->in[d] - start + dil - 1) / dil : 0;
  if (h > p->kernel[d]) h = p->kernel[d];
  if (l > h) l = h;
  *lo = l;
  *hi = h;
}

/* MaxPool with Indices, one plane, on the bfloat16 input: each window's inside positions in
 * row-major order (the bounds found once per output), the first NaN or the first largest. */
static void pool_plane_indices(const pool_job *job, int64_t nc) {
  const pool_plan *p = job->p;
  const int64_t in_sp = p->in[0] * p->in[1] * p->in[2];
  const uint16_t *x = job->x + nc * in_sp;
  int64_t oi = nc * p->out[0] * p->out[1] * p->out[2];
  for (int64_t o0 = 0; o0 < p->out[0]; o0++) {
    int64_t l0, h0;
    inside_range(p, 0, o0, &l0, &h0);
    for (int64_t o1 = 0; o1 < p->out[1]; o1++) {
      int64_t l1, h1;
      inside_range(p, 1, o1, &l1, &h1);
      for (int64_t o2 = 0; o2 < p->out[2]; o2++, oi++) {
        int64_t l2, h2;
        inside_range(p, 2, o2, &l2, &h2);
        float acc = -INFINITY;
        int64_t arg = -1;
        for (int64_t j0 = l0; j0 < h0; j0++) {
          const int64_t q0 = o0 * p->stride[0] - p->pad_b[0] + j0 * p->dilation[0];
          for (int64_t j1 = l1; j1 < h1; j1++) {
            const int64_t q1 = o1 * p->stride[1] - p->pad_b[1] + j1 * p->dilation[1];
            const int64_t row = (q0 * p->in[1] + q1) * p->in[2];
            for (int64_t j2 = l2; j2 < h2; j2++) {
              const int64_t off =
                  row + o2 * p->stride[2] - p->pad_b[2] + j2 * p->dilation[2];
              const float v = actx_bf16_to_f32(x[off]);
              if (v != v) {
                acc = v;
                arg = off;
                goto done;
              }
              if (arg < 0 || v > acc) {
                acc = v;
                arg = off;
              }
            }
          }
        }
      done:
        job->y[oi] = actx_f32_to_bf16(acc);
        int64_t idx = nc * in_sp;
        if (arg >= 0) {
          const int64_t q[SP] = {arg / (p->in[1] * p->in[2]), (arg / p->in[2]) % p->in[1],
                                 arg % p->in[2]};
          for (int d = 0; d < SP; d++) idx += q[d] * job->spatial_mul[d];
        }
        job->indices[oi] = idx;
      }
    }
  }
}

/* A global pool, one plane: the sum sequential, the max the first NaN or the first largest. */
static void pool_plane_global(const pool_job *job, int64_t nc) {
  const int64_t n = job->p->in[0];
  const uint16_t *x = n > 0 ? job->x + nc * n : job->x;
  float acc = job->s->max ? -INFINITY : 0.0f;
  if (job->s->max) {
    for (int64_t i = 0; i < n; i++) {
      const float v = actx_bf16_to_f32(x[i]);
      if (v != v) {
        acc = v;
        break;
      }
      if (v > acc) acc = v;
    }
  } else {
    for (int64_t i = 0; i < n; i++) acc += actx_bf16_to_f32(x[i]);
    acc /= (float)n;
  }
  job->y[nc] = actx_f32_to_bf16(acc);
}

/* MaxPool of small planes (SPPF's 10 x 10, where a plane's rows are too short for the passes
 * above to pay), across the planes: `planes` planes transposed to [position][plane] and widened
 * (xf), each output the fold over its window's inside positions in row-major order with the
 * planes as the lanes, rounded into yt [position][plane], transposed back. Skipping a position
 * outside the input is folding the padding's -inf, so the bits are pool_chunk's. */
ACTX_BF16_VECTORISED
static void max_across(const pool_plan *p, const float *restrict xf, int64_t planes,
                       float *restrict acc, uint16_t *restrict yt) {
  int64_t o = 0;
  for (int64_t o0 = 0; o0 < p->out[0]; o0++)
    for (int64_t o1 = 0; o1 < p->out[1]; o1++)
      for (int64_t o2 = 0; o2 < p->out[2]; o2++, o++) {
        int64_t lo[SP], hi[SP];
        inside_range(p, 0, o0, &lo[0], &hi[0]);
        inside_range(p, 1, o1, &lo[1], &hi[1]);
        inside_range(p, 2, o2, &lo[2], &hi[2]);
        for (int64_t c = 0; c < planes; c++) acc[c] = -INFINITY;
        for (int64_t j0 = lo[0]; j0 < hi[0]; j0++)
          for (int64_t j1 = lo[1]; j1 < hi[1]; j1++)
            for (int64_t j2 = lo[2]; j2 < hi[2]; j2++) {
              const int64_t q0 = o0 * p->stride[0] - p->pad_b[0] + j0 * p->dilation[0];
              const int64_t q1 = o1 * p->stride[1] - p->pad_b[1] + j1 * p->dilation[1];
              const int64_t q2 = o2 * p->stride[2] - p->pad_b[2] + j2 * p->dilation[2];
              const float *v = xf + ((q0 * p->in[1] + q1) * p->in[2] + q2) * planes;
              for (int64_t c = 0; c < planes; c++) acc[c] = max_fold(acc[c], v[c]);
            }
        for (int64_t c = 0; c < planes; c++) yt[o * planes + c] = actx_f32_to_bf16(acc[c]);
      }
}

static void pool_chunk_across(const pool_job *job, size_t task, int64_t nc, int64_t planes) {
  const pool_plan *p = job->p;
  const int64_t in_sp = p->in[0] * p->in[1] * p->in[2], out_sp = p->out[0] * p->out[1] * p->out[2];
  float *xf = job->scratch + job->scratch_per_task * task, *acc = xf + in_sp * job->chunk_planes;
  uint16_t *xt = (uint16_t *)(acc + job->chunk_planes), *yt = xt + in_sp * job->chunk_planes;
  actx_transpose16(job->x + nc * in_sp, (size_t)planes, (size_t)in_sp, (size_t)in_sp, xt,
                   (size_t)planes);
  widen_rows(xf, 0, xt, 0, 1, in_sp * planes);
  max_across(p, xf, planes, acc, yt);
  actx_transpose16(yt, (size_t)out_sp, (size_t)planes, (size_t)planes, job->y + nc * out_sp,
                   (size_t)out_sp);
}

static void pool_range(const void *ctx, size_t task, int64_t begin, int64_t end) {
  const pool_job *job = ctx;
  if (job->across) {
    for (int64_t nc = begin; nc < end; nc += job->chunk_planes)
      pool_chunk_across(job, task, nc,
                        end - nc < job->chunk_planes ? end - nc : job->chunk_planes);
    return;
  }
  if (!job->s->global && job->indices == NULL) {
    for (int64_t nc = begin; nc < end; nc += job->chunk_planes)
      pool_chunk(job, task, nc, end - nc < job->chunk_planes ? end - nc : job->chunk_planes);
    return;
  }
  for (int64_t nc = begin; nc < end; nc++) {
    if (job->s->global) pool_plane_global(job, nc);
    else pool_plane_indices(job, nc);
  }
}

#define POOL_MIN_WORK_PER_TASK 16384
/* a window position's speed, both paths, for actx_bf16_tasks's rule */
#define POOL_NS_PER_WORK 0.05
#define POOL_CHUNK_FLOATS 2048
/* The MaxPool across planes where it was measured faster (5 x 5 windows, AVX-512:
 * [128, 10, 10] 60 -> 25-31 us, [64, 20, 20] 93 -> 82-86 us; [16, 20, 20] and [16, 32, 32]
 * slower): planes of at most ACROSS_MAX_PLANE positions, at least ACROSS_MIN_PLANES of them,
 * taken in whole vectors of planes (ACROSS_LANES) of about ACROSS_CHUNK_ELEMENTS input
 * elements. */
#define ACROSS_MAX_PLANE 400
#define ACROSS_MIN_PLANES 32
#define ACROSS_LANES 16
#define ACROSS_CHUNK_ELEMENTS 65536
/* Window positions a task across planes: they take about 0.08 ns each, so SPPF's 320 Ki ran in
 * 24 us on one thread and 49-62 us split over two (waking the pool's thread with spinning off) */
#define ACROSS_MIN_WORK_PER_TASK (1 << 19)

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
  pool_job job = {.s = s, .p = &p, .x = in[0].data, .y = out[0].data,
                  .indices = want_indices ? out[1].data : NULL};
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
  /* across the planes: a MaxPool of planes too small for the passes, and enough of them */
  job.across = s->max && !s->global && !want_indices && in_sp <= ACROSS_MAX_PLANE &&
               p.nc >= ACROSS_MIN_PLANES;
  const size_t tasks = actx_bf16_tasks(
      par, work, p.nc, job.across ? ACROSS_MIN_WORK_PER_TASK : POOL_MIN_WORK_PER_TASK,
      POOL_NS_PER_WORK);
  int64_t *counts = NULL;
  if (job.across) {
    const int64_t out_sp = p.out[0] * p.out[1] * p.out[2];
    job.chunk_planes = ACROSS_CHUNK_ELEMENTS / in_sp / ACROSS_LANES * ACROSS_LANES;
    if (job.chunk_planes < ACROSS_LANES) job.chunk_planes = ACROSS_LANES;
    /* xf and acc (float32), xt and yt (bfloat16: in floats, rounded up) */
    job.scratch_per_task =
        (size_t)((in_sp + 1) * job.chunk_planes + (in_sp + out_sp + 1) * job.chunk_planes / 2 + 1);
    job.scratch = malloc(tasks * job.scratch_per_task * sizeof *job.scratch);
    if (job.scratch == NULL) return ACTX_ERROR_OUT_OF_MEMORY;
  } else if (!s->global && !want_indices) {
    int64_t plane = 1;
    for (int d = 0; d < SP; d++) {
      job.padded[d] = (p.out[d] - 1) * p.stride[d] + (p.kernel[d] - 1) * p.dilation[d] + 1;
      plane *= job.padded[d];
    }
    /* as many planes at once as fill POOL_CHUNK_FLOATS (a plane at least), then the
     * accumulators: pool_chunk's lanes, at most as many */
    job.chunk_planes = plane < POOL_CHUNK_FLOATS ? POOL_CHUNK_FLOATS / plane : 1;
    /* the padded planes, the accumulators, and max_separable's other buffer */
    job.scratch_per_task = (size_t)(3 * plane * job.chunk_planes);
    job.scratch = malloc(tasks * job.scratch_per_task * sizeof *job.scratch);
    counts = malloc((size_t)(p.out[0] + p.out[1] + p.out[2]) * sizeof *counts);
    if (job.scratch == NULL || counts == NULL) {
      free(job.scratch);
      free(counts);
      return ACTX_ERROR_OUT_OF_MEMORY;
    }
    for (int d = 0, at = 0; d < SP; at += (int)p.out[d], d++) {
      job.count[d] = counts + at;
      /* the positions counted: inside the input, or (count_include_pad) inside it and its
       * pads, never past the end pad */
      const int64_t lo = s->count_include_pad ? -p.pad_b[d] : 0,
                    hi = s->count_include_pad ? p.in[d] + p.pad_e[d] : p.in[d];
      for (int64_t o = 0; o < p.out[d]; o++) {
        int64_t c = 0;
        for (int64_t j = 0; j < p.kernel[d]; j++) {
          const int64_t q = o * p.stride[d] - p.pad_b[d] + j * p.dilation[d];
          c += q >= lo && q < hi;
        }
        job.count[d][o] = c;
      }
    }
  }
  actx_bf16_run_split(par, tasks, p.nc, pool_range, &job);
  free(job.scratch);
  free(counts);
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
