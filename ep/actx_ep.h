/* actx_ep.h — the pieces of libactx_ep that its files share (not a public header).
 *
 * The EP is a plain-C ONNX Runtime plugin execution provider. Its files, in call order:
 *   factory.c  CreateEpFactories / ReleaseEpFactory, OrtEpFactory (devices, CreateEp)
 *   options.c  provider options (`policy`), read from the session config as ep.actx.<key>
 *   ep.c       OrtEp: GetCapability (which nodes we take), Compile, GetKernelRegistry
 *   group.c    claims that follow one another as one compiled node; recognising a group again
 *   claim.c    whether we can run one node: domain, opset, element type, attributes, shapes
 *   graph.c    reading ORT's graph: operators, producers, consumers, scalar constants
 *   fusion.c   exported activation subgraphs (erf / tanh GELU, SiLU, QuickGelu, a bias Add
 *              before them) that one actx_compute() call computes
 *   ort_fusions.c  whether ORT's own level-2 fusions would turn such a subgraph into the same
 *              single kernel (then our result is ORT's, bit for bit)
 *   pattern.c  whether a lone Erf / Tanh / Sigmoid / Gelu belongs to a subgraph ORT fuses itself
 *   takes.c    which claims each policy takes (what would change a result stays ORT's)
 *   policy.c   the `auto` table: where we are measured faster than ORT
 *   registry.c the kernel registry: single claimed nodes, run by ORT like its own kernels
 *   compute.c  running claims, one actx_compute() each: a compiled node's (OrtNodeComputeInfo)
 *              or a registered kernel's (OrtKernelImpl)
 *   status.c   the EP's error statuses and log lines
 * and the second service, the bfloat16 nodes ORT cannot run (bf16_ep.h):
 *   bf16_attrs.c    one reader of a node's op, attributes and element types (OrtNode or
 *                   OrtKernelInfo) into the bfloat16 service's actx_bf16_node
 *   bf16_claim.c    GetCapability's decision for a bfloat16 node
 *   bf16_kernels.c  their registered kernels: registration, PrePackWeight, Compute
 */
#ifndef ACTX_EP_INTERNAL_H
#define ACTX_EP_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "actx.h"
#include "ort_abi.h"

/* The EP's name: what GetEpDevices reports, what the session's node assignment shows, and the
 * <name> in the session config prefix ep.<name>. that ORT gives provider options. */
#define ACTX_EP_NAME "actx"
#define ACTX_EP_VENDOR "actx"
#define ACTX_EP_OPTION_PREFIX "ep." ACTX_EP_NAME "."

/* ---- options.c ----------------------------------------------------------------------------- */

typedef enum actx_ep_policy_mode {
  ACTX_EP_POLICY_AUTO = 0, /* claim where the table says we are faster (the default) */
  ACTX_EP_POLICY_ALL,      /* claim every node we can run */
  ACTX_EP_POLICY_NONE,     /* claim nothing */
} actx_ep_policy_mode;

typedef struct actx_ep_options {
  actx_ep_policy_mode policy;
  /* session.disable_cpu_ep_fallback=1: a node the EP leaves has nowhere to run, so `auto` takes
   * whatever `all` takes */
  bool cpu_fallback_disabled;
} actx_ep_options;

/* ORT's session config key that keeps nodes off its CPU EP; "1" turns it on. */
#define ACTX_EP_DISABLE_CPU_FALLBACK_KEY "session.disable_cpu_ep_fallback"

/* Reads every session config entry under ep.actx. (provider options land there), and
 * session.disable_cpu_ep_fallback. An unknown key or value under ep.actx. is an
 * ORT_INVALID_ARGUMENT status naming it; *out is then the defaults. */
OrtStatus *actx_ep_options_read(const OrtApi *api, const OrtSessionOptions *session_options,
                                actx_ep_options *out);
const char *actx_ep_policy_mode_name(actx_ep_policy_mode mode);

/* ---- graph.c ------------------------------------------------------------------------------- */

/* Ranks above this are rare; values with more dimensions count as having no known shape. */
#define ACTX_EP_MAX_RANK 32

/* What a value's type says: element type and, when known, its shape. */
typedef struct actx_ep_tensor_meta {
  bool is_tensor;
  ONNXTensorElementDataType elem_type;
  bool has_shape; /* rank, dims and dim_params are meaningful */
  size_t rank;
  int64_t dims[ACTX_EP_MAX_RANK];           /* -1: symbolic or unknown */
  const char *dim_params[ACTX_EP_MAX_RANK]; /* symbolic names ("" if none), owned by ORT */
} actx_ep_tensor_meta;

OrtStatus *actx_ep_value_meta(const OrtApi *api, const OrtValueInfo *value,
                              actx_ep_tensor_meta *out);
/* Whether dimension ia of a and ib of b are provably equal: the same size, or the same
 * named symbolic dimension. */
bool actx_ep_same_dim(const actx_ep_tensor_meta *a, size_t ia, const actx_ep_tensor_meta *b,
                      size_t ib);

/* Elements of a fully known shape, else -1; *min_elements: the product of the known
 * dimensions (a symbolic one is at least 1), 0 without a shape. */
int64_t actx_ep_meta_elements(const actx_ep_tensor_meta *m, int64_t *min_elements);
/* float32 / float16 / bfloat16 as an actx dtype; false for every other element type. */
bool actx_ep_elem_dtype(ONNXTensorElementDataType type, actx_dtype *out);


/* Most consumers of one value graph.c lists; a value with more is treated as escaping. */
#define ACTX_EP_MAX_CONSUMERS 64

/* The default-domain schema versions the subgraph matchers (fusion.c, ort_fusions.c) read: those
 * of Add / Mul / Div, Pow, Erf, and Tanh / Sigmoid; 0-terminated, for actx_ep_node_is. */
extern const int actx_ep_binary_since[], actx_ep_pow_since[], actx_ep_erf_since[],
    actx_ep_activation_since[];

/* The constants of the GELU formulas, as the three recognisers (fusion.c, pattern.c and
 * ort_fusions.c, which compares ORT's float32 roundings of them) look for them. */
#define ACTX_EP_SQRT_2 1.4142135623730951
/* the √2 some BERT exporters write; ORT accepts it */
#define ACTX_EP_SQRT_2_SHORT 1.4142099618911743
#define ACTX_EP_SQRT_1_2 0.7071067811865476
#define ACTX_EP_SQRT_2_OVER_PI 0.7978845608028654
#define ACTX_EP_CUBIC_COEFF 0.044715

/* "", "ai.onnx" (and NULL) all name the default ONNX domain. */
bool actx_ep_is_onnx_domain(const char *domain);
/* Whether node is the default-domain operator op_type, with a since-version in since (a
 * 0-terminated list; NULL: any). node may be NULL (then false). */
/* Whether an earlier EP took node (it is assigned to an EP other than us). */
OrtStatus *actx_ep_node_is_others(const OrtApi *api, const OrtNode *node, bool *others);
OrtStatus *actx_ep_node_is(const OrtApi *api, const OrtNode *node, const char *op_type,
                           const int *since, bool *out);
/* The node's inputs (the first max of them, the rest NULL) and how many it has. */
OrtStatus *actx_ep_node_inputs(const OrtApi *api, const OrtNode *node, const OrtValueInfo **in,
                               size_t max, size_t *n);
/* The node's output when it has exactly one, else NULL. */
OrtStatus *actx_ep_node_output(const OrtApi *api, const OrtNode *node, const OrtValueInfo **out);
/* The node producing value; NULL for a graph input or an initializer. */
OrtStatus *actx_ep_value_producer(const OrtApi *api, const OrtValueInfo *value,
                                  const OrtNode **producer);
/* The nodes consuming value, one entry per input that reads it (so a node reading it twice is
 * listed twice), filled only when there are at most max; and whether it is a graph output. */
OrtStatus *actx_ep_value_consumers(const OrtApi *api, const OrtValueInfo *value,
                                   const OrtNode **nodes, size_t max, size_t *n,
                                   bool *graph_output);
/* Whether something reads value: a node, or the graph (an output). A fused node's output must
 * be read: ORT gives a fused node no output that nothing reads. */
OrtStatus *actx_ep_value_is_read(const OrtApi *api, const OrtValueInfo *value, bool *read);
/* The only consumer of value; NULL when it has none or several, or is also a graph output. */
OrtStatus *actx_ep_single_consumer(const OrtApi *api, const OrtValueInfo *value,
                                   const OrtNode **consumer);
/* Whether a and b are the same graph value. */
OrtStatus *actx_ep_same_value(const OrtApi *api, const OrtValueInfo *a, const OrtValueInfo *b,
                              bool *out);
/* For a node with two inputs, one of them value: the other one (NULL otherwise). */
OrtStatus *actx_ep_other_input(const OrtApi *api, const OrtNode *node, const OrtValueInfo *value,
                               const OrtValueInfo **other);

/* A one-element constant initializer. */
typedef struct actx_ep_constant {
  double value;
  ONNXTensorElementDataType type;
  size_t rank; /* its dims are all 1; rank 0 or 1 is what ORT's fusions call a scalar */
} actx_ep_constant;

/* An int attribute of node; *found false when the node does not set it (or it is not an int). */
OrtStatus *actx_ep_int_attr(const OrtApi *api, const OrtNode *node, const char *name,
                            int64_t *value, bool *found);

/* The value of a constant initializer holding one element of a float or integer type; *ok false
 * for anything else (a graph input, a larger tensor, ...). */
OrtStatus *actx_ep_scalar_constant(const OrtApi *api, const OrtValueInfo *value,
                                   actx_ep_constant *out, bool *ok);
float actx_ep_half_to_float(uint16_t h);

/* ---- claim.c ------------------------------------------------------------------------------- */

/* The ORT operators we run. Several map to the same actx op; the policy and the tests tell them
 * apart because ORT's own kernels for them differ. */
typedef enum actx_ep_kind {
  ACTX_EP_ERF = 0,        /* ai.onnx Erf 9, 13 */
  ACTX_EP_GELU,           /* ai.onnx Gelu 20, approximate="none" */
  ACTX_EP_GELU_TANH,      /* ai.onnx Gelu 20, approximate="tanh" */
  ACTX_EP_MS_GELU,        /* com.microsoft Gelu 1 */
  ACTX_EP_BIAS_GELU,      /* com.microsoft BiasGelu 1 */
  ACTX_EP_FAST_GELU,      /* com.microsoft FastGelu 1, no bias */
  ACTX_EP_FAST_GELU_BIAS, /* com.microsoft FastGelu 1 with a bias */
  ACTX_EP_QUICK_GELU,     /* com.microsoft QuickGelu 1 */
  ACTX_EP_TANH,           /* ai.onnx Tanh 6, 13 */
  ACTX_EP_SIGMOID,        /* ai.onnx Sigmoid 6, 13 */
  ACTX_EP_SILU,           /* com.microsoft QuickGelu 1 with alpha 1: ORT's SiLU kernel */
  ACTX_EP_KIND_COUNT
} actx_ep_kind;

/* "Erf", "Gelu(tanh)", "com.microsoft.BiasGelu", ... */
const char *actx_ep_kind_name(actx_ep_kind kind);
/* The actx op a kind computes. */
actx_op actx_ep_kind_op(actx_ep_kind kind);
/* The kernel a node of the operator rule's kind runs, once its attributes and inputs are known:
 * Gelu with approximate "tanh" is the tanh GELU, QuickGelu at alpha 1 is ORT's SiLU, FastGelu
 * with a bias its bias kernel. claim.c and registry.c read the attributes each their own way. */
actx_ep_kind actx_ep_node_kind(actx_ep_kind rule_kind, bool approximate_tanh, float alpha,
                               bool has_bias);

/* One ORT operator we serve: its domain ("" is ai.onnx, as ORT reports it), type, the
 * since-versions we serve, and its kind before attributes and inputs refine it (Gelu's
 * approximate, FastGelu's bias, QuickGelu's alpha). */
typedef struct actx_ep_op_rule {
  const char *domain;
  const char *op_type;
  int since[2]; /* 0 = none */
  actx_ep_kind kind;
} actx_ep_op_rule;

/* The operators claim.c serves; the kernel registry (registry.c) registers the same. */
const actx_ep_op_rule *actx_ep_op_rules(size_t *n);

/* What claim.c learnt about a node we can run. */
typedef struct actx_ep_node {
  actx_ep_kind kind;
  actx_op op;
  actx_dtype dtype;
  ONNXTensorElementDataType elem_type;
  float alpha;          /* QuickGelu only */
  bool has_bias;        /* BiasGelu, FastGelu with bias: input 1 */
  bool bias_is_scalar;  /* the bias is one element added to every x (a float16 / bfloat16 Gelu
                           node after Add(x, constant): fusion.c) */
  int64_t elements;     /* of input 0; -1 when a dimension is symbolic or the shape unknown */
  int64_t min_elements; /* a lower bound: the product of the known dimensions (0: no shape) */
} actx_ep_node;

/* Whether a node whose output has its input's shape may write y: false when the shapes of x and
 * y are both known and differ in rank or in a fixed dimension, or when y is an output of a
 * subgraph (an If branch, a Loop body) and only one of the two shapes is known. A model may
 * declare a graph output's shape wrongly and ORT accepts it (a lenient merge, which can also
 * leave the output of an If branch without a shape);
 * but where it then pre-allocates that output (an If whose output shape is fixed), a node that
 * writes x's shape there fails the run, while ORT's own nodes, from whose shapes it infers the
 * allocation, do not. */
OrtStatus *actx_ep_output_shape_holds(const OrtApi *api, const OrtValueInfo *y_value,
                                      const actx_ep_tensor_meta *x, const actx_ep_tensor_meta *y,
                                      bool *holds);

/* The values of ai.onnx Gelu's `approximate`, by their index (the claim's and the registered
 * kernel's reading of it), and the longest string attribute value any served operator accepts. */
typedef enum actx_ep_approximate {
  ACTX_EP_APPROXIMATE_NONE,
  ACTX_EP_APPROXIMATE_TANH
} actx_ep_approximate;
extern const char *const actx_ep_approximate_values[2];
#define ACTX_EP_MAX_STRING_ATTR 16
/* Which of the n `accepted` values the string value[0, len) is, byte for byte and length for
 * length (an ONNX string is bytes, and ORT's kernels compare it as a std::string, so "tanh\0junk"
 * is not "tanh"); -1 for none. */
int actx_ep_string_choice(const char *value, size_t len, const char *const *accepted, size_t n);

/* Decides whether node is one we can run. On success *out is filled and *reason is NULL; a node
 * we decline gets *reason (a static string saying why). A failing ORT call is returned. */
OrtStatus *actx_ep_claim(const OrtApi *api, const OrtNode *node, actx_ep_node *out,
                         const char **reason);

/* ---- fusion.c ------------------------------------------------------------------------------ */

/* Most ORT nodes one fused activation covers (the tanh GELU spelt with x·x·x and a bias Add is
 * 11). */
#define ACTX_EP_MAX_FUSED_NODES 16

typedef enum actx_ep_fusion_family {
  ACTX_EP_FUSION_ERF_GELU,  /* 0.5·x·(1 + erf(x/√2)) */
  ACTX_EP_FUSION_TANH_GELU, /* 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) */
  ACTX_EP_FUSION_SIGMOID,   /* x·sigmoid(α·x): SiLU (α = 1) and QuickGelu */
  ACTX_EP_FUSION_GELU_NODE, /* a Gelu / FastGelu node after a bias Add */
  ACTX_EP_FUSION_HALF_CASTS, /* Cast(float → float16) → Erf / Tanh / Sigmoid → Cast(→ float) */
} actx_ep_fusion_family;

/* A subgraph we compute as one activation: y = op(x [+ bias]). */
typedef struct actx_ep_fusion {
  actx_ep_fusion_family family;
  actx_ep_node node; /* what to compute; kind is the ORT kernel the subgraph amounts to, for the
                        policy: com.microsoft Gelu / BiasGelu / FastGelu(±bias) / QuickGelu */
  const OrtNode *nodes[ACTX_EP_MAX_FUSED_NODES];
  size_t n_nodes;
  const OrtNode *core;      /* the Erf, Tanh, Sigmoid or Gelu node */
  const OrtNode *bias_add;  /* the Add of the bias, or NULL */
  const OrtValueInfo *root; /* the activation's argument: x, or the bias Add's output */
  const OrtValueInfo *x, *bias, *y;
} actx_ep_fusion;

/* Whether node is the core (Erf, Tanh, Sigmoid, or a Gelu after a bias Add) of a subgraph we
 * compute as one activation. The match is by value, not by spelling: the argument of erf / tanh /
 * sigmoid and the factors around it are evaluated as polynomials in x, so every operand order,
 * Pow or Mul·Mul cubes and either placement of the 0.5 are the same subgraph. Constants must
 * match to within the rounding of the element type; every intermediate value must be consumed
 * only inside the subgraph and not be a graph output; a bias Add is taken when one input is 1-D
 * and as long as the other's last dimension (ORT's BiasGeluFusion rule). Only what IEEE
 * arithmetic folds as the polynomial does is folded (fusion.c: no overflowing, vanishing or
 * cancelling terms; QuickGelu's α from one node). */
OrtStatus *actx_ep_match_fusion(const OrtApi *api, const OrtNode *node, actx_ep_fusion *out,
                                bool *found);
/* "erf GELU", "tanh GELU + bias", ... */
const char *actx_ep_fusion_name(const actx_ep_fusion *fusion);

/* ---- ort_fusions.c ------------------------------------------------------------------------- */

/* What has become of a node by the time ORT's level-2 fusions look at it. Their rules read the
 * operator of the node producing a subgraph's x (GeluFusion gives up on a Mul, FastGeluFusion's
 * second formula on a Cast), and that node may meanwhile have been fused into another kernel,
 * by ORT itself (an earlier GELU of a chain) or by our claim. */
typedef enum actx_ep_node_fate {
  ACTX_EP_NODE_UNKNOWN,  /* cannot be told: one of ORT's other fusions may take it */
  ACTX_EP_NODE_KEPT,     /* still there, its operator as it is */
  ACTX_EP_NODE_REPLACED, /* part of another kernel: ORT's fused node or ours */
} actx_ep_node_fate;

/* The graph as ORT's level-2 fusions will see it: fate tells what became of a node. */
typedef struct actx_ep_ort_view {
  OrtStatus *(*fate)(const void *ctx, const OrtNode *node, actx_ep_node_fate *out);
  const void *ctx;
} actx_ep_ort_view;

typedef enum actx_ep_ort_verdict {
  ACTX_EP_ORT_UNSURE,  /* ORT may or may not fuse it (it depends on a node of unknown fate) */
  ACTX_EP_ORT_UNFUSED, /* ORT runs the nodes one by one */
  ACTX_EP_ORT_FUSES,   /* ORT makes the one kernel of it */
} actx_ep_ort_verdict;

/* Whether ORT, at its default optimisation level, turns the matched subgraph into the one
 * kernel fusion->node.kind names (GeluFusion, FastGeluFusion, QuickGeluFusion and
 * BiasGeluFusion, with their exact rules), in the graph view describes (NULL: every node whose
 * fate matters is of unknown fate). Where it does, one actx call gives ORT's bits. float32 only
 * (UNFUSED otherwise): ORT converts float16 subgraphs to float32 islands it does not fuse, and
 * has no bfloat16 kernels. */
OrtStatus *actx_ep_ort_fuses(const OrtApi *api, const actx_ep_fusion *fusion,
                             const actx_ep_ort_view *view, actx_ep_ort_verdict *out);

/* The two views a claim is judged in: ORT alone's graph, whose result is the one to give, and
 * the graph ORT gets back from us, our claims taken out, where ORT fuses what we leave. */
typedef struct actx_ep_ort_views {
  actx_ep_ort_view alone, with_claims;
} actx_ep_ort_views;
typedef struct actx_ep_ort_verdicts {
  actx_ep_ort_verdict alone, with_claims;
} actx_ep_ort_verdicts;

/* ---- pattern.c ----------------------------------------------------------------------------- */

/* Whether node is part of a subgraph that ORT's level-2 fusions rewrite into one kernel, so
 * that claiming it would keep ORT from fusing: an Erf, Tanh or Sigmoid at the core of an
 * exported activation (Div(√2) → Erf → Add(1) → Mul, Mul → Tanh → Add(1) → Mul, x·Sigmoid(x),
 * x·Sigmoid(αx)), or a Gelu / FastGelu fed by an Add of a 1-D bias (→ BiasGelu / FastGelu). */
OrtStatus *actx_ep_in_fusable_pattern(const OrtApi *api, const OrtNode *node, actx_ep_kind kind,
                                      bool *out);

/* ---- policy.c ------------------------------------------------------------------------------ */

/* Whether `auto` claims a node of this kind and dtype with this many elements. When the count
 * is not known until run time (elements -1), it is claimed only if every size from
 * min_elements up is. */
bool actx_ep_policy_auto_claims(actx_ep_kind kind, actx_dtype dtype, int64_t elements,
                                int64_t min_elements);

/* One row of the table: [min_elements, max_elements) for the dtypes in dtype_mask. */
typedef struct actx_ep_policy_row {
  actx_ep_kind kind;
  unsigned dtype_mask; /* bit (1u << actx_dtype) */
  int64_t min_elements;
  int64_t max_elements; /* exclusive; INT64_MAX: no upper bound */
  bool claim;
  /* declined for the fixed cost of a node alone: per element our kernel is at least as fast, so
   * where the graph leaves a node's size open and a larger one is claimed, so is this */
  bool per_node_cost;
} actx_ep_policy_row;

/* The table of this host class (the ORT rule's), for tests and documentation. */
const actx_ep_policy_row *actx_ep_policy_table(size_t *n_rows);

/* ---- group.c ------------------------------------------------------------------------------- */

/* One thing GetCapability takes: a single node or a fused subgraph, y = op(x [+ bias]). */
typedef struct actx_ep_claimed {
  actx_ep_node node;
  const OrtValueInfo *x, *y, *bias; /* bias NULL without one */
  size_t first_node, n_nodes;       /* its nodes, in a pool of the graph's claimed nodes */
  char label[96];                   /* "erf GELU at 'p3'", "node 'n7'", for messages */
} actx_ep_claimed;

/* Where each node of a graph sits in its node list (which is in topological order). */
typedef struct actx_ep_node_pos actx_ep_node_pos;
typedef struct actx_ep_positions {
  actx_ep_node_pos *index;
  size_t n;
} actx_ep_positions;
OrtStatus *actx_ep_positions_build(const OrtApi *api, const OrtNode *const *nodes, size_t n,
                                   actx_ep_positions *out);
/* SIZE_MAX for a node not in the list (or NULL). */
size_t actx_ep_position(const actx_ep_positions *positions, const OrtNode *node);
void actx_ep_positions_free(actx_ep_positions *positions);

/* Puts claims that follow one another into one compiled node (the rule is in group.c). pool:
 * the claims' nodes. Fills order with the claims in the graph's order (a claim after the one
 * whose output it reads) and next[c] with the claim that follows c in its group, SIZE_MAX for
 * the last one. */
OrtStatus *actx_ep_chain_claims(const OrtApi *api, const actx_ep_positions *positions,
                                const actx_ep_claimed *claims, size_t n_claims,
                                const OrtNode *const *pool, size_t *order, size_t *next);

/* A signature of a group of nodes: for each, in id order (ids are unique within a graph), its
 * id, domain, operator, name and the names of its inputs and outputs. The same nodes give the
 * same signature in GetCapability and in Compile, where the OrtNode handles are new ones. */
OrtStatus *actx_ep_group_signature(const OrtApi *api, const OrtNode *const *nodes, size_t n,
                                   uint64_t *out);

/* ---- compute.c ----------------------------------------------------------------------------- */

/* ORT's intra-op pool as an actx_parallel: actx_ep_ort_parallel_for forwards to
 * KernelContext_ParallelFor, its runner_ctx an actx_ep_ort_runner. ORT 1.30 has no getter for
 * the session's intra-op thread count, so max_tasks is SIZE_MAX: the pool hands the tasks to
 * as many threads as it has. */
typedef struct actx_ep_ort_runner {
  const OrtApi *api;
  const OrtKernelContext *context;
} actx_ep_ort_runner;
void actx_ep_ort_parallel_for(void *runner_ctx, actx_task_fn task, void *task_ctx,
                              size_t num_tasks);
/* How many threads ORT's intra-op pool runs a ParallelFor on (the session's intra-op thread
 * count), found by running one: a library with a pool of its own (oneDNN's OpenMP) must not use
 * more threads than the session was given, and ORT 1.30 has no getter for the count. Costs a
 * ParallelFor of short tasks; the caller keeps the answer. */
size_t actx_ep_ort_pool_threads(const actx_ep_ort_runner *runner);
/* What one ParallelFor over the pool's `threads` threads costs beyond its tasks' work, in
 * nanoseconds (actx_parallel.call_ns): the median of a few calls whose tasks each wait until
 * every thread has one. With the session's threads sleeping between tasks
 * (session.intra_op.allow_spinning=0) each call wakes them: 16.6 us on a 2-core KVM Xeon,
 * against 1.8 us when they spin. 0 for one thread. At most a few milliseconds, once. */
uint64_t actx_ep_ort_pool_call_ns(const actx_ep_ort_runner *runner, size_t threads);

/* One activation of a compiled node. */
typedef struct actx_ep_step {
  actx_ep_node node;
  const char *bias_name; /* the fused node's input holding its bias; NULL without one */
  bool bias_is_x;        /* the bias is the step's own x, inside the group (BiasGelu(t, t)
                            after the claim making t): no input of the fused node */
} actx_ep_step;

/* Builds the compute info for one compiled node (fused_node: the node ORT made for it; its
 * inputs are those of the nodes it replaces from outside them, possibly deduplicated): y =
 * steps[n-1](... steps[0](x)), x the input named x_name; label names it in error messages. */
OrtStatus *actx_ep_kernel_create(const OrtApi *api, const actx_ep_step *steps, size_t n_steps,
                                 const char *x_name, const char *label, const OrtNode *fused_node,
                                 OrtNodeComputeInfo **out);
void actx_ep_kernel_release(OrtNodeComputeInfo *info);

/* Builds the kernel ORT runs for one single node from our registry: y = op(x [+ bias]), x its
 * input 0 and the bias its input 1; label names it in error messages. */
OrtStatus *actx_ep_single_kernel_create(const OrtApi *api, const actx_ep_node *node,
                                        const char *label, OrtKernelImpl **out);

/* ---- registry.c ---------------------------------------------------------------------------- */

/* The kernel registry OrtEp::GetKernelRegistry returns: one kernel per operator version
 * claim.c serves, and those of the bfloat16 service (bf16_kernels.c). */
typedef struct actx_ep_registry actx_ep_registry;
OrtStatus *actx_ep_registry_create(const OrtApi *api, actx_ep_registry **out);
const OrtKernelRegistry *actx_ep_registry_get(const actx_ep_registry *registry);
void actx_ep_registry_free(actx_ep_registry *registry);

/* ---- ep.c ---------------------------------------------------------------------------------- */

/* The session's intra-op pool as a kernel found it (actx_ep_ort_pool_threads,
 * actx_ep_ort_pool_call_ns), kept with the session's OrtEp so it is found once: threads 0 until
 * then, and stored after call_ns. */
typedef struct actx_ep_pool_facts {
  _Atomic(size_t) threads;
  _Atomic(uint64_t) call_ns;
} actx_ep_pool_facts;
actx_ep_pool_facts *actx_ep_pool_facts_slot(const OrtEp *ep);

/* Creates the OrtEp for one session. */
OrtStatus *actx_ep_create(const OrtApi *api, const OrtLogger *logger,
                          const actx_ep_options *options, OrtEp **out);
void actx_ep_release(OrtEp *ep);

/* ---- takes.c ------------------------------------------------------------------------------- */

/* Whether the policy takes a node claim.c can run (info), or a matched subgraph; *why says why
 * not. match is actx_ep_match_fusion's subgraph with node as its core, NULL when it found none.
 * A node `auto`'s table declines gets *why == actx_ep_auto_table_declines (ep.c may still take
 * it into the claim it follows). */
OrtStatus *actx_ep_takes_node(const OrtApi *api, actx_ep_policy_mode policy, const OrtNode *node,
                              const actx_ep_node *info, const actx_ep_fusion *match,
                              const actx_ep_ort_views *views, bool *take, const char **why);
/* ... and *verdicts what ORT does with f in either view (UNSURE where it was not asked). */
OrtStatus *actx_ep_takes_fusion(const OrtApi *api, actx_ep_policy_mode policy,
                                const actx_ep_fusion *f, const actx_ep_ort_views *views,
                                actx_ep_ort_verdicts *verdicts, bool *take, const char **why);
extern const char actx_ep_auto_table_declines[];

/* ---- status.c ------------------------------------------------------------------------------ */

/* An ORT status with a printf-style message prefixed "actx EP: ". */
OrtStatus *actx_ep_error(const OrtApi *api, OrtErrorCode code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* For a name wanted only for a message (a node's name, its operator): a failed call's status
 * released and *text NULL. */
void actx_ep_ignore(const OrtApi *api, OrtStatus *status, const char **text);

/* Logs at the given level through an OrtLogger (nothing if logger is NULL). */
void actx_ep_log(const OrtApi *api, const OrtLogger *logger, OrtLoggingLevel level, const char *fmt,
                 ...) __attribute__((format(printf, 4, 5)));

#endif /* ACTX_EP_INTERNAL_H */
