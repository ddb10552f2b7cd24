/* The op list: every op libactx computes and its facts, in actx_op order. The kernel
 * declarations and the dispatch table (kernels.h, dispatch.c), the names (api.c), the argument
 * checks (plan.c), the float16 / bfloat16 tables (lut.c) and the tests' and benchmarks' op loops are
 * all generated from it.
 *
 * X(name, ACTX_OP_ enum, family, bias, alpha, table)
 *   family  the body it is built on: src/kernels/<family>.h
 *   bias    takes a bias added before the op (BiasGelu, FastGelu)
 *   alpha   takes a parameter (QuickGelu's alpha)
 *   table   float16 / bfloat16 without a bias run from a table of all 65,536 results: in ORT
 *           sessions a lookup beat these kernels and lost to the others (docs/ep-policy.md,
 *           "float16 and bfloat16 tables"); an op with a parameter has one only at the value
 *           ACTX_LUT_ALPHA (QuickGelu at 1: SiLU, the one exporters write) */
#ifndef ACTX_OPS_H
#define ACTX_OPS_H

#include "actx.h"

#define ACTX_OPS(X)                                              \
  X(erf, ACTX_OP_ERF, erf, 0, 0, 1)                              \
  X(gelu, ACTX_OP_GELU, erf, 1, 0, 1)                            \
  X(gelu_tanh, ACTX_OP_GELU_TANH, tanh, 1, 0, 1)                 \
  X(quick_gelu, ACTX_OP_QUICK_GELU, logistic, 0, 1, 1)           \
  X(tanh, ACTX_OP_TANH, tanh, 0, 0, 0)                           \
  X(sigmoid, ACTX_OP_SIGMOID, logistic, 0, 0, 0)

/* The list is in actx_op order and complete. */
#define ACTX_OP_POSITION_(name, e, ...) actx_op_position_##name,
enum { ACTX_OPS(ACTX_OP_POSITION_) actx_op_list_length_ };
#define ACTX_OP_IN_ORDER_(name, e, ...) \
  _Static_assert((int)actx_op_position_##name == (int)(e), #e " is at its place in ACTX_OPS");
ACTX_OPS(ACTX_OP_IN_ORDER_)
_Static_assert((int)actx_op_list_length_ == (int)ACTX_OP_COUNT, "ACTX_OPS lists every actx_op");
#undef ACTX_OP_POSITION_
#undef ACTX_OP_IN_ORDER_

#define ACTX_OP_FACT_BIAS_(name, e, fam, bias, alpha, table) [e] = bias,
#define ACTX_OP_FACT_ALPHA_(name, e, fam, bias, alpha, table) [e] = alpha,
#define ACTX_OP_FACT_TABLE_(name, e, fam, bias, alpha, table) [e] = table,
#define ACTX_OP_FACT_NAME_(name, e, ...) [e] = #name,
static const char actx_op_takes_bias[ACTX_OP_COUNT] = {ACTX_OPS(ACTX_OP_FACT_BIAS_)};
static const char actx_op_takes_alpha[ACTX_OP_COUNT] = {ACTX_OPS(ACTX_OP_FACT_ALPHA_)};
static const char actx_op_has_table[ACTX_OP_COUNT] = {ACTX_OPS(ACTX_OP_FACT_TABLE_)};
static const char *const actx_op_names[ACTX_OP_COUNT] = {ACTX_OPS(ACTX_OP_FACT_NAME_)};
#undef ACTX_OP_FACT_BIAS_
#undef ACTX_OP_FACT_ALPHA_
#undef ACTX_OP_FACT_TABLE_
#undef ACTX_OP_FACT_NAME_

#endif /* ACTX_OPS_H */
