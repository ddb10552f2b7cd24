/* bf16_ep.h — the EP's second service: the bfloat16 nodes ORT's CPU EP cannot run (it has no
 * bfloat16 arithmetic, so a bfloat16 model with any compute node fails to load), run by the
 * bfloat16 graph service (src/bf16/bf16.h). Beside the exact activations (claim.c and the rest
 * of actx_ep.h), in files of their own:
 *   bf16_attrs.c    one reader of a node (op, since-version, attributes, element types, which
 *                   inputs and outputs it has) into an actx_bf16_node, from an OrtNode
 *                   (GetCapability) or an OrtKernelInfo (kernel creation) alike
 *   bf16_claim.c    GetCapability's decision for a bfloat16 node, and handing it to ORT
 *   bf16_kernels.c  the registered kernels (OrtKernelImpl): their registration, PrePackWeight
 *                   (constant inputs handed to the kernel once) and Compute
 *   bf16_compiled.c what every compiled node of the service shares: its nodes read again for
 *                   Compile, and its Compute's and release's ORT plumbing
 *   bf16_chain.c    element-wise nodes that read one another's results, fused into one
 *                   compiled node that runs them as a chain (bf16.h) in one pass
 *   bf16_conv_act.c a Conv and the activation that alone reads its result, fused into one
 *                   compiled node whose Conv applies the activation as it rounds
 * Not a public header. */
#ifndef ACTX_EP_BF16_EP_H
#define ACTX_EP_BF16_EP_H

#include "actx_ep.h"
#include "bf16.h"

/* ---- bf16_attrs.c -------------------------------------------------------------------------- */

/* Where a node's facts are read from: exactly one of node and info is set. Both give the same
 * actx_bf16_node for the same node (an attribute the node does not set reads as unset from
 * both), so the kernel is made from what the claim checked. */
typedef struct actx_ep_node_source {
  const OrtApi *api;
  const OrtNode *node;       /* GetCapability */
  const OrtKernelInfo *info; /* a registered kernel's creation */
} actx_ep_node_source;

/* The element type of a graph value as the bfloat16 service knows it; ACTX_ELEM_COUNT for one
 * it does not serve (float16, int32, ...). */
actx_elem actx_ep_bf16_elem(ONNXTensorElementDataType type);
/* The name of such a type, for messages ("bfloat16", "float", ...). */
const char *actx_ep_bf16_elem_name(actx_elem elem);

/* Reads the node: op (ACTX_BF16_OP_COUNT when (domain, type) is not a bfloat16 op), since-version,
 * inputs' element types and presence, outputs' presence and element types (output_elems:
 * ACTX_BF16_MAX_OUTPUTS entries, ACTX_ELEM_COUNT for an absent one), and every attribute of
 * actx_bf16_attrs. A node the reader cannot represent (more inputs than ACTX_BF16_MAX_INPUTS, an
 * element type or attribute type not served, a list or string longer than its field) gets *why
 * (static) and a NULL status; a failing ORT call is returned. */
OrtStatus *actx_ep_bf16_read_node(const actx_ep_node_source *src, actx_bf16_node *out,
                                  actx_elem *output_elems, const char **why);
/* The node's name into out (truncated to out_size), from either source. */
OrtStatus *actx_ep_bf16_node_name(const actx_ep_node_source *src, char *out, size_t out_size);

/* ---- bf16_claim.c -------------------------------------------------------------------------- */

/* The index of the input whose element type is the op's computing type: 0, Where's 1. */
size_t actx_ep_bf16_data_input(actx_bf16_op op);

/* Whether the service can run node (its op, element types, attributes and a registered kernel:
 * *op its op), as actx_ep_bf16_take decides it; whether the node is free to take (not taken,
 * not another EP's) is the caller's to check. */
OrtStatus *actx_ep_bf16_would_take(const OrtApi *api, const OrtNode *node,
                                   OrtEpGraphSupportInfo *support, actx_bf16_op *op,
                                   bool *takes);

/* Offers GetCapability's nodes not yet taken (taken[i] false, not assigned to another EP) to
 * the bfloat16 service: each it can run is handed to ORT as a single node to run with our
 * registered kernel, and taken[i] set. Under `auto` and `all` alike: ORT cannot run them.
 * Every declined bfloat16 node is logged at VERBOSE with why. */
OrtStatus *actx_ep_bf16_take(const OrtApi *api, const OrtLogger *logger,
                             const OrtNode *const *nodes, size_t n, bool *taken,
                             OrtEpGraphSupportInfo *support);

/* ---- bf16_kernels.c ------------------------------------------------------------------------ */

/* Registers a kernel for every op and since-version of bf16_ops.h into registry, with the type
 * constraints of ORT's own schema of that op version: the one of the computing input restricted
 * to bfloat16, the others to the element types the service reads or writes. *states: what the
 * kernels' creation functions are handed, to free with actx_ep_bf16_registry_free after the
 * registry. */
typedef struct actx_ep_bf16_states actx_ep_bf16_states;
OrtStatus *actx_ep_bf16_register(const OrtApi *api, OrtKernelRegistry *registry,
                                 actx_ep_bf16_states **states);
void actx_ep_bf16_registry_free(actx_ep_bf16_states *states);

/* An input value of a run as the service's tensor (element type and rank checked; label and
 * index name it in the message). */
OrtStatus *actx_ep_bf16_tensor(const OrtApi *api, const char *label, const OrtValue *value,
                               size_t index, actx_tensor *out);
/* The session's intra-op pool as the service's parallel-for: its thread count and call cost
 * found by the first run that asks (kept in pool), runner the context par points to. */
void actx_ep_bf16_parallel(const OrtApi *api, OrtKernelContext *context,
                           actx_ep_pool_facts *pool, const char *label,
                           actx_ep_ort_runner *runner, actx_parallel *par);

/* ---- bf16_compiled.c ----------------------------------------------------------------------- */

/* A fused graph's node read again for Compile, as the claim read it: its op
 * (ACTX_BF16_OP_COUNT when the service does not serve it) and its kernel (NULL when the reader
 * or the kernel's creation refuses it). */
OrtStatus *actx_ep_bf16_node_kernel(const OrtApi *api, const OrtNode *node, actx_bf16_op *op,
                                    actx_bf16_kernel **kernel);

/* The most inputs a compiled node of the service takes (a chain's), and nodes (a chain's). */
#define ACTX_EP_BF16_COMPILED_MAX_INPUTS ACTX_BF16_CHAIN_MAX_INPUTS
#define ACTX_EP_BF16_COMPILED_MAX_NODES ACTX_BF16_CHAIN_MAX_STEPS
_Static_assert(ACTX_BF16_MAX_INPUTS <= ACTX_EP_BF16_COMPILED_MAX_INPUTS,
               "a compiled node takes at least a node's inputs");

/* A fused graph as Compile reads it: its nodes and the fused node's inputs. */
typedef struct actx_ep_bf16_fused {
  size_t n_nodes, n_inputs;
  const OrtNode *nodes[ACTX_EP_BF16_COMPILED_MAX_NODES];
  const OrtValueInfo *inputs[ACTX_EP_BF16_COMPILED_MAX_INPUTS];
} actx_ep_bf16_fused;
/* Reads graph (fused_node's) into *out when it has min_nodes to max_nodes nodes (at most
 * ACTX_EP_BF16_COMPILED_MAX_NODES) and fused_node at most ACTX_EP_BF16_COMPILED_MAX_INPUTS
 * inputs; *fits false otherwise (not a graph of that kind; the status NULL). */
OrtStatus *actx_ep_bf16_fused_read(const OrtApi *api, const OrtGraph *graph,
                                   const OrtNode *fused_node, size_t min_nodes, size_t max_nodes,
                                   actx_ep_bf16_fused *out, bool *fits);
/* The index of the fused node's input named name; SIZE_MAX when none is. */
OrtStatus *actx_ep_bf16_fused_input(const OrtApi *api, const actx_ep_bf16_fused *fused,
                                    const char *name, size_t *index);

/* A compiled node of the service: each kind (a chain, a Conv with its activation) makes one,
 * first in a struct of its own, and gives its three steps. */
typedef struct actx_ep_bf16_compiled actx_ep_bf16_compiled;
typedef struct actx_ep_bf16_compiled_ops {
  /* the output's shape for the fused node's inputs */
  actx_status (*shape)(const actx_ep_bf16_compiled *node, const actx_tensor *in, size_t n_in,
                       actx_shape *out, const char **why);
  /* out (bfloat16, that shape, ORT's) from the inputs, over par */
  actx_status (*run)(const actx_ep_bf16_compiled *node, const actx_tensor *in, size_t n_in,
                     actx_tensor *out, const actx_parallel *par, const char **why);
  /* frees the node (the struct that holds it) */
  void (*destroy)(actx_ep_bf16_compiled *node);
} actx_ep_bf16_compiled_ops;
struct actx_ep_bf16_compiled {
  OrtNodeComputeInfo info; /* first: ORT hands &info back */
  const OrtApi *api;
  actx_ep_pool_facts *pool;
  const actx_ep_bf16_compiled_ops *ops;
  size_t n_inputs; /* the fused node's */
  char label[112]; /* "chain of 8 nodes from 'x'", for messages */
};
/* Makes node (its label set) a compute info of the fused node with n_inputs inputs (at most
 * ACTX_EP_BF16_COMPILED_MAX_INPUTS). After Compile it is only read: concurrent Run() calls
 * share it. */
OrtStatus *actx_ep_bf16_compiled_init(actx_ep_bf16_compiled *node, const OrtApi *api,
                                      actx_ep_pool_facts *pool,
                                      const actx_ep_bf16_compiled_ops *ops, size_t n_inputs);
/* Releases info when it is such a node and says so; false (nothing done) otherwise. */
bool actx_ep_bf16_compiled_release(OrtNodeComputeInfo *info);

/* ---- bf16_chain.c -------------------------------------------------------------------------- */

/* Among the nodes the service takes (pending[i]; chains[i]: its kernel can be a chain step),
 * finds the chains (bf16.h) and hands each to ORT as one node to fuse, clearing their pending
 * flags: the nodes joined by values that only other such nodes read (and no graph output is),
 * 2 to ACTX_BF16_CHAIN_MAX_STEPS of them with one value leaving. The rest stay pending. */
OrtStatus *actx_ep_bf16_fuse_chains(const OrtApi *api, const OrtLogger *logger,
                                    const OrtNode *const *nodes, size_t n, bool *pending,
                                    const bool *chains, OrtEpGraphSupportInfo *support);
/* Compile's part: when graph is a chain the above fused (every node one the service chains),
 * *out is its compute info; NULL otherwise. */
OrtStatus *actx_ep_bf16_chain_compile(const OrtApi *api, actx_ep_pool_facts *pool,
                                      const OrtGraph *graph, const OrtNode *fused_node,
                                      OrtNodeComputeInfo **out);

/* ---- bf16_conv_act.c ----------------------------------------------------------------------- */

/* Among the nodes the service takes (pending[i]; ops[i] its op; tables[i]: it is an activation a
 * Conv can apply, actx_bf16_kernel_is_activation), hands each Conv whose result only such a node
 * reads (and no graph output is) to ORT with that node as one node to fuse, clearing both
 * pending flags. Runs before the chains are found. */
OrtStatus *actx_ep_bf16_fuse_conv_activations(const OrtApi *api, const OrtLogger *logger,
                                              const OrtNode *const *nodes, size_t n,
                                              bool *pending, const actx_bf16_op *ops,
                                              const bool *tables, OrtEpGraphSupportInfo *support);
/* Before every other claim: each Conv the service takes whose result only x · sigmoid(x) reads
 * (a Sigmoid of it and the Mul of it by the Sigmoid's result: the SiLU the exact activations
 * would fuse, actx_ep_match_fusion), the three free to take (not taken, not another EP's),
 * handed to ORT as one node to fuse, taken[] set for the three (positions: nodes' index). */
OrtStatus *actx_ep_bf16_fuse_conv_silu(const OrtApi *api, const OrtLogger *logger,
                                       const OrtNode *const *nodes, size_t n,
                                       const actx_ep_positions *positions, bool *taken,
                                       OrtEpGraphSupportInfo *support);
/* Compile's part: when graph is a Conv and its activation fused above (or its SiLU), *out is
 * its compute info (the weights packed now); NULL otherwise. */
OrtStatus *actx_ep_bf16_conv_act_compile(const OrtApi *api, actx_ep_pool_facts *pool,
                                         const OrtGraph *graph, const OrtNode *fused_node,
                                         OrtNodeComputeInfo **out);

#endif /* ACTX_EP_BF16_EP_H */
