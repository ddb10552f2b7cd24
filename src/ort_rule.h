/* Which of ORT 1.30's kernels actx reproduces: those ORT's MLAS picks on an AVX2 host or those
 * it picks on an AVX-512 host (see ort_rule.c). */
#ifndef ACTX_ORT_RULE_H
#define ACTX_ORT_RULE_H

#include "actx.h"
#include "kernels.h"

/* The kernel parameters of desc under the active rule. */
actx_kernel_params actx_ort_rule_params(const actx_op_desc *desc);

#endif /* ACTX_ORT_RULE_H */
