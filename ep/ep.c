/* The OrtEp of one session: GetCapability decides which nodes we take, Compile builds their
 * compute functions.
 *
 * Each claimed node becomes its own fused node (EpGraphSupportInfo_AddNodesToFuse with one
 * node) rather than going through a kernel registry: it is the path that will let later work
 * fuse several nodes into one call.
 *
 * What GetCapability sees, at ORT_ENABLE_ALL (found by experiment, test_patterns in
 * tests/ep/test_ep_policy.c, and matching ORT's inference_session.cc): ORT applies its level-1
 * optimisations, then partitions (our GetCapability), then runs level 2+ only on the nodes left
 * to its own EPs. So we see the graph *before* the fusions FastGelu, BiasGelu, QuickGelu and,
 * for models below opset 20, Gelu (Div → Erf → Add → Mul → Mul): all of them are level 2. For
 * opset >= 20 models ORT's GeluFusion also runs at level 1, and we see the fused ai.onnx Gelu.
 * pattern.c keeps `auto` from taking nodes whose claim would stop a level-2 fusion. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actx_ep.h"

typedef struct actx_ep {
  OrtEp base; /* first: ORT hands &base back */
  const OrtApi *api;
  const OrtEpApi *ep_api;
  const OrtLogger *logger;
  actx_ep_options options;
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

/* Whether the policy takes a node we can run. *why says why not. */
static OrtStatus *policy_takes(const actx_ep *ep, const OrtNode *node, const actx_ep_node *info,
                               bool *take, const char **why) {
  *take = false;
  *why = NULL;
  switch (ep->options.policy) {
    case ACTX_EP_POLICY_NONE: *why = "policy none"; return NULL;
    case ACTX_EP_POLICY_ALL: *take = true; return NULL;
    case ACTX_EP_POLICY_AUTO: break;
  }
  /* ORT's fusions would make one kernel of the node and its neighbours; it has no bfloat16
   * kernels at all, so there a node we leave is a session that fails */
  bool in_pattern = false;
  OrtStatus *st = info->dtype == ACTX_BF16
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

static OrtStatus *ep_get_capability(OrtEp *self, const OrtGraph *graph,
                                    OrtEpGraphSupportInfo *support) {
  actx_ep *ep = (actx_ep *)self;
  const OrtApi *api = ep->api;
  if (ep->options.policy == ACTX_EP_POLICY_NONE) return NULL;

  size_t n = 0;
  OrtStatus *st = api->Graph_GetNumNodes(graph, &n);
  if (st != NULL || n == 0) return st;
  const OrtNode **nodes = malloc(n * sizeof *nodes);
  if (nodes == NULL) return actx_ep_error(api, ORT_FAIL, "out of memory listing %zu nodes", n);
  if ((st = api->Graph_GetNodes(graph, nodes, n)) != NULL) goto done;

  /* ORT copies the fusion options; drop_constant_initializers false: a constant input (a
   * BiasGelu bias) is passed to Compute like any other. */
  const OrtNodeFusionOptions fusion = {.ort_version_supported = ORT_API_VERSION,
                                       .drop_constant_initializers = false};
  for (size_t i = 0; i < n && st == NULL; i++) {
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
    if (n != 1) {
      st = actx_ep_error(api, ORT_EP_FAIL, "expected one node per fused graph, got %zu", n);
      break;
    }
    const OrtNode *node = NULL;
    if ((st = api->Graph_GetNodes(graphs[i], &node, 1)) != NULL) break;
    st = actx_ep_kernel_create(api, node, fused_nodes[i], &infos[i]);
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
  actx_ep_log(api, logger, ORT_LOGGING_LEVEL_INFO, "actx: EP created (policy %s)",
              actx_ep_policy_mode_name(options->policy));
  *out = &ep->base;
  return NULL;
}

void actx_ep_release(OrtEp *ep) { free(ep); }
