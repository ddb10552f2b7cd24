/* The `auto` assignment policy: which (operator, dtype, size) the EP claims because ORT + actx
 * was measured faster than ORT alone there. docs/ep-policy.md has the measurements behind every
 * row; change both together.
 *
 * One table per host class, because ORT's kernels and ours both differ between them: on a host
 * with AVX512F ORT 1.30 runs Erf, Gelu and SiLU with AVX-512F kernels and actx runs its
 * AVX-512 path; elsewhere both run 8-wide FMA3 / AVX2 code. The class is the ORT rule's
 * (actx_get_ort_rule(): what ORT does on this CPU).
 *
 * The rule: a row claims when the per-node A/B ratio (actx ab --baseline none: the session
 * with the EP appended either way, the node in ORT's kernel vs in ours; median of 3-5 runs of
 * 41 interleaved batch pairs) was >= 1.05 at every measured size of the row, at both 1 and 2
 * intra-op threads. A plugin EP cannot read the session's intra-op thread count (no OrtApi
 * getter in 1.30, and GetCapability runs before any kernel context exists), so a row must hold
 * at every thread count measured. Boundaries sit at the first measured size that passes (or
 * fails) the rule.
 *
 * A node whose size the graph leaves open (a symbolic dimension, as real models declare batch,
 * height or sequence) is claimed where some size it can have is and every other row it may fall
 * in is PER_NODE: declined only because a node's fixed cost outweighed the kernel's gain there,
 * per element our kernel being at least as fast. Such a node loses at most that fixed cost when
 * it turns out small, and wins when large. Rows where ORT's kernel is as fast per element (Erf,
 * Gelu and SiLU on an AVX-512 host) are not PER_NODE, so open sizes stay ORT's there.
 *
 * float16: ORT's CPU EP runs these nodes through Cast nodes or its own f16 conversions, and we
 * measured ours 1.2x-7x faster at every size on both host classes, so every row claims.
 * bfloat16: ORT's CPU EP has no kernel for any of them; not claiming would make session
 * creation fail, so every row claims.
 *
 * ARM64 (the arm64 ORT rule): not measured, since emulation cannot time a core (README, "Hosts").
 * The table claims only where the gain does not depend on the core: kernels ORT runs in several
 * passes over memory (its GELU family, QuickGelu and SiLU: a C++ pass before or after MLAS's
 * kernel, a bias added through a temporary), from 16 Ki elements so that a node's fixed cost is
 * small beside the pass saved; float16 where ORT runs it through float32 Casts. A lone Erf,
 * Tanh or Sigmoid is one MLAS pass in ORT too and stays ORT's. On a core with FP16 arithmetic
 * ORT's arm64 library runs float16 kernels of its own, whose results are not float32's rounded
 * (erf(0) = 0.001 among them): float16 nodes stay ORT's there, so `auto` keeps ORT's bits. */
#include "actx_ep.h"

#define F32 (1u << ACTX_F32)
#define HALF ((1u << ACTX_F16) | (1u << ACTX_BF16))
#define NO_LIMIT INT64_MAX
#define PER_NODE true /* the row's per_node_cost */

/* float16 and bfloat16: every kind, every size, on both host classes */
#define HALF_ROWS                                         \
  {ACTX_EP_ERF, HALF, 0, NO_LIMIT, true, false},                 \
  {ACTX_EP_GELU, HALF, 0, NO_LIMIT, true, false},                \
  {ACTX_EP_GELU_TANH, HALF, 0, NO_LIMIT, true, false},           \
  {ACTX_EP_MS_GELU, HALF, 0, NO_LIMIT, true, false},             \
  {ACTX_EP_BIAS_GELU, HALF, 0, NO_LIMIT, true, false},           \
  {ACTX_EP_FAST_GELU, HALF, 0, NO_LIMIT, true, false},           \
  {ACTX_EP_FAST_GELU_BIAS, HALF, 0, NO_LIMIT, true, false},      \
  {ACTX_EP_QUICK_GELU, HALF, 0, NO_LIMIT, true, false},          \
  {ACTX_EP_SILU, HALF, 0, NO_LIMIT, true, false},                \
  {ACTX_EP_TANH, HALF, 0, NO_LIMIT, true, false},                \
  {ACTX_EP_SIGMOID, HALF, 0, NO_LIMIT, true, false}

/* Rows of one (kind, dtype) never overlap; sizes no row covers are declined. */
static const actx_ep_policy_row avx2_table[] = {
    /* float32. Erf: the same arithmetic as MLAS and the same split; 0.94-1.05 everywhere. */
    {ACTX_EP_ERF, F32, 0, NO_LIMIT, false, false},
    /* The GELU family: ~1.00 up to 1024 elements (the per-node cost eats the faster kernel),
     * >= 1.07 from 2048, 1.2-1.7 from 16 Ki. */
    {ACTX_EP_GELU, F32, 0, 2048, false, PER_NODE},
    {ACTX_EP_GELU, F32, 2048, NO_LIMIT, true, false},
    {ACTX_EP_GELU_TANH, F32, 0, 2048, false, PER_NODE},
    {ACTX_EP_GELU_TANH, F32, 2048, NO_LIMIT, true, false},
    {ACTX_EP_MS_GELU, F32, 0, 2048, false, PER_NODE},
    {ACTX_EP_MS_GELU, F32, 2048, NO_LIMIT, true, false},
    {ACTX_EP_FAST_GELU, F32, 0, 2048, false, PER_NODE},
    {ACTX_EP_FAST_GELU, F32, 2048, NO_LIMIT, true, false},
    {ACTX_EP_QUICK_GELU, F32, 0, 2048, false, PER_NODE},
    {ACTX_EP_QUICK_GELU, F32, 2048, NO_LIMIT, true, false},
    /* SiLU (ORT's FMA3 MlasComputeSilu): the exported x*Sigmoid(x), which ORT fuses into it,
     * 1.05-1.39 from 4 Ki */
    {ACTX_EP_SILU, F32, 0, 2048, false, PER_NODE},
    {ACTX_EP_SILU, F32, 2048, NO_LIMIT, true, false},
    /* ORT's bias kernels add the bias in a scalar loop through a temporary: >= 1.07 at 512. */
    {ACTX_EP_BIAS_GELU, F32, 0, NO_LIMIT, true, false},
    {ACTX_EP_FAST_GELU_BIAS, F32, 0, NO_LIMIT, true, false},
    /* Tanh, Sigmoid: the same arithmetic; below 16 Ki the per-node cost loses (0.95-1.02);
     * from 16 Ki 1.07-1.18. At 1 Mi Tanh is memory-bound and ties (1.08 / 1.02). */
    {ACTX_EP_TANH, F32, 0, 16384, false, PER_NODE},
    {ACTX_EP_TANH, F32, 16384, 1048576, true, false},
    {ACTX_EP_TANH, F32, 1048576, NO_LIMIT, false, PER_NODE},
    {ACTX_EP_SIGMOID, F32, 0, 16384, false, PER_NODE},
    {ACTX_EP_SIGMOID, F32, 16384, NO_LIMIT, true, false},
    HALF_ROWS,
};

/* Measured on an AMD EPYC Zen 4 (AVX-512 F/BW/DQ/VL, 512-bit operations in two 256-bit halves). */
static const actx_ep_policy_row avx512_table[] = {
    /* Erf: ORT's AVX-512F kernel, the same arithmetic, as fast as ours (0.95-1.13 per node;
     * 0.96-0.97 at 1 Mi in `make bench`) */
    {ACTX_EP_ERF, F32, 0, NO_LIMIT, false, false},
    /* Gelu, ms.Gelu: ORT's AVX-512F kernels are as fast as ours in cache (0.95-1.09 up to
     * 256 Ki at 1 thread); from 1 Mi 1.11-1.19 per node on 1 and 2 threads */
    {ACTX_EP_GELU, F32, 0, 1048576, false, false},
    {ACTX_EP_GELU, F32, 1048576, NO_LIMIT, true, false},
    {ACTX_EP_MS_GELU, F32, 0, 1048576, false, false},
    {ACTX_EP_MS_GELU, F32, 1048576, NO_LIMIT, true, false},
    /* SiLU: ORT's AVX-512F kernel; 1.11 per node at 1 Mi, but the exported x*Sigmoid(x) at
     * 1 Mi in `make bench` 0.90-0.94 */
    {ACTX_EP_SILU, F32, 0, NO_LIMIT, false, false},
    /* tanh GELU and QuickGelu keep ORT's 8-wide kernels: 1.08-1.19 at 2 Ki, up to 1.9 later */
    {ACTX_EP_GELU_TANH, F32, 0, 2048, false, PER_NODE},
    {ACTX_EP_GELU_TANH, F32, 2048, NO_LIMIT, true, false},
    {ACTX_EP_FAST_GELU, F32, 0, 2048, false, PER_NODE},
    {ACTX_EP_FAST_GELU, F32, 2048, NO_LIMIT, true, false},
    {ACTX_EP_QUICK_GELU, F32, 0, 2048, false, PER_NODE},
    {ACTX_EP_QUICK_GELU, F32, 2048, NO_LIMIT, true, false},
    /* bias kernels: 1.09-1.12 at 512 */
    {ACTX_EP_BIAS_GELU, F32, 0, NO_LIMIT, true, false},
    {ACTX_EP_FAST_GELU_BIAS, F32, 0, NO_LIMIT, true, false},
    /* Tanh 1.05-1.06 at 8 Ki, 1.07-1.11 from 16 Ki; Sigmoid 1.07-1.08 at 8 Ki, 1.10-1.48 on */
    {ACTX_EP_TANH, F32, 0, 16384, false, PER_NODE},
    {ACTX_EP_TANH, F32, 16384, NO_LIMIT, true, false},
    {ACTX_EP_SIGMOID, F32, 0, 8192, false, PER_NODE},
    {ACTX_EP_SIGMOID, F32, 8192, NO_LIMIT, true, false},
    HALF_ROWS,
};

/* ARM64, float32: the kinds ORT runs in several passes, from 16 Ki; open sizes below are
 * PER_NODE (a node's fixed cost is all they can lose) */
#define ARM64_MULTI_PASS(kind) \
  {kind, F32, 0, 16384, false, PER_NODE}, {kind, F32, 16384, NO_LIMIT, true, false}
#define ARM64_F32_ROWS                                                                        \
  {ACTX_EP_ERF, F32, 0, NO_LIMIT, false, false}, {ACTX_EP_TANH, F32, 0, NO_LIMIT, false, false}, \
  {ACTX_EP_SIGMOID, F32, 0, NO_LIMIT, false, false}, ARM64_MULTI_PASS(ACTX_EP_GELU),           \
  ARM64_MULTI_PASS(ACTX_EP_GELU_TANH), ARM64_MULTI_PASS(ACTX_EP_MS_GELU),                      \
  ARM64_MULTI_PASS(ACTX_EP_BIAS_GELU), ARM64_MULTI_PASS(ACTX_EP_FAST_GELU),                    \
  ARM64_MULTI_PASS(ACTX_EP_FAST_GELU_BIAS), ARM64_MULTI_PASS(ACTX_EP_QUICK_GELU),              \
  ARM64_MULTI_PASS(ACTX_EP_SILU)

/* A core without FP16 arithmetic: ORT runs float16 through float32, as on x86. */
static const actx_ep_policy_row arm64_table[] = {ARM64_F32_ROWS, HALF_ROWS};

/* With FP16 arithmetic: float16 stays ORT's, bfloat16 (ORT has no kernel) is ours. */
#define F16 (1u << ACTX_F16)
#define BF16 (1u << ACTX_BF16)
#define FP16_CORE_ROWS(kind) \
  {kind, F16, 0, NO_LIMIT, false, false}, {kind, BF16, 0, NO_LIMIT, true, false}
static const actx_ep_policy_row arm64_fp16_table[] = {
    ARM64_F32_ROWS,
    FP16_CORE_ROWS(ACTX_EP_ERF),          FP16_CORE_ROWS(ACTX_EP_GELU),
    FP16_CORE_ROWS(ACTX_EP_GELU_TANH),    FP16_CORE_ROWS(ACTX_EP_MS_GELU),
    FP16_CORE_ROWS(ACTX_EP_BIAS_GELU),    FP16_CORE_ROWS(ACTX_EP_FAST_GELU),
    FP16_CORE_ROWS(ACTX_EP_FAST_GELU_BIAS), FP16_CORE_ROWS(ACTX_EP_QUICK_GELU),
    FP16_CORE_ROWS(ACTX_EP_SILU),         FP16_CORE_ROWS(ACTX_EP_TANH),
    FP16_CORE_ROWS(ACTX_EP_SIGMOID),
};

#define TABLE(t) (*n_rows = sizeof t / sizeof t[0], t)

const actx_ep_policy_row *actx_ep_policy_table(size_t *n_rows) {
  if (actx_get_ort_rule() == ACTX_ORT_RULE_ARM64)
    return actx_ort_has_fp16_kernels() ? TABLE(arm64_fp16_table) : TABLE(arm64_table);
  if (actx_get_ort_rule() == ACTX_ORT_RULE_AVX512) {
    *n_rows = sizeof avx512_table / sizeof avx512_table[0];
    return avx512_table;
  }
  *n_rows = sizeof avx2_table / sizeof avx2_table[0];
  return avx2_table;
}

bool actx_ep_policy_auto_claims(actx_ep_kind kind, actx_dtype dtype, int64_t elements,
                                int64_t min_elements) {
  bool any = false, all = true;
  size_t n_rows = 0;
  const actx_ep_policy_row *table = actx_ep_policy_table(&n_rows);
  for (size_t i = 0; i < n_rows; i++) {
    const actx_ep_policy_row *r = &table[i];
    if (r->kind != kind || !(r->dtype_mask & (1u << dtype))) continue;
    if (elements >= 0) {
      if (elements >= r->min_elements && elements < r->max_elements) return r->claim;
      continue;
    }
    if (r->max_elements <= min_elements) continue; /* below the lower bound */
    any = any || r->claim;
    all = all && (r->claim || r->per_node_cost);
  }
  /* a size known only at run time: claimed where some size it can have is and at every other
   * our kernel loses no more than a node's fixed cost */
  return elements < 0 && any && all;
}
