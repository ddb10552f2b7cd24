/* actx — activation kernels bit-identical to ONNX Runtime's CPU math library (MLAS).
 *
 * Every function computes, element by element, exactly the bits ORT 1.30's CPU execution
 * provider produces for the matching node on the same host (ORT picks other kernels on an
 * AVX-512 host: see actx_ort_rule), whatever the tensor's length, alignment, thread count or
 * the instruction set actx runs on.
 *
 * Conventions shared by every entry point:
 *   - x and y hold n elements; y == x (in place) is allowed; any other overlap is not.
 *   - Any alignment. n == 0 is a no-op that succeeds (pointers may then be NULL).
 *   - Bias variants take a bias of length h and compute op(x[i] + bias[i mod h]); n must be a
 *     multiple of h (h is the innermost dimension, as in ORT's BiasGelu / FastGelu). When both
 *     x[i] and its bias are NaN, x[i]'s NaN (made quiet) is the one that propagates.
 *   - float16 and bfloat16 are passed as uint16_t bit patterns. They are widened to float32,
 *     computed with the float32 arithmetic, and rounded once to nearest-even.
 *   - Errors are returned, never raised; actx_status_string() names them.
 *   - The convenience functions (actx_erf_f32, ...) run on the calling thread and on the
 *     threads of actx_set_num_threads() (default 1: no thread is ever started unless asked).
 *     actx_compute() takes the caller's own parallel-for instead (ORT's pool, OpenMP, ...).
 */
#ifndef ACTX_H
#define ACTX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define ACTX_API __declspec(dllexport)
#else
#define ACTX_API __attribute__((visibility("default")))
#endif

#define ACTX_VERSION_MAJOR 0
#define ACTX_VERSION_MINOR 1
#define ACTX_VERSION_PATCH 0

typedef enum actx_status {
  ACTX_OK = 0,
  ACTX_ERROR_NULL_POINTER,     /* x, y (or bias) is NULL while n > 0 */
  ACTX_ERROR_INVALID_BIAS,     /* bias length 0, or n not a multiple of it */
  ACTX_ERROR_INVALID_ARGUMENT, /* unknown op, dtype or ISA; a field that op does not take */
  ACTX_ERROR_OVERLAP,          /* x and y overlap without being equal */
  ACTX_ERROR_UNSUPPORTED,      /* the requested ISA is not available on this CPU */
  ACTX_ERROR_OUT_OF_MEMORY,    /* the built-in thread pool could not be created */
} actx_status;

ACTX_API const char *actx_status_string(actx_status status);

/* ---- Operations ------------------------------------------------------------------------- */

typedef enum actx_op {
  ACTX_OP_ERF = 0,    /* ai.onnx Erf */
  ACTX_OP_GELU,       /* exact GELU 0.5·x·(1+erf(x/√2)); optional bias = com.microsoft BiasGelu */
  ACTX_OP_GELU_TANH,  /* tanh GELU (ai.onnx Gelu approximate="tanh"); optional bias = FastGelu */
  ACTX_OP_QUICK_GELU, /* x·sigmoid(alpha·x) (com.microsoft QuickGelu; alpha = 1 is SiLU) */
  ACTX_OP_TANH,       /* ai.onnx Tanh */
  ACTX_OP_SIGMOID,    /* ai.onnx Sigmoid */
  ACTX_OP_COUNT
} actx_op;

typedef enum actx_dtype {
  ACTX_F32 = 0,
  ACTX_F16,  /* IEEE binary16 */
  ACTX_BF16, /* bfloat16 */
  ACTX_DTYPE_COUNT
} actx_dtype;

ACTX_API const char *actx_op_name(actx_op op);
ACTX_API const char *actx_dtype_name(actx_dtype dtype);
/* Size in bytes of one element, 0 for an unknown dtype. */
ACTX_API size_t actx_dtype_size(actx_dtype dtype);

/* What to compute. Zero-initialise, then set op and dtype; bias/bias_len only for ACTX_OP_GELU
 * and ACTX_OP_GELU_TANH (NULL/0 = no bias), alpha only for ACTX_OP_QUICK_GELU. */
typedef struct actx_op_desc {
  actx_op op;
  actx_dtype dtype;
  const void *bias; /* bias_len elements of dtype */
  size_t bias_len;
  float alpha;
} actx_op_desc;

/* Default QuickGelu alpha, as in ORT's com.microsoft QuickGelu. */
#define ACTX_QUICK_GELU_DEFAULT_ALPHA 1.702f

/* ---- Threads ----------------------------------------------------------------------------- */

/* A caller's parallel-for: run task(task_ctx, i) for every i in [0, num_tasks), on any threads,
 * and return when all have finished. The signature of task matches ORT's
 * KernelContext_ParallelFor callback, so an ORT kernel can pass its pool straight through. */
typedef void (*actx_task_fn)(void *task_ctx, size_t task_index);
typedef void (*actx_parallel_for_fn)(void *runner_ctx, actx_task_fn task, void *task_ctx,
                                     size_t num_tasks);

typedef struct actx_parallel {
  actx_parallel_for_fn parallel_for; /* NULL: run on the calling thread */
  void *runner_ctx;
  size_t max_tasks; /* how many tasks are worth creating (usually the thread count); 0 = 1 */
  /* What a parallel_for call costs beyond its tasks' work, in nanoseconds, as the caller
   * measured it (0: not known, taken as negligible): waking a pool's sleeping threads costs tens
   * of microseconds, a spinning pool's one. libactx's activations split by element counts alone
   * (actx_min_elements_per_task); the bfloat16 service splits a run only where each task carries
   * at least twice this much work. */
  uint64_t call_ns;
} actx_parallel;

/* Tensors with fewer elements than this per task are not split: below it, waking a thread
 * costs more than the work (docs/ep-policy.md, "Splitting over ORT's pool"). */
ACTX_API size_t actx_min_elements_per_task(actx_dtype dtype);

/* Computes y = op(x) over n elements. par may be NULL (calling thread only). Results are the
 * same bits for every split. */
ACTX_API actx_status actx_compute(const actx_op_desc *desc, const void *x, void *y, size_t n,
                                  const actx_parallel *par);

/* Does now the one-time work that actx_compute() would do on the first long tensor of this op
 * and dtype (float16 / bfloat16 erf, GELU, tanh GELU and SiLU, QuickGelu at alpha 1, build a
 * 128 KiB table of all 65,536 results, ~0.1-0.2 ms), so that no later call pays it. Optional; thread-safe; the same
 * argument checks as actx_compute(). ACTX_ERROR_OUT_OF_MEMORY if the table cannot be
 * allocated (actx_compute() then runs the kernel instead: same bits). */
ACTX_API actx_status actx_prepare(const actx_op_desc *desc);

/* ---- Plans: one op, many tensors ------------------------------------------------------------ */

/* What actx_compute() works out from the descriptor alone (its checks, the kernel of the ISA in
 * use, the ORT rule's parameters), done once, so that an op run again and again on small
 * tensors (an ORT kernel, a decode loop) pays per call only for the tensor. A plan keeps the
 * ISA and ORT rule in force when it was made (actx_set_isa() / actx_set_ort_rule() later do not
 * change it) and holds nothing else of the caller's: several threads may run one plan at once. */
typedef struct actx_plan actx_plan;

/* Checks desc as actx_prepare() does and does its one-time work. desc's bias and bias_len are
 * checked, not kept: each run passes its own. ACTX_ERROR_OUT_OF_MEMORY if the plan cannot be
 * allocated (a table that cannot be is not an error here: the plan then runs the kernel). */
ACTX_API actx_status actx_plan_create(const actx_op_desc *desc, actx_plan **plan);
/* actx_compute() of the plan's op on n elements, with bias/bias_len as actx_op_desc's (NULL/0 =
 * none): the same checks, errors and bits. */
ACTX_API actx_status actx_plan_run(const actx_plan *plan, const void *x, void *y, size_t n,
                                   const void *bias, size_t bias_len, const actx_parallel *par);
/* Frees a plan; NULL is a no-op. */
ACTX_API void actx_plan_destroy(actx_plan *plan);

/* Threads used by the convenience functions below: a built-in pthread pool of n - 1 workers
 * plus the caller. 0 or 1 means no pool. The initial value comes from the environment variable
 * ACTX_NUM_THREADS, else 1. Not to be called while a convenience function runs. */
ACTX_API actx_status actx_set_num_threads(size_t n);
ACTX_API size_t actx_get_num_threads(void);

/* ---- Convenience entry points (float32) ----------------------------------------------------- */

ACTX_API actx_status actx_erf_f32(const float *x, float *y, size_t n);
ACTX_API actx_status actx_gelu_f32(const float *x, float *y, size_t n);
ACTX_API actx_status actx_gelu_tanh_f32(const float *x, float *y, size_t n);
/* gelu(x + bias[i mod h]) */
ACTX_API actx_status actx_bias_gelu_f32(const float *x, float *y, size_t n, const float *bias,
                                        size_t h);
/* tanh gelu(x + bias[i mod h]); bias may be NULL with h == 0 (then it equals actx_gelu_tanh_f32) */
ACTX_API actx_status actx_fast_gelu_f32(const float *x, float *y, size_t n, const float *bias,
                                        size_t h);
ACTX_API actx_status actx_quick_gelu_f32(const float *x, float *y, size_t n, float alpha);
ACTX_API actx_status actx_tanh_f32(const float *x, float *y, size_t n);
ACTX_API actx_status actx_sigmoid_f32(const float *x, float *y, size_t n);

/* ---- Convenience entry points (float16, bfloat16 as uint16_t bit patterns) ----------------- */

#define ACTX_DECLARE_HALF_API(suffix)                                                          \
  ACTX_API actx_status actx_erf_##suffix(const uint16_t *x, uint16_t *y, size_t n);            \
  ACTX_API actx_status actx_gelu_##suffix(const uint16_t *x, uint16_t *y, size_t n);           \
  ACTX_API actx_status actx_gelu_tanh_##suffix(const uint16_t *x, uint16_t *y, size_t n);      \
  ACTX_API actx_status actx_bias_gelu_##suffix(const uint16_t *x, uint16_t *y, size_t n,       \
                                               const uint16_t *bias, size_t h);                \
  ACTX_API actx_status actx_fast_gelu_##suffix(const uint16_t *x, uint16_t *y, size_t n,       \
                                               const uint16_t *bias, size_t h);                \
  ACTX_API actx_status actx_quick_gelu_##suffix(const uint16_t *x, uint16_t *y, size_t n,      \
                                                float alpha);                                  \
  ACTX_API actx_status actx_tanh_##suffix(const uint16_t *x, uint16_t *y, size_t n);           \
  ACTX_API actx_status actx_sigmoid_##suffix(const uint16_t *x, uint16_t *y, size_t n);
ACTX_DECLARE_HALF_API(f16)
ACTX_DECLARE_HALF_API(bf16)
#undef ACTX_DECLARE_HALF_API

/* ---- Instruction set ----------------------------------------------------------------------- */

typedef enum actx_isa {
  ACTX_ISA_PORTABLE = 0, /* C with fmaf: the same polynomials, the same bits */
  ACTX_ISA_AVX2,         /* AVX2 + FMA3 + F16C */
  ACTX_ISA_AVX512,       /* AVX512F + AVX512BW (and the AVX2 path's features) */
  ACTX_ISA_NEON,         /* AArch64 Advanced SIMD (every AArch64 core) */
  ACTX_ISA_COUNT
} actx_isa;

/* The ISA in use: the best the CPU supports (cpuid + xgetbv, once), unless the environment
 * variable ACTX_ISA=portable|avx2|avx512|neon or actx_set_isa() chose another. */
ACTX_API actx_isa actx_get_isa(void);
ACTX_API const char *actx_isa_name(actx_isa isa);
/* Whether this CPU and OS can run isa. */
ACTX_API int actx_isa_supported(actx_isa isa);
/* Forces an ISA for the whole process (tests, benchmarks). ACTX_ERROR_UNSUPPORTED if the CPU
 * lacks it. Not to be called while another thread computes. */
ACTX_API actx_status actx_set_isa(actx_isa isa);

/* ---- Which ORT kernels the bits are those of --------------------------------------------- */

/* ORT 1.30 runs exact GELU and SiLU (QuickGelu at alpha 1) with other kernels on a CPU with
 * AVX512F (and the OS saving ZMM state) than on one without, and their results differ in two
 * places: a NaN input comes out unchanged (AVX512: the signalling bit kept; AVX2: made quiet),
 * and SiLU's logistic is clamped to at most 1 (20 float32 inputs differ). Every other op gives
 * the same bits on both. ORT's arm64 library gives the AVX2 bits except that its logistic
 * (Sigmoid, QuickGelu) clamps to at most 1 and tanh GELU's pre-pass (Gelu tanh, FastGelu) is
 * one fma there. actx follows the rule of the host it runs on, whichever ISA it uses. */
typedef enum actx_ort_rule {
  ACTX_ORT_RULE_AVX2 = 0, /* ORT's FMA3 kernels: an AVX2 host without AVX512F */
  ACTX_ORT_RULE_AVX512,   /* ORT's AVX-512F kernels for Erf, Gelu and SiLU */
  ACTX_ORT_RULE_ARM64,    /* ORT's arm64 library (MLAS's generic kernels) */
  ACTX_ORT_RULE_COUNT
} actx_ort_rule;

/* The rule in use: the one ORT applies on this CPU (cpuid + xgetbv, once), unless the
 * environment variable ACTX_ORT_RULE=avx2|avx512|arm64 or actx_set_ort_rule() chose another. */
ACTX_API actx_ort_rule actx_get_ort_rule(void);
ACTX_API const char *actx_ort_rule_name(actx_ort_rule rule);
/* Forces a rule for the whole process (tests: both rules on any host). Not to be called while
 * another thread computes. */
ACTX_API actx_status actx_set_ort_rule(actx_ort_rule rule);
/* Whether ORT on this CPU runs float16 activations with float16 kernels of its own rather than
 * through float32: an AArch64 core with FP16 arithmetic (Neoverse N1 and later, Apple M). Their
 * results are not the float32 results rounded, which actx computes. 0 on x86. */
ACTX_API int actx_ort_has_fp16_kernels(void);

/* "major.minor.patch" */
ACTX_API const char *actx_version_string(void);

#ifdef __cplusplus
}
#endif

#endif /* ACTX_H */
