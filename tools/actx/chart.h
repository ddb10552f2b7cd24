/* chart.h — line charts as PNG files, drawn by gnuplot (Debian's gnuplot-nox).
 *
 * A chart is a grid of panels; each panel plots some series of (x, y) points. Next to the PNG
 * the data (.dat) and the gnuplot script (.gp) are kept, so a chart can be redrawn or restyled
 * without rerunning what produced it. */
#ifndef ACTX_TOOLS_CHART_H
#define ACTX_TOOLS_CHART_H

#include <stdbool.h>
#include <stddef.h>

#define ACTX_CHART_MAX_POINTS 32

typedef struct actx_chart_series {
  char panel[64]; /* series with the same panel name share a panel, in order of appearance */
  char label[64];
  size_t n;
  double x[ACTX_CHART_MAX_POINTS], y[ACTX_CHART_MAX_POINTS];
} actx_chart_series;

typedef struct actx_chart {
  const char *title;
  const char *x_label, *y_label;
  bool log_x;
  bool log_y; /* ratios: 2x faster and 2x slower sit at equal distances from 1 */
  bool has_reference_y; /* a dashed horizontal line, e.g. ratio 1 */
  double reference_y;
} actx_chart;

/* Writes png_path (and png_path with .dat / .gp instead of .png). 0, or -1 with a message
 * (gnuplot missing or failing, a file not writable). */
int actx_chart_write(const char *png_path, const actx_chart *chart,
                     const actx_chart_series *series, size_t n_series, char *err,
                     size_t err_size);

#endif /* ACTX_TOOLS_CHART_H */
