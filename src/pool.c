/* The built-in thread pool (see pool.h). */
#include "pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

struct actx_pool {
  pthread_mutex_t mutex;
  pthread_cond_t wake; /* a new generation (job) or stop */
  pthread_cond_t done; /* a worker finished its share */
  pthread_t *workers;
  size_t num_workers;
  unsigned long generation;
  int stop;
  size_t workers_finished;
  /* the current job */
  actx_task_fn task;
  void *ctx;
  size_t num_tasks;
  atomic_size_t next_task;
};

static void run_tasks(actx_pool *pool) {
  for (;;) {
    const size_t i = atomic_fetch_add_explicit(&pool->next_task, 1, memory_order_relaxed);
    if (i >= pool->num_tasks) return;
    pool->task(pool->ctx, i);
  }
}

static void *worker_main(void *arg) {
  actx_pool *pool = arg;
  unsigned long seen = 0;
  pthread_mutex_lock(&pool->mutex);
  for (;;) {
    while (pool->generation == seen && !pool->stop) pthread_cond_wait(&pool->wake, &pool->mutex);
    if (pool->stop) break;
    seen = pool->generation;
    pthread_mutex_unlock(&pool->mutex);
    run_tasks(pool);
    pthread_mutex_lock(&pool->mutex);
    if (++pool->workers_finished == pool->num_workers) pthread_cond_signal(&pool->done);
  }
  pthread_mutex_unlock(&pool->mutex);
  return NULL;
}

actx_pool *actx_pool_create(size_t threads) {
  if (threads < 2) return NULL;
  actx_pool *pool = calloc(1, sizeof *pool);
  if (pool == NULL) return NULL;
  pool->workers = calloc(threads - 1, sizeof *pool->workers);
  if (pool->workers == NULL) {
    free(pool);
    return NULL;
  }
  pthread_mutex_init(&pool->mutex, NULL);
  pthread_cond_init(&pool->wake, NULL);
  pthread_cond_init(&pool->done, NULL);
  atomic_init(&pool->next_task, 0);
  for (size_t i = 0; i < threads - 1; i++) {
    if (pthread_create(&pool->workers[i], NULL, worker_main, pool) != 0) break;
    pool->num_workers++;
  }
  if (pool->num_workers != threads - 1) {
    actx_pool_destroy(pool);
    return NULL;
  }
  return pool;
}

void actx_pool_destroy(actx_pool *pool) {
  if (pool == NULL) return;
  pthread_mutex_lock(&pool->mutex);
  pool->stop = 1;
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->mutex);
  for (size_t i = 0; i < pool->num_workers; i++) pthread_join(pool->workers[i], NULL);
  pthread_cond_destroy(&pool->done);
  pthread_cond_destroy(&pool->wake);
  pthread_mutex_destroy(&pool->mutex);
  free(pool->workers);
  free(pool);
}

void actx_pool_parallel_for(void *pool_arg, actx_task_fn task, void *ctx, size_t num_tasks) {
  actx_pool *pool = pool_arg;
  pthread_mutex_lock(&pool->mutex);
  pool->task = task;
  pool->ctx = ctx;
  pool->num_tasks = num_tasks;
  atomic_store_explicit(&pool->next_task, 0, memory_order_relaxed);
  pool->workers_finished = 0;
  pool->generation++;
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->mutex);

  run_tasks(pool);

  pthread_mutex_lock(&pool->mutex);
  while (pool->workers_finished < pool->num_workers) pthread_cond_wait(&pool->done, &pool->mutex);
  pthread_mutex_unlock(&pool->mutex);
}
