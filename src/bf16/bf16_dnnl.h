/* bf16_dnnl.h — the one interface over oneDNN (the only file that includes oneDNN's headers is
 * bf16_dnnl.c): a matmul or a convolution of bfloat16 operands into a float32 result, with the
 * weights, when constant, reordered once into the layout the primitive prefers.
 *
 * Numerics: oneDNN widens bfloat16 exactly and accumulates in float32; oneDNN's destination here
 * is always float32, rounded once to bfloat16 by our own pass (actx_dnnl_round, or within a
 * convolution's run, actx_dnnl_run_rounded), actx_f32_to_bf16's bits (round to nearest even,
 * NaN quiet, subnormals kept; oneDNN's own bfloat16 destination on AVX512_BF16 uses
 * vcvtneps2bf16, which flushes subnormal results to zero). On hosts without bfloat16 arithmetic
 * oneDNN's bfloat16 primitives are its reference loops (AVX2) or an emulation whose matmuls make
 * NaN of inf · x (AVX-512 without AVX512_BF16); there an op computes in float32 instead
 * (operands widened exactly by a oneDNN reorder): the same contract, at oneDNN's float32 speed,
 * with the packed weights held in float32.
 *
 * Threads: oneDNN here is built on GNU OpenMP. Every primitive is made and run on one thread,
 * the caller's (each entry point sets that thread's OpenMP count, a per-thread ICV, to 1 and
 * restores it); the families split their work over the caller's parallel-for instead. An op is
 * run concurrently from several threads, each with its own stream, scratchpad and temporaries
 * (allocated per run): an op is immutable after creation. */
#ifndef ACTX_BF16_DNNL_H
#define ACTX_BF16_DNNL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "actx.h"
#include "bf16_family.h"

#define ACTX_DNNL_MAX_RANK 8

/* One primitive for one shape (and its reorders). */
typedef struct actx_dnnl_op actx_dnnl_op;
/* Constant weights in a primitive's preferred layout (and element type). */
typedef struct actx_dnnl_weights actx_dnnl_weights;

/* c[batch..., M, N] (float32, dense row-major) = a[batch..., M, K] · b[batch..., K, N], batch
 * dimensions broadcast numpy-style (a 1 in a or b; c has the larger). a and b are bfloat16,
 * described by dimensions and strides in elements (so a transpose is a stride). All three have
 * `rank` dimensions, 2 to ACTX_DNNL_MAX_RANK; every dimension at least 1. */
typedef struct actx_dnnl_matmul_shape {
  size_t rank;
  int64_t a_dims[ACTX_DNNL_MAX_RANK], a_strides[ACTX_DNNL_MAX_RANK];
  int64_t b_dims[ACTX_DNNL_MAX_RANK], b_strides[ACTX_DNNL_MAX_RANK];
} actx_dnnl_matmul_shape;

/* y[N, OC, out...] (float32) = conv(x[N, C, in...], w[OC, C / group, kernel...]) + bias
 * (float32 [OC], optional): x and w bfloat16; 1 to 3 spatial dimensions; dilations as ONNX has
 * them (1 = none); explicit pads. Every dimension at least 1. x and y are dense row-major, or,
 * where x_strides / y_strides are set (elements, one per dimension; all 0: dense), views of
 * larger tensors: a slab of rows of an image and the rows of the output it gives.
 * transposed: ONNX's ConvTranspose instead (oneDNN's deconvolution), input position i reaching
 * outputs i · stride + k · dilation - pads_begin; w is then ONNX's [C, OC / group, kernel...]
 * as the caller holds it (packing and runtime weights), and out is given (the caller applies
 * output_padding and output_shape; bf16_conv.c keeps pads_end at 0 or above: oneDNN made no
 * primitive for some negative ones). */
typedef struct actx_dnnl_conv_shape {
  size_t spatial;
  int64_t batch, channels, out_channels, group;
  int64_t in[3], kernel[3], out[3], strides[3], dilations[3], pads_begin[3], pads_end[3];
  int64_t x_strides[5], y_strides[5];
  bool bias;
  bool transposed;
} actx_dnnl_conv_shape;

/* Whether oneDNN is in this build (else every function below fails with "oneDNN not
 * available") and its engine could be made. */
bool actx_dnnl_available(void);
/* Whether this host's oneDNN computes bfloat16 natively (AVX512_BF16, AMX), for tests' notes. */
bool actx_dnnl_native_bf16(void);

/* Reorders constant weights (b of a matmul, 2-D: every batch dimension of the shape's b is 1;
 * w of a conv) once into the layout a primitive for this shape prefers. The result serves ops
 * of other shapes with the same weights (another M, another image size): an op whose primitive
 * prefers another layout reorders them once, at creation, into a copy of its own. */
actx_status actx_dnnl_matmul_pack(const actx_dnnl_matmul_shape *shape, const uint16_t *b,
                                  actx_dnnl_weights **out, const char **why);
actx_status actx_dnnl_conv_pack(const actx_dnnl_conv_shape *shape, const uint16_t *w,
                                actx_dnnl_weights **out, const char **why);
size_t actx_dnnl_weights_bytes(const actx_dnnl_weights *weights);
void actx_dnnl_weights_destroy(actx_dnnl_weights *weights);
/* The packed weights back in a plain layout (a matmul's b [K, N], a conv's and a transposed
 * conv's w as [OC, C / group, kernel...]: dense, row-major) and widened to float32, into plain
 * (that many elements): for the rare runs that recompute outputs themselves
 * (bf16_conv_nonfinite.h). */
actx_status actx_dnnl_weights_plain(const actx_dnnl_weights *weights, float *plain,
                                    const char **why);

/* An op for one shape. weights: packed weights (then each run passes NULL for them; they must
 * outlive the op), or NULL (each run passes them plain, as the shape says). Packed weights do
 * not choose the primitive: it takes the layout it prefers for the shape (never oneDNN's
 * reference loops for want of a layout), the weights reordered into it once when it differs. */
actx_status actx_dnnl_matmul_create(const actx_dnnl_matmul_shape *shape,
                                    const actx_dnnl_weights *weights, actx_dnnl_op **out,
                                    const char **why);
actx_status actx_dnnl_conv_create(const actx_dnnl_conv_shape *shape,
                                  const actx_dnnl_weights *weights, actx_dnnl_op **out,
                                  const char **why);
/* Runs the op on the calling thread: src (a / x), weights (b / w, NULL when packed), bias (conv
 * with a bias only), dst (c / y). Thread-safe. */
actx_status actx_dnnl_run(const actx_dnnl_op *op, const uint16_t *src, const uint16_t *weights,
                          const float *bias, float *dst, const char **why);
/* As actx_dnnl_run, with the result rounded once as actx_dnnl_round rounds, into y (bfloat16,
 * laid out as the shape gives the result: a convolution's y and y_strides): one pass fewer than
 * actx_dnnl_run and actx_dnnl_round, and where the primitive computes channels-last the
 * rounding comes before the transpose back, which then moves half the bytes. The result must
 * be a channels-first view (rank 3 or more, the dimensions after the second dense), as every
 * convolution's is; another fails. table (NULL: none): each rounded result looked up in it
 * (ACTX_LUT_ENTRIES entries: an activation's, bf16.h) before it is stored, while it is in
 * cache. nonfinite (NULL: not asked): whether any result is a NaN or an infinity before that
 * lookup, found by the rounding pass itself (bf16_conv_nonfinite.h's cue). */
actx_status actx_dnnl_run_rounded(const actx_dnnl_op *op, const uint16_t *src,
                                  const uint16_t *weights, const float *bias, uint16_t *y,
                                  const uint16_t *table, bool *nonfinite, const char **why);
/* oneDNN's name of the implementation the op runs ("brg:avx512_core_amx", "gemm:jit"...), and
 * whether it computes in float32 on a host without bfloat16 arithmetic. */
const char *actx_dnnl_op_impl(const actx_dnnl_op *op);
/* Whether a run reorders the weights (plain runtime weights into a blocked layout); never for
 * packed weights. */
bool actx_dnnl_op_reorders_weights(const actx_dnnl_op *op);
/* Whether a run moves src or dst between the caller's channels-first layout and the
 * primitive's channels-last one by the transposes of bf16_transpose.h, not a oneDNN reorder. */
bool actx_dnnl_op_transposes(const actx_dnnl_op *op);
void actx_dnnl_op_destroy(actx_dnnl_op *op);

/* y[i] = actx_f32_to_bf16(acc[i]) for i < n (acc and y do not overlap): the one rounding of
 * every result, a loop the compiler vectorises (no branch), split over par's tasks when long.
 * Built with or without oneDNN. */
void actx_dnnl_round(const float *acc, uint16_t *y, size_t n, const actx_parallel *par);

/* A kernel's few ops, by shape (making a primitive costs far more than a small run): acquire
 * finds or makes the op of a shape (memset the shape struct to 0 before filling it: it is the
 * key, compared bytewise), release hands it back. Thread-safe; an op in use is never evicted
 * (when every slot is busy the op is made for this run alone). weights: packed weights every op
 * uses, or NULL; the cache owns them (destroyed with it, or at once when it cannot be made).
 * The first op made replaces them with its own copy when its primitive wanted another layout,
 * so that a model of one shape keeps one copy of its weights. */
typedef struct actx_dnnl_cache actx_dnnl_cache;
actx_dnnl_cache *actx_dnnl_cache_create(actx_dnnl_weights *weights);
/* The packed weights as the cache holds them now (NULL: none), for tests. */
const actx_dnnl_weights *actx_dnnl_cache_weights(const actx_dnnl_cache *cache);
actx_status actx_dnnl_cache_matmul(actx_dnnl_cache *cache, const actx_dnnl_matmul_shape *shape,
                                   actx_dnnl_op **op, const char **why);
actx_status actx_dnnl_cache_conv(actx_dnnl_cache *cache, const actx_dnnl_conv_shape *shape,
                                 actx_dnnl_op **op, const char **why);
void actx_dnnl_cache_release(actx_dnnl_cache *cache, actx_dnnl_op *op);
/* Destroys the cache and its ops (none may be in use). */
void actx_dnnl_cache_destroy(actx_dnnl_cache *cache);

/* The caller's thread count (par->max_tasks, which the EP sets to the session's intra-op thread
 * count); 1 without a parallel-for or when the count is not known (0, SIZE_MAX). The families
 * run oneDNN itself on 1 thread (an OpenMP team beside ORT's spinning pool oversubscribes the
 * cores) and split a matmul's rows into this many tasks of the caller's parallel-for. */
static inline size_t actx_dnnl_threads(const actx_parallel *par) {
  if (par == NULL || par->parallel_for == NULL || par->max_tasks == 0 ||
      par->max_tasks == SIZE_MAX)
    return 1;
  return par->max_tasks;
}

/* Nanoseconds a multiply-add of oneDNN's kernels on this host takes on one core, roughly (the
 * rate of its effective ISA: AMX, AVX512_BF16, or float32 where it has neither), for the split
 * rule below. */
double actx_dnnl_ns_per_mac(void);

/* How many tasks of the caller's parallel-for a oneDNN op of `macs` multiply-adds over `rows`
 * splittable rows takes: the caller's thread count, at most max_tasks, each at least min_macs
 * and ACTX_BF16_TASK_CALLS times the parallel-for's cost (actx_bf16_tasks's rule), no more than
 * rows. The one rule of MatMul's row blocks and Conv's slabs. */
static inline size_t actx_dnnl_split_tasks(const actx_parallel *par, double macs, int64_t rows,
                                           double min_macs, size_t max_tasks) {
  size_t tasks = actx_dnnl_threads(par);
  if (tasks > max_tasks) tasks = max_tasks;
  if (tasks <= 1) return 1;
  const double by_call = ACTX_BF16_TASK_CALLS * (double)par->call_ns / actx_dnnl_ns_per_mac();
  const double least = by_call > min_macs ? by_call : min_macs;
  if ((double)tasks * least > macs) tasks = (size_t)(macs / least);
  if ((int64_t)tasks > rows) tasks = (size_t)rows;
  return tasks;
}

#endif /* ACTX_BF16_DNNL_H */
