/* sleef_arms.h — float32 activations built on SLEEF's AVX2 functions (Debian's libsleef-dev),
 * a comparison arm of `actx bench kernels`: erf from Sleef_erff8_u10avx2, tanh from
 * Sleef_tanhf8_u10avx2, the logistic as 1 / (1 + Sleef_expf8_u10avx2(-x)), and the GELUs and
 * QuickGelu composed from those as their formulas say. */
#ifndef ACTX_TOOLS_SLEEF_ARMS_H
#define ACTX_TOOLS_SLEEF_ARMS_H

#include <stdbool.h>
#include <stddef.h>

#include "actx.h"

/* Whether the SLEEF arm was built in (libsleef-dev present at build time). */
bool actx_sleef_available(void);

/* y = op(x [+ bias]) for a float32 desc, n elements. Returns 0, or -1 when SLEEF is not built
 * in or the op or dtype is not one this arm computes. Call only on a CPU with AVX2 and FMA. */
int actx_sleef_compute(const actx_op_desc *desc, const float *x, float *y, size_t n);

#endif /* ACTX_TOOLS_SLEEF_ARMS_H */
