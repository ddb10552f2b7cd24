/* GetCapability's decision for a bfloat16 node: whether the bfloat16 service runs it.
 *
 * A node is offered when its (domain, op) is in bf16_ops.h and its computing input is bfloat16
 * (a float32 Add stays ORT's: ORT runs it, and its result is ORT's), or when it is a Cast from
 * float32 to bfloat16 (ORT runs it too, an element at a time; the service gives ORT's bits,
 * 2-2.5x faster per node from 128 Ki elements, the same below: bf16_cast.c). It is taken when
 * actx_bf16_kernel_create accepts it as the graph declares it (since-version, arity, element
 * types, attributes) and our registry has a kernel ORT matches to it. Anything else is left to
 * ORT, whose error ("Could not find an implementation for <op>(<version>) node with name 'x'")
 * then names the node; why we left it is logged at VERBOSE. No policy but `none` (which takes
 * nothing) leaves a node we can run: ORT's CPU EP has no bfloat16 arithmetic, so a bfloat16 node
 * we leave is a session that fails, whatever the `auto` table says. The bfloat16 activations
 * (Erf, Tanh, Sigmoid, the GELUs) are not here: claim.c takes them, and takes.c takes them under
 * `auto` at every size. */
#include <stdlib.h>
#include <string.h>

#include "bf16_ep.h"

size_t actx_ep_bf16_data_input(actx_bf16_op op) {
  /* Cast has none: it reads float32, which serves_types checks */
  return op == ACTX_BF16_OP_CAST ? SIZE_MAX : op == ACTX_BF16_OP_WHERE ? 1 : 0;
}

/* Whether the node's element types are the service's: its computing input bfloat16, or, for a
 * Cast, float32 to bfloat16. */
static bool serves_types(const actx_bf16_node *info, const actx_elem *output_elems) {
  if (info->op == ACTX_BF16_OP_CAST)
    return info->n_inputs == 1 && info->input_present[0] && info->output_present[0] &&
           info->input_elems[0] == ACTX_ELEM_F32 && output_elems[0] == ACTX_ELEM_BF16;
  const size_t data = actx_ep_bf16_data_input(info->op);
  return data < info->n_inputs && info->input_present[data] &&
         info->input_elems[data] == ACTX_ELEM_BF16;
}

/* Whether the bfloat16 service runs node; *why (static or kernel-owned, valid until the next
 * kernel is made) says why not. */
static OrtStatus *decide(const OrtApi *api, const OrtEpApi *ep_api, const OrtNode *node,
                         OrtEpGraphSupportInfo *support, bool *bf16_node, bool *take,
                         actx_bf16_op *op, bool *chains, bool *table, const char **why) {
  *bf16_node = false;
  *take = false;
  *chains = *table = false;
  *op = ACTX_BF16_OP_COUNT;
  const actx_ep_node_source src = {.api = api, .node = node};
  actx_bf16_node info;
  actx_elem output_elems[ACTX_BF16_MAX_OUTPUTS];
  OrtStatus *st = actx_ep_bf16_read_node(&src, &info, output_elems, why);
  if (st != NULL || info.op == ACTX_BF16_OP_COUNT) return st;
  /* a node of other element types is not this service's, even one the reader refused */
  if (!serves_types(&info, output_elems)) return NULL;
  *bf16_node = true;
  if (*why != NULL) return NULL;
  actx_bf16_kernel *kernel = NULL;
  if (actx_bf16_kernel_create(&info, &kernel, why) != ACTX_OK) {
    if (*why == NULL || (*why)[0] == '\0') *why = "the bfloat16 service refused it";
    return NULL;
  }
  *chains = info.n_outputs == 1 && actx_bf16_kernel_chains(kernel);
  *table = info.n_outputs == 1 && actx_bf16_kernel_is_activation(kernel);
  *op = info.op;
  actx_bf16_kernel_destroy(kernel);
  const OrtKernelDef *def = NULL;
  if ((st = ep_api->EpGraphSupportInfo_LookUpKernel(support, node, &def)) != NULL) return st;
  if (def == NULL) {
    *why = "no registered kernel matches its element types";
    return NULL;
  }
  *why = NULL;
  *take = true;
  return NULL;
}

OrtStatus *actx_ep_bf16_would_take(const OrtApi *api, const OrtNode *node,
                                   OrtEpGraphSupportInfo *support, actx_bf16_op *op,
                                   bool *takes) {
  bool bf16_node = false, chains = false, table = false;
  const char *why = NULL;
  return decide(api, api->GetEpApi(), node, support, &bf16_node, takes, op, &chains, &table,
                &why);
}

OrtStatus *actx_ep_bf16_take(const OrtApi *api, const OrtLogger *logger,
                             const OrtNode *const *nodes, size_t n, bool *taken,
                             OrtEpGraphSupportInfo *support) {
  const OrtEpApi *ep_api = api->GetEpApi();
  /* what each node's decision was: taken, its op, whether it can be a chain step, and whether
   * a Conv can apply it */
  bool *pending = calloc(n ? n : 1, sizeof *pending), *chains = calloc(n ? n : 1, sizeof *chains);
  bool *tables = calloc(n ? n : 1, sizeof *tables);
  actx_bf16_op *ops = malloc((n ? n : 1) * sizeof *ops);
  OrtStatus *st = NULL;
  if (pending == NULL || chains == NULL || tables == NULL || ops == NULL) {
    st = actx_ep_error(api, ORT_FAIL, "out of memory deciding %zu nodes", n);
    goto done;
  }
  for (size_t i = 0; i < n && st == NULL; i++) {
    if (taken[i]) continue;
    bool others = false;
    if ((st = actx_ep_node_is_others(api, nodes[i], &others)) != NULL) break;
    if (others) continue; /* an earlier EP took it */
    bool bf16_node = false, take = false;
    const char *why = NULL;
    st = decide(api, ep_api, nodes[i], support, &bf16_node, &take, &ops[i], &chains[i],
                &tables[i], &why);
    if (st != NULL || !bf16_node) continue;
    const char *name = NULL, *op_type = NULL;
    if ((st = api->Node_GetName(nodes[i], &name)) != NULL ||
        (st = api->Node_GetOperatorType(nodes[i], &op_type)) != NULL)
      break;
    if (!take) {
      actx_ep_log(api, logger, ORT_LOGGING_LEVEL_VERBOSE,
                  "actx: declined bfloat16 node '%s' (%s): %s", name != NULL ? name : "",
                  op_type != NULL ? op_type : "", why);
      continue;
    }
    pending[i] = taken[i] = true;
    actx_ep_log(api, logger, ORT_LOGGING_LEVEL_VERBOSE, "actx: claimed bfloat16 node '%s' (%s)",
                name != NULL ? name : "", op_type != NULL ? op_type : "");
  }
  /* a Conv and its activation first (bf16_conv_act.c), then chains (bf16_chain.c), then every
   * other node on its own */
  if (st == NULL)
    st = actx_ep_bf16_fuse_conv_activations(api, logger, nodes, n, pending, ops, tables, support);
  if (st == NULL) st = actx_ep_bf16_fuse_chains(api, logger, nodes, n, pending, chains, support);
  for (size_t i = 0; i < n && st == NULL; i++)
    if (pending[i]) st = ep_api->EpGraphSupportInfo_AddSingleNode(support, nodes[i]);
done:
  free(pending);
  free(chains);
  free(tables);
  free(ops);
  return st;
}
