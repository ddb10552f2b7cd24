/* The op variants every kernel test walks, generated from the op list (src/ops.h): each op; an
 * op with a bias also with bias rows of several lengths; an op with a parameter at several
 * QuickGelu alphas (1 is ORT's SiLU, which the ORT rule changes). And what each ORT rule means
 * for a variant, written down here from include/actx.h rather than taken from src/, so that the
 * tests check the library's reading of the rule. */
#ifndef ACTX_TEST_CASES_H
#define ACTX_TEST_CASES_H

#include "../../src/kernels.h"
#include "../../src/ops.h"
#include "actx.h"

typedef struct test_case {
  const char *name;
  actx_op op;
  size_t bias_len; /* 0: no bias */
  float alpha;
} test_case;

/* X(name, enum, family, bias, alpha, table) of ACTX_OPS -> the op's variants */
#define TEST_CASE_BIAS_0_(name, e)
#define TEST_CASE_BIAS_1_(name, e)                                                       \
  {#name "+bias(h=768)", e, 768, 0.0f}, {#name "+bias(h=7)", e, 7, 0.0f},               \
      {#name "+bias(h=1)", e, 1, 0.0f},
#define TEST_CASE_ALPHA_0_(name, e) {#name, e, 0, 0.0f},
#define TEST_CASE_ALPHA_1_(name, e) \
  {#name "(1.702)", e, 0, 1.702f}, {#name "(1)", e, 0, 1.0f}, {#name "(-0.5)", e, 0, -0.5f},
#define TEST_CASES_OF_OP_(name, e, family, bias, alpha, table) \
  TEST_CASE_ALPHA_##alpha##_(name, e) TEST_CASE_BIAS_##bias##_(name, e)

static const test_case test_cases[] = {ACTX_OPS(TEST_CASES_OF_OP_)};
#define TEST_CASE_COUNT (sizeof test_cases / sizeof test_cases[0])

#undef TEST_CASE_BIAS_0_
#undef TEST_CASE_BIAS_1_
#undef TEST_CASE_ALPHA_0_
#undef TEST_CASE_ALPHA_1_
#undef TEST_CASES_OF_OP_

static inline actx_op_desc case_desc(const test_case *c, actx_dtype dt, const void *bias) {
  actx_op_desc d = {.op = c->op, .dtype = dt, .alpha = c->alpha};
  if (c->bias_len) {
    d.bias = bias;
    d.bias_len = c->bias_len;
  }
  return d;
}

/* ---- the ORT rules ----------------------------------------------------------------------- */

/* On an AVX-512F host ORT runs exact Gelu without a bias and SiLU (QuickGelu at alpha 1) with
 * kernels that return a NaN input unchanged, signalling bit and all (a bias is added first,
 * which already makes a NaN quiet, so BiasGelu keeps its FMA3 behaviour). */
static inline int rule_keeps_nan(actx_ort_rule rule, actx_op op, float alpha, int has_bias) {
  if (rule != ACTX_ORT_RULE_AVX512) return 0;
  return (op == ACTX_OP_GELU && !has_bias) || (op == ACTX_OP_QUICK_GELU && alpha == 1.0f);
}
/* ... and its SiLU also clamps the logistic to at most 1, as ORT arm64's every logistic does. */
static inline int rule_clamps_one(actx_ort_rule rule, actx_op op, float alpha) {
  if (rule == ACTX_ORT_RULE_ARM64) return op == ACTX_OP_SIGMOID || op == ACTX_OP_QUICK_GELU;
  return rule == ACTX_ORT_RULE_AVX512 && op == ACTX_OP_QUICK_GELU && alpha == 1.0f;
}

/* ORT's arm64 build contracts tanh GELU's pre-pass C * v * v + B into one fma. */
static inline int rule_fuses_tanh_prepass(actx_ort_rule rule, actx_op op) {
  return rule == ACTX_ORT_RULE_ARM64 && op == ACTX_OP_GELU_TANH;
}

/* The parameters a kernel called directly needs to compute d under rule, as actx_compute would
 * (bias excepted: a kernel takes n bias elements, so the caller sets it). */
static inline actx_kernel_params rule_params(actx_ort_rule rule, const actx_op_desc *d) {
  const actx_kernel_params p = {
      .bias = NULL,
      .alpha = d->alpha,
      .keep_nan = rule_keeps_nan(rule, d->op, d->alpha, d->bias != NULL || d->bias_len != 0),
      .clamp_one = rule_clamps_one(rule, d->op, d->alpha),
      .fused_tanh_prepass = rule_fuses_tanh_prepass(rule, d->op),
  };
  return p;
}

#endif /* ACTX_TEST_CASES_H */
