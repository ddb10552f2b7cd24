/* ab_report.c — `actx ab`'s report of the Run() table's cells (see ab.h): the table (stdout and
 * ab.txt), the geometric means, the notes, the profile section, ab.csv and ab.png; the
 * creation and real-model sections print their own after it. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ab.h"
#include "chart.h"
#include "cli.h"
#include "table.h"

/* Arm A's name: "ORT alone", or as --baseline, --threads-a and --dtype-a make it, e.g.
 * "ORT + actx (policy none) on 1 thread in f16". */
static void arm_a_name(const ab_options *o, char *buf, size_t size) {
  int used = o->baseline != NULL
                 ? snprintf(buf, size, "ORT + %s (policy %s)", o->actx_ep.label, o->baseline)
                 : snprintf(buf, size, "ORT alone");
  if (o->threads_a > 0 && used >= 0 && (size_t)used < size)
    used += snprintf(buf + used, size - (size_t)used, " on %ld thread%s", o->threads_a,
                     o->threads_a == 1 ? "" : "s");
  if (o->dtype_a != NULL && used >= 0 && (size_t)used < size)
    snprintf(buf + used, size - (size_t)used, " in %s", o->dtype_a);
}

/* The arm's name in notes: "ORT alone", "ORT + actx", "ORT alone (null)", "ORT + NAME". */
static void arm_name(const ab_options *o, int k, char *buf, size_t size) {
  char a[128];
  arm_a_name(o, a, sizeof a);
  if (k == ARM_ORT)
    snprintf(buf, size, "%s", a);
  else if (k == ARM_NULL)
    snprintf(buf, size, "%s (null)", a);
  else
    snprintf(buf, size, "ORT + %s",
             k == ARM_ACTX ? o->actx_ep.label : o->peers[k - ARM_PEER].label);
}


static void format_us(double ns, char *buf, size_t size) {
  double us = ns / 1000.0;
  if (us >= 1000)
    snprintf(buf, size, "%.0f", us);
  else if (us >= 100)
    snprintf(buf, size, "%.1f", us);
  else if (us >= 10)
    snprintf(buf, size, "%.2f", us);
  else
    snprintf(buf, size, "%.3f", us);
}

static void format_spread(const actx_stats *s, char *buf, size_t size) {
  char lo[32], hi[32];
  format_us(s->p10, lo, sizeof lo);
  format_us(s->p90, hi, sizeof hi);
  snprintf(buf, size, "%s-%s", lo, hi);
}

static const char *arm_failure(const ab_arm *a) {
  if (a->ts == NULL && a->error[0] == '\0')
    return "-";
  return a->not_implemented ? "not impl." : "error";
}

/* An arm's median time, or why there is none ("-": not created, "error", "not impl."). */
static void arm_time(const ab_arm *a, char *buf, size_t size) {
  if (a->ok)
    format_us(a->stats.median, buf, size);
  else
    snprintf(buf, size, "%s", arm_failure(a));
}

static void arm_ratio(const ab_arm *a, char *buf, size_t size) {
  if (a->has_ratio)
    snprintf(buf, size, "%.2fx", a->ratio.median);
  else
    snprintf(buf, size, "-");
}

/* Columns per peer in the table: time, ratio, check, EP. */
#define PEER_TABLE_COLUMNS 4

static actx_table *build_table(const ab_options *o, const ab_results *r) {
  const char *headers[ACTX_TABLE_MAX_COLUMNS] = {
      "case",    "dtype",    "N",       "thr",      "ORT us", "p10-p90", "actx us",
      "p10-p90", "ORT/actx", "p10-p90", "ORT/ORT'", "check",  "EP"};
  enum { NULL_COLUMN = 10, OWN_COLUMNS = 13 };
  char peer_headers[ACTX_AB_MAX_PEERS][PEER_TABLE_COLUMNS][48];
  size_t all_cols = OWN_COLUMNS;
  for (size_t p = 0; p < o->n_peers && all_cols + PEER_TABLE_COLUMNS <= ACTX_TABLE_MAX_COLUMNS;
       p++) {
    const char *name = o->peers[p].label;
    snprintf(peer_headers[p][0], sizeof peer_headers[p][0], "%s us", name);
    snprintf(peer_headers[p][1], sizeof peer_headers[p][1], "ORT/%s", name);
    snprintf(peer_headers[p][2], sizeof peer_headers[p][2], "%s check", name);
    snprintf(peer_headers[p][3], sizeof peer_headers[p][3], "%s EP", name);
    for (int k = 0; k < PEER_TABLE_COLUMNS; k++)
      headers[all_cols++] = peer_headers[p][k];
  }
  const size_t n_peer_groups = (all_cols - OWN_COLUMNS) / PEER_TABLE_COLUMNS;
  /* without --null the null-control column is left out */
  const size_t skip = o->null_control ? all_cols : NULL_COLUMN;
  const char *kept[ACTX_TABLE_MAX_COLUMNS];
  size_t n_cols = 0;
  for (size_t k = 0; k < all_cols; k++)
    if (k != skip)
      kept[n_cols++] = headers[k];
  actx_table *t = actx_table_create(n_cols, kept);
  if (t == NULL)
    return NULL;
  const char *prev_label = "";
  for (size_t i = 0; i < r->n; i++) {
    const ab_cell *c = &r->cells[i];
    if (i > 0 && strcmp(prev_label, c->label) != 0)
      actx_table_add_break(t);
    prev_label = c->label;
    char n_buf[32], thr[16], a_us[32], a_sp[80], b_us[32], b_sp[80], ratio[32], ratio_sp[48],
        null_ratio[32], ep[160];
    char peer_cells[ACTX_AB_MAX_PEERS][PEER_TABLE_COLUMNS][160];
    snprintf(n_buf, sizeof n_buf, "%zu", c->elements);
    snprintf(thr, sizeof thr, "%ld", c->threads);
    const ab_arm *a = &c->arms[ARM_ORT], *b = &c->arms[ARM_ACTX];
    arm_time(a, a_us, sizeof a_us);
    arm_time(b, b_us, sizeof b_us);
    if (a->ok)
      format_spread(&a->stats, a_sp, sizeof a_sp);
    else
      snprintf(a_sp, sizeof a_sp, "-");
    if (b->ok)
      format_spread(&b->stats, b_sp, sizeof b_sp);
    else
      snprintf(b_sp, sizeof b_sp, "-");
    arm_ratio(b, ratio, sizeof ratio);
    if (b->has_ratio)
      snprintf(ratio_sp, sizeof ratio_sp, "%.2f-%.2f", b->ratio.p10, b->ratio.p90);
    else
      snprintf(ratio_sp, sizeof ratio_sp, "-");
    arm_ratio(&c->arms[ARM_NULL], null_ratio, sizeof null_ratio);
    snprintf(ep, sizeof ep, "%s%s", b->ok ? b->ep_summary : "-",
             c->auto_declined ? " [all]" : "");
    const char *row[ACTX_TABLE_MAX_COLUMNS] = {
        c->label, c->dtype, n_buf, thr, a_us, a_sp, b_us, b_sp, ratio, ratio_sp, null_ratio,
        b->check[0] ? b->check : "-", ep};
    for (size_t p = 0; p < n_peer_groups; p++) {
      const ab_arm *x = &c->arms[ARM_PEER + p];
      arm_time(x, peer_cells[p][0], sizeof peer_cells[p][0]);
      arm_ratio(x, peer_cells[p][1], sizeof peer_cells[p][1]);
      snprintf(peer_cells[p][2], sizeof peer_cells[p][2], "%s", x->check[0] ? x->check : "-");
      snprintf(peer_cells[p][3], sizeof peer_cells[p][3], "%s", x->ok ? x->ep_summary : "-");
      for (int k = 0; k < PEER_TABLE_COLUMNS; k++)
        row[OWN_COLUMNS + p * PEER_TABLE_COLUMNS + (size_t)k] = peer_cells[p][k];
    }
    const char *cells[ACTX_TABLE_MAX_COLUMNS];
    size_t n = 0;
    for (size_t k = 0; k < all_cols; k++)
      if (k != skip)
        cells[n++] = row[k];
    actx_table_add_row(t, cells);
  }
  return t;
}

/* The CSV columns of each peer, after the others, each named <NAME>_<column>. */
static const char *const k_peer_csv_columns[] = {
    "ep",        "median_ns",    "p10_ns",    "p90_ns",    "batch",
    "ratio",     "ratio_p10",    "ratio_p90", "reference", "differing",
    "max_ulp",   "nan_mismatch", "ep_assignment", "error"};
#define N_PEER_CSV_COLUMNS (sizeof k_peer_csv_columns / sizeof *k_peer_csv_columns)

/* An arm's time columns (median, p10, p90 in ns; batch) into v[0..4), blank when it did not
 * run; and its ratio columns (median, p10, p90) into v[0..3), blank without a ratio. */
static void arm_time_cells(const ab_arm *x, char (*v)[48]) {
  if (!x->ok) return;
  snprintf(v[0], 48, "%.1f", x->stats.median);
  snprintf(v[1], 48, "%.1f", x->stats.p10);
  snprintf(v[2], 48, "%.1f", x->stats.p90);
  snprintf(v[3], 48, "%zu", x->batch);
}
static void arm_ratio_cells(const ab_arm *x, char (*v)[48]) {
  if (!x->has_ratio) return;
  snprintf(v[0], 48, "%.4f", x->ratio.median);
  snprintf(v[1], 48, "%.4f", x->ratio.p10);
  snprintf(v[2], 48, "%.4f", x->ratio.p90);
}
/* The comparison columns (differing, max ulp, NaN mismatch) into v[0..3). */
static void arm_check_cells(const ab_arm *x, char (*v)[48]) {
  if (!x->compared) return;
  snprintf(v[0], 48, "%zu", x->cmp.differing);
  snprintf(v[1], 48, "%llu", (unsigned long long)x->cmp.max_ulp);
  snprintf(v[2], 48, "%d", x->cmp.nan_mismatch ? 1 : 0);
}

/* A peer arm's CSV cells, in k_peer_csv_columns' order (v holds the numbers). */
static void peer_csv_cells(const actx_ab_ep *ep, const ab_arm *x, char (*v)[48],
                           const char **cells) {
  for (size_t k = 0; k < N_PEER_CSV_COLUMNS; k++)
    v[k][0] = '\0';
  arm_time_cells(x, &v[1]);
  arm_ratio_cells(x, &v[5]);
  arm_check_cells(x, &v[9]);
  for (size_t k = 0; k < N_PEER_CSV_COLUMNS; k++)
    cells[k] = v[k];
  cells[0] = ep->ep_name;
  cells[8] = x->reference != NULL ? x->reference : "";
  cells[12] = x->ok ? x->ep_summary : "";
  cells[13] = x->ok ? "" : x->error;
}

static void write_csv(FILE *f, const ab_options *o, const ab_results *r) {
  const char *own_headers[] = {"case", "dtype", "elements", "threads", "policy", "auto_declined",
                               "ort_median_ns", "ort_p10_ns", "ort_p90_ns", "ort_batch",
                               "actx_median_ns", "actx_p10_ns", "actx_p90_ns", "actx_batch",
                               "ratio", "ratio_p10", "ratio_p90", "null_median_ns", "null_ratio",
                               "null_ratio_p10", "null_ratio_p90", "reps", "reference",
                               "differing", "max_ulp", "nan_mismatch", "ep_assignment",
                               "ort_error", "actx_error"};
  enum { OWN = sizeof own_headers / sizeof *own_headers };
  enum { MAX_COLUMNS = OWN + ACTX_AB_MAX_PEERS * N_PEER_CSV_COLUMNS };
  const char *headers[MAX_COLUMNS];
  char peer_headers[ACTX_AB_MAX_PEERS][N_PEER_CSV_COLUMNS][48];
  size_t n_cols = 0;
  for (size_t k = 0; k < OWN; k++)
    headers[n_cols++] = own_headers[k];
  for (size_t p = 0; p < o->n_peers; p++)
    for (size_t k = 0; k < N_PEER_CSV_COLUMNS; k++) {
      snprintf(peer_headers[p][k], sizeof peer_headers[p][k], "%s_%s", o->peers[p].label,
               k_peer_csv_columns[k]);
      headers[n_cols++] = peer_headers[p][k];
    }
  actx_csv_write_row(f, n_cols, headers);
  for (size_t i = 0; i < r->n; i++) {
    const ab_cell *c = &r->cells[i];
    const ab_arm *a = &c->arms[ARM_ORT], *b = &c->arms[ARM_ACTX], *z = &c->arms[ARM_NULL];
    char v[21][48];
    memset(v, 0, sizeof v);
    snprintf(v[0], 48, "%zu", c->elements);
    snprintf(v[1], 48, "%ld", c->threads);
    arm_time_cells(a, &v[2]);
    arm_time_cells(b, &v[6]);
    arm_ratio_cells(b, &v[10]);
    if (z->ok)
      snprintf(v[13], 48, "%.1f", z->stats.median);
    arm_ratio_cells(z, &v[14]);
    snprintf(v[17], 48, "%ld", o->reps);
    arm_check_cells(b, &v[18]);
    const char *row[MAX_COLUMNS] = {c->label, c->dtype, v[0], v[1], c->policy_used,
                         c->auto_declined ? "1" : "0", v[2], v[3], v[4], v[5], v[6], v[7], v[8],
                         v[9], v[10], v[11], v[12], v[13], v[14], v[15], v[16], v[17],
                         b->reference != NULL ? b->reference : "", v[18], v[19], v[20],
                         b->ok ? b->ep_summary : "", a->ok ? "" : a->error,
                         b->ok ? "" : b->error};
    char peer_v[ACTX_AB_MAX_PEERS][N_PEER_CSV_COLUMNS][48];
    for (size_t p = 0; p < o->n_peers; p++)
      peer_csv_cells(&o->peers[p], &c->arms[ARM_PEER + p], peer_v[p],
                     &row[OWN + p * N_PEER_CSV_COLUMNS]);
    actx_csv_write_row(f, n_cols, row);
  }
}

/* The geometric mean of ORT alone / arm k over the cells of one configuration (dtype NULL:
 * the user's models, whose dtype column is none of ours); *worst: the ratio furthest from 1. */
static size_t geometric_mean(const ab_results *r, int k, const char *dtype, long threads,
                             double *mean, double *worst) {
  double log_sum = 0, worst_log = 0;
  size_t n = 0;
  for (size_t i = 0; i < r->n; i++) {
    const ab_cell *c = &r->cells[i];
    bool match = dtype != NULL ? strcmp(c->dtype, dtype) == 0 : true;
    for (size_t d = 0; dtype == NULL && d < AB_N_DTYPES; d++)
      match = match && strcmp(c->dtype, actx_dtype_name(ab_dtypes[d])) != 0;
    if (!match || c->threads != threads || !c->arms[k].has_ratio)
      continue;
    const double l = log(c->arms[k].ratio.median);
    log_sum += l;
    if (fabs(l) > fabs(worst_log))
      worst_log = l;
    n++;
  }
  *mean = n > 0 ? exp(log_sum / (double)n) : 0;
  *worst = exp(worst_log);
  return n;
}

/* Geometric means of the ratio per (dtype, threads): the one-line answer per configuration. */
static void print_summary(FILE *out, const ab_options *o, const ab_results *r) {
  fprintf(out, "\nGeometric mean of ORT/actx (> 1: actx faster) over the cells measured:\n");
  for (size_t d = 0; d < AB_N_DTYPES + 1; d++) {
    const char *dtype = d < AB_N_DTYPES ? actx_dtype_name(ab_dtypes[d]) : NULL;
    for (size_t t = 0; t < o->n_threads; t++) {
      double mean = 0, worst = 0;
      const size_t n = geometric_mean(r, ARM_ACTX, dtype, o->threads[t], &mean, &worst);
      if (n == 0)
        continue;
      fprintf(out, "  %-6s %ld thread%s: %.2fx over %zu cells", dtype != NULL ? dtype : "models",
              o->threads[t], o->threads[t] == 1 ? " " : "s", mean, n);
      if (geometric_mean(r, ARM_NULL, dtype, o->threads[t], &mean, &worst) > 0)
        fprintf(out, "   null control ORT/ORT': %.2fx (worst %.2fx)", mean, worst);
      for (size_t p = 0; p < o->n_peers; p++) {
        const size_t n_peer =
            geometric_mean(r, ARM_PEER + (int)p, dtype, o->threads[t], &mean, &worst);
        if (n_peer > 0)
          fprintf(out, "   ORT/%s: %.2fx over %zu", o->peers[p].label, mean, n_peer);
      }
      fputc('\n', out);
    }
  }
}

static void print_notes(FILE *out, const ab_options *o, const ab_results *r) {
  size_t not_impl = 0, declined = 0, mismatched = 0;
  const ab_cell *example = NULL;
  for (size_t i = 0; i < r->n; i++) {
    const ab_cell *c = &r->cells[i];
    if (c->auto_declined)
      declined++;
    if (c->arms[ARM_ACTX].compared && c->arms[ARM_ACTX].cmp.differing > 0)
      mismatched++;
    for (int k = 0; k < N_ARMS; k++) {
      const ab_arm *a = &c->arms[k];
      if (a->ok || a->error[0] == '\0')
        continue;
      if (a->not_implemented && (k == ARM_ORT || k == ARM_NULL)) {
        if (k == ARM_ORT && not_impl++ == 0)
          example = c;
        continue; /* the null arm fails as the ORT arm does: counted once */
      }
      char name[160];
      arm_name(o, k, name, sizeof name);
      fprintf(out, "  %s %s N=%zu %ld thr: %s: %s\n", c->label, c->dtype, c->elements,
              c->threads, name, a->error);
    }
  }
  if (not_impl > 0) {
    char a[128];
    arm_a_name(o, a, sizeof a);
    fprintf(out, "  %s: not implemented in %zu cells (e.g. %s %s: %s); the actx arm's "
                 "time is reported alone and its output checked against libactx\n",
            a, not_impl, example->label, example->dtype, example->arms[ARM_ORT].error);
  }
  if (declined > 0)
    fprintf(out, "  [all]: in %zu cells the EP's auto policy left the node(s) to ORT; they were "
                 "measured with policy=all to show what actx would do\n",
            declined);
  if (mismatched > 0) {
    fprintf(out, "  outputs differ from the reference in %zu cells (", mismatched);
    for (size_t d = 0, shown = 0; d < AB_N_DTYPES; d++) {
      size_t k = 0;
      for (size_t i = 0; i < r->n; i++)
        k += r->cells[i].arms[ARM_ACTX].compared && r->cells[i].arms[ARM_ACTX].cmp.differing > 0 &&
             strcmp(r->cells[i].dtype, actx_dtype_name(ab_dtypes[d])) == 0;
      if (k > 0)
        fprintf(out, "%s%s: %zu", shown++ ? ", " : "", actx_dtype_name(ab_dtypes[d]), k);
    }
    fprintf(out, "); see the check column\n");
  }
}

static int write_chart(const ab_options *o, const ab_results *r, const char *png_path, char *err,
                       size_t err_size) {
  size_t n_series = 0, capacity = 64;
  actx_chart_series *series = calloc(capacity, sizeof *series);
  if (series == NULL) {
    snprintf(err, err_size, "out of memory");
    return -1;
  }
  for (size_t i = 0; i < r->n; i++) {
    const ab_cell *c = &r->cells[i];
    if (!c->arms[ARM_ACTX].has_ratio)
      continue;
    char label[64];
    snprintf(label, sizeof label, "%s, %ld thread%s", c->dtype, c->threads,
             c->threads == 1 ? "" : "s");
    size_t s = 0;
    while (s < n_series &&
           (strcmp(series[s].panel, c->label) != 0 || strcmp(series[s].label, label) != 0))
      s++;
    if (s == n_series) {
      if (n_series == capacity) {
        actx_chart_series *grown = realloc(series, 2 * capacity * sizeof *grown);
        if (grown == NULL)
          break;
        series = grown;
        capacity *= 2;
      }
      memset(&series[s], 0, sizeof series[s]);
      snprintf(series[s].panel, sizeof series[s].panel, "%s", c->label);
      snprintf(series[s].label, sizeof series[s].label, "%s", label);
      n_series++;
    }
    if (series[s].n < ACTX_CHART_MAX_POINTS) {
      series[s].x[series[s].n] = (double)c->elements;
      series[s].y[series[s].n] = c->arms[ARM_ACTX].ratio.median;
      series[s].n++;
    }
  }
  char title[160];
  snprintf(title, sizeof title, "ORT alone / ORT + actx: Run() time ratio (> 1: actx faster), "
           "median of %ld rep-by-rep ratios", o->reps);
  actx_chart chart = {.title = title, .x_label = "elements", .y_label = "ORT / actx",
                      .log_x = true, .log_y = true, .has_reference_y = true, .reference_y = 1.0};
  int rc = actx_chart_write(png_path, &chart, series, n_series, err, err_size);
  free(series);
  return rc;
}

/* The CPU's name from /proc/cpuinfo, for the header. */
static void cpu_name(char *buf, size_t size) {
  snprintf(buf, size, "unknown CPU");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f == NULL)
    return;
  char line[512];
  while (fgets(line, sizeof line, f) != NULL) {
    if (strncmp(line, "model name", 10) == 0) {
      const char *colon = strchr(line, ':');
      if (colon != NULL) {
        snprintf(buf, size, "%s", colon + 2);
        buf[strcspn(buf, "\n")] = '\0';
      }
      break;
    }
  }
  fclose(f);
}

void ab_load_average(char *buf, size_t size) {
  snprintf(buf, size, "?");
  FILE *f = fopen("/proc/loadavg", "r");
  if (f == NULL)
    return;
  double one = 0;
  if (fscanf(f, "%lf", &one) == 1)
    snprintf(buf, size, "%.2f", one);
  fclose(f);
}

static void print_header(FILE *out, const ab_options *o, const ab_run_info *info) {
  const OrtApiBase *base = OrtGetApiBase();
  char cpu[256];
  cpu_name(cpu, sizeof cpu);
  fprintf(out, "actx ab — ORT %s alone vs ORT + actx %s (EP %s)\n",
          base != NULL ? base->GetVersionString() : "?", actx_version_string(), o->ep_lib);
  fprintf(out, "%s; %ld cores online; libactx ISA %s, ORT rule %s; started %s, load average %s\n",
          cpu, sysconf(_SC_NPROCESSORS_ONLN), actx_isa_name(actx_get_isa()),
          actx_ort_rule_name(actx_get_ort_rule()), info->started, info->load_before);
  if (!o->creation_only && !o->models_only)
    fprintf(out, "Run() time per call in microseconds: median and p10-p90 of %ld reps (each a "
                 "batch of ~%.1f ms), after %ld warm-up reps; arms interleaved, order "
                 "alternating; policy %s; seed %llu; intra-op threads %s between runs\n",
            o->reps, o->batch_ms, o->warmup, o->policy, (unsigned long long)o->seed,
            o->spin ? "spin" : "sleep");
  if (!o->creation_only && !o->models_only && ab_arm_a_is_custom(o)) {
    char a[128];
    arm_a_name(o, a, sizeof a);
    fprintf(out, "Arm A (the ORT columns and ratios): %s; the check column still compares "
                 "with ORT alone (or libactx)\n", a);
  }
  fputc('\n', out);
  for (size_t p = 0; p < o->n_peers; p++) {
    const actx_ab_ep *peer = &o->peers[p];
    fprintf(out, "Peer %s: EP %s (its CPU device) from %s, ", peer->label, peer->ep_name,
            peer->path);
    if (peer->n_options == 0)
      fprintf(out, "no provider options");
    for (size_t k = 0; k < peer->n_options; k++)
      fprintf(out, "%s%s=%s", k ? ", " : "provider options ", peer->keys[k], peer->values[k]);
    fprintf(out, "\n");
  }
  if (o->n_peers > 0)
    fputc('\n', out);
}


/* --profile: the GELU part of each cell's runs, per arm. */
static void print_profile(FILE *out, const ab_options *o, const ab_results *r) {
  char a[128];
  arm_a_name(o, a, sizeof a);
  fprintf(out, "\n==== GELU part (ORT's profiler) ====\n");
  const char *headers[] = {"case",        "dtype",      "N",          "thr",
                           "A part us",   "A run us",   "A share",    "actx part us",
                           "actx run us", "actx share", "runs"};
  actx_table *t = actx_table_create(sizeof headers / sizeof *headers, headers);
  if (t == NULL)
    return;
  for (size_t i = 0; i < r->n; i++) {
    const ab_cell *c = &r->cells[i];
    const ab_profile *p = &c->profile;
    char n[32], thr[16], v[6][32], runs[16];
    snprintf(n, sizeof n, "%zu", c->elements);
    snprintf(thr, sizeof thr, "%ld", c->threads);
    for (int k = 0; k < 2; k++) {
      snprintf(v[3 * k], sizeof v[0], p->ok ? "%.1f" : "-", p->part_us[k]);
      snprintf(v[3 * k + 1], sizeof v[0], p->ok ? "%.1f" : "-", p->run_us[k]);
      snprintf(v[3 * k + 2], sizeof v[0], p->ok ? "%.1f%%" : "-", 100.0 * p->share[k]);
    }
    snprintf(runs, sizeof runs, "%zu", p->runs);
    const char *row[] = {c->label, c->dtype, n, thr, v[0], v[1], v[2], v[3], v[4], v[5], runs};
    actx_table_add_row(t, row);
  }
  actx_table_print(t, out);
  actx_table_free(t);
  fprintf(out, "  A: %s. Medians over %ld profiled runs per arm, the arms' runs interleaved; "
               "GELU part: ORT's Gelu, BiasGelu, FastGelu and QuickGelu kernels, nodes named "
               "%s*, and every node on actx; share: of each run\n",
          a, o->profile_runs, ACTX_AB_GELU_PREFIX);
  for (size_t i = 0; i < r->n; i++)
    if (!r->cells[i].profile.ok && r->cells[i].profile.error[0] != '\0')
      fprintf(out, "  %s %s N=%zu %ld thr: no profile: %s\n", r->cells[i].label,
              r->cells[i].dtype, r->cells[i].elements, r->cells[i].threads,
              r->cells[i].profile.error);
}

/* The Run() section of the text report. */
static void print_run_section(FILE *out, const ab_options *o, const ab_results *r,
                              const actx_table *table, const ab_run_info *info) {
  fprintf(out, "==== Run() time ====\n");
  if (table != NULL)
    actx_table_print(table, out);
  print_summary(out, o, r);
  fprintf(out, "\nNotes:\n");
  fprintf(out, "  check: the actx arm's outputs against ORT alone's, bit for bit (ulp: units "
               "in the last place)\n");
  fprintf(out, "  EP: where the actx arm ran its node(s) (CPU: ORT's own kernels)\n");
  if (o->n_peers > 0)
    fprintf(out, "  NAME us, ORT/NAME, NAME check, NAME EP: the same for each peer arm; "
                 "--strict looks at actx's check only\n");
  print_notes(out, o, r);
  fprintf(out, "  %zu cells in %.0f s; load average %s before, %s after\n", r->n, info->seconds,
          info->load_before, info->load_after);
  if (o->profile_runs > 0)
    print_profile(out, o, r);
}

/* Writes one CSV with write(); prints where it went. */
static int write_csv_file(const char *path, const char *what,
                          void (*write)(FILE *, const void *, const void *), const void *a,
                          const void *b) {
  FILE *csv = fopen(path, "w");
  if (csv == NULL) {
    fprintf(stderr, "actx %s: cannot write %s\n", AB_CMD, path);
    return ACTX_EXIT_FAILURE;
  }
  write(csv, a, b);
  fclose(csv);
  printf("CSV:   %s%s\n", path, what);
  return ACTX_EXIT_OK;
}

static void write_run_csv(FILE *f, const void *o, const void *r) { write_csv(f, o, r); }
static void write_creation_csv(FILE *f, const void *c, const void *unused) {
  actx_ab_creation_write_csv(c, f);
}
static void write_models_csv(FILE *f, const void *m, const void *unused) {
  actx_ab_models_write_csv(m, f);
}

int ab_report(const ab_options *o, const ab_results *r, const ab_run_info *info,
              const actx_ab_creation *creation, const actx_ab_models *models) {
  char csv_path[4200], creation_csv_path[4200], models_csv_path[4200], txt_path[4200],
      png_path[4200];
  snprintf(csv_path, sizeof csv_path, "%s/ab.csv", o->out_dir);
  snprintf(creation_csv_path, sizeof creation_csv_path, "%s/ab-creation.csv", o->out_dir);
  snprintf(models_csv_path, sizeof models_csv_path, "%s/ab-models.csv", o->out_dir);
  snprintf(txt_path, sizeof txt_path, "%s/ab.txt", o->out_dir);
  snprintf(png_path, sizeof png_path, "%s/ab.png", o->out_dir);

  actx_table *table = r != NULL ? build_table(o, r) : NULL;
  FILE *txt = fopen(txt_path, "w");
  FILE *outs[2] = {stdout, txt};
  for (int k = 0; k < 2; k++) {
    FILE *out = outs[k];
    if (out == NULL)
      continue;
    print_header(out, o, info);
    if (r != NULL)
      print_run_section(out, o, r, table, info);
    if (creation != NULL)
      actx_ab_creation_print(creation, out);
    if (models != NULL)
      actx_ab_models_print(models, out);
  }
  if (txt != NULL)
    fclose(txt);
  else
    fprintf(stderr, "actx %s: cannot write %s\n", AB_CMD, txt_path);
  actx_table_free(table);

  printf("\nTable: %s\n", txt_path);
  int rc = ACTX_EXIT_OK;
  if (r != NULL && write_csv_file(csv_path, "", write_run_csv, o, r) != ACTX_EXIT_OK)
    rc = ACTX_EXIT_FAILURE;
  if (creation != NULL && write_csv_file(creation_csv_path, " (session creation)",
                                         write_creation_csv, creation, NULL) != ACTX_EXIT_OK)
    rc = ACTX_EXIT_FAILURE;
  if (models != NULL && write_csv_file(models_csv_path, " (real models)", write_models_csv,
                                       models, NULL) != ACTX_EXIT_OK)
    rc = ACTX_EXIT_FAILURE;
  if (!o->no_chart && o->n_models == 0 && r != NULL) {
    char err[512];
    if (write_chart(o, r, png_path, err, sizeof err) == 0)
      printf("Chart: %s\n", png_path);
    else
      printf("Chart: not drawn: %s\n", err);
  }
  return rc;
}
