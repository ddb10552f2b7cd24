/* The OrtEp of one session: GetCapability decides which nodes we take, Compile builds their
 * compute functions.
 *
 * What we take becomes one fused node per activation (EpGraphSupportInfo_AddNodesToFuse): either
 * a single node we run (claim.c), or a whole exported activation subgraph such as
 * Div → Erf → Add → Mul → Mul with the bias Add before it (fusion.c), which one actx_compute()
 * call replaces. GetCapability first looks for such subgraphs, then for single nodes among the
 * rest. For each fused subgraph it records what the node computes and which of its inputs are x
 * and the bias; Compile finds the record again by the nodes of the graph it is handed.
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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actx_ep.h"

/* What GetCapability took as one fused subgraph, for Compile. */
typedef struct fused_record {
  uint64_t signature; /* of the nodes it covers (group_signature) */
  actx_ep_node node;
  char *y_name, *x_name, *bias_name; /* bias_name NULL without a bias */
  char label[128];                   /* "erf GELU at 'p3'" for messages */
} fused_record;

typedef struct actx_ep {
  OrtEp base; /* first: ORT hands &base back */
  const OrtApi *api;
  const OrtEpApi *ep_api;
  const OrtLogger *logger;
  actx_ep_options options;
  /* in the order GetCapability made them; it runs before Compile, on one thread per session */
  fused_record *records;
  size_t n_records, records_capacity;
} actx_ep;

OrtStatus *actx_ep_error(const OrtApi *api, OrtErrorCode code, const char *fmt, ...) {
  char msg[512];
  int len = snprintf(msg, sizeof msg, "actx EP: ");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg + len, sizeof msg - (size_t)len, fmt, ap);
  va_end(ap);
  return api->CreateStatus(code, msg);
}

void actx_ep_log(const OrtApi *api, const OrtLogger *logger, OrtLoggingLevel level, const char *fmt,
                 ...) {
  if (logger == NULL) return;
  OrtLoggingLevel current = ORT_LOGGING_LEVEL_FATAL;
  OrtStatus *st = api->Logger_GetLoggingSeverityLevel(logger, &current);
  if (st != NULL) {
    api->ReleaseStatus(st);
    return;
  }
  if (level < current) return; /* skip the formatting */
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  st = api->Logger_LogMessage(logger, level, msg, __FILE__, __LINE__, "actx_ep");
  if (st != NULL) api->ReleaseStatus(st);
}

static const char *ep_get_name(const OrtEp *self) {
  (void)self;
  return ACTX_EP_NAME;
}

/* The policy in force: `auto` where ORT's CPU EP may run what we leave, else `all` (a node we
 * leave would fail the session, and all takes nothing whose result is not ORT's either). */
static actx_ep_policy_mode policy_of(const actx_ep *ep) {
  return ep->options.policy == ACTX_EP_POLICY_AUTO && ep->options.cpu_fallback_disabled
             ? ACTX_EP_POLICY_ALL
             : ep->options.policy;
}

/* Whether the policy takes a node we can run. *why says why not. */
static OrtStatus *policy_takes(const actx_ep *ep, const OrtNode *node, const actx_ep_node *info,
                               bool *take, const char **why) {
  *take = false;
  *why = NULL;
  switch (policy_of(ep)) {
    case ACTX_EP_POLICY_NONE: *why = "policy none"; return NULL;
    case ACTX_EP_POLICY_ALL: *take = true; return NULL;
    case ACTX_EP_POLICY_AUTO: break;
  }
  /* ORT's fusions would make one kernel of the node and its neighbours. It has no bfloat16
   * kernels at all, so there a node we leave is a session that fails. In float16 it has no Gelu
   * kernel to fuse a bias Add into: a Gelu we leave is inlined into its function body, whose
   * Erf (its √2 a Sqrt node's output, which pattern.c does not see as a GELU) we would then
   * take alone in the middle of ORT's float32 island. So a float16 Gelu is ours. */
  const bool gelu_kind = info->kind == ACTX_EP_GELU || info->kind == ACTX_EP_GELU_TANH ||
                         info->kind == ACTX_EP_MS_GELU || info->kind == ACTX_EP_FAST_GELU;
  bool in_pattern = false;
  OrtStatus *st = info->dtype == ACTX_BF16 || (info->dtype == ACTX_F16 && gelu_kind)
                      ? NULL
                      : actx_ep_in_fusable_pattern(ep->api, node, info->kind, &in_pattern);
  if (st != NULL) return st;
  if (in_pattern) {
    *why = "part of a subgraph ORT fuses itself";
    return NULL;
  }
  *take = actx_ep_policy_auto_claims(info->kind, info->dtype, info->elements, info->min_elements);
  if (!*take) *why = "auto policy: ORT measured faster here";
  return NULL;
}

/* Whether the policy takes a matched subgraph as one node. Every policy takes one only where one
 * node gives ORT's bits for every input, infinities and NaNs included: where ORT would fuse the
 * same nodes into the same kernel. Elsewhere ORT runs the nodes one by one, and one kernel rounds
 * differently, and overflows or turns inf·0 into NaN where the nodes do not (ep-policy.md,
 * "Where ORT does not fuse"). In bfloat16 ORT has no kernels and nothing to compare with, so the
 * match itself (fusion.c: only folds that are exact in IEEE arithmetic) is the rule. `auto` then
 * also wants the table to say our kernel is the faster one. */
static OrtStatus *policy_takes_fusion(const actx_ep *ep, const actx_ep_fusion *f, bool *take,
                                      const char **why) {
  *take = false;
  *why = NULL;
  if (policy_of(ep) == ACTX_EP_POLICY_NONE) {
    *why = "policy none";
    return NULL;
  }
  /* A float16 Gelu node after a bias Add: ORT has no float16 Gelu kernel and runs the Add and
   * the Gelu's inlined function body as one float32 island between two Casts; our fused kernel
   * computes the same float32 sum and rounds once too, and saves the island's six nodes. */
  const bool half_gelu_node = f->node.dtype == ACTX_F16 && f->family == ACTX_EP_FUSION_GELU_NODE;
  if (f->node.dtype != ACTX_BF16 && !half_gelu_node) {
    bool ort_fuses = false;
    OrtStatus *st = actx_ep_ort_fuses(ep->api, f, &ort_fuses);
    if (st != NULL) return st;
    if (!ort_fuses) {
      *why = "ORT alone runs these nodes unfused, so one kernel would not give its bits";
      return NULL;
    }
  }
  if (policy_of(ep) == ACTX_EP_POLICY_ALL) {
    *take = true;
    return NULL;
  }
  const actx_ep_node *n = &f->node;
  *take = actx_ep_policy_auto_claims(n->kind, n->dtype, n->elements, n->min_elements);
  if (!*take) *why = "auto policy: ORT's fused kernel measured faster here";
  return NULL;
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

/* FNV-1a, over bytes and over strings with their terminating NUL (so "ab","c" != "a","bc"). */
#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull
static uint64_t hash_bytes(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * FNV_PRIME;
  return h;
}
static uint64_t hash_string(uint64_t h, const char *s) {
  return s != NULL ? hash_bytes(h, s, strlen(s) + 1) : hash_bytes(h, "\xff", 1);
}

static OrtStatus *hash_values(const OrtApi *api, uint64_t *h, const OrtValueInfo *const *values,
                              size_t n) {
  *h = hash_bytes(*h, &n, sizeof n);
  for (size_t i = 0; i < n; i++) {
    const char *name = NULL;
    OrtStatus *st = values[i] != NULL ? api->GetValueInfoName(values[i], &name) : NULL;
    if (st != NULL) return st;
    *h = hash_string(*h, name);
  }
  return NULL;
}

/* The signature of a group of nodes: for each, in id order, its id, domain, operator, name and
 * the names of its inputs and outputs. The same nodes give the same signature in GetCapability
 * and in Compile. */
static OrtStatus *group_signature(const OrtApi *api, const OrtNode *const *nodes, size_t n,
                                  uint64_t *out) {
  *out = FNV_OFFSET;
  const OrtNode *sorted[ACTX_EP_MAX_FUSED_NODES];
  size_t ids[ACTX_EP_MAX_FUSED_NODES];
  if (n > ACTX_EP_MAX_FUSED_NODES)
    return actx_ep_error(api, ORT_EP_FAIL, "a group of %zu nodes (at most %d)", n,
                         ACTX_EP_MAX_FUSED_NODES);
  OrtStatus *st = NULL;
  for (size_t i = 0; i < n && st == NULL; i++) { /* insertion sort by id: n is small */
    size_t id = 0;
    if ((st = api->Node_GetId(nodes[i], &id)) != NULL) break;
    size_t j = i;
    for (; j > 0 && ids[j - 1] > id; j--) {
      ids[j] = ids[j - 1];
      sorted[j] = sorted[j - 1];
    }
    ids[j] = id;
    sorted[j] = nodes[i];
  }
  uint64_t h = FNV_OFFSET;
  for (size_t i = 0; i < n && st == NULL; i++) {
    const char *domain = NULL, *op_type = NULL, *name = NULL;
    if ((st = api->Node_GetDomain(sorted[i], &domain)) != NULL ||
        (st = api->Node_GetOperatorType(sorted[i], &op_type)) != NULL ||
        (st = api->Node_GetName(sorted[i], &name)) != NULL)
      break;
    h = hash_bytes(h, &ids[i], sizeof ids[i]);
    h = hash_string(hash_string(hash_string(h, domain), op_type), name);
    const OrtValueInfo *values[2 * ACTX_EP_MAX_FUSED_NODES];
    const size_t max = sizeof values / sizeof values[0];
    size_t n_in = 0, n_out = 0;
    if ((st = actx_ep_node_inputs(api, sorted[i], values, max, &n_in)) != NULL ||
        (st = hash_values(api, &h, values, n_in < max ? n_in : max)) != NULL)
      break;
    if ((st = api->Node_GetNumOutputs(sorted[i], &n_out)) != NULL) break;
    if (n_out > max) n_out = max;
    if ((st = api->Node_GetOutputs(sorted[i], values, n_out)) != NULL ||
        (st = hash_values(api, &h, values, n_out)) != NULL)
      break;
  }
  *out = h;
  return st;
}

static void record_free(fused_record *r) {
  free(r->y_name);
  free(r->x_name);
  free(r->bias_name);
}

static OrtStatus *add_record(actx_ep *ep, const actx_ep_fusion *f, const char *core_name) {
  const OrtApi *api = ep->api;
  if (ep->n_records == ep->records_capacity) {
    const size_t capacity = ep->records_capacity ? 2 * ep->records_capacity : 16;
    fused_record *grown = realloc(ep->records, capacity * sizeof *grown);
    if (grown == NULL) return actx_ep_error(api, ORT_FAIL, "out of memory recording a fusion");
    ep->records = grown;
    ep->records_capacity = capacity;
  }
  fused_record r = {.node = f->node};
  OrtStatus *st = group_signature(api, f->nodes, f->n_nodes, &r.signature);
  if (st != NULL) return st;
  r.y_name = copy_name(api, f->y, &st);
  if (st == NULL) r.x_name = copy_name(api, f->x, &st);
  if (st == NULL && f->bias != NULL) r.bias_name = copy_name(api, f->bias, &st);
  if (st == NULL && (r.y_name == NULL || r.x_name == NULL || (f->bias != NULL && !r.bias_name)))
    st = actx_ep_error(api, ORT_FAIL, "out of memory recording a fusion (or an unnamed value)");
  if (st != NULL) {
    record_free(&r);
    return st;
  }
  snprintf(r.label, sizeof r.label, "%s at '%s'", actx_ep_fusion_name(f), core_name);
  ep->records[ep->n_records++] = r;
  return NULL;
}

/* Whether node is one of the n nodes in list. */
static bool listed(const OrtNode *const *list, size_t n, const OrtNode *node) {
  for (size_t i = 0; i < n; i++)
    if (list[i] == node) return true;
  return false;
}

/* Takes the fused subgraph whose core is node, if there is one and the policy wants it; its
 * nodes are appended to taken. */
static OrtStatus *try_fusion(actx_ep *ep, const OrtNode *node, OrtEpGraphSupportInfo *support,
                             const OrtNodeFusionOptions *fusion_options, const OrtNode **taken,
                             size_t *n_taken) {
  const OrtApi *api = ep->api;
  actx_ep_fusion f;
  bool found = false;
  OrtStatus *st = actx_ep_match_fusion(api, node, &f, &found);
  if (st != NULL || !found) return st;
  for (size_t i = 0; i < f.n_nodes; i++) {
    const char *assigned = NULL;
    if (listed(taken, *n_taken, f.nodes[i])) return NULL;
    if ((st = api->Node_GetEpName(f.nodes[i], &assigned)) != NULL) return st;
    if (assigned != NULL && assigned[0] != '\0' && strcmp(assigned, ACTX_EP_NAME) != 0)
      return NULL; /* an earlier EP took part of it */
  }
  const char *name = NULL;
  if ((st = api->Node_GetName(node, &name)) != NULL) return st;
  if (name == NULL) name = "";
  bool take = false;
  const char *why = NULL;
  if ((st = policy_takes_fusion(ep, &f, &take, &why)) != NULL) return st;
  if (!take) {
    actx_ep_log(api, ep->logger, ORT_LOGGING_LEVEL_VERBOSE,
                "actx: declined %s at '%s' (%zu nodes): %s", actx_ep_fusion_name(&f), name,
                f.n_nodes, why);
    return NULL;
  }
  if ((st = add_record(ep, &f, name)) != NULL) return st;
  actx_ep_log(api, ep->logger, ORT_LOGGING_LEVEL_VERBOSE,
              "actx: claimed %s at '%s' as one node (%zu nodes, %s, %s, %lld elements)",
              actx_ep_fusion_name(&f), name, f.n_nodes, actx_ep_kind_name(f.node.kind),
              actx_dtype_name(f.node.dtype), (long long)f.node.elements);
  if ((st = ep->ep_api->EpGraphSupportInfo_AddNodesToFuse(support, f.nodes, f.n_nodes,
                                                          fusion_options)) != NULL)
    return st;
  for (size_t i = 0; i < f.n_nodes; i++) taken[(*n_taken)++] = f.nodes[i];
  return NULL;
}

static OrtStatus *ep_get_capability(OrtEp *self, const OrtGraph *graph,
                                    OrtEpGraphSupportInfo *support) {
  actx_ep *ep = (actx_ep *)self;
  const OrtApi *api = ep->api;
  if (policy_of(ep) == ACTX_EP_POLICY_NONE) return NULL;

  size_t n = 0;
  OrtStatus *st = api->Graph_GetNumNodes(graph, &n);
  if (st != NULL || n == 0) return st;
  /* nodes, then the nodes taken as parts of fused subgraphs (each node at most once) */
  const OrtNode **nodes = malloc(2 * n * sizeof *nodes);
  if (nodes == NULL) return actx_ep_error(api, ORT_FAIL, "out of memory listing %zu nodes", n);
  const OrtNode **taken = nodes + n;
  size_t n_taken = 0;
  if ((st = api->Graph_GetNodes(graph, nodes, n)) != NULL) goto done;

  /* ORT copies the fusion options; drop_constant_initializers false: a constant input (a
   * BiasGelu bias, a subgraph's √2) is passed to Compute like any other. */
  const OrtNodeFusionOptions fusion = {.ort_version_supported = ORT_API_VERSION,
                                       .drop_constant_initializers = false};
  for (size_t i = 0; i < n && st == NULL; i++)
    if (!listed(taken, n_taken, nodes[i]))
      st = try_fusion(ep, nodes[i], support, &fusion, taken, &n_taken);

  for (size_t i = 0; i < n && st == NULL; i++) {
    if (listed(taken, n_taken, nodes[i])) continue;
    const char *assigned = NULL;
    if ((st = api->Node_GetEpName(nodes[i], &assigned)) != NULL) break;
    if (assigned != NULL && assigned[0] != '\0' && strcmp(assigned, ACTX_EP_NAME) != 0)
      continue; /* an earlier EP took it */

    actx_ep_node info;
    const char *reason = NULL;
    bool take = false;
    if ((st = actx_ep_claim(api, nodes[i], &info, &reason)) != NULL) break;
    if (reason == NULL && (st = policy_takes(ep, nodes[i], &info, &take, &reason)) != NULL) break;

    const char *name = NULL;
    if ((st = api->Node_GetName(nodes[i], &name)) != NULL) break;
    if (!take) {
      if (reason != NULL && strcmp(reason, "operator not served") != 0)
        actx_ep_log(api, ep->logger, ORT_LOGGING_LEVEL_VERBOSE, "actx: declined node '%s': %s",
                    name ? name : "", reason);
      continue;
    }
    actx_ep_log(api, ep->logger, ORT_LOGGING_LEVEL_VERBOSE,
                "actx: claimed node '%s' (%s, %s, %lld elements)", name ? name : "",
                actx_ep_kind_name(info.kind), actx_dtype_name(info.dtype),
                (long long)info.elements);
    st = ep->ep_api->EpGraphSupportInfo_AddNodesToFuse(support, &nodes[i], 1, &fusion);
  }
done:
  free(nodes);
  return st;
}

static void ep_release_node_compute_infos(OrtEp *self, OrtNodeComputeInfo **infos, size_t n) {
  (void)self;
  for (size_t i = 0; i < n; i++) actx_ep_kernel_release(infos[i]);
}

/* The record of the fused subgraph ORT made fused_node for from the nodes of graph: the newest
 * with their signature whose y is the fused node's output and whose x one of its inputs. */
static OrtStatus *find_record(const actx_ep *ep, const OrtGraph *graph, size_t n_nodes,
                              const OrtNode *fused_node, const fused_record **out) {
  *out = NULL;
  const OrtApi *api = ep->api;
  if (n_nodes > ACTX_EP_MAX_FUSED_NODES) return NULL;
  const OrtNode *nodes[ACTX_EP_MAX_FUSED_NODES];
  uint64_t signature = 0;
  OrtStatus *st = api->Graph_GetNodes(graph, nodes, n_nodes);
  if (st == NULL) st = group_signature(api, nodes, n_nodes, &signature);
  if (st != NULL) return st;
  const OrtValueInfo *y = NULL;
  const char *y_name = NULL;
  st = actx_ep_node_output(api, fused_node, &y);
  if (st == NULL && y != NULL) st = api->GetValueInfoName(y, &y_name);
  if (st != NULL || y_name == NULL) return st;
  /* every node of a fused subgraph has at most two inputs */
  const OrtValueInfo *in[2 * ACTX_EP_MAX_FUSED_NODES];
  const size_t max_in = sizeof in / sizeof in[0];
  size_t n_in = 0;
  if ((st = actx_ep_node_inputs(api, fused_node, in, max_in, &n_in)) != NULL) return st;
  for (size_t r = ep->n_records; r-- > 0 && *out == NULL;) { /* newest first */
    if (ep->records[r].signature != signature || strcmp(ep->records[r].y_name, y_name) != 0)
      continue;
    for (size_t i = 0; i < n_in && i < max_in; i++) {
      const char *name = NULL;
      if (in[i] != NULL && (st = api->GetValueInfoName(in[i], &name)) != NULL) return st;
      if (name != NULL && strcmp(name, ep->records[r].x_name) == 0) *out = &ep->records[r];
    }
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
    if ((st = api->Graph_GetNumNodes(graphs[i], &n)) != NULL) break;
    if (n == 1) { /* a single node we claimed */
      const OrtNode *node = NULL;
      if ((st = api->Graph_GetNodes(graphs[i], &node, 1)) != NULL) break;
      st = actx_ep_kernel_create(api, node, fused_nodes[i], &infos[i]);
      continue;
    }
    const fused_record *r = NULL;
    if ((st = find_record(ep, graphs[i], n, fused_nodes[i], &r)) != NULL) break;
    if (r == NULL) {
      st = actx_ep_error(api, ORT_EP_FAIL,
                         "a fused graph of %zu nodes that GetCapability did not record", n);
      break;
    }
    st = actx_ep_kernel_create_fused(api, &r->node, r->x_name, r->bias_name, r->label,
                                     fused_nodes[i], &infos[i]);
  }
  if (st != NULL) { /* all or nothing: free what was built and hand ORT only NULLs */
    for (size_t i = 0; i < count; i++) {
      actx_ep_kernel_release(infos[i]);
      infos[i] = NULL;
    }
  }
  return st;
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
  ep->base.IsConcurrentRunSupported = ep_is_concurrent_run_supported;
  ep->api = api;
  ep->ep_api = api->GetEpApi();
  ep->logger = logger;
  ep->options = *options;
  actx_ep_log(api, logger, ORT_LOGGING_LEVEL_INFO, "actx: EP created (policy %s%s)",
              actx_ep_policy_mode_name(options->policy),
              options->policy == ACTX_EP_POLICY_AUTO && options->cpu_fallback_disabled
                  ? ", CPU fallback disabled: taking what all takes"
                  : "");
  *out = &ep->base;
  return NULL;
}

void actx_ep_release(OrtEp *base) {
  actx_ep *ep = (actx_ep *)base;
  if (ep == NULL) return;
  for (size_t i = 0; i < ep->n_records; i++) record_free(&ep->records[i]);
  free(ep->records);
  free(ep);
}
