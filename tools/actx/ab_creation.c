/* ab_creation.c — the session-creation section of `actx ab` (see ab_creation.h). */
#define _POSIX_C_SOURCE 200809L
#include "ab_creation.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ab_cases.h"
#include "stats.h"
#include "table.h"

/* Sessions are created with one intra-op thread: creating a pool is the same work in every arm,
 * and its threads starting up would only add noise. */
#define CREATION_THREADS 1
/* An arm whose untimed creation takes longer than this is timed once, not `reps` times, and not
 * at the larger sizes; nor is one whose growth so far projects past it at the next size: a
 * superlinear EP must not hold up the whole benchmark (measured: actx with policy auto on a
 * chain whose every third node it declines, 0.8 s at 1000 nodes, 48 s at 3000). */
#define SLOW_NS 2e9
/* The growth exponent assumed from a single smaller size: quadratic, the least superlinear
 * growth worth guarding against. */
#define ASSUMED_EXPONENT 2.0

typedef struct creation_arm {
  char label[32];
  bool alone; /* ORT alone: no EP */
  actx_ab_ep ep;
} creation_arm;

typedef struct creation_cell {
  bool ok;
  bool single;  /* timed once: the creation was slow */
  bool skipped; /* not timed: a smaller size was slow */
  actx_stats stats; /* ns */
  long on_ep;       /* nodes on the arm's EP; -1: unknown */
  char error[sizeof ((actx_ort_error *)0)->message + 64];
} creation_cell;

typedef struct creation_row {
  actx_ab_chain chain;
  size_t nodes;
  creation_cell cells[ACTX_AB_CREATION_MAX_ARMS];
} creation_row;

struct actx_ab_creation {
  long reps;
  size_t n_arms;
  creation_arm arms[ACTX_AB_CREATION_MAX_ARMS];
  size_t n_rows;
  creation_row *rows;
};

static void add_arms(actx_ab_creation *c, const actx_ab_creation_config *cfg) {
  creation_arm *a = &c->arms[c->n_arms++];
  snprintf(a->label, sizeof a->label, "ORT");
  a->alone = true;
  static const char *const policies[] = {"all", "auto"};
  for (int p = 0; p < 2; p++) {
    a = &c->arms[c->n_arms++];
    snprintf(a->label, sizeof a->label, "actx-%s", policies[p]);
    actx_ab_ep_actx(&a->ep, cfg->actx_path, policies[p]);
  }
  for (size_t i = 0; i < cfg->n_peers && c->n_arms < ACTX_AB_CREATION_MAX_ARMS; i++) {
    a = &c->arms[c->n_arms++];
    snprintf(a->label, sizeof a->label, "%s", cfg->peers[i].label);
    a->ep = cfg->peers[i];
  }
}

/* Creates one session of the model for arm a; its creation time in *ns. */
static int create_once(const creation_arm *a, const uint8_t *model, size_t size,
                       actx_ort_session **out, double *ns, actx_ort_error *err) {
  actx_ab_session_config config;
  actx_ab_session_config_init(&config, a->alone ? NULL : &a->ep, CREATION_THREADS, false);
  /* every arm records the assignment, so that every arm does the same bookkeeping */
  config.opt.record_assignments = true;
  const double t0 = actx_now_ns();
  const int rc = actx_ort_session_create(model, size, &config.opt, out, err);
  *ns = actx_now_ns() - t0;
  return rc;
}

/* Whether arm k's times at the smaller sizes of row's chain (the rows before it) project past
 * SLOW_NS at row's size: then why, in why. */
static void project(const actx_ab_creation *c, const creation_row *row, size_t k, char *why,
                    size_t why_size) {
  const creation_row *prev = NULL, *prev2 = NULL;
  for (const creation_row *r = c->rows; r < row; r++)
    if (r->chain == row->chain && r->cells[k].ok && r->nodes < row->nodes) {
      prev2 = prev;
      prev = r;
    }
  if (prev == NULL)
    return;
  double exponent = ASSUMED_EXPONENT;
  if (prev2 != NULL && prev2->cells[k].stats.median > 0)
    exponent = log(prev->cells[k].stats.median / prev2->cells[k].stats.median) /
               log((double)prev->nodes / (double)prev2->nodes);
  if (exponent < 1)
    exponent = 1;
  const double projected =
      prev->cells[k].stats.median * pow((double)row->nodes / (double)prev->nodes, exponent);
  if (projected > SLOW_NS)
    snprintf(why, why_size, "%.1f s projected (%.1f ms at %zu nodes, growing as nodes^%.1f)",
             projected / 1e9, prev->cells[k].stats.median / 1e6, prev->nodes, exponent);
}

static void time_row(const actx_ab_creation *c, const uint8_t *model, size_t size,
                     creation_row *row, char (*slow)[160]) {
  double *samples[ACTX_AB_CREATION_MAX_ARMS] = {0};
  size_t n_samples[ACTX_AB_CREATION_MAX_ARMS] = {0};
  size_t active[ACTX_AB_CREATION_MAX_ARMS], n_active = 0;
  for (size_t k = 0; k < c->n_arms; k++) {
    creation_cell *cell = &row->cells[k];
    const creation_arm *a = &c->arms[k];
    cell->on_ep = -1;
    if (slow[k][0] == '\0')
      project(c, row, k, slow[k], sizeof slow[k]);
    if (slow[k][0] != '\0') {
      cell->skipped = true;
      snprintf(cell->error, sizeof cell->error, "not timed: %.160s", slow[k]);
      continue;
    }
    samples[k] = calloc((size_t)c->reps + 1, sizeof *samples[k]);
    actx_ort_session *s = NULL;
    actx_ort_error err = {0};
    double ns = 0;
    if (samples[k] == NULL) {
      snprintf(cell->error, sizeof cell->error, "out of memory");
      continue;
    }
    if (create_once(a, model, size, &s, &ns, &err) != 0) {
      snprintf(cell->error, sizeof cell->error, "%s", err.message);
      continue;
    }
    cell->ok = true;
    if (!a->alone)
      cell->on_ep = actx_ort_count_nodes_on(s, a->ep.ep_name, NULL);
    actx_ort_session_free(s);
    if (ns > SLOW_NS) {
      cell->single = true;
      samples[k][n_samples[k]++] = ns;
      snprintf(slow[k], sizeof slow[k], "%.1f s at %zu nodes", ns / 1e9, row->nodes);
      continue;
    }
    active[n_active++] = k;
  }
  for (long r = 0; r < c->reps; r++) {
    for (size_t j = 0; j < n_active; j++) {
      /* alternate the order each rep so that drift favours no arm */
      const size_t k = active[r % 2 == 0 ? j : n_active - 1 - j];
      creation_cell *cell = &row->cells[k];
      if (!cell->ok)
        continue;
      actx_ort_session *s = NULL;
      actx_ort_error err = {0};
      double ns = 0;
      if (create_once(&c->arms[k], model, size, &s, &ns, &err) != 0) {
        cell->ok = false;
        snprintf(cell->error, sizeof cell->error, "%s", err.message);
        continue;
      }
      actx_ort_session_free(s);
      samples[k][n_samples[k]++] = ns;
    }
  }
  for (size_t k = 0; k < c->n_arms; k++) {
    if (row->cells[k].ok)
      actx_stats_compute(samples[k], n_samples[k], &row->cells[k].stats);
    free(samples[k]);
  }
}

actx_ab_creation *actx_ab_creation_run(const actx_ab_creation_config *cfg) {
  actx_ab_creation *c = calloc(1, sizeof *c);
  const size_t n_sizes = cfg->n_sizes < ACTX_AB_CREATION_MAX_SIZES ? cfg->n_sizes
                                                                   : ACTX_AB_CREATION_MAX_SIZES;
  if (c == NULL || (c->rows = calloc(ACTX_AB_N_CHAINS * n_sizes + 1, sizeof *c->rows)) == NULL) {
    free(c);
    return NULL;
  }
  c->reps = cfg->reps;
  add_arms(c, cfg);
  const double started = actx_now_ns();
  for (int ch = 0; ch < ACTX_AB_N_CHAINS; ch++) {
    char slow[ACTX_AB_CREATION_MAX_ARMS][160] = {{0}};
    for (size_t s = 0; s < n_sizes; s++) {
      creation_row *row = &c->rows[c->n_rows++];
      row->chain = (actx_ab_chain)ch;
      uint8_t *model = NULL;
      size_t size = 0;
      char err[512];
      if (actx_ab_build_chain(row->chain, (size_t)cfg->nodes[s], &model, &size, &row->nodes, err,
                              sizeof err) != 0) {
        for (size_t k = 0; k < c->n_arms; k++)
          snprintf(row->cells[k].error, sizeof row->cells[k].error, "%s", err);
        continue;
      }
      fprintf(stderr, cfg->tty ? "\r\033[K[%.0fs] session creation: %s, %zu nodes"
                               : "actx ab: [%.0f s] session creation: %s, %zu nodes\n",
              (actx_now_ns() - started) / 1e9, actx_ab_chain_name(row->chain), row->nodes);
      time_row(c, model, size, row, slow);
      free(model);
    }
  }
  if (cfg->tty)
    fprintf(stderr, "\r\033[K");
  return c;
}

void actx_ab_creation_free(actx_ab_creation *c) {
  if (c == NULL)
    return;
  free(c->rows);
  free(c);
}

/* ---- Output ------------------------------------------------------------------------------ */

static void format_ms(double ns, char *buf, size_t size) {
  const double ms = ns / 1e6;
  snprintf(buf, size, ms >= 100 ? "%.0f" : ms >= 10 ? "%.1f" : "%.2f", ms);
}

/* ms, or why not, for a cell; a trailing '*' marks a single run. */
static void cell_time(const creation_cell *cell, char *buf, size_t size) {
  if (cell->skipped) {
    snprintf(buf, size, "skipped");
  } else if (!cell->ok) {
    snprintf(buf, size, "error");
  } else {
    format_ms(cell->stats.median, buf, size);
    if (cell->single)
      strncat(buf, "*", size - strlen(buf) - 1);
  }
}

void actx_ab_creation_print(const actx_ab_creation *c, FILE *out) {
  fprintf(out, "\n==== Session creation ====\n");
  fprintf(out, "Chains of claimable nodes (%dx%d float32 tensors); ms per session created, "
               "median of %ld, arms interleaved, after one untimed creation; %d intra-op "
               "thread. X/ORT: against ORT alone (target: within 2x, and linear in the nodes); "
               "us/node: the time over the nodes; on EP: nodes ORT assigned to the arm's EP.\n\n",
          ACTX_AB_CHAIN_ROWS, ACTX_AB_CHAIN_COLS, c->reps, CREATION_THREADS);
  const char *headers[ACTX_TABLE_MAX_COLUMNS];
  char names[ACTX_TABLE_MAX_COLUMNS][48];
  size_t n_cols = 0;
  headers[n_cols++] = "chain";
  headers[n_cols++] = "nodes";
  for (size_t k = 0; k < c->n_arms && n_cols + 4 <= ACTX_TABLE_MAX_COLUMNS; k++) {
    const char *l = c->arms[k].label;
    /* ORT alone has no ratio to itself and no EP */
    static const char *const formats[4] = {"%s ms", "%s/ORT", "%s us/node", "%s on EP"};
    for (int f = 0; f < 4; f++) {
      if (k == 0 && (f == 1 || f == 3))
        continue;
      snprintf(names[n_cols], sizeof names[0], formats[f], l);
      headers[n_cols] = names[n_cols];
      n_cols++;
    }
  }
  actx_table *t = actx_table_create(n_cols, headers);
  if (t == NULL) {
    fprintf(out, "(out of memory)\n");
    return;
  }
  char cells[ACTX_TABLE_MAX_COLUMNS][64];
  for (size_t i = 0; i < c->n_rows; i++) {
    const creation_row *row = &c->rows[i];
    if (i > 0 && row->chain != c->rows[i - 1].chain)
      actx_table_add_break(t);
    const creation_cell *ort = &row->cells[0];
    size_t n = 0;
    snprintf(cells[n++], sizeof cells[0], "%s", actx_ab_chain_name(row->chain));
    snprintf(cells[n++], sizeof cells[0], "%zu", row->nodes);
    for (size_t k = 0; k < c->n_arms && n + 4 <= ACTX_TABLE_MAX_COLUMNS; k++) {
      const creation_cell *cell = &row->cells[k];
      const bool timed = cell->ok && row->nodes > 0;
      cell_time(cell, cells[n++], sizeof cells[0]);
      if (k > 0) {
        if (timed && ort->ok && ort->stats.median > 0)
          snprintf(cells[n++], sizeof cells[0], "%.2fx", cell->stats.median / ort->stats.median);
        else
          snprintf(cells[n++], sizeof cells[0], "-");
      }
      if (timed)
        snprintf(cells[n++], sizeof cells[0], "%.2f",
                 cell->stats.median / 1e3 / (double)row->nodes);
      else
        snprintf(cells[n++], sizeof cells[0], "-");
      if (k > 0) {
        if (cell->on_ep >= 0)
          snprintf(cells[n++], sizeof cells[0], "%ld", cell->on_ep);
        else
          snprintf(cells[n++], sizeof cells[0], "-");
      }
    }
    const char *row_cells[ACTX_TABLE_MAX_COLUMNS];
    for (size_t k = 0; k < n; k++)
      row_cells[k] = cells[k];
    actx_table_add_row(t, row_cells);
  }
  actx_table_print(t, out);
  actx_table_free(t);

  /* Linear means each added node costs the same: the cost per added node of the last step of
   * sizes against that of the first. */
  fprintf(out,
          "\nCost per added node (us), first step of sizes -> last (growth; 1.00x: linear):\n");
  for (int ch = 0; ch < ACTX_AB_N_CHAINS; ch++) {
    const creation_row *first = NULL, *second = NULL, *before_last = NULL, *last = NULL;
    for (size_t i = 0; i < c->n_rows; i++) {
      if (c->rows[i].chain != (actx_ab_chain)ch)
        continue;
      if (first == NULL)
        first = &c->rows[i];
      else if (second == NULL)
        second = &c->rows[i];
      before_last = last;
      last = &c->rows[i];
    }
    if (second == NULL)
      continue;
    fprintf(out, "  %-14s", actx_ab_chain_name((actx_ab_chain)ch));
    for (size_t k = 0; k < c->n_arms; k++) {
      const creation_cell *a0 = &first->cells[k], *a1 = &second->cells[k];
      const creation_cell *b0 = &before_last->cells[k], *b1 = &last->cells[k];
      fprintf(out, "%s%s ", k ? ", " : "", c->arms[k].label);
      if (!a0->ok || !a1->ok || !b0->ok || !b1->ok || second->nodes <= first->nodes ||
          last->nodes <= before_last->nodes) {
        fprintf(out, "-");
        continue;
      }
      const double step0 = (a1->stats.median - a0->stats.median) / 1e3 /
                           (double)(second->nodes - first->nodes);
      const double step1 = (b1->stats.median - b0->stats.median) / 1e3 /
                           (double)(last->nodes - before_last->nodes);
      if (second == last) { /* two sizes: one step, no growth to tell */
        fprintf(out, "%.2f", step0);
        continue;
      }
      fprintf(out, "%.2f -> %.2f", step0, step1);
      if (step0 > 0)
        fprintf(out, " (%.2fx)", step1 / step0);
    }
    fputc('\n', out);
  }

  bool noted = false;
  for (size_t i = 0; i < c->n_rows; i++)
    for (size_t k = 0; k < c->n_arms; k++) {
      const creation_cell *cell = &c->rows[i].cells[k];
      if (cell->ok && !cell->single)
        continue;
      if (!noted)
        fprintf(out, "Notes on session creation:\n");
      noted = true;
      if (cell->single)
        fprintf(out, "  %s, %zu nodes, %s: * one creation only (over %.0f s); larger sizes "
                     "not timed\n", actx_ab_chain_name(c->rows[i].chain), c->rows[i].nodes,
                c->arms[k].label, SLOW_NS / 1e9);
      else
        fprintf(out, "  %s, %zu nodes, %s: %s\n", actx_ab_chain_name(c->rows[i].chain),
                c->rows[i].nodes, c->arms[k].label, cell->error);
    }
}

void actx_ab_creation_write_csv(const actx_ab_creation *c, FILE *out) {
  static const char *const headers[] = {"chain", "nodes", "arm", "ep", "policy", "median_ms",
                                        "p10_ms", "p90_ms", "runs", "ratio_to_ort",
                                        "us_per_node", "nodes_on_ep", "error"};
  const size_t n_cols = sizeof headers / sizeof *headers;
  actx_csv_write_row(out, n_cols, headers);
  for (size_t i = 0; i < c->n_rows; i++) {
    const creation_row *row = &c->rows[i];
    const creation_cell *ort = &row->cells[0];
    for (size_t k = 0; k < c->n_arms; k++) {
      const creation_cell *cell = &row->cells[k];
      const creation_arm *a = &c->arms[k];
      char v[8][32];
      memset(v, 0, sizeof v);
      snprintf(v[0], sizeof v[0], "%zu", row->nodes);
      if (cell->ok) {
        snprintf(v[1], sizeof v[1], "%.4f", cell->stats.median / 1e6);
        snprintf(v[2], sizeof v[2], "%.4f", cell->stats.p10 / 1e6);
        snprintf(v[3], sizeof v[3], "%.4f", cell->stats.p90 / 1e6);
        snprintf(v[4], sizeof v[4], "%zu", cell->stats.n);
        if (ort->ok && ort->stats.median > 0)
          snprintf(v[5], sizeof v[5], "%.4f", cell->stats.median / ort->stats.median);
        if (row->nodes > 0)
          snprintf(v[6], sizeof v[6], "%.4f", cell->stats.median / 1e3 / (double)row->nodes);
      }
      if (cell->on_ep >= 0)
        snprintf(v[7], sizeof v[7], "%ld", cell->on_ep);
      const char *policy = a->alone ? NULL : actx_ab_ep_option(&a->ep, "policy");
      const char *cells[] = {actx_ab_chain_name(row->chain), v[0], a->label,
                             a->alone ? "" : a->ep.ep_name, policy != NULL ? policy : "",
                             v[1], v[2], v[3], v[4], v[5], v[6], v[7],
                             cell->ok ? "" : cell->error};
      actx_csv_write_row(out, n_cols, cells);
    }
  }
}
