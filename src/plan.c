/* A plan: what a descriptor alone decides (its checks, the kernel of the ISA in use, the ORT
 * rule's parameters), worked out once, then the per-tensor checks, the parallel split and the
 * kernel call each run. actx_compute() is a plan made on the stack and run once. */
#include <stdint.h>
#include <stdlib.h>

#include "actx.h"
#include "dispatch.h"
#include "lut.h"
#include "ort_rule.h"

/* Below this many elements per task a split costs more than it saves: the cheapest op (tanh)
 * computes about this many float32 elements in the time it takes to wake a thread
 * (docs/ep-policy.md, "Splitting over ORT's pool"). */
#define MIN_ELEMENTS_PER_TASK 16384
/* Task boundaries fall on multiples of this many elements (a 64-byte line for every dtype). */
#define TASK_GRAIN 64
/* Bias rows shorter than this are tiled into a row of at least half this length first, so a
 * short bias (h = 1, 7, ...) does not cost one kernel call per row. */
#define BIAS_TILE 256

struct actx_plan {
  actx_op op;
  actx_dtype dtype;
  size_t es; /* bytes per element */
  actx_kernel_fn kernel;
  actx_kernel_params plain;  /* without a bias */
  actx_kernel_params biased; /* with one: the rule may differ (ORT's BiasGelu copies no NaN) */
};

size_t actx_min_elements_per_task(actx_dtype dtype) {
  (void)dtype;
  return MIN_ELEMENTS_PER_TASK;
}

/* The checks of the descriptor's op, dtype and alpha. */
static actx_status plan_init(const actx_op_desc *d, actx_plan *p) {
  if (d == NULL) return ACTX_ERROR_NULL_POINTER;
  if ((unsigned)d->op >= ACTX_OP_COUNT || (unsigned)d->dtype >= ACTX_DTYPE_COUNT)
    return ACTX_ERROR_INVALID_ARGUMENT;
  if (!actx_op_takes_alpha[d->op] && d->alpha != 0.0f) return ACTX_ERROR_INVALID_ARGUMENT;
  p->op = d->op;
  p->dtype = d->dtype;
  p->es = actx_dtype_size(d->dtype);
  p->kernel = actx_kernel_lookup(d->op, d->dtype);
  p->plain = actx_ort_rule_params(d->op, d->alpha, 0);
  p->biased = actx_ort_rule_params(d->op, d->alpha, 1);
  return ACTX_OK;
}

/* The checks of one run's tensors, in the order actx.h documents its errors. */
static actx_status check_run(const actx_plan *p, const void *x, const void *y, size_t n,
                             const void *bias, size_t bias_len) {
  if (!actx_op_takes_bias[p->op] && (bias != NULL || bias_len != 0))
    return ACTX_ERROR_INVALID_ARGUMENT;
  if (bias != NULL && bias_len == 0) return ACTX_ERROR_INVALID_BIAS;
  if (n == 0) return ACTX_OK;
  if (x == NULL || y == NULL) return ACTX_ERROR_NULL_POINTER;
  if (bias == NULL && bias_len != 0) return ACTX_ERROR_NULL_POINTER;
  if (bias_len != 0 && n % bias_len != 0) return ACTX_ERROR_INVALID_BIAS;
  if (n > SIZE_MAX / p->es) return ACTX_ERROR_INVALID_ARGUMENT;
  const uintptr_t xa = (uintptr_t)x, ya = (uintptr_t)y, bytes = n * p->es;
  if (xa != ya && xa < ya + bytes && ya < xa + bytes) return ACTX_ERROR_OVERLAP;
  return ACTX_OK;
}

/* ---- the split ---- */

typedef struct job {
  actx_kernel_fn kernel;
  const char *x;
  char *y;
  size_t n, es;
  const char *bias; /* NULL or bias_len elements */
  size_t bias_len;
  actx_kernel_params params; /* bias set per row */
  size_t chunk;       /* elements per task */
  const uint16_t *lut; /* when not NULL, the op's float16 / bfloat16 table replaces the kernel */
} job;

/* Runs elements [start, end), walking the bias row by row so a kernel never wraps. */
static void run_range(const job *j, size_t start, size_t end) {
  if (j->lut != NULL) {
    actx_lut_apply(j->lut, j->x + start * j->es, j->y + start * j->es, end - start);
    return;
  }
  if (j->bias == NULL) {
    j->kernel(j->x + start * j->es, j->y + start * j->es, end - start, &j->params);
    return;
  }
  actx_kernel_params p = j->params;
  size_t phase = start % j->bias_len;
  while (start < end) {
    size_t seg = j->bias_len - phase;
    if (seg > end - start) seg = end - start;
    p.bias = j->bias + phase * j->es;
    j->kernel(j->x + start * j->es, j->y + start * j->es, seg, &p);
    start += seg;
    phase = 0;
  }
}

static void run_task(void *ctx, size_t task) {
  const job *j = ctx;
  const size_t start = task * j->chunk;
  if (start >= j->n) return;
  const size_t end = j->n - start < j->chunk ? j->n : start + j->chunk;
  run_range(j, start, end);
}

static actx_status plan_run(const actx_plan *p, const void *x, void *y, size_t n,
                            const void *bias, size_t bias_len, const actx_parallel *par) {
  const actx_status st = check_run(p, x, y, n, bias, bias_len);
  if (st != ACTX_OK || n == 0) return st;
  /* what the rest comes to for a short tensor without a bias (no table, one task), directly:
   * an ORT kernel's usual call */
  if (bias == NULL && n < ACTX_LUT_MIN_ELEMENTS && n < MIN_ELEMENTS_PER_TASK) {
    p->kernel(x, y, n, &p->plain);
    return ACTX_OK;
  }
  job j = {p->kernel, x, y, n, p->es, bias, bias_len, bias != NULL ? p->biased : p->plain, n,
           NULL};
  if (j.bias == NULL && n >= ACTX_LUT_MIN_ELEMENTS)
    j.lut = actx_lut_get_for(p->op, p->dtype, &p->plain);

  /* a short bias row is tiled so that kernels see rows of at least BIAS_TILE / 2 elements */
  _Alignas(64) char tile[BIAS_TILE * 4];
  if (j.bias != NULL && j.bias_len < BIAS_TILE / 2) {
    const size_t reps = BIAS_TILE / j.bias_len, row = j.bias_len * j.es;
    for (size_t r = 0; r < reps; r++)
      for (size_t b = 0; b < row; b++) tile[r * row + b] = j.bias[b];
    j.bias = tile;
    j.bias_len *= reps;
  }

  size_t tasks = 1;
  if (par != NULL && par->parallel_for != NULL && par->max_tasks > 1) {
    tasks = n / MIN_ELEMENTS_PER_TASK;
    if (tasks > par->max_tasks) tasks = par->max_tasks;
  }
  if (tasks <= 1) {
    run_range(&j, 0, n);
    return ACTX_OK;
  }
  j.chunk = (n + tasks - 1) / tasks;
  j.chunk = (j.chunk + TASK_GRAIN - 1) / TASK_GRAIN * TASK_GRAIN;
  tasks = (n + j.chunk - 1) / j.chunk;
  par->parallel_for(par->runner_ctx, run_task, &j, tasks);
  return ACTX_OK;
}

actx_status actx_compute(const actx_op_desc *desc, const void *x, void *y, size_t n,
                         const actx_parallel *par) {
  actx_plan p;
  const actx_status st = plan_init(desc, &p);
  return st != ACTX_OK ? st : plan_run(&p, x, y, n, desc->bias, desc->bias_len, par);
}

/* actx_prepare()'s work into p: the descriptor's checks, its bias fields' checks (bias and
 * bias_len are not kept) and the op's table, if it has one (ACTX_ERROR_OUT_OF_MEMORY when that
 * cannot be built; p is made all the same). */
static actx_status prepare(const actx_op_desc *desc, actx_plan *p) {
  actx_status st = plan_init(desc, p);
  if (st == ACTX_OK) st = check_run(p, NULL, NULL, 0, desc->bias, desc->bias_len);
  if (st != ACTX_OK || desc->bias != NULL) return st;
  if (actx_lut_has_table(p->op, p->dtype, &p->plain) && actx_lut_get_for(p->op, p->dtype, &p->plain) == NULL)
    return ACTX_ERROR_OUT_OF_MEMORY;
  return ACTX_OK;
}

actx_status actx_prepare(const actx_op_desc *desc) {
  actx_plan p;
  return prepare(desc, &p);
}

actx_status actx_plan_create(const actx_op_desc *desc, actx_plan **plan) {
  if (plan == NULL) return ACTX_ERROR_NULL_POINTER;
  *plan = NULL;
  actx_plan *p = malloc(sizeof *p);
  if (p == NULL) return ACTX_ERROR_OUT_OF_MEMORY;
  const actx_status st = prepare(desc, p);
  /* without its table the op still runs, on its kernel (same bits) */
  if (st != ACTX_OK && st != ACTX_ERROR_OUT_OF_MEMORY) {
    free(p);
    return st;
  }
  *plan = p;
  return ACTX_OK;
}

actx_status actx_plan_run(const actx_plan *plan, const void *x, void *y, size_t n,
                          const void *bias, size_t bias_len, const actx_parallel *par) {
  if (plan == NULL) return ACTX_ERROR_NULL_POINTER;
  return plan_run(plan, x, y, n, bias, bias_len, par);
}

void actx_plan_destroy(actx_plan *plan) { free(plan); }
