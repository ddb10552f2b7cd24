/* The OrtEp of one session: GetCapability decides which nodes we take, Compile builds the
 * compute functions of compiled nodes, GetKernelRegistry hands ORT the kernels of single ones.
 *
 * What we take are claims, each one activation: a single node we run (claim.c), or a whole
 * exported activation subgraph such as Div → Erf → Add → Mul → Mul with the bias Add before it
 * (fusion.c), which one actx_compute() call replaces. GetCapability first takes each bfloat16
 * Conv with the SiLU that alone reads its result (bf16_conv_act.c: one node of the bfloat16
 * service, the SiLU applied as the Conv rounds), then looks for such subgraphs, then for single
 * nodes among the rest, then the bfloat16 nodes (bf16_claim.c); claims that follow one another
 * become one fused node (EpGraphSupportInfo_AddNodesToFuse) computing them in turn (group.c). A
 * single node that joins no other claim is handed over with EpGraphSupportInfo_AddSingleNode, and
 * ORT runs it with our registered kernel (registry.c) like one of its own: that saves the
 * compiled node's wrapper, and ORT does not check a single node against the whole graph as it
 * does a group to fuse. A group of several claims stays one compiled node, since one ORT node
 * in place of several saves more than the wrapper costs (docs/architecture.md). For each fused
 * node GetCapability records what its steps compute and which of its inputs are x and the
 * biases; Compile finds the record again by the nodes of the graph it is handed.
 *
 * Finding that record must not confuse two graphs: Loop bodies and If branches reuse value and
 * node names, and the OrtGraph / OrtNode handles Compile gets are new objects. What survives from
 * GetCapability to Compile is each node's id (its index, unique within one graph), its name,
 * operator and values. ORT partitions one graph at a time, bottom up: GetCapability for a graph,
 * then Compile for what was taken in it, then the next graph. So a record is keyed by a signature
 * of the ids, operators and value names of the nodes it covers, and Compile takes the newest
 * record with the key of the graph it is handed: the one of the graph just partitioned.
 *
 * What GetCapability sees, at ORT_ENABLE_ALL (found by experiment, test_patterns in
 * tests/ep/test_ep_policy.c, and matching ORT's inference_session.cc): ORT applies its level-1
 * optimisations, then partitions (our GetCapability), then runs level 2+ only on the nodes left
 * to its own EPs. So we see the graph *before* the fusions FastGelu, BiasGelu, QuickGelu and,
 * for models below opset 20, Gelu (Div → Erf → Add → Mul → Mul): all of them are level 2. For
 * opset >= 20 models ORT's GeluFusion also runs at level 1, and we see the fused ai.onnx Gelu.
 * pattern.c keeps `auto` from taking lone nodes whose claim would stop a level-2 fusion, and
 * ort_fusions.c tells which subgraphs ORT would have fused into the same bits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actx_ep.h"
#include "bf16_ep.h"

/* What GetCapability took as one compiled node, for Compile: its steps (single nodes or fused
 * subgraphs, in order) and which of the fused node's inputs is x. */
typedef struct group_record {
  uint64_t signature; /* of the nodes it covers (actx_ep_group_signature) */
  size_t n_nodes;
  char *x_name, *y_name;
  actx_ep_step *steps; /* their bias names are owned here */
  size_t n_steps;
  char label[128]; /* "erf GELU at 'p3'", "node 'n7' and 1999 more" for messages */
} group_record;

typedef struct actx_ep {
  OrtEp base; /* first: ORT hands &base back */
  const OrtApi *api;
  const OrtEpApi *ep_api;
  const OrtLogger *logger;
  actx_ep_policy_mode policy; /* the policy in force (actx_ep_create) */
  /* made when ORT asks for it (GetKernelRegistry, once, before any GetCapability); NULL: every
   * claim is compiled */
  actx_ep_registry *registry;
  /* in the order GetCapability made them; it runs before Compile, on one thread per session */
  group_record *records;
  size_t n_records, records_capacity;
  actx_ep_pool_facts pool; /* actx_ep_pool_facts_slot */
} actx_ep;

actx_ep_pool_facts *actx_ep_pool_facts_slot(const OrtEp *ep) { return &((actx_ep *)ep)->pool; }

static const char *ep_get_name(const OrtEp *self) {
  (void)self;
  return ACTX_EP_NAME;
}

static char *copy_name(const OrtApi *api, const OrtValueInfo *value, OrtStatus **st) {
  const char *name = NULL;
  *st = value != NULL ? api->GetValueInfoName(value, &name) : NULL;
  if (*st != NULL || name == NULL) return NULL;
  const size_t len = strlen(name) + 1;
  char *copy = malloc(len);
  if (copy != NULL) memcpy(copy, name, len);
  return copy;
}

static void record_free(group_record *r) {
  for (size_t i = 0; i < r->n_steps; i++) free((char *)r->steps[i].bias_name);
  free(r->steps);
  free(r->x_name);
  free(r->y_name);
}

/* The claims of one GetCapability call, and the pool of their nodes. */
typedef struct claim_list {
  actx_ep_claimed *claims;
  size_t n, capacity;
  const OrtNode **pool; /* room for every node of the graph: each is claimed at most once */
  size_t n_pool;
  actx_ep_positions positions;
  bool *taken; /* by position in the graph's node list */
  /* the subgraph matched with each node as its core, for the lone-node decisions: match_of[i]
   * indexes matches, SIZE_MAX where none was found */
  size_t *match_of;
  actx_ep_fusion *matches;
  size_t n_matches, matches_capacity;
  /* the graph as ORT's level-2 fusions will see it, alone and without our claims (node_fate) */
  actx_ep_ort_views views;
  struct fate_view {
    const OrtApi *api;
    const struct claim_list *list;
    bool with_claims;
  } alone_view, with_claims_view;
  /* by position: what becomes of the last node of a subgraph decided so far, in either view */
  actx_ep_node_fate *y_fate_alone, *y_fate_with;
} claim_list;

/* What becomes of node by the time ORT's level-2 fusions look at it (ort_fusions.c asks about
 * the Mul or Cast producing a subgraph's x). Subgraphs are decided in the graph's topological
 * order, so the one ending in that node is decided by then: if ORT alone fuses it, its last node
 * is part of ORT's kernel or ours; if not, no policy takes it whole and the node stays (its core
 * may become ours, the Mul stays). In the graph we hand back, a node we took is part of our
 * kernel. A Cast stays: no level-2 fusion removes one before these look. Anything else may be
 * fused by one of ORT's other fusions (RMSNorm's last Mul, say): unknown. */
static OrtStatus *node_fate(const void *ctx, const OrtNode *node, actx_ep_node_fate *out) {
  const struct fate_view *v = ctx;
  const claim_list *list = v->list;
  *out = ACTX_EP_NODE_UNKNOWN;
  const size_t pos = actx_ep_position(&list->positions, node);
  if (pos == SIZE_MAX) return NULL;
  if (v->with_claims && list->taken[pos]) {
    *out = ACTX_EP_NODE_REPLACED;
    return NULL;
  }
  *out = v->with_claims ? list->y_fate_with[pos] : list->y_fate_alone[pos];
  bool cast = false;
  OrtStatus *st = actx_ep_node_is(v->api, node, "Cast", NULL, &cast);
  if (st == NULL && cast && *out == ACTX_EP_NODE_UNKNOWN) *out = ACTX_EP_NODE_KEPT;
  return st;
}

/* Records what becomes of f's last node, from what ORT does with f (node_fate). */
static void record_y_fate(claim_list *list, const actx_ep_fusion *f,
                          const actx_ep_ort_verdicts *v, const OrtNode *y_node) {
  /* the families whose last node ORT's GELU / QuickGelu fusions take */
  if (f->family != ACTX_EP_FUSION_ERF_GELU && f->family != ACTX_EP_FUSION_TANH_GELU &&
      f->family != ACTX_EP_FUSION_SIGMOID)
    return;
  const size_t pos = actx_ep_position(&list->positions, y_node);
  if (pos == SIZE_MAX) return;
  static const actx_ep_node_fate of[] = {[ACTX_EP_ORT_UNSURE] = ACTX_EP_NODE_UNKNOWN,
                                         [ACTX_EP_ORT_UNFUSED] = ACTX_EP_NODE_KEPT,
                                         [ACTX_EP_ORT_FUSES] = ACTX_EP_NODE_REPLACED};
  list->y_fate_alone[pos] = of[v->alone];
  list->y_fate_with[pos] = v->alone == ACTX_EP_ORT_UNSURE ? of[v->with_claims] : of[v->alone];
}

/* Doubles an array's capacity (to `first` elements when it has none); false when out of memory,
 * the array unchanged. */
static bool grow(void **items, size_t *capacity, size_t elem_size, size_t first) {
  const size_t wanted = *capacity ? 2 * *capacity : first;
  void *grown = realloc(*items, wanted * elem_size);
  if (grown == NULL) return false;
  *items = grown;
  *capacity = wanted;
  return true;
}

static OrtStatus *add_claim(const OrtApi *api, claim_list *list, const actx_ep_claimed *claim,
                            const OrtNode *const *nodes) {
  if (list->n == list->capacity &&
      !grow((void **)&list->claims, &list->capacity, sizeof *list->claims, 64))
    return actx_ep_error(api, ORT_FAIL, "out of memory recording a claim");
  actx_ep_claimed *c = &list->claims[list->n++];
  *c = *claim;
  c->first_node = list->n_pool;
  for (size_t i = 0; i < claim->n_nodes; i++) list->pool[list->n_pool++] = nodes[i];
  return NULL;
}

/* Takes the fused subgraph whose core is nodes[i], if there is one and the policy wants it. */
static OrtStatus *try_fusion(actx_ep *ep, const OrtNode *const *nodes, size_t i,
                             claim_list *list) {
  const OrtApi *api = ep->api;
  actx_ep_fusion f;
  bool found = false;
  OrtStatus *st = actx_ep_match_fusion(api, nodes[i], &f, &found);
  if (st != NULL || !found) return st;
  if (list->n_matches == list->matches_capacity &&
      !grow((void **)&list->matches, &list->matches_capacity, sizeof *list->matches, 16))
    return actx_ep_error(api, ORT_FAIL, "out of memory recording a match");
  list->match_of[i] = list->n_matches;
  list->matches[list->n_matches++] = f;
  size_t pos[ACTX_EP_MAX_FUSED_NODES];
  for (size_t k = 0; k < f.n_nodes; k++) {
    bool others = false;
    pos[k] = actx_ep_position(&list->positions, f.nodes[k]);
    if (pos[k] == SIZE_MAX || list->taken[pos[k]]) return NULL;
    if ((st = actx_ep_node_is_others(api, f.nodes[k], &others)) != NULL) return st;
    if (others) return NULL; /* an earlier EP took part of it */
  }
  const char *name = NULL;
  if ((st = api->Node_GetName(nodes[i], &name)) != NULL) return st;
  if (name == NULL) name = "";
  /* a subgraph whose result nothing reads would be a fused node without an output: its nodes
   * are left to the single claims */
  bool read = false;
  if ((st = actx_ep_value_is_read(api, f.y, &read)) != NULL) return st;
  if (!read) {
    actx_ep_log(api, ep->logger, ORT_LOGGING_LEVEL_VERBOSE,
                "actx: declined %s at '%s' (%zu nodes): its result is read by nothing",
                actx_ep_fusion_name(&f), name, f.n_nodes);
    return NULL;
  }
  bool take = false;
  const char *why = NULL;
  actx_ep_ort_verdicts verdicts;
  const OrtNode *y_node = NULL;
  if ((st = actx_ep_takes_fusion(ep->api, ep->policy, &f, &list->views, &verdicts, &take,
                                 &why)) != NULL ||
      (st = actx_ep_value_producer(api, f.y, &y_node)) != NULL)
    return st;
  record_y_fate(list, &f, &verdicts, y_node);
  if (!take) {
    actx_ep_log(api, ep->logger, ORT_LOGGING_LEVEL_VERBOSE,
                "actx: declined %s at '%s' (%zu nodes): %s", actx_ep_fusion_name(&f), name,
                f.n_nodes, why);
    return NULL;
  }
  actx_ep_log(api, ep->logger, ORT_LOGGING_LEVEL_VERBOSE,
              "actx: claimed %s at '%s' as one node (%zu nodes, %s, %s, %lld elements)",
              actx_ep_fusion_name(&f), name, f.n_nodes, actx_ep_kind_name(f.node.kind),
              actx_dtype_name(f.node.dtype), (long long)f.node.elements);
  actx_ep_claimed c = {.node = f.node, .x = f.x, .y = f.y, .bias = f.bias, .n_nodes = f.n_nodes};
  snprintf(c.label, sizeof c.label, "%s at '%s'", actx_ep_fusion_name(&f), name);
  if ((st = add_claim(api, list, &c, f.nodes)) != NULL) return st;
  for (size_t k = 0; k < f.n_nodes; k++) list->taken[pos[k]] = true;
  return NULL;
}

/* Whether node, which the `auto` table declines, directly follows one of our claims: its x is
 * that claim's output and read by nothing else. Such a node is taken all the same, so that it
 * joins the claim's group (group.c) instead of splitting the chain there: inside a group it
 * costs no compiled node of its own (the per-node cost the table weighs), and every split is
 * one more group for ORT's partitioner, whose cost grows faster than the number of groups. */
static OrtStatus *follows_claim(const actx_ep *ep, const claim_list *list, const OrtNode *node,
                                const actx_ep_node *info, bool *out) {
  const OrtApi *api = ep->api;
  *out = false;
  if (info->has_bias) return NULL;
  const OrtValueInfo *in[1] = {NULL};
  size_t n_in = 0;
  const OrtNode *producer = NULL, *consumer = NULL;
  OrtStatus *st = actx_ep_node_inputs(api, node, in, 1, &n_in);
  if (st == NULL && in[0] != NULL) st = actx_ep_value_producer(api, in[0], &producer);
  if (st != NULL || producer == NULL) return st;
  const size_t pos = actx_ep_position(&list->positions, producer);
  if (pos == SIZE_MAX || !list->taken[pos]) return NULL;
  if ((st = actx_ep_single_consumer(api, in[0], &consumer)) != NULL) return st;
  *out = consumer == node;
  return NULL;
}

/* Takes nodes[i] alone, if we can run it and the policy wants it. */
static OrtStatus *try_node(actx_ep *ep, const OrtNode *const *nodes, size_t i, claim_list *list) {
  const OrtApi *api = ep->api;
  bool others = false;
  OrtStatus *st = actx_ep_node_is_others(api, nodes[i], &others);
  if (st != NULL || others) return st; /* others: an earlier EP took it */
  actx_ep_node info;
  const char *reason = NULL;
  bool take = false;
  if ((st = actx_ep_claim(api, nodes[i], &info, &reason)) != NULL) return st;
  if (reason == NULL &&
      (st = actx_ep_takes_node(api, ep->policy, nodes[i], &info,
                               list->match_of[i] != SIZE_MAX ? &list->matches[list->match_of[i]]
                                                             : NULL,
                               &list->views, &take, &reason)) != NULL)
    return st;
  if (!take && reason == actx_ep_auto_table_declines) {
    if ((st = follows_claim(ep, list, nodes[i], &info, &take)) != NULL) return st;
    if (take) reason = NULL;
  }
  const char *name = NULL;
  if ((st = api->Node_GetName(nodes[i], &name)) != NULL) return st;
  if (name == NULL) name = "";
  if (!take) {
    if (reason != NULL && strcmp(reason, "operator not served") != 0)
      actx_ep_log(api, ep->logger, ORT_LOGGING_LEVEL_VERBOSE, "actx: declined node '%s': %s",
                  name, reason);
    return NULL;
  }
  actx_ep_log(api, ep->logger, ORT_LOGGING_LEVEL_VERBOSE,
              "actx: claimed node '%s' (%s, %s, %lld elements)", name,
              actx_ep_kind_name(info.kind), actx_dtype_name(info.dtype), (long long)info.elements);
  /* input 0 is x, input 1 the bias of BiasGelu / FastGelu */
  const OrtValueInfo *in[2] = {NULL, NULL};
  size_t n_in = 0;
  actx_ep_claimed c = {.node = info, .n_nodes = 1};
  if ((st = actx_ep_node_inputs(api, nodes[i], in, 2, &n_in)) != NULL ||
      (st = actx_ep_node_output(api, nodes[i], &c.y)) != NULL)
    return st;
  c.x = in[0];
  c.bias = info.has_bias ? in[1] : NULL;
  if (c.x == NULL || c.y == NULL || (info.has_bias && c.bias == NULL))
    return actx_ep_error(api, ORT_EP_FAIL, "node '%s': an input or the output is missing", name);
  snprintf(c.label, sizeof c.label, "node '%s'", name);
  if ((st = add_claim(api, list, &c, &nodes[i])) != NULL) return st;
  list->taken[i] = true;
  return NULL;
}

/* Hands ORT a lone single-node claim to run with our registered kernel, when ORT has found it
 * in our registry (*added false otherwise: the claim is then compiled like a group). */
static OrtStatus *add_single(actx_ep *ep, const actx_ep_claimed *claim, const OrtNode *node,
                             OrtEpGraphSupportInfo *support, bool *added) {
  *added = false;
  if (ep->registry == NULL) return NULL;
  const OrtKernelDef *def = NULL;
  OrtStatus *st = ep->ep_api->EpGraphSupportInfo_LookUpKernel(support, node, &def);
  if (st != NULL) return st;
  if (def == NULL) {
    actx_ep_log(ep->api, ep->logger, ORT_LOGGING_LEVEL_WARNING,
                "actx: no registered kernel matches %s; compiling it instead", claim->label);
    return NULL;
  }
  if ((st = ep->ep_api->EpGraphSupportInfo_AddSingleNode(support, node)) != NULL) return st;
  *added = true;
  return NULL;
}

/* Records the group of claims starting at claims[head] (following next) and hands its nodes to
 * ORT as one node to fuse; a group of one single node goes to add_single first. */
static OrtStatus *add_group(actx_ep *ep, const claim_list *list, size_t head, const size_t *next,
                            OrtEpGraphSupportInfo *support, const OrtNode **scratch) {
  const OrtApi *api = ep->api;
  const actx_ep_claimed *first = &list->claims[head];
  if (next[head] == SIZE_MAX && first->n_nodes == 1) {
    bool added = false;
    OrtStatus *st = add_single(ep, first, list->pool[first->first_node], support, &added);
    if (st != NULL || added) return st;
  }
  if (ep->n_records == ep->records_capacity &&
      !grow((void **)&ep->records, &ep->records_capacity, sizeof *ep->records, 16))
    return actx_ep_error(api, ORT_FAIL, "out of memory recording a claim");
  group_record r = {0};
  size_t tail = head;
  for (size_t c = head; c != SIZE_MAX; c = next[c]) {
    const actx_ep_claimed *claim = &list->claims[c];
    memcpy(scratch + r.n_nodes, list->pool + claim->first_node,
           claim->n_nodes * sizeof *scratch);
    r.n_nodes += claim->n_nodes;
    r.n_steps++;
    tail = c;
  }
  OrtStatus *st = NULL;
  r.steps = calloc(r.n_steps, sizeof *r.steps);
  if (r.steps == NULL) return actx_ep_error(api, ORT_FAIL, "out of memory recording a claim");
  size_t k = 0;
  for (size_t c = head; c != SIZE_MAX && st == NULL; c = next[c], k++) {
    r.steps[k].node = list->claims[c].node;
    if (list->claims[c].bias != NULL)
      r.steps[k].bias_name = copy_name(api, list->claims[c].bias, &st);
    if (st == NULL && list->claims[c].bias != NULL && r.steps[k].bias_name == NULL)
      st = actx_ep_error(api, ORT_FAIL, "out of memory recording a claim (or an unnamed bias)");
    if (st == NULL && k > 0 && list->claims[c].bias != NULL)
      st = actx_ep_same_value(api, list->claims[c].bias, list->claims[c].x,
                              &r.steps[k].bias_is_x);
  }
  if (st == NULL) r.x_name = copy_name(api, list->claims[head].x, &st);
  if (st == NULL) r.y_name = copy_name(api, list->claims[tail].y, &st);
  if (st == NULL && (r.x_name == NULL || r.y_name == NULL))
    st = actx_ep_error(api, ORT_FAIL, "out of memory recording a claim (or an unnamed value)");
  if (st == NULL) st = actx_ep_group_signature(api, scratch, r.n_nodes, &r.signature);
  if (st != NULL) {
    record_free(&r);
    return st;
  }
  if (r.n_steps == 1)
    snprintf(r.label, sizeof r.label, "%s", list->claims[head].label);
  else
    snprintf(r.label, sizeof r.label, "%s and %zu more", list->claims[head].label, r.n_steps - 1);
  ep->records[ep->n_records++] = r;
  if (r.n_steps > 1)
    actx_ep_log(api, ep->logger, ORT_LOGGING_LEVEL_VERBOSE,
                "actx: %zu claims in a row (%zu nodes) as one compiled node, from %s", r.n_steps,
                r.n_nodes, list->claims[head].label);
  /* ORT copies the fusion options; drop_constant_initializers false: a constant input (a
   * BiasGelu bias, a subgraph's √2) is passed to Compute like any other. */
  const OrtNodeFusionOptions fusion = {.ort_version_supported = ORT_API_VERSION,
                                       .drop_constant_initializers = false};
  return ep->ep_api->EpGraphSupportInfo_AddNodesToFuse(support, scratch, r.n_nodes, &fusion);
}

static OrtStatus *ep_get_capability(OrtEp *self, const OrtGraph *graph,
                                    OrtEpGraphSupportInfo *support) {
  actx_ep *ep = (actx_ep *)self;
  const OrtApi *api = ep->api;
  if (ep->policy == ACTX_EP_POLICY_NONE) return NULL;

  size_t n = 0;
  OrtStatus *st = api->Graph_GetNumNodes(graph, &n);
  if (st != NULL || n == 0) return st;
  /* the graph's nodes, the claims' nodes, and a group's nodes */
  const OrtNode **nodes = malloc(3 * n * sizeof *nodes);
  claim_list list = {.taken = calloc(n, sizeof *list.taken),
                     .match_of = malloc(n * sizeof *list.match_of),
                     .y_fate_alone = calloc(n, sizeof *list.y_fate_alone), /* 0: unknown */
                     .y_fate_with = calloc(n, sizeof *list.y_fate_with)};
  list.alone_view = (struct fate_view){api, &list, false};
  list.with_claims_view = (struct fate_view){api, &list, true};
  list.views.alone = (actx_ep_ort_view){node_fate, &list.alone_view};
  list.views.with_claims = (actx_ep_ort_view){node_fate, &list.with_claims_view};
  size_t *order = NULL, *next = NULL;
  if (nodes == NULL || list.taken == NULL || list.match_of == NULL || list.y_fate_alone == NULL ||
      list.y_fate_with == NULL) {
    st = actx_ep_error(api, ORT_FAIL, "out of memory listing %zu nodes", n);
    goto done;
  }
  list.pool = nodes + n;
  for (size_t i = 0; i < n; i++) list.match_of[i] = SIZE_MAX;
  if ((st = api->Graph_GetNodes(graph, nodes, n)) != NULL ||
      (st = actx_ep_positions_build(api, nodes, n, &list.positions)) != NULL)
    goto done;

  /* a bfloat16 Conv and its SiLU first (bf16_conv_act.c; try_fusion would take the SiLU alone),
   * then whole subgraphs, then single nodes among the rest, then the bfloat16 nodes */
  st = actx_ep_bf16_fuse_conv_silu(api, ep->logger, nodes, n, &list.positions, list.taken,
                                   support);
  for (size_t i = 0; i < n && st == NULL; i++)
    if (!list.taken[i]) st = try_fusion(ep, nodes, i, &list);
  for (size_t i = 0; i < n && st == NULL; i++)
    if (!list.taken[i]) st = try_node(ep, nodes, i, &list);
  /* the bfloat16 nodes ORT cannot run, each a single node (bf16_claim.c) */
  if (st == NULL) st = actx_ep_bf16_take(api, ep->logger, nodes, n, list.taken, support);
  if (st != NULL || list.n == 0) goto done;

  order = malloc(list.n * sizeof *order);
  next = malloc(list.n * sizeof *next);
  bool *follows = calloc(list.n, sizeof *follows);
  if (order == NULL || next == NULL || follows == NULL) {
    free(follows);
    st = actx_ep_error(api, ORT_FAIL, "out of memory grouping %zu claims", list.n);
    goto done;
  }
  st = actx_ep_chain_claims(api, &list.positions, list.claims, list.n, list.pool, order, next);
  for (size_t c = 0; c < list.n && st == NULL; c++)
    if (next[c] != SIZE_MAX) follows[next[c]] = true;
  for (size_t i = 0; i < list.n && st == NULL; i++)
    if (!follows[order[i]]) st = add_group(ep, &list, order[i], next, support, nodes + 2 * n);
  free(follows);
done:
  free(order);
  free(next);
  free(list.claims);
  free(list.taken);
  free(list.match_of);
  free(list.matches);
  free(list.y_fate_alone);
  free(list.y_fate_with);
  actx_ep_positions_free(&list.positions);
  free(nodes);
  return st;
}

/* A compute info of either kind Compile makes: a group's, or a bfloat16 compiled node's (a
 * chain, a Conv and its activation). */
static void release_info(OrtNodeComputeInfo *info) {
  if (!actx_ep_bf16_compiled_release(info)) actx_ep_kernel_release(info);
}

static void ep_release_node_compute_infos(OrtEp *self, OrtNodeComputeInfo **infos, size_t n) {
  (void)self;
  for (size_t i = 0; i < n; i++) release_info(infos[i]);
}

/* The record of the group ORT made fused_node for from the n nodes of graph: the newest with
 * their signature whose y is the fused node's output. */
static OrtStatus *find_record(const actx_ep *ep, const OrtGraph *graph, size_t n,
                              const OrtNode *fused_node, const group_record **out) {
  *out = NULL;
  const OrtApi *api = ep->api;
  const OrtNode **nodes = malloc(n * sizeof *nodes);
  if (nodes == NULL) return actx_ep_error(api, ORT_FAIL, "out of memory listing %zu nodes", n);
  uint64_t signature = 0;
  OrtStatus *st = api->Graph_GetNodes(graph, nodes, n);
  if (st == NULL) st = actx_ep_group_signature(api, nodes, n, &signature);
  free(nodes);
  if (st != NULL) return st;
  const OrtValueInfo *y = NULL;
  const char *y_name = NULL;
  st = actx_ep_node_output(api, fused_node, &y);
  if (st == NULL && y != NULL) st = api->GetValueInfoName(y, &y_name);
  if (st != NULL || y_name == NULL) return st;
  for (size_t r = ep->n_records; r-- > 0 && *out == NULL;) { /* newest first */
    const group_record *record = &ep->records[r];
    if (record->n_nodes == n && record->signature == signature &&
        strcmp(record->y_name, y_name) == 0)
      *out = record;
  }
  return NULL;
}

static OrtStatus *ep_compile(OrtEp *self, const OrtGraph **graphs, const OrtNode **fused_nodes,
                             size_t count, OrtNodeComputeInfo **infos, OrtNode **ep_context_nodes) {
  (void)ep_context_nodes; /* we never write EPContext models */
  actx_ep *ep = (actx_ep *)self;
  const OrtApi *api = ep->api;
  for (size_t i = 0; i < count; i++) infos[i] = NULL;

  OrtStatus *st = NULL;
  for (size_t i = 0; i < count && st == NULL; i++) {
    size_t n = 0;
    const group_record *r = NULL;
    if ((st = api->Graph_GetNumNodes(graphs[i], &n)) != NULL) break;
    if (n > 0 && (st = find_record(ep, graphs[i], n, fused_nodes[i], &r)) != NULL) break;
    /* no record: a bfloat16 Conv and its activation (bf16_conv_act.c), or a chain of
     * bfloat16 element-wise nodes (bf16_chain.c) */
    if (r == NULL && (st = actx_ep_bf16_conv_act_compile(api, &ep->pool, graphs[i],
                                                         fused_nodes[i], &infos[i])) != NULL)
      break;
    if (r == NULL && infos[i] == NULL &&
        (st = actx_ep_bf16_chain_compile(api, &ep->pool, graphs[i], fused_nodes[i],
                                         &infos[i])) != NULL)
      break;
    if (r == NULL && infos[i] != NULL) continue;
    if (r == NULL) {
      st = actx_ep_error(api, ORT_EP_FAIL, "a graph of %zu nodes that GetCapability did not take",
                         n);
      break;
    }
    st = actx_ep_kernel_create(api, r->steps, r->n_steps, r->x_name, r->label, fused_nodes[i],
                               &infos[i]);
  }
  if (st != NULL) { /* all or nothing: free what was built and hand ORT only NULLs */
    for (size_t i = 0; i < count; i++) {
      release_info(infos[i]);
      infos[i] = NULL;
    }
  }
  return st;
}

static OrtStatus *ep_get_kernel_registry(OrtEp *self, const OrtKernelRegistry **out) {
  actx_ep *ep = (actx_ep *)self;
  *out = NULL;
  if (ep->registry == NULL) {
    OrtStatus *st = actx_ep_registry_create(ep->api, &ep->registry);
    if (st != NULL) return st;
  }
  *out = actx_ep_registry_get(ep->registry);
  return NULL;
}

static OrtStatus *ep_is_concurrent_run_supported(OrtEp *self, bool *supported) {
  (void)self;
  *supported = true; /* Compute keeps per-call state on the stack */
  return NULL;
}

OrtStatus *actx_ep_create(const OrtApi *api, const OrtLogger *logger,
                          const actx_ep_options *options, OrtEp **out) {
  *out = NULL;
  actx_ep *ep = calloc(1, sizeof *ep); /* zeroed: every slot we do not implement is NULL */
  if (ep == NULL) return actx_ep_error(api, ORT_FAIL, "out of memory creating the EP");
  ep->base.ort_version_supported = ORT_API_VERSION;
  ep->base.GetName = ep_get_name;
  ep->base.GetCapability = ep_get_capability;
  ep->base.Compile = ep_compile;
  ep->base.ReleaseNodeComputeInfos = ep_release_node_compute_infos;
  ep->base.GetKernelRegistry = ep_get_kernel_registry;
  ep->base.IsConcurrentRunSupported = ep_is_concurrent_run_supported;
  ep->api = api;
  ep->ep_api = api->GetEpApi();
  ep->logger = logger;
  /* `auto` where ORT's CPU EP may run what we leave, else `all` (a node we leave would fail
   * the session, and all takes nothing whose result is not ORT's either) */
  ep->policy = options->policy == ACTX_EP_POLICY_AUTO && options->cpu_fallback_disabled
                   ? ACTX_EP_POLICY_ALL
                   : options->policy;
  actx_ep_log(api, logger, ORT_LOGGING_LEVEL_INFO, "actx: EP created (policy %s%s)",
              actx_ep_policy_mode_name(options->policy),
              ep->policy != options->policy ? ", CPU fallback disabled: taking what all takes"
                  : "");
  *out = &ep->base;
  return NULL;
}

void actx_ep_release(OrtEp *base) {
  actx_ep *ep = (actx_ep *)base;
  if (ep == NULL) return;
  for (size_t i = 0; i < ep->n_records; i++) record_free(&ep->records[i]);
  free(ep->records);
  actx_ep_registry_free(ep->registry);
  free(ep);
}
