/* The registered kernels of the bfloat16 service: one per op and since-version of bf16_ops.h,
 * which ORT runs like its own kernels for the nodes bf16_claim.c handed it (AddSingleNode).
 *
 * Type constraints come from ORT's own schema of each op version (OrtEpApi GetOpSchema), so
 * their names are the ones ORT matches ("T", Resize's "T1", LayerNormalization's "U", MaxPool's
 * "I", ...): the constraint of the computing input allows bfloat16 only; every other one the
 * element types the service reads or writes, of those the schema allows (int64 sizes and
 * indices, bool conditions and results, float32 statistics and scales).
 *
 * A kernel is made from what OrtKernelInfo says about its node, read by the same reader as the
 * claim (bf16_attrs.c), and is an actx_bf16_kernel. ORT hands it each constant input once
 * (PrePackWeight) before the first run; where the service keeps its own form of it (a reordered
 * weight), is_packed tells ORT it may free its copy, and the run then sees that input as absent
 * or as the original, which the service accepts either way. After that the kernel is only read,
 * so concurrent Run() calls share it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bf16_ep.h"

/* What one registered kernel's creation function gets. */
typedef struct kernel_state {
  const OrtApi *api;
  actx_bf16_op op;
  int since;
} kernel_state;

struct actx_ep_bf16_states {
  size_t n;
  kernel_state states[];
};

typedef struct bf16_kernel {
  OrtKernelImpl impl; /* first: ORT hands &impl back */
  const OrtApi *api;
  actx_bf16_kernel *kernel;
  actx_bf16_node node;
  actx_elem output_elems[ACTX_BF16_MAX_OUTPUTS]; /* as the graph declares them */
  actx_ep_pool_facts *pool;                     /* the session's, kept by its OrtEp */
  char label[112];                              /* "node 'x'", for messages */
} bf16_kernel;

static OrtErrorCode ort_code(actx_status st) {
  switch (st) {
    case ACTX_ERROR_INVALID_ARGUMENT: return ORT_INVALID_ARGUMENT;
    case ACTX_ERROR_OUT_OF_MEMORY: return ORT_FAIL;
    default: return ORT_EP_FAIL;
  }
}

static OrtStatus *service_error(const bf16_kernel *k, const char *step, actx_status st,
                                const char *why) {
  return actx_ep_error(k->api, ort_code(st), "%s: %s: %s (%s)", k->label, step,
                       why != NULL && why[0] != '\0' ? why : "failed", actx_status_string(st));
}

OrtStatus *actx_ep_bf16_tensor(const OrtApi *api, const char *label, const OrtValue *value,
                               size_t index, actx_tensor *out) {
  ONNXTensorElementDataType type;
  const int64_t *dims = NULL;
  size_t rank = 0;
  OrtStatus *st = api->GetTensorElementTypeAndShapeDataReference(value, &type, &dims, &rank);
  if (st != NULL) return st;
  out->elem = actx_ep_bf16_elem(type);
  if (out->elem == ACTX_ELEM_COUNT)
    return actx_ep_error(api, ORT_INVALID_ARGUMENT,
                         "%s: input %zu has element type %d, which the bfloat16 service does not "
                         "read",
                         label, index, (int)type);
  if (rank > ACTX_BF16_MAX_RANK)
    return actx_ep_error(api, ORT_INVALID_ARGUMENT, "%s: input %zu has rank %zu, above %d",
                         label, index, rank, ACTX_BF16_MAX_RANK);
  out->shape.rank = rank;
  for (size_t d = 0; d < rank; d++) out->shape.dims[d] = dims[d];
  const void *data = NULL;
  if ((st = api->GetTensorData(value, &data)) != NULL) return st;
  out->data = (void *)data; /* the service only reads inputs */
  return NULL;
}

void actx_ep_bf16_parallel(const OrtApi *api, OrtKernelContext *context,
                           actx_ep_pool_facts *pool, const char *label,
                           actx_ep_ort_runner *runner, actx_parallel *par) {
  *runner = (actx_ep_ort_runner){api, context};
  /* the thread count, not SIZE_MAX as for the activations: oneDNN sizes its own OpenMP team
   * by it, and must not take more threads than the session has */
  size_t threads = atomic_load(&pool->threads);
  uint64_t call_ns = atomic_load(&pool->call_ns);
  if (threads == 0) {
    threads = actx_ep_ort_pool_threads(runner);
    call_ns = actx_ep_ort_pool_call_ns(runner, threads);
    atomic_store(&pool->call_ns, call_ns);
    atomic_store(&pool->threads, threads);
    const OrtLogger *logger = NULL;
    if (api->KernelContext_GetLogger(context, &logger) == NULL)
      actx_ep_log(api, logger, ORT_LOGGING_LEVEL_VERBOSE,
                  "actx: the session's intra-op pool runs %zu thread(s), a ParallelFor costs "
                  "%.1f us (%s)",
                  threads, (double)call_ns / 1000.0, label);
  }
  *par = (actx_parallel){actx_ep_ort_parallel_for, runner, threads, call_ns};
}

static bf16_kernel *kernel_of(OrtKernelImpl *impl) { return (bf16_kernel *)impl; }

static OrtStatus *kernel_compute(OrtKernelImpl *self, OrtKernelContext *context) {
  const bf16_kernel *k = kernel_of(self);
  const OrtApi *api = k->api;
  const size_t n_in = k->node.n_inputs, n_out = k->node.n_outputs;
  actx_tensor in[ACTX_BF16_MAX_INPUTS], out[ACTX_BF16_MAX_OUTPUTS];
  size_t n_ctx_in = 0;
  OrtStatus *st = api->KernelContext_GetInputCount(context, &n_ctx_in);
  if (st != NULL) return st;
  for (size_t i = 0; i < n_in; i++) {
    in[i] = ACTX_TENSOR_ABSENT;
    const OrtValue *value = NULL;
    int has_value = 0;
    /* an optional input left out (no value), or a constant ORT freed once the kernel packed it
     * (ORT 1.30 then passes an OrtValue that holds nothing) */
    if (i >= n_ctx_in || (st = api->KernelContext_GetInput(context, i, &value)) != NULL ||
        value == NULL || (st = api->HasValue(value, &has_value)) != NULL || !has_value) {
      if (st != NULL) return st;
      continue;
    }
    if ((st = actx_ep_bf16_tensor(api, k->label, value, i, &in[i])) != NULL) return st;
    if (k->node.input_present[i] && in[i].elem != k->node.input_elems[i])
      return actx_ep_error(api, ORT_INVALID_ARGUMENT, "%s: input %zu is %s, the graph declares %s",
                           k->label, i, actx_ep_bf16_elem_name(in[i].elem),
                           actx_ep_bf16_elem_name(k->node.input_elems[i]));
  }
  const char *why = NULL;
  actx_status as = actx_bf16_kernel_shapes(k->kernel, in, n_in, out, n_out, &why);
  if (as != ACTX_OK) return service_error(k, "output shapes", as, why);
  for (size_t j = 0; j < n_out; j++) {
    if (!k->node.output_present[j]) {
      out[j].data = NULL;
      continue;
    }
    if (out[j].elem != k->output_elems[j])
      return actx_ep_error(api, ORT_INVALID_ARGUMENT,
                           "%s: output %zu would be %s, the graph declares %s", k->label, j,
                           actx_ep_bf16_elem_name(out[j].elem),
                           actx_ep_bf16_elem_name(k->output_elems[j]));
    OrtValue *value = NULL;
    void *data = NULL;
    if ((st = api->KernelContext_GetOutput(context, j, out[j].shape.dims, out[j].shape.rank,
                                           &value)) != NULL ||
        (st = api->GetTensorMutableData(value, &data)) != NULL)
      return st;
    out[j].data = data;
  }
  actx_ep_ort_runner runner;
  actx_parallel par;
  actx_ep_bf16_parallel(api, context, k->pool, k->label, &runner, &par);
  as = actx_bf16_kernel_run(k->kernel, in, n_in, out, n_out, &par, &why);
  return as == ACTX_OK ? NULL : service_error(k, "run", as, why);
}

static OrtStatus *kernel_prepack(OrtKernelImpl *self, const OrtValue *tensor, int input_index,
                                 OrtAllocator *allocator, OrtSharedPrePackedWeightCache *cache,
                                 bool *is_packed) {
  (void)allocator;
  /* the packed form is the service's own memory, not ORT's allocator's, so nothing is stored in
   * a shared cache: ORT accepts a kernel that packs without sharing */
  (void)cache;
  bf16_kernel *k = kernel_of(self);
  *is_packed = false;
  if (input_index < 0 || (size_t)input_index >= k->node.n_inputs) return NULL;
  actx_tensor value;
  OrtStatus *st = actx_ep_bf16_tensor(k->api, k->label, tensor, (size_t)input_index, &value);
  if (st != NULL) return st;
  bool packed = false;
  const char *why = NULL;
  const actx_status as = actx_bf16_kernel_pack(k->kernel, (size_t)input_index, &value, &packed,
                                               &why);
  if (as != ACTX_OK) return service_error(k, "packing a constant input", as, why);
  *is_packed = packed;
  return NULL;
}

static void kernel_release(OrtKernelImpl *self) {
  bf16_kernel *k = kernel_of(self);
  if (k == NULL) return;
  actx_bf16_kernel_destroy(k->kernel);
  free(k);
}

static OrtStatus *create_kernel(void *state, const OrtKernelInfo *info, OrtKernelImpl **out) {
  const kernel_state *ks = state;
  const OrtApi *api = ks->api;
  *out = NULL;
  bf16_kernel *k = calloc(1, sizeof *k);
  if (k == NULL) return actx_ep_error(api, ORT_FAIL, "out of memory creating a bfloat16 kernel");
  k->api = api;
  const actx_ep_node_source src = {.api = api, .info = info};
  char name[96] = "";
  OrtStatus *st = actx_ep_bf16_node_name(&src, name, sizeof name);
  snprintf(k->label, sizeof k->label, "node '%s'", name);
  const char *why = NULL;
  const OrtEp *ep = NULL;
  if (st == NULL) st = api->GetEpApi()->KernelInfo_GetEp(info, &ep);
  if (st == NULL && ep == NULL)
    st = actx_ep_error(api, ORT_EP_FAIL, "%s: the kernel has no EP", k->label);
  if (st == NULL) k->pool = actx_ep_pool_facts_slot(ep);
  if (st == NULL) st = actx_ep_bf16_read_node(&src, &k->node, k->output_elems, &why);
  if (st == NULL && why == NULL && k->node.op != ks->op)
    why = "registered for another operator";
  if (st == NULL && why != NULL)
    st = actx_ep_error(api, ORT_EP_FAIL, "%s: %s", k->label, why);
  if (st == NULL) {
    const actx_status as = actx_bf16_kernel_create(&k->node, &k->kernel, &why);
    if (as != ACTX_OK) st = service_error(k, "creating its kernel", as, why);
  }
  if (st != NULL) {
    kernel_release(&k->impl);
    return st;
  }
  k->impl.ort_version_supported = ORT_API_VERSION;
  k->impl.Compute = kernel_compute;
  k->impl.Release = kernel_release;
  k->impl.PrePackWeight = kernel_prepack;
  *out = &k->impl;
  return NULL;
}

/* ---- registration -------------------------------------------------------------------------- */

/* The element types the service reads or writes, as ORT's schemas spell them. */
static const struct {
  const char *schema_name;
  ONNXTensorElementDataType type;
} served_types[] = {
    {"tensor(bfloat16)", ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16},
    {"tensor(float)", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT},
    {"tensor(int64)", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64},
    {"tensor(bool)", ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL},
};
#define N_SERVED_TYPES (sizeof served_types / sizeof served_types[0])

/* Adds to b the schema's type constraints, as the header comment says. */
static OrtStatus *add_constraints(const OrtApi *api, const OrtEpApi *ep_api,
                                  const OrtOpSchema *schema, size_t data_input,
                                  OrtKernelDefBuilder *b) {
  size_t n = 0;
  OrtStatus *st = ep_api->OpSchema_GetTypeConstraintCount(schema, &n);
  for (size_t c = 0; c < n && st == NULL; c++) {
    const OrtOpSchemaTypeConstraint *tc = NULL;
    const char *param = NULL;
    const char *const *allowed = NULL;
    const size_t *inputs = NULL;
    size_t n_allowed = 0, n_inputs = 0;
    if ((st = ep_api->OpSchema_GetTypeConstraint(schema, c, &tc)) != NULL ||
        (st = ep_api->OpSchemaTypeConstraint_GetTypeParamName(tc, &param)) != NULL ||
        (st = ep_api->OpSchemaTypeConstraint_GetAllowedTypes(tc, &allowed, &n_allowed)) != NULL ||
        (st = ep_api->OpSchemaTypeConstraint_GetInputIndices(tc, &inputs, &n_inputs)) != NULL)
      break;
    bool computing = false;
    for (size_t i = 0; i < n_inputs; i++) computing |= inputs[i] == data_input;
    const OrtDataType *types[N_SERVED_TYPES];
    size_t n_types = 0;
    for (size_t t = 0; t < N_SERVED_TYPES && st == NULL; t++) {
      if (computing && t > 0) break; /* bfloat16 only */
      bool in_schema = false;
      for (size_t a = 0; a < n_allowed; a++)
        in_schema |= strcmp(allowed[a], served_types[t].schema_name) == 0;
      if (in_schema) st = ep_api->GetTensorDataType(served_types[t].type, &types[n_types++]);
    }
    /* a constraint with none of them is left open: the service checks what it is given */
    if (st == NULL && n_types > 0)
      st = ep_api->KernelDefBuilder_AddTypeConstraint(b, param, types, n_types);
  }
  (void)api;
  return st;
}

/* One op version's kernel; *added false when ORT has no schema of that version (then no node
 * of it can exist in a session). */
static OrtStatus *add_kernel(const OrtApi *api, OrtKernelRegistry *registry, kernel_state *ks,
                             bool *added) {
  const OrtEpApi *ep_api = api->GetEpApi();
  const actx_bf16_op_info *info = actx_bf16_op_info_get(ks->op);
  *added = false;
  OrtOpSchema *schema = NULL;
  OrtStatus *st = ep_api->GetOpSchema(info->name, ks->since, info->domain, &schema);
  if (st != NULL || schema == NULL) {
    if (st != NULL) api->ReleaseStatus(st);
    return NULL;
  }
  int schema_since = 0;
  OrtKernelDefBuilder *b = NULL;
  OrtKernelDef *def = NULL;
  st = ep_api->OpSchema_GetSinceVersion(schema, &schema_since);
  if (st == NULL && schema_since != ks->since) { /* ORT does not know this version */
    ep_api->ReleaseOpSchema(schema);
    return NULL;
  }
  if (st == NULL) st = ep_api->CreateKernelDefBuilder(&b);
  if (st == NULL) st = ep_api->KernelDefBuilder_SetOperatorType(b, info->name);
  if (st == NULL) st = ep_api->KernelDefBuilder_SetDomain(b, info->domain);
  if (st == NULL) st = ep_api->KernelDefBuilder_SetSinceVersion(b, ks->since, ks->since);
  if (st == NULL) st = ep_api->KernelDefBuilder_SetExecutionProvider(b, ACTX_EP_NAME);
  if (st == NULL) st = add_constraints(api, ep_api, schema, actx_ep_bf16_data_input(ks->op), b);
  if (st == NULL) st = ep_api->KernelDefBuilder_Build(b, &def);
  if (b != NULL) ep_api->ReleaseKernelDefBuilder(b);
  ep_api->ReleaseOpSchema(schema);
  if (st != NULL) return st;
  st = ep_api->KernelRegistry_AddKernel(registry, def, create_kernel, ks);
  ep_api->ReleaseKernelDef(def); /* the registry keeps its own copy */
  *added = st == NULL;
  return st;
}

OrtStatus *actx_ep_bf16_register(const OrtApi *api, OrtKernelRegistry *registry,
                                 actx_ep_bf16_states **out) {
  *out = NULL;
  size_t n = 0;
  for (int op = 0; op < ACTX_BF16_OP_COUNT; op++) {
    const actx_bf16_op_info *info = actx_bf16_op_info_get((actx_bf16_op)op);
    for (size_t v = 0; v < 4 && info->since[v] != 0; v++) n++;
  }
  actx_ep_bf16_states *s = calloc(1, sizeof *s + n * sizeof s->states[0]);
  if (s == NULL) return actx_ep_error(api, ORT_FAIL, "out of memory registering bfloat16 kernels");
  OrtStatus *st = NULL;
  for (int op = 0; op < ACTX_BF16_OP_COUNT && st == NULL; op++) {
    const actx_bf16_op_info *info = actx_bf16_op_info_get((actx_bf16_op)op);
    for (size_t v = 0; v < 4 && info->since[v] != 0 && st == NULL; v++) {
      kernel_state *ks = &s->states[s->n];
      *ks = (kernel_state){api, (actx_bf16_op)op, info->since[v]};
      bool added = false;
      st = add_kernel(api, registry, ks, &added);
      if (added) s->n++;
    }
  }
  if (st != NULL) {
    free(s);
    return st;
  }
  *out = s;
  return NULL;
}

void actx_ep_bf16_registry_free(actx_ep_bf16_states *states) { free(states); }
