/* Exported activation subgraphs fused into one actx node.
 *
 * usage: test_ep_fusion <absolute path of libactx_ep.so>
 *
 * For every variant of the exact GELU, tanh GELU, SiLU and QuickGelu subgraphs (operand orders,
 * Div √2 or Mul 1/√2, Pow or x·x·x, each placement of the 0.5 or a / 2, x from a Mul, with and
 * without a bias Add, the bias an initializer or an input, a Gelu node after a bias Add) and for
 * near misses (a wrong constant, one within ORT's tolerance but not float32's, an intermediate
 * consumed elsewhere or a graph output, a 2-D bias), in float32 on [64, 1024]:
 *   - ORT alone fuses it (its optimised graph has fewer nodes) exactly when the EP says ORT would
 *     (ep/ort_fusions.c), so the EP's idea of "bit-identical to ORT" is checked against ORT;
 *   - policy all: the variants ORT fuses run as one node on actx, with libactx's bits; the
 *     others it recognises are left to ORT like the near misses (one kernel would round, and
 *     overflow, differently from ORT's unfused nodes);
 *   - policy auto: the same, where the table says our kernel is faster; either way the output
 *     is ORT alone's, bit for bit;
 *   - a near miss is not fused, and its output is ORT's under auto.
 * float16 and bfloat16: both policies leave float16 to ORT (its output is then ORT's) but for a
 * Gelu node after a bias Add, and fuse bfloat16 (ORT has no kernels for it). A smaller tensor
 * checks that auto leaves a subgraph ORT fuses to ORT where the table says ORT's kernel wins,
 * and a model with symbolic dimensions checks the fused node with shapes known at run time. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "actx.h"
#include "actx_ep.h"
#include "ep_test.h"
#include "pattern_models.h"

/* [64, 1024]: 64 Ki elements, where the `auto` table claims every GELU kind, and large enough
 * to be split over ORT's pool with 2 threads. */
#define ROWS 64
#define COLS 1024

typedef struct variant {
  ep_pattern_spec spec;
  bool match;      /* the EP recognises it (policy all fuses it) */
  bool bias_fused; /* ... including the bias Add */
  bool ort_fuses;  /* ORT alone fuses it into one kernel (then auto fuses it too) */
  size_t on_actx;  /* nodes of the fused group when they are not the model's p<k> (opset 20:
                      ORT's level-1 GeluFusion already made one Gelu of the five); 0: p<k> */
} variant;

static actx_dtype dtype_of(int32_t elem_type) {
  return elem_type == ACTX_ELEM_FLOAT16    ? ACTX_F16
         : elem_type == ACTX_ELEM_BFLOAT16 ? ACTX_BF16
                                           : ACTX_F32;
}

/* The ORT kernel the subgraph amounts to, as the EP's policy table names it. */
static actx_ep_kind fused_kind(const ep_pattern_spec *s, bool bias) {
  switch (s->family) {
    case EP_PATTERN_ERF_GELU: return bias ? ACTX_EP_BIAS_GELU : ACTX_EP_MS_GELU;
    case EP_PATTERN_TANH_GELU: return bias ? ACTX_EP_FAST_GELU_BIAS : ACTX_EP_FAST_GELU;
    case EP_PATTERN_GELU_NODE:
      return strstr(s->gelu_op, "tanh") || strstr(s->gelu_op, "Fast") ? ACTX_EP_FAST_GELU_BIAS
                                                                      : ACTX_EP_BIAS_GELU;
    case EP_PATTERN_SILU: return ACTX_EP_SILU;
    default: return s->alpha == 1.0f ? ACTX_EP_SILU : ACTX_EP_QUICK_GELU;
  }
}

/* How many nodes run on actx, and how many of them are pattern nodes (named p<k>). In a
 * bfloat16 model (group_only) only those of the fused group, the one compiled node holding the
 * pattern's activation: the bfloat16 service (ep/bf16_claim.c) runs the nodes left around it,
 * one by one or as a chain of element-wise nodes (ep/bf16_chain.c), which is no GELU. */
typedef struct placement {
  size_t on_actx, pattern_on_actx;
} placement;

static bool is_activation(const char *op_type) {
  static const char *const ops[] = {"Erf", "Tanh", "Sigmoid", "Gelu", "FastGelu", "BiasGelu",
                                    "QuickGelu"};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (strcmp(op_type, ops[i]) == 0) return true;
  return false;
}

static void placement_of(const actx_ort_session *s, bool group_only, placement *p) {
  memset(p, 0, sizeof *p);
  actx_ort_assignment *list = NULL;
  size_t n = 0;
  actx_ort_error err;
  if (actx_ort_session_assignments(s, &list, &n, &err) != 0) {
    CHECK(false, "assignments: %s", err.message);
    return;
  }
  /* the largest of actx's subgraphs with an activation in it (a subgraph's nodes are listed
   * together) */
  size_t group = SIZE_MAX, group_size = 0;
  for (size_t i = 0; group_only && i < n;) {
    size_t end = i, size = 0;
    bool activation = false;
    for (; end < n && list[end].subgraph == list[i].subgraph; end++, size++)
      activation |= is_activation(list[end].op_type);
    if (strcmp(list[i].ep_name, "actx") == 0 && activation && size > group_size) {
      group_size = size;
      group = list[i].subgraph;
    }
    i = end;
  }
  for (size_t i = 0; i < n; i++) {
    if (strcmp(list[i].ep_name, "actx") != 0) continue;
    if (group_only && list[i].subgraph != group) continue;
    p->on_actx++;
    p->pattern_on_actx +=
        list[i].node_name[0] == 'p' && list[i].node_name[1] >= '0' && list[i].node_name[1] <= '9';
  }
  free(list);
}

/* How two float32 results differ: elements whose bits differ (NaNs equal); of those, how many
 * differ in kind (one infinite or NaN) or are both tiny (below 1e-6 in magnitude, the far
 * negative tail of GELU, where the two roundings even disagree on the sign), and the largest
 * distance in units in the last place among the rest. */
#define TINY_RESULT 1e-6f
typedef struct difference {
  size_t differing, nonfinite, tiny;
  uint32_t max_ulp;
  double max_abs; /* largest |a - b| among finite pairs */
} difference;

static void compare_floats(const float *a, const float *b, size_t n, difference *d) {
  memset(d, 0, sizeof *d);
  for (size_t i = 0; i < n; i++) {
    if ((isnan(a[i]) && isnan(b[i])) || memcmp(&a[i], &b[i], sizeof a[i]) == 0) continue;
    d->differing++;
    if (!isfinite(a[i]) || !isfinite(b[i])) {
      d->nonfinite++;
      continue;
    }
    const double abs_diff = fabs((double)a[i] - (double)b[i]);
    if (abs_diff > d->max_abs) d->max_abs = abs_diff;
    if (fabsf(a[i]) < TINY_RESULT && fabsf(b[i]) < TINY_RESULT) {
      d->tiny++;
      continue;
    }
    int32_t ia, ib;
    memcpy(&ia, &a[i], 4);
    memcpy(&ib, &b[i], 4);
    if (ia < 0) ia = INT32_MIN - ia;
    if (ib < 0) ib = INT32_MIN - ib;
    const int64_t diff = (int64_t)ia - (int64_t)ib;
    const uint64_t ulp = (uint64_t)(diff < 0 ? -diff : diff);
    if (ulp > d->max_ulp) d->max_ulp = ulp > UINT32_MAX ? UINT32_MAX : (uint32_t)ulp;
  }
}

/* First element where two float32 arrays differ in bits, any NaN equal to any NaN; -1 if none.
 * For a reference that adds x and bias itself: which of two NaNs ORT's Add keeps is its own. */
static long first_difference_nan_equal(const float *a, const float *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!(isnan(a[i]) && isnan(b[i])) && memcmp(&a[i], &b[i], sizeof a[i]) != 0) return (long)i;
  return -1;
}

/* Runs one session; NULL (after a CHECK) on failure. */
static void *run(const ep_pattern_model *pm, const char *policy, int threads, int32_t elem_type,
                 const void *x, size_t rank, const int64_t *dims, const void *bias,
                 size_t bias_rank, const int64_t *bias_dims, placement *where, const char *label,
                 bool must_work) {
  const ep_session_spec spec = {.policy = policy, .threads = threads};
  actx_ort_session *s = NULL;
  actx_ort_error err;
  if (where != NULL) memset(where, 0, sizeof *where);
  if (ep_session_create(pm->bytes, pm->size, &spec, &s, &err) != 0) {
    CHECK(!must_work, "%s, policy %s: session: %s", label, policy ? policy : "ORT alone",
          err.message);
    return NULL;
  }
  if (where != NULL) placement_of(s, elem_type == ACTX_ELEM_BFLOAT16, where);
  size_t bytes = 0;
  void *y = ep_run(s, elem_type, x, rank, dims, bias, bias_rank, bias_dims, &bytes);
  CHECK(y != NULL, "%s, policy %s: run", label, policy ? policy : "ORT alone");
  actx_ort_session_free(s);
  return y;
}

static size_t g_variants, g_exact, g_fused_other;

static void check_variant(const variant *v, int32_t elem_type, size_t rows, bool symbolic,
                          uint64_t seed) {
  ep_pattern_spec spec = v->spec;
  spec.elem_type = elem_type;
  spec.rank = 2;
  spec.dims[0] = symbolic ? -1 : (int64_t)rows;
  spec.dims[1] = COLS;
  char label[256];
  ep_pattern_describe(&spec, label, sizeof label);
  if (symbolic) strncat(label, ", symbolic rows", sizeof label - strlen(label) - 1);
  ep_pattern_model pm;
  if (ep_pattern_build(&spec, seed, &pm) != 0) {
    CHECK(false, "%s: model", label);
    return;
  }
  g_variants++;
  const int64_t dims[2] = {(int64_t)rows, COLS};
  const size_t n = rows * COLS, es = actx_elem_size(elem_type);
  void *x = malloc(n * es);
  ep_fill_inputs(elem_type, x, n, seed);
  /* a bias fed at run time */
  void *bias = NULL;
  size_t bias_rank = 0;
  int64_t bias_dims[2] = {COLS, COLS};
  if (spec.bias && spec.bias_input) {
    bias_rank = spec.bias_rank ? spec.bias_rank : 1;
    if (bias_rank == 2) bias_dims[0] = 1;
    bias = malloc(COLS * es);
    ep_fill_bias(elem_type, bias, COLS, seed ^ 0xb1a5);
  }
  const void *bias_values = bias != NULL ? bias : pm.bias;

  /* what libactx computes for the fused subgraph */
  const bool bias_in_fusion = v->match && v->bias_fused && spec.bias;
  void *want = malloc(n * es);
  const void *x_for_ref = x;
  float *scaled = NULL;
  if (spec.x_from_mul || (spec.bias && !bias_in_fusion)) {
    /* float32 only: the pattern's input is 2·x (exact), or x + bias added by ORT's Add */
    scaled = malloc(n * sizeof *scaled);
    for (size_t i = 0; i < n; i++) {
      float value = ((const float *)x)[i];
      if (spec.x_from_mul) value *= 2.0f;
      if (spec.bias && !bias_in_fusion) value += ((const float *)bias_values)[i % COLS];
      scaled[i] = value;
    }
    x_for_ref = scaled;
  }
  const actx_op_desc desc = {.op = pm.op,
                             .dtype = dtype_of(elem_type),
                             .alpha = pm.alpha,
                             .bias = bias_in_fusion ? bias_values : NULL,
                             .bias_len = bias_in_fusion ? COLS : 0};
  const actx_status ast = actx_compute(&desc, x_for_ref, want, n, NULL);
  CHECK(ast == ACTX_OK, "%s: actx_compute: %s", label, actx_status_string(ast));
  if (spec.y_through_neg) /* ORT's Neg flips the sign bit, of NaNs too */
    for (size_t i = 0; i < n; i++) {
      if (es == 4)
        ((uint32_t *)want)[i] ^= 0x80000000u;
      else
        ((uint16_t *)want)[i] ^= 0x8000u;
    }

  /* ORT alone: its output, and whether its fusions made one kernel of the subgraph */
  void *ort = run(&pm, NULL, 1, elem_type, x, 2, dims, bias, bias_rank, bias_dims, NULL, label,
                  elem_type != ACTX_ELEM_BFLOAT16);
  if (elem_type == ACTX_ELEM_FLOAT && !symbolic) {
    size_t n_nodes = 0;
    actx_ort_error err;
    const int rc = ep_optimized_node_count(pm.bytes, pm.size, NULL, "ep_fusion_optimized.onnx",
                                           &n_nodes, &err);
    CHECK(rc == 0, "%s: optimised model: %s", label, err.message);
    const bool ort_fused = rc == 0 && n_nodes < pm.n_nodes;
    CHECK(ort_fused == v->ort_fuses, "%s: ORT alone %s it (%zu of %zu nodes left)", label,
          ort_fused ? "fuses" : "does not fuse", n_nodes, pm.n_nodes);
  }

  /* the subgraph as the EP should take it */
  const size_t fused_nodes = pm.n_pattern_nodes - (spec.bias && !v->bias_fused ? 1 : 0);
  const bool exact = elem_type == ACTX_ELEM_FLOAT && v->match && v->ort_fuses;
  /* auto takes what ORT fuses into the same bits, any bfloat16 subgraph, and a float16 Gelu node
   * after a bias Add (ORT runs the pair as one float32 island: docs/ep-policy.md) */
  const bool half_gelu_node = elem_type == ACTX_ELEM_FLOAT16 &&
                              spec.family == EP_PATTERN_GELU_NODE && spec.bias && bias_in_fusion;
  const bool all_fuses = v->match && (exact || elem_type == ACTX_ELEM_BFLOAT16 || half_gelu_node);
  const bool auto_fuses =
      all_fuses &&
      actx_ep_policy_auto_claims(fused_kind(&spec, bias_in_fusion), dtype_of(elem_type),
                                 symbolic ? -1 : (int64_t)n, symbolic ? COLS : (int64_t)n);
  g_exact += exact;
  for (int threads = 1; threads <= 2; threads++) {
    placement all_at, auto_at;
    /* a bfloat16 model runs only where we take all of it */
    const bool must_work = v->match || elem_type != ACTX_ELEM_BFLOAT16;
    void *all = run(&pm, "all", threads, elem_type, x, 2, dims, bias, bias_rank, bias_dims, &all_at,
                    label, must_work);
    void *aut = run(&pm, "auto", threads, elem_type, x, 2, dims, bias, bias_rank, bias_dims,
                    &auto_at, label, must_work);
    if (all_fuses) {
      if (v->on_actx)
        CHECK(all_at.on_actx == v->on_actx, "%s, all: %zu nodes on actx, want %zu", label,
              all_at.on_actx, v->on_actx);
      else
        CHECK(all_at.pattern_on_actx == fused_nodes,
              "%s, all: %zu of the %zu pattern nodes on actx", label, all_at.pattern_on_actx,
              fused_nodes);
      if (all != NULL) {
        const long at = scaled != NULL && spec.bias && !bias_in_fusion
                            ? first_difference_nan_equal(all, want, n) * (long)es
                            : ep_first_difference(all, want, n * es);
        CHECK(at < 0, "%s, all, %d threads: element %ld differs from libactx", label, threads,
              at / (long)es);
      }
    } else {
      /* a near miss, or a spelling ORT runs unfused: at most a lone node of it runs on actx */
      CHECK(all_at.pattern_on_actx <= 1, "%s, all: %zu pattern nodes on actx (not fused)", label,
            all_at.pattern_on_actx);
    }
    if (auto_fuses && v->on_actx) {
      CHECK(auto_at.on_actx == v->on_actx, "%s, auto: %zu nodes on actx, want %zu", label,
            auto_at.on_actx, v->on_actx);
    } else if (auto_fuses) {
      CHECK(auto_at.pattern_on_actx == fused_nodes, "%s, auto: %zu of %zu pattern nodes on actx",
            label, auto_at.pattern_on_actx, fused_nodes);
    } else {
      CHECK(auto_at.pattern_on_actx <= 1, "%s, auto: %zu pattern nodes on actx", label,
            auto_at.pattern_on_actx);
    }
    /* auto gives ORT's bits wherever ORT runs the model. float16: ORT computes a float16
     * subgraph as a float32 island; auto leaves that to ORT, but may still take a lone node
     * of it (the table claims every float16 node), which rounds differently: compared only
     * when auto took nothing. */
    if (ort != NULL && aut != NULL && (elem_type == ACTX_ELEM_FLOAT || auto_at.on_actx == 0)) {
      const long at = ep_first_difference(aut, ort, n * es);
      CHECK(at < 0, "%s, auto, %d threads: element %ld differs from ORT alone", label, threads,
            at / (long)es);
    }
    if (aut != NULL && auto_fuses && ort == NULL) {
      const long at = ep_first_difference(aut, want, n * es);
      CHECK(at < 0, "%s, auto, %d threads: element %ld differs from libactx", label, threads,
            at / (long)es);
    }
    if (threads == 1) {
      const char *vs = "";
      char diff[128] = "";
      if (all_fuses && all != NULL && ort != NULL) {
        if (exact) {
          vs = "ORT's bits";
        } else if (elem_type == ACTX_ELEM_FLOAT) {
          difference d;
          compare_floats(all, ort, n, &d);
          snprintf(diff, sizeof diff,
                   "vs ORT's nodes: %zu differ (%zu inf/NaN, %zu tiny), others <= %u ulp, "
                   "|diff| <= %.2g",
                   d.differing, d.nonfinite, d.tiny, d.max_ulp, d.max_abs);
          vs = diff;
          g_fused_other++;
        } else {
          const long at = ep_first_difference(all, ort, n * es);
          vs = at < 0 ? "ORT's bits" : "differs from ORT's float32 island";
          g_fused_other++;
        }
      }
      printf("  %-92s ORT %s | auto %zu, all %zu on actx %s\n", label,
             ort == NULL    ? "cannot run it"
             : v->ort_fuses ? "fuses"
                            : "unfused",
             auto_at.pattern_on_actx, all_at.pattern_on_actx, vs);
    }
    free(all);
    free(aut);
  }
  free(ort);
  free(want);
  free(scaled);
  free(x);
  free(bias);
  ep_pattern_model_free(&pm);
}

#define ERF EP_PATTERN_ERF_GELU
#define TANH EP_PATTERN_TANH_GELU

/* float32: every spelling, and the near misses. */
static void test_float32(void) {
  printf("float32 variants:\n");
  uint64_t seed = 1;
  /* exact GELU: ORT fuses Div(√2) with the 0.5 on x or on the product, in any operand order */
  for (int scale = 0; scale < 3; scale++)
    for (int half = 0; half <= EP_HALF_DIV_TWO; half++)
      for (int swap = 0; swap < 2; swap++) {
        const variant v = {.spec = {.family = ERF,
                                    .erf_scale = (ep_erf_scale)scale,
                                    .half = (ep_half_place)half,
                                    .swap = swap},
                           .match = true,
                           .bias_fused = true,
                           .ort_fuses = scale != EP_ERF_MUL_RSQRT2 &&
                                        (half == EP_HALF_X_FIRST || half == EP_HALF_LAST)};
        check_variant(&v, ACTX_ELEM_FLOAT, ROWS, false, seed++);
      }
  /* ORT misses (x·f)·0.5 when x is itself a Mul's output; 0.5·x first it still finds */
  for (int half = 0; half < 2; half++) {
    const variant v = {.spec = {.family = ERF, .half = (ep_half_place)half, .x_from_mul = true},
                       .match = true,
                       .bias_fused = true,
                       .ort_fuses = half == EP_HALF_X_FIRST};
    check_variant(&v, ACTX_ELEM_FLOAT, ROWS, false, seed++);
  }
  /* tanh GELU: ORT fuses the Pow and the "inner" spellings with 0.5·x first, unless the result
   * is a graph output */
  for (int form = 0; form < 3; form++)
    for (int half = 0; half <= EP_HALF_DIV_TWO; half++)
      for (int neg = 0; neg < 2; neg++) {
        const variant v = {.spec = {.family = TANH,
                                    .tanh_form = (ep_tanh_form)form,
                                    .half = (ep_half_place)half,
                                    .swap = (form + half) % 2,
                                    .y_through_neg = neg},
                           .match = true,
                           .bias_fused = true,
                           .ort_fuses = form != EP_TANH_MUL_X3 && half == EP_HALF_X_FIRST && neg};
        check_variant(&v, ACTX_ELEM_FLOAT, ROWS, false, seed++);
      }
  /* SiLU and QuickGelu (any alpha, also 1 spelt as a Mul) */
  for (int swap = 0; swap < 2; swap++) {
    const variant silu = {
        .spec = {.family = EP_PATTERN_SILU, .swap = swap}, .match = true, .ort_fuses = true};
    check_variant(&silu, ACTX_ELEM_FLOAT, ROWS, false, seed++);
    const float alphas[] = {1.702f, -0.625f, 1.0f};
    for (int a = 0; a < 3; a++) {
      const variant quick = {
          .spec = {.family = EP_PATTERN_QUICK_GELU, .swap = swap, .alpha = alphas[a]},
          .match = true,
          .ort_fuses = true};
      check_variant(&quick, ACTX_ELEM_FLOAT, ROWS, false, seed++);
    }
  }
  /* a bias Add before them: BiasGelu / FastGelu with bias */
  for (int first = 0; first < 2; first++)
    for (int input = 0; input < 2; input++) {
      const variant erf = {.spec = {.family = ERF,
                                    .bias = true,
                                    .bias_first = first,
                                    .bias_input = input,
                                    .half = (ep_half_place)input},
                           .match = true,
                           .bias_fused = true,
                           .ort_fuses = true};
      check_variant(&erf, ACTX_ELEM_FLOAT, ROWS, false, seed++);
      const variant tanh = {.spec = {.family = TANH,
                                     .bias = true,
                                     .bias_first = first,
                                     .bias_input = input,
                                     .y_through_neg = true,
                                     .tanh_form = (ep_tanh_form)(2 * input)},
                            .match = true,
                            .bias_fused = true,
                            .ort_fuses = true};
      check_variant(&tanh, ACTX_ELEM_FLOAT, ROWS, false, seed++);
    }
  const variant erf_mul_bias = {
      .spec = {.family = ERF, .bias = true, .erf_scale = EP_ERF_MUL_RSQRT2},
      .match = true,
      .bias_fused = true};
  check_variant(&erf_mul_bias, ACTX_ELEM_FLOAT, ROWS, false, seed++);
  /* a Gelu node after a bias Add (opset 20, and the exported GELU ORT turns into one there) */
  const char *gelus[] = {"Gelu", "Gelu(tanh)", "ms.Gelu", "ms.FastGelu"};
  for (int g = 0; g < 4; g++) {
    const variant v = {.spec = {.family = EP_PATTERN_GELU_NODE,
                                .gelu_op = gelus[g],
                                .opset = 20,
                                .bias = true,
                                .bias_first = g % 2},
                       .match = true,
                       .bias_fused = true,
                       .ort_fuses = true};
    check_variant(&v, ACTX_ELEM_FLOAT, ROWS, false, seed++);
  }
  const variant opset20 = {.spec = {.family = ERF, .opset = 20, .bias = true},
                           .match = true,
                           .bias_fused = true,
                           .ort_fuses = true,
                           .on_actx = 2};
  check_variant(&opset20, ACTX_ELEM_FLOAT, ROWS, false, seed++);

  printf("near misses:\n");
  /* a constant off by 0.1%: neither ORT nor we fuse */
  const ep_pattern_const wrong[] = {EP_CONST_SCALE, EP_CONST_ONE, EP_CONST_HALF};
  for (int w = 0; w < 3; w++) {
    const variant v = {.spec = {.family = ERF, .wrong = wrong[w], .wrong_scale = 1.001}};
    check_variant(&v, ACTX_ELEM_FLOAT, ROWS, false, seed++);
    const variant t = {.spec = {.family = TANH,
                                .wrong = w == 2 ? EP_CONST_CUBIC : wrong[w],
                                .wrong_scale = 1.001,
                                .y_through_neg = true}};
    check_variant(&t, ACTX_ELEM_FLOAT, ROWS, false, seed++);
  }
  /* √2 off by 3e-6: within ORT's tolerance (1e-5) but not float32 rounding: ORT fuses, we
   * leave it (and its Erf) to ORT */
  const variant close = {.spec = {.family = ERF, .wrong = EP_CONST_SCALE, .wrong_scale = 1 + 3e-6},
                         .ort_fuses = true};
  check_variant(&close, ACTX_ELEM_FLOAT, ROWS, false, seed++);
  /* an intermediate consumed elsewhere or a graph output */
  const ep_pattern_family families[] = {ERF, TANH, EP_PATTERN_SILU, EP_PATTERN_QUICK_GELU};
  for (int f = 0; f < 4; f++)
    for (int leak = EP_LEAK_CONSUMER; leak <= EP_LEAK_OUTPUT; leak++) {
      const variant v = {.spec = {.family = families[f],
                                  .leak = (ep_pattern_leak)leak,
                                  .y_through_neg = families[f] == TANH}};
      check_variant(&v, ACTX_ELEM_FLOAT, ROWS, false, seed++);
    }
  /* the bias sum read elsewhere, or a [1, H] bias: the GELU is fused, the Add is not */
  const variant leak_root = {.spec = {.family = ERF, .bias = true, .leak = EP_LEAK_ROOT},
                             .match = true,
                             .ort_fuses = true};
  check_variant(&leak_root, ACTX_ELEM_FLOAT, ROWS, false, seed++);
  const variant bias_2d = {
      .spec = {.family = ERF, .bias = true, .bias_rank = 2}, .match = true, .ort_fuses = true};
  check_variant(&bias_2d, ACTX_ELEM_FLOAT, ROWS, false, seed++);
  const variant bias_2d_input = {.spec = {.family = TANH,
                                          .bias = true,
                                          .bias_rank = 2,
                                          .bias_input = true,
                                          .y_through_neg = true},
                                 .match = true,
                                 .ort_fuses = true};
  check_variant(&bias_2d_input, ACTX_ELEM_FLOAT, ROWS, false, seed++);
}

/* float16 and bfloat16: the main spellings. */
static void test_half(void) {
  static const variant half_variants[] = {
      {.spec = {.family = ERF}, .match = true, .bias_fused = true},
      {.spec = {.family = ERF, .erf_scale = EP_ERF_MUL_RSQRT2, .half = EP_HALF_CDF},
       .match = true,
       .bias_fused = true},
      {.spec = {.family = TANH}, .match = true, .bias_fused = true},
      {.spec = {.family = TANH, .tanh_form = EP_TANH_INNER}, .match = true, .bias_fused = true},
      {.spec = {.family = EP_PATTERN_SILU}, .match = true},
      {.spec = {.family = EP_PATTERN_QUICK_GELU}, .match = true},
      {.spec = {.family = ERF, .bias = true}, .match = true, .bias_fused = true},
      {.spec = {.family = TANH, .bias = true, .bias_input = true},
       .match = true,
       .bias_fused = true},
      {.spec = {.family = EP_PATTERN_GELU_NODE, .gelu_op = "Gelu", .opset = 20, .bias = true},
       .match = true,
       .bias_fused = true},
      {.spec = {.family = ERF, .wrong = EP_CONST_HALF, .wrong_scale = 1.01}},
  };
  const int32_t types[] = {ACTX_ELEM_FLOAT16, ACTX_ELEM_BFLOAT16};
  for (int t = 0; t < 2; t++) {
    printf("%s variants:\n", actx_elem_name(types[t]));
    for (size_t i = 0; i < sizeof half_variants / sizeof half_variants[0]; i++)
      check_variant(&half_variants[i], types[t], ROWS, false, 1000 + 10 * i + t);
  }
}

/* Below 2 Ki elements auto leaves a plain GELU to ORT's fused kernel (the table: ORT's fixed
 * cost per node wins there) but still takes Add + GELU as our BiasGelu. Then symbolic rows. */
static void test_sizes(void) {
  printf("small and symbolic:\n");
  const size_t small_rows = 1; /* 1024 elements */
  const variant plain = {
      .spec = {.family = ERF}, .match = true, .bias_fused = true, .ort_fuses = true};
  const variant bias = {
      .spec = {.family = ERF, .bias = true}, .match = true, .bias_fused = true, .ort_fuses = true};
  check_variant(&plain, ACTX_ELEM_FLOAT, small_rows, false, 501);
  check_variant(&bias, ACTX_ELEM_FLOAT, small_rows, false, 502);
  check_variant(&plain, ACTX_ELEM_FLOAT, ROWS, true, 503);
  check_variant(&bias, ACTX_ELEM_FLOAT, ROWS, true, 504);
  const variant tanh_bias = {.spec = {.family = TANH, .bias = true, .y_through_neg = true},
                             .match = true,
                             .bias_fused = true,
                             .ort_fuses = true};
  check_variant(&tanh_bias, ACTX_ELEM_FLOAT, 3, true, 505);
}

int main(int argc, char **argv) {
  if (ep_test_init(argc, argv) != 0) return 2;
  test_float32();
  test_half();
  test_sizes();
  remove("ep_fusion_optimized.onnx");
  actx_ort_shutdown();
  printf(
      "%zu variants (%zu fused with ORT's bits, %zu fused where ORT runs them otherwise), "
      "%d failures\n",
      g_variants, g_exact, g_fused_other, g_failures);
  return g_failures ? 1 : 0;
}
