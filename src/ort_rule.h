/* Which of ORT 1.30's kernels actx reproduces: those ORT's MLAS picks on an AVX2 host or those
 * it picks on an AVX-512 host (see ort_rule.c). */
#ifndef ACTX_ORT_RULE_H
#define ACTX_ORT_RULE_H

#include "actx.h"
#include "kernels.h"

/* The kernel parameters of op (with alpha, with or without a bias) under the active rule. */
actx_kernel_params actx_ort_rule_params(actx_op op, float alpha, int has_bias);

#endif /* ACTX_ORT_RULE_H */
