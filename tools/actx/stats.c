/* stats.c — clock and summary statistics (see stats.h). */
#define _POSIX_C_SOURCE 200809L
#include "stats.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

double actx_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double actx_quantile_sorted(const double *sorted, size_t n, double q) {
  if (n == 0)
    return 0;
  double pos = q * (double)(n - 1);
  size_t lo = (size_t)pos;
  if (lo + 1 >= n)
    return sorted[n - 1];
  double frac = pos - (double)lo;
  return sorted[lo] + (sorted[lo + 1] - sorted[lo]) * frac;
}

void actx_stats_compute(const double *samples, size_t n, actx_stats *out) {
  memset(out, 0, sizeof *out);
  if (n == 0)
    return;
  double *sorted = malloc(n * sizeof *sorted);
  if (sorted == NULL)
    return;
  memcpy(sorted, samples, n * sizeof *sorted);
  qsort(sorted, n, sizeof *sorted, compare_doubles);
  out->n = n;
  out->min = sorted[0];
  out->median = actx_quantile_sorted(sorted, n, 0.5);
  out->p10 = actx_quantile_sorted(sorted, n, 0.1);
  out->p90 = actx_quantile_sorted(sorted, n, 0.9);
  free(sorted);
}
