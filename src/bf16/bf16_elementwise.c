/* The element-wise families' shared checks and their one strided walk (bf16_elementwise.h). */
#include "bf16_elementwise.h"

#include <stdint.h>

#define ACTX_MAX_ELEMENTS ((int64_t)1 << 48)

size_t actx_elem_size(actx_elem elem) {
  switch (elem) {
    case ACTX_ELEM_BF16: return 2;
    case ACTX_ELEM_F32: return 4;
    case ACTX_ELEM_I64: return 8;
    case ACTX_ELEM_BOOL: return 1;
    default: return 0;
  }
}

bool actx_dims_elements(size_t rank, const int64_t *dims, int64_t *elements) {
  int64_t n = 1;
  bool zero = false;
  for (size_t i = 0; i < rank; i++) {
    if (dims[i] < 0) return false;
    if (dims[i] == 0) zero = true;
  }
  if (zero) {
    *elements = 0;
    return true;
  }
  for (size_t i = 0; i < rank; i++) {
    if (dims[i] > ACTX_MAX_ELEMENTS / n) return false;
    n *= dims[i];
  }
  *elements = n;
  return true;
}

bool actx_shape_equal(const actx_shape *a, const actx_shape *b) {
  if (a->rank != b->rank) return false;
  for (size_t i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

actx_status actx_bf16_check_tensor(const actx_tensor *t, actx_elem elem, bool need_data,
                                   const char **why) {
  static const char *const wrong_type[ACTX_ELEM_COUNT] = {
      "an input is not bfloat16", "an input is not float32", "an input is not int64",
      "an input is not bool"};
  if (t->elem != elem) return actx_bf16_fail(why, wrong_type[elem]);
  if (t->shape.rank > ACTX_BF16_MAX_RANK) return actx_bf16_fail(why, "a tensor's rank passes 8");
  int64_t n;
  if (!actx_dims_elements(t->shape.rank, t->shape.dims, &n))
    return actx_bf16_fail(why, "a tensor has a negative or too large dimension");
  if (need_data && n > 0 && t->data == NULL) return actx_bf16_fail(why, "a tensor has no data");
  return ACTX_OK;
}

actx_status actx_bf16_check_data(const actx_tensor *in, size_t n_in, const char **why) {
  for (size_t k = 0; k < n_in; k++) {
    if (in[k].elem >= ACTX_ELEM_COUNT) continue;
    int64_t n;
    if (actx_dims_elements(in[k].shape.rank, in[k].shape.dims, &n) && n > 0 && in[k].data == NULL)
      return actx_bf16_fail(why, "a tensor has no data");
  }
  return ACTX_OK;
}

actx_status actx_bf16_check_output(const actx_tensor *out, actx_elem elem,
                                   const actx_shape *shape, const actx_tensor *in, size_t n_in,
                                   const char **why) {
  if (out->elem != elem) return actx_bf16_fail(why, "the output's element type is wrong");
  if (!actx_shape_equal(&out->shape, shape))
    return actx_bf16_fail(why, "the output's shape is not the one the inputs give");
  int64_t n;
  if (!actx_dims_elements(shape->rank, shape->dims, &n))
    return actx_bf16_fail(why, "the output is too large");
  if (n == 0) return ACTX_OK;
  if (out->data == NULL) return actx_bf16_fail(why, "the output has no data");
  const uintptr_t o0 = (uintptr_t)out->data, o1 = o0 + (uintptr_t)n * actx_elem_size(elem);
  for (size_t k = 0; k < n_in; k++) {
    if (in[k].data == NULL || in[k].elem >= ACTX_ELEM_COUNT) continue;
    int64_t m;
    if (!actx_dims_elements(in[k].shape.rank, in[k].shape.dims, &m) || m == 0) continue;
    const uintptr_t i0 = (uintptr_t)in[k].data, i1 = i0 + (uintptr_t)m * actx_elem_size(in[k].elem);
    const bool overlaps = i0 < o1 && o0 < i1;
    const bool in_place = i0 == o0 && in[k].elem == elem && actx_shape_equal(&in[k].shape, shape);
    if (overlaps && !in_place)
      return actx_bf16_fail(why, "the output overlaps an input of another shape or type");
  }
  return ACTX_OK;
}

actx_status actx_bf16_broadcast_inputs(const actx_tensor *in, size_t n_in,
                                       const actx_elem *elems, actx_shape *shape,
                                       const char **why) {
  *shape = in[0].shape;
  for (size_t k = 0; k < n_in; k++) {
    const actx_status st = actx_bf16_check_tensor(&in[k], elems[k], false, why);
    if (st != ACTX_OK) return st;
    if (!actx_shape_broadcast(shape, &in[k].shape, shape))
      return actx_bf16_fail(why, "the input shapes do not broadcast");
  }
  return ACTX_OK;
}

actx_status actx_bf16_check_run(actx_status shaped, const actx_tensor *in, size_t n_in,
                                const actx_tensor *out, actx_elem elem, const actx_shape *shape,
                                size_t n_alias, const char **why) {
  actx_status st = shaped;
  if (st == ACTX_OK) st = actx_bf16_check_data(in, n_in, why);
  if (st != ACTX_OK) return st;
  return actx_bf16_check_output(out, elem, shape, n_alias > 0 ? in : NULL, n_alias, why);
}

void actx_walk_init(actx_walk *w, size_t rank, const int64_t *dims, size_t n_in,
                    const int64_t (*strides)[ACTX_WALK_MAX_RANK]) {
  w->n_in = n_in;
  w->total = 1;
  for (size_t d = 0; d < rank; d++) w->total *= dims[d];
  /* dims of 1 carry no step; then merge d into the kept dim before it when every input's
   * stride there is its stride at d times dims[d] (the pair is one contiguous run of it). */
  size_t r = 0;
  for (size_t d = 0; d < rank; d++) {
    if (dims[d] == 1) continue;
    bool merge = r > 0;
    for (size_t k = 0; k < n_in && merge; k++)
      merge = strides[k][d] * dims[d] == w->strides[k][r - 1];
    if (merge) {
      w->dims[r - 1] *= dims[d];
      for (size_t k = 0; k < n_in; k++) w->strides[k][r - 1] = strides[k][d];
      continue;
    }
    w->dims[r] = dims[d];
    for (size_t k = 0; k < n_in; k++) w->strides[k][r] = strides[k][d];
    r++;
  }
  if (r == 0) { /* one element */
    w->dims[0] = 1;
    for (size_t k = 0; k < n_in; k++) w->strides[k][0] = 0;
    r = 1;
  }
  w->rank = r;
}

void actx_walk_broadcast(actx_walk *w, const actx_shape *out, const actx_shape *const *in,
                         size_t n_in) {
  int64_t strides[ACTX_BF16_MAX_INPUTS][ACTX_WALK_MAX_RANK];
  for (size_t k = 0; k < n_in; k++) {
    const size_t lead = out->rank - in[k]->rank;
    int64_t s = 1;
    for (size_t d = out->rank; d-- > 0;) {
      const int64_t dim = d < lead ? 1 : in[k]->dims[d - lead];
      strides[k][d] = dim == 1 ? 0 : s;
      s *= dim;
    }
  }
  actx_walk_init(w, out->rank, out->dims, n_in, (const int64_t(*)[ACTX_WALK_MAX_RANK])strides);
}

typedef struct walk_job {
  const actx_walk *w;
  const void *const *in;
  const size_t *in_size;
  unsigned char *out;
  size_t out_size;
  actx_walk_piece_fn piece;
  const void *ctx;
  int64_t chunk;
} walk_job;

/* Output elements [begin, end): the multi-index of begin once, then a piece per run of the
 * innermost dim, carrying into the outer ones. */
static void walk_range(const walk_job *j, int64_t begin, int64_t end) {
  const actx_walk *w = j->w;
  const size_t inner = w->rank - 1;
  int64_t idx[ACTX_WALK_MAX_RANK];
  int64_t rest = begin;
  for (size_t d = w->rank; d-- > 0;) {
    idx[d] = rest % w->dims[d];
    rest /= w->dims[d];
  }
  const unsigned char *ptr[ACTX_BF16_MAX_INPUTS];
  int64_t step[ACTX_BF16_MAX_INPUTS];
  for (size_t k = 0; k < w->n_in; k++) step[k] = w->strides[k][inner];
  int64_t at = begin;
  while (at < end) {
    int64_t n = w->dims[inner] - idx[inner];
    if (n > end - at) n = end - at;
    for (size_t k = 0; k < w->n_in; k++) {
      int64_t off = 0;
      for (size_t d = 0; d < w->rank; d++) off += idx[d] * w->strides[k][d];
      ptr[k] = (const unsigned char *)j->in[k] + off * (int64_t)j->in_size[k];
    }
    j->piece(j->ctx, ptr, step, j->out + at * (int64_t)j->out_size, (size_t)n);
    at += n;
    idx[inner] += n;
    for (size_t d = inner; d > 0 && idx[d] == w->dims[d]; d--) {
      idx[d] = 0;
      idx[d - 1]++;
    }
  }
}

static void walk_task(void *ctx, size_t task) {
  const walk_job *j = ctx;
  const int64_t begin = (int64_t)task * j->chunk;
  const int64_t end = begin + j->chunk < j->w->total ? begin + j->chunk : j->w->total;
  walk_range(j, begin, end);
}

void actx_walk_run(const actx_walk *w, const void *const *in, const size_t *in_size, void *out,
                   size_t out_size, actx_walk_piece_fn piece, const void *ctx,
                   double ns_per_element, const actx_parallel *par) {
  if (w->total <= 0) return;
  walk_job j = {w, in, in_size, out, out_size, piece, ctx, w->total};
  int64_t tasks = (int64_t)actx_bf16_tasks(par, w->total, w->total, ACTX_WALK_MIN_CHUNK,
                                           ns_per_element);
  if (tasks <= 1) {
    walk_range(&j, 0, w->total);
    return;
  }
  j.chunk = (w->total + tasks - 1) / tasks;
  tasks = (w->total + j.chunk - 1) / j.chunk;
  par->parallel_for(par->runner_ctx, walk_task, &j, (size_t)tasks);
}

void actx_walk_broadcast_run(const actx_shape *out_shape, const actx_tensor *in, size_t n_in,
                             void *out, size_t out_size, actx_walk_piece_fn piece,
                             const void *ctx, double ns_per_element, const actx_parallel *par) {
  const actx_shape *shapes[ACTX_BF16_MAX_INPUTS];
  const void *data[ACTX_BF16_MAX_INPUTS];
  size_t size[ACTX_BF16_MAX_INPUTS];
  for (size_t k = 0; k < n_in; k++) {
    shapes[k] = &in[k].shape;
    data[k] = in[k].data;
    size[k] = actx_elem_size(in[k].elem);
  }
  actx_walk w;
  actx_walk_broadcast(&w, out_shape, shapes, n_in);
  actx_walk_run(&w, data, size, out, out_size, piece, ctx, ns_per_element, par);
}
