/* A/B measurement of whole-session Run() time: ORT alone vs ORT + actx (policy all), for the
 * measurements behind docs/ep-policy.md. Not a test (timings are noisy); the full A/B tool is
 * `actx ab`.
 *
 * usage: bench_ep_ab <libactx_ep.so> [--quick] [--dtype f32|f16|bf16] [--op NAME]
 *                    [--sizes n,n,...] [--threads t,t,...] [--model single|addgelu|pattern]
 *                    [--policy P] [--baseline ort|none|all] [--threads-a T] [--batches B]
 *                    [--batch-us T]
 *
 * --baseline none makes arm A a session with the actx EP appended but claiming nothing (policy
 * none): A/B then isolates the per-node cost of running the node in actx instead of ORT's
 * kernel, without the fixed per-Run cost ORT pays for having a second EP in the session.
 * --baseline all --threads-a 1 compares actx on 1 thread with actx on the pool (the parallel
 * threshold; build the EP with -DACTX_EP_PARALLEL_MIN_ELEMENTS=0 to let it split everything).
 *
 * For each (operator, size, thread count) both sessions are created in this process with the
 * same model and options, warmed up, then timed in interleaved batches (A B B A ...): each batch
 * runs one arm enough times to last ~2 ms and records the mean time per Run. Reported: the
 * median per arm over the batches, and ratio = the median over adjacent A/B batch pairs of
 * A / B (> 1: actx faster), which cancels the drifts a shared machine adds.
 *
 * Models: `single` is the one-node model; `addgelu` is Add(x, bias) → Gelu (ORT fuses it into
 * BiasGelu unless the Gelu is claimed); `pattern` is the exported Div → Erf → Add → Mul → Mul
 * GELU at opset 17 (ORT fuses it into com.microsoft Gelu unless the Erf is claimed). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ep_test.h"

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
typedef struct arm {
  actx_ort_session *session;
  const OrtApi *api;
  OrtValue *inputs[2];
  const char *input_names[2];
  size_t n_inputs;
  const char *output_name;
} arm;

static OrtMemoryInfo *g_cpu;

static int arm_open(arm *a, const uint8_t *model, size_t size, const char *policy, int threads,
                    int32_t elem_type, void *x, const int64_t *dims, size_t rank, void *bias,
                    int64_t bias_len) {
  memset(a, 0, sizeof *a);
  const ep_session_spec spec = {.policy = policy, .threads = threads};
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
  a->output_name = "y";
  if (st != NULL) {
    printf("  input: %s\n", a->api->GetErrorMessage(st));
    a->api->ReleaseStatus(st);
    return -1;
  }
  return 0;
}

static void arm_close(arm *a) {
  for (size_t i = 0; i < 2; i++)
    if (a->inputs[i]) a->api->ReleaseValue(a->inputs[i]);
  actx_ort_session_free(a->session);
  memset(a, 0, sizeof *a);
}

/* Runs `reps` times; returns the mean microseconds per Run, or -1 on error. */
static double arm_time(arm *a, int reps) {
  OrtSession *s = actx_ort_session_handle(a->session);
  const double t0 = now_us();
  for (int r = 0; r < reps; r++) {
    OrtValue *out = NULL;
    OrtStatus *st = a->api->Run(s, NULL, a->input_names, (const OrtValue *const *)a->inputs,
                                a->n_inputs, &a->output_name, 1, &out);
    if (st != NULL) {
      printf("  run: %s\n", a->api->GetErrorMessage(st));
      a->api->ReleaseStatus(st);
      return -1;
    }
    a->api->ReleaseValue(out);
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
    /* reps per batch: ~g_batch_us of ORT's time */
    double probe = arm_time(&a_ort, 3);
    arm_time(&a_actx, 3);
    probe = arm_time(&a_ort, 5);
    int reps = probe > 0 ? (int)(g_batch_us / probe) : 1;
    if (reps < 1) reps = 1;
    static double t_ort[MAX_BATCHES], t_actx[MAX_BATCHES];
    if (batches > MAX_BATCHES) batches = MAX_BATCHES;
    for (int b = 0; b < batches; b++) {
      if (b % 2 == 0) {
        t_ort[b] = arm_time(&a_ort, reps);
        t_actx[b] = arm_time(&a_actx, reps);
      } else {
        t_actx[b] = arm_time(&a_actx, reps);
        t_ort[b] = arm_time(&a_ort, reps);
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
    printf("%-20s %-5s %8zu %2d  ort %10.2f us  actx %10.2f us  ratio %5.2f  (node on %s)\n", name,
           actx_elem_name(elem_type), n, threads, m_ort, m_actx, pair[batches / 2], ep);
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
  int batches = 21;
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0)
      batches = 7;
    else if (strcmp(argv[i], "--batches") == 0 && i + 1 < argc)
      batches = atoi(argv[++i]);
    else if (strcmp(argv[i], "--batch-us") == 0 && i + 1 < argc)
      g_batch_us = atof(argv[++i]);
    else if (strcmp(argv[i], "--threads-a") == 0 && i + 1 < argc)
      g_threads_a = atoi(argv[++i]);
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
      const char *d = argv[++i];
      elem_type = strcmp(d, "f16") == 0    ? ACTX_ELEM_FLOAT16
                  : strcmp(d, "bf16") == 0 ? ACTX_ELEM_BFLOAT16
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
  printf("# ratio = %s / (ORT + actx, policy %s); medians of %d interleaved batches\n", arm_a,
         policy, batches);
  printf("# columns: op dtype elements threads  A-time  B-time  ratio\n");
  for (size_t t = 0; t < n_threads; t++)
    for (size_t s = 0; s < n_sizes; s++) {
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
