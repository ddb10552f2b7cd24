/* compare.h — how two tensors' elements differ: in bits, in units in the last place, and against
 * a tolerance.
 *
 * Bits: two elements are the same when their bit patterns are (so +0 and -0 differ, and two
 * NaNs are the same only with the same payload). ULPs: the distance between two finite or
 * infinite values counted in representable values of their type (+0 and -0 are 0 apart); a NaN
 * facing a non-NaN is an infinite distance. Tolerance (as ONNX's test runner and the reference
 * PR): |actual - expected| <= atol + rtol * |expected|, NaN matches any NaN, infinities must be
 * equal; integer and bool types must match exactly. */
#ifndef ACTX_TOOLS_COMPARE_H
#define ACTX_TOOLS_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct actx_compare {
  size_t count;
  size_t differing;      /* elements whose bits differ */
  uint64_t max_ulp;      /* largest distance among elements that are not NaN on both sides */
  bool nan_mismatch;     /* a NaN against a number (max_ulp then means nothing more) */
  size_t out_of_tolerance;
  size_t first_out;      /* index of the first element out of tolerance (if any) */
  double first_expected, first_actual;
} actx_compare;

/* Whether compare.c knows elem_type (ONNX numbering): floats, integers, bool. */
bool actx_compare_supports(int32_t elem_type);

/* Compares count elements of elem_type. rtol/atol apply to floating types. Returns 0, or -1 for
 * an element type it does not know. */
int actx_compare_tensors(int32_t elem_type, const void *expected, const void *actual,
                         size_t count, double rtol, double atol, actx_compare *out);

/* Element i of a buffer of elem_type as a double (integers exactly up to 2^53). */
double actx_element_as_double(int32_t elem_type, const void *data, size_t i);

/* "identical", "3 differ, max 1 ulp", "3 differ, NaN vs number" into buf. */
void actx_compare_describe(const actx_compare *c, char *buf, size_t size);

#endif /* ACTX_TOOLS_COMPARE_H */
