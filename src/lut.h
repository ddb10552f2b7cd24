#ifndef ACTX_LUT_H
#define ACTX_LUT_H

#include <stddef.h>
#include <stdint.h>

#include "actx.h"
#include "kernels.h"

/* float16 and bfloat16 have 65,536 inputs, so an op without a bias (and a parameter, if it has
 * one, at a fixed value) can be a table of its 65,536 results, filled once by the op's own
 * kernel: a lookup gives the kernel's exact bits with two loads and a store per element, no
 * arithmetic. erf, GELU, tanh GELU and SiLU (QuickGelu at alpha ACTX_LUT_ALPHA) have tables
 * (their kernels cost more than a lookup); tanh and sigmoid do not (src/ops.h).
 *
 * A table costs 128 KiB and one kernel pass over 65,536 inputs (~0.1-0.2 ms) on first use, so
 * tensors shorter than ACTX_LUT_MIN_ELEMENTS run the kernel instead: a one-off short call never
 * pays for a table, and the bits are the same either way. */
#define ACTX_LUT_MIN_ELEMENTS 4096

/* The one value of a parameter (QuickGelu's alpha) whose results are tabled: a table holds one
 * function, and alpha 1 is SiLU, what exporters write (x·sigmoid(x)). */
#define ACTX_LUT_ALPHA 1.0f
/* The alpha op's table is made at: ACTX_LUT_ALPHA for an op with a parameter, else 0. */
static inline float actx_lut_alpha(actx_op op) {
  return actx_op_takes_alpha[op] ? ACTX_LUT_ALPHA : 0.0f;
}

/* Whether op on dtype, run with the parameters plain, has a table (float32, the ops without one
 * and a parameter other than ACTX_LUT_ALPHA do not). */
int actx_lut_has_table(actx_op op, actx_dtype dtype, const actx_kernel_params *plain);

/* The table of op on dtype for a kernel run with the parameters plain (those of a call without
 * a bias), built on first call (thread-safe); NULL where no table applies (float32, an op
 * without one) or memory ran out, and the caller runs the kernel. */
const uint16_t *actx_lut_get_for(actx_op op, actx_dtype dtype, const actx_kernel_params *plain);
/* The same under the ORT rule in force (an op with a parameter: at ACTX_LUT_ALPHA). */
const uint16_t *actx_lut_get(actx_op op, actx_dtype dtype);

/* The table under the ORT rule in force (at ACTX_LUT_ALPHA) if it has been built, else NULL;
 * builds nothing (for tests). */
const uint16_t *actx_lut_peek(actx_op op, actx_dtype dtype);

/* Entries a table is allocated with: the 65,536 results and spares past them, never read as
 * results (the vector lookup reads each entry with the next one), to a whole cache line. */
#define ACTX_LUT_ENTRIES (65536 + 32)

/* y[i] = table[x[i]] for n 16-bit elements, table of ACTX_LUT_ENTRIES entries; y == x allowed,
 * any alignment. On the avx512 ISA a vector gather (16 lookups an instruction), else scalar
 * loads; the same bits either way. */
void actx_lut_apply(const uint16_t *table, const void *x, void *y, size_t n);
/* The same on a given ISA's loop (tests compare them). */
void actx_lut_apply_isa(actx_isa isa, const uint16_t *table, const void *x, void *y, size_t n);

#endif /* ACTX_LUT_H */
