/* The op variants every kernel test walks: each actx op, with and without bias, with several
 * QuickGelu alphas. */
#ifndef ACTX_TEST_CASES_H
#define ACTX_TEST_CASES_H

#include "actx.h"

typedef struct test_case {
  const char *name;
  actx_op op;
  size_t bias_len; /* 0: no bias */
  float alpha;
} test_case;

static const test_case test_cases[] = {
    {"erf", ACTX_OP_ERF, 0, 0.0f},
    {"gelu", ACTX_OP_GELU, 0, 0.0f},
    {"bias_gelu(h=768)", ACTX_OP_GELU, 768, 0.0f},
    {"bias_gelu(h=7)", ACTX_OP_GELU, 7, 0.0f},
    {"gelu_tanh", ACTX_OP_GELU_TANH, 0, 0.0f},
    {"fast_gelu(h=768)", ACTX_OP_GELU_TANH, 768, 0.0f},
    {"fast_gelu(h=1)", ACTX_OP_GELU_TANH, 1, 0.0f},
    {"quick_gelu(1.702)", ACTX_OP_QUICK_GELU, 0, 1.702f},
    {"quick_gelu(1)", ACTX_OP_QUICK_GELU, 0, 1.0f},
    {"quick_gelu(-0.5)", ACTX_OP_QUICK_GELU, 0, -0.5f},
    {"tanh", ACTX_OP_TANH, 0, 0.0f},
    {"sigmoid", ACTX_OP_SIGMOID, 0, 0.0f},
};
#define TEST_CASE_COUNT (sizeof test_cases / sizeof test_cases[0])

static inline actx_op_desc case_desc(const test_case *c, actx_dtype dt, const void *bias) {
  actx_op_desc d = {.op = c->op, .dtype = dt, .alpha = c->alpha};
  if (c->bias_len) {
    d.bias = bias;
    d.bias_len = c->bias_len;
  }
  return d;
}

#endif /* ACTX_TEST_CASES_H */
