/* The public API: argument checks, then the parallel split, then the kernel of dispatch.c. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "actx.h"
#include "dispatch.h"
#include "lut.h"
#include "ort_rule.h"
#include "pool.h"

/* Below this many elements per task a split costs more than it saves: the cheapest op (tanh)
 * computes about this many float32 elements in the time it takes to wake a thread
 * (docs/ep-policy.md, "Splitting over ORT's pool"). */
#define MIN_ELEMENTS_PER_TASK 16384
/* Task boundaries fall on multiples of this many elements (a 64-byte line for every dtype). */
#define TASK_GRAIN 64
/* Bias rows shorter than this are tiled into a row of at least half this length first, so a
 * short bias (h = 1, 7, ...) does not cost one kernel call per row. */
#define BIAS_TILE 256

const char *actx_status_string(actx_status status) {
  switch (status) {
    case ACTX_OK: return "ok";
    case ACTX_ERROR_NULL_POINTER: return "a required pointer (x, y, bias or desc) is NULL";
    case ACTX_ERROR_INVALID_BIAS: return "invalid bias: length 0, or n not a multiple of it";
    case ACTX_ERROR_INVALID_ARGUMENT: return "invalid argument (op, dtype, isa or a field the op does not take)";
    case ACTX_ERROR_OVERLAP: return "x and y overlap without being the same buffer";
    case ACTX_ERROR_UNSUPPORTED: return "the instruction set is not supported by this CPU";
    case ACTX_ERROR_OUT_OF_MEMORY: return "out of memory (thread pool or table)";
  }
  return "unknown actx_status";
}

const char *actx_op_name(actx_op op) {
  return (unsigned)op < ACTX_OP_COUNT ? actx_op_names[op] : "unknown";
}

const char *actx_dtype_name(actx_dtype dtype) {
  static const char *const names[ACTX_DTYPE_COUNT] = {"f32", "f16", "bf16"};
  return (unsigned)dtype < ACTX_DTYPE_COUNT ? names[dtype] : "unknown";
}

size_t actx_dtype_size(actx_dtype dtype) {
  static const size_t sizes[ACTX_DTYPE_COUNT] = {4, 2, 2};
  return (unsigned)dtype < ACTX_DTYPE_COUNT ? sizes[dtype] : 0;
}

size_t actx_min_elements_per_task(actx_dtype dtype) {
  (void)dtype;
  return MIN_ELEMENTS_PER_TASK;
}

const char *actx_version_string(void) { return "0.1.0"; }

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

static actx_status check(const actx_op_desc *d, const void *x, const void *y, size_t n) {
  if (d == NULL) return ACTX_ERROR_NULL_POINTER;
  if ((unsigned)d->op >= ACTX_OP_COUNT || (unsigned)d->dtype >= ACTX_DTYPE_COUNT)
    return ACTX_ERROR_INVALID_ARGUMENT;
  if (!actx_op_takes_alpha[d->op] && d->alpha != 0.0f) return ACTX_ERROR_INVALID_ARGUMENT;
  if (!actx_op_takes_bias[d->op] && (d->bias != NULL || d->bias_len != 0))
    return ACTX_ERROR_INVALID_ARGUMENT;
  if (d->bias != NULL && d->bias_len == 0) return ACTX_ERROR_INVALID_BIAS;
  if (n == 0) return ACTX_OK;
  if (x == NULL || y == NULL) return ACTX_ERROR_NULL_POINTER;
  if (d->bias == NULL && d->bias_len != 0) return ACTX_ERROR_NULL_POINTER;
  if (d->bias_len != 0 && n % d->bias_len != 0) return ACTX_ERROR_INVALID_BIAS;
  const size_t es = actx_dtype_size(d->dtype);
  if (n > SIZE_MAX / es) return ACTX_ERROR_INVALID_ARGUMENT;
  const uintptr_t xa = (uintptr_t)x, ya = (uintptr_t)y, bytes = n * es;
  if (xa != ya && xa < ya + bytes && ya < xa + bytes) return ACTX_ERROR_OVERLAP;
  return ACTX_OK;
}

actx_status actx_compute(const actx_op_desc *desc, const void *x, void *y, size_t n,
                         const actx_parallel *par) {
  const actx_status st = check(desc, x, y, n);
  if (st != ACTX_OK || n == 0) return st;

  job j = {actx_kernel_lookup(desc->op, desc->dtype), x, y, n, actx_dtype_size(desc->dtype),
           desc->bias, desc->bias_len, actx_ort_rule_params(desc), n, NULL};
  if (j.bias == NULL && n >= ACTX_LUT_MIN_ELEMENTS) j.lut = actx_lut_get(desc->op, desc->dtype);

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

actx_status actx_prepare(const actx_op_desc *desc) {
  const actx_status st = check(desc, NULL, NULL, 0);
  if (st != ACTX_OK || desc->bias != NULL) return st;
  if (actx_lut_has_table(desc->op, desc->dtype) && actx_lut_get(desc->op, desc->dtype) == NULL)
    return ACTX_ERROR_OUT_OF_MEMORY;
  return ACTX_OK;
}

/* ---- the convenience functions' threads ---- */

static pthread_mutex_t pool_mutex = PTHREAD_MUTEX_INITIALIZER; /* guards the fields below */
static pthread_mutex_t pool_in_use = PTHREAD_MUTEX_INITIALIZER;
static actx_pool *global_pool;
static size_t global_threads; /* 0: not read from the environment yet */

static size_t threads_locked(void) {
  if (global_threads == 0) {
    const char *env = getenv("ACTX_NUM_THREADS");
    long v = env ? strtol(env, NULL, 10) : 1;
    global_threads = v >= 1 && v <= 1024 ? (size_t)v : 1;
    global_pool = actx_pool_create(global_threads);
    if (global_pool == NULL) global_threads = 1;
  }
  return global_threads;
}

actx_status actx_set_num_threads(size_t n) {
  if (n == 0) n = 1;
  pthread_mutex_lock(&pool_mutex);
  threads_locked();
  actx_pool_destroy(global_pool);
  global_pool = actx_pool_create(n);
  const int failed = n > 1 && global_pool == NULL;
  global_threads = failed ? 1 : n;
  pthread_mutex_unlock(&pool_mutex);
  return failed ? ACTX_ERROR_OUT_OF_MEMORY : ACTX_OK;
}

size_t actx_get_num_threads(void) {
  pthread_mutex_lock(&pool_mutex);
  const size_t n = threads_locked();
  pthread_mutex_unlock(&pool_mutex);
  return n;
}

/* Runs on the global pool when it is free; a caller that finds it busy (another thread is
 * using it) computes alone, with the same bits. */
static actx_status compute_default(const actx_op_desc *d, const void *x, void *y, size_t n) {
  pthread_mutex_lock(&pool_mutex);
  threads_locked();
  actx_pool *pool = global_pool;
  const size_t threads = global_threads;
  pthread_mutex_unlock(&pool_mutex);
  if (pool == NULL || n < 2 * MIN_ELEMENTS_PER_TASK || pthread_mutex_trylock(&pool_in_use) != 0)
    return actx_compute(d, x, y, n, NULL);
  const actx_parallel par = {actx_pool_parallel_for, pool, threads};
  const actx_status st = actx_compute(d, x, y, n, &par);
  pthread_mutex_unlock(&pool_in_use);
  return st;
}

#define ACTX_DEFINE_PLAIN(name, suffix, T, OP, DT)                     \
  actx_status actx_##name##_##suffix(const T *x, T *y, size_t n) {    \
    const actx_op_desc d = {.op = OP, .dtype = DT};                    \
    return compute_default(&d, x, y, n);                               \
  }
#define ACTX_DEFINE_BIASED(name, suffix, T, OP, DT)                                        \
  actx_status actx_##name##_##suffix(const T *x, T *y, size_t n, const T *bias, size_t h) { \
    const actx_op_desc d = {.op = OP, .dtype = DT, .bias = bias, .bias_len = h};           \
    return compute_default(&d, x, y, n);                                                   \
  }
#define ACTX_DEFINE_DTYPE(suffix, T, DT)                                                   \
  ACTX_DEFINE_PLAIN(erf, suffix, T, ACTX_OP_ERF, DT)                                       \
  ACTX_DEFINE_PLAIN(gelu, suffix, T, ACTX_OP_GELU, DT)                                     \
  ACTX_DEFINE_PLAIN(gelu_tanh, suffix, T, ACTX_OP_GELU_TANH, DT)                           \
  ACTX_DEFINE_PLAIN(tanh, suffix, T, ACTX_OP_TANH, DT)                                     \
  ACTX_DEFINE_PLAIN(sigmoid, suffix, T, ACTX_OP_SIGMOID, DT)                               \
  ACTX_DEFINE_BIASED(fast_gelu, suffix, T, ACTX_OP_GELU_TANH, DT)                          \
  actx_status actx_bias_gelu_##suffix(const T *x, T *y, size_t n, const T *bias, size_t h) { \
    if (bias == NULL && n != 0) return ACTX_ERROR_NULL_POINTER;                            \
    if (h == 0) return ACTX_ERROR_INVALID_BIAS;                                            \
    const actx_op_desc d = {.op = ACTX_OP_GELU, .dtype = DT, .bias = bias, .bias_len = h}; \
    return compute_default(&d, x, y, n);                                                   \
  }                                                                                        \
  actx_status actx_quick_gelu_##suffix(const T *x, T *y, size_t n, float alpha) {          \
    const actx_op_desc d = {.op = ACTX_OP_QUICK_GELU, .dtype = DT, .alpha = alpha};        \
    return compute_default(&d, x, y, n);                                                   \
  }

ACTX_DEFINE_DTYPE(f32, float, ACTX_F32)
ACTX_DEFINE_DTYPE(f16, uint16_t, ACTX_F16)
ACTX_DEFINE_DTYPE(bf16, uint16_t, ACTX_BF16)
