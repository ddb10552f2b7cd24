/* What every compiled node of the bfloat16 service shares (bf16_ep.h): its nodes read again for
 * Compile, and the ORT plumbing of its Compute (the fused node's inputs as the service's
 * tensors, its output allocated at the shape the node gives, ORT's pool as the parallel-for,
 * the service's status as ORT's) and of its release. A chain (bf16_chain.c) and a Conv with its
 * activation (bf16_conv_act.c) each bring their shape, run and destroy. */
#include <stdlib.h>
#include <string.h>

#include "bf16_ep.h"

OrtStatus *actx_ep_bf16_node_kernel(const OrtApi *api, const OrtNode *node, actx_bf16_op *op,
                                    actx_bf16_kernel **kernel) {
  *kernel = NULL;
  *op = ACTX_BF16_OP_COUNT;
  const actx_ep_node_source src = {.api = api, .node = node};
  actx_bf16_node info;
  actx_elem output_elems[ACTX_BF16_MAX_OUTPUTS];
  const char *why = NULL;
  OrtStatus *st = actx_ep_bf16_read_node(&src, &info, output_elems, &why);
  if (st != NULL || why != NULL || info.op == ACTX_BF16_OP_COUNT) return st;
  *op = info.op;
  if (actx_bf16_kernel_create(&info, kernel, &why) != ACTX_OK) *kernel = NULL;
  return NULL;
}

OrtStatus *actx_ep_bf16_fused_read(const OrtApi *api, const OrtGraph *graph,
                                   const OrtNode *fused_node, size_t min_nodes, size_t max_nodes,
                                   actx_ep_bf16_fused *out, bool *fits) {
  *fits = false;
  out->n_nodes = out->n_inputs = 0;
  size_t n = 0, n_in = 0;
  OrtStatus *st = api->Graph_GetNumNodes(graph, &n);
  if (st == NULL) st = api->Node_GetNumInputs(fused_node, &n_in);
  if (st != NULL || n < min_nodes || n > max_nodes || n > ACTX_EP_BF16_COMPILED_MAX_NODES ||
      n_in > ACTX_EP_BF16_COMPILED_MAX_INPUTS)
    return st;
  if ((st = api->Graph_GetNodes(graph, out->nodes, n)) != NULL ||
      (n_in > 0 && (st = api->Node_GetInputs(fused_node, out->inputs, n_in)) != NULL))
    return st;
  out->n_nodes = n;
  out->n_inputs = n_in;
  *fits = true;
  return NULL;
}

OrtStatus *actx_ep_bf16_fused_input(const OrtApi *api, const actx_ep_bf16_fused *fused,
                                    const char *name, size_t *index) {
  *index = SIZE_MAX;
  for (size_t i = 0; i < fused->n_inputs && name != NULL; i++) {
    const char *in_name = NULL;
    OrtStatus *st = api->GetValueInfoName(fused->inputs[i], &in_name);
    if (st != NULL) return st;
    if (in_name != NULL && strcmp(in_name, name) == 0) {
      *index = i;
      return NULL;
    }
  }
  return NULL;
}

static OrtStatus *compiled_create_state(OrtNodeComputeInfo *self, OrtNodeComputeContext *ctx,
                                        void **state) {
  (void)self;
  (void)ctx;
  *state = NULL; /* per-call state lives on Compute's stack */
  return NULL;
}

static void compiled_release_state(OrtNodeComputeInfo *self, void *state) {
  (void)self;
  (void)state;
}

static OrtStatus *compiled_compute(OrtNodeComputeInfo *self, void *state,
                                   OrtKernelContext *context) {
  (void)state;
  const actx_ep_bf16_compiled *node = (const actx_ep_bf16_compiled *)self;
  const OrtApi *api = node->api;
  size_t n_in = 0, n_out = 0;
  OrtStatus *st = api->KernelContext_GetInputCount(context, &n_in);
  if (st == NULL) st = api->KernelContext_GetOutputCount(context, &n_out);
  if (st != NULL) return st;
  if (n_out == 0) return NULL; /* nothing reads the result (the claims avoid it) */
  if (n_in != node->n_inputs)
    return actx_ep_error(api, ORT_EP_FAIL, "%s: %zu inputs, compiled for %zu", node->label, n_in,
                         node->n_inputs);
  actx_tensor in[ACTX_EP_BF16_COMPILED_MAX_INPUTS];
  for (size_t i = 0; i < n_in; i++) {
    const OrtValue *value = NULL;
    if ((st = api->KernelContext_GetInput(context, i, &value)) != NULL) return st;
    if (value == NULL)
      return actx_ep_error(api, ORT_EP_FAIL, "%s: input %zu has no value", node->label, i);
    if ((st = actx_ep_bf16_tensor(api, node->label, value, i, &in[i])) != NULL) return st;
  }
  const char *why = NULL;
  actx_tensor out = {.elem = ACTX_ELEM_BF16};
  actx_status as = node->ops->shape(node, in, n_in, &out.shape, &why);
  if (as == ACTX_OK) {
    OrtValue *value = NULL;
    if ((st = api->KernelContext_GetOutput(context, 0, out.shape.dims, out.shape.rank,
                                           &value)) != NULL ||
        (st = api->GetTensorMutableData(value, &out.data)) != NULL)
      return st;
    actx_ep_ort_runner runner;
    actx_parallel par;
    actx_ep_bf16_parallel(api, context, node->pool, node->label, &runner, &par);
    as = node->ops->run(node, in, n_in, &out, &par, &why);
  }
  if (as == ACTX_OK) return NULL;
  return actx_ep_error(api, as == ACTX_ERROR_INVALID_ARGUMENT ? ORT_INVALID_ARGUMENT : ORT_EP_FAIL,
                       "%s: %s (%s)", node->label, why != NULL && why[0] ? why : "failed",
                       actx_status_string(as));
}

OrtStatus *actx_ep_bf16_compiled_init(actx_ep_bf16_compiled *node, const OrtApi *api,
                                      actx_ep_pool_facts *pool,
                                      const actx_ep_bf16_compiled_ops *ops, size_t n_inputs) {
  if (n_inputs > ACTX_EP_BF16_COMPILED_MAX_INPUTS)
    return actx_ep_error(api, ORT_EP_FAIL, "%s: %zu inputs, at most %d", node->label, n_inputs,
                         ACTX_EP_BF16_COMPILED_MAX_INPUTS);
  node->info.ort_version_supported = ORT_API_VERSION;
  node->info.CreateState = compiled_create_state;
  node->info.Compute = compiled_compute;
  node->info.ReleaseState = compiled_release_state;
  node->api = api;
  node->pool = pool;
  node->ops = ops;
  node->n_inputs = n_inputs;
  return NULL;
}

bool actx_ep_bf16_compiled_release(OrtNodeComputeInfo *info) {
  if (info == NULL || info->Compute != compiled_compute) return false;
  actx_ep_bf16_compiled *node = (actx_ep_bf16_compiled *)info;
  node->ops->destroy(node);
  return true;
}
