/* actx_ep.h — the pieces of libactx_ep that its files share (not a public header).
 *
 * The EP is a plain-C ONNX Runtime plugin execution provider. Its files, in call order:
 *   factory.c  CreateEpFactories / ReleaseEpFactory, OrtEpFactory (devices, CreateEp)
 *   options.c  provider options (`policy`), read from the session config as ep.actx.<key>
 *   ep.c       OrtEp: GetCapability (which nodes we take) and Compile
 *   claim.c    whether we can run one node: domain, opset, element type, attributes, shapes
 *   pattern.c  whether an Erf / Tanh / Sigmoid belongs to a subgraph ORT fuses itself
 *   policy.c   the `auto` table: where we are measured faster than ORT
 *   compute.c  OrtNodeComputeInfo: running one claimed node with actx_compute()
 */
#ifndef ACTX_EP_INTERNAL_H
#define ACTX_EP_INTERNAL_H

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
} actx_ep_options;

/* Reads every session config entry under ep.actx. (provider options land there). An unknown
 * key or value is an ORT_INVALID_ARGUMENT status naming it; *out is then the defaults. */
OrtStatus *actx_ep_options_read(const OrtApi *api, const OrtSessionOptions *session_options,
                                actx_ep_options *out);
const char *actx_ep_policy_mode_name(actx_ep_policy_mode mode);

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
  ACTX_EP_KIND_COUNT
} actx_ep_kind;

/* "Erf", "Gelu(tanh)", "com.microsoft.BiasGelu", ... */
const char *actx_ep_kind_name(actx_ep_kind kind);

/* What claim.c learnt about a node we can run. */
typedef struct actx_ep_node {
  actx_ep_kind kind;
  actx_op op;
  actx_dtype dtype;
  ONNXTensorElementDataType elem_type;
  float alpha;          /* QuickGelu only */
  bool has_bias;        /* BiasGelu, FastGelu with bias: input 1 */
  int64_t elements;     /* of input 0; -1 when a dimension is symbolic or the shape unknown */
  int64_t min_elements; /* a lower bound: the product of the known dimensions (0: no shape) */
} actx_ep_node;

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

/* Decides whether node is one we can run. On success *out is filled and *reason is NULL; a node
 * we decline gets *reason (a static string saying why). A failing ORT call is returned. */
OrtStatus *actx_ep_claim(const OrtApi *api, const OrtNode *node, actx_ep_node *out,
                         const char **reason);

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
} actx_ep_policy_row;

/* The table, for tests and documentation. */
const actx_ep_policy_row *actx_ep_policy_table(size_t *n_rows);

/* ---- compute.c ----------------------------------------------------------------------------- */

/* Builds the compute info for one claimed node (fused_node: the node ORT made for it; its inputs
 * are the claimed node's inputs, possibly deduplicated). NULL status on success. */
OrtStatus *actx_ep_kernel_create(const OrtApi *api, const OrtNode *node, const OrtNode *fused_node,
                                 OrtNodeComputeInfo **out);
void actx_ep_kernel_release(OrtNodeComputeInfo *info);

/* ---- ep.c ---------------------------------------------------------------------------------- */

/* Creates the OrtEp for one session. */
OrtStatus *actx_ep_create(const OrtApi *api, const OrtLogger *logger,
                          const actx_ep_options *options, OrtEp **out);
void actx_ep_release(OrtEp *ep);

/* ---- shared helpers ------------------------------------------------------------------------ */

/* An ORT status with a printf-style message prefixed "actx EP: ". */
OrtStatus *actx_ep_error(const OrtApi *api, OrtErrorCode code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Logs at the given level through an OrtLogger (nothing if logger is NULL). */
void actx_ep_log(const OrtApi *api, const OrtLogger *logger, OrtLoggingLevel level, const char *fmt,
                 ...) __attribute__((format(printf, 4, 5)));

#endif /* ACTX_EP_INTERNAL_H */
