/* bf16_resize.c — Resize (opsets 13, 18, 19) on bfloat16: modes nearest and linear (N-linear
 * over every dim whose coordinates are not the identity, so bilinear on [N, C, H, W] with
 * scales [1, 1, s, s], trilinear, or 1-D).
 *
 * Inputs X, roi (ignored: only tf_crop_and_resize reads it, and that mode is not served),
 * scales (float32) or sizes (int64): exactly one, an empty tensor counting as absent. With
 * scales, out = floor(in · scale) (the product in float32, as ORT); with sizes, the scale used
 * in the coordinates is (float) out / (float) in. Opset 18's axes attribute: scales / sizes name
 * those axes only, the others keep scale 1.
 *
 * Coordinates are computed in float32 exactly as ONNX writes them (and ORT evaluates them):
 * half_pixel (default) (x + 0.5) / s - 0.5; half_pixel_symmetric (19) the same about the
 * centre; pytorch_half_pixel (0 when the output dim is 1); align_corners; asymmetric x / s;
 * tf_half_pixel_for_nn (opset 13 only) (x + 0.5) / s.
 * nearest: round_prefer_floor (default: half down), round_prefer_ceil (half away from zero),
 * floor, ceil; the index clamped into the input. linear: the coordinate c clamped to
 * [0, in - 1], corners lo = floor(c) and hi = lo + 1 (clamped), weights as ORT: w_lo = |c - hi|,
 * w_hi = |c - lo| (both 0.5 when lo = hi); y = Σ over corners of (Π weights, innermost dim
 * first) · x, corners in order of their bits (innermost dim the lowest bit), added sequentially
 * in float32, rounded once. A NaN or inf at any corner, even of weight 0, makes the result NaN
 * (0 · NaN), as ORT's float32 does.
 * Refused with a message: cubic, tf_crop_and_resize, antialias = 1, keep_aspect_ratio_policy
 * other than stretch. exclude_outside and cubic_coeff_a only concern cubic: ignored. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bf16_family.h"
#include "half.h"

typedef enum resize_coord {
  COORD_HALF_PIXEL,
  COORD_HALF_PIXEL_SYMMETRIC,
  COORD_PYTORCH_HALF_PIXEL,
  COORD_ALIGN_CORNERS,
  COORD_ASYMMETRIC,
  COORD_TF_HALF_PIXEL_FOR_NN,
} resize_coord;

typedef enum resize_nearest { NEAREST_PREFER_FLOOR, NEAREST_PREFER_CEIL, NEAREST_FLOOR,
                              NEAREST_CEIL } resize_nearest;

typedef struct resize_state {
  bool linear;
  resize_coord coord;
  resize_nearest nearest;
  size_t n_axes;
  int64_t axes[ACTX_BF16_MAX_RANK];
  bool has_axes;
} resize_state;

static actx_status resize_create(const actx_bf16_node *node, void **state, const char **why) {
  *state = NULL;
  const actx_bf16_attrs *a = &node->attrs;
  if (node->op != ACTX_BF16_OP_RESIZE) return actx_bf16_fail(why, "not a Resize");
  if (node->input_elems[0] != ACTX_ELEM_BF16)
    return actx_bf16_fail(why, "Resize input must be bfloat16");
  if (node->n_inputs > 2 && node->input_present[2] && node->input_elems[2] != ACTX_ELEM_F32)
    return actx_bf16_fail(why, "Resize scales must be float32");
  if (node->n_inputs > 3 && node->input_present[3] && node->input_elems[3] != ACTX_ELEM_I64)
    return actx_bf16_fail(why, "Resize sizes must be int64");
  resize_state s = {0};
  const char *mode = a->has_mode ? a->mode : "";
  if (mode[0] == '\0' || strcmp(mode, "nearest") == 0) s.linear = false;
  else if (strcmp(mode, "linear") == 0) s.linear = true;
  else if (strcmp(mode, "cubic") == 0)
    return actx_bf16_fail(why, "Resize mode cubic is not served in bfloat16");
  else return actx_bf16_fail(why, "Resize mode must be nearest, linear or cubic");
  const char *cm = a->has_coordinate_mode ? a->coordinate_mode : "";
  if (cm[0] == '\0' || strcmp(cm, "half_pixel") == 0) s.coord = COORD_HALF_PIXEL;
  else if (strcmp(cm, "half_pixel_symmetric") == 0 && node->since_version >= 19)
    s.coord = COORD_HALF_PIXEL_SYMMETRIC;
  else if (strcmp(cm, "pytorch_half_pixel") == 0) s.coord = COORD_PYTORCH_HALF_PIXEL;
  else if (strcmp(cm, "align_corners") == 0) s.coord = COORD_ALIGN_CORNERS;
  else if (strcmp(cm, "asymmetric") == 0) s.coord = COORD_ASYMMETRIC;
  else if (strcmp(cm, "tf_half_pixel_for_nn") == 0 && node->since_version < 18)
    s.coord = COORD_TF_HALF_PIXEL_FOR_NN;
  else if (strcmp(cm, "tf_crop_and_resize") == 0)
    return actx_bf16_fail(why, "Resize tf_crop_and_resize is not served in bfloat16");
  else return actx_bf16_fail(why, "Resize coordinate_transformation_mode not defined here");
  const char *nm = a->has_nearest_mode ? a->nearest_mode : "";
  if (nm[0] == '\0' || strcmp(nm, "round_prefer_floor") == 0) s.nearest = NEAREST_PREFER_FLOOR;
  else if (strcmp(nm, "round_prefer_ceil") == 0) s.nearest = NEAREST_PREFER_CEIL;
  else if (strcmp(nm, "floor") == 0) s.nearest = NEAREST_FLOOR;
  else if (strcmp(nm, "ceil") == 0) s.nearest = NEAREST_CEIL;
  else return actx_bf16_fail(why, "Resize nearest_mode must be round_prefer_floor, "
                                  "round_prefer_ceil, floor or ceil");
  if (a->has_antialias && a->antialias != 0)
    return actx_bf16_fail(why, "Resize antialias is not served in bfloat16");
  if (a->has_keep_aspect_ratio_policy && a->keep_aspect_ratio_policy[0] != '\0' &&
      strcmp(a->keep_aspect_ratio_policy, "stretch") != 0)
    return actx_bf16_fail(why, "Resize keep_aspect_ratio_policy other than stretch is not served");
  if (a->has_axes) {
    if (node->since_version < 18) return actx_bf16_fail(why, "Resize has no axes before 18");
    if (a->n_axes > ACTX_BF16_MAX_RANK) return actx_bf16_fail(why, "too many Resize axes");
    s.has_axes = true;
    s.n_axes = a->n_axes;
    memcpy(s.axes, a->axes, a->n_axes * sizeof a->axes[0]);
  }
  resize_state *p = malloc(sizeof *p);
  if (p == NULL) return ACTX_ERROR_OUT_OF_MEMORY;
  *p = s;
  *state = p;
  return ACTX_OK;
}

typedef struct resize_plan {
  actx_shape in, out;
  float scale[ACTX_BF16_MAX_RANK];
} resize_plan;

static bool present(const actx_tensor *in, size_t n_in, size_t i) {
  return i < n_in && in[i].elem != ACTX_ELEM_COUNT && actx_shape_elements(&in[i].shape) > 0;
}

static actx_status resize_plan_make(const resize_state *s, const actx_tensor *in, size_t n_in,
                                    resize_plan *p, const char **why) {
  if (n_in < 1 || in[0].elem != ACTX_ELEM_BF16)
    return actx_bf16_fail(why, "Resize input must be bfloat16");
  const actx_shape *x = &in[0].shape;
  const size_t r = x->rank;
  if (r < 1 || r > ACTX_BF16_MAX_RANK) return actx_bf16_fail(why, "Resize input rank 1 to 8");
  for (size_t d = 0; d < r; d++)
    if (x->dims[d] < 0) return actx_bf16_fail(why, "negative dimension");
  /* the axes scales / sizes name */
  int64_t axes[ACTX_BF16_MAX_RANK];
  size_t n_axes = r;
  bool seen[ACTX_BF16_MAX_RANK] = {false};
  if (s->has_axes) {
    n_axes = s->n_axes;
    for (size_t i = 0; i < n_axes; i++) {
      int64_t ax = s->axes[i];
      if (ax < -(int64_t)r || ax >= (int64_t)r)
        return actx_bf16_fail(why, "Resize axis out of range");
      if (ax < 0) ax += (int64_t)r;
      if (seen[ax]) return actx_bf16_fail(why, "Resize axis repeated");
      seen[ax] = true;
      axes[i] = ax;
    }
  } else {
    for (size_t i = 0; i < r; i++) axes[i] = (int64_t)i;
  }
  const bool has_scales = present(in, n_in, 2), has_sizes = present(in, n_in, 3);
  if (has_scales == has_sizes)
    return actx_bf16_fail(why, "Resize needs exactly one of scales and sizes");
  const actx_tensor *t = has_scales ? &in[2] : &in[3];
  if (t->elem != (has_scales ? ACTX_ELEM_F32 : ACTX_ELEM_I64))
    return actx_bf16_fail(why, has_scales ? "Resize scales must be float32"
                                          : "Resize sizes must be int64");
  if (t->shape.rank != 1 || t->shape.dims[0] != (int64_t)n_axes)
    return actx_bf16_fail(why, "Resize scales / sizes must have one value per axis");
  if (t->data == NULL) return actx_bf16_fail(why, "Resize scales / sizes have no data");
  p->in = *x;
  p->out = *x;
  for (size_t d = 0; d < r; d++) p->scale[d] = 1.0f;
  for (size_t i = 0; i < n_axes; i++) {
    const size_t d = (size_t)axes[i];
    const int64_t in_d = x->dims[d];
    if (has_scales) {
      const float sc = ((const float *)t->data)[i];
      if (!(sc > 0.0f) || isinf(sc))
        return actx_bf16_fail(why, "Resize scales must be finite and > 0");
      const float o = sc * (float)in_d;
      if (!(o < 9.2e18f)) return actx_bf16_fail(why, "Resize output too large");
      p->out.dims[d] = (int64_t)o;
      p->scale[d] = sc;
    } else {
      const int64_t o = ((const int64_t *)t->data)[i];
      if (o < 0) return actx_bf16_fail(why, "Resize sizes must be >= 0");
      p->out.dims[d] = o;
      p->scale[d] = in_d > 0 ? (float)o / (float)in_d : 1.0f;
    }
    if (in_d == 0 && p->out.dims[d] > 0)
      return actx_bf16_fail(why, "Resize cannot fill a dim from an empty one");
  }
  return ACTX_OK;
}

static actx_status resize_shapes(const void *state, const actx_tensor *in, size_t n_in,
                                 actx_tensor *out, size_t n_out, const char **why) {
  resize_plan p;
  const actx_status st = resize_plan_make(state, in, n_in, &p, why);
  if (st != ACTX_OK) return st;
  if (n_out < 1) return actx_bf16_fail(why, "no output");
  out[0] = (actx_tensor){.elem = ACTX_ELEM_BF16, .shape = p.out};
  return ACTX_OK;
}

/* The input coordinate of output coordinate x along a dim, in float32 as ONNX writes it. */
static float resize_coordinate(resize_coord c, float x, float s, int64_t len_out, int64_t len_in) {
  switch (c) {
  case COORD_HALF_PIXEL: return (x + 0.5f) / s - 0.5f;
  case COORD_HALF_PIXEL_SYMMETRIC: {
    const float adjustment = (float)len_out / (s * (float)len_in);
    const float center = (float)len_in / 2.0f;
    const float offset = center * (1.0f - adjustment);
    return offset + (x + 0.5f) / s - 0.5f;
  }
  case COORD_PYTORCH_HALF_PIXEL: return len_out > 1 ? (x + 0.5f) / s - 0.5f : 0.0f;
  case COORD_ALIGN_CORNERS:
    return len_out == 1 ? 0.0f : x * (float)(len_in - 1) / (float)(len_out - 1);
  case COORD_ASYMMETRIC: return x / s;
  case COORD_TF_HALF_PIXEL_FOR_NN: return (x + 0.5f) / s;
  }
  return 0.0f;
}

static int64_t resize_nearest_index(resize_nearest m, float c, int64_t len_in) {
  float r;
  switch (m) {
  case NEAREST_PREFER_FLOOR: r = c == floorf(c) + 0.5f ? floorf(c) : roundf(c); break;
  case NEAREST_PREFER_CEIL: r = roundf(c); break;
  case NEAREST_FLOOR: r = floorf(c); break;
  default: r = ceilf(c); break;
  }
  if (!(r >= 0.0f)) return 0;
  if (r >= (float)(len_in - 1)) return len_in - 1;
  return (int64_t)r;
}

/* Per output dim and output coordinate: the two input indices and their weights (nearest: one
 * index, weight 1; a dim whose map is the identity has lo = hi = the coordinate). */
typedef struct resize_axis {
  int64_t *lo, *hi;
  float *w_lo, *w_hi;
} resize_axis;

/* How the innermost dim's nearest indices map an input row to an output row: a copy, each
 * input element repeated `factor` times (an integer upsampling), or any other table. */
typedef enum resize_row_kind { ROW_COPY, ROW_REPEAT, ROW_GATHER } resize_row_kind;

typedef struct resize_job {
  const resize_state *s;
  const resize_plan *p;
  resize_axis ax[ACTX_BF16_MAX_RANK];
  int64_t in_stride[ACTX_BF16_MAX_RANK];
  size_t interp[ACTX_BF16_MAX_RANK], n_interp; /* the interpolated dims, innermost first */
  int64_t row_len;                             /* the output's innermost dim */
  resize_row_kind row_kind;
  int64_t factor; /* ROW_REPEAT's */
  float *scratch; /* per task: 2 · row_len floats (linear) */
  const uint16_t *x;
  uint16_t *y;
} resize_job;

ACTX_BF16_VECTORISED
static void row_gather(uint16_t *restrict y, const uint16_t *restrict x,
                       const int64_t *restrict idx, int64_t n) {
  for (int64_t o = 0; o < n; o++) y[o] = x[idx[o]];
}

ACTX_BF16_VECTORISED
static void row_repeat2(uint16_t *restrict y, const uint16_t *restrict x, int64_t n_in) {
  for (int64_t i = 0; i < n_in; i++) {
    y[2 * i] = x[i];
    y[2 * i + 1] = x[i];
  }
}

static void row_repeat(uint16_t *restrict y, const uint16_t *restrict x, int64_t n_in,
                       int64_t factor) {
  if (factor == 2) {
    row_repeat2(y, x, n_in);
    return;
  }
  for (int64_t i = 0; i < n_in; i++)
    for (int64_t t = 0; t < factor; t++) y[i * factor + t] = x[i];
}

/* w[o] = (first ? first[o] : 1) · ws[0] · ws[1] ..., multiplied in that order */
ACTX_BF16_VECTORISED
static void corner_weights(float *restrict w, const float *restrict first, int64_t n) {
  if (first != NULL)
    for (int64_t o = 0; o < n; o++) w[o] = first[o];
  else
    for (int64_t o = 0; o < n; o++) w[o] = 1.0f;
}

ACTX_BF16_VECTORISED
static void scale_row(float *restrict w, float ws, int64_t n) {
  for (int64_t o = 0; o < n; o++) w[o] *= ws;
}

/* acc[o] += w[o] · x[idx[o]] */
ACTX_BF16_VECTORISED
static void corner_accumulate(float *restrict acc, const float *restrict w,
                              const uint16_t *restrict x, const int64_t *restrict idx,
                              int64_t n) {
  for (int64_t o = 0; o < n; o++) acc[o] += w[o] * actx_bf16_to_f32(x[idx[o]]);
}

ACTX_BF16_VECTORISED
static void row_round(uint16_t *restrict y, const float *restrict acc, int64_t n) {
  for (int64_t o = 0; o < n; o++) y[o] = actx_f32_to_bf16(acc[o]);
}

/* Output rows [begin, end) (every dim but the innermost): each row's input row found by an
 * odometer over the outer coordinates (no division per element); a nearest row whose input row
 * is the previous row's is that row copied. */
static void resize_range(const void *ctx, size_t task, int64_t begin, int64_t end) {
  const resize_job *job = ctx;
  const resize_plan *p = job->p;
  const size_t r = p->in.rank, last = r - 1;
  const int64_t len = job->row_len;
  const resize_axis *in_ax = &job->ax[last];
  int64_t coord[ACTX_BF16_MAX_RANK] = {0};
  for (int64_t rem = begin, d = (int64_t)last; d-- > 0;) {
    coord[d] = rem % p->out.dims[d];
    rem /= p->out.dims[d];
  }
  const bool linear = job->s->linear && job->n_interp > 0;
  const bool inner_interp = linear && job->interp[0] == last;
  /* a linear run's two rows of scratch a task (a nearest run has none) */
  float *acc = job->scratch != NULL ? job->scratch + 2 * (size_t)len * task : NULL;
  float *w = acc != NULL ? acc + len : NULL;
  int64_t prev_off = -1;
  for (int64_t row = begin; row < end; row++) {
    int64_t off = 0;
    for (size_t d = 0; d < last; d++) off += job->ax[d].lo[coord[d]] * job->in_stride[d];
    uint16_t *y = job->y + row * len;
    const uint16_t *x = job->x + off;
    if (!linear) {
      if (off == prev_off) memcpy(y, y - len, (size_t)len * sizeof *y);
      else if (job->row_kind == ROW_COPY) memcpy(y, x, (size_t)len * sizeof *y);
      else if (job->row_kind == ROW_REPEAT) row_repeat(y, x, len / job->factor, job->factor);
      else row_gather(y, x, in_ax->lo, len);
      prev_off = off;
    } else {
      /* corners: bit j of c picks hi along interp[j]; off holds lo everywhere */
      memset(acc, 0, (size_t)len * sizeof *acc);
      for (unsigned c = 0; c < (1u << job->n_interp); c++) {
        int64_t coff = off;
        const bool hi_inner = inner_interp && (c & 1u);
        corner_weights(w, inner_interp ? (hi_inner ? in_ax->w_hi : in_ax->w_lo) : NULL, len);
        for (size_t j = inner_interp ? 1 : 0; j < job->n_interp; j++) {
          const size_t d = job->interp[j];
          const resize_axis *a = &job->ax[d];
          if (c & (1u << j)) {
            scale_row(w, a->w_hi[coord[d]], len);
            coff += (a->hi[coord[d]] - a->lo[coord[d]]) * job->in_stride[d];
          } else {
            scale_row(w, a->w_lo[coord[d]], len);
          }
        }
        corner_accumulate(acc, w, job->x + coff, hi_inner ? in_ax->hi : in_ax->lo, len);
      }
      row_round(y, acc, len);
    }
    for (size_t d = last; d-- > 0;) {
      if (++coord[d] < p->out.dims[d]) break;
      coord[d] = 0;
    }
  }
}

#define RESIZE_MIN_ELEMENTS_PER_TASK 16384
#define RESIZE_NS_PER_ELEMENT 0.05

static actx_status resize_run(const void *state, const actx_tensor *in, size_t n_in,
                              actx_tensor *out, size_t n_out, const actx_parallel *par,
                              const char **why) {
  const resize_state *s = state;
  resize_plan p;
  actx_status st = resize_plan_make(s, in, n_in, &p, why);
  if (st != ACTX_OK) return st;
  if (n_out < 1 || out[0].elem != ACTX_ELEM_BF16 || out[0].shape.rank != p.out.rank ||
      memcmp(out[0].shape.dims, p.out.dims, p.out.rank * sizeof(int64_t)) != 0)
    return actx_bf16_fail(why, "Resize output is not the shape its inputs give");
  const int64_t n = actx_shape_elements(&p.out);
  if (n == 0) return ACTX_OK;
  if (in[0].data == NULL || out[0].data == NULL)
    return actx_bf16_fail(why, "Resize tensor has no data");
  const size_t r = p.in.rank;
  resize_job job = {.s = s, .p = &p, .x = in[0].data, .y = out[0].data};
  job.row_len = p.out.dims[r - 1];
  const int64_t rows = n / job.row_len;
  int64_t total = 0;
  for (size_t d = 0; d < r; d++) total += p.out.dims[d];
  int64_t *ibuf = malloc((size_t)total * 2 * sizeof(int64_t));
  float *wbuf = malloc((size_t)total * 2 * sizeof(float));
  if (ibuf == NULL || wbuf == NULL) {
    free(ibuf);
    free(wbuf);
    return ACTX_ERROR_OUT_OF_MEMORY;
  }
  int64_t stride = 1, at = 0;
  for (size_t d = r; d-- > 0;) {
    job.in_stride[d] = stride;
    stride *= p.in.dims[d];
  }
  for (size_t d = 0; d < r; d++) {
    resize_axis *a = &job.ax[d];
    const int64_t lo_n = p.out.dims[d], li = p.in.dims[d];
    a->lo = ibuf + 2 * at;
    a->hi = a->lo + lo_n;
    a->w_lo = wbuf + 2 * at;
    a->w_hi = a->w_lo + lo_n;
    at += lo_n;
    bool identity = true;
    for (int64_t i = 0; i < lo_n; i++) {
      const float c = resize_coordinate(s->coord, (float)i, p.scale[d], lo_n, li);
      if (!s->linear) {
        a->lo[i] = a->hi[i] = resize_nearest_index(s->nearest, c, li);
        a->w_lo[i] = 1.0f;
        a->w_hi[i] = 0.0f;
        identity &= a->lo[i] == i;
        continue;
      }
      const float cc = c < 0.0f ? 0.0f : c > (float)(li - 1) ? (float)(li - 1) : c;
      const int64_t lo = (int64_t)cc < li - 1 ? (int64_t)cc : li - 1;
      const int64_t hi = lo + 1 < li ? lo + 1 : li - 1;
      a->lo[i] = lo;
      a->hi[i] = hi;
      if (lo == hi) {
        a->w_lo[i] = a->w_hi[i] = 0.5f;
      } else {
        a->w_lo[i] = fabsf(cc - (float)hi);
        a->w_hi[i] = fabsf(cc - (float)lo);
      }
      identity &= lo_n == li && cc == (float)i;
    }
    if (identity) /* not interpolated: the coordinate itself (lo is already it when nearest) */
      for (int64_t i = 0; i < lo_n; i++) a->lo[i] = a->hi[i] = i;
    if (!identity && s->linear) job.interp[job.n_interp++] = d;
  }
  /* innermost first */
  for (size_t i = 0; i < job.n_interp / 2; i++) {
    const size_t t = job.interp[i];
    job.interp[i] = job.interp[job.n_interp - 1 - i];
    job.interp[job.n_interp - 1 - i] = t;
  }
  if (job.n_interp > 16) {
    free(ibuf);
    free(wbuf);
    return actx_bf16_fail(why, "Resize linear over more than 16 dims");
  }
  /* the innermost dim's row map, for the nearest rows */
  const int64_t li = p.in.dims[r - 1], *lo = job.ax[r - 1].lo;
  job.factor = li > 0 && job.row_len % li == 0 ? job.row_len / li : 0;
  bool copy = job.row_len == li, repeat = job.factor > 0;
  for (int64_t i = 0; i < job.row_len && (copy || repeat); i++) {
    copy &= lo[i] == i;
    repeat &= lo[i] == i / job.factor;
  }
  job.row_kind = copy ? ROW_COPY : repeat ? ROW_REPEAT : ROW_GATHER;
  const size_t tasks = actx_bf16_tasks(par, n, rows, RESIZE_MIN_ELEMENTS_PER_TASK,
                                       RESIZE_NS_PER_ELEMENT);
  float *scratch = NULL;
  if (s->linear && job.n_interp > 0) {
    scratch = malloc(tasks * 2 * (size_t)job.row_len * sizeof *scratch);
    if (scratch == NULL) {
      free(ibuf);
      free(wbuf);
      return ACTX_ERROR_OUT_OF_MEMORY;
    }
  }
  job.scratch = scratch;
  actx_bf16_run_split(par, tasks, rows, resize_range, &job);
  free(scratch);
  free(ibuf);
  free(wbuf);
  return ACTX_OK;
}

static void resize_destroy(void *state) { free(state); }

const actx_bf16_family actx_bf16_family_resize = {
    .create = resize_create,
    .pack = NULL,
    .shapes = resize_shapes,
    .run = resize_run,
    .destroy = resize_destroy,
};
