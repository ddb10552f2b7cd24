/* The layout family: Expand, Tile, Pad on bfloat16 tensors. Byte movers: every output element is
 * an input element's bits (or Pad's constant's), copied as they are (a signalling NaN stays
 * one; nothing is rounded).
 *
 * Expand: the output shape is the numpy broadcast of the input's shape and the shape input
 *         (int64, 1-D, no negative value), ONNX Expand's bidirectional rule; a walk with the
 *         input's broadcast strides.
 * Tile:   repeats (int64, 1-D, one per axis, none negative); the walk of the interleaved view
 *         [r0, d0, r1, d1, ...] with strides [0, s0, 0, s1, ...].
 * Pad:    pads (int64, 1-D, begins then ends, 2 per axis, or per axis of the axes input from
 *         Pad-18 on: int64, 1-D, in [-rank, rank), no repeats), constant_value (bfloat16, one
 *         element; absent: +0), mode constant / reflect / edge / wrap (wrap from Pad-19).
 *         Negative pads crop first (as ORT does), then the positive ones pad what is left, in the
 *         mode: edge repeats the border, reflect mirrors without repeating it (period 2(n - 1),
 *         so a pad longer than the axis keeps reflecting, as numpy.pad does; an axis of 1 repeats
 *         its one element), wrap repeats the axis periodically. An axis left empty by the crop
 *         can only be padded with the constant. */
#include <stdlib.h>
#include <string.h>

#include "bf16_elementwise.h"

typedef enum pad_mode { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP } pad_mode;

typedef struct layout_state {
  actx_bf16_op op;
  pad_mode mode;
  bool has_axes_input; /* Pad-18+: input 3 present */
} layout_state;

static actx_status layout_create(const actx_bf16_node *node, void **out, const char **why) {
  layout_state s = {.op = node->op, .mode = PAD_CONSTANT};
  switch (node->op) {
    case ACTX_BF16_OP_EXPAND:
    case ACTX_BF16_OP_TILE:
      if (node->input_elems[0] != ACTX_ELEM_BF16)
        return actx_bf16_fail(why, "an input is not bfloat16");
      if (node->input_elems[1] != ACTX_ELEM_I64)
        return actx_bf16_fail(why, node->op == ACTX_BF16_OP_TILE ? "Tile's repeats are not int64"
                                                                  : "Expand's shape is not int64");
      break;
    case ACTX_BF16_OP_PAD: {
      if (node->input_elems[0] != ACTX_ELEM_BF16)
        return actx_bf16_fail(why, "an input is not bfloat16");
      if (node->input_elems[1] != ACTX_ELEM_I64)
        return actx_bf16_fail(why, "Pad's pads are not int64");
      if (node->n_inputs > 2 && node->input_present[2] && node->input_elems[2] != ACTX_ELEM_BF16)
        return actx_bf16_fail(why, "Pad's constant_value is not bfloat16");
      if (node->n_inputs > 3 && node->input_present[3]) {
        if (node->since_version < 18)
          return actx_bf16_fail(why, "Pad has an axes input from Pad-18 on");
        if (node->input_elems[3] != ACTX_ELEM_I64)
          return actx_bf16_fail(why, "Pad's axes are not int64");
        s.has_axes_input = true;
      }
      const char *mode = node->attrs.has_mode ? node->attrs.mode : "constant";
      if (strcmp(mode, "constant") == 0) s.mode = PAD_CONSTANT;
      else if (strcmp(mode, "reflect") == 0) s.mode = PAD_REFLECT;
      else if (strcmp(mode, "edge") == 0) s.mode = PAD_EDGE;
      else if (strcmp(mode, "wrap") == 0 && node->since_version >= 19) s.mode = PAD_WRAP;
      else if (strcmp(mode, "wrap") == 0) return actx_bf16_fail(why, "Pad's mode wrap is Pad-19's");
      else return actx_bf16_fail(why, "Pad's mode must be constant, reflect, edge or wrap");
      break;
    }
    default: return actx_bf16_fail(why, "not a layout operator");
  }
  layout_state *p = malloc(sizeof *p);
  if (p == NULL) return ACTX_ERROR_OUT_OF_MEMORY;
  *p = s;
  *out = p;
  return ACTX_OK;
}

static void layout_destroy(void *state) { free(state); }

/* An int64 1-D input's values (at most max of them), checked. */
static actx_status read_i64_list(const actx_tensor *t, size_t max, int64_t *values, size_t *n,
                                 const char *what_too_long, const char **why) {
  const actx_status st = actx_bf16_check_tensor(t, ACTX_ELEM_I64, true, why);
  if (st != ACTX_OK) return st;
  if (t->shape.rank != 1)
    return actx_bf16_fail(why, "a shape, repeats, pads or axes input is not 1-D");
  if (t->shape.dims[0] > (int64_t)max) return actx_bf16_fail(why, what_too_long);
  *n = (size_t)t->shape.dims[0];
  for (size_t i = 0; i < *n; i++) values[i] = actx_ld_i64((const unsigned char *)t->data + 8 * i);
  return ACTX_OK;
}

/* Pad's per-axis begin and end pads, from pads and (Pad-18+) axes. */
static actx_status pad_amounts(const layout_state *s, const actx_tensor *in, size_t n_in,
                               int64_t *begin, int64_t *end, const char **why) {
  const size_t rank = in[0].shape.rank;
  int64_t pads[2 * ACTX_BF16_MAX_RANK], axes[ACTX_BF16_MAX_RANK];
  size_t n_pads, n_axes = rank;
  actx_status st = read_i64_list(&in[1], 2 * ACTX_BF16_MAX_RANK, pads, &n_pads,
                                 "Pad's pads must have 2 values an axis", why);
  if (st != ACTX_OK) return st;
  const bool axes_given = s->has_axes_input && n_in > 3 && in[3].elem != ACTX_ELEM_COUNT;
  if (axes_given) {
    st = read_i64_list(&in[3], ACTX_BF16_MAX_RANK, axes, &n_axes, "Pad's axes repeat an axis",
                       why);
    if (st != ACTX_OK) return st;
  } else {
    for (size_t i = 0; i < rank; i++) axes[i] = (int64_t)i;
  }
  if (n_pads != 2 * n_axes) return actx_bf16_fail(why, "Pad's pads must have 2 values an axis");
  for (size_t d = 0; d < rank; d++) begin[d] = end[d] = 0;
  bool seen[ACTX_BF16_MAX_RANK] = {false};
  for (size_t i = 0; i < n_axes; i++) {
    int64_t a = axes[i];
    if (a < -(int64_t)rank || a >= (int64_t)rank)
      return actx_bf16_fail(why, "Pad's axes are out of range");
    if (a < 0) a += (int64_t)rank;
    if (seen[a]) return actx_bf16_fail(why, "Pad's axes repeat an axis");
    seen[a] = true;
    begin[a] = pads[i];
    end[a] = pads[i + n_axes];
  }
  return ACTX_OK;
}

/* Tile's and Expand's output shapes; Pad's, with its amounts. */
static actx_status layout_shape(const layout_state *s, const actx_tensor *in, size_t n_in,
                                actx_shape *shape, int64_t *begin, int64_t *end,
                                const char **why) {
  const actx_shape *x = &in[0].shape;
  if (n_in < 2) return actx_bf16_fail(why, "wrong number of inputs or outputs");
  actx_status st = actx_bf16_check_tensor(&in[0], ACTX_ELEM_BF16, false, why);
  if (st != ACTX_OK) return st;
  int64_t v[2 * ACTX_BF16_MAX_RANK];
  size_t n;
  switch (s->op) {
    case ACTX_BF16_OP_EXPAND: {
      if (n_in != 2) return actx_bf16_fail(why, "wrong number of inputs or outputs");
      st = read_i64_list(&in[1], ACTX_BF16_MAX_RANK, v, &n, "Expand's shape has more than 8 dims",
                         why);
      if (st != ACTX_OK) return st;
      actx_shape target = {.rank = n};
      for (size_t i = 0; i < n; i++) {
        if (v[i] < 0) return actx_bf16_fail(why, "Expand's shape has a negative dimension");
        target.dims[i] = v[i];
      }
      if (!actx_shape_broadcast(x, &target, shape))
        return actx_bf16_fail(why, "Expand's shape does not broadcast with the input's");
      break;
    }
    case ACTX_BF16_OP_TILE: {
      if (n_in != 2) return actx_bf16_fail(why, "wrong number of inputs or outputs");
      st = read_i64_list(&in[1], ACTX_BF16_MAX_RANK, v, &n,
                         "Tile's repeats must have one value an axis", why);
      if (st != ACTX_OK) return st;
      if (n != x->rank) return actx_bf16_fail(why, "Tile's repeats must have one value an axis");
      shape->rank = x->rank;
      for (size_t i = 0; i < n; i++) {
        if (v[i] < 0) return actx_bf16_fail(why, "Tile's repeats are negative");
        if (v[i] != 0 && x->dims[i] > INT64_MAX / v[i])
          return actx_bf16_fail(why, "the output is too large");
        shape->dims[i] = x->dims[i] * v[i];
      }
      break;
    }
    default: { /* Pad */
      if (n_in > 4) return actx_bf16_fail(why, "wrong number of inputs or outputs");
      st = pad_amounts(s, in, n_in, begin, end, why);
      if (st != ACTX_OK) return st;
      if (n_in > 2 && in[2].elem != ACTX_ELEM_COUNT) {
        if ((st = actx_bf16_check_tensor(&in[2], ACTX_ELEM_BF16, false, why)) != ACTX_OK)
          return st;
        if (actx_shape_elements(&in[2].shape) != 1)
          return actx_bf16_fail(why, "Pad's constant_value must be one value");
      }
      shape->rank = x->rank;
      for (size_t d = 0; d < x->rank; d++) {
        const int64_t lim = (int64_t)1 << 48;
        if (begin[d] < -lim || begin[d] > lim || end[d] < -lim || end[d] > lim)
          return actx_bf16_fail(why, "the output is too large");
        const int64_t kept = x->dims[d] + (begin[d] < 0 ? begin[d] : 0) + (end[d] < 0 ? end[d] : 0);
        if (kept < 0) return actx_bf16_fail(why, "Pad's negative pads crop more than the axis has");
        shape->dims[d] = x->dims[d] + begin[d] + end[d];
        if (kept == 0 && shape->dims[d] > 0 && s->mode != PAD_CONSTANT)
          return actx_bf16_fail(why, "Pad can extend an empty axis only with a constant");
      }
      break;
    }
  }
  int64_t total;
  if (!actx_dims_elements(shape->rank, shape->dims, &total))
    return actx_bf16_fail(why, "the output is too large");
  return ACTX_OK;
}

static actx_status layout_shapes(const void *state, const actx_tensor *in, size_t n_in,
                                 actx_tensor *out, size_t n_out, const char **why) {
  if (n_out != 1) return actx_bf16_fail(why, "wrong number of inputs or outputs");
  int64_t begin[ACTX_BF16_MAX_RANK], end[ACTX_BF16_MAX_RANK];
  out[0].elem = ACTX_ELEM_BF16;
  return layout_shape(state, in, n_in, &out[0].shape, begin, end, why);
}

static void copy_piece(const void *ctx, const unsigned char *const *in, const int64_t *step,
                       unsigned char *out, size_t n) {
  (void)ctx;
  if (step[0]) {
    memmove(out, in[0], 2 * n);
    return;
  }
  for (size_t i = 0; i < n; i++) memcpy(out + 2 * i, in[0], 2);
}

/* Pad: for each axis, the input index of each output index (-1: the constant). */
typedef struct pad_job {
  size_t rank;
  int64_t out_dims[ACTX_BF16_MAX_RANK], in_strides[ACTX_BF16_MAX_RANK];
  int64_t *map[ACTX_BF16_MAX_RANK];
  const unsigned char *in;
  unsigned char *out;
  uint16_t constant;
  int64_t rows, rows_per_task;
} pad_job;

static int64_t pad_source(pad_mode mode, int64_t o, int64_t begin, int64_t lo, int64_t kept) {
  int64_t i = o - (begin > 0 ? begin : 0); /* in the cropped axis [lo, lo + kept) */
  if (i >= 0 && i < kept) return lo + i;
  switch (mode) {
    case PAD_EDGE: return lo + (i < 0 ? 0 : kept - 1);
    case PAD_WRAP: return lo + ((i % kept) + kept) % kept;
    case PAD_REFLECT: {
      if (kept == 1) return lo;
      const int64_t m = 2 * (kept - 1), j = ((i % m) + m) % m;
      return lo + (j < kept ? j : m - j);
    }
    default: return -1;
  }
}

static void pad_rows(const pad_job *j, int64_t first, int64_t last) {
  const size_t inner = j->rank - 1;
  const int64_t width = j->out_dims[inner];
  for (int64_t row = first; row < last; row++) {
    int64_t rest = row, off = 0;
    bool constant = false;
    for (size_t d = inner; d-- > 0;) {
      const int64_t o = rest % j->out_dims[d];
      rest /= j->out_dims[d];
      const int64_t src = j->map[d][o];
      if (src < 0) constant = true;
      off += src * j->in_strides[d];
    }
    unsigned char *y = j->out + 2 * row * width;
    for (int64_t o = 0; o < width; o++) {
      const int64_t src = constant ? -1 : j->map[inner][o];
      if (src < 0) actx_st_u16(y + 2 * o, j->constant);
      else memcpy(y + 2 * o, j->in + 2 * (off + src), 2);
    }
  }
}

static void pad_task(void *ctx, size_t task) {
  const pad_job *j = ctx;
  const int64_t first = (int64_t)task * j->rows_per_task;
  const int64_t last = first + j->rows_per_task < j->rows ? first + j->rows_per_task : j->rows;
  pad_rows(j, first, last);
}

static actx_status pad_run(const layout_state *s, const actx_tensor *in, size_t n_in,
                           const actx_shape *shape, const int64_t *begin, const int64_t *end,
                           unsigned char *out, const actx_parallel *par) {
  const actx_shape *x = &in[0].shape;
  pad_job j = {.rank = x->rank > 0 ? x->rank : 1, .in = in[0].data, .out = out};
  if (n_in > 2 && in[2].elem != ACTX_ELEM_COUNT) j.constant = actx_ld_u16(in[2].data);
  /* rank 0: one axis of one element, no pads */
  int64_t sum = 0;
  for (size_t d = 0; d < j.rank; d++) sum += x->rank > 0 ? shape->dims[d] : 1;
  int64_t *maps = malloc((size_t)(sum > 0 ? sum : 1) * sizeof *maps);
  if (maps == NULL) return ACTX_ERROR_OUT_OF_MEMORY;
  int64_t stride = 1, at = 0;
  for (size_t d = j.rank; d-- > 0;) {
    const int64_t in_dim = x->rank > 0 ? x->dims[d] : 1;
    const int64_t b = x->rank > 0 ? begin[d] : 0, e = x->rank > 0 ? end[d] : 0;
    j.out_dims[d] = x->rank > 0 ? shape->dims[d] : 1;
    j.in_strides[d] = stride;
    stride *= in_dim;
    const int64_t lo = b < 0 ? -b : 0, kept = in_dim + (b < 0 ? b : 0) + (e < 0 ? e : 0);
    j.map[d] = maps + at;
    at += j.out_dims[d];
    for (int64_t o = 0; o < j.out_dims[d]; o++) j.map[d][o] = pad_source(s->mode, o, b, lo, kept);
  }
  int64_t total = 1;
  for (size_t d = 0; d < j.rank; d++) total *= j.out_dims[d];
  j.rows = j.out_dims[j.rank - 1] > 0 ? total / j.out_dims[j.rank - 1] : 0;
  const int64_t tasks = (int64_t)actx_bf16_tasks(par, total, j.rows, ACTX_WALK_MIN_CHUNK,
                                                  ACTX_WALK_NS_MOVE);
  if (tasks <= 1) {
    pad_rows(&j, 0, j.rows);
  } else {
    j.rows_per_task = (j.rows + tasks - 1) / tasks;
    par->parallel_for(par->runner_ctx, pad_task, &j,
                      (size_t)((j.rows + j.rows_per_task - 1) / j.rows_per_task));
  }
  free(maps);
  return ACTX_OK;
}

static actx_status layout_run(const void *state, const actx_tensor *in, size_t n_in,
                              actx_tensor *out, size_t n_out, const actx_parallel *par,
                              const char **why) {
  const layout_state *s = state;
  if (n_out != 1) return actx_bf16_fail(why, "wrong number of inputs or outputs");
  actx_shape shape;
  int64_t begin[ACTX_BF16_MAX_RANK], end[ACTX_BF16_MAX_RANK];
  actx_status st = layout_shape(s, in, n_in, &shape, begin, end, why);
  /* a byte mover reads elements other than the one it writes: no overlap at all */
  st = actx_bf16_check_run(st, in, n_in, &out[0], ACTX_ELEM_BF16, &shape, 0, why);
  if (st != ACTX_OK) return st;
  if (actx_shape_elements(&shape) > 0 && in[0].data != NULL) {
    const uintptr_t o0 = (uintptr_t)out[0].data,
                    o1 = o0 + 2 * (uintptr_t)actx_shape_elements(&shape);
    const uintptr_t i0 = (uintptr_t)in[0].data,
                    i1 = i0 + 2 * (uintptr_t)actx_shape_elements(&in[0].shape);
    if (i0 < o1 && o0 < i1) return actx_bf16_fail(why, "the output overlaps the input");
  }
  if (s->op == ACTX_BF16_OP_PAD) return pad_run(s, in, n_in, &shape, begin, end, out[0].data, par);
  if (actx_shape_elements(&shape) == 0) return ACTX_OK;
  actx_walk w;
  if (s->op == ACTX_BF16_OP_EXPAND) {
    const actx_shape *shapes[1] = {&in[0].shape};
    actx_walk_broadcast(&w, &shape, shapes, 1);
  } else { /* Tile: [r0, d0, r1, d1, ...] */
    const actx_shape *x = &in[0].shape;
    int64_t dims[ACTX_WALK_MAX_RANK], strides[1][ACTX_WALK_MAX_RANK];
    int64_t stride = 1;
    for (size_t d = x->rank; d-- > 0;) {
      dims[2 * d] = shape.dims[d] / (x->dims[d] > 0 ? x->dims[d] : 1);
      dims[2 * d + 1] = x->dims[d];
      strides[0][2 * d] = 0;
      strides[0][2 * d + 1] = stride;
      stride *= x->dims[d];
    }
    actx_walk_init(&w, 2 * x->rank, dims, 1, (const int64_t(*)[ACTX_WALK_MAX_RANK])strides);
  }
  const void *data[1] = {in[0].data};
  const size_t size[1] = {2};
  actx_walk_run(&w, data, size, out[0].data, 2, copy_piece, NULL, ACTX_WALK_NS_MOVE, par);
  return ACTX_OK;
}

const actx_bf16_family actx_bf16_family_layout = {
    .create = layout_create,
    .pack = NULL,
    .shapes = layout_shapes,
    .run = layout_run,
    .destroy = layout_destroy,
};
