/* A/B measurement of whole-session Run() time: ORT alone vs ORT + actx (policy all), for the
 * measurements behind docs/ep-policy.md. Not a test (timings are noisy); the full A/B tool is
 * `actx ab`.
 *
 * usage: bench_ep_ab <libactx_ep.so> [--quick] [--dtype f32|f16|bf16] [--op NAME]
 *                    [--sizes n,n,...] [--threads t,t,...] [--model single|addgelu|pattern]
 *                    [--case NAME] [--profile RUNS] [--policy P] [--baseline ort|none|all]
 *                    [--threads-a T] [--dtype-a f32|f16|bf16] [--batches B] [--batch-us T]
 *
 * --baseline none makes arm A a session with the actx EP appended but claiming nothing (policy
 * none): A/B then isolates the per-node cost of running the node in actx instead of ORT's
 * kernel, without the fixed per-Run cost ORT pays for having a second EP in the session.
 * --baseline all --threads-a 1 compares actx on 1 thread with actx on the pool (the parallel
 * threshold; build the EP with -DACTX_EP_PARALLEL_MIN_ELEMENTS=1 to let it split everything).
 * --dtype-a T (with --case) runs arm A's model in element type T: --case Tanh --dtype bf16
 * --dtype-a f16 --baseline all times bfloat16 against float16, both in actx, interleaved.
 *
 * For each (operator, size, thread count) both sessions are created in this process with the
 * same model and options, warmed up, then timed in interleaved batches (A B B A ...): each batch
 * runs one arm enough times to last ~2 ms and records the mean time per Run. Reported: the
 * median per arm over the batches, and ratio = the median over adjacent A/B batch pairs of
 * A / B (> 1: actx faster), which cancels the drifts a shared machine adds.
 *
 * Models: `single` is the one-node model; `addgelu` is Add(x, bias) → Gelu (ORT fuses it into
 * BiasGelu, or the EP takes both as its BiasGelu); `pattern` is the exported Div → Erf → Add →
 * Mul → Mul GELU at opset 17 (ORT fuses it into com.microsoft Gelu, or the EP takes all five).
 * --case NAME takes any model of `actx ab`'s case table instead (tools/actx/ab_cases.c: the
 * exported subgraphs, bert-mlp, bert-encoder; for the BERT blocks a size is X's element count,
 * 768 per token: 24576, 98304 and 393216 are sequence lengths 32, 128 and 512).
 *
 * --profile RUNS adds, per configuration, a profiled pair of sessions (ORT's EnableProfiling)
 * run RUNS times each: the time of the GELU part (ORT's fused Gelu / BiasGelu / FastGelu /
 * QuickGelu kernels, or nodes named gelu_*, against the nodes the actx EP runs) as a share of the
 * whole Run(), for both arms. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ab_cases.h"
#include "ep_test.h"

/* The arms' sessions share this process and its cores, each with its own intra-op pool, whose
 * threads spin for a while after each Run(): an idle arm's would take the cores from the arm
 * being timed. So no arm's threads spin (actx ab does the same; its --spin undoes it). */
static const char *const k_no_spin_keys[] = {"session.intra_op.allow_spinning"};
static const char *const k_no_spin_values[] = {"0"};
#define NO_SPIN .n_config = 1, .config_keys = k_no_spin_keys, .config_values = k_no_spin_values

typedef struct bench_op {
  const char *name;
  ep_model_spec spec;
} bench_op;

#define MS ACTX_MODEL_MS_DOMAIN
static const bench_op ops[] = {
    {"Erf", {.op_type = "Erf", .domain = ""}},
    {"Gelu", {.op_type = "Gelu", .domain = ""}},
    {"Gelu(tanh)", {.op_type = "Gelu", .domain = "", .approximate = "tanh"}},
    {"ms.Gelu", {.op_type = "Gelu", .domain = MS}},
    {"ms.BiasGelu", {.op_type = "BiasGelu", .domain = MS, .bias = true}},
    {"ms.FastGelu", {.op_type = "FastGelu", .domain = MS}},
    {"ms.FastGelu(bias)", {.op_type = "FastGelu", .domain = MS, .bias = true}},
    {"ms.QuickGelu", {.op_type = "QuickGelu", .domain = MS}},
    /* alpha 1 is SiLU, which ORT runs with its own kernel (AVX-512F on such a host) */
    {"ms.QuickGelu(1.0)", {.op_type = "QuickGelu", .domain = MS, .has_alpha = true, .alpha = 1.0f}},
    {"Tanh", {.op_type = "Tanh", .domain = ""}},
    {"Sigmoid", {.op_type = "Sigmoid", .domain = ""}},
};
#define N_OPS (sizeof ops / sizeof ops[0])

/* The innermost dimension of every benchmark tensor (and the bias length). */
#define ROW 512

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* A session plus its prepared inputs. */
#define MAX_ARM_INPUTS 8
#define MAX_ARM_OUTPUTS 4
typedef struct arm {
  actx_ort_session *session;
  const OrtApi *api;
  OrtValue *inputs[MAX_ARM_INPUTS];
  const char *input_names[MAX_ARM_INPUTS];
  size_t n_inputs;
  const char *output_names[MAX_ARM_OUTPUTS];
  size_t n_outputs;
  actx_ort_tensor info[MAX_ARM_INPUTS + MAX_ARM_OUTPUTS]; /* names owned by the session */
} arm;

static OrtMemoryInfo *g_cpu;

static int arm_open(arm *a, const uint8_t *model, size_t size, const char *policy, int threads,
                    int32_t elem_type, void *x, const int64_t *dims, size_t rank, void *bias,
                    int64_t bias_len) {
  memset(a, 0, sizeof *a);
  const ep_session_spec spec = {.policy = policy, .threads = threads, NO_SPIN};
  actx_ort_error err;
  if (ep_session_create(model, size, &spec, &a->session, &err) != 0) {
    if (policy != NULL) printf("  session (actx): %s\n", err.message);
    return -1;
  }
  a->api = actx_ort_api(NULL);
  const size_t es = actx_elem_size(elem_type);
  const size_t n = ep_shape_count(rank, dims);
  OrtStatus *st = a->api->CreateTensorWithDataAsOrtValue(
      g_cpu, x, n * es, dims, rank, (ONNXTensorElementDataType)elem_type, &a->inputs[0]);
  a->input_names[0] = "x";
  a->n_inputs = 1;
  if (st == NULL && bias != NULL) {
    st =
        a->api->CreateTensorWithDataAsOrtValue(g_cpu, bias, (size_t)bias_len * es, &bias_len, 1,
                                               (ONNXTensorElementDataType)elem_type, &a->inputs[1]);
    a->input_names[1] = "bias";
    a->n_inputs = 2;
  }
  a->output_names[0] = "y";
  a->n_outputs = 1;
  if (st != NULL) {
    printf("  input: %s\n", a->api->GetErrorMessage(st));
    a->api->ReleaseStatus(st);
    return -1;
  }
  return 0;
}

/* A session on a case's model with its inputs (bound by position to the session's inputs). */
static int arm_open_case(arm *a, const actx_ab_model *m, const ep_session_spec *spec) {
  memset(a, 0, sizeof *a);
  actx_ort_error err;
  if (ep_session_create(m->bytes, m->size, spec, &a->session, &err) != 0) {
    if (spec->policy != NULL) printf("  session (actx): %s\n", err.message);
    return -1;
  }
  a->api = actx_ort_api(NULL);
  a->n_inputs = actx_ort_session_input_count(a->session);
  a->n_outputs = actx_ort_session_output_count(a->session);
  if (a->n_inputs != m->n_inputs || a->n_inputs > MAX_ARM_INPUTS ||
      a->n_outputs > MAX_ARM_OUTPUTS) {
    printf("  %zu inputs, %zu outputs: not what the case has\n", a->n_inputs, a->n_outputs);
    return -1;
  }
  for (size_t i = 0; i < a->n_inputs; i++) {
    const actx_ort_tensor *t = &m->inputs[i];
    if (actx_ort_session_input_info(a->session, i, &a->info[i], &err) != 0) return -1;
    a->input_names[i] = a->info[i].name;
    OrtStatus *st = a->api->CreateTensorWithDataAsOrtValue(g_cpu, t->data, t->bytes, t->dims,
                                                           t->rank, t->elem_type, &a->inputs[i]);
    if (st != NULL) {
      printf("  input: %s\n", a->api->GetErrorMessage(st));
      a->api->ReleaseStatus(st);
      return -1;
    }
  }
  for (size_t i = 0; i < a->n_outputs; i++) {
    if (actx_ort_session_output_info(a->session, i, &a->info[MAX_ARM_INPUTS + i], &err) != 0)
      return -1;
    a->output_names[i] = a->info[MAX_ARM_INPUTS + i].name;
  }
  return 0;
}

static void arm_close(arm *a) {
  for (size_t i = 0; i < MAX_ARM_INPUTS; i++)
    if (a->inputs[i]) a->api->ReleaseValue(a->inputs[i]);
  actx_ort_session_free(a->session);
  memset(a, 0, sizeof *a);
}

/* Runs `reps` times; returns the mean microseconds per Run, or -1 on error. */
static double arm_time(arm *a, int reps) {
  OrtSession *s = actx_ort_session_handle(a->session);
  const double t0 = now_us();
  for (int r = 0; r < reps; r++) {
    OrtValue *out[MAX_ARM_OUTPUTS] = {NULL};
    OrtStatus *st = a->api->Run(s, NULL, a->input_names, (const OrtValue *const *)a->inputs,
                                a->n_inputs, a->output_names, a->n_outputs, out);
    if (st != NULL) {
      printf("  run: %s\n", a->api->GetErrorMessage(st));
      a->api->ReleaseStatus(st);
      return -1;
    }
    for (size_t i = 0; i < a->n_outputs; i++) a->api->ReleaseValue(out[i]);
  }
  return (now_us() - t0) / reps;
}

typedef enum model_kind { MODEL_SINGLE, MODEL_ADDGELU, MODEL_PATTERN } model_kind;

/* Add(x, bias) → Gelu (opset 20), or the exported erf GELU (opset 17). */
static int build_composite(model_kind kind, int32_t elem_type, const int64_t *dims, uint8_t **bytes,
                           size_t *size) {
  const int64_t onnx_opset = kind == MODEL_PATTERN ? 17 : 20;
  actx_model *m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, onnx_opset, 0);
  actx_model_add_input(m, "x", elem_type, 2, dims, NULL);
  actx_model_add_output(m, "y", elem_type, 2, dims, NULL);
  if (kind == MODEL_ADDGELU) {
    const int64_t bdim[1] = {dims[1]};
    actx_model_add_input(m, "bias", elem_type, 1, bdim, NULL);
    const char *add_in[] = {"x", "bias"}, *add_out[] = {"xb"}, *gelu_out[] = {"y"};
    actx_model_add_named_node(m, "add", "Add", "", 2, add_in, 1, add_out);
    actx_model_add_named_node(m, EP_TEST_NODE, "Gelu", "", 1, add_out, 1, gelu_out);
  } else {
    const float sqrt2 = 1.4142135623730951f, one = 1.0f, half = 0.5f;
    actx_model_add_initializer(m, "sqrt2", ACTX_ELEM_FLOAT, 0, NULL, &sqrt2);
    actx_model_add_initializer(m, "one", ACTX_ELEM_FLOAT, 0, NULL, &one);
    actx_model_add_initializer(m, "half", ACTX_ELEM_FLOAT, 0, NULL, &half);
    const char *div_in[] = {"x", "sqrt2"}, *div_out[] = {"d"};
    const char *erf_out[] = {"e"};
    const char *add_in[] = {"e", "one"}, *add_out[] = {"a"};
    const char *mul_in[] = {"x", "a"}, *mul_out[] = {"m"};
    const char *mul2_in[] = {"m", "half"}, *mul2_out[] = {"y"};
    actx_model_add_named_node(m, "div", "Div", "", 2, div_in, 1, div_out);
    actx_model_add_named_node(m, EP_TEST_NODE, "Erf", "", 1, div_out, 1, erf_out);
    actx_model_add_named_node(m, "add", "Add", "", 2, add_in, 1, add_out);
    actx_model_add_named_node(m, "mul", "Mul", "", 2, mul_in, 1, mul_out);
    actx_model_add_named_node(m, "mul2", "Mul", "", 2, mul2_in, 1, mul2_out);
  }
  int rc = actx_model_serialize(m, bytes, size);
  if (rc != 0) printf("model: %s\n", actx_model_error(m));
  actx_model_free(m);
  return rc;
}

#define MAX_BATCHES 1001

static const char *g_baseline;   /* NULL: ORT alone; else the policy of arm A */
static double g_batch_us = 2000; /* target duration of one batch */
static int g_threads_a;          /* arm A's intra-op threads; 0: the same as arm B's */
static const char *g_dtype_a;    /* --dtype-a: arm A's element type (NULL: arm B's) */

/* Times two open arms in interleaved batches and prints the medians and the paired ratio. */
static void compare_arms(const char *name, const char *dtype, size_t n, int threads, int batches,
                         arm *a_ort, arm *a_actx, const char *note) {
  /* reps per batch: ~g_batch_us of ORT's time */
  double probe = arm_time(a_ort, 3);
  arm_time(a_actx, 3);
  probe = arm_time(a_ort, 5);
  int reps = probe > 0 ? (int)(g_batch_us / probe) : 1;
  if (reps < 1) reps = 1;
  static double t_ort[MAX_BATCHES], t_actx[MAX_BATCHES];
  if (batches > MAX_BATCHES) batches = MAX_BATCHES;
  for (int b = 0; b < batches; b++) {
    if (b % 2 == 0) {
      t_ort[b] = arm_time(a_ort, reps);
      t_actx[b] = arm_time(a_actx, reps);
    } else {
      t_actx[b] = arm_time(a_actx, reps);
      t_ort[b] = arm_time(a_ort, reps);
    }
  }
  /* the ratio of each adjacent A/B pair: slow drifts of the machine's speed (other jobs)
   * hit both arms of a pair alike and cancel */
  static double pair[MAX_BATCHES];
  for (int b = 0; b < batches; b++) pair[b] = t_ort[b] / t_actx[b];
  qsort(pair, (size_t)batches, sizeof(double), cmp_double);
  qsort(t_ort, (size_t)batches, sizeof(double), cmp_double);
  qsort(t_actx, (size_t)batches, sizeof(double), cmp_double);
  const double m_ort = t_ort[batches / 2], m_actx = t_actx[batches / 2];
  printf(
      "%-20s %-5s %8zu %2d  ort %10.2f us  actx %10.2f us  ratio %5.2f  (p25-p75 %.2f-%.2f) "
      "%s\n",
      name, dtype, n, threads, m_ort, m_actx, pair[batches / 2], pair[batches / 4],
      pair[(3 * batches) / 4], note);
}

/* ---- profiles ---- */

/* A number after `key` in line (ORT writes "dur" :123 and "name" :"..."). */
static bool profile_field(const char *line, const char *key, char *buf, size_t size) {
  const char *p = strstr(line, key);
  if (p == NULL) return false;
  p += strlen(key);
  while (*p == ' ' || *p == ':') p++;
  const bool quoted = *p == '"';
  if (quoted) p++;
  size_t n = 0;
  while (p[n] != '\0' && (quoted ? p[n] != '"' : (p[n] != ',' && p[n] != '}')) && n + 1 < size) n++;
  memcpy(buf, p, n);
  buf[n] = '\0';
  return true;
}

/* What a profile says about the GELU part: per Run() (the first left out: it allocates), the
 * GELU part's time and the whole run's, in microseconds. */
#define MAX_PROFILED_RUNS 1000
typedef struct gelu_share {
  double run_us[MAX_PROFILED_RUNS], gelu_us[MAX_PROFILED_RUNS];
  size_t runs;
} gelu_share;

static bool is_gelu_event(const char *name, const char *op, const char *provider) {
  static const char *const fused[] = {"Gelu", "BiasGelu", "FastGelu", "QuickGelu"};
  if (strcmp(provider, "actx") == 0) return true;
  for (size_t i = 0; i < sizeof fused / sizeof fused[0]; i++)
    if (strcmp(op, fused[i]) == 0) return true;
  return strncmp(name, ACTX_AB_GELU_PREFIX, strlen(ACTX_AB_GELU_PREFIX)) == 0;
}

static int read_profile(const char *path, gelu_share *out) {
  out->runs = 0;
  FILE *f = fopen(path, "r");
  if (f == NULL) return -1;
  /* one event per line; a run's node events come before its model_run event */
  char line[8192], value[256], name[256], op[128], provider[64];
  double pending = 0;
  size_t seen_runs = 0;
  while (fgets(line, sizeof line, f) != NULL) {
    if (!profile_field(line, "\"dur\"", value, sizeof value)) continue;
    const double dur = atof(value);
    if (strstr(line, "\"cat\" : \"Node\"") != NULL) {
      if (!profile_field(line, "\"name\"", name, sizeof name)) name[0] = '\0';
      if (!profile_field(line, "\"op_name\"", op, sizeof op)) op[0] = '\0';
      if (!profile_field(line, "\"provider\"", provider, sizeof provider)) provider[0] = '\0';
      if (is_gelu_event(name, op, provider)) pending += dur;
    } else if (profile_field(line, "\"name\"", name, sizeof name) &&
               strcmp(name, "model_run") == 0) {
      if (seen_runs++ > 0 && out->runs < MAX_PROFILED_RUNS) {
        out->run_us[out->runs] = dur;
        out->gelu_us[out->runs] = pending;
        out->runs++;
      }
      pending = 0;
    }
  }
  fclose(f);
  return out->runs > 0 ? 0 : -1;
}

static double median_of(const double *v, size_t n) {
  double *copy = malloc(n * sizeof *copy);
  if (copy == NULL) return 0;
  memcpy(copy, v, n * sizeof *copy);
  qsort(copy, n, sizeof *copy, cmp_double);
  const double m = copy[n / 2];
  free(copy);
  return m;
}

/* Ends a profiled arm's session and reads its profile. */
static int finish_profile(arm *a, gelu_share *out) {
  char path[1024];
  actx_ort_error err;
  int rc = 0;
  if (actx_ort_session_end_profiling(a->session, path, sizeof path, &err) != 0) {
    printf("  profile: %s\n", err.message);
    rc = -1;
  } else {
    rc = read_profile(path, out);
    remove(path);
  }
  arm_close(a);
  return rc;
}

/* Profiles both arms, their runs interleaved (A B, B A, ...) so that the machine's drifts hit
 * both alike, and prints the medians per run. */
static void profile_pair(const actx_ab_model *m, const char *policy, int threads, int runs) {
  static gelu_share shares[2];
  const char *policies[2] = {g_baseline, policy};
  const int arm_threads[2] = {g_threads_a ? g_threads_a : threads, threads};
  const char *names[2] = {g_baseline ? g_baseline : "ORT alone", "ORT + actx"};
  arm arms[2];
  int ok[2];
  if (runs > MAX_PROFILED_RUNS) runs = MAX_PROFILED_RUNS;
  for (int k = 0; k < 2; k++) {
    const ep_session_spec spec = {.policy = policies[k],
                                  .threads = arm_threads[k],
                                  NO_SPIN,
                                  .profile_prefix = k ? "bench_ep_ab_actx" : "bench_ep_ab_ort"};
    ok[k] = arm_open_case(&arms[k], m, &spec);
  }
  bool failed = ok[0] != 0 || ok[1] != 0;
  for (int r = 0; r <= runs && !failed; r++)
    for (int j = 0; j < 2 && !failed; j++) failed = arm_time(&arms[r % 2 ? 1 - j : j], 1) < 0;
  for (int k = 0; k < 2; k++)
    if (ok[k] == 0 && finish_profile(&arms[k], &shares[k]) != 0) failed = true;
  if (failed) {
    printf("    profile failed\n");
    return;
  }
  for (int k = 0; k < 2; k++) {
    const gelu_share *g = &shares[k];
    static double share[MAX_PROFILED_RUNS];
    for (size_t i = 0; i < g->runs; i++) share[i] = g->gelu_us[i] / g->run_us[i];
    printf("    %-10s GELU part %9.1f us of %10.1f us per run: %5.1f%% (medians of %zu runs)\n",
           names[k], median_of(g->gelu_us, g->runs), median_of(g->run_us, g->runs),
           100.0 * median_of(share, g->runs), g->runs);
  }
}

static int g_profile_runs; /* --profile: profiled runs per arm (0: none) */

/* "f16", "bf16", anything else float32 (as --dtype reads it) */
static actx_dtype parse_dtype(const char *d) {
  return strcmp(d, "f16") == 0 ? ACTX_F16 : strcmp(d, "bf16") == 0 ? ACTX_BF16 : ACTX_F32;
}

/* --case: a model of actx ab's table, ORT alone against ORT + actx. */
static void bench_case(const actx_ab_case *c, actx_dtype dtype, size_t n, const char *policy,
                       int threads, int batches) {
  actx_ab_model m, m_a;
  char err[512];
  const actx_dtype dtype_a = g_dtype_a ? parse_dtype(g_dtype_a) : dtype;
  if (c->build(c, dtype, n, 20240611u + n, &m, err, sizeof err) != 0) {
    printf("%s: %s\n", c->name, err);
    return;
  }
  if (dtype_a != dtype && c->build(c, dtype_a, n, 20240611u + n, &m_a, err, sizeof err) != 0) {
    printf("%s: %s\n", c->name, err);
    actx_ab_model_free(&m);
    return;
  }
  arm a_ort, a_actx;
  const ep_session_spec ort_spec = {.policy = g_baseline,
                                    .threads = g_threads_a ? g_threads_a : threads, NO_SPIN};
  const ep_session_spec actx_spec = {.policy = policy, .threads = threads, NO_SPIN};
  const int ok_ort = arm_open_case(&a_ort, dtype_a != dtype ? &m_a : &m, &ort_spec);
  const int ok_actx = arm_open_case(&a_actx, &m, &actx_spec);
  if (ok_ort == 0 && ok_actx == 0) {
    char note[96] = "";
    actx_ort_error e;
    const long on_actx = actx_ort_count_nodes_on(a_actx.session, "actx", &e);
    snprintf(note, sizeof note, "(%ld nodes on actx)", on_actx);
    char dtypes[16];
    snprintf(dtypes, sizeof dtypes, "%s%s%s", dtype_a != dtype ? actx_dtype_name(dtype_a) : "",
             dtype_a != dtype ? ":" : "", actx_dtype_name(dtype));
    compare_arms(c->name, dtypes, m.elements, threads, batches, &a_ort, &a_actx, note);
  } else {
    printf("%-20s %-5s %8zu %2d  a session failed\n", c->name, actx_dtype_name(dtype), m.elements,
           threads);
  }
  if (ok_ort == 0) arm_close(&a_ort);
  if (ok_actx == 0) arm_close(&a_actx);
  if (g_profile_runs > 0 && ok_ort == 0 && ok_actx == 0)
    profile_pair(&m, policy, threads, g_profile_runs);
  fflush(stdout);
  actx_ab_model_free(&m);
  if (dtype_a != dtype) actx_ab_model_free(&m_a);
}

static void bench_one(const char *name, const ep_model_spec *op_spec, model_kind kind,
                      const char *policy, int32_t elem_type, size_t n, int threads, int batches) {
  const int64_t row = n < ROW ? (int64_t)n : ROW;
  const int64_t dims[2] = {(int64_t)n / row, row};
  ep_model_spec spec = op_spec ? *op_spec : (ep_model_spec){0};
  spec.elem_type = elem_type;
  spec.rank = 2;
  memcpy(spec.dims, dims, sizeof dims);
  const bool has_bias = kind == MODEL_ADDGELU || (kind == MODEL_SINGLE && spec.bias);
  if (spec.bias) {
    spec.bias_rank = 1;
    spec.bias_dims[0] = row;
  }
  uint8_t *model = NULL;
  size_t size = 0;
  const int rc = kind == MODEL_SINGLE ? ep_build_model(&spec, &model, &size)
                                      : build_composite(kind, elem_type, dims, &model, &size);
  if (rc != 0) return;

  const size_t es = actx_elem_size(elem_type);
  void *x = malloc(n * es), *bias = has_bias ? malloc((size_t)row * es) : NULL;
  /* moderate values: the timing of these kernels does not depend on them */
  for (size_t i = 0; i < n; i++) {
    const float v = (float)((int)(i % 2001) - 1000) / 250.0f;
    if (elem_type == ACTX_ELEM_FLOAT)
      ((float *)x)[i] = v;
    else
      ep_fill_inputs(elem_type, (char *)x + i * es, 1, i);
  }
  if (bias) ep_fill_inputs(elem_type, bias, (size_t)row, 7);

  arm a_ort, a_actx;
  const int ok_ort = arm_open(&a_ort, model, size, g_baseline, g_threads_a ? g_threads_a : threads,
                              elem_type, x, dims, 2, bias, row);
  const int ok_actx =
      arm_open(&a_actx, model, size, policy, threads, elem_type, x, dims, 2, bias, row);
  char ep[64] = "";
  if (ok_actx == 0) ep_node_ep(a_actx.session, EP_TEST_NODE, ep, sizeof ep);
  if (ok_actx != 0) {
    printf("%-20s %-5s %8zu %2d  actx session failed\n", name, actx_elem_name(elem_type), n,
           threads);
  } else if (ok_ort != 0) {
    printf("%-20s %-5s %8zu %2d  ORT alone cannot run it (no kernel); node on %s\n", name,
           actx_elem_name(elem_type), n, threads, ep);
  } else {
    char what[96];
    snprintf(what, sizeof what, "(node on %s)", ep);
    compare_arms(name, actx_elem_name(elem_type), n, threads, batches, &a_ort, &a_actx, what);
  }
  fflush(stdout);
  if (ok_ort == 0) arm_close(&a_ort);
  if (ok_actx == 0) arm_close(&a_actx);
  free(x);
  free(bias);
  free(model);
}

static size_t parse_list(const char *s, size_t *out, size_t max) {
  size_t n = 0;
  while (s && *s && n < max) {
    out[n++] = strtoull(s, NULL, 10);
    s = strchr(s, ',');
    if (s) s++;
  }
  return n;
}

int main(int argc, char **argv) {
  if (ep_test_init(argc, argv) != 0) return 2;
  size_t sizes[16] = {512, 4096, 16384, 65536, 262144, 1048576};
  size_t n_sizes = 6;
  size_t threads[8] = {1, 2};
  size_t n_threads = 2;
  int32_t elem_type = ACTX_ELEM_FLOAT;
  const char *only_op = NULL, *policy = "all";
  model_kind kind = MODEL_SINGLE;
  const actx_ab_case *ab_case = NULL;
  actx_dtype dtype = ACTX_F32;
  int batches = 21;
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0)
      batches = 7;
    else if (strcmp(argv[i], "--batches") == 0 && i + 1 < argc)
      batches = atoi(argv[++i]);
    else if (strcmp(argv[i], "--batch-us") == 0 && i + 1 < argc)
      g_batch_us = atof(argv[++i]);
    else if (strcmp(argv[i], "--profile") == 0 && i + 1 < argc)
      g_profile_runs = atoi(argv[++i]);
    else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc) {
      const char *name = argv[++i];
      size_t n_cases = 0;
      const actx_ab_case *cases = actx_ab_cases(&n_cases);
      for (size_t c = 0; c < n_cases; c++)
        if (strcmp(cases[c].name, name) == 0) ab_case = &cases[c];
      if (ab_case == NULL) {
        printf("unknown case %s (see actx ab --list)\n", name);
        return 2;
      }
    } else if (strcmp(argv[i], "--threads-a") == 0 && i + 1 < argc)
      g_threads_a = atoi(argv[++i]);
    else if (strcmp(argv[i], "--dtype-a") == 0 && i + 1 < argc)
      g_dtype_a = argv[++i];
    else if (strcmp(argv[i], "--op") == 0 && i + 1 < argc)
      only_op = argv[++i];
    else if (strcmp(argv[i], "--policy") == 0 && i + 1 < argc)
      policy = argv[++i];
    else if (strcmp(argv[i], "--baseline") == 0 && i + 1 < argc) {
      const char *b = argv[++i];
      g_baseline = strcmp(b, "ort") == 0 ? NULL : b;
    } else if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc)
      n_sizes = parse_list(argv[++i], sizes, 16);
    else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
      n_threads = parse_list(argv[++i], threads, 8);
    else if (strcmp(argv[i], "--dtype") == 0 && i + 1 < argc) {
      dtype = parse_dtype(argv[++i]);
      elem_type = dtype == ACTX_F16    ? ACTX_ELEM_FLOAT16
                  : dtype == ACTX_BF16 ? ACTX_ELEM_BFLOAT16
                                       : ACTX_ELEM_FLOAT;
    } else if (strcmp(argv[i], "--model") == 0 && i + 1 < argc) {
      const char *k = argv[++i];
      kind = strcmp(k, "addgelu") == 0   ? MODEL_ADDGELU
             : strcmp(k, "pattern") == 0 ? MODEL_PATTERN
                                         : MODEL_SINGLE;
    } else {
      printf("unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  if (g_dtype_a != NULL && ab_case == NULL) {
    printf("--dtype-a needs --case\n");
    return 2;
  }
  actx_ort_error err;
  if (actx_ort_api(&err) == NULL) {
    printf("%s\n", err.message);
    return 1;
  }
  if (actx_ort_api(NULL)->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &g_cpu) != NULL)
    return 1;
  char arm_a[96];
  if (g_baseline)
    snprintf(arm_a, sizeof arm_a, "(ORT + actx, policy %s)", g_baseline);
  else
    snprintf(arm_a, sizeof arm_a, "ORT alone");
  if (g_threads_a) {
    const size_t len = strlen(arm_a);
    snprintf(arm_a + len, sizeof arm_a - len, " at %d threads", g_threads_a);
  }
  if (g_dtype_a) {
    const size_t len = strlen(arm_a);
    snprintf(arm_a + len, sizeof arm_a - len, " in %s", actx_dtype_name(parse_dtype(g_dtype_a)));
  }
  printf("# ratio = %s / (ORT + actx, policy %s); medians of %d interleaved batches\n", arm_a,
         policy, batches);
  printf("# columns: op dtype elements threads  A-time  B-time  ratio\n");
  for (size_t t = 0; t < n_threads; t++)
    for (size_t s = 0; s < n_sizes; s++) {
      if (ab_case != NULL) {
        bench_case(ab_case, dtype, sizes[s], policy, (int)threads[t], batches);
        continue;
      }
      if (sizes[s] % ROW != 0 && sizes[s] > ROW) continue;
      if (kind != MODEL_SINGLE) {
        bench_one(kind == MODEL_ADDGELU ? "Add+Gelu" : "exported-gelu", NULL, kind, policy,
                  elem_type, sizes[s], (int)threads[t], batches);
        continue;
      }
      for (size_t o = 0; o < N_OPS; o++)
        if (only_op == NULL || strcmp(only_op, ops[o].name) == 0)
          bench_one(ops[o].name, &ops[o].spec, kind, policy, elem_type, sizes[s], (int)threads[t],
                    batches);
    }
  actx_ort_api(NULL)->ReleaseMemoryInfo(g_cpu);
  actx_ort_shutdown();
  return 0;
}
