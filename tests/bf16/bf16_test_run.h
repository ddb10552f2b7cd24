/* bf16_test_run.h — what the family tests of the bfloat16 service share: the check macro and
 * failure count, a seeded generator of bfloat16 values (edge values mixed in), the one
 * parallel-for stand-in (tasks out of order on real threads, so a result that depends on the
 * split or the order shows), and one call that makes a kernel, asks its output shapes,
 * allocates them and runs it. Header-only: each test is one program. The element-wise
 * families' tests add elementwise_test.h on top. */
#ifndef ACTX_BF16_TEST_RUN_H
#define ACTX_BF16_TEST_RUN_H

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bf16.h"
#include "half.h"

static int failures;
/* Every failure counts; the first 40 are printed (a broken kernel fails thousands of values). */
#define CHECK(cond)                                                                         \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      if (failures < 40) fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                                           \
    }                                                                                       \
  } while (0)

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static inline uint32_t rng_u32(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state >> 16);
}
/* uniform in [lo, hi) */
static inline float rng_uniform(float lo, float hi) {
  /* in double: hi - lo may pass float32's range */
  return (float)(lo + ((double)hi - lo) * (double)(rng_u32() & 0xFFFFFF) / 16777216.0);
}

static inline uint16_t bf(float f) { return actx_f32_to_bf16(f); }
static inline float fb(uint16_t h) { return actx_bf16_to_f32(h); }
static inline bool bf_is_nan(uint16_t h) { return (h & 0x7FFF) > 0x7F80; }

/* n finite bfloat16 values in [lo, hi) */
static inline void fill_uniform(uint16_t *x, size_t n, float lo, float hi) {
  for (size_t i = 0; i < n; i++) x[i] = bf(rng_uniform(lo, hi));
}

static inline actx_shape shape_of(size_t rank, const int64_t *dims) {
  actx_shape s = {.rank = rank};
  for (size_t i = 0; i < rank; i++) s.dims[i] = dims[i];
  return s;
}

static inline actx_tensor tensor_bf16(actx_shape s, uint16_t *data) {
  return (actx_tensor){.elem = ACTX_ELEM_BF16, .shape = s, .data = data};
}

/* Runs each task but the first on a thread of its own, started last to first, the first on
 * the caller: a kernel whose bits depend on the split or the order fails, and one whose tasks
 * share what they write shows under ThreadSanitizer. */
typedef struct par_thread {
  pthread_t id;
  actx_task_fn task;
  void *ctx;
  size_t index;
} par_thread;
static inline void *par_thread_main(void *arg) {
  par_thread *t = arg;
  t->task(t->ctx, t->index);
  return NULL;
}
static size_t par_calls;      /* parallel-fors asked for */
static size_t last_num_tasks; /* the tasks the latest one was asked to run */
static inline void reverse_parallel_for(void *runner, actx_task_fn task, void *ctx,
                                        size_t n) {
  (void)runner;
  par_calls++;
  last_num_tasks = n;
  par_thread threads[16];
  size_t started = 0;
  for (size_t i = n; i-- > 1;) {
    if (started < 16) {
      par_thread *t = &threads[started];
      *t = (par_thread){.task = task, .ctx = ctx, .index = i};
      if (pthread_create(&t->id, NULL, par_thread_main, t) == 0) {
        started++;
        continue;
      }
    }
    task(ctx, i);
  }
  if (n > 0) task(ctx, 0);
  for (size_t i = 0; i < started; i++) pthread_join(threads[i].id, NULL);
}
/* max_tasks as the EP passes for the families that split by work alone */
static const actx_parallel test_par = {reverse_parallel_for, NULL, SIZE_MAX, 0};
/* the same with a thread pool's max_tasks of 4, as for the families capped by threads */
static const actx_parallel thread_par = {reverse_parallel_for, NULL, 4, 0};

/* A node of op at version with n_in inputs (elems: their element types) and n_out outputs. */
static inline actx_bf16_node node_make(actx_bf16_op op, int version, size_t n_in,
                                       const actx_elem *elems, size_t n_out) {
  actx_bf16_node n = {.op = op, .since_version = version, .n_inputs = n_in, .n_outputs = n_out};
  for (size_t i = 0; i < n_in; i++) {
    n.input_elems[i] = elems[i];
    n.input_present[i] = elems[i] != ACTX_ELEM_COUNT;
  }
  for (size_t i = 0; i < n_out; i++) n.output_present[i] = true;
  return n;
}

static inline size_t elem_size(actx_elem e) {
  switch (e) {
  case ACTX_ELEM_BF16: return 2;
  case ACTX_ELEM_F32: return 4;
  case ACTX_ELEM_I64: return 8;
  case ACTX_ELEM_BOOL: return 1;
  default: return 1;
  }
}

/* Makes the kernel, asks the shapes, allocates out[i].data (free with outputs_free), runs it
 * (with par, which may be NULL). On failure out[] holds no data and *why names the cause. */
static inline actx_status run_node(const actx_bf16_node *node, const actx_tensor *in,
                                   size_t n_in, actx_tensor *out, size_t n_out,
                                   const actx_parallel *par, const char **why) {
  for (size_t i = 0; i < n_out; i++) out[i] = ACTX_TENSOR_ABSENT;
  actx_bf16_kernel *k = NULL;
  actx_status st = actx_bf16_kernel_create(node, &k, why);
  if (st != ACTX_OK) return st;
  st = actx_bf16_kernel_shapes(k, in, n_in, out, n_out, why);
  if (st == ACTX_OK) {
    for (size_t i = 0; i < n_out; i++) {
      if (out[i].elem == ACTX_ELEM_COUNT) continue;
      const int64_t n = actx_shape_elements(&out[i].shape);
      out[i].data = calloc((size_t)(n > 0 ? n : 1), elem_size(out[i].elem));
    }
    st = actx_bf16_kernel_run(k, in, n_in, out, n_out, par, why);
  }
  actx_bf16_kernel_destroy(k);
  if (st != ACTX_OK)
    for (size_t i = 0; i < n_out; i++) {
      free(out[i].data);
      out[i].data = NULL;
    }
  return st;
}

static inline void outputs_free(actx_tensor *out, size_t n_out) {
  for (size_t i = 0; i < n_out; i++) {
    free(out[i].data);
    out[i].data = NULL;
  }
}

/* Expects node on inputs in to be refused (at create, shapes or run) with
 * ACTX_ERROR_INVALID_ARGUMENT and a message containing want. */
#define CHECK_FAILS(node, in, n_in, n_out, want) \
  check_fails_at(__FILE__, __LINE__, node, in, n_in, n_out, want)
static inline void check_fails_at(const char *file, int line, const actx_bf16_node *node,
                                  const actx_tensor *in, size_t n_in, size_t n_out,
                                  const char *want) {
  const char *why = "";
  actx_tensor out[ACTX_BF16_MAX_OUTPUTS];
  const actx_status st = run_node(node, in, n_in, out, n_out, NULL, &why);
  if (st == ACTX_OK) outputs_free(out, n_out);
  if (st != ACTX_ERROR_INVALID_ARGUMENT || strstr(why, want) == NULL) {
    fprintf(stderr, "%s:%d: wanted a refusal naming \"%s\", got status %d \"%s\"\n", file,
            line, want, (int)st, why);
    failures++;
  }
}

/* Runs node on one thread and split over test_par: the split must happen and change no bit. */
#define CHECK_SPLIT_SAME(node, in, n_in, n_out) \
  check_split_same_at(__FILE__, __LINE__, node, in, n_in, n_out)
static inline void check_split_same_at(const char *file, int line,
                                       const actx_bf16_node *node, const actx_tensor *in,
                                       size_t n_in, size_t n_out) {
  actx_tensor one[ACTX_BF16_MAX_OUTPUTS], split[ACTX_BF16_MAX_OUTPUTS];
  const char *why = "";
  const size_t calls = par_calls;
  bool ok = run_node(node, in, n_in, one, n_out, NULL, &why) == ACTX_OK;
  ok = run_node(node, in, n_in, split, n_out, &test_par, &why) == ACTX_OK && ok;
  ok = ok && par_calls > calls;
  for (size_t i = 0; ok && i < n_out; i++) {
    if (one[i].elem == ACTX_ELEM_COUNT) continue;
    const size_t bytes = (size_t)actx_shape_elements(&one[i].shape) * elem_size(one[i].elem);
    ok = memcmp(one[i].data, split[i].data, bytes) == 0;
  }
  if (!ok) {
    fprintf(stderr, "%s:%d: the split over threads did not happen or changed bits (%s)\n", file,
            line, why);
    failures++;
  }
  outputs_free(one, n_out);
  outputs_free(split, n_out);
}

/* The bfloat16 values a result r (exact, double) may round to when the float32 computation is
 * within err of it: [round(r - err), round(r + err)], rounding being monotonic. */
static inline bool bf16_within(uint16_t got, double r, double err) {
  const float lo = (float)(r - err), hi = (float)(r + err);
  /* (float) of a double rounds to nearest too; widen by one float32 ulp each way for it */
  const float g = fb(got);
  return g >= fb(bf(nextafterf(lo, -INFINITY))) && g <= fb(bf(nextafterf(hi, INFINITY)));
}

/* A test program's end: its failure count on stderr and 1, or how many of what it checked and
 * 0. main returns it. */
static inline int test_exit(const char *name, long checked, const char *what) {
  if (failures) {
    fprintf(stderr, "%s: %d failures\n", name, failures);
    return 1;
  }
  printf("%s: %ld %s\n", name, checked, what);
  return 0;
}

#endif /* ACTX_BF16_TEST_RUN_H */
