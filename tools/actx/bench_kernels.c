/* bench_kernels.c — `actx bench kernels`: what libactx's kernels cost per element, beside what
 * the same work costs elsewhere, all measured in one run.
 *
 * For each op × dtype × element count the arms are: libactx on each ISA the CPU has (AVX-512,
 * AVX2, the portable C; actx_set_isa), each on 1 thread (actx_compute on the calling thread) and
 * on 2 (the built-in pool behind the convenience functions), under the host's ORT rule; a memcpy of the same bytes (the memory floor); for
 * float32, SLEEF's AVX2 functions (sleef_arms.c) and scalar libm (erff, tanhf, expf); and, for
 * float32 at 1M elements, ORT's own session with one intra-op thread, whose Run() is MLAS's
 * kernel plus a few microseconds of session overhead. The arms are interleaved (each rep runs
 * every arm once, the order alternating), each rep a batch of calls lasting about --batch-ms;
 * reported are the median and p10/p90 over the reps in ns per element, and ratios between arms
 * of the same run. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ab_cases.h"
#include "actx.h"
#include "cli.h"
#include "host.h"
#include "rng.h"
#include "sleef_arms.h"
#include "stats.h"
#include "table.h"
#include "timed_session.h"

#define CMD "bench kernels"
#define DEFAULT_REPS 15
#define DEFAULT_BATCH_MS 1.0
#define QUICK_REPS 7
#define QUICK_BATCH_MS 0.5
#define DEFAULT_SEED 20240611u
#define MAX_SIZES 16
#define MAX_BATCH 1000000
#define CALIBRATION_CALLS 3
/* The ORT arm runs at this size only: large enough that the session's per-Run overhead
 * (a few microseconds) is negligible next to MLAS's kernel. */
#define ORT_ELEMENTS 1048576
#define POOL_THREADS 2
#define BUFFER_ALIGNMENT 64

#ifndef ACTX_HAVE_SLEEF
bool actx_sleef_available(void) { return false; }
int actx_sleef_compute(const actx_op_desc *desc, const float *x, float *y, size_t n) {
  (void)desc;
  (void)x;
  (void)y;
  (void)n;
  return -1;
}
#endif

static const long k_default_sizes[] = {512, 3072, 16384, 65536, 262144, 1048576};
static const long k_quick_sizes[] = {3072, 65536, 1048576};
static const actx_dtype k_dtypes[] = {ACTX_F32, ACTX_F16, ACTX_BF16};
#define N_DTYPES (sizeof k_dtypes / sizeof k_dtypes[0])

/* The ops, by libactx's names, and the A/B case whose model and inputs each one uses. */
typedef struct kernel_op {
  const char *name;
  const char *ab_case;
} kernel_op;

static const kernel_op k_ops[] = {
    {"erf", "Erf"},
    {"gelu", "Gelu"},
    {"gelu_tanh", "Gelu(tanh)"},
    {"bias_gelu", "ms.BiasGelu"},
    {"fast_gelu(bias)", "ms.FastGelu+bias"},
    {"quick_gelu", "ms.QuickGelu"},
    {"tanh", "Tanh"},
    {"sigmoid", "Sigmoid"},
};
#define N_OPS (sizeof k_ops / sizeof k_ops[0])

typedef enum arm_id {
  ARM_AVX2_1,
  ARM_AVX2_2,
  ARM_PORTABLE_1,
  ARM_PORTABLE_2,
  ARM_MEMCPY,
  ARM_SLEEF,
  ARM_LIBM,
  ARM_ORT,
  ARM_AVX512_1, /* after the others: the CSV's columns keep their places */
  ARM_AVX512_2,
  N_ARMS
} arm_id;
static const char *const k_arm_labels[N_ARMS] = {"avx2 1t", "avx2 2t", "portable 1t",
                                                 "portable 2t", "memcpy", "SLEEF",
                                                 "libm", "ORT 1t", "avx512 1t", "avx512 2t"};

/* The ISA libactx picks on this CPU (or ACTX_ISA's), read before any arm sets one: the ISA the
 * arms leave set, and the one whose 1-thread arm the ratios call actx. */
static actx_isa k_default_isa = ACTX_ISA_PORTABLE;

typedef struct kb_options {
  const char *ops, *dtypes;
  long sizes[MAX_SIZES];
  size_t n_sizes;
  long reps;
  double batch_ms;
  bool quick, no_ort, verbose;
  const char *out_dir;
  uint64_t seed;
} kb_options;

/* One (op, dtype, N): buffers and what each arm computes. */
typedef struct kb_case {
  actx_op_desc desc;
  const void *x;
  void *y;
  size_t n;
  actx_timed_session *ort;
} kb_case;

typedef struct kb_arm {
  bool active;
  size_t batch;
  double *samples; /* ns per element */
  size_t n_samples;
  actx_stats stats;
} kb_arm;

typedef struct kb_row {
  char op[32];
  const char *dtype;
  size_t n;
  bool active[N_ARMS];
  actx_stats stats[N_ARMS];
  bool ort_checked;
  bool ort_identical;
} kb_row;

static void usage(FILE *out) {
  fprintf(out,
          "usage: actx bench kernels [options]\n"
          "\n"
          "ns per element of libactx's kernels (AVX-512, AVX2 and portable, 1 and %d threads)\n"
          "beside a memcpy floor, SLEEF (AVX2), scalar libm, and ORT's session (float32, 1\n"
          "thread, %d elements), measured interleaved in one run.\n"
          "\n"
          "  --quick               float32, 3 sizes, fewer reps\n"
          "  --ops LIST            erf,gelu,gelu_tanh,bias_gelu,fast_gelu(bias),quick_gelu,\n"
          "                        tanh,sigmoid (default: all)\n"
          "  --dtypes LIST         f32,f16,bf16 (default: all)\n"
          "  --sizes LIST          element counts (default: 512,3072,16384,65536,262144,1048576)\n"
          "  --reps N              timed reps per arm (default %d)\n"
          "  --batch-ms X          each rep calls the kernel for about X ms (default %.1f)\n"
          "  --no-ort              skip the ORT arm\n"
          "  --out DIR             where kernels.csv and kernels.txt go (default %s)\n"
          "  --verbose             keep ORT's warnings\n",
          POOL_THREADS, ORT_ELEMENTS, DEFAULT_REPS, DEFAULT_BATCH_MS, ACTX_DEFAULT_RESULTS_DIR);
}

static int parse_options(int argc, char **argv, kb_options *o) {
  memset(o, 0, sizeof *o);
  o->reps = -1;
  o->batch_ms = -1;
  o->out_dir = ACTX_DEFAULT_RESULTS_DIR;
  o->seed = DEFAULT_SEED;
  bool bad = false;
  for (int i = 1; i < argc && !bad; i++) {
    const char *a = argv[i], *v = NULL;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      exit(ACTX_EXIT_OK);
    } else if (strcmp(a, "--quick") == 0) {
      o->quick = true;
    } else if (strcmp(a, "--no-ort") == 0) {
      o->no_ort = true;
    } else if (strcmp(a, "--verbose") == 0) {
      o->verbose = true;
    } else if (actx_arg_value(argc, argv, &i, "--ops", &v, &bad, CMD)) {
      o->ops = v;
    } else if (actx_arg_value(argc, argv, &i, "--dtypes", &v, &bad, CMD)) {
      o->dtypes = v;
    } else if (actx_arg_value(argc, argv, &i, "--sizes", &v, &bad, CMD)) {
      bad = bad || actx_parse_long_list(CMD, "--sizes", v, 1, 1L << 28, o->sizes, MAX_SIZES,
                                        &o->n_sizes) != 0;
    } else if (actx_arg_value(argc, argv, &i, "--reps", &v, &bad, CMD)) {
      bad = bad || actx_parse_long(CMD, "--reps", v, 1, 100000, &o->reps) != 0;
    } else if (actx_arg_value(argc, argv, &i, "--batch-ms", &v, &bad, CMD)) {
      bad = bad || actx_parse_double(CMD, "--batch-ms", v, 0, 10000, &o->batch_ms) != 0;
    } else if (actx_arg_value(argc, argv, &i, "--out", &v, &bad, CMD)) {
      o->out_dir = v;
    } else {
      fprintf(stderr, "actx %s: unknown argument '%s' (see actx bench kernels --help)\n", CMD,
              a);
      bad = true;
    }
  }
  if (bad)
    return -1;
  if (o->n_sizes == 0) {
    const long *src = o->quick ? k_quick_sizes : k_default_sizes;
    o->n_sizes = o->quick ? sizeof k_quick_sizes / sizeof *src
                          : sizeof k_default_sizes / sizeof *src;
    memcpy(o->sizes, src, o->n_sizes * sizeof *src);
  }
  if (o->quick && o->dtypes == NULL)
    o->dtypes = "f32";
  if (o->reps < 0)
    o->reps = o->quick ? QUICK_REPS : DEFAULT_REPS;
  if (o->batch_ms < 0)
    o->batch_ms = o->quick ? QUICK_BATCH_MS : DEFAULT_BATCH_MS;
  if (o->ops != NULL) {
    char *copy = strdup(o->ops), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save)) {
      bool known = false;
      for (size_t k = 0; k < N_OPS; k++)
        known = known || strcmp(t, k_ops[k].name) == 0;
      if (!known) {
        fprintf(stderr, "actx %s: --ops: unknown op '%s'\n", CMD, t);
        bad = true;
      }
    }
    free(copy);
  }
  return bad ? -1 : 0;
}

/* ---- The arms ---------------------------------------------------------------------------- */

/* libactx's convenience entry point for desc: the one that runs on the built-in pool. */
static actx_status convenience(const actx_op_desc *d, const void *x, void *y, size_t n) {
  const size_t h = d->bias != NULL ? d->bias_len : 0;
#define ACTX_BENCH_DISPATCH(suffix, T)                                                          \
  switch (d->op) {                                                                              \
  case ACTX_OP_ERF: return actx_erf_##suffix((const T *)x, (T *)y, n);                          \
  case ACTX_OP_GELU:                                                                            \
    return h ? actx_bias_gelu_##suffix((const T *)x, (T *)y, n, (const T *)d->bias, h)          \
             : actx_gelu_##suffix((const T *)x, (T *)y, n);                                     \
  case ACTX_OP_GELU_TANH:                                                                       \
    return h ? actx_fast_gelu_##suffix((const T *)x, (T *)y, n, (const T *)d->bias, h)          \
             : actx_gelu_tanh_##suffix((const T *)x, (T *)y, n);                                \
  case ACTX_OP_QUICK_GELU: return actx_quick_gelu_##suffix((const T *)x, (T *)y, n, d->alpha);  \
  case ACTX_OP_TANH: return actx_tanh_##suffix((const T *)x, (T *)y, n);                        \
  case ACTX_OP_SIGMOID: return actx_sigmoid_##suffix((const T *)x, (T *)y, n);                  \
  default: return ACTX_ERROR_INVALID_ARGUMENT;                                                  \
  }
  switch (d->dtype) {
  case ACTX_F32: ACTX_BENCH_DISPATCH(f32, float)
  case ACTX_F16: ACTX_BENCH_DISPATCH(f16, uint16_t)
  case ACTX_BF16: ACTX_BENCH_DISPATCH(bf16, uint16_t)
  default: return ACTX_ERROR_INVALID_ARGUMENT;
  }
#undef ACTX_BENCH_DISPATCH
}

/* Scalar libm, the way a plain C loop would write each op. */
static int libm_compute(const actx_op_desc *d, const float *x, float *y, size_t n) {
  const float *bias = d->bias;
  const size_t h = bias != NULL ? d->bias_len : 0;
  for (size_t i = 0; i < n; i++) {
    float v = h ? x[i] + bias[i % h] : x[i];
    switch (d->op) {
    case ACTX_OP_ERF: y[i] = erff(v); break;
    case ACTX_OP_GELU: y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678f)); break;
    case ACTX_OP_GELU_TANH:
      y[i] = 0.5f * v * (1.0f + tanhf(0.79788456f * (v + 0.044715f * v * v * v)));
      break;
    case ACTX_OP_QUICK_GELU: y[i] = v / (1.0f + expf(-d->alpha * v)); break;
    case ACTX_OP_TANH: y[i] = tanhf(v); break;
    case ACTX_OP_SIGMOID: y[i] = 1.0f / (1.0f + expf(-v)); break;
    default: return -1;
    }
  }
  return 0;
}

/* One call of an arm over the whole case. 0, or -1 if the arm failed. */
static int call_arm(arm_id arm, kb_case *c) {
  switch (arm) {
  case ARM_AVX512_1:
  case ARM_AVX2_1:
  case ARM_PORTABLE_1:
    return actx_compute(&c->desc, c->x, c->y, c->n, NULL) == ACTX_OK ? 0 : -1;
  case ARM_AVX512_2:
  case ARM_AVX2_2:
  case ARM_PORTABLE_2:
    return convenience(&c->desc, c->x, c->y, c->n) == ACTX_OK ? 0 : -1;
  case ARM_MEMCPY:
    memcpy(c->y, c->x, c->n * actx_dtype_size(c->desc.dtype));
    return 0;
  case ARM_SLEEF:
    return actx_sleef_compute(&c->desc, c->x, c->y, c->n);
  case ARM_LIBM:
    return libm_compute(&c->desc, c->x, c->y, c->n);
  case ARM_ORT: {
    actx_ort_error err = {0};
    if (actx_timed_session_run(c->ort, &err) != 0) {
      fprintf(stderr, "actx %s: ORT arm: %s\n", CMD, err.message);
      return -1;
    }
    return 0;
  }
  default:
    return -1;
  }
}

/* The ISA an arm runs libactx with (the others do not call libactx). */
static void select_isa(arm_id arm) {
  if (arm == ARM_AVX512_1 || arm == ARM_AVX512_2)
    actx_set_isa(ACTX_ISA_AVX512);
  else if (arm == ARM_AVX2_1 || arm == ARM_AVX2_2)
    actx_set_isa(ACTX_ISA_AVX2);
  else if (arm == ARM_PORTABLE_1 || arm == ARM_PORTABLE_2)
    actx_set_isa(ACTX_ISA_PORTABLE);
}

/* ns per element over `calls` calls; negative if the arm failed. */
static double time_arm(arm_id arm, kb_case *c, size_t calls) {
  select_isa(arm);
  double t0 = actx_now_ns();
  for (size_t k = 0; k < calls; k++)
    if (call_arm(arm, c) != 0)
      return -1;
  return (actx_now_ns() - t0) / ((double)calls * (double)c->n);
}

static void measure_case(const kb_options *o, kb_case *c, kb_arm *arms) {
  arm_id order[N_ARMS];
  size_t n_active = 0;
  for (int a = 0; a < N_ARMS; a++) {
    if (!arms[a].active)
      continue;
    double best = INFINITY;
    for (int k = 0; k < CALIBRATION_CALLS; k++) {
      double t = time_arm((arm_id)a, c, 1);
      if (t < 0) {
        arms[a].active = false;
        break;
      }
      if (t < best)
        best = t;
    }
    if (!arms[a].active)
      continue;
    double per_call_ns = best * (double)c->n;
    double calls = per_call_ns > 0 ? ceil(o->batch_ms * 1e6 / per_call_ns) : MAX_BATCH;
    arms[a].batch = calls < 1 ? 1 : calls > MAX_BATCH ? MAX_BATCH : (size_t)calls;
    arms[a].samples = calloc((size_t)o->reps, sizeof *arms[a].samples);
    if (arms[a].samples == NULL) {
      arms[a].active = false;
      continue;
    }
    time_arm((arm_id)a, c, arms[a].batch); /* warm-up: caches, pool threads, page faults */
    order[n_active++] = (arm_id)a;
  }
  for (long r = 0; r < o->reps; r++) {
    for (size_t j = 0; j < n_active; j++) {
      arm_id a = order[r % 2 == 0 ? j : n_active - 1 - j];
      if (!arms[a].active)
        continue;
      double t = time_arm(a, c, arms[a].batch);
      if (t < 0)
        arms[a].active = false;
      else
        arms[a].samples[arms[a].n_samples++] = t;
    }
  }
  for (int a = 0; a < N_ARMS; a++) {
    if (arms[a].active)
      actx_stats_compute(arms[a].samples, arms[a].n_samples, &arms[a].stats);
    free(arms[a].samples);
    arms[a].samples = NULL;
  }
  actx_set_isa(k_default_isa);
}

static const actx_ab_case *find_case(const char *name) {
  size_t n = 0;
  const actx_ab_case *cases = actx_ab_cases(&n);
  for (size_t i = 0; i < n; i++)
    if (strcmp(cases[i].name, name) == 0)
      return &cases[i];
  return NULL;
}

/* The ORT session on the case's model and input (1 intra-op thread), and whether its output is
 * libactx's bits. */
static int prepare_ort(const actx_ab_model *m, kb_case *c, kb_row *row) {
  actx_ort_session_options so = {.intra_op_threads = 1};
  actx_ort_error err = {0};
  if (actx_timed_session_create(m->bytes, m->size, &so, m->n_inputs, m->inputs, &c->ort, &err) !=
      0) {
    fprintf(stderr, "actx %s: ORT arm for %s: %s\n", CMD, row->op, err.message);
    return -1;
  }
  const actx_ort_tensor *out = actx_timed_session_output(c->ort, 0);
  actx_set_isa(k_default_isa);
  row->ort_checked = out != NULL && out->bytes == c->n * actx_dtype_size(c->desc.dtype) &&
                     actx_compute(&c->desc, c->x, c->y, c->n, NULL) == ACTX_OK;
  row->ort_identical = row->ort_checked && memcmp(out->data, c->y, out->bytes) == 0;
  return 0;
}

/* ---- Output -------------------------------------------------------------------------------- */

static void fmt_ns(const kb_row *r, arm_id a, char *buf, size_t size) {
  if (!r->active[a])
    snprintf(buf, size, "-");
  else
    snprintf(buf, size, "%.3f", r->stats[a].median);
}

static void fmt_ratio(const kb_row *r, arm_id num, arm_id den, char *buf, size_t size) {
  if (!r->active[num] || !r->active[den] || r->stats[den].median <= 0)
    snprintf(buf, size, "-");
  else
    snprintf(buf, size, "%.2f", r->stats[num].median / r->stats[den].median);
}

/* The 1-thread arm of an ISA */
static arm_id isa_arm(actx_isa isa) {
  return isa == ACTX_ISA_AVX512 ? ARM_AVX512_1 : isa == ACTX_ISA_AVX2 ? ARM_AVX2_1 : ARM_PORTABLE_1;
}

/* The libactx arm of a row: the default ISA's on 1 thread when it ran, else the best that did. */
static arm_id actx_arm(const kb_row *r) {
  if (r->active[isa_arm(k_default_isa)])
    return isa_arm(k_default_isa);
  return r->active[ARM_AVX512_1] ? ARM_AVX512_1
         : r->active[ARM_AVX2_1] ? ARM_AVX2_1
                                 : ARM_PORTABLE_1;
}

static actx_table *build_table(const kb_row *rows, size_t n_rows) {
  const char *headers[] = {"op",         "dtype",     "N",           "avx512 1t", "avx512 2t",
                           "avx2 1t",    "avx2 2t",   "port. 1t",    "port. 2t",  "p10-p90",
                           "memcpy",     "SLEEF",     "libm",        "ORT 1t",    "ORT/actx",
                           "actx/memcpy", "SLEEF/actx", "libm/actx", "avx2/avx512", "port/avx2"};
  const size_t n_cols = sizeof headers / sizeof *headers;
  actx_table *t = actx_table_create(n_cols, headers);
  if (t == NULL)
    return NULL;
  for (size_t i = 0; i < n_rows; i++) {
    const kb_row *r = &rows[i];
    if (i > 0 && (strcmp(rows[i - 1].op, r->op) != 0 || rows[i - 1].dtype != r->dtype))
      actx_table_add_break(t);
    char cells[N_ARMS][32], n_buf[32], spread[64], ratios[6][32];
    for (int a = 0; a < N_ARMS; a++)
      fmt_ns(r, (arm_id)a, cells[a], sizeof cells[a]);
    snprintf(n_buf, sizeof n_buf, "%zu", r->n);
    arm_id best = actx_arm(r);
    if (r->active[best])
      snprintf(spread, sizeof spread, "%.3f-%.3f", r->stats[best].p10, r->stats[best].p90);
    else
      snprintf(spread, sizeof spread, "-");
    fmt_ratio(r, ARM_ORT, best, ratios[0], sizeof ratios[0]);
    fmt_ratio(r, best, ARM_MEMCPY, ratios[1], sizeof ratios[1]);
    fmt_ratio(r, ARM_SLEEF, best, ratios[2], sizeof ratios[2]);
    fmt_ratio(r, ARM_LIBM, best, ratios[3], sizeof ratios[3]);
    fmt_ratio(r, ARM_AVX2_1, ARM_AVX512_1, ratios[4], sizeof ratios[4]);
    fmt_ratio(r, ARM_PORTABLE_1, ARM_AVX2_1, ratios[5], sizeof ratios[5]);
    const char *row[] = {r->op,
                         r->dtype,
                         n_buf,
                         cells[ARM_AVX512_1],
                         cells[ARM_AVX512_2],
                         cells[ARM_AVX2_1],
                         cells[ARM_AVX2_2],
                         cells[ARM_PORTABLE_1],
                         cells[ARM_PORTABLE_2],
                         spread,
                         cells[ARM_MEMCPY],
                         cells[ARM_SLEEF],
                         cells[ARM_LIBM],
                         cells[ARM_ORT],
                         ratios[0],
                         ratios[1],
                         ratios[2],
                         ratios[3],
                         ratios[4],
                         ratios[5]};
    actx_table_add_row(t, row);
  }
  return t;
}

static void write_csv(FILE *f, const kb_row *rows, size_t n_rows, long reps) {
  const char *fixed[] = {"op", "dtype", "elements", "reps"};
  char names[N_ARMS * 3][48];
  const char *headers[4 + N_ARMS * 3];
  for (int i = 0; i < 4; i++)
    headers[i] = fixed[i];
  for (int a = 0; a < N_ARMS; a++) {
    const char *stat_names[3] = {"median", "p10", "p90"};
    for (int s = 0; s < 3; s++) {
      snprintf(names[a * 3 + s], sizeof names[0], "%s_%s_ns_per_elem", k_arm_labels[a],
               stat_names[s]);
      for (char *p = names[a * 3 + s]; *p; p++)
        if (*p == ' ' || *p == '.')
          *p = '_';
      headers[4 + a * 3 + s] = names[a * 3 + s];
    }
  }
  const size_t n_cols = 4 + N_ARMS * 3;
  actx_csv_write_row(f, n_cols, headers);
  for (size_t i = 0; i < n_rows; i++) {
    const kb_row *r = &rows[i];
    char values[4 + N_ARMS * 3][48];
    const char *cells[4 + N_ARMS * 3];
    snprintf(values[0], sizeof values[0], "%s", r->op);
    snprintf(values[1], sizeof values[1], "%s", r->dtype);
    snprintf(values[2], sizeof values[2], "%zu", r->n);
    snprintf(values[3], sizeof values[3], "%ld", reps);
    for (int a = 0; a < N_ARMS; a++) {
      const double v[3] = {r->stats[a].median, r->stats[a].p10, r->stats[a].p90};
      for (int s = 0; s < 3; s++) {
        char *cell = values[4 + a * 3 + s];
        if (r->active[a])
          snprintf(cell, sizeof values[0], "%.5f", v[s]);
        else
          cell[0] = '\0';
      }
    }
    for (size_t k = 0; k < n_cols; k++)
      cells[k] = values[k];
    actx_csv_write_row(f, n_cols, cells);
  }
}

static void print_report(FILE *out, const kb_options *o, const actx_table *t, const kb_row *rows,
                         size_t n_rows, double seconds) {
  const OrtApiBase *base = OrtGetApiBase();
  fprintf(out, "actx bench kernels — libactx %s, ns per element (median of %ld reps, each a "
               "batch of ~%.2f ms; arms interleaved)\n",
          actx_version_string(), o->reps, o->batch_ms);
  fprintf(out, "ORT %s (1 intra-op thread, %d elements, float32); SLEEF %s; %ld cores online\n\n",
          base != NULL ? base->GetVersionString() : "?", ORT_ELEMENTS,
          actx_sleef_available() ? "AVX2 (libsleef)" : "not built in",
          sysconf(_SC_NPROCESSORS_ONLN));
  actx_table_print(t, out);
  fprintf(out, "\nColumns: avx512 / avx2 / port(able) = libactx's ISA (ORT rule %s); 1t = "
               "actx_compute on the calling thread, 2t = the built-in pool of %d threads (tensors "
               "under %zu elements per thread are not split); ratios are medians of this run: "
               "ORT/actx > 1 and SLEEF/actx > 1 mean libactx is faster; actx = the %s 1t arm (the "
               "ISA libactx picks here), p10-p90 its spread.\n",
          actx_ort_rule_name(actx_get_ort_rule()), POOL_THREADS,
          actx_min_elements_per_task(ACTX_F32), actx_isa_name(k_default_isa));
  for (size_t i = 0; i < n_rows; i++)
    if (rows[i].ort_checked)
      fprintf(out, "ORT check %s %s N=%zu: ORT's output is %s libactx's\n", rows[i].op,
              rows[i].dtype, rows[i].n,
              rows[i].ort_identical ? "bit-identical to" : "DIFFERENT from");
  fprintf(out, "%zu rows in %.0f s\n", n_rows, seconds);
}

int actx_cmd_bench_kernels(int argc, char **argv) {
  static kb_options o;
  if (parse_options(argc, argv, &o) != 0)
    return ACTX_EXIT_USAGE;
  if (actx_make_dirs(o.out_dir) != 0) {
    fprintf(stderr, "actx %s: cannot create the results directory '%s'\n", CMD, o.out_dir);
    return ACTX_EXIT_USAGE;
  }
  if (!o.no_ort && actx_quiet_ort(o.verbose, CMD) != 0)
    o.no_ort = true;
  const bool have_avx2 = actx_isa_supported(ACTX_ISA_AVX2) != 0;
  const bool have_avx512 = actx_isa_supported(ACTX_ISA_AVX512) != 0;
  k_default_isa = actx_get_isa();
  if (actx_set_num_threads(POOL_THREADS) != ACTX_OK) {
    fprintf(stderr, "actx %s: cannot start the built-in pool of %d threads\n", CMD, POOL_THREADS);
    return ACTX_EXIT_FAILURE;
  }
  size_t max_rows = N_OPS * N_DTYPES * o.n_sizes;
  kb_row *rows = calloc(max_rows, sizeof *rows);
  if (rows == NULL)
    return ACTX_EXIT_FAILURE;
  size_t n_rows = 0;
  const bool tty = isatty(STDERR_FILENO) != 0;
  double started = actx_now_ns();
  int rc = ACTX_EXIT_OK;
  for (size_t k = 0; k < N_OPS && rc == ACTX_EXIT_OK; k++) {
    if (!actx_list_contains(o.ops, k_ops[k].name))
      continue;
    const actx_ab_case *abc = find_case(k_ops[k].ab_case);
    for (size_t d = 0; d < N_DTYPES && abc != NULL && rc == ACTX_EXIT_OK; d++) {
      const char *dtype = actx_dtype_name(k_dtypes[d]);
      if (!actx_list_contains(o.dtypes, dtype))
        continue;
      for (size_t s = 0; s < o.n_sizes; s++) {
        const size_t n = (size_t)o.sizes[s];
        kb_row *row = &rows[n_rows++];
        snprintf(row->op, sizeof row->op, "%s", k_ops[k].name);
        row->dtype = dtype;
        row->n = n;
        if (tty)
          fprintf(stderr, "\r\033[K[%zu/%zu] %s %s N=%zu", n_rows, max_rows, row->op, dtype, n);
        actx_ab_model m;
        char err[512], seed_name[128];
        snprintf(seed_name, sizeof seed_name, "%s/%s/%zu", abc->name, dtype, n);
        if (abc->build(abc, k_dtypes[d], n, actx_hash_string(o.seed, seed_name), &m, err,
                       sizeof err) != 0) {
          fprintf(stderr, "actx %s: %s\n", CMD, err);
          rc = ACTX_EXIT_FAILURE;
          break;
        }
        size_t bytes = n * actx_dtype_size(k_dtypes[d]);
        size_t alloc = (bytes + BUFFER_ALIGNMENT - 1) / BUFFER_ALIGNMENT * BUFFER_ALIGNMENT;
        kb_case c = {.desc = m.reference, .x = m.inputs[0].data, .n = n,
                     .y = aligned_alloc(BUFFER_ALIGNMENT, alloc)};
        if (c.y == NULL) {
          actx_ab_model_free(&m);
          rc = ACTX_EXIT_FAILURE;
          break;
        }
        const bool f32 = k_dtypes[d] == ACTX_F32;
        if (f32 && !o.no_ort && n == ORT_ELEMENTS)
          prepare_ort(&m, &c, row);
        kb_arm arms[N_ARMS];
        memset(arms, 0, sizeof arms);
        arms[ARM_AVX512_1].active = arms[ARM_AVX512_2].active = have_avx512;
        arms[ARM_AVX2_1].active = arms[ARM_AVX2_2].active = have_avx2;
        arms[ARM_PORTABLE_1].active = arms[ARM_PORTABLE_2].active = true;
        arms[ARM_MEMCPY].active = true;
        arms[ARM_SLEEF].active = f32 && have_avx2 && actx_sleef_available();
        arms[ARM_LIBM].active = f32;
        arms[ARM_ORT].active = c.ort != NULL;
        measure_case(&o, &c, arms);
        for (int a = 0; a < N_ARMS; a++) {
          row->active[a] = arms[a].active;
          row->stats[a] = arms[a].stats;
        }
        actx_timed_session_free(c.ort);
        free(c.y);
        actx_ab_model_free(&m);
      }
    }
  }
  if (tty)
    fprintf(stderr, "\r\033[K");
  actx_set_num_threads(1);
  double seconds = (actx_now_ns() - started) / 1e9;

  actx_table *t = build_table(rows, n_rows);
  char txt_path[4200], csv_path[4200];
  snprintf(txt_path, sizeof txt_path, "%.4000s/kernels.txt", o.out_dir);
  snprintf(csv_path, sizeof csv_path, "%.4000s/kernels.csv", o.out_dir);
  if (t != NULL) {
    print_report(stdout, &o, t, rows, n_rows, seconds);
    FILE *txt = fopen(txt_path, "w");
    if (txt != NULL) {
      print_report(txt, &o, t, rows, n_rows, seconds);
      fclose(txt);
    } else {
      rc = ACTX_EXIT_FAILURE;
    }
  }
  actx_table_free(t);
  FILE *csv = fopen(csv_path, "w");
  if (csv != NULL) {
    write_csv(csv, rows, n_rows, o.reps);
    fclose(csv);
  } else {
    rc = ACTX_EXIT_FAILURE;
  }
  printf("\nTable: %s\nCSV:   %s\n", txt_path, csv_path);
  free(rows);
  return rc;
}
