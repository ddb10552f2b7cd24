/* ab_models.c — the real-model section of `actx ab` (see ab_models.h). */
#define _POSIX_C_SOURCE 200809L
#include "ab_models.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ab_eps.h"
#include "actx.h"
#include "cli.h"
#include "compare.h"
#include "model.h"
#include "model_manifest.h"
#include "stats.h"
#include "table.h"
#include "timed_session.h"

/* Each model x thread count gets about this many seconds of timing, sub-millisecond VAD frames
 * and multi-second 1024x1024 segmentations alike: MAX_REPS reps of batches that share the budget,
 * or, where one run is longer than such a batch, one run per rep and as many reps as fit, at
 * least MIN_REPS. */
#define BUDGET_S 8.0
#define MIN_REPS 3
#define MAX_REPS 21
#define QUICK_BUDGET_S 3.0
#define QUICK_MIN_REPS 2
#define QUICK_MAX_REPS 11
#define MAX_BATCH 100000
/* A model's error: a cache path and ORT's message fit. */
#define ERROR_SIZE 4608

enum { ARM_ORT, ARM_AUTO, ARM_ALL, ARM_NULL, N_ARMS };

typedef struct marm {
  actx_timed_session *ts;
  bool ok;
  char error[sizeof ((actx_ort_error *)0)->message];
  size_t batch;
  double *samples; /* ns per Run, one per rep */
  size_t n_samples;
  actx_stats stats;
  actx_stats ratio; /* rep-by-rep ORT alone / this arm */
  bool has_ratio;
} marm;

/* One arm's outputs against ORT alone's, over every thread count. */
typedef struct check {
  bool done;
  size_t count, differing;
  double max_abs;
  bool nan_mismatch, mismatch; /* mismatch: output count, type or size differs */
} check;

typedef struct model_row {
  long threads;
  long reps;
  double batch_ms; /* 0: one run per rep */
  marm arms[N_ARMS];
} model_row;

typedef struct model_result {
  actx_manifest_model m;
  bool loaded;
  char error[ERROR_SIZE];
  char inputs[512];
  long nodes, on_auto, on_all, expect_auto;
  bool all_timed; /* all claims more than auto: timed as an arm of its own */
  check checks[N_ARMS];
  size_t n_rows;
  model_row rows[ACTX_AB_MODELS_MAX_THREADS];
} model_result;

struct actx_ab_models {
  model_result *results;
  size_t n;
  char manifest[4096];
  char rule[16];
  bool null_control, check_only, quick;
  double budget_s;
  double seconds;
};

typedef struct run_state {
  const actx_ab_models_config *config;
  actx_ab_ep auto_ep, all_ep;
  double budget_s;
  long min_reps, max_reps;
} run_state;

/* ---- Sessions and checks ------------------------------------------------------------------ */

static int create_arm(const run_state *st, const uint8_t *bytes, size_t size, long threads,
                      const actx_ab_ep *ep, const actx_ort_tensor *inputs, size_t n_inputs,
                      marm *a) {
  actx_ab_session_config config;
  actx_ab_session_config_init(&config, ep, threads, st->config->spin);
  actx_ort_error err = {0};
  if (actx_timed_session_create(bytes, size, &config.opt, n_inputs, inputs, &a->ts, &err) != 0) {
    a->ok = false;
    snprintf(a->error, sizeof a->error, "%s", err.message);
    return -1;
  }
  a->ok = true;
  return 0;
}

static void free_arm(marm *a) {
  actx_timed_session_free(a->ts);
  a->ts = NULL;
  free(a->samples);
  a->samples = NULL;
}

/* Nodes of the session in all, and on ep_name. */
static void count_nodes(const marm *a, const char *ep_name, long *total, long *on_ep) {
  actx_ort_assignment *list = NULL;
  size_t n = 0;
  actx_ort_error err = {0};
  *total = -1;
  *on_ep = -1;
  if (!a->ok || actx_ort_session_assignments(actx_timed_session_host(a->ts), &list, &n, &err) != 0)
    return;
  *total = (long)n;
  *on_ep = 0;
  for (size_t i = 0; i < n; i++)
    *on_ep += strcmp(list[i].ep_name, ep_name) == 0;
  free(list);
}

static bool is_floating(int32_t t) {
  return t == ACTX_ELEM_FLOAT || t == ACTX_ELEM_FLOAT16 || t == ACTX_ELEM_BFLOAT16 ||
         t == ACTX_ELEM_DOUBLE;
}

/* b's outputs against a's (ORT alone) into c. */
static void compare_once(const marm *a, const marm *b, check *c) {
  c->done = true;
  const size_t n = actx_timed_session_output_count(a->ts);
  if (n != actx_timed_session_output_count(b->ts)) {
    c->mismatch = true;
    return;
  }
  for (size_t i = 0; i < n; i++) {
    const actx_ort_tensor *x = actx_timed_session_output(a->ts, i);
    const actx_ort_tensor *y = actx_timed_session_output(b->ts, i);
    const size_t elem = actx_elem_size((int32_t)x->elem_type);
    if (x->elem_type != y->elem_type || x->count != y->count || elem == 0) {
      c->mismatch = true;
      continue;
    }
    const unsigned char *px = x->data, *py = y->data;
    for (size_t k = 0; k < x->count; k++) {
      if (memcmp(px + k * elem, py + k * elem, elem) == 0)
        continue;
      c->differing++;
      if (!is_floating((int32_t)x->elem_type)) {
        c->max_abs = INFINITY;
        continue;
      }
      const double u = actx_element_as_double((int32_t)x->elem_type, x->data, k);
      const double v = actx_element_as_double((int32_t)y->elem_type, y->data, k);
      if (isnan(u) != isnan(v))
        c->nan_mismatch = true;
      else if (!isnan(u) && fabs(u - v) > c->max_abs)
        c->max_abs = fabs(u - v);
    }
    c->count += x->count;
  }
}

/* The same, kept in *worst when worse than what an earlier thread count gave. */
static void compare_outputs(const marm *a, const marm *b, check *worst) {
  if (!a->ok || !b->ok)
    return;
  check c = {0};
  compare_once(a, b, &c);
  worst->done = true;
  worst->mismatch = worst->mismatch || c.mismatch;
  worst->nan_mismatch = worst->nan_mismatch || c.nan_mismatch;
  if (c.max_abs > worst->max_abs)
    worst->max_abs = c.max_abs;
  if (c.differing > worst->differing)
    worst->differing = c.differing;
  if (c.count > worst->count)
    worst->count = c.count;
}

static void describe_check(const check *c, char *buf, size_t size) {
  if (!c->done)
    snprintf(buf, size, "-");
  else if (c->mismatch)
    snprintf(buf, size, "outputs differ in count, type or size");
  else if (c->differing == 0)
    snprintf(buf, size, "identical");
  else if (c->nan_mismatch)
    snprintf(buf, size, "%zu differ, NaN vs number", c->differing);
  else
    snprintf(buf, size, "max |d| %.3g (%.1f%% differ)", c->max_abs,
             100.0 * (double)c->differing / (double)(c->count > 0 ? c->count : 1));
}

static bool check_within(const check *c, double bound) {
  if (!c->done)
    return true;
  if (c->mismatch || c->nan_mismatch)
    return false;
  return bound == 0 ? c->differing == 0 : c->max_abs <= bound;
}

/* Why the model fails against its manifest line, or "" (into buf). */
static void failure(const model_result *r, char *buf, size_t size) {
  buf[0] = '\0';
  if (!r->loaded)
    snprintf(buf, size, "%s", r->error);
  else if (r->expect_auto >= 0 && r->on_auto != r->expect_auto)
    snprintf(buf, size, "auto claims %ld nodes, the manifest %ld", r->on_auto, r->expect_auto);
  else if (r->on_all != r->m.all_claims)
    snprintf(buf, size, "all claims %ld nodes, the manifest %ld", r->on_all, r->m.all_claims);
  else if (!check_within(&r->checks[ARM_AUTO], r->m.bound))
    snprintf(buf, size, "auto's outputs past the bound %g", r->m.bound);
  else if (!check_within(&r->checks[ARM_ALL], r->m.bound))
    snprintf(buf, size, "all's outputs past the bound %g", r->m.bound);
  else
    for (size_t t = 0; t < r->n_rows && buf[0] == '\0'; t++)
      for (int k = 0; k < N_ARMS && buf[0] == '\0'; k++)
        if (r->rows[t].arms[k].error[0] != '\0')
          snprintf(buf, size, "%ld threads: %s", r->rows[t].threads, r->rows[t].arms[k].error);
}

/* ---- Timing ------------------------------------------------------------------------------- */

static double time_runs(marm *a, size_t runs) {
  actx_ort_error err = {0};
  const double t0 = actx_now_ns();
  for (size_t k = 0; k < runs; k++)
    if (actx_timed_session_run(a->ts, &err) != 0) {
      a->ok = false;
      snprintf(a->error, sizeof a->error, "%s", err.message);
      return -1;
    }
  return (actx_now_ns() - t0) / (double)runs;
}

static void measure(const run_state *st, model_row *row, const bool timed[N_ARMS]) {
  int active[N_ARMS];
  size_t n_active = 0;
  for (int k = 0; k < N_ARMS; k++)
    if (timed[k] && row->arms[k].ok) {
      row->arms[k].samples = calloc((size_t)st->max_reps, sizeof(double));
      if (row->arms[k].samples != NULL)
        active[n_active++] = k;
    }
  /* Calibration, one run each in order: it also warms each arm after its creation run. */
  double first[N_ARMS] = {0}, slowest = 0;
  for (size_t i = 0; i < n_active; i++) {
    first[i] = time_runs(&row->arms[active[i]], 1);
    if (first[i] > slowest)
      slowest = first[i];
  }
  const double target = n_active > 0 ? st->budget_s * 1e9 / (double)(st->max_reps * n_active) : 0;
  const bool slow = slowest >= target;
  row->batch_ms = slow ? 0 : target / 1e6;
  double per_rep = 0;
  for (size_t i = 0; i < n_active; i++) {
    marm *a = &row->arms[active[i]];
    if (!a->ok)
      continue;
    const double runs = slow || first[i] <= 0 ? 1 : ceil(target / first[i]);
    a->batch = runs > MAX_BATCH ? MAX_BATCH : (size_t)runs;
    per_rep += (double)a->batch * first[i];
    if (slow)
      a->samples[a->n_samples++] = first[i]; /* a run per rep: calibration was rep 0 */
  }
  const double fit = per_rep > 0 ? floor(st->budget_s * 1e9 / per_rep) : st->max_reps;
  row->reps = !slow || fit > st->max_reps ? st->max_reps
              : fit < st->min_reps        ? st->min_reps
                                          : (long)fit;
  if (!slow)
    for (size_t i = 0; i < n_active; i++)
      if (row->arms[active[i]].ok)
        time_runs(&row->arms[active[i]], row->arms[active[i]].batch);
  for (long r = slow ? 1 : 0; r < row->reps; r++)
    for (size_t j = 0; j < n_active; j++) {
      /* alternate the order each rep (A B C, C B A, ...) so drift favours no arm */
      marm *a = &row->arms[active[r % 2 == 0 ? j : n_active - 1 - j]];
      if (!a->ok)
        continue;
      const double t = time_runs(a, a->batch);
      if (t >= 0)
        a->samples[a->n_samples++] = t;
    }
  const marm *base = &row->arms[ARM_ORT];
  double ratios[MAX_REPS > QUICK_MAX_REPS ? MAX_REPS : QUICK_MAX_REPS];
  for (size_t i = 0; i < n_active; i++) {
    marm *a = &row->arms[active[i]];
    if (!a->ok)
      continue;
    actx_stats_compute(a->samples, a->n_samples, &a->stats);
    if (active[i] == ARM_ORT || !base->ok || base->n_samples != a->n_samples ||
        a->n_samples == 0)
      continue;
    for (size_t s = 0; s < a->n_samples; s++)
      ratios[s] = base->samples[s] / a->samples[s];
    actx_stats_compute(ratios, a->n_samples, &a->ratio);
    a->has_ratio = true;
  }
}

/* ---- One model ------------------------------------------------------------------------------ */

static void progress(const run_state *st, const model_result *r, size_t i, size_t n,
                     long threads) {
  if (st->config->tty)
    fprintf(stderr, "\r\033[K[model %zu/%zu] %s threads=%ld", i + 1, n, r->m.name, threads);
}

static void run_model(const run_state *st, model_result *r, size_t index, size_t count) {
  const actx_ab_models_config *cfg = st->config;
  char path[4096];
  actx_manifest_cache_path(&r->m, path, sizeof path);
  uint8_t *bytes = NULL;
  size_t size = 0;
  char err[1024];
  if (actx_read_file(path, &bytes, &size, err, sizeof err) != 0) {
    snprintf(r->error, sizeof r->error, "not fetched (make models): %s", path);
    return;
  }
  if ((long)size != r->m.bytes) {
    snprintf(r->error, sizeof r->error, "%s: %zu bytes, the manifest pins %ld (make models)",
             path, size, r->m.bytes);
    free(bytes);
    return;
  }
  /* The inputs come from a probe session's own input list. */
  actx_ort_session *probe = NULL;
  actx_ort_error oe = {0};
  actx_ort_session_options probe_opt = {.intra_op_threads = 1};
  if (actx_ort_session_create(bytes, size, &probe_opt, &probe, &oe) != 0) {
    snprintf(r->error, sizeof r->error, "ORT alone: %s", oe.message);
    free(bytes);
    return;
  }
  actx_ort_tensor *inputs = NULL;
  size_t n_inputs = 0;
  int made = actx_manifest_make_inputs(&r->m, probe, cfg->seed, &inputs, &n_inputs, err,
                                       sizeof err);
  actx_ort_session_free(probe);
  if (made != 0) {
    snprintf(r->error, sizeof r->error, "%s", err);
    free(bytes);
    return;
  }
  actx_manifest_describe_inputs(&r->m, inputs, n_inputs, r->inputs, sizeof r->inputs);
  r->loaded = true;
  bool all_known = false;
  for (size_t t = 0; t < cfg->n_threads && t < ACTX_AB_MODELS_MAX_THREADS; t++) {
    model_row *row = &r->rows[r->n_rows++];
    row->threads = cfg->threads[t];
    progress(st, r, index, count, row->threads);
    marm *arms = row->arms;
    create_arm(st, bytes, size, row->threads, NULL, inputs, n_inputs, &arms[ARM_ORT]);
    create_arm(st, bytes, size, row->threads, &st->auto_ep, inputs, n_inputs, &arms[ARM_AUTO]);
    if (!all_known || r->all_timed)
      create_arm(st, bytes, size, row->threads, &st->all_ep, inputs, n_inputs, &arms[ARM_ALL]);
    if (cfg->null_control && !cfg->check_only)
      create_arm(st, bytes, size, row->threads, NULL, inputs, n_inputs, &arms[ARM_NULL]);
    if (!all_known && arms[ARM_AUTO].ok && arms[ARM_ALL].ok) {
      long total = -1;
      count_nodes(&arms[ARM_AUTO], st->auto_ep.ep_name, &total, &r->on_auto);
      count_nodes(&arms[ARM_ALL], st->all_ep.ep_name, &r->nodes, &r->on_all);
      /* auto's claims are a subset of all's: as many nodes is the same nodes, the same run */
      r->all_timed = r->on_all != r->on_auto;
      all_known = true;
    }
    compare_outputs(&arms[ARM_ORT], &arms[ARM_AUTO], &r->checks[ARM_AUTO]);
    if (arms[ARM_ALL].ok)
      compare_outputs(&arms[ARM_ORT], &arms[ARM_ALL], &r->checks[ARM_ALL]);
    if (!cfg->check_only) {
      const bool timed[N_ARMS] = {true, true, r->all_timed, cfg->null_control};
      measure(st, row, timed);
    }
    for (int k = 0; k < N_ARMS; k++)
      free_arm(&arms[k]);
    if (!arms[ARM_ORT].ok && !arms[ARM_AUTO].ok)
      break; /* the model does not load: other thread counts would say the same */
  }
  if (all_known && !r->all_timed)
    r->checks[ARM_ALL] = r->checks[ARM_AUTO]; /* the same nodes: the same outputs */
  actx_manifest_inputs_free(inputs, n_inputs);
  free(bytes);
}

actx_ab_models *actx_ab_models_run(const actx_ab_models_config *config, char *err,
                                   size_t err_size) {
  actx_manifest_model *list = NULL;
  size_t n = 0;
  if (actx_manifest_read(config->manifest, &list, &n, err, err_size) != 0)
    return NULL;
  if (config->only != NULL) {
    char *copy = strdup(config->only), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save)) {
      bool known = false;
      for (size_t i = 0; i < n; i++)
        known = known || strcmp(list[i].name, t) == 0;
      if (!known) {
        snprintf(err, err_size, "--models: '%s' is not in %s", t, config->manifest);
        free(copy);
        free(list);
        return NULL;
      }
    }
    free(copy);
  }
  actx_ab_models *out = calloc(1, sizeof *out);
  if (out == NULL || (out->results = calloc(n, sizeof *out->results)) == NULL) {
    snprintf(err, err_size, "out of memory");
    free(out);
    free(list);
    return NULL;
  }
  snprintf(out->manifest, sizeof out->manifest, "%s", config->manifest);
  snprintf(out->rule, sizeof out->rule, "%s", actx_ort_rule_name(actx_get_ort_rule()));
  out->null_control = config->null_control;
  out->check_only = config->check_only;
  out->quick = config->quick;
  run_state st = {.config = config,
                  .budget_s = config->quick ? QUICK_BUDGET_S : BUDGET_S,
                  .min_reps = config->quick ? QUICK_MIN_REPS : MIN_REPS,
                  .max_reps = config->quick ? QUICK_MAX_REPS : MAX_REPS};
  out->budget_s = st.budget_s;
  actx_ab_ep_actx(&st.auto_ep, config->actx_path, "auto");
  actx_ab_ep_actx(&st.all_ep, config->actx_path, "all");
  size_t chosen = 0;
  for (size_t i = 0; i < n; i++)
    chosen += config->only == NULL || actx_list_contains(config->only, list[i].name);
  const double t0 = actx_now_ns();
  for (size_t i = 0; i < n; i++) {
    if (config->only != NULL && !actx_list_contains(config->only, list[i].name))
      continue;
    model_result *r = &out->results[out->n];
    r->m = list[i];
    r->expect_auto = actx_manifest_auto_claims(&list[i], out->rule);
    r->nodes = r->on_auto = r->on_all = -1;
    if (!config->tty)
      fprintf(stderr, "actx ab: model %zu/%zu: %s\n", out->n + 1, chosen, r->m.name);
    run_model(&st, r, out->n, chosen);
    out->n++;
  }
  if (config->tty)
    fprintf(stderr, "\r\033[K");
  out->seconds = (actx_now_ns() - t0) / 1e9;
  free(list);
  return out;
}

void actx_ab_models_free(actx_ab_models *m) {
  if (m == NULL)
    return;
  free(m->results);
  free(m);
}

size_t actx_ab_models_failures(const actx_ab_models *m) {
  size_t n = 0;
  for (size_t i = 0; i < m->n; i++) {
    char why[ERROR_SIZE + 64];
    failure(&m->results[i], why, sizeof why);
    n += why[0] != '\0';
  }
  return n;
}

/* ---- Report --------------------------------------------------------------------------------- */

static void format_ms(const marm *a, char *buf, size_t size) {
  if (!a->ok || a->n_samples == 0) {
    snprintf(buf, size, "%s", a->error[0] != '\0' ? "error" : "-");
    return;
  }
  const double ms = a->stats.median / 1e6;
  snprintf(buf, size, ms >= 100 ? "%.0f" : ms >= 10 ? "%.1f" : ms >= 1 ? "%.2f" : "%.3f", ms);
}

static void format_ratio(const marm *a, char *buf, size_t size, char *spread, size_t spread_size) {
  if (!a->has_ratio) {
    snprintf(buf, size, "-");
    snprintf(spread, spread_size, "-");
    return;
  }
  snprintf(buf, size, "%.2fx", a->ratio.median);
  snprintf(spread, spread_size, "%.2f-%.2f", a->ratio.p10, a->ratio.p90);
}

static void format_claims(long on, long total, long expected, char *buf, size_t size) {
  if (on < 0)
    snprintf(buf, size, "-");
  else if (expected >= 0 && on != expected)
    snprintf(buf, size, "%ld/%ld (manifest %ld)", on, total, expected);
  else
    snprintf(buf, size, "%ld/%ld", on, total);
}

/* Whether column k of the table is shown: the null control's only with --null; with check_only
 * the model's name and the claim and check columns (from index 10), none of the times. */
static bool column_kept(const actx_ab_models *m, size_t k, size_t null_column) {
  if (k == null_column && !m->null_control)
    return false;
  return k == 0 || !m->check_only || k >= 10;
}

static actx_table *build_table(const actx_ab_models *m) {
  const char *headers[] = {"model",   "thr",     "reps",     "batch ms", "ORT ms", "ORT/auto",
                           "p10-p90", "ORT/all", "p10-p90",  "ORT/ORT'", "auto",   "all",
                           "auto check", "all check", "result"};
  enum { N_HEADERS = sizeof headers / sizeof *headers, NULL_COLUMN = 9 };
  const char *kept[N_HEADERS];
  size_t n_cols = 0;
  for (size_t k = 0; k < N_HEADERS; k++)
    if (column_kept(m, k, NULL_COLUMN))
      kept[n_cols++] = headers[k];
  actx_table *t = actx_table_create(n_cols, kept);
  if (t == NULL)
    return NULL;
  for (size_t i = 0; i < m->n; i++) {
    const model_result *r = &m->results[i];
    if (i > 0)
      actx_table_add_break(t);
    char on_auto[64], on_all[64], auto_check[96], all_check[96], why[ERROR_SIZE + 64], result[160];
    format_claims(r->on_auto, r->nodes, r->expect_auto, on_auto, sizeof on_auto);
    format_claims(r->on_all, r->nodes, r->m.all_claims, on_all, sizeof on_all);
    describe_check(&r->checks[ARM_AUTO], auto_check, sizeof auto_check);
    describe_check(&r->checks[ARM_ALL], all_check, sizeof all_check);
    failure(r, why, sizeof why);
    snprintf(result, sizeof result, "%s", why[0] == '\0' ? "ok" : r->loaded ? "FAIL" : "not run");
    const size_t rows = m->check_only || r->n_rows == 0 ? 1 : r->n_rows;
    for (size_t k = 0; k < rows; k++) {
      char thr[24] = "-", reps[24] = "-", batch[32] = "-", ort[32] = "-", ra[32] = "-", ra_sp[48] = "-",
           rl[32] = "-", rl_sp[48] = "-", rn[32] = "-", spare[48];
      if (k < r->n_rows) {
        const model_row *row = &r->rows[k];
        snprintf(thr, sizeof thr, "%ld", row->threads);
        if (row->reps > 0) {
          snprintf(reps, sizeof reps, "%ld", row->reps);
          if (row->batch_ms > 0)
            snprintf(batch, sizeof batch, "%.0f", row->batch_ms);
          else
            snprintf(batch, sizeof batch, "1 run");
        }
        format_ms(&row->arms[ARM_ORT], ort, sizeof ort);
        format_ratio(&row->arms[ARM_AUTO], ra, sizeof ra, ra_sp, sizeof ra_sp);
        format_ratio(&row->arms[ARM_ALL], rl, sizeof rl, rl_sp, sizeof rl_sp);
        if (!r->all_timed && r->loaded) {
          snprintf(rl, sizeof rl, "=auto");
          snprintf(rl_sp, sizeof rl_sp, "-");
        }
        format_ratio(&row->arms[ARM_NULL], rn, sizeof rn, spare, sizeof spare);
      }
      const bool first = k == 0;
      const char *all_cells[N_HEADERS] = {first ? r->m.name : "", thr, reps, batch, ort, ra, ra_sp,
                                          rl, rl_sp, rn, first ? on_auto : "",
                                          first ? on_all : "", first ? auto_check : "",
                                          first ? all_check : "", first ? result : ""};
      const char *cells[N_HEADERS];
      size_t n = 0;
      for (size_t c = 0; c < N_HEADERS; c++)
        if (column_kept(m, c, NULL_COLUMN))
          cells[n++] = all_cells[c];
      actx_table_add_row(t, cells);
    }
  }
  return t;
}

void actx_ab_models_print(const actx_ab_models *m, FILE *out) {
  fprintf(out, "\n==== Real models ====\n");
  fprintf(out, "The models of %s (npm packages and PyPI wheels at pinned versions, sha256-checked), with seeded "
               "inputs of the kind each expects; ORT rule %s.\n",
          m->manifest, m->rule);
  if (!m->check_only)
    fprintf(out, "Per model and intra-op thread count: ORT alone's median Run() time, and the "
                 "median and p10-p90 of the rep-by-rep ratios ORT alone / ORT + actx (> 1: actx "
                 "faster), arms interleaved; about %.0f s per row: %d reps of a batch of runs "
                 "(batch ms), or one run per rep where a run is longer.\n\n",
            m->budget_s, m->quick ? QUICK_MAX_REPS : MAX_REPS);
  else
    fprintf(out, "Checked, not timed: each session created and run once.\n\n");
  actx_table *t = build_table(m);
  if (t != NULL)
    actx_table_print(t, out);
  actx_table_free(t);
  fprintf(out, "\nNotes:\n");
  fprintf(out, "  auto, all: nodes on actx / nodes in the graph under each policy (as ORT "
               "assigned them, before its later fusions)\n");
  fprintf(out, "  auto check, all check: that arm's outputs against ORT alone's, bit for bit; "
               "|d|: the largest absolute difference, float16 outputs included\n");
  if (!m->check_only)
    fprintf(out, "  ORT/all: timed only where all claims more nodes than auto (=auto: the same "
                 "nodes, the same run)%s\n",
            m->null_control ? "; ORT/ORT': a second ORT-alone session, the noise of a ratio "
                              "that should be 1" : "");
  for (size_t i = 0; i < m->n; i++) {
    const model_result *r = &m->results[i];
    char why[ERROR_SIZE + 64];
    failure(r, why, sizeof why);
    if (r->loaded)
      fprintf(out, "  %s (%s@%s %s): %s\n", r->m.name, r->m.package, r->m.version, r->m.member,
              r->inputs);
    if (why[0] != '\0')
      fprintf(out, "  %s: %s\n", r->m.name, why);
  }
  fprintf(out, "  %zu models in %.0f s\n", m->n, m->seconds);
}

void actx_ab_models_write_csv(const actx_ab_models *m, FILE *out) {
  const char *headers[] = {"model", "package", "version", "member", "sha256", "threads", "reps",
                           "nodes", "auto_nodes", "all_nodes", "manifest_auto", "manifest_all",
                           "ort_median_ns", "ort_p10_ns", "ort_p90_ns",
                           "auto_median_ns", "auto_ratio", "auto_ratio_p10", "auto_ratio_p90",
                           "all_median_ns", "all_ratio", "all_ratio_p10", "all_ratio_p90",
                           "null_median_ns", "null_ratio", "null_ratio_p10", "null_ratio_p90",
                           "auto_differing", "auto_max_abs_diff", "all_differing",
                           "all_max_abs_diff", "bound", "result", "error"};
  enum { N = sizeof headers / sizeof *headers };
  actx_csv_write_row(out, N, headers);
  for (size_t i = 0; i < m->n; i++) {
    const model_result *r = &m->results[i];
    char why[ERROR_SIZE + 64];
    failure(r, why, sizeof why);
    const size_t rows = r->n_rows == 0 ? 1 : r->n_rows;
    for (size_t k = 0; k < rows; k++) {
      char v[N][64];
      memset(v, 0, sizeof v);
      const model_row *row = k < r->n_rows ? &r->rows[k] : NULL;
      if (row != NULL) {
        snprintf(v[5], 64, "%ld", row->threads);
        if (row->reps > 0)
          snprintf(v[6], 64, "%ld", row->reps);
      }
      if (r->nodes >= 0) {
        snprintf(v[7], 64, "%ld", r->nodes);
        snprintf(v[8], 64, "%ld", r->on_auto);
        snprintf(v[9], 64, "%ld", r->on_all);
      }
      if (r->expect_auto >= 0)
        snprintf(v[10], 64, "%ld", r->expect_auto);
      snprintf(v[11], 64, "%ld", r->m.all_claims);
      const int arm_cols[N_ARMS] = {12, 15, 19, 23};
      for (int a = 0; row != NULL && a < N_ARMS; a++) {
        const marm *x = &row->arms[a];
        if (!x->ok || x->n_samples == 0)
          continue;
        snprintf(v[arm_cols[a]], 64, "%.1f", x->stats.median);
        if (a == ARM_ORT) {
          snprintf(v[13], 64, "%.1f", x->stats.p10);
          snprintf(v[14], 64, "%.1f", x->stats.p90);
        } else if (x->has_ratio) {
          snprintf(v[arm_cols[a] + 1], 64, "%.4f", x->ratio.median);
          snprintf(v[arm_cols[a] + 2], 64, "%.4f", x->ratio.p10);
          snprintf(v[arm_cols[a] + 3], 64, "%.4f", x->ratio.p90);
        }
      }
      const check *ca = &r->checks[ARM_AUTO], *cl = &r->checks[ARM_ALL];
      if (ca->done) {
        snprintf(v[27], 64, "%zu", ca->differing);
        snprintf(v[28], 64, "%.9g", ca->max_abs);
      }
      if (cl->done) {
        snprintf(v[29], 64, "%zu", cl->differing);
        snprintf(v[30], 64, "%.9g", cl->max_abs);
      }
      snprintf(v[31], 64, "%g", r->m.bound);
      const char *cells[N];
      for (size_t c = 0; c < N; c++)
        cells[c] = v[c];
      cells[0] = r->m.name;
      cells[1] = r->m.package;
      cells[2] = r->m.version;
      cells[3] = r->m.member;
      cells[4] = r->m.sha256;
      cells[32] = why[0] == '\0' ? "ok" : r->loaded ? "fail" : "not run";
      cells[33] = why;
      actx_csv_write_row(out, N, cells);
    }
  }
}
