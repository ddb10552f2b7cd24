/* bf16_round.h — float32 results rounded to bfloat16: nearest even, NaN made quiet, exactly
 * actx_f32_to_bf16's bits (src/half.h). The one pass every oneDNN result takes (bf16_dnnl.c).
 * Internal to src/bf16/. */
#ifndef ACTX_BF16_ROUND_H
#define ACTX_BF16_ROUND_H

#include <stddef.h>
#include <stdint.h>

/* y[i] = round(acc[i]) for i < n. Returns non-zero when any acc[i] is a NaN or an infinity
 * (found in the same pass, for bf16_conv_nonfinite.h). acc and y must not overlap. */
uint32_t actx_bf16_round_span(const float *acc, uint16_t *y, size_t n);
/* The form this process rounds with: "vcvtne2ps2bf16" or "integer" (for tests and logs). */
const char *actx_bf16_round_form(void);

#endif /* ACTX_BF16_ROUND_H */
