/* ab_measure.c — one cell of `actx ab`'s Run() table: its sessions, their interleaved timing
 * and ratios, the output checks and the optional profile (see ab.h).
 *
 * Every arm gets the same model (arm A its own with --dtype-a), options and input buffers, and
 * its outputs go to buffers created once (timed_session.c), so the clock sees Run() and nothing
 * of ours. After warm-ups the arms are timed in alternating order (A B, B A, ...), each rep a
 * batch of runs lasting about --batch-ms; the samples give median, p10, p90 per arm. The ratio
 * A / B (> 1: B faster) is taken rep by rep, from the two batches that ran next to each other,
 * and summarised as the median and p10-p90 of those ratios: load that comes and goes on a
 * shared machine hits both batches of a rep alike and cancels out of their ratio. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ab.h"
#include "timed_session.h"

#define ORT_CPU_EP "CPUExecutionProvider"
/* A batch never runs more than this many times, however fast one run is. */
#define MAX_BATCH 100000
/* Runs timed to size the batches (the fastest counts). */
#define CALIBRATION_RUNS 3

ab_cell *ab_new_cell(ab_results *r) {
  if (r->n == r->capacity) {
    size_t capacity = r->capacity ? r->capacity * 2 : 128;
    ab_cell *grown = realloc(r->cells, capacity * sizeof *grown);
    if (grown == NULL)
      return NULL;
    r->cells = grown;
    r->capacity = capacity;
  }
  ab_cell *c = &r->cells[r->n++];
  memset(c, 0, sizeof *c);
  return c;
}

const actx_dtype ab_dtypes[AB_N_DTYPES] = {ACTX_F32, ACTX_F16, ACTX_BF16};

bool ab_arm_a_is_custom(const ab_options *o) {
  return o->baseline != NULL || o->threads_a > 0 || o->dtype_a != NULL;
}

/* ---- Sessions ------------------------------------------------------------------------------ */

static void arm_free(ab_arm *a) {
  actx_timed_session_free(a->ts);
  free(a->samples);
  a->ts = NULL;
  a->samples = NULL;
}

static void arm_error(ab_arm *a, const actx_ort_error *err) {
  a->ok = false;
  a->not_implemented = err->code == ORT_NOT_IMPLEMENTED;
  snprintf(a->error, sizeof a->error, "%s", err->message);
}

/* Creates the arm's session: ORT alone (ep NULL) or ORT + ep; profiled into
 * <profile_prefix>_<date>.json when that is not NULL. */
static int create_arm(const ab_options *o, const ab_model_ref *in, long threads,
                      const actx_ab_ep *ep, const char *profile_prefix, ab_arm *a) {
  actx_ab_session_config config;
  actx_ab_session_config_init(&config, ep, threads, o->spin);
  config.opt.profile_prefix = profile_prefix;
  actx_ort_error err = {0};
  if (actx_timed_session_create(in->model, in->model_size, &config.opt, in->n_inputs, in->inputs,
                                &a->ts, &err) != 0) {
    arm_error(a, &err);
    return -1;
  }
  a->ok = true;
  return 0;
}

/* "actx", "CPU", or "actx 3/5, CPU 2/5" for the nodes of an arm; *on_ep: how many ran on
 * ep_name. */
static void summarise_assignment(const actx_ort_session *s, const char *ep_name, char *buf,
                                 size_t size, long *on_ep) {
  actx_ort_assignment *list = NULL;
  size_t n = 0;
  actx_ort_error err = {0};
  *on_ep = 0;
  if (actx_ort_session_assignments(s, &list, &n, &err) != 0) {
    snprintf(buf, size, "unknown");
    return;
  }
  const char *names[8];
  size_t counts[8], n_names = 0;
  for (size_t i = 0; i < n; i++) {
    const char *ep = strcmp(list[i].ep_name, ORT_CPU_EP) == 0 ? "CPU" : list[i].ep_name;
    if (strcmp(list[i].ep_name, ep_name) == 0)
      (*on_ep)++;
    size_t k = 0;
    while (k < n_names && strcmp(names[k], ep) != 0)
      k++;
    if (k == n_names && n_names < 8) {
      names[n_names] = ep;
      counts[n_names++] = 0;
    }
    if (k < n_names)
      counts[k]++;
  }
  if (n_names == 1) {
    snprintf(buf, size, "%s", names[0]);
  } else {
    int used = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < n_names && used >= 0 && (size_t)used < size; k++)
      used += snprintf(buf + used, size - (size_t)used, "%s%s %zu/%zu", k ? ", " : "", names[k],
                       counts[k], n);
  }
  free(list); /* names pointed into it; buf holds the copy */
}

/* Arm b's outputs against ORT alone's (a), or against libactx when ORT alone could not run. */
static void check_outputs(const ab_arm *a, const ab_cell_input *in, ab_arm *b) {
  if (!b->ok)
    return;
  if (a->ok) {
    size_t n = actx_timed_session_output_count(a->ts);
    if (n != actx_timed_session_output_count(b->ts)) {
      snprintf(b->check, sizeof b->check, "output count differs");
      b->compared = true;
      b->cmp.differing = 1;
      return;
    }
    b->reference = "ORT";
    b->compared = true;
    memset(&b->cmp, 0, sizeof b->cmp);
    for (size_t i = 0; i < n; i++) {
      const actx_ort_tensor *x = actx_timed_session_output(a->ts, i);
      const actx_ort_tensor *y = actx_timed_session_output(b->ts, i);
      actx_compare one;
      if (x->elem_type != y->elem_type || x->count != y->count ||
          actx_compare_tensors((int32_t)x->elem_type, x->data, y->data, x->count, 0, 0, &one) !=
              0) {
        snprintf(b->check, sizeof b->check, "output %zu: type or size differs", i);
        b->cmp.differing += x->count > 0 ? x->count : 1;
        return;
      }
      b->cmp.count += one.count;
      b->cmp.differing += one.differing;
      b->cmp.nan_mismatch = b->cmp.nan_mismatch || one.nan_mismatch;
      if (one.max_ulp > b->cmp.max_ulp)
        b->cmp.max_ulp = one.max_ulp;
    }
    actx_compare_describe(&b->cmp, b->check, sizeof b->check);
    return;
  }
  if (in->reference == NULL || actx_timed_session_output_count(b->ts) != 1) {
    snprintf(b->check, sizeof b->check, "no reference");
    return;
  }
  const actx_ort_tensor *y = actx_timed_session_output(b->ts, 0);
  void *expected = malloc(y->bytes > 0 ? y->bytes : 1);
  char err[256];
  if (expected == NULL || y->count != in->reference->elements ||
      actx_ab_reference(in->reference, expected, err, sizeof err) != 0) {
    snprintf(b->check, sizeof b->check, "libactx reference failed");
    free(expected);
    return;
  }
  b->reference = "libactx";
  b->compared = true;
  actx_compare_tensors((int32_t)y->elem_type, expected, y->data, y->count, 0, 0, &b->cmp);
  char what[64];
  actx_compare_describe(&b->cmp, what, sizeof what);
  snprintf(b->check, sizeof b->check, "%s vs libactx", what);
  free(expected);
}

/* ---- Timing --------------------------------------------------------------------------------- */

/* Mean ns per Run over `runs` runs; negative on error (message in a->error). */
static double time_runs(ab_arm *a, size_t runs) {
  actx_ort_error err = {0};
  double t0 = actx_now_ns();
  for (size_t k = 0; k < runs; k++) {
    if (actx_timed_session_run(a->ts, &err) != 0) {
      arm_error(a, &err);
      return -1;
    }
  }
  return (actx_now_ns() - t0) / (double)runs;
}

static void calibrate(const ab_options *o, ab_arm *a) {
  double best = INFINITY;
  for (int i = 0; i < CALIBRATION_RUNS && a->ok; i++) {
    double t = time_runs(a, 1);
    if (t >= 0 && t < best)
      best = t;
  }
  if (!a->ok)
    return;
  double target = o->batch_ms * 1e6;
  double runs = best > 0 ? ceil(target / best) : MAX_BATCH;
  a->batch = runs < 1 ? 1 : runs > MAX_BATCH ? MAX_BATCH : (size_t)runs;
}

static void measure(const ab_options *o, ab_cell *c) {
  ab_arm_kind active[N_ARMS];
  size_t n_active = 0;
  for (int k = 0; k < N_ARMS; k++) {
    ab_arm *a = &c->arms[k];
    if (!a->ok)
      continue;
    a->samples = calloc((size_t)o->reps, sizeof *a->samples);
    if (a->samples == NULL) {
      a->ok = false;
      snprintf(a->error, sizeof a->error, "out of memory");
      continue;
    }
    calibrate(o, a);
    if (a->ok)
      active[n_active++] = (ab_arm_kind)k;
  }
  for (long w = 0; w < o->warmup; w++)
    for (size_t i = 0; i < n_active; i++)
      if (c->arms[active[i]].ok)
        time_runs(&c->arms[active[i]], c->arms[active[i]].batch);
  for (long r = 0; r < o->reps; r++) {
    for (size_t j = 0; j < n_active; j++) {
      /* alternate the order each rep (A B, B A, ...) so drift favours no ab_arm */
      size_t i = r % 2 == 0 ? j : n_active - 1 - j;
      ab_arm *a = &c->arms[active[i]];
      if (!a->ok)
        continue;
      double t = time_runs(a, a->batch);
      if (t >= 0)
        a->samples[a->n_samples++] = t;
    }
  }
  for (int k = 0; k < N_ARMS; k++)
    if (c->arms[k].ok)
      actx_stats_compute(c->arms[k].samples, c->arms[k].n_samples, &c->arms[k].stats);
  /* rep-by-rep ratios: the spread of the ratio itself */
  double *ratios = calloc((size_t)o->reps + 1, sizeof *ratios);
  const ab_arm *a = &c->arms[ARM_ORT];
  for (int other = ARM_ACTX; ratios != NULL && other < N_ARMS; other++) {
    ab_arm *b = &c->arms[other];
    if (!a->ok || !b->ok || a->n_samples != b->n_samples || a->n_samples == 0)
      continue;
    for (size_t r = 0; r < a->n_samples; r++)
      ratios[r] = a->samples[r] / b->samples[r];
    actx_stats_compute(ratios, a->n_samples, &b->ratio);
    b->has_ratio = true;
  }
  free(ratios);
}

static void summarise_arm(ab_arm *a, const actx_ab_ep *ep, long *on_ep) {
  summarise_assignment(actx_timed_session_host(a->ts), ep->ep_name, a->ep_summary,
                       sizeof a->ep_summary, on_ep);
}


/* ---- Profiles ------------------------------------------------------------------------------ */

/* The text after `key` in one event line of ORT's profile ("dur" :123, "name" :"..."). */
static bool profile_field(const char *line, const char *key, char *buf, size_t size) {
  const char *p = strstr(line, key);
  if (p == NULL)
    return false;
  p += strlen(key);
  while (*p == ' ' || *p == ':')
    p++;
  const bool quoted = *p == '"';
  if (quoted)
    p++;
  size_t n = 0;
  while (p[n] != '\0' && (quoted ? p[n] != '"' : (p[n] != ',' && p[n] != '}')) && n + 1 < size)
    n++;
  memcpy(buf, p, n);
  buf[n] = '\0';
  return true;
}

/* The GELU part of a run: ORT's fused GELU kernels, the blocks' nodes named gelu_*, and every
 * node the EP under test runs. */
static bool is_gelu_event(const char *name, const char *op, const char *provider,
                          const char *ep_name) {
  static const char *const fused[] = {"Gelu", "BiasGelu", "FastGelu", "QuickGelu"};
  if (strcmp(provider, ep_name) == 0)
    return true;
  for (size_t i = 0; i < sizeof fused / sizeof fused[0]; i++)
    if (strcmp(op, fused[i]) == 0)
      return true;
  return strncmp(name, ACTX_AB_GELU_PREFIX, strlen(ACTX_AB_GELU_PREFIX)) == 0;
}

/* Per profiled run (the first left out: it allocates), the GELU part's and the whole run's
 * microseconds, from one event per line where a run's node events precede its model_run. */
static size_t read_profile(const char *path, const char *ep_name, double *part_us,
                           double *run_us) {
  FILE *f = fopen(path, "r");
  if (f == NULL)
    return 0;
  char line[8192], value[256], name[256], op[128], provider[64];
  double pending = 0;
  size_t seen = 0, runs = 0;
  while (fgets(line, sizeof line, f) != NULL) {
    if (!profile_field(line, "\"dur\"", value, sizeof value))
      continue;
    const double dur = atof(value);
    if (strstr(line, "\"cat\" : \"Node\"") != NULL) {
      if (!profile_field(line, "\"name\"", name, sizeof name))
        name[0] = '\0';
      if (!profile_field(line, "\"op_name\"", op, sizeof op))
        op[0] = '\0';
      if (!profile_field(line, "\"provider\"", provider, sizeof provider))
        provider[0] = '\0';
      if (is_gelu_event(name, op, provider, ep_name))
        pending += dur;
    } else if (profile_field(line, "\"name\"", name, sizeof name) &&
               strcmp(name, "model_run") == 0) {
      if (seen++ > 0 && runs < AB_MAX_PROFILE_RUNS) {
        run_us[runs] = dur;
        part_us[runs] = pending;
        runs++;
      }
      pending = 0;
    }
  }
  fclose(f);
  return runs;
}

static double median(const double *v, size_t n) {
  actx_stats s;
  actx_stats_compute(v, n, &s);
  return s.median;
}

/* Profiles arm A's configuration and ORT + actx's (ep_b), their runs interleaved (A B, B A, ...)
 * so that the machine's drifts hit both alike. */
static void profile_cell(const ab_options *o, const ab_cell_input *in, ab_cell *c,
                         const actx_ab_ep *ep_a, long threads_a, const actx_ab_ep *ep_b) {
  ab_profile *pr = &c->profile;
  ab_arm arms[2] = {{0}};
  char prefix[2][4200];
  snprintf(prefix[0], sizeof prefix[0], "%s/ab-profile-a", o->out_dir);
  snprintf(prefix[1], sizeof prefix[1], "%s/ab-profile-b", o->out_dir);
  create_arm(o, &in->a, threads_a, ep_a, prefix[0], &arms[0]);
  create_arm(o, &in->b, c->threads, ep_b, prefix[1], &arms[1]);
  const size_t runs = (size_t)o->profile_runs; /* --profile's bound: AB_MAX_PROFILE_RUNS */
  for (size_t r = 0; r < runs && arms[0].ok && arms[1].ok; r++)
    for (int j = 0; j < 2; j++)
      time_runs(&arms[r % 2 ? 1 - j : j], 1);
  double *v = malloc(3 * AB_MAX_PROFILE_RUNS * sizeof *v);
  pr->ok = v != NULL;
  if (v == NULL)
    snprintf(pr->error, sizeof pr->error, "out of memory");
  for (int k = 0; k < 2; k++) {
    char path[4200];
    actx_ort_error err = {0};
    if (v == NULL) {
      /* said above */
    } else if (!arms[k].ok) {
      snprintf(pr->error, sizeof pr->error, "%s", arms[k].error);
      pr->ok = false;
    } else if (actx_timed_session_end_profiling(arms[k].ts, path, sizeof path, &err) != 0) {
      snprintf(pr->error, sizeof pr->error, "%s", err.message);
      pr->ok = false;
    } else {
      double *part = v, *run = v + AB_MAX_PROFILE_RUNS, *share = v + 2 * AB_MAX_PROFILE_RUNS;
      const size_t n = read_profile(path, ep_b->ep_name, part, run);
      remove(path);
      if (n == 0 && pr->ok) {
        snprintf(pr->error, sizeof pr->error, "no runs in the profile");
        pr->ok = false;
      }
      for (size_t i = 0; i < n; i++)
        share[i] = run[i] > 0 ? part[i] / run[i] : 0;
      pr->runs = n;
      pr->part_us[k] = median(part, n);
      pr->run_us[k] = median(run, n);
      pr->share[k] = median(share, n);
    }
    arm_free(&arms[k]);
  }
  free(v);
}

/* ---- A cell -------------------------------------------------------------------------------- */

void ab_run_cell(const ab_options *o, const ab_cell_input *in, ab_cell *c) {
  const actx_ab_ep *ep_a = o->baseline != NULL ? &o->baseline_ep : NULL;
  const long threads_a = o->threads_a > 0 ? o->threads_a : c->threads;
  create_arm(o, &in->a, threads_a, ep_a, NULL, &c->arms[ARM_ORT]);
  c->policy_used = o->policy;
  ab_arm *b = &c->arms[ARM_ACTX];
  actx_ab_ep all = o->actx_ep;
  const actx_ab_ep *ep_b = &o->actx_ep;
  if (create_arm(o, &in->b, c->threads, &o->actx_ep, NULL, b) == 0) {
    long on_actx = 0;
    summarise_arm(b, &o->actx_ep, &on_actx);
    if (on_actx == 0 && strcmp(o->policy, "auto") == 0) {
      /* auto declined: measure what actx would do, and say so */
      arm_free(b);
      c->auto_declined = true;
      c->policy_used = "all";
      actx_ab_ep_set_option(&all, "policy", "all");
      ep_b = &all;
      if (create_arm(o, &in->b, c->threads, &all, NULL, b) == 0)
        summarise_arm(b, &all, &on_actx);
    }
  }
  if (o->null_control)
    create_arm(o, &in->a, threads_a, ep_a, NULL, &c->arms[ARM_NULL]);
  for (size_t p = 0; p < o->n_peers; p++) {
    long on_peer = 0;
    ab_arm *peer = &c->arms[ARM_PEER + p];
    if (create_arm(o, &in->b, c->threads, &o->peers[p], NULL, peer) == 0)
      summarise_arm(peer, &o->peers[p], &on_peer);
  }
  /* the reference is ORT alone on the cell's model and threads: arm A unless it is another */
  ab_arm own_reference = {0};
  const ab_arm *reference = &c->arms[ARM_ORT];
  if (ab_arm_a_is_custom(o)) {
    create_arm(o, &in->b, c->threads, NULL, NULL, &own_reference);
    reference = &own_reference;
  }
  check_outputs(reference, in, b);
  for (size_t p = 0; p < o->n_peers; p++)
    check_outputs(reference, in, &c->arms[ARM_PEER + p]);
  arm_free(&own_reference);
  measure(o, c);
  for (int k = 0; k < N_ARMS; k++)
    arm_free(&c->arms[k]);
  if (o->profile_runs > 0 && c->arms[ARM_ORT].ok && b->ok)
    profile_cell(o, in, c, ep_a, threads_a, ep_b);
}
