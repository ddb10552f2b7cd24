#ifndef ACTX_POOL_H
#define ACTX_POOL_H

#include <stddef.h>

#include "actx.h"

/* A small pthread pool for standalone users: workers sleep on a condition variable and share a
 * parallel-for with the calling thread. */
typedef struct actx_pool actx_pool;

/* threads - 1 workers are started; NULL when threads < 2 or on failure. */
actx_pool *actx_pool_create(size_t threads);
void actx_pool_destroy(actx_pool *pool);
/* An actx_parallel_for_fn: runs task(ctx, i) for i in [0, num_tasks) on the pool and the
 * calling thread. One parallel-for at a time per pool. */
void actx_pool_parallel_for(void *pool, actx_task_fn task, void *ctx, size_t num_tasks);

#endif /* ACTX_POOL_H */
