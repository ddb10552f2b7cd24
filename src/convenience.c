/* The convenience functions (actx_gelu_f32, ...): plain calls of actx_compute(), on the
 * built-in pthread pool of actx_set_num_threads() when a tensor is long enough to split. */
#include <pthread.h>
#include <stdlib.h>

#include "actx.h"
#include "pool.h"

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
  if (pool == NULL || n < 2 * actx_min_elements_per_task(d->dtype) ||
      pthread_mutex_trylock(&pool_in_use) != 0)
    return actx_compute(d, x, y, n, NULL);
  const actx_parallel par = {actx_pool_parallel_for, pool, threads, 0};
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
