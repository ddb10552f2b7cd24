/* chart.c — PNG line charts through gnuplot (see chart.h). */
#define _POSIX_C_SOURCE 200809L
#include "chart.h"

#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define MAX_PANELS 64
#define PANEL_WIDTH_PX 420
#define PANEL_HEIGHT_PX 330

extern char **environ;

/* path with its ".png" (or nothing) replaced by ext. */
static int sibling_path(const char *png_path, const char *ext, char *out, size_t size) {
  size_t len = strlen(png_path);
  if (len >= 4 && strcmp(png_path + len - 4, ".png") == 0)
    len -= 4;
  int n = snprintf(out, size, "%.*s%s", (int)len, png_path, ext);
  return n > 0 && (size_t)n < size ? 0 : -1;
}

/* gnuplot strings are single-quoted here; a quote inside would end them. */
static bool quotable(const char *s) { return strchr(s, '\'') == NULL; }

static int run_gnuplot(const char *script, char *err, size_t err_size) {
  char *argv[] = {"gnuplot", (char *)script, NULL};
  pid_t pid;
  int rc = posix_spawnp(&pid, "gnuplot", NULL, NULL, argv, environ);
  if (rc != 0) {
    snprintf(err, err_size, "cannot start gnuplot (%s); install gnuplot-nox", strerror(rc));
    return -1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      snprintf(err, err_size, "waiting for gnuplot: %s", strerror(errno));
      return -1;
    }
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    snprintf(err, err_size, "gnuplot %s failed (status %d)", script, status);
    return -1;
  }
  return 0;
}

int actx_chart_write(const char *png_path, const actx_chart *chart,
                     const actx_chart_series *series, size_t n_series, char *err,
                     size_t err_size) {
  char dat_path[4096], gp_path[4096];
  if (sibling_path(png_path, ".dat", dat_path, sizeof dat_path) != 0 ||
      sibling_path(png_path, ".gp", gp_path, sizeof gp_path) != 0) {
    snprintf(err, err_size, "chart path too long: %s", png_path);
    return -1;
  }
  if (!quotable(png_path) || !quotable(chart->title)) {
    snprintf(err, err_size, "chart path or title contains a single quote: %s", png_path);
    return -1;
  }
  const char *panels[MAX_PANELS];
  size_t n_panels = 0;
  for (size_t s = 0; s < n_series; s++) {
    bool seen = false;
    for (size_t p = 0; p < n_panels && !seen; p++)
      seen = strcmp(panels[p], series[s].panel) == 0;
    if (!seen && n_panels < MAX_PANELS)
      panels[n_panels++] = series[s].panel;
  }
  if (n_panels == 0) {
    snprintf(err, err_size, "nothing to chart");
    return -1;
  }

  FILE *dat = fopen(dat_path, "w");
  if (dat == NULL) {
    snprintf(err, err_size, "cannot write %s: %s", dat_path, strerror(errno));
    return -1;
  }
  for (size_t s = 0; s < n_series; s++) { /* one gnuplot data block (index) per series */
    fprintf(dat, "# %s / %s\n", series[s].panel, series[s].label);
    for (size_t i = 0; i < series[s].n; i++)
      if (isfinite(series[s].y[i]))
        fprintf(dat, "%.17g %.17g\n", series[s].x[i], series[s].y[i]);
    fputs("\n\n", dat);
  }
  if (fclose(dat) != 0) {
    snprintf(err, err_size, "cannot write %s", dat_path);
    return -1;
  }

  size_t cols = (size_t)ceil(sqrt((double)n_panels));
  size_t rows = (n_panels + cols - 1) / cols;
  FILE *gp = fopen(gp_path, "w");
  if (gp == NULL) {
    snprintf(err, err_size, "cannot write %s: %s", gp_path, strerror(errno));
    return -1;
  }
  fprintf(gp, "# Drawn by actx; rerun with: gnuplot %s\n", gp_path);
  fprintf(gp, "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
              "  set terminal pngcairo size %zu,%zu font ',9'\n"
              "} else {\n"
              "  set terminal png size %zu,%zu\n"
              "}\n",
          cols * PANEL_WIDTH_PX, rows * PANEL_HEIGHT_PX + 40, cols * PANEL_WIDTH_PX,
          rows * PANEL_HEIGHT_PX + 40);
  fprintf(gp, "set output '%s'\n", png_path);
  fprintf(gp, "set multiplot layout %zu,%zu title '%s'\n", rows, cols, chart->title);
  if (chart->log_x)
    fputs("set logscale x 2\nset format x '2^{%L}'\n", gp);
  if (chart->log_y)
    fputs("set logscale y 2\nset format y '%g'\n", gp);
  fprintf(gp, "set xlabel '%s'\nset ylabel '%s'\nset grid\nset key top left font ',8'\n",
          chart->x_label, chart->y_label);
  for (size_t p = 0; p < n_panels; p++) {
    fprintf(gp, "set title '%s'\nplot", panels[p]);
    bool first = true;
    for (size_t s = 0; s < n_series; s++) {
      if (strcmp(series[s].panel, panels[p]) != 0)
        continue;
      bool any = false;
      for (size_t i = 0; i < series[s].n; i++)
        any = any || isfinite(series[s].y[i]);
      if (!any)
        continue; /* an empty data block would stop gnuplot */
      fprintf(gp, "%s '%s' index %zu with linespoints title '%s'", first ? "" : ",", dat_path,
              s, quotable(series[s].label) ? series[s].label : "?");
      first = false;
    }
    if (chart->has_reference_y)
      fprintf(gp, "%s %.17g with lines dashtype 2 linecolor 'black' notitle", first ? "" : ",",
              chart->reference_y);
    else if (first)
      fputs(" NaN notitle", gp);
    fputc('\n', gp);
  }
  fputs("unset multiplot\n", gp);
  if (fclose(gp) != 0) {
    snprintf(err, err_size, "cannot write %s", gp_path);
    return -1;
  }
  return run_gnuplot(gp_path, err, err_size);
}
