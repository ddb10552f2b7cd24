/* Running our nodes. Two wrappers share one compute path:
 *   - OrtNodeComputeInfo (CreateState / Compute / ReleaseState) for a compiled node: claimed
 *     nodes or fused subgraphs computed in turn, one actx_compute() call each, every one on the
 *     previous one's output;
 *   - OrtKernelImpl (Compute / Release) for a single node ORT runs from our kernel registry
 *     (registry.c) like one of its own kernels, without the compiled node's wrapper.
 *
 * Everything a Compute call needs that is not in the kernel context is fixed when the kernel is
 * built and never written afterwards, so concurrent Run() calls on one session (ORT allows them
 * and may call Compute for the same node from several threads at once) share it read-only; all
 * per-call state lives on the stack. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "../src/half.h" /* libactx's own widening and rounding: its float16 kernels' bits */
#include "actx_ep.h"

/* Tensors below this many elements run on the calling thread without touching ORT's pool. A
 * split pays once each thread gets more work than a wake-up costs, so the threshold goes with
 * the op's cost per element. Measured (docs/ep-policy.md, "Splitting over ORT's pool": the EP
 * on 2 threads against 1, 3 runs): GELU and erf (~1 ns/element) gain 1.02-1.23x at 64 Ki;
 * the cheaper ops (~0.4-0.6 ns) lose at 64 Ki (0.86-1.02) and gain at 128 Ki, clearly for
 * tanh GELU and QuickGelu (1.16-1.30x), on average for tanh and sigmoid (0.86-1.35x) — which
 * there still must split, since ORT's own kernels do and left alone we ran 0.85-1.00x of ORT.
 * actx_compute() itself never makes tasks under actx_min_elements_per_task() (16 Ki). */
#ifdef ACTX_EP_PARALLEL_MIN_ELEMENTS /* measurement builds sweep it (1: split what libactx can) */
static size_t parallel_min_elements(actx_op op) {
  (void)op;
  return ACTX_EP_PARALLEL_MIN_ELEMENTS;
}
#else
static size_t parallel_min_elements(actx_op op) {
  switch (op) {
    case ACTX_OP_ERF:
    case ACTX_OP_GELU: return 65536;
    case ACTX_OP_GELU_TANH:
    case ACTX_OP_QUICK_GELU:
    case ACTX_OP_TANH:
    case ACTX_OP_SIGMOID: return 131072;
    case ACTX_OP_COUNT: break;
  }
  return 65536;
}
#endif

/* One activation of a compiled node, as Compile saw it. */
typedef struct kernel_step {
  actx_ep_node node;
  size_t bias_input; /* index among the fused node's inputs; valid when node.has_bias */
  bool bias_is_x;    /* the bias is the value the step computes on (BiasGelu(t, t) inside a
                        group): no input of the fused node */
  actx_plan *plan;   /* node's op, made with the kernel */
  actx_plan *plan_f32; /* the float32 op, for a float16 island (below); else NULL */
} kernel_step;

/* A compiled node (claimed nodes or fused subgraphs, each step computing on the previous
 * step's output) or a registered kernel (one step). */
typedef struct actx_ep_kernel {
  OrtNodeComputeInfo info; /* a compiled node's: ORT hands &info back */
  OrtKernelImpl impl;      /* a registered kernel's: ORT hands &impl back */
  const OrtApi *api;
  size_t x_input; /* index among the fused node's inputs */
  /* float16 claims in a row: ORT alone (no float16 kernel for any of them) computes them as one
   * float32 island between Casts, rounding once at its end; so the steps run their float32
   * plans on x widened once, and the result is rounded once. A lone step is unchanged
   * (libactx's float16 kernel is exactly round(float32 kernel(widened x))). bfloat16 keeps a
   * rounding per step: ORT alone cannot run these ops in bfloat16 at all (docs/ep-policy.md). */
  bool f32_island;
  bool f16c;      /* the island converts with F16C (widen, narrow) */
  char name[128]; /* for error messages */
  size_t n_steps;
  kernel_step steps[];
} actx_ep_kernel;

void actx_ep_ort_parallel_for(void *runner_ctx, actx_task_fn task, void *task_ctx,
                              size_t num_tasks) {
  const actx_ep_ort_runner *r = runner_ctx;
  /* num_batch 0: one work item per task, handed out dynamically to the pool's threads */
  OrtStatus *st = r->api->KernelContext_ParallelFor(r->context, task, num_tasks, 0, task_ctx);
  if (st != NULL) {
    /* The pool refused (it only does so for a missing context); the tasks still have to run,
     * and any split gives the same bits, so run them here. */
    r->api->ReleaseStatus(st);
    for (size_t i = 0; i < num_tasks; i++) task(task_ctx, i);
  }
}

/* The probe: a ParallelFor whose tasks each note their thread. A thread's first task holds it
 * until a window from the probe's start has passed, so that the pool's other threads, which may
 * be asleep and slow to wake on a loaded machine, have the time to take tasks too; the rest of
 * the tasks then run at once. The window bounds what the probe costs (once per session). */
#define PROBE_TASKS 64
#define PROBE_MAX_THREADS 256
#define PROBE_WINDOW_NS 5000000L
typedef struct pool_probe {
  struct timespec start;
  _Atomic(unsigned long) seen[PROBE_MAX_THREADS];
  _Atomic(size_t) n_seen;
} pool_probe;

static long elapsed_ns(const struct timespec *since) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (now.tv_sec - since->tv_sec) * 1000000000L + (now.tv_nsec - since->tv_nsec);
}

static void probe_task(void *ctx, size_t task) {
  (void)task;
  pool_probe *p = ctx;
  const unsigned long self = (unsigned long)pthread_self();
  const size_t n = atomic_load(&p->n_seen);
  for (size_t i = 0; i < n && i < PROBE_MAX_THREADS; i++)
    if (atomic_load(&p->seen[i]) == self) return; /* not this thread's first task */
  const size_t at = atomic_fetch_add(&p->n_seen, 1); /* a thread adds itself once: it runs its
                                                        tasks in turn */
  if (at < PROBE_MAX_THREADS) atomic_store(&p->seen[at], self);
  while (elapsed_ns(&p->start) < PROBE_WINDOW_NS) {
  }
}

size_t actx_ep_ort_pool_threads(const actx_ep_ort_runner *runner) {
  pool_probe *p = calloc(1, sizeof *p);
  if (p == NULL) return 1;
  clock_gettime(CLOCK_MONOTONIC, &p->start);
  actx_ep_ort_parallel_for((void *)runner, probe_task, p, PROBE_TASKS);
  size_t n = atomic_load(&p->n_seen);
  free(p);
  if (n > PROBE_MAX_THREADS) n = PROBE_MAX_THREADS;
  return n > 0 ? n : 1;
}

/* actx_ep_ort_pool_call_ns: each probe's tasks wait for one another, at most CALL_WAIT_NS from
 * the call (a pool that hands two tasks to one thread ends it there) */
#define CALL_PROBES 5
#define CALL_WAIT_NS 2000000L
typedef struct call_probe {
  struct timespec start;
  size_t threads;
  _Atomic(size_t) arrived;
} call_probe;

static void call_task(void *ctx, size_t task) {
  (void)task;
  call_probe *p = ctx;
  atomic_fetch_add(&p->arrived, 1);
  while (atomic_load(&p->arrived) < p->threads && elapsed_ns(&p->start) < CALL_WAIT_NS) {
  }
}

uint64_t actx_ep_ort_pool_call_ns(const actx_ep_ort_runner *runner, size_t threads) {
  if (threads <= 1) return 0;
  long ns[CALL_PROBES];
  for (size_t i = 0; i < CALL_PROBES; i++) {
    call_probe p = {.threads = threads};
    clock_gettime(CLOCK_MONOTONIC, &p.start);
    actx_ep_ort_parallel_for((void *)runner, call_task, &p, threads);
    ns[i] = elapsed_ns(&p.start);
  }
  for (size_t i = 1; i < CALL_PROBES; i++) /* sorted, for the median */
    for (size_t j = i; j > 0 && ns[j] < ns[j - 1]; j--) {
      const long t = ns[j];
      ns[j] = ns[j - 1];
      ns[j - 1] = t;
    }
  return (uint64_t)ns[CALL_PROBES / 2];
}

static OrtStatus *create_state(OrtNodeComputeInfo *self, OrtNodeComputeContext *context,
                               void **state) {
  (void)context;
  *state = self; /* nothing per session beyond the kernel itself */
  return NULL;
}

static void release_state(OrtNodeComputeInfo *self, void *state) {
  (void)self;
  (void)state;
}

/* The step's bias as ORT hands it: *data NULL where the step reads its own input as the bias
 * (bias_is_x), which the caller then supplies; *len 0 without a bias. */
static OrtStatus *step_bias(const actx_ep_kernel *k, const kernel_step *step,
                            OrtKernelContext *context, const int64_t *dims, size_t rank,
                            const void **data, size_t *len) {
  const OrtApi *api = k->api;
  *data = NULL;
  *len = 0;
  if (!step->node.has_bias) return NULL;
  if (step->bias_is_x) {
    /* ORT's rule (a 1-D bias of the input's last dimension) on x itself: x is 1-D */
    if (rank != 1)
      return actx_ep_error(api, ORT_INVALID_ARGUMENT,
                           "%s: bias must be 1-D with the input's last dimension", k->name);
    *len = (size_t)dims[0];
    return NULL;
  }
  /* The shapes were checked at claim time where known; a symbolic one is checked here, with
   * ORT's own rule (1-D, the input's last dimension). */
  const OrtValue *bias = NULL;
  OrtStatus *st = api->KernelContext_GetInput(context, step->bias_input, &bias);
  if (st != NULL) return st;
  ONNXTensorElementDataType btype;
  const int64_t *bdims = NULL;
  size_t brank = 0;
  if (bias == NULL ||
      (st = api->GetTensorElementTypeAndShapeDataReference(bias, &btype, &bdims, &brank)) != NULL)
    return st != NULL ? st : actx_ep_error(api, ORT_EP_FAIL, "%s: bias is missing", k->name);
  if (step->node.bias_is_scalar) {
    /* a constant initializer: its type and shape were read at claim time */
    *len = 1;
  } else {
    if (btype != step->node.elem_type || brank != 1 || rank < 1 || bdims[0] != dims[rank - 1])
      return actx_ep_error(api, ORT_INVALID_ARGUMENT,
                           "%s: bias must be 1-D with the input's last dimension", k->name);
    *len = (size_t)bdims[0];
  }
  return api->GetTensorData(bias, data);
}

/* y = op(src [+ bias]) for one step with plan; src is x or, after the first step, y itself. */
static OrtStatus *run_plan(const actx_ep_kernel *k, const kernel_step *step,
                           const actx_plan *plan, OrtKernelContext *context, const void *src,
                           void *y, size_t n, const void *bias, size_t bias_len) {
  const actx_ep_ort_runner runner = {k->api, context};
  const actx_parallel par = {actx_ep_ort_parallel_for, (void *)&runner, SIZE_MAX, 0};
  const actx_status status = actx_plan_run(plan, src, y, n, bias, bias_len,
                                           n >= parallel_min_elements(step->node.op) ? &par : NULL);
  if (status != ACTX_OK)
    return actx_ep_error(k->api, ORT_EP_FAIL, "%s: actx_plan_run: %s", k->name,
                         actx_status_string(status));
  return NULL;
}

/* The steps in their own dtype, each on the previous one's output: each step's result is what a
 * separate node would have written, so the next step reads the same values it would have
 * (actx_compute may work in place). */
static OrtStatus *run_steps(const actx_ep_kernel *k, OrtKernelContext *context,
                            const void *x_data, void *y_data, size_t n, size_t elem_size,
                            const int64_t *dims, size_t rank) {
  OrtStatus *st = NULL;
  for (size_t i = 0; i < k->n_steps && st == NULL; i++) {
    const kernel_step *step = &k->steps[i];
    const void *src = i == 0 ? x_data : y_data, *bias = NULL;
    size_t bias_len = 0;
    void *copy = NULL;
    if ((st = step_bias(k, step, context, dims, rank, &bias, &bias_len)) != NULL) break;
    if (step->bias_is_x) { /* a copy: y is written while the bias is read */
      if ((copy = malloc(n * elem_size)) == NULL)
        return actx_ep_error(k->api, ORT_FAIL, "%s: out of memory", k->name);
      bias = memcpy(copy, src, n * elem_size);
    }
    st = run_plan(k, step, step->plan, context, src, y_data, n, bias, bias_len);
    free(copy);
  }
  return st;
}

/* float16 ↔ float32 for the island, with half.h's bits (those of F16C, which libactx's AVX2 path
 * uses); with F16C (libactx's AVX2 ISA requires it) 8 at a time: half.h's scalar conversions
 * cost 2-3 ns an element, more than the kernels. */
#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx,f16c"))) static size_t widen_f16c(const uint16_t *h, float *f,
                                                              size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(f + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(h + i))));
  return i;
}

__attribute__((target("avx,f16c"))) static size_t narrow_f16c(const float *f, uint16_t *h,
                                                               size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128((__m128i *)(h + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(f + i), _MM_FROUND_TO_NEAREST_INT));
  return i;
}
#define HAVE_F16C_PATH 1
#else
#define HAVE_F16C_PATH 0
#endif

static void widen(bool f16c, const uint16_t *h, float *f, size_t n) {
  size_t i = 0;
#if HAVE_F16C_PATH
  if (f16c) i = widen_f16c(h, f, n);
#else
  (void)f16c;
#endif
  for (; i < n; i++) f[i] = actx_f16_to_f32(h[i]);
}

static void narrow(bool f16c, const float *f, uint16_t *h, size_t n) {
  size_t i = 0;
#if HAVE_F16C_PATH
  if (f16c) i = narrow_f16c(f, h, n);
#else
  (void)f16c;
#endif
  for (; i < n; i++) h[i] = actx_f32_to_f16(f[i]);
}

/* The float16 island: x (and each float16 bias) widened once, every step's float32 plan on a
 * float32 buffer, rounded to float16 once at the end. */
static OrtStatus *run_f32_island(const actx_ep_kernel *k, OrtKernelContext *context,
                                 const uint16_t *x_data, uint16_t *y_data, size_t n,
                                 const int64_t *dims, size_t rank) {
  float *w = malloc(n * sizeof *w);
  if (w == NULL) return actx_ep_error(k->api, ORT_FAIL, "%s: out of memory", k->name);
  widen(k->f16c, x_data, w, n);
  OrtStatus *st = NULL;
  for (size_t i = 0; i < k->n_steps && st == NULL; i++) {
    const kernel_step *step = &k->steps[i];
    const void *bias = NULL;
    size_t bias_len = 0;
    float *wide_bias = NULL;
    if ((st = step_bias(k, step, context, dims, rank, &bias, &bias_len)) != NULL) break;
    if (step->node.has_bias) {
      if ((wide_bias = malloc(bias_len * sizeof *wide_bias)) == NULL) {
        st = actx_ep_error(k->api, ORT_FAIL, "%s: out of memory", k->name);
        break;
      }
      if (step->bias_is_x) /* a copy: w is written while the bias is read */
        memcpy(wide_bias, w, bias_len * sizeof *wide_bias);
      else
        widen(k->f16c, bias, wide_bias, bias_len);
    }
    st = run_plan(k, step, step->plan_f32, context, w, w, n, wide_bias, bias_len);
    free(wide_bias);
  }
  if (st == NULL)
    narrow(k->f16c, w, y_data, n);
  free(w);
  return st;
}

static OrtStatus *compute(const actx_ep_kernel *k, OrtKernelContext *context) {
  const OrtApi *api = k->api;

  const OrtValue *x = NULL;
  OrtStatus *st = api->KernelContext_GetInput(context, k->x_input, &x);
  if (st != NULL) return st;
  if (x == NULL) return actx_ep_error(api, ORT_EP_FAIL, "%s: input 0 is missing", k->name);
  ONNXTensorElementDataType type;
  const int64_t *dims = NULL;
  size_t rank = 0;
  if ((st = api->GetTensorElementTypeAndShapeDataReference(x, &type, &dims, &rank)) != NULL)
    return st;
  if (type != k->steps[0].node.elem_type)
    return actx_ep_error(api, ORT_EP_FAIL, "%s: input element type %d, compiled for %d",
                         k->name, (int)type, (int)k->steps[0].node.elem_type);
  size_t n = 1;
  for (size_t i = 0; i < rank; i++) {
    if (dims[i] < 0 || (dims[i] != 0 && n > SIZE_MAX / (size_t)dims[i]))
      return actx_ep_error(api, ORT_EP_FAIL, "%s: invalid input shape", k->name);
    n *= (size_t)dims[i];
  }

  OrtValue *y = NULL;
  if ((st = api->KernelContext_GetOutput(context, 0, dims, rank, &y)) != NULL) return st;
  if (n == 0) return NULL;
  const void *x_data = NULL;
  void *y_data = NULL;
  if ((st = api->GetTensorData(x, &x_data)) != NULL) return st;
  if ((st = api->GetTensorMutableData(y, &y_data)) != NULL) return st;
  st = k->f32_island ? run_f32_island(k, context, x_data, y_data, n, dims, rank)
                     : run_steps(k, context, x_data, y_data, n,
                                 actx_dtype_size(k->steps[0].node.dtype), dims, rank);
#ifdef ACTX_EP_TEST_WRONG_BITS
  /* test-only build (tests/tools): a result one bit off, which the A/B tool must report */
  if (st == NULL)
    *(unsigned char *)y_data ^= 1;
#endif
  return st;
}

static OrtStatus *compute_info_compute(OrtNodeComputeInfo *self, void *state,
                                       OrtKernelContext *context) {
  (void)state;
  return compute((const actx_ep_kernel *)self, context);
}

static actx_ep_kernel *kernel_of_impl(OrtKernelImpl *impl) {
  return (actx_ep_kernel *)((char *)impl - offsetof(actx_ep_kernel, impl));
}

static OrtStatus *kernel_impl_compute(OrtKernelImpl *self, OrtKernelContext *context) {
  return compute(kernel_of_impl(self), context);
}

static void kernel_free(actx_ep_kernel *k) {
  if (k == NULL) return;
  for (size_t i = 0; i < k->n_steps; i++) {
    actx_plan_destroy(k->steps[i].plan);
    actx_plan_destroy(k->steps[i].plan_f32);
  }
  free(k);
}

static void kernel_impl_release(OrtKernelImpl *self) { kernel_free(kernel_of_impl(self)); }

/* The step's plan, made with the session: whatever libactx decides once (a float16 / bfloat16
 * table included) is not paid in a Run(). */
static OrtStatus *make_plan(const OrtApi *api, kernel_step *step, bool f32_island,
                            const char *label) {
  const actx_op_desc desc = {.op = step->node.op, .dtype = step->node.dtype,
                             .alpha = step->node.alpha};
  const actx_op_desc desc_f32 = {.op = step->node.op, .dtype = ACTX_F32,
                                 .alpha = step->node.alpha};
  actx_status st = actx_plan_create(&desc, &step->plan);
  if (st == ACTX_OK && f32_island) st = actx_plan_create(&desc_f32, &step->plan_f32);
  return st == ACTX_OK ? NULL
                       : actx_ep_error(api, ORT_EP_FAIL, "%s: actx_plan_create: %s", label,
                                       actx_status_string(st));
}

OrtStatus *actx_ep_single_kernel_create(const OrtApi *api, const actx_ep_node *node,
                                        const char *label, OrtKernelImpl **out) {
  *out = NULL;
  actx_ep_kernel *k = calloc(1, sizeof *k + sizeof k->steps[0]);
  if (k == NULL) return actx_ep_error(api, ORT_FAIL, "out of memory creating %s", label);
  k->impl.ort_version_supported = ORT_API_VERSION;
  k->impl.Compute = kernel_impl_compute;
  k->impl.Release = kernel_impl_release;
  k->api = api;
  k->n_steps = 1; /* calloc'ed: x is input 0 */
  k->steps[0].node = *node;
  k->steps[0].bias_input = 1; /* BiasGelu's and FastGelu's input 1 */
  snprintf(k->name, sizeof k->name, "%s", label);
  OrtStatus *st = make_plan(api, &k->steps[0], false, label);
  if (st != NULL) {
    kernel_free(k);
    return st;
  }
  *out = &k->impl;
  return NULL;
}

/* Where a value named `name` sits among the fused node's inputs. */
static OrtStatus *find_input(const OrtApi *api, const OrtValueInfo *const *inputs, size_t n,
                             const char *name, size_t *index, bool *found) {
  *found = false;
  for (size_t i = 0; i < n; i++) {
    const char *in_name = NULL;
    OrtStatus *st = inputs[i] != NULL ? api->GetValueInfoName(inputs[i], &in_name) : NULL;
    if (st != NULL) return st;
    if (in_name != NULL && strcmp(in_name, name) == 0) {
      *index = i;
      *found = true;
      return NULL;
    }
  }
  return NULL;
}

OrtStatus *actx_ep_kernel_create(const OrtApi *api, const actx_ep_step *steps, size_t n_steps,
                                 const char *x_name, const char *label, const OrtNode *fused_node,
                                 OrtNodeComputeInfo **out) {
  *out = NULL;
  /* ORT may drop a repeated input, so the fused node's inputs are mapped by name */
  size_t n_in = 0;
  OrtStatus *st = api->Node_GetNumInputs(fused_node, &n_in);
  if (st != NULL) return st;
  if (n_in == 0 || n_steps == 0)
    return actx_ep_error(api, ORT_EP_FAIL, "%s: %zu inputs, %zu steps", label, n_in,
                         n_steps);
  const OrtValueInfo **inputs = malloc(n_in * sizeof *inputs);
  actx_ep_kernel *k = calloc(1, sizeof *k + n_steps * sizeof k->steps[0]);
  if (inputs == NULL || k == NULL) {
    free(inputs);
    free(k);
    return actx_ep_error(api, ORT_FAIL, "out of memory compiling %s", label);
  }
  k->info.ort_version_supported = ORT_API_VERSION;
  k->info.CreateState = create_state;
  k->info.Compute = compute_info_compute;
  k->info.ReleaseState = release_state;
  k->api = api;
  k->n_steps = n_steps;
  k->f32_island = n_steps > 1 && steps[0].node.dtype == ACTX_F16;
  k->f16c = actx_isa_supported(ACTX_ISA_AVX2) != 0;
  snprintf(k->name, sizeof k->name, "%s", label);
  bool found = false;
  st = api->Node_GetInputs(fused_node, inputs, n_in);
  if (st == NULL) st = find_input(api, inputs, n_in, x_name, &k->x_input, &found);
  if (st == NULL && !found)
    st = actx_ep_error(api, ORT_EP_FAIL, "%s: input '%s' not among the fused node's inputs",
                       label, x_name);
  for (size_t i = 0; i < n_steps && st == NULL; i++) {
    const actx_ep_node *info = &steps[i].node;
    k->steps[i].node = *info;
    if (info->has_bias != (steps[i].bias_name != NULL) ||
        info->elem_type != steps[0].node.elem_type) {
      st = actx_ep_error(api, ORT_EP_FAIL, "%s: step %zu does not fit the others", label, i);
      break;
    }
    k->steps[i].bias_is_x = steps[i].bias_is_x;
    if (info->has_bias && !steps[i].bias_is_x) {
      st = find_input(api, inputs, n_in, steps[i].bias_name, &k->steps[i].bias_input, &found);
      if (st == NULL && !found)
        st = actx_ep_error(api, ORT_EP_FAIL,
                           "%s: bias '%s' not among the fused node's inputs", label,
                           steps[i].bias_name);
    }
    if (st == NULL) st = make_plan(api, &k->steps[i], k->f32_island, label);
  }
  free(inputs);
  if (st != NULL) {
    kernel_free(k);
    return st;
  }
  *out = &k->info;
  return NULL;
}

void actx_ep_kernel_release(OrtNodeComputeInfo *info) {
  /* NULL, as free: Compile's all-or-nothing cleanup releases the slots it never filled (and
   * stepping back from a null pointer, even by 0, is undefined: fuzz_ep found it there) */
  if (info == NULL) return;
  kernel_free((actx_ep_kernel *)((char *)info - offsetof(actx_ep_kernel, info)));
}
