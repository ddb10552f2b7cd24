/* Chains of bfloat16 element-wise nodes as one compiled node (bf16.h, "chains").
 *
 * GetCapability: among the nodes the service takes whose kernels can be chain steps, a value
 * that only such nodes read (and that is no graph output) joins its producer and its readers;
 * each set so joined with one value leaving it (its output), 2 to ACTX_BF16_CHAIN_MAX_STEPS
 * nodes and at most ACTX_BF16_CHAIN_MAX_INPUTS values read from outside (constants included) is
 * handed to ORT as one node to fuse. No path can leave such a set and come back: every other
 * value it makes is read only inside it, and every node in it reaches the output. A set with
 * two values leaving, or one that nothing reads (a fused node would have no output), stays
 * single nodes.
 *
 * Compile: the fused graph's nodes are read again (the reader and kernel creation of the single
 * nodes), ordered so each reads only earlier ones, and mapped to the fused node's inputs by
 * value name (ORT lists a value read twice once; its constants come as inputs too). Compute
 * (bf16_compiled.c) hands the inputs to actx_bf16_chain_run. After Compile the kernel is only
 * read: concurrent Run() calls share it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bf16_ep.h"

/* ---- GetCapability ------------------------------------------------------------------------ */

static size_t find_root(size_t *parent, size_t i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

/* Whether the value node i makes is read only by chaining nodes (their positions into
 * readers[], *n_readers of them) and is no graph output; *dead: nothing reads it at all. */
static OrtStatus *internal_value(const OrtApi *api, const actx_ep_positions *positions,
                                 const OrtNode *node, const bool *pending, const bool *chains,
                                 size_t *readers, size_t *n_readers, bool *internal,
                                 bool *dead) {
  *internal = *dead = false;
  *n_readers = 0;
  const OrtValueInfo *y = NULL;
  OrtStatus *st = actx_ep_node_output(api, node, &y);
  if (st != NULL || y == NULL) return st;
  const OrtNode *consumers[ACTX_EP_MAX_CONSUMERS];
  size_t n = 0;
  bool graph_output = false;
  if ((st = actx_ep_value_consumers(api, y, consumers, ACTX_EP_MAX_CONSUMERS, &n,
                                    &graph_output)) != NULL)
    return st;
  *dead = n == 0 && !graph_output;
  if (graph_output || n == 0 || n > ACTX_EP_MAX_CONSUMERS) return NULL;
  for (size_t c = 0; c < n; c++) {
    const size_t pos = actx_ep_position(positions, consumers[c]);
    if (pos == SIZE_MAX || !pending[pos] || !chains[pos]) return NULL;
    readers[c] = pos;
  }
  *n_readers = n;
  *internal = true;
  return NULL;
}

/* Whether the set's members[0..m) read at most ACTX_BF16_CHAIN_MAX_INPUTS distinct values from
 * outside it (graph inputs, constants, other nodes' results): the fused node's inputs. */
static OrtStatus *inputs_fit(const OrtApi *api, const OrtNode *const *members, size_t m,
                             bool *fit) {
  *fit = false;
  const char *names[ACTX_BF16_CHAIN_MAX_INPUTS];
  size_t n_names = 0;
  for (size_t k = 0; k < m; k++) {
    const OrtValueInfo *in[ACTX_BF16_MAX_INPUTS];
    size_t n_in = 0;
    OrtStatus *st = actx_ep_node_inputs(api, members[k], in, ACTX_BF16_MAX_INPUTS, &n_in);
    if (st != NULL) return st;
    for (size_t j = 0; j < n_in && j < ACTX_BF16_MAX_INPUTS; j++) {
      const OrtNode *producer = NULL;
      const char *name = NULL;
      if (in[j] == NULL) continue;
      if ((st = actx_ep_value_producer(api, in[j], &producer)) != NULL ||
          (st = api->GetValueInfoName(in[j], &name)) != NULL)
        return st;
      bool inside = false, seen = false;
      for (size_t q = 0; q < m && producer != NULL; q++) inside |= members[q] == producer;
      for (size_t q = 0; q < n_names && name != NULL; q++) seen |= strcmp(names[q], name) == 0;
      if (inside || seen || name == NULL) continue;
      if (n_names == ACTX_BF16_CHAIN_MAX_INPUTS) return NULL;
      names[n_names++] = name;
    }
  }
  *fit = true;
  return NULL;
}

OrtStatus *actx_ep_bf16_fuse_chains(const OrtApi *api, const OrtLogger *logger,
                                    const OrtNode *const *nodes, size_t n, bool *pending,
                                    const bool *chains, OrtEpGraphSupportInfo *support) {
  const OrtEpApi *ep_api = api->GetEpApi();
  size_t *parent = malloc((n ? n : 1) * sizeof *parent);
  size_t *size = calloc(n ? n : 1, sizeof *size), *exits = calloc(n ? n : 1, sizeof *exits);
  bool *fused = calloc(n ? n : 1, sizeof *fused); /* by root: the set is handed to ORT */
  const OrtNode **members = malloc((n ? n : 1) * sizeof *members);
  actx_ep_positions positions = {0};
  OrtStatus *st = NULL;
  if (parent == NULL || size == NULL || exits == NULL || fused == NULL || members == NULL) {
    st = actx_ep_error(api, ORT_FAIL, "out of memory finding chains in %zu nodes", n);
    goto done;
  }
  if ((st = actx_ep_positions_build(api, nodes, n, &positions)) != NULL) goto done;
  for (size_t i = 0; i < n; i++) parent[i] = i;
  for (size_t i = 0; i < n && st == NULL; i++) {
    if (!pending[i] || !chains[i]) continue;
    size_t readers[ACTX_EP_MAX_CONSUMERS], n_readers = 0;
    bool internal = false, dead = false;
    st = internal_value(api, &positions, nodes[i], pending, chains, readers, &n_readers,
                        &internal, &dead);
    if (st != NULL) break;
    if (!internal) exits[i] = dead ? 2 : 1; /* a dead end: no output to give the fused node */
    for (size_t r = 0; r < n_readers; r++)
      parent[find_root(parent, readers[r])] = find_root(parent, i);
  }
  if (st != NULL) goto done;
  /* per set (at its root): nodes and values leaving */
  for (size_t i = 0; i < n; i++) {
    if (!pending[i] || !chains[i]) continue;
    const size_t root = find_root(parent, i);
    size[root]++;
    if (root != i) exits[root] += exits[i];
  }
  for (size_t root = 0; root < n && st == NULL; root++) {
    if (!pending[root] || !chains[root] || find_root(parent, root) != root) continue;
    if (size[root] < 2 || size[root] > ACTX_BF16_CHAIN_MAX_STEPS || exits[root] != 1) continue;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
      if (pending[i] && chains[i] && find_root(parent, i) == root) members[m++] = nodes[i];
    bool fit = false;
    if ((st = inputs_fit(api, members, m, &fit)) != NULL) break;
    if (!fit) continue;
    fused[root] = true;
    /* drop_constant_initializers false: the constants (a scale, Clip's bounds) are inputs */
    const OrtNodeFusionOptions fusion = {.ort_version_supported = ORT_API_VERSION,
                                         .drop_constant_initializers = false};
    if ((st = ep_api->EpGraphSupportInfo_AddNodesToFuse(support, members, m, &fusion)) != NULL)
      break;
    const char *name = NULL;
    actx_ep_ignore(api, api->Node_GetName(members[0], &name), &name);
    actx_ep_log(api, logger, ORT_LOGGING_LEVEL_VERBOSE,
                "actx: %zu bfloat16 element-wise nodes as one chain, from node '%s'", m,
                name != NULL ? name : "");
  }
  /* the members of every set handed over are no longer pending */
  for (size_t i = 0; i < n && st == NULL; i++)
    if (pending[i] && chains[i] && fused[find_root(parent, i)]) pending[i] = false;
done:
  actx_ep_positions_free(&positions);
  free(parent);
  free(size);
  free(exits);
  free(fused);
  free(members);
  return st;
}

/* ---- Compile and Compute ------------------------------------------------------------------ */

typedef struct chain_kernel {
  actx_ep_bf16_compiled base; /* first */
  actx_bf16_chain *chain;
  size_t n_steps;
  actx_bf16_kernel *kernels[ACTX_BF16_CHAIN_MAX_STEPS];
} chain_kernel;

static actx_status chain_shape(const actx_ep_bf16_compiled *node, const actx_tensor *in,
                               size_t n_in, actx_shape *out, const char **why) {
  return actx_bf16_chain_shape(((const chain_kernel *)node)->chain, in, n_in, out, why);
}

static actx_status chain_run(const actx_ep_bf16_compiled *node, const actx_tensor *in,
                             size_t n_in, actx_tensor *out, const actx_parallel *par,
                             const char **why) {
  return actx_bf16_chain_run(((const chain_kernel *)node)->chain, in, n_in, out, par, why);
}

static void chain_kernel_free(chain_kernel *k) {
  if (k == NULL) return;
  actx_bf16_chain_destroy(k->chain);
  for (size_t s = 0; s < k->n_steps; s++) actx_bf16_kernel_destroy(k->kernels[s]);
  free(k);
}

static void chain_destroy(actx_ep_bf16_compiled *node) { chain_kernel_free((chain_kernel *)node); }

static const actx_ep_bf16_compiled_ops chain_ops = {chain_shape, chain_run, chain_destroy};

static OrtStatus *value_name(const OrtApi *api, const OrtValueInfo *v, const char **name) {
  *name = NULL;
  return v != NULL ? api->GetValueInfoName(v, name) : NULL;
}

/* One node of the fused graph: its kernel (NULL when it is no chain step), inputs' and output's
 * names. */
typedef struct chain_node {
  actx_bf16_kernel *kernel;
  size_t n_inputs;
  const char *input[ACTX_BF16_MAX_INPUTS]; /* NULL: an optional input left out */
  const char *output;
  bool placed;
} chain_node;

static OrtStatus *read_chain_node(const OrtApi *api, const OrtNode *node, chain_node *out) {
  *out = (chain_node){0};
  actx_bf16_op op;
  OrtStatus *st = actx_ep_bf16_node_kernel(api, node, &op, &out->kernel);
  if (st != NULL || out->kernel == NULL) return st;
  if (!actx_bf16_kernel_chains(out->kernel)) {
    actx_bf16_kernel_destroy(out->kernel);
    out->kernel = NULL;
    return NULL;
  }
  const OrtValueInfo *in[ACTX_BF16_MAX_INPUTS], *y = NULL;
  size_t n_in = 0;
  if ((st = actx_ep_node_inputs(api, node, in, ACTX_BF16_MAX_INPUTS, &n_in)) == NULL &&
      (st = actx_ep_node_output(api, node, &y)) == NULL) {
    out->n_inputs = n_in < ACTX_BF16_MAX_INPUTS ? n_in : ACTX_BF16_MAX_INPUTS;
    for (size_t i = 0; i < out->n_inputs && st == NULL; i++)
      st = value_name(api, in[i], &out->input[i]);
    if (st == NULL) st = value_name(api, y, &out->output);
  }
  if (st == NULL && out->output == NULL) { /* no single output to chain */
    actx_bf16_kernel_destroy(out->kernel);
    out->kernel = NULL;
  }
  return st;
}

/* Where a value named name comes from: an earlier step (ACTX_BF16_CHAIN_STEP), a fused node's
 * input, or, unnamed, an absent optional input. *found false when neither. */
static OrtStatus *operand_of(const OrtApi *api, const char *name, const chain_node *nodes,
                             const size_t *order, size_t placed, const actx_ep_bf16_fused *fused,
                             int *operand, bool *found) {
  *found = true;
  if (name == NULL || name[0] == '\0') {
    *operand = ACTX_BF16_CHAIN_ABSENT;
    return NULL;
  }
  for (size_t s = 0; s < placed; s++)
    if (nodes[order[s]].output != NULL && strcmp(nodes[order[s]].output, name) == 0) {
      *operand = ACTX_BF16_CHAIN_STEP(s);
      return NULL;
    }
  size_t i = SIZE_MAX;
  OrtStatus *st = actx_ep_bf16_fused_input(api, fused, name, &i);
  *found = i != SIZE_MAX;
  if (*found) *operand = (int)i;
  return st;
}

OrtStatus *actx_ep_bf16_chain_compile(const OrtApi *api, actx_ep_pool_facts *pool,
                                      const OrtGraph *graph, const OrtNode *fused_node,
                                      OrtNodeComputeInfo **out) {
  *out = NULL;
  actx_ep_bf16_fused fused;
  bool fits = false;
  OrtStatus *st = actx_ep_bf16_fused_read(api, graph, fused_node, 2, ACTX_BF16_CHAIN_MAX_STEPS,
                                          &fused, &fits);
  if (st != NULL || !fits) return st;
  const size_t n = fused.n_nodes, n_in = fused.n_inputs;
  const OrtValueInfo *y = NULL;
  chain_node nodes[ACTX_BF16_CHAIN_MAX_STEPS] = {{0}};
  size_t order[ACTX_BF16_CHAIN_MAX_STEPS];
  actx_bf16_chain_step steps[ACTX_BF16_CHAIN_MAX_STEPS];
  chain_kernel *k = NULL;
  const char *y_name = NULL;
  bool is_chain = true;
  if ((st = actx_ep_node_output(api, fused_node, &y)) != NULL ||
      (st = value_name(api, y, &y_name)) != NULL)
    goto done;
  for (size_t i = 0; i < n && st == NULL && is_chain; i++) {
    st = read_chain_node(api, fused.nodes[i], &nodes[i]);
    is_chain = nodes[i].kernel != NULL;
  }
  if (st != NULL || !is_chain || y_name == NULL) goto done;
  /* each step after the ones it reads */
  for (size_t placed = 0; placed < n && is_chain;) {
    bool progress = false;
    for (size_t i = 0; i < n; i++) {
      if (nodes[i].placed) continue;
      int operand[ACTX_BF16_MAX_INPUTS];
      /* inputs the node leaves out at its end (a Clip without max) are absent */
      for (size_t j = 0; j < ACTX_BF16_MAX_INPUTS; j++) operand[j] = ACTX_BF16_CHAIN_ABSENT;
      bool ready = true;
      for (size_t j = 0; j < nodes[i].n_inputs && ready && st == NULL; j++)
        st = operand_of(api, nodes[i].input[j], nodes, order, placed, &fused, &operand[j],
                        &ready);
      if (st != NULL) goto done;
      if (!ready) continue;
      steps[placed].kernel = nodes[i].kernel;
      memcpy(steps[placed].operand, operand, sizeof operand);
      order[placed++] = i;
      nodes[i].placed = progress = true;
    }
    is_chain = progress;
  }
  if (!is_chain || strcmp(nodes[order[n - 1]].output, y_name) != 0) {
    st = actx_ep_error(api, ORT_EP_FAIL, "a chain of %zu nodes whose steps do not lead to its "
                                         "output '%s'", n, y_name);
    goto done;
  }
  if ((k = calloc(1, sizeof *k)) == NULL) {
    st = actx_ep_error(api, ORT_FAIL, "out of memory compiling a chain of %zu nodes", n);
    goto done;
  }
  const char *first = NULL;
  actx_ep_ignore(api, api->Node_GetName(fused.nodes[order[0]], &first), &first);
  snprintf(k->base.label, sizeof k->base.label, "chain of %zu nodes from '%s'", n,
           first != NULL ? first : "");
  k->n_steps = n;
  for (size_t s = 0; s < n; s++) {
    k->kernels[s] = nodes[s].kernel;
    nodes[s].kernel = NULL; /* the kernel's now */
  }
  const char *why = NULL;
  const actx_status as = actx_bf16_chain_create(steps, n, n_in, &k->chain, &why);
  if (as != ACTX_OK) {
    st = actx_ep_error(api, ORT_EP_FAIL, "%s: %s (%s)", k->base.label, why,
                       actx_status_string(as));
    goto done;
  }
  if ((st = actx_ep_bf16_compiled_init(&k->base, api, pool, &chain_ops, n_in)) != NULL) goto done;
  *out = &k->base.info;
  k = NULL;
done:
  for (size_t i = 0; i < n; i++) actx_bf16_kernel_destroy(nodes[i].kernel);
  chain_kernel_free(k);
  return st;
}
