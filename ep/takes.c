/* Which claims a policy takes: a single node claim.c can run, or a subgraph fusion.c matched.
 * Every policy leaves to ORT what would change a result (a node whose claim stops one of ORT's
 * fusions, a subgraph ORT runs unfused, a float16 op ORT computes in float32 between Casts);
 * `all` takes the rest, `auto` what the table (policy.c) says is faster. */
#include "actx_ep.h"

const char actx_ep_auto_table_declines[] = "auto policy: ORT measured faster here";

/* What ORT does with f in both views. */
static OrtStatus *judge_both(const OrtApi *api, const actx_ep_fusion *f,
                             const actx_ep_ort_views *views, actx_ep_ort_verdicts *out) {
  OrtStatus *st = actx_ep_ort_fuses(api, f, views != NULL ? &views->alone : NULL, &out->alone);
  if (st == NULL)
    st = actx_ep_ort_fuses(api, f, views != NULL ? &views->with_claims : NULL, &out->with_claims);
  return st;
}

OrtStatus *actx_ep_takes_node(const OrtApi *api, actx_ep_policy_mode policy, const OrtNode *node,
                              const actx_ep_node *info, const actx_ep_fusion *match,
                              const actx_ep_ort_views *views, bool *take, const char **why) {
  *take = false;
  *why = NULL;
  /* No policy takes a node ORT's fusions would make one kernel of with its neighbours: ORT
   * would then run the rest unfused, and the session's result would no longer be ORT's (which
   * fusion ORT makes can even depend on the ones before it: an exported GELU whose x is another
   * GELU's output is fused only once that one is). ORT has no bfloat16 kernels at all, so there
   * a node we leave is a session that fails. In float16 it has no Gelu kernel to fuse a bias Add
   * into: a Gelu we leave is inlined into its function body and computed as a float32 island,
   * where our one rounding is the closer result. So a float16 Gelu is ours. */
  const bool gelu_kind = info->kind == ACTX_EP_GELU || info->kind == ACTX_EP_GELU_TANH ||
                         info->kind == ACTX_EP_MS_GELU || info->kind == ACTX_EP_FAST_GELU;
  bool in_pattern = false;
  OrtStatus *st = info->dtype == ACTX_BF16 || (info->dtype == ACTX_F16 && gelu_kind)
                      ? NULL
                      : actx_ep_in_fusable_pattern(api, node, info->kind, &in_pattern);
  if (st != NULL) return st;
  /* pattern.c's test is loose on purpose; where the subgraph matcher recognises the whole
   * float32 subgraph, ort_fusions.c knows whether ORT fuses it (tested against ORT), and a
   * subgraph ORT alone runs node by node (JAX's spelling of the tanh GELU, say) loses nothing to
   * our taking its core: our Erf / Tanh / Sigmoid is ORT's node to the bit. Where ORT alone
   * would not fuse it but might in the graph we hand back (our claim took the Cast in front of
   * its x), the core must be ours whatever the table says: it keeps ORT from fusing. Where ORT
   * alone may fuse it (x's producer may be fused by one of ORT's other fusions), it stays
   * ORT's. */
  bool must_take = false;
  if (in_pattern && info->dtype == ACTX_F32 && match != NULL && match->node.dtype == ACTX_F32) {
    actx_ep_ort_verdicts v;
    if ((st = judge_both(api, match, views, &v)) != NULL) return st;
    in_pattern = v.alone != ACTX_EP_ORT_UNFUSED;
    must_take = !in_pattern && v.with_claims != ACTX_EP_ORT_UNFUSED;
  }
  if (in_pattern) {
    *why = "part of a subgraph ORT fuses itself (or may)";
    return NULL;
  }
  /* A float16 Erf / Tanh / Sigmoid between a Cast from float32 and one back: ORT computes it in
   * float32 (fusion.c, match_half_casts), where alone we would round its input and output to
   * float16. The three were offered as one float32 claim first; if the policy left that to ORT,
   * the node stays ORT's too. */
  if (info->dtype == ACTX_F16 &&
      (info->kind == ACTX_EP_ERF || info->kind == ACTX_EP_TANH || info->kind == ACTX_EP_SIGMOID) &&
      match != NULL && match->family == ACTX_EP_FUSION_HALF_CASTS) {
    *why = "ORT computes it in float32 between its Casts";
    return NULL;
  }
  if (policy == ACTX_EP_POLICY_ALL || must_take) {
    *take = true;
    return NULL;
  }
  *take = actx_ep_policy_auto_claims(info->kind, info->dtype, info->elements, info->min_elements);
  if (!*take) *why = actx_ep_auto_table_declines;
  return NULL;
}

/* Whether the policy takes a matched subgraph as one node. Every policy takes one only where one
 * node gives ORT's bits for every input, infinities and NaNs included: where ORT would fuse the
 * same nodes into the same kernel. Elsewhere ORT runs the nodes one by one, and one kernel rounds
 * differently, and overflows or turns inf·0 into NaN where the nodes do not (ep-policy.md,
 * "Where ORT does not fuse"). In bfloat16 ORT has no kernels and nothing to compare with, so the
 * match itself (fusion.c: only folds that are exact in IEEE arithmetic) is the rule. `auto` then
 * also wants the table to say our kernel is the faster one. */
OrtStatus *actx_ep_takes_fusion(const OrtApi *api, actx_ep_policy_mode policy,
                                const actx_ep_fusion *f, const actx_ep_ort_views *views,
                                actx_ep_ort_verdicts *verdicts, bool *take, const char **why) {
  *take = false;
  *why = NULL;
  verdicts->alone = verdicts->with_claims = ACTX_EP_ORT_UNSURE;
  bool must_take = false;
  /* A float16 Gelu node after a bias Add: ORT has no float16 Gelu kernel and runs the Add and
   * the Gelu's inlined function body as one float32 island between two Casts; our fused kernel
   * computes the same float32 sum and rounds once too, and saves the island's six nodes. */
  const bool half_gelu_node = f->node.dtype == ACTX_F16 && f->family == ACTX_EP_FUSION_GELU_NODE;
  if (f->node.dtype != ACTX_BF16 && !half_gelu_node) {
    OrtStatus *st = judge_both(api, f, views, verdicts);
    if (st != NULL) return st;
    if (verdicts->alone != ACTX_EP_ORT_FUSES) {
      *why = verdicts->alone == ACTX_EP_ORT_UNFUSED
                 ? "ORT alone runs these nodes unfused, so one kernel would not give its bits"
                 : "ORT alone may run these nodes unfused (x's producer may be fused or not)";
      return NULL;
    }
    /* ORT alone fuses it, but might not in the graph we hand back: left to ORT, it would run
     * the nodes one by one, so it is ours whatever the table says (not seen: taking nodes out
     * only removes producers ORT's rules reject). */
    must_take = verdicts->with_claims != ACTX_EP_ORT_FUSES;
    /* ORT's FastGelu, which it fuses a tanh GELU into, refuses a scalar x at run time; a
     * session with our node must refuse it too, so the run's error is left to ORT's kernel. */
    if (f->node.dtype == ACTX_F32 && f->family == ACTX_EP_FUSION_TANH_GELU) {
      actx_ep_tensor_meta x;
      if ((st = actx_ep_value_meta(api, f->x, &x)) != NULL) return st;
      if (!x.has_shape || x.rank == 0) {
        *why = "ORT's FastGelu refuses an input of rank 0 (or unknown rank)";
        return NULL;
      }
    }
  }
  if (policy == ACTX_EP_POLICY_ALL || must_take) {
    *take = true;
    return NULL;
  }
  const actx_ep_node *n = &f->node;
  *take = actx_ep_policy_auto_claims(n->kind, n->dtype, n->elements, n->min_elements);
  if (!*take) *why = "auto policy: ORT's fused kernel measured faster here";
  return NULL;
}
