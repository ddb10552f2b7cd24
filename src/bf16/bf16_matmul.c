/* The matmul family: MatMul (numpy's batched, broadcast matmul; a 1-D operand gains a dimension
 * of 1 that the output then drops) and Gemm (Y = alpha·A'·B' + beta·C, A' and B' optionally
 * transposed, C broadcast to M x N). oneDNN (bf16_dnnl.h) computes A'·B' in float32 from the
 * exact bfloat16 operands; this file applies alpha, beta·C in float32 and rounds once.
 *
 * A constant B (weights) is reordered once at pack time into oneDNN's preferred layout; the
 * kernel then holds that copy only. A runtime B goes through per-shape ops cached in the kernel.
 * A whose batch B does not have (B 2-D, or its batch dimensions all 1) is folded into M: one
 * matmul of [batch·M, K] x [K, N], the case of every transformer's linear layers. */
#include <stdlib.h>
#include <string.h>

#include "bf16_dnnl.h"
#include "bf16_family.h"
#include "half.h"

typedef struct matmul_state {
  bool gemm;
  bool trans_a, trans_b, has_c;
  float alpha, beta;
  /* B once packed: its shape (as the graph has it), the packed copy, and the ops that use it */
  bool b_packed;
  actx_shape b_shape;
  actx_dnnl_cache *packed_ops;
  actx_dnnl_cache *ops; /* ops of a runtime B */
} matmul_state;

static actx_status create(const actx_bf16_node *node, void **out, const char **why) {
  *out = NULL;
  for (size_t i = 0; i < node->n_inputs; i++)
    if (node->input_present[i] && node->input_elems[i] != ACTX_ELEM_BF16)
      return actx_bf16_fail(why, "MatMul / Gemm: every input must be bfloat16");
  if (!actx_dnnl_available()) {
    *why = "MatMul / Gemm: oneDNN not available in this build";
    return ACTX_ERROR_UNSUPPORTED;
  }
  matmul_state *s = calloc(1, sizeof *s);
  if (s == NULL) return ACTX_ERROR_OUT_OF_MEMORY;
  s->gemm = node->op == ACTX_BF16_OP_GEMM;
  s->alpha = 1.0f;
  s->beta = 1.0f;
  if (s->gemm) {
    const actx_bf16_attrs *a = &node->attrs;
    if (a->has_alpha) s->alpha = a->alpha;
    if (a->has_beta) s->beta = a->beta;
    if ((a->has_trans_a && a->trans_a != 0 && a->trans_a != 1) ||
        (a->has_trans_b && a->trans_b != 0 && a->trans_b != 1)) {
      free(s);
      return actx_bf16_fail(why, "Gemm: transA and transB must be 0 or 1");
    }
    s->trans_a = a->has_trans_a && a->trans_a == 1;
    s->trans_b = a->has_trans_b && a->trans_b == 1;
    s->has_c = node->n_inputs > 2 && node->input_present[2];
  }
  s->ops = actx_dnnl_cache_create(NULL);
  if (s->ops == NULL) {
    free(s);
    return ACTX_ERROR_OUT_OF_MEMORY;
  }
  *out = s;
  return ACTX_OK;
}

static void destroy(void *state) {
  matmul_state *s = state;
  if (s == NULL) return;
  actx_dnnl_cache_destroy(s->ops);
  actx_dnnl_cache_destroy(s->packed_ops);
  free(s);
}

/* ---- shapes -------------------------------------------------------------------------------- */

/* One run's problem: batch dimensions (broadcast), M, K, N, and how A and B are laid out. */
typedef struct problem {
  size_t batch_rank;
  int64_t a_batch[ACTX_BF16_MAX_RANK], b_batch[ACTX_BF16_MAX_RANK], c_batch[ACTX_BF16_MAX_RANK];
  int64_t m, k, n;
  actx_shape out;
  bool b_batched; /* some batch dimension of B is not 1 */
} problem;

static const actx_shape *b_shape_of(const matmul_state *s, const actx_tensor *in) {
  return s->b_packed ? &s->b_shape : &in[1].shape;
}

static actx_status problem_of(const matmul_state *s, const actx_tensor *in, size_t n_in,
                              problem *p, const char **why) {
  memset(p, 0, sizeof *p);
  if (n_in < 2) return actx_bf16_fail(why, "MatMul / Gemm: too few inputs");
  const actx_shape *a = &in[0].shape, *b = b_shape_of(s, in);
  if (in[0].elem != ACTX_ELEM_BF16 || (!s->b_packed && in[1].elem != ACTX_ELEM_BF16))
    return actx_bf16_fail(why, "MatMul / Gemm: A and B must be bfloat16");
  if (s->gemm) {
    if (a->rank != 2 || b->rank != 2)
      return actx_bf16_fail(why, "Gemm: A and B must be 2-D");
    p->m = a->dims[s->trans_a ? 1 : 0];
    p->k = a->dims[s->trans_a ? 0 : 1];
    const int64_t kb = b->dims[s->trans_b ? 1 : 0];
    p->n = b->dims[s->trans_b ? 0 : 1];
    if (kb != p->k) return actx_bf16_fail(why, "Gemm: inner dimensions of A' and B' differ");
    p->out = (actx_shape){.rank = 2, .dims = {p->m, p->n}};
    if (s->has_c) {
      const actx_tensor *c = n_in > 2 ? &in[2] : NULL;
      if (c == NULL || c->elem != ACTX_ELEM_BF16)
        return actx_bf16_fail(why, "Gemm: C must be a bfloat16 tensor");
      actx_shape r;
      if (c->shape.rank > 2 || !actx_shape_broadcast(&c->shape, &p->out, &r) ||
          r.dims[0] != p->m || r.dims[1] != p->n)
        return actx_bf16_fail(why, "Gemm: C does not broadcast to M x N");
    }
    return ACTX_OK;
  }
  if (a->rank == 0 || b->rank == 0) return actx_bf16_fail(why, "MatMul: an input is a scalar");
  /* numpy: a 1-D A is [1, K], a 1-D B is [K, 1]; those dimensions are dropped from Y */
  const size_t ra = a->rank, rb = b->rank;
  p->m = ra == 1 ? 1 : a->dims[ra - 2];
  p->k = a->dims[ra - 1];
  const int64_t kb = rb == 1 ? b->dims[0] : b->dims[rb - 2];
  p->n = rb == 1 ? 1 : b->dims[rb - 1];
  if (kb != p->k) return actx_bf16_fail(why, "MatMul: inner dimensions of A and B differ");
  actx_shape ab = {.rank = ra > 2 ? ra - 2 : 0}, bb = {.rank = rb > 2 ? rb - 2 : 0}, cb;
  for (size_t i = 0; i < ab.rank; i++) ab.dims[i] = a->dims[i];
  for (size_t i = 0; i < bb.rank; i++) bb.dims[i] = b->dims[i];
  if (!actx_shape_broadcast(&ab, &bb, &cb))
    return actx_bf16_fail(why, "MatMul: batch dimensions of A and B do not broadcast");
  p->batch_rank = cb.rank;
  for (size_t i = 0; i < cb.rank; i++) {
    const size_t pa = cb.rank - ab.rank, pb = cb.rank - bb.rank;
    p->a_batch[i] = i < pa ? 1 : ab.dims[i - pa];
    p->b_batch[i] = i < pb ? 1 : bb.dims[i - pb];
    p->c_batch[i] = cb.dims[i];
    p->b_batched |= p->b_batch[i] != 1;
  }
  p->out.rank = cb.rank;
  memcpy(p->out.dims, cb.dims, cb.rank * sizeof cb.dims[0]);
  if (ra > 1) p->out.dims[p->out.rank++] = p->m;
  if (rb > 1) p->out.dims[p->out.rank++] = p->n;
  return ACTX_OK;
}

static actx_status shapes(const void *state, const actx_tensor *in, size_t n_in,
                          actx_tensor *out, size_t n_out, const char **why) {
  problem p;
  const actx_status st = problem_of(state, in, n_in, &p, why);
  if (st != ACTX_OK) return st;
  if (n_out < 1) return actx_bf16_fail(why, "MatMul / Gemm: no output");
  out[0] = (actx_tensor){.elem = ACTX_ELEM_BF16, .shape = p.out, .data = out[0].data};
  return ACTX_OK;
}

/* ---- packing ------------------------------------------------------------------------------- */

/* B as oneDNN sees it: [K, N] with the strides of B (or B'). */
static void b_operand(const matmul_state *s, const actx_shape *b, int64_t k, int64_t n,
                      size_t rank, int64_t *dims, int64_t *strides) {
  for (size_t i = 0; i + 2 < rank; i++) dims[i] = 1, strides[i] = k * n;
  dims[rank - 2] = k;
  dims[rank - 1] = n;
  const bool t = s->gemm && s->trans_b;
  strides[rank - 2] = t ? 1 : n;
  strides[rank - 1] = t ? k : 1;
  (void)b;
}

static actx_status pack(void *state, size_t input, const actx_tensor *value, bool *packed,
                        const char **why) {
  matmul_state *s = state;
  *packed = false;
  if (input != 1 || s->b_packed || value->elem != ACTX_ELEM_BF16) return ACTX_OK;
  const actx_shape *b = &value->shape;
  /* only a B of one matrix: batched weights stay the caller's, served per run */
  if (b->rank < 1 || (s->gemm && b->rank != 2)) return ACTX_OK;
  for (size_t i = 0; i + 2 < b->rank; i++)
    if (b->dims[i] != 1) return ACTX_OK;
  const int64_t k = b->rank == 1 ? b->dims[0] : b->dims[b->rank - 2 + (s->gemm && s->trans_b)];
  const int64_t n = b->rank == 1 ? 1 : b->dims[b->rank - 1 - (s->gemm && s->trans_b)];
  if (k == 0 || n == 0) return ACTX_OK; /* nothing to compute with: runs handle it */
  if (value->data == NULL) return actx_bf16_fail(why, "MatMul / Gemm: B's data is NULL");
  actx_dnnl_matmul_shape ms;
  memset(&ms, 0, sizeof ms);
  ms.rank = 2;
  /* the layout oneDNN prefers for a typical M (a sequence of 128); other Ms use it too */
  ms.a_dims[0] = 128;
  ms.a_dims[1] = k;
  ms.a_strides[0] = k;
  ms.a_strides[1] = 1;
  b_operand(s, b, k, n, 2, ms.b_dims, ms.b_strides);
  actx_dnnl_weights *w = NULL;
  actx_status st = actx_dnnl_matmul_pack(&ms, value->data, &w, why);
  if (st != ACTX_OK) return st;
  s->packed_ops = actx_dnnl_cache_create(w);
  if (s->packed_ops == NULL) return ACTX_ERROR_OUT_OF_MEMORY; /* it destroyed them */
  s->b_shape = *b;
  s->b_packed = true;
  *packed = true;
  return ACTX_OK;
}

/* ---- running ------------------------------------------------------------------------------- */

/* One oneDNN matmul of the shape over a, b into acc, on the calling thread; and where y is set,
 * the `count` results rounded into it. */
static actx_status run_whole(actx_dnnl_cache *cache, const actx_dnnl_matmul_shape *ms,
                             const uint16_t *a, const uint16_t *b, float *acc, uint16_t *y,
                             size_t count, const actx_parallel *par, const char **why) {
  actx_dnnl_op *op = NULL;
  actx_status st = actx_dnnl_cache_matmul(cache, ms, &op, why);
  if (st != ACTX_OK) return st;
  st = actx_dnnl_run(op, a, b, NULL, acc, why);
  actx_dnnl_cache_release(cache, op);
  if (st == ACTX_OK && y != NULL) actx_dnnl_round(acc, y, count, par);
  return st;
}

/* The least multiply-adds a task takes whatever the pool costs (actx_dnnl_split_tasks also asks
 * for twice the measured cost of a parallel-for call, reckoned at oneDNN's rate). */
#define SPLIT_MIN_MACS (1 << 20)
/* more tasks than this a run are not worth their ops */
#define SPLIT_MAX_TASKS 64

/* A matmul split into tasks of whole units: rows of a 2-D matmul, or matrices of a batched one.
 * A unit moves A, B and the results by a_unit, b_unit (0: B shared, or A) and c_unit
 * elements. */
typedef struct split_job {
  actx_dnnl_op *full, *last; /* ops of a task's `per_task` units and of the last, fewer */
  const uint16_t *a, *b;
  float *acc;
  uint16_t *y; /* the rounding of acc, each task's on its task; NULL: the caller rounds */
  int64_t units, per_task, a_unit, b_unit, c_unit;
  size_t tasks;
  actx_status status[SPLIT_MAX_TASKS];
  const char *why[SPLIT_MAX_TASKS];
} split_job;

static void split_task(void *ctx, size_t task) {
  split_job *j = ctx;
  const bool last = task + 1 == j->tasks;
  const int64_t u = (int64_t)task * j->per_task, count = last ? j->units - u : j->per_task;
  float *acc = j->acc + u * j->c_unit;
  j->status[task] = actx_dnnl_run(last ? j->last : j->full, j->a + u * j->a_unit,
                                  j->b != NULL ? j->b + u * j->b_unit : NULL, NULL, acc,
                                  &j->why[task]);
  if (j->status[task] == ACTX_OK && j->y != NULL)
    actx_dnnl_round(acc, j->y + u * j->c_unit, (size_t)(count * j->c_unit), NULL);
}

/* Runs j (its units, strides and buffers set) in `tasks` tasks over the caller's parallel-for,
 * each one oneDNN run on its task's thread alone (OpenMP team of 1): oneDNN's own team beside
 * ORT's pool oversubscribes the cores, since both sides' threads spin after their parallel
 * regions (a 128 x 384 x 384 matmul took 0.5 ms on one thread and up to 61 ms on two), while
 * tasks of the pool use exactly the session's threads. The shape's first dimension of A (and
 * of B where b_units) counts the units: a task's run is of its own units. A unit's sums do not
 * depend on which units share its task, so every split gives the same bits; where y is set,
 * each task rounds its results into it (one parallel region a matmul, the rounding while they
 * are in cache). */
static actx_status run_split(actx_dnnl_cache *cache, const actx_dnnl_matmul_shape *shape,
                             bool a_units, bool b_units, split_job *j, size_t tasks,
                             const actx_parallel *par, const char **why) {
  j->per_task = (j->units + (int64_t)tasks - 1) / (int64_t)tasks;
  j->tasks = (size_t)((j->units + j->per_task - 1) / j->per_task);
  actx_dnnl_matmul_shape full = *shape, last = *shape;
  const int64_t last_units = j->units - (int64_t)(j->tasks - 1) * j->per_task;
  if (a_units) full.a_dims[0] = j->per_task, last.a_dims[0] = last_units;
  if (b_units) full.b_dims[0] = j->per_task, last.b_dims[0] = last_units;
  actx_status st = actx_dnnl_cache_matmul(cache, &full, &j->full, why);
  if (st != ACTX_OK) return st;
  j->last = j->full;
  if (last_units != j->per_task) st = actx_dnnl_cache_matmul(cache, &last, &j->last, why);
  if (st == ACTX_OK) {
    par->parallel_for(par->runner_ctx, split_task, j, j->tasks);
    for (size_t i = 0; i < j->tasks && st == ACTX_OK; i++)
      if ((st = j->status[i]) != ACTX_OK && why != NULL) *why = j->why[i];
    if (j->last != j->full) actx_dnnl_cache_release(cache, j->last);
  }
  actx_dnnl_cache_release(cache, j->full);
  return st;
}

/* A 2-D matmul (M x K by K x N), split into blocks of rows. */
static actx_status run_rows(actx_dnnl_cache *cache, const actx_dnnl_matmul_shape *ms,
                            const uint16_t *a, const uint16_t *b, float *acc, uint16_t *y,
                            const actx_parallel *par, const char **why) {
  const int64_t m = ms->a_dims[0], k = ms->a_dims[1], n = ms->b_dims[1];
  const double macs = (double)m * (double)k * (double)n;
  const size_t tasks = actx_dnnl_split_tasks(par, macs, m, SPLIT_MIN_MACS, SPLIT_MAX_TASKS);
  if (tasks <= 1) return run_whole(cache, ms, a, b, acc, y, (size_t)(m * n), par, why);
  split_job job = {.a = a, .b = b, .acc = acc, .y = y, .units = m,
                   .a_unit = ms->a_strides[0], .b_unit = 0, .c_unit = n};
  return run_split(cache, ms, true, false, &job, tasks, par, why);
}

/* A batched matmul (B has a batch: one without is folded into rows) whose B has every batch
 * dimension of the result and A every one or none (all 1), split into tasks of whole matrices:
 * the batch flattened into one dimension, so each task is one oneDNN run of a 3-D problem (the
 * attention's Q·Kᵀ and its weights·V, 12 matrices each in MiniLM, had run on one thread). Any
 * other mix of broadcast batch dimensions, or a batch too small to split, is one run. */
static actx_status run_batches(actx_dnnl_cache *cache, const actx_dnnl_matmul_shape *ms,
                               const problem *p, const uint16_t *a, const uint16_t *b,
                               float *acc, uint16_t *y, size_t count, const actx_parallel *par,
                               const char **why) {
  bool a_all = true, a_none = true, b_all = true;
  int64_t batch = 1;
  for (size_t i = 0; i < p->batch_rank; i++) {
    a_all &= p->a_batch[i] == p->c_batch[i], a_none &= p->a_batch[i] == 1;
    b_all &= p->b_batch[i] == p->c_batch[i];
    batch *= p->c_batch[i];
  }
  const double macs = (double)batch * (double)p->m * (double)p->k * (double)p->n;
  const size_t tasks =
      (a_all || a_none) && b_all && b != NULL
          ? actx_dnnl_split_tasks(par, macs, batch, SPLIT_MIN_MACS, SPLIT_MAX_TASKS)
          : 1;
  if (tasks <= 1) return run_whole(cache, ms, a, b, acc, y, count, par, why);
  /* [batch or 1, M, K] x [batch or 1, K, N], each operand's strides as ms has them */
  const size_t r = ms->rank;
  actx_dnnl_matmul_shape flat = {.rank = 3};
  flat.a_dims[0] = a_all ? batch : 1;
  flat.b_dims[0] = batch;
  flat.a_strides[0] = p->m * p->k;
  flat.b_strides[0] = p->k * p->n;
  for (size_t d = 1; d < 3; d++) {
    flat.a_dims[d] = ms->a_dims[r - 3 + d], flat.a_strides[d] = ms->a_strides[r - 3 + d];
    flat.b_dims[d] = ms->b_dims[r - 3 + d], flat.b_strides[d] = ms->b_strides[r - 3 + d];
  }
  split_job job = {.a = a, .b = b, .acc = acc, .y = y, .units = batch,
                   .a_unit = a_all ? p->m * p->k : 0, .b_unit = p->k * p->n,
                   .c_unit = p->m * p->n};
  return run_split(cache, &flat, a_all, true, &job, tasks, par, why);
}

/* Y = round(alpha·acc + beta·C), Gemm's with an alpha or a C, in float32, once (a plain
 * round(acc) is the runs' own). C broadcast from [1 or M, 1 or N] (or lower rank); beta == 0
 * leaves C unread, as ONNX Runtime does. */
static void round_out(const matmul_state *s, const problem *p, const float *acc, uint16_t *y,
                      const actx_tensor *c) {
  const bool with_c = s->gemm && s->has_c && s->beta != 0.0f;
  const size_t m = (size_t)p->m, n = (size_t)p->n;
  size_t cm = 0, cn = 0; /* C's strides over Y's rows and columns: 0 where it broadcasts */
  const uint16_t *cd = NULL;
  if (with_c) {
    cd = c->data;
    const actx_shape *cs = &c->shape;
    const int64_t rows = cs->rank == 2 ? cs->dims[0] : 1;
    const int64_t cols = cs->rank >= 1 ? cs->dims[cs->rank - 1] : 1;
    cn = cols == 1 ? 0 : 1;
    cm = rows == 1 ? 0 : (size_t)cols;
  }
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++) {
      float v = s->alpha * acc[i * n + j];
      if (with_c) v = v + s->beta * actx_bf16_to_f32(cd[i * cm + j * cn]);
      y[i * n + j] = actx_f32_to_bf16(v);
    }
}

static actx_status run(const void *state, const actx_tensor *in, size_t n_in, actx_tensor *out,
                       size_t n_out, const actx_parallel *par, const char **why) {
  const matmul_state *s = state;
  problem p;
  actx_status st = problem_of(s, in, n_in, &p, why);
  if (st != ACTX_OK) return st;
  if (n_out < 1 || out[0].elem != ACTX_ELEM_BF16)
    return actx_bf16_fail(why, "MatMul / Gemm: the output must be bfloat16");
  if (out[0].shape.rank != p.out.rank ||
      memcmp(out[0].shape.dims, p.out.dims, p.out.rank * sizeof p.out.dims[0]) != 0)
    return actx_bf16_fail(why, "MatMul / Gemm: the output's shape is not the one _shapes gave");
  const size_t count = (size_t)actx_shape_elements(&p.out);
  if (count == 0) return ACTX_OK;
  const bool use_c = s->gemm && s->has_c && s->beta != 0.0f;
  if (out[0].data == NULL || (in[0].data == NULL && p.k > 0) ||
      (!s->b_packed && in[1].data == NULL && p.k > 0) || (use_c && in[2].data == NULL))
    return actx_bf16_fail(why, "MatMul / Gemm: NULL data");
  /* zeroed only for an empty sum: the runs write every element (a calloc of a 128 x 12 x 128
   * result was 5 % of a MiniLM twin's run) */
  float *acc = p.k == 0 ? calloc(count, sizeof *acc) : malloc(count * sizeof *acc);
  if (acc == NULL) return ACTX_ERROR_OUT_OF_MEMORY;
  /* Y = round(acc): rounded by the runs themselves; else round_out applies alpha and C */
  const bool plain = !s->gemm || (!use_c && s->alpha == 1.0f);
  uint16_t *y = plain ? out[0].data : NULL;
  if (p.k == 0) {
    if (y != NULL) /* an empty sum: acc is zeroed */ actx_dnnl_round(acc, y, count, par);
  } else {
    /* the oneDNN problem: 2-D when B has no batch (A's batch folded into M), else batched */
    actx_dnnl_matmul_shape ms;
    memset(&ms, 0, sizeof ms);
    const bool fold = !p.b_batched;
    int64_t batch = 1;
    for (size_t i = 0; i < p.batch_rank; i++) batch *= p.a_batch[i];
    const size_t rank = fold ? 2 : p.batch_rank + 2;
    ms.rank = rank;
    if (fold) {
      ms.a_dims[0] = batch * p.m;
    } else {
      int64_t stride = p.m * p.k;
      for (size_t i = p.batch_rank; i-- > 0;) {
        ms.a_dims[i] = p.a_batch[i];
        ms.a_strides[i] = stride;
        stride *= p.a_batch[i];
      }
      ms.a_dims[rank - 2] = p.m;
    }
    ms.a_dims[rank - 1] = p.k;
    const bool ta = s->gemm && s->trans_a;
    ms.a_strides[rank - 2] = ta ? 1 : p.k;
    ms.a_strides[rank - 1] = ta ? p.m : 1;
    b_operand(s, b_shape_of(s, in), p.k, p.n, rank, ms.b_dims, ms.b_strides);
    if (!fold) {
      int64_t stride = p.k * p.n;
      for (size_t i = p.batch_rank; i-- > 0;) {
        ms.b_dims[i] = p.b_batch[i];
        ms.b_strides[i] = stride;
        stride *= p.b_batch[i];
      }
    }
    actx_dnnl_cache *cache = s->b_packed && fold ? s->packed_ops : s->ops;
    const uint16_t *b = cache == s->packed_ops ? NULL : in[1].data;
    st = fold ? run_rows(cache, &ms, in[0].data, b, acc, y, par, why)
              : run_batches(cache, &ms, &p, in[0].data, b, acc, y, count, par, why);
    if (st != ACTX_OK) {
      free(acc);
      return st;
    }
  }
  if (y == NULL) round_out(s, &p, acc, out[0].data, use_c ? &in[2] : NULL);
  free(acc);
  return ACTX_OK;
}

const actx_bf16_family actx_bf16_family_matmul = {
    .create = create, .pack = pack, .shapes = shapes, .run = run, .destroy = destroy};
