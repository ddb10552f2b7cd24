/* bf16.h — the bfloat16 graph service: ONNX operators on bfloat16 tensors, for the graphs ORT's
 * CPU EP cannot load (it has no bfloat16 arithmetic). Internal to the project: the EP
 * (ep/bf16_*.c) and the tests use it; it is not part of libactx's public API (include/actx.h).
 *
 * Numerics, the one contract of every op here: inputs are widened exactly to float32, the op is
 * computed in float32 (float32 accumulation in MatMul, Gemm, Conv and reductions), and each
 * result is rounded once to bfloat16, to nearest even with NaNs made quiet (actx_f32_to_bf16 in
 * src/half.h). A unary op's result is therefore round(f32 op(widen(x))) for all 65,536 inputs.
 *
 * Layout: the op list is bf16_ops.h (one row an op: its ONNX name, domain, since-versions,
 * arity and family); each family is one file (bf16_<family>.c) implementing the three
 * functions of actx_bf16_family below; MatMul, Gemm and Conv go through bf16_dnnl.h, the one
 * interface over oneDNN (nothing else includes oneDNN's headers).
 *
 * Lifetime of a kernel: create it from a node (its op and attributes; checked there, so a bad
 * attribute is an error at session creation), hand it the inputs that are constant
 * (initializers: weights are reordered once, here), then for each run ask the output shapes and
 * run it. Kernels are immutable after packing: runs may be concurrent. */
#ifndef ACTX_BF16_H
#define ACTX_BF16_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "actx.h"

#define ACTX_BF16_MAX_RANK 8
/* Most inputs / outputs of any served op (SkipLayerNormalization: 5 in, 4 out). */
#define ACTX_BF16_MAX_INPUTS 8
#define ACTX_BF16_MAX_OUTPUTS 4
/* Most spatial dimensions of Conv / pooling / Resize (1-D, 2-D, 3-D). */
#define ACTX_BF16_MAX_SPATIAL 3

/* Element types a served op reads or writes. */
typedef enum actx_elem {
  ACTX_ELEM_BF16 = 0,
  ACTX_ELEM_F32,  /* Resize's scales, LayerNormalization's float32 mean / inv_std_dev */
  ACTX_ELEM_I64,  /* shapes, axes, pads, repeats, sizes, MaxPool's indices */
  ACTX_ELEM_BOOL, /* Equal / Less / Greater outputs, Where's condition */
  ACTX_ELEM_COUNT
} actx_elem;

typedef struct actx_shape {
  size_t rank;
  int64_t dims[ACTX_BF16_MAX_RANK];
} actx_shape;

/* A dense, row-major tensor. data may be NULL only when the shape has 0 elements. */
typedef struct actx_tensor {
  actx_elem elem;
  actx_shape shape;
  void *data;
} actx_tensor;

/* An optional input left out: elem ACTX_ELEM_COUNT, data NULL. */
#define ACTX_TENSOR_ABSENT ((actx_tensor){.elem = ACTX_ELEM_COUNT})

/* Every attribute a served op may have, read once by the EP (ep/bf16_attrs.c) from the node.
 * has_* says the node set it; each family applies its op's ONNX defaults to what is unset and
 * rejects values the op does not define (ACTX_ERROR_INVALID_ARGUMENT, with a message). */
typedef struct actx_bf16_attrs {
  bool has_axis, has_axes, has_keepdims, has_epsilon, has_alpha, has_beta, has_trans_a,
      has_trans_b, has_group, has_strides, has_pads, has_dilations, has_kernel_shape,
      has_auto_pad, has_ceil_mode, has_count_include_pad, has_mode, has_coordinate_mode,
      has_nearest_mode, has_cubic_coeff_a, has_exclude_outside, has_extrapolation_value,
      has_stash_type, has_noop_with_empty_axes, has_storage_order, has_antialias,
      has_keep_aspect_ratio_policy, has_to, has_saturate, has_training_mode, has_output_padding,
      has_output_shape;
  int64_t axis, keepdims, trans_a, trans_b, group, ceil_mode, count_include_pad,
      exclude_outside, stash_type, noop_with_empty_axes, storage_order, antialias, to, saturate,
      training_mode;
  float epsilon, alpha, beta, cubic_coeff_a, extrapolation_value;
  size_t n_axes, n_strides, n_pads, n_dilations, n_kernel_shape, n_output_padding, n_output_shape;
  int64_t axes[ACTX_BF16_MAX_RANK];
  int64_t strides[ACTX_BF16_MAX_SPATIAL], dilations[ACTX_BF16_MAX_SPATIAL],
      kernel_shape[ACTX_BF16_MAX_SPATIAL], output_padding[ACTX_BF16_MAX_SPATIAL];
  /* ConvTranspose's (one a spatial dimension; read up to N and M too, which it refuses) */
  int64_t output_shape[2 + ACTX_BF16_MAX_SPATIAL];
  int64_t pads[2 * ACTX_BF16_MAX_RANK]; /* Pad's attribute form needs 2·rank */
  /* string attributes, NUL-terminated copies ("" when unset); longer values are rejected by
   * the reader, since no served value is longer */
  char auto_pad[16], mode[16], coordinate_mode[24], nearest_mode[24],
      keep_aspect_ratio_policy[16];
} actx_bf16_attrs;

/* The ops, in bf16_ops.h order (ACTX_BF16_OP_ADD, ...). */
#define ACTX_BF16_OP_ENUM_(name, e, ...) ACTX_BF16_OP_##e,
#include "bf16_ops.h"
typedef enum actx_bf16_op { ACTX_BF16_OPS(ACTX_BF16_OP_ENUM_) ACTX_BF16_OP_COUNT } actx_bf16_op;
#undef ACTX_BF16_OP_ENUM_

/* One op's facts, from its row in bf16_ops.h. */
typedef struct actx_bf16_op_info {
  const char *name;   /* the ONNX operator type: "MatMul" */
  const char *domain; /* "" (ai.onnx) or "com.microsoft" */
  int since[4];       /* the since-versions served (those whose schema allows bfloat16), 0-ended */
  int min_inputs, max_inputs, min_outputs, max_outputs;
} actx_bf16_op_info;

const actx_bf16_op_info *actx_bf16_op_info_get(actx_bf16_op op);
/* The op of an ONNX (domain, type), or ACTX_BF16_OP_COUNT when none is served. */
actx_bf16_op actx_bf16_op_find(const char *domain, const char *op_type);

/* What the kernel was made from: the op, its since-version (semantics change between versions:
 * Softmax's axis before 13, Reduce*'s axes becoming an input at 18), the attributes, and the
 * element type of each input as the graph declares it. */
typedef struct actx_bf16_node {
  actx_bf16_op op;
  int since_version;
  actx_bf16_attrs attrs;
  size_t n_inputs, n_outputs; /* as the node has them, optional ones left out counted as absent */
  actx_elem input_elems[ACTX_BF16_MAX_INPUTS];
  bool input_present[ACTX_BF16_MAX_INPUTS];
  bool output_present[ACTX_BF16_MAX_OUTPUTS];
} actx_bf16_node;

typedef struct actx_bf16_kernel actx_bf16_kernel;

/* Checks the node (op, version, arity, input element types, attributes) and makes its kernel.
 * On failure *why (a static or kernel-owned string, never NULL) names what was wrong. */
actx_status actx_bf16_kernel_create(const actx_bf16_node *node, actx_bf16_kernel **out,
                                    const char **why);
/* Hands the kernel a constant input (an initializer) before the first run. *packed: the kernel
 * keeps what it needs of it in its own form (a reordered weight) and the caller may free the
 * original; the run then receives that input as ACTX_TENSOR_ABSENT or the original, either
 * works. A kernel that has no use for it sets *packed false. */
actx_status actx_bf16_kernel_pack(actx_bf16_kernel *kernel, size_t input, const actx_tensor *value,
                                  bool *packed, const char **why);
/* The output shapes (and element types) of a run with these inputs; in[i].data is readable
 * for the inputs whose values decide shapes (Expand's shape, Tile's repeats, Pad's pads,
 * Resize's scales / sizes, Reduce*'s axes). Shapes that do not broadcast, out-of-range axes,
 * negative sizes...: ACTX_ERROR_INVALID_ARGUMENT and *why. */
actx_status actx_bf16_kernel_shapes(const actx_bf16_kernel *kernel, const actx_tensor *in,
                                    size_t n_in, actx_tensor *out, size_t n_out, const char **why);
/* Computes out (shapes and types as _shapes gave them, data allocated by the caller, never
 * aliasing an input unless the op's row says it may) from in. par: the caller's parallel-for
 * (the EP: ORT's intra-op pool); NULL runs on the calling thread. par->max_tasks is the
 * session's intra-op thread count, which oneDNN's primitives honour too. */
actx_status actx_bf16_kernel_run(const actx_bf16_kernel *kernel, const actx_tensor *in,
                                 size_t n_in, actx_tensor *out, size_t n_out,
                                 const actx_parallel *par, const char **why);
void actx_bf16_kernel_destroy(actx_bf16_kernel *kernel);

/* ---- chains --------------------------------------------------------------------------------
 * Element-wise nodes that read one another's results (a folded batch norm's Mul and Add, then
 * HardSwish written out as Add, Clip, Mul, Div), computed in one pass over memory instead of a
 * pass a node. Each step's result is rounded to bfloat16 exactly as its own kernel rounds it,
 * so a chain's output has the bits of running its nodes one by one: only the passes between
 * them go. Steps: Add, Sub, Mul, Div, PRelu, Clip and the table-driven unary ops (Relu,
 * LeakyRelu, HardSigmoid, HardSwish, Sqrt, Reciprocal, Neg, Abs, Exp, Log, Floor, Ceil, Elu,
 * ThresholdedRelu, Softplus, Softsign, Round, Sin, Cos, Tan, Atan). A run where every
 * step's result has the output's shape, and every Clip bound is an input, is one pass; any
 * other (a broadcast that grows along the chain) runs the steps' kernels one by one. */
#define ACTX_BF16_CHAIN_MAX_STEPS 32
#define ACTX_BF16_CHAIN_MAX_INPUTS 32
/* An operand of a step: a chain input (0 <= operand < n_inputs), the result of an earlier step
 * (ACTX_BF16_CHAIN_STEP(k)), or an optional input left out (ACTX_BF16_CHAIN_ABSENT). */
#define ACTX_BF16_CHAIN_STEP(k) (-2 - (int)(k))
#define ACTX_BF16_CHAIN_ABSENT (-1)
typedef struct actx_bf16_chain_step {
  const actx_bf16_kernel *kernel; /* the node's, from actx_bf16_kernel_create; the caller's */
  int operand[ACTX_BF16_MAX_INPUTS]; /* one per input of its node */
} actx_bf16_chain_step;
typedef struct actx_bf16_chain actx_bf16_chain;

/* Whether the kernel's node can be a step of a chain. */
bool actx_bf16_kernel_chains(const actx_bf16_kernel *kernel);
/* A chain of n_steps (2 .. ACTX_BF16_CHAIN_MAX_STEPS) steps over n_inputs inputs (at most
 * ACTX_BF16_CHAIN_MAX_INPUTS); the last step's result is its output. Each step reads only
 * inputs and earlier steps; its kernel must chain (actx_bf16_kernel_chains) and outlive the
 * chain, which copies the rest. */
actx_status actx_bf16_chain_create(const actx_bf16_chain_step *steps, size_t n_steps,
                                   size_t n_inputs, actx_bf16_chain **out, const char **why);
/* The output's shape for these inputs (each step's _shapes in turn). */
actx_status actx_bf16_chain_shape(const actx_bf16_chain *chain, const actx_tensor *in,
                                  size_t n_in, actx_shape *out, const char **why);
/* Computes out (bfloat16, the shape _shape gave, allocated by the caller; it may be an input
 * of its shape) from in. par as for actx_bf16_kernel_run. */
actx_status actx_bf16_chain_run(const actx_bf16_chain *chain, const actx_tensor *in, size_t n_in,
                                actx_tensor *out, const actx_parallel *par, const char **why);
void actx_bf16_chain_destroy(actx_bf16_chain *chain);

/* ---- an activation in its producer --------------------------------------------------------
 * A table-driven unary op (a chain step of the table kind: Relu, HardSwish, HardSigmoid...)
 * that reads a Conv's result and nothing else, applied by the Conv itself: each result is
 * looked up in the op's table as it is rounded, while it is in cache, instead of in a pass of
 * its own. The bits are those of the two nodes one by one (the table is the op's; a result the
 * Conv recomputes, a NaN's or an infinity's window, is looked up after). Whether `kernel` takes
 * `activation` so (a Conv does; a ConvTranspose, or an activation that is no table, does not:
 * false, the kernel unchanged); activation must outlive kernel. */
bool actx_bf16_kernel_fuse_activation(actx_bf16_kernel *kernel,
                                      const actx_bf16_kernel *activation);
/* The same with one of libactx's exact activations (src/ops.h; at ACTX_LUT_ALPHA where it has a
 * parameter: QuickGelu's is SiLU) on bfloat16: its shared table, which gives actx_compute()'s
 * bits (src/lut.h). False, the kernel unchanged, where the op has no table or it cannot be
 * built. */
bool actx_bf16_kernel_fuse_exact(actx_bf16_kernel *kernel, actx_op op);
/* Whether the kernel is such an activation (a table-driven unary op). */
bool actx_bf16_kernel_is_activation(const actx_bf16_kernel *kernel);

/* Elements of a shape (1 for rank 0). */
int64_t actx_shape_elements(const actx_shape *shape);
/* numpy broadcasting of a and b into *out; false when they do not broadcast. */
bool actx_shape_broadcast(const actx_shape *a, const actx_shape *b, actx_shape *out);

#endif /* ACTX_BF16_H */
