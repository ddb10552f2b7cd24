/* stats.h — clock and summary statistics for the benchmarks.
 *
 * A benchmark arm yields one sample per repetition; the summary is the median with the 10th and
 * 90th percentiles as its spread (robust against the outliers a shared machine produces). */
#ifndef ACTX_TOOLS_STATS_H
#define ACTX_TOOLS_STATS_H

#include <stddef.h>

/* Monotonic time in nanoseconds. */
double actx_now_ns(void);

typedef struct actx_stats {
  double median, p10, p90, min;
  size_t n;
} actx_stats;

/* Summarises n samples (n may be 0: then every field is 0). samples is left untouched. */
void actx_stats_compute(const double *samples, size_t n, actx_stats *out);

/* The q-quantile (0..1) of sorted[0..n), interpolating linearly between ranks. */
double actx_quantile_sorted(const double *sorted, size_t n, double q);

#endif /* ACTX_TOOLS_STATS_H */
