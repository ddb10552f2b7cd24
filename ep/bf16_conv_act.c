/* A Conv and the activation that alone reads its result, as one compiled node (bf16.h, "an
 * activation in its producer"): the activation's table is applied as the Conv rounds each
 * result, while it is in cache, instead of in a pass over memory of its own.
 *
 * GetCapability: among the nodes the service takes, a Conv whose result one node alone reads
 * (and no graph output is), that node a table-driven unary op (Relu, LeakyRelu, HardSwish,
 * HardSigmoid...), is handed to ORT with it as one node to fuse. So is, before every other
 * claim, a Conv whose result only its SiLU x · sigmoid(x) reads (a Sigmoid and a Mul, which the
 * exact activations would otherwise take as one fused node, actx_ep_match_fusion): its table is
 * libactx's bfloat16 QuickGelu at alpha 1, the one that node looks up, so the bits are that
 * node's (not a Sigmoid's and a Mul's run apart, which round twice). The Conv's constant inputs (W,
 * B) are left out of the fused node (drop_constant_initializers): Compile hands them to the
 * kernel, which keeps W reordered and B widened as PrePackWeight has a single Conv's kernel do,
 * so the weights are held once; a constant the kernel does not keep is copied and given to each
 * run.
 *
 * Compile reads the nodes again (the claim's reader, the kernels' creation), fuses the
 * activation into the Conv's kernel (actx_bf16_kernel_fuse_activation, or for the SiLU
 * actx_bf16_kernel_fuse_exact) and maps the Conv's
 * inputs: the fused node's by name, or the constants. Compute (bf16_compiled.c) runs the Conv's
 * kernel over ORT's pool. After Compile the kernel is only read: concurrent Run() calls share
 * it. */
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
    const OrtValueInfo *y = NULL, *z = NULL;
    const OrtNode *reader = NULL;
    if ((st = actx_ep_node_output(api, nodes[i], &y)) != NULL || y == NULL ||
        (st = actx_ep_single_consumer(api, y, &reader)) != NULL || reader == NULL)
      continue;
    const size_t act = actx_ep_position(&positions, reader);
    if (act == SIZE_MAX || !pending[act] || !tables[act]) continue;
    /* the activation's result must be read (a fused node needs an output: ORT gives a node
     * none when nothing reads it) */
    bool read = false;
    if ((st = actx_ep_node_output(api, nodes[act], &z)) != NULL || z == NULL ||
        (st = actx_ep_value_is_read(api, z, &read)) != NULL || !read)
      continue;
    const OrtNode *members[2] = {nodes[i], nodes[act]};
    /* the Conv's weights are given to Compile, not to every run (the file comment) */
    const OrtNodeFusionOptions fusion = {.ort_version_supported = ORT_API_VERSION,
                                         .drop_constant_initializers = true};
    if ((st = ep_api->EpGraphSupportInfo_AddNodesToFuse(support, members, 2, &fusion)) != NULL)
      break;
    pending[i] = pending[act] = false;
    const char *name = NULL, *op_type = NULL;
    actx_ep_ignore(api, api->Node_GetName(nodes[i], &name), &name);
    actx_ep_ignore(api, api->Node_GetOperatorType(nodes[act], &op_type), &op_type);
    actx_ep_log(api, logger, ORT_LOGGING_LEVEL_VERBOSE,
                "actx: bfloat16 Conv '%s' and its %s as one node", name != NULL ? name : "",
                op_type != NULL ? op_type : "activation");
  }
  actx_ep_positions_free(&positions);
  return st;
}

/* Whether node is free to take: not taken, not assigned to another EP. */
static OrtStatus *free_to_take(const OrtApi *api, const actx_ep_positions *positions,
                               const bool *taken, const OrtNode *node, bool *out) {
  const size_t pos = actx_ep_position(positions, node);
  bool others = false;
  *out = false;
  if (pos == SIZE_MAX || taken[pos]) return NULL;
  OrtStatus *st = actx_ep_node_is_others(api, node, &others);
  *out = st == NULL && !others;
  return st;
}

/* Whether fusion f (a Sigmoid's match) is the bfloat16 SiLU x · sigmoid(x) of a Conv the
 * service takes, x read by f's nodes alone, all three free to take: *conv that Conv's position
 * (SIZE_MAX: not). */
static OrtStatus *silu_of_conv(const OrtApi *api, const actx_ep_positions *positions,
                               const bool *taken, OrtEpGraphSupportInfo *support,
                               const actx_ep_fusion *f, size_t *conv) {
  *conv = SIZE_MAX;
  if (f->family != ACTX_EP_FUSION_SIGMOID || f->node.op != ACTX_OP_QUICK_GELU ||
      f->node.alpha != 1.0f || f->node.dtype != ACTX_BF16 || f->node.has_bias ||
      f->bias_add != NULL || f->n_nodes != 2 || f->x == NULL || f->y == NULL)
    return NULL;
  const OrtNode *producer = NULL;
  OrtStatus *st = actx_ep_value_producer(api, f->x, &producer);
  if (st != NULL || producer == NULL) return st;
  const OrtNode *three[3] = {producer, f->nodes[0], f->nodes[1]};
  for (size_t k = 0; k < 3; k++) {
    bool is_free = false;
    if ((st = free_to_take(api, positions, taken, three[k], &is_free)) != NULL || !is_free)
      return st;
  }
  /* x read by the SiLU alone; its result read (a fused node needs an output) */
  const OrtNode *readers[ACTX_EP_MAX_CONSUMERS];
  size_t n_readers = 0;
  bool graph_output = false;
  if ((st = actx_ep_value_consumers(api, f->x, readers, ACTX_EP_MAX_CONSUMERS, &n_readers,
                                    &graph_output)) != NULL)
    return st;
  if (graph_output || n_readers == 0 || n_readers > ACTX_EP_MAX_CONSUMERS) return NULL;
  for (size_t r = 0; r < n_readers; r++)
    if (readers[r] != f->nodes[0] && readers[r] != f->nodes[1]) return NULL;
  bool read = false;
  if ((st = actx_ep_value_is_read(api, f->y, &read)) != NULL || !read) return st;
  actx_bf16_op op = ACTX_BF16_OP_COUNT;
  bool takes = false;
  if ((st = actx_ep_bf16_would_take(api, producer, support, &op, &takes)) != NULL) return st;
  if (takes && op == ACTX_BF16_OP_CONV) *conv = actx_ep_position(positions, producer);
  return NULL;
}

OrtStatus *actx_ep_bf16_fuse_conv_silu(const OrtApi *api, const OrtLogger *logger,
                                       const OrtNode *const *nodes, size_t n,
                                       const actx_ep_positions *positions, bool *taken,
                                       OrtEpGraphSupportInfo *support) {
  const OrtEpApi *ep_api = api->GetEpApi();
  OrtStatus *st = NULL;
  for (size_t i = 0; i < n && st == NULL; i++) {
    bool sigmoid = false, found = false;
    if (taken[i] || (st = actx_ep_node_is(api, nodes[i], "Sigmoid", NULL, &sigmoid)) != NULL ||
        !sigmoid)
      continue;
    actx_ep_fusion f;
    size_t c = SIZE_MAX;
    if ((st = actx_ep_match_fusion(api, nodes[i], &f, &found)) != NULL || !found ||
        (st = silu_of_conv(api, positions, taken, support, &f, &c)) != NULL ||
        c == SIZE_MAX)
      continue;
    const OrtNode *members[3] = {nodes[c], f.nodes[0], f.nodes[1]};
    /* the Conv's weights are given to Compile, not to every run (the file comment) */
    const OrtNodeFusionOptions fusion = {.ort_version_supported = ORT_API_VERSION,
                                         .drop_constant_initializers = true};
    if ((st = ep_api->EpGraphSupportInfo_AddNodesToFuse(support, members, 3, &fusion)) != NULL)
      break;
    for (size_t k = 0; k < 3; k++) taken[actx_ep_position(positions, members[k])] = true;
    const char *name = NULL;
    actx_ep_ignore(api, api->Node_GetName(nodes[c], &name), &name);
    actx_ep_log(api, logger, ORT_LOGGING_LEVEL_VERBOSE,
                "actx: bfloat16 Conv '%s' and its SiLU as one node", name != NULL ? name : "");
  }
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
  actx_ep_bf16_compiled base; /* first; its label "Conv 'x' and its Relu" */
  /* the activation's table is in use by conv (NULL for a SiLU: libactx's table, shared) */
  actx_bf16_kernel *conv, *activation;
  size_t n_conv_inputs;
  conv_input inputs[ACTX_BF16_MAX_INPUTS];
} conv_act_kernel;

/* The Conv's inputs of a run: the fused node's, or held. */
static void conv_inputs(const conv_act_kernel *k, const actx_tensor *in, actx_tensor *conv_in) {
  for (size_t j = 0; j < k->n_conv_inputs; j++)
    conv_in[j] = k->inputs[j].fused >= 0 ? in[k->inputs[j].fused] : k->inputs[j].held;
}

static actx_status conv_act_shape(const actx_ep_bf16_compiled *node, const actx_tensor *in,
                                  size_t n_in, actx_shape *out, const char **why) {
  (void)n_in; /* the fused node's count, checked by Compute */
  const conv_act_kernel *k = (const conv_act_kernel *)node;
  actx_tensor conv_in[ACTX_BF16_MAX_INPUTS], y = {.elem = ACTX_ELEM_COUNT};
  conv_inputs(k, in, conv_in);
  const actx_status st = actx_bf16_kernel_shapes(k->conv, conv_in, k->n_conv_inputs, &y, 1, why);
  if (st == ACTX_OK) *out = y.shape;
  return st;
}

static actx_status conv_act_run(const actx_ep_bf16_compiled *node, const actx_tensor *in,
                                size_t n_in, actx_tensor *out, const actx_parallel *par,
                                const char **why) {
  (void)n_in;
  const conv_act_kernel *k = (const conv_act_kernel *)node;
  actx_tensor conv_in[ACTX_BF16_MAX_INPUTS];
  conv_inputs(k, in, conv_in);
  return actx_bf16_kernel_run(k->conv, conv_in, k->n_conv_inputs, out, 1, par, why);
}

static void conv_act_kernel_free(conv_act_kernel *k) {
  if (k == NULL) return;
  actx_bf16_kernel_destroy(k->conv);
  actx_bf16_kernel_destroy(k->activation);
  for (size_t j = 0; j < ACTX_BF16_MAX_INPUTS; j++)
    if (k->inputs[j].fused < 0) free(k->inputs[j].held.data);
  free(k);
}

static void conv_act_destroy(actx_ep_bf16_compiled *node) {
  conv_act_kernel_free((conv_act_kernel *)node);
}

static const actx_ep_bf16_compiled_ops conv_act_ops = {conv_act_shape, conv_act_run,
                                                       conv_act_destroy};

/* Where the Conv's input j (value v) comes from (conv_input); constants handed to the kernel. */
static OrtStatus *map_input(const OrtApi *api, conv_act_kernel *k, size_t j,
                            const OrtValueInfo *v, const actx_ep_bf16_fused *fused) {
  conv_input *c = &k->inputs[j];
  c->fused = -1;
  c->held = ACTX_TENSOR_ABSENT;
  const char *name = NULL;
  size_t index = SIZE_MAX;
  OrtStatus *st = v != NULL ? api->GetValueInfoName(v, &name) : NULL;
  if (st != NULL || name == NULL || name[0] == '\0') return st; /* left out */
  if ((st = actx_ep_bf16_fused_input(api, fused, name, &index)) != NULL) return st;
  if (index != SIZE_MAX) {
    c->fused = (int)index;
    return NULL;
  }
  bool is_const = false;
  const OrtValue *value = NULL;
  if ((st = api->ValueInfo_IsConstantInitializer(v, &is_const)) != NULL) return st;
  if (!is_const || (st = api->ValueInfo_GetInitializerValue(v, &value)) != NULL || value == NULL)
    return st != NULL ? st
                      : actx_ep_error(api, ORT_EP_FAIL,
                                      "%s: input '%s' is neither an input nor a constant",
                                      k->base.label, name);
  actx_tensor t;
  if ((st = actx_ep_bf16_tensor(api, k->base.label, value, j, &t)) != NULL) return st;
  bool packed = false;
  const char *why = NULL;
  const actx_status as = actx_bf16_kernel_pack(k->conv, j, &t, &packed, &why);
  if (as != ACTX_OK)
    return actx_ep_error(api, ORT_EP_FAIL, "%s: constant '%s': %s (%s)", k->base.label, name, why,
                         actx_status_string(as));
  if (packed) return NULL;
  /* the kernel has no form of its own for it: a copy, for every run */
  const size_t bytes = (size_t)actx_shape_elements(&t.shape) * 2;
  c->held = t;
  if ((c->held.data = malloc(bytes > 0 ? bytes : 1)) == NULL)
    return actx_ep_error(api, ORT_FAIL, "%s: out of memory copying '%s'", k->base.label, name);
  if (bytes > 0) memcpy(c->held.data, t.data, bytes);
  return NULL;
}

/* Whether sigmoid reads conv's result and mul multiplies that result by sigmoid's. */
static OrtStatus *silu_wired(const OrtApi *api, const OrtNode *conv, const OrtNode *sigmoid,
                             const OrtNode *mul, bool *out) {
  *out = false;
  const OrtValueInfo *x = NULL, *s = NULL, *sigmoid_in[1] = {NULL}, *mul_in[2] = {NULL, NULL};
  size_t n_sigmoid = 0, n_mul = 0;
  OrtStatus *st = actx_ep_node_output(api, conv, &x);
  if (st == NULL) st = actx_ep_node_output(api, sigmoid, &s);
  if (st == NULL) st = actx_ep_node_inputs(api, sigmoid, sigmoid_in, 1, &n_sigmoid);
  if (st == NULL) st = actx_ep_node_inputs(api, mul, mul_in, 2, &n_mul);
  if (st != NULL || x == NULL || s == NULL || n_sigmoid != 1 || n_mul != 2 ||
      sigmoid_in[0] == NULL || mul_in[0] == NULL || mul_in[1] == NULL)
    return st;
  bool reads_x = false, x_first = false, s_second = false, s_first = false, x_second = false;
  if ((st = actx_ep_same_value(api, sigmoid_in[0], x, &reads_x)) == NULL &&
      (st = actx_ep_same_value(api, mul_in[0], x, &x_first)) == NULL &&
      (st = actx_ep_same_value(api, mul_in[1], s, &s_second)) == NULL &&
      (st = actx_ep_same_value(api, mul_in[0], s, &s_first)) == NULL)
    st = actx_ep_same_value(api, mul_in[1], x, &x_second);
  *out = st == NULL && reads_x && ((x_first && s_second) || (s_first && x_second));
  return st;
}

OrtStatus *actx_ep_bf16_conv_act_compile(const OrtApi *api, actx_ep_pool_facts *pool,
                                         const OrtGraph *graph, const OrtNode *fused_node,
                                         OrtNodeComputeInfo **out) {
  *out = NULL;
  actx_ep_bf16_fused fused;
  bool fits = false;
  OrtStatus *st = actx_ep_bf16_fused_read(api, graph, fused_node, 2, 3, &fused, &fits);
  if (st != NULL || !fits) return st;
  const OrtNode *const *nodes = fused.nodes;
  const size_t n = fused.n_nodes;
  actx_bf16_op ops[3] = {ACTX_BF16_OP_COUNT, ACTX_BF16_OP_COUNT, ACTX_BF16_OP_COUNT};
  actx_bf16_kernel *kernels[3] = {NULL, NULL, NULL};
  conv_act_kernel *k = NULL;
  bool has_conv = false; /* else another compile's (a chain's): its kernels are not made here */
  for (size_t i = 0; i < n && st == NULL && !has_conv; i++)
    st = actx_ep_node_is(api, nodes[i], "Conv", NULL, &has_conv);
  for (size_t i = 0; i < n && st == NULL && has_conv; i++)
    st = actx_ep_bf16_node_kernel(api, nodes[i], &ops[i], &kernels[i]);
  /* the Conv (c), and its activation: a table op (a), or a Sigmoid (s: no op of the service)
   * and a Mul (m) wired as the SiLU actx_ep_bf16_fuse_conv_silu fused */
  size_t c = SIZE_MAX, a = SIZE_MAX, s = SIZE_MAX, m = SIZE_MAX;
  for (size_t i = 0; i < n && st == NULL && has_conv; i++) {
    bool sigmoid = false;
    if (ops[i] == ACTX_BF16_OP_CONV && kernels[i] != NULL) c = i;
    else if (kernels[i] != NULL && actx_bf16_kernel_is_activation(kernels[i])) a = i;
    else if (ops[i] == ACTX_BF16_OP_MUL) m = i;
    else if (ops[i] == ACTX_BF16_OP_COUNT &&
             (st = actx_ep_node_is(api, nodes[i], "Sigmoid", NULL, &sigmoid)) == NULL && sigmoid)
      s = i;
  }
  bool silu = false;
  if (st == NULL && n == 3 && c != SIZE_MAX && s != SIZE_MAX && m != SIZE_MAX)
    st = silu_wired(api, nodes[c], nodes[s], nodes[m], &silu);
  if (st != NULL || c == SIZE_MAX || !(silu || (n == 2 && a != SIZE_MAX)))
    goto done; /* not a Conv and its activation: another compile's */
  if ((k = calloc(1, sizeof *k)) == NULL) {
    st = actx_ep_error(api, ORT_FAIL, "out of memory compiling a Conv and its activation");
    goto done;
  }
  const char *conv_name = NULL, *act_type = NULL;
  actx_ep_ignore(api, api->Node_GetName(nodes[c], &conv_name), &conv_name);
  if (!silu) actx_ep_ignore(api, api->Node_GetOperatorType(nodes[a], &act_type), &act_type);
  snprintf(k->base.label, sizeof k->base.label, "Conv '%s' and its %s",
           conv_name ? conv_name : "", silu ? "SiLU" : act_type ? act_type : "activation");
  k->conv = kernels[c];
  kernels[c] = NULL; /* k's now */
  if (!silu) {
    k->activation = kernels[a];
    kernels[a] = NULL;
  }
  for (size_t j = 0; j < ACTX_BF16_MAX_INPUTS; j++) k->inputs[j].fused = -1;
  /* SiLU: libactx's bfloat16 QuickGelu at alpha 1, the exact activations' fused node's bits */
  if (silu ? !actx_bf16_kernel_fuse_exact(k->conv, ACTX_OP_QUICK_GELU)
           : !actx_bf16_kernel_fuse_activation(k->conv, k->activation)) {
    st = actx_ep_error(api, ORT_EP_FAIL, "%s: the Conv cannot apply its activation",
                       k->base.label);
    goto done;
  }
  const OrtValueInfo *conv_in[ACTX_BF16_MAX_INPUTS];
  size_t n_conv_in = 0;
  if ((st = actx_ep_node_inputs(api, nodes[c], conv_in, ACTX_BF16_MAX_INPUTS, &n_conv_in)) !=
      NULL)
    goto done;
  k->n_conv_inputs = n_conv_in < ACTX_BF16_MAX_INPUTS ? n_conv_in : ACTX_BF16_MAX_INPUTS;
  for (size_t j = 0; j < k->n_conv_inputs && st == NULL; j++)
    st = map_input(api, k, j, conv_in[j], &fused);
  if (st != NULL || (st = actx_ep_bf16_compiled_init(&k->base, api, pool, &conv_act_ops,
                                                     fused.n_inputs)) != NULL)
    goto done;
  *out = &k->base.info;
  k = NULL;
done:
  for (size_t i = 0; i < 3; i++) actx_bf16_kernel_destroy(kernels[i]);
  conv_act_kernel_free(k);
  return st;
}
