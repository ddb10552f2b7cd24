/* A Conv and the activation that alone reads its result, as one compiled node (bf16.h, "an
 * activation in its producer"): the activation's table is applied as the Conv rounds each
 * result, while it is in cache, instead of in a pass over memory of its own.
 *
 * GetCapability: among the nodes the service takes, a Conv whose result one node alone reads
 * (and no graph output is), that node a table-driven unary op (Relu, LeakyRelu, HardSwish,
 * HardSigmoid...), is handed to ORT with it as one node to fuse. The Conv's constant inputs (W,
 * B) are left out of the fused node (drop_constant_initializers): Compile hands them to the
 * kernel, which keeps W reordered and B widened as PrePackWeight has a single Conv's kernel do,
 * so the weights are held once; a constant the kernel does not keep is copied and given to each
 * run.
 *
 * Compile reads the two nodes again (the claim's reader, the kernels' creation), fuses the
 * activation into the Conv's kernel (actx_bf16_kernel_fuse_activation) and maps the Conv's
 * inputs: the fused node's by name, or the constants. Compute runs the Conv's kernel over ORT's
 * pool. After Compile the kernel is only read: concurrent Run() calls share it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bf16_ep.h"

/* ---- GetCapability ------------------------------------------------------------------------ */

OrtStatus *actx_ep_bf16_fuse_conv_activations(const OrtApi *api, const OrtLogger *logger,
                                              const OrtNode *const *nodes, size_t n,
                                              bool *pending, const actx_bf16_op *ops,
                                              const bool *tables,
                                              OrtEpGraphSupportInfo *support) {
  const OrtEpApi *ep_api = api->GetEpApi();
  actx_ep_positions positions = {0};
  OrtStatus *st = actx_ep_positions_build(api, nodes, n, &positions);
  for (size_t i = 0; i < n && st == NULL; i++) {
    if (!pending[i] || ops[i] != ACTX_BF16_OP_CONV) continue;
    const OrtValueInfo *y = NULL;
    if ((st = actx_ep_node_output(api, nodes[i], &y)) != NULL || y == NULL) continue;
    const OrtNode *consumers[ACTX_EP_MAX_CONSUMERS];
    size_t n_consumers = 0;
    bool graph_output = false;
    if ((st = actx_ep_value_consumers(api, y, consumers, ACTX_EP_MAX_CONSUMERS, &n_consumers,
                                      &graph_output)) != NULL)
      break;
    if (graph_output || n_consumers != 1) continue;
    const size_t act = actx_ep_position(&positions, consumers[0]);
    if (act == SIZE_MAX || !pending[act] || !tables[act]) continue;
    const OrtNode *members[2] = {nodes[i], nodes[act]};
    /* the Conv's weights are given to Compile, not to every run (the file comment) */
    const OrtNodeFusionOptions fusion = {.ort_version_supported = ORT_API_VERSION,
                                         .drop_constant_initializers = true};
    if ((st = ep_api->EpGraphSupportInfo_AddNodesToFuse(support, members, 2, &fusion)) != NULL)
      break;
    pending[i] = pending[act] = false;
    const char *name = NULL, *op_type = NULL;
    if (api->Node_GetName(nodes[i], &name) != NULL) name = NULL;
    if (api->Node_GetOperatorType(nodes[act], &op_type) != NULL) op_type = NULL;
    actx_ep_log(api, logger, ORT_LOGGING_LEVEL_VERBOSE,
                "actx: bfloat16 Conv '%s' and its %s as one node", name != NULL ? name : "",
                op_type != NULL ? op_type : "activation");
  }
  actx_ep_positions_free(&positions);
  return st;
}

/* ---- Compile and Compute ------------------------------------------------------------------ */

/* Where each input of the Conv comes from in a run: the fused node's input `fused` (>= 0), or
 * `held` (fused -1): ACTX_TENSOR_ABSENT for a constant the kernel keeps or an input the node
 * leaves out, else a copy of a constant. */
typedef struct conv_input {
  int fused;
  actx_tensor held;
} conv_input;

typedef struct conv_act_kernel {
  OrtNodeComputeInfo info; /* first: ORT hands &info back */
  const OrtApi *api;
  actx_ep_pool_facts *pool;
  actx_bf16_kernel *conv, *activation; /* the activation's table is in use by conv */
  size_t n_fused_inputs, n_conv_inputs;
  conv_input inputs[ACTX_BF16_MAX_INPUTS];
  char label[112]; /* "Conv 'x' and its Relu", for messages */
} conv_act_kernel;

static OrtStatus *conv_act_create_state(OrtNodeComputeInfo *self, OrtNodeComputeContext *ctx,
                                        void **state) {
  (void)self;
  (void)ctx;
  *state = NULL; /* per-call state lives on Compute's stack */
  return NULL;
}

static void conv_act_release_state(OrtNodeComputeInfo *self, void *state) {
  (void)self;
  (void)state;
}

static OrtStatus *conv_act_compute(OrtNodeComputeInfo *self, void *state,
                                   OrtKernelContext *context) {
  (void)state;
  const conv_act_kernel *k = (const conv_act_kernel *)self;
  const OrtApi *api = k->api;
  size_t n_in = 0;
  OrtStatus *st = api->KernelContext_GetInputCount(context, &n_in);
  if (st != NULL) return st;
  if (n_in != k->n_fused_inputs)
    return actx_ep_error(api, ORT_EP_FAIL, "%s: %zu inputs, compiled for %zu", k->label, n_in,
                         k->n_fused_inputs);
  actx_tensor in[ACTX_BF16_MAX_INPUTS];
  for (size_t j = 0; j < k->n_conv_inputs; j++) {
    const conv_input *c = &k->inputs[j];
    if (c->fused < 0) {
      in[j] = c->held;
      continue;
    }
    const OrtValue *value = NULL;
    if ((st = api->KernelContext_GetInput(context, (size_t)c->fused, &value)) != NULL) return st;
    if (value == NULL)
      return actx_ep_error(api, ORT_EP_FAIL, "%s: input %d has no value", k->label, c->fused);
    if ((st = actx_ep_bf16_tensor(api, k->label, value, j, &in[j])) != NULL) return st;
  }
  const char *why = NULL;
  actx_tensor out = {.elem = ACTX_ELEM_COUNT};
  actx_status as = actx_bf16_kernel_shapes(k->conv, in, k->n_conv_inputs, &out, 1, &why);
  if (as == ACTX_OK) {
    OrtValue *value = NULL;
    if ((st = api->KernelContext_GetOutput(context, 0, out.shape.dims, out.shape.rank,
                                           &value)) != NULL ||
        (st = api->GetTensorMutableData(value, &out.data)) != NULL)
      return st;
    actx_ep_ort_runner runner;
    actx_parallel par;
    actx_ep_bf16_parallel(api, context, k->pool, k->label, &runner, &par);
    as = actx_bf16_kernel_run(k->conv, in, k->n_conv_inputs, &out, 1, &par, &why);
  }
  if (as == ACTX_OK) return NULL;
  return actx_ep_error(api, as == ACTX_ERROR_INVALID_ARGUMENT ? ORT_INVALID_ARGUMENT : ORT_EP_FAIL,
                       "%s: %s (%s)", k->label, why != NULL && why[0] ? why : "failed",
                       actx_status_string(as));
}

static void conv_act_kernel_free(conv_act_kernel *k) {
  if (k == NULL) return;
  actx_bf16_kernel_destroy(k->conv);
  actx_bf16_kernel_destroy(k->activation);
  for (size_t j = 0; j < ACTX_BF16_MAX_INPUTS; j++)
    if (k->inputs[j].fused < 0) free(k->inputs[j].held.data);
  free(k);
}

bool actx_ep_bf16_conv_act_release(OrtNodeComputeInfo *info) {
  if (info == NULL || info->Compute != conv_act_compute) return false;
  conv_act_kernel_free((conv_act_kernel *)info);
  return true;
}

/* The node's kernel as the claim made it; *kernel NULL (status NULL) when the service does not
 * run it. */
static OrtStatus *node_kernel(const OrtApi *api, const OrtNode *node, actx_bf16_op *op,
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

/* Where the Conv's input j (value v) comes from (conv_input); constants handed to the kernel. */
static OrtStatus *map_input(const OrtApi *api, conv_act_kernel *k, size_t j,
                            const OrtValueInfo *v, const OrtValueInfo *const *fused_inputs) {
  conv_input *c = &k->inputs[j];
  c->fused = -1;
  c->held = ACTX_TENSOR_ABSENT;
  const char *name = NULL;
  OrtStatus *st = v != NULL ? api->GetValueInfoName(v, &name) : NULL;
  if (st != NULL || name == NULL || name[0] == '\0') return st; /* left out */
  for (size_t i = 0; i < k->n_fused_inputs; i++) {
    const char *in_name = NULL;
    if ((st = api->GetValueInfoName(fused_inputs[i], &in_name)) != NULL) return st;
    if (in_name != NULL && strcmp(in_name, name) == 0) {
      c->fused = (int)i;
      return NULL;
    }
  }
  bool is_const = false;
  const OrtValue *value = NULL;
  if ((st = api->ValueInfo_IsConstantInitializer(v, &is_const)) != NULL) return st;
  if (!is_const || (st = api->ValueInfo_GetInitializerValue(v, &value)) != NULL || value == NULL)
    return st != NULL ? st
                      : actx_ep_error(api, ORT_EP_FAIL,
                                      "%s: input '%s' is neither an input nor a constant",
                                      k->label, name);
  actx_tensor t;
  if ((st = actx_ep_bf16_tensor(api, k->label, value, j, &t)) != NULL) return st;
  bool packed = false;
  const char *why = NULL;
  const actx_status as = actx_bf16_kernel_pack(k->conv, j, &t, &packed, &why);
  if (as != ACTX_OK)
    return actx_ep_error(api, ORT_EP_FAIL, "%s: constant '%s': %s (%s)", k->label, name, why,
                         actx_status_string(as));
  if (packed) return NULL;
  /* the kernel has no form of its own for it: a copy, for every run */
  const size_t bytes = (size_t)actx_shape_elements(&t.shape) * 2;
  c->held = t;
  if ((c->held.data = malloc(bytes > 0 ? bytes : 1)) == NULL)
    return actx_ep_error(api, ORT_FAIL, "%s: out of memory copying '%s'", k->label, name);
  if (bytes > 0) memcpy(c->held.data, t.data, bytes);
  return NULL;
}

OrtStatus *actx_ep_bf16_conv_act_compile(const OrtApi *api, actx_ep_pool_facts *pool,
                                         const OrtGraph *graph, const OrtNode *fused_node,
                                         OrtNodeComputeInfo **out) {
  *out = NULL;
  size_t n = 0, n_in = 0;
  OrtStatus *st = api->Graph_GetNumNodes(graph, &n);
  if (st == NULL && n == 2) st = api->Node_GetNumInputs(fused_node, &n_in);
  if (st != NULL || n != 2 || n_in > ACTX_BF16_MAX_INPUTS) return st;
  const OrtNode *nodes[2];
  actx_bf16_op ops[2] = {ACTX_BF16_OP_COUNT, ACTX_BF16_OP_COUNT};
  actx_bf16_kernel *kernels[2] = {NULL, NULL};
  const OrtValueInfo *fused_inputs[ACTX_BF16_MAX_INPUTS];
  conv_act_kernel *k = NULL;
  if ((st = api->Graph_GetNodes(graph, nodes, 2)) != NULL) return st;
  for (size_t i = 0; i < 2 && st == NULL; i++) st = node_kernel(api, nodes[i], &ops[i], &kernels[i]);
  const size_t c = ops[0] == ACTX_BF16_OP_CONV ? 0 : 1; /* the Conv; the other is its activation */
  if (st != NULL || ops[c] != ACTX_BF16_OP_CONV || kernels[0] == NULL || kernels[1] == NULL ||
      !actx_bf16_kernel_is_activation(kernels[1 - c]))
    goto done; /* not a Conv and its activation: another compile's */
  if ((k = calloc(1, sizeof *k)) == NULL) {
    st = actx_ep_error(api, ORT_FAIL, "out of memory compiling a Conv and its activation");
    goto done;
  }
  const char *conv_name = NULL, *act_type = NULL;
  if (api->Node_GetName(nodes[c], &conv_name) != NULL) conv_name = NULL;
  if (api->Node_GetOperatorType(nodes[1 - c], &act_type) != NULL) act_type = NULL;
  snprintf(k->label, sizeof k->label, "Conv '%s' and its %s", conv_name ? conv_name : "",
           act_type ? act_type : "activation");
  k->conv = kernels[c];
  k->activation = kernels[1 - c];
  kernels[0] = kernels[1] = NULL; /* k's now */
  if (!actx_bf16_kernel_fuse_activation(k->conv, k->activation)) {
    st = actx_ep_error(api, ORT_EP_FAIL, "%s: the Conv cannot apply its activation", k->label);
    goto done;
  }
  k->n_fused_inputs = n_in;
  if (n_in > 0 && (st = api->Node_GetInputs(fused_node, fused_inputs, n_in)) != NULL) goto done;
  const OrtValueInfo *conv_in[ACTX_BF16_MAX_INPUTS];
  size_t n_conv_in = 0;
  if ((st = actx_ep_node_inputs(api, nodes[c], conv_in, ACTX_BF16_MAX_INPUTS, &n_conv_in)) !=
      NULL)
    goto done;
  k->n_conv_inputs = n_conv_in < ACTX_BF16_MAX_INPUTS ? n_conv_in : ACTX_BF16_MAX_INPUTS;
  for (size_t j = 0; j < ACTX_BF16_MAX_INPUTS; j++) k->inputs[j].fused = -1;
  for (size_t j = 0; j < k->n_conv_inputs && st == NULL; j++)
    st = map_input(api, k, j, conv_in[j], fused_inputs);
  if (st != NULL) goto done;
  k->info.ort_version_supported = ORT_API_VERSION;
  k->info.CreateState = conv_act_create_state;
  k->info.Compute = conv_act_compute;
  k->info.ReleaseState = conv_act_release_state;
  k->api = api;
  k->pool = pool;
  *out = &k->info;
  k = NULL;
done:
  actx_bf16_kernel_destroy(kernels[0]);
  actx_bf16_kernel_destroy(kernels[1]);
  conv_act_kernel_free(k);
  return st;
}
