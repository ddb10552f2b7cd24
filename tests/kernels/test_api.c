/* The public API's contract: every bad argument gets its actx_status (never a crash), the
 * convenience functions and plans equal actx_compute, every thread count and split gives the
 * same bits (under both ORT rules), and so do threads racing to build a float16 / bfloat16
 * table. */
#include <pthread.h>

#include "../../src/lut.h"
#include "test_util.h"

static void check_errors(void) {
  float x[16] = {0}, y[16], b[4] = {0};
  actx_op_desc d = {.op = ACTX_OP_ERF, .dtype = ACTX_F32};
  EXPECT(actx_compute(NULL, x, y, 16, NULL) == ACTX_ERROR_NULL_POINTER, "NULL desc");
  EXPECT(actx_compute(&d, NULL, y, 16, NULL) == ACTX_ERROR_NULL_POINTER, "NULL x");
  EXPECT(actx_compute(&d, x, NULL, 16, NULL) == ACTX_ERROR_NULL_POINTER, "NULL y");
  EXPECT(actx_compute(&d, NULL, NULL, 0, NULL) == ACTX_OK, "n = 0 with NULL buffers");
  EXPECT(actx_compute(&d, x, x + 1, 8, NULL) == ACTX_ERROR_OVERLAP, "partial overlap");
  EXPECT(actx_compute(&d, x + 1, x, 8, NULL) == ACTX_ERROR_OVERLAP, "partial overlap (2)");
  EXPECT(actx_compute(&d, x, x + 8, 8, NULL) == ACTX_OK, "adjacent buffers");
  EXPECT(actx_compute(&d, x, x, 16, NULL) == ACTX_OK, "in place");
  d.op = (actx_op)ACTX_OP_COUNT;
  EXPECT(actx_compute(&d, x, y, 16, NULL) == ACTX_ERROR_INVALID_ARGUMENT, "bad op");
  d.op = (actx_op)-1;
  EXPECT(actx_compute(&d, x, y, 16, NULL) == ACTX_ERROR_INVALID_ARGUMENT, "negative op");
  d.op = ACTX_OP_ERF;
  d.dtype = (actx_dtype)ACTX_DTYPE_COUNT;
  EXPECT(actx_compute(&d, x, y, 16, NULL) == ACTX_ERROR_INVALID_ARGUMENT, "bad dtype");
  d.dtype = ACTX_F32;
  d.bias = b;
  d.bias_len = 4;
  EXPECT(actx_compute(&d, x, y, 16, NULL) == ACTX_ERROR_INVALID_ARGUMENT, "bias on erf");
  d.op = ACTX_OP_GELU;
  EXPECT(actx_compute(&d, x, y, 16, NULL) == ACTX_OK, "bias on gelu");
  EXPECT(actx_compute(&d, x, y, 15, NULL) == ACTX_ERROR_INVALID_BIAS, "n not a multiple of bias length");
  d.bias_len = 0;
  EXPECT(actx_compute(&d, x, y, 16, NULL) == ACTX_ERROR_INVALID_BIAS, "bias with h = 0");
  d.bias = NULL;
  d.bias_len = 4;
  EXPECT(actx_compute(&d, x, y, 16, NULL) == ACTX_ERROR_NULL_POINTER, "h > 0, NULL bias");
  d.bias_len = 0;
  d.alpha = 2.0f;
  EXPECT(actx_compute(&d, x, y, 16, NULL) == ACTX_ERROR_INVALID_ARGUMENT, "alpha on gelu");
  d.op = ACTX_OP_QUICK_GELU;
  EXPECT(actx_compute(&d, x, y, 16, NULL) == ACTX_OK, "alpha on quick_gelu");

  EXPECT(actx_bias_gelu_f32(x, y, 16, NULL, 4) == ACTX_ERROR_NULL_POINTER, "bias_gelu NULL bias");
  EXPECT(actx_bias_gelu_f32(x, y, 16, b, 0) == ACTX_ERROR_INVALID_BIAS, "bias_gelu h = 0");
  EXPECT(actx_bias_gelu_f32(x, y, 16, b, 3) == ACTX_ERROR_INVALID_BIAS, "bias_gelu 16 mod 3");
  EXPECT(actx_fast_gelu_f32(x, y, 16, NULL, 0) == ACTX_OK, "fast_gelu without bias");
  EXPECT(actx_fast_gelu_f32(x, y, 16, b, 5) == ACTX_ERROR_INVALID_BIAS, "fast_gelu 16 mod 5");
  EXPECT(actx_erf_f32(NULL, y, 1) == ACTX_ERROR_NULL_POINTER, "erf_f32 NULL");
  EXPECT(actx_erf_f32(NULL, NULL, 0) == ACTX_OK, "erf_f32 empty");
  uint16_t h[16] = {0};
  EXPECT(actx_tanh_f16(h, h, 16) == ACTX_OK && actx_sigmoid_bf16(h, h, 16) == ACTX_OK, "half");

  EXPECT(actx_set_isa((actx_isa)ACTX_ISA_COUNT) == ACTX_ERROR_INVALID_ARGUMENT, "bad isa");
  const actx_isa isa = actx_get_isa();
  for (int i = 0; i < ACTX_ISA_COUNT; i++)
    EXPECT(actx_set_isa((actx_isa)i) ==
               (actx_isa_supported((actx_isa)i) ? ACTX_OK : ACTX_ERROR_UNSUPPORTED),
           "set isa %s", actx_isa_name((actx_isa)i));
  actx_set_isa(isa);
  EXPECT(strcmp(actx_isa_name(ACTX_ISA_AVX512), "avx512") == 0, "isa name");
  EXPECT(strcmp(actx_isa_name(ACTX_ISA_COUNT), "unknown") == 0, "bad isa's name");
  EXPECT(actx_set_ort_rule(ACTX_ORT_RULE_COUNT) == ACTX_ERROR_INVALID_ARGUMENT, "bad rule");
  EXPECT(strcmp(actx_ort_rule_name(ACTX_ORT_RULE_AVX512), "avx512") == 0, "rule name");
  for (int st = 0; st <= ACTX_ERROR_OUT_OF_MEMORY; st++)
    EXPECT(actx_status_string((actx_status)st)[0] != '\0', "status string %d", st);
  EXPECT(strcmp(actx_status_string((actx_status)99), "unknown actx_status") == 0, "unknown status");
  EXPECT(strcmp(actx_op_name(ACTX_OP_QUICK_GELU), "quick_gelu") == 0, "op name");
  EXPECT(strcmp(actx_dtype_name(ACTX_BF16), "bf16") == 0, "dtype name");
  EXPECT(actx_dtype_size(ACTX_F16) == 2 && actx_dtype_size((actx_dtype)7) == 0, "dtype size");
  EXPECT(strcmp(actx_version_string(), "0.1.0") == 0, "version");
}

/* A caller's parallel-for that runs the tasks backwards, to show order does not matter. */
static size_t tasks_seen;
static void reverse_parallel_for(void *runner, actx_task_fn task, void *ctx, size_t num_tasks) {
  (void)runner;
  tasks_seen = num_tasks;
  for (size_t i = num_tasks; i-- > 0;) task(ctx, i);
}

/* Plans: actx_compute's checks and errors, and its bits for every op, dtype, size and bias,
 * under the ORT rule in force when the plan was made. */
static void check_plan_errors(void) {
  float x[16] = {0}, y[16], b[4] = {0};
  actx_plan *p = (actx_plan *)&p;
  actx_op_desc d = {.op = ACTX_OP_ERF, .dtype = ACTX_F32};
  EXPECT(actx_plan_create(NULL, &p) == ACTX_ERROR_NULL_POINTER && p == NULL, "create NULL desc");
  EXPECT(actx_plan_create(&d, NULL) == ACTX_ERROR_NULL_POINTER, "create NULL plan");
  d.op = ACTX_OP_COUNT;
  EXPECT(actx_plan_create(&d, &p) == ACTX_ERROR_INVALID_ARGUMENT && p == NULL, "create bad op");
  d = (actx_op_desc){.op = ACTX_OP_TANH, .dtype = ACTX_F32, .alpha = 1.0f};
  EXPECT(actx_plan_create(&d, &p) == ACTX_ERROR_INVALID_ARGUMENT, "create alpha on tanh");
  d = (actx_op_desc){.op = ACTX_OP_ERF, .dtype = ACTX_F32, .bias = b, .bias_len = 4};
  EXPECT(actx_plan_create(&d, &p) == ACTX_ERROR_INVALID_ARGUMENT, "create bias on erf");
  EXPECT(actx_plan_run(NULL, x, y, 16, NULL, 0, NULL) == ACTX_ERROR_NULL_POINTER, "run NULL plan");
  actx_plan_destroy(NULL);

  d = (actx_op_desc){.op = ACTX_OP_ERF, .dtype = ACTX_F32};
  EXPECT(actx_plan_create(&d, &p) == ACTX_OK && p != NULL, "create erf");
  EXPECT(actx_plan_run(p, x, y, 16, b, 4, NULL) == ACTX_ERROR_INVALID_ARGUMENT, "bias on erf");
  EXPECT(actx_plan_run(p, NULL, y, 16, NULL, 0, NULL) == ACTX_ERROR_NULL_POINTER, "NULL x");
  EXPECT(actx_plan_run(p, x, NULL, 16, NULL, 0, NULL) == ACTX_ERROR_NULL_POINTER, "NULL y");
  EXPECT(actx_plan_run(p, NULL, NULL, 0, NULL, 0, NULL) == ACTX_OK, "n = 0, NULL buffers");
  EXPECT(actx_plan_run(p, x, x + 1, 8, NULL, 0, NULL) == ACTX_ERROR_OVERLAP, "overlap");
  EXPECT(actx_plan_run(p, x, x, 16, NULL, 0, NULL) == ACTX_OK, "in place");
  actx_plan_destroy(p);

  d.op = ACTX_OP_GELU;
  EXPECT(actx_plan_create(&d, &p) == ACTX_OK, "create gelu");
  EXPECT(actx_plan_run(p, x, y, 16, b, 4, NULL) == ACTX_OK, "gelu with bias");
  EXPECT(actx_plan_run(p, x, y, 15, b, 4, NULL) == ACTX_ERROR_INVALID_BIAS, "15 mod 4");
  EXPECT(actx_plan_run(p, x, y, 16, b, 0, NULL) == ACTX_ERROR_INVALID_BIAS, "bias, h = 0");
  EXPECT(actx_plan_run(p, x, y, 16, NULL, 4, NULL) == ACTX_ERROR_NULL_POINTER, "h = 4, no bias");
  actx_plan_destroy(p);
}

static void check_plan_bits(void) {
  enum { N = 40000, H = 7 }; /* N: past the table threshold and split in two */
  static uint16_t xh[N], ah[N], bh[N], biash[H];
  static float xf[N], af[N], bf[N], biasf[H];
  uint64_t s = 5;
  for (size_t i = 0; i < N; i++) xf[i] = rng_uniform(&s, -20, 20), xh[i] = (uint16_t)rng_next(&s);
  /* NaNs with a payload, signalling ones included: the rules differ on them */
  const uint32_t nan_bits[] = {0x7fa00001u, 0xffc01234u, 0x7f800001u};
  for (size_t i = 0; i < 3; i++) memcpy(&xf[100 + 7 * i], &nan_bits[i], 4);
  for (size_t i = 0; i < H; i++) biasf[i] = rng_uniform(&s, -1, 1), biash[i] = (uint16_t)(0x3c00 + i);
  const size_t sizes[] = {1, 17, 300, 5005, N};
  const actx_parallel par = {reverse_parallel_for, NULL, 2, 0};
  const actx_ort_rule rule = actx_get_ort_rule();
  for (int r = 0; r < ACTX_ORT_RULE_COUNT; r++)
    for (int op = 0; op < ACTX_OP_COUNT; op++)
      for (int dt = 0; dt < ACTX_DTYPE_COUNT; dt++)
        for (int variant = 0; variant < 2; variant++) {
          /* the second variant: with a bias, or QuickGelu as SiLU (alpha 1, the rules differ) */
          actx_op_desc d = {.op = (actx_op)op, .dtype = (actx_dtype)dt};
          const int biased = variant && (op == ACTX_OP_GELU || op == ACTX_OP_GELU_TANH);
          if (op == ACTX_OP_QUICK_GELU) d.alpha = variant ? 1.0f : 1.702f;
          else if (variant && !biased) continue;
          actx_set_ort_rule((actx_ort_rule)r);
          actx_plan *p = NULL;
          EXPECT(actx_plan_create(&d, &p) == ACTX_OK, "create %s", actx_op_name(d.op));
          /* made under rule r, run under the other: the plan keeps r */
          actx_set_ort_rule((actx_ort_rule)(1 - r));
          const void *x = dt == ACTX_F32 ? (const void *)xf : xh;
          void *a = dt == ACTX_F32 ? (void *)af : ah, *b = dt == ACTX_F32 ? (void *)bf : bh;
          const size_t es = actx_dtype_size(d.dtype);
          if (biased) d.bias = dt == ACTX_F32 ? (const void *)biasf : biash, d.bias_len = H;
          for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            const size_t n = sizes[k] / H * H + (biased ? 0 : sizes[k] % H);
            memset(a, 0, n * es), memset(b, 0xff, n * es);
            EXPECT(actx_plan_run(p, x, a, n, d.bias, d.bias_len, &par) == ACTX_OK, "run");
            actx_set_ort_rule((actx_ort_rule)r);
            EXPECT(actx_compute(&d, x, b, n, &par) == ACTX_OK, "compute");
            actx_set_ort_rule((actx_ort_rule)(1 - r));
            EXPECT(memcmp(a, b, n * es) == 0, "%s rule, %s %s%s, n = %zu: plan != actx_compute",
                   actx_ort_rule_name((actx_ort_rule)r), actx_op_name(d.op),
                   actx_dtype_name(d.dtype), biased ? " with bias" : "", n);
          }
          actx_plan_destroy(p);
        }
  actx_set_ort_rule(rule);
}

static void check_threads(void) {
  const size_t n = 1369 * 768; /* the last task is shorter than the others */
  float *x = malloc(n * 4), *ref = malloc(n * 4), *y = malloc(n * 4), *bias = malloc(768 * 4);
  uint64_t s = 1;
  for (size_t i = 0; i < n; i++) x[i] = rng_uniform(&s, -8, 8);
  for (size_t i = 0; i < 768; i++) bias[i] = rng_uniform(&s, -1, 1);
  const actx_op_desc d = {.op = ACTX_OP_GELU, .dtype = ACTX_F32, .bias = bias, .bias_len = 768};
  EXPECT(actx_compute(&d, x, ref, n, NULL) == ACTX_OK, "single");
  for (size_t tasks = 2; tasks <= 7; tasks++) {
    const actx_parallel par = {reverse_parallel_for, NULL, tasks, 0};
    memset(y, 0, n * 4);
    EXPECT(actx_compute(&d, x, y, n, &par) == ACTX_OK, "split");
    EXPECT(tasks_seen == tasks, "asked for %zu tasks, got %zu", tasks, tasks_seen);
    EXPECT(memcmp(y, ref, n * 4) == 0, "%zu tasks change the bits", tasks);
  }
  /* below the threshold nothing is split */
  tasks_seen = 0;
  const actx_parallel par = {reverse_parallel_for, NULL, 8, 0};
  EXPECT(actx_compute(&d, x, y, actx_min_elements_per_task(ACTX_F32) / 768 * 768, &par) == ACTX_OK,
         "small");
  EXPECT(tasks_seen == 0, "a tensor below the threshold was split into %zu tasks", tasks_seen);
  /* the built-in pool */
  for (size_t t = 1; t <= 4; t++) {
    EXPECT(actx_set_num_threads(t) == ACTX_OK, "set threads %zu", t);
    EXPECT(actx_get_num_threads() == t, "get threads");
    memset(y, 0, n * 4);
    EXPECT(actx_bias_gelu_f32(x, y, n, bias, 768) == ACTX_OK, "pool");
    EXPECT(memcmp(y, ref, n * 4) == 0, "%zu pool threads change the bits", t);
  }
  /* SiLU, which the ORT rule changes, under each rule: the pool's split gives one call's bits */
  const actx_ort_rule rule = actx_get_ort_rule();
  const actx_op_desc silu = {.op = ACTX_OP_QUICK_GELU, .dtype = ACTX_F32, .alpha = 1.0f};
  for (size_t i = 0; i < n; i++) x[i] = rng_uniform(&s, -20, 20); /* past the clamp near 17.5 */
  for (int r = 0; r < ACTX_ORT_RULE_COUNT; r++) {
    actx_set_ort_rule((actx_ort_rule)r);
    actx_set_num_threads(1);
    EXPECT(actx_compute(&silu, x, ref, n, NULL) == ACTX_OK, "silu single");
    actx_set_num_threads(3);
    memset(y, 0, n * 4);
    EXPECT(actx_quick_gelu_f32(x, y, n, 1.0f) == ACTX_OK, "silu pool");
    EXPECT(memcmp(y, ref, n * 4) == 0, "%s rule: 3 pool threads change silu's bits",
           actx_ort_rule_name((actx_ort_rule)r));
  }
  actx_set_ort_rule(rule);
  actx_set_num_threads(1);
  free(x), free(ref), free(y), free(bias);
}

/* Threads that reach a float16 / bfloat16 table first all build it at once (src/lut.c): every
 * one must get the kernel's bits. Runs first, before any table exists; TSan checks it too. */
#define RACE_THREADS 4
#define RACE_N 8192
#define RACE_PIECE 1024
_Static_assert(RACE_N >= ACTX_LUT_MIN_ELEMENTS && RACE_PIECE < ACTX_LUT_MIN_ELEMENTS,
               "the race must use the table, its reference the kernel");
typedef struct race {
  actx_dtype dtype;
  const uint16_t *x;
  uint16_t y[RACE_N];
} race;

static void *race_run(void *arg) {
  race *r = arg;
  const actx_op_desc d = {.op = ACTX_OP_GELU, .dtype = r->dtype};
  if (actx_compute(&d, r->x, r->y, RACE_N, NULL) != ACTX_OK) memset(r->y, 0, sizeof r->y);
  return NULL;
}

static void check_table_race(void) {
  static uint16_t x[RACE_N], ref[RACE_N];
  static race races[2][RACE_THREADS];
  uint64_t s = 9;
  for (size_t i = 0; i < RACE_N; i++) x[i] = (uint16_t)rng_next(&s);
  pthread_t th[2][RACE_THREADS];
  for (int t = 0; t < 2; t++)
    for (int i = 0; i < RACE_THREADS; i++) {
      races[t][i] = (race){.dtype = t ? ACTX_BF16 : ACTX_F16, .x = x};
      EXPECT(pthread_create(&th[t][i], NULL, race_run, &races[t][i]) == 0, "pthread_create");
    }
  for (int t = 0; t < 2; t++) {
    for (int i = 0; i < RACE_THREADS; i++) pthread_join(th[t][i], NULL);
    /* the reference: the same op below the table's threshold, in pieces, runs the kernel */
    const actx_op_desc d = {.op = ACTX_OP_GELU, .dtype = t ? ACTX_BF16 : ACTX_F16};
    for (size_t i = 0; i < RACE_N; i += RACE_PIECE)
      EXPECT(actx_compute(&d, x + i, ref + i, RACE_PIECE, NULL) == ACTX_OK, "reference");
    for (int i = 0; i < RACE_THREADS; i++)
      EXPECT(memcmp(races[t][i].y, ref, sizeof ref) == 0, "%s thread %d: wrong bits",
             actx_dtype_name(d.dtype), i);
  }
}

/* actx_prepare: the argument checks of actx_compute, and a table built before any compute. */
static void check_prepare(void) {
  EXPECT(actx_prepare(NULL) == ACTX_ERROR_NULL_POINTER, "prepare NULL");
  actx_op_desc d = {.op = ACTX_OP_COUNT, .dtype = ACTX_F16};
  EXPECT(actx_prepare(&d) == ACTX_ERROR_INVALID_ARGUMENT, "prepare bad op");
  d = (actx_op_desc){.op = ACTX_OP_TANH, .dtype = ACTX_F16, .alpha = 1.0f};
  EXPECT(actx_prepare(&d) == ACTX_ERROR_INVALID_ARGUMENT, "prepare alpha on tanh");
  d = (actx_op_desc){.op = ACTX_OP_ERF, .dtype = ACTX_F32};
  EXPECT(actx_prepare(&d) == ACTX_OK, "prepare f32 (nothing to do)");
  d = (actx_op_desc){.op = ACTX_OP_SIGMOID, .dtype = ACTX_BF16};
  EXPECT(actx_prepare(&d) == ACTX_OK, "prepare bf16 sigmoid (no table)");
  d = (actx_op_desc){.op = ACTX_OP_GELU_TANH, .dtype = ACTX_BF16};
  EXPECT(actx_lut_peek(d.op, d.dtype) == NULL, "bf16 gelu_tanh table built before its time");
  EXPECT(actx_prepare(&d) == ACTX_OK, "prepare bf16 gelu_tanh");
  EXPECT(actx_lut_peek(d.op, d.dtype) != NULL, "actx_prepare built no table");
  const uint16_t *t = actx_lut_peek(d.op, d.dtype);
  EXPECT(actx_prepare(&d) == ACTX_OK && actx_lut_peek(d.op, d.dtype) == t, "prepare twice");
}

static void check_convenience(void) {
  float x[300], a[300], b[300], bias[3] = {0.5f, -1, 2};
  uint64_t s = 2;
  for (int i = 0; i < 300; i++) x[i] = rng_uniform(&s, -5, 5);
#define SAME(call, op_, bptr, blen, alph)                                                 \
  do {                                                                                   \
    const actx_op_desc d = {.op = op_, .dtype = ACTX_F32, .bias = bptr, .bias_len = blen, \
                            .alpha = alph};                                             \
    EXPECT(call == ACTX_OK && actx_compute(&d, x, b, 300, NULL) == ACTX_OK, #call);      \
    EXPECT(memcmp(a, b, sizeof a) == 0, #call " differs from actx_compute");            \
  } while (0)
  SAME(actx_erf_f32(x, a, 300), ACTX_OP_ERF, NULL, 0, 0);
  SAME(actx_gelu_f32(x, a, 300), ACTX_OP_GELU, NULL, 0, 0);
  SAME(actx_gelu_tanh_f32(x, a, 300), ACTX_OP_GELU_TANH, NULL, 0, 0);
  SAME(actx_bias_gelu_f32(x, a, 300, bias, 3), ACTX_OP_GELU, bias, 3, 0);
  SAME(actx_fast_gelu_f32(x, a, 300, bias, 3), ACTX_OP_GELU_TANH, bias, 3, 0);
  SAME(actx_fast_gelu_f32(x, a, 300, NULL, 0), ACTX_OP_GELU_TANH, NULL, 0, 0);
  SAME(actx_quick_gelu_f32(x, a, 300, 1.702f), ACTX_OP_QUICK_GELU, NULL, 0, 1.702f);
  SAME(actx_tanh_f32(x, a, 300), ACTX_OP_TANH, NULL, 0, 0);
  SAME(actx_sigmoid_f32(x, a, 300), ACTX_OP_SIGMOID, NULL, 0, 0);
  /* bias_gelu(x, b) == gelu(x + b) computed by hand */
  float xb[300];
  for (int i = 0; i < 300; i++) xb[i] = x[i] + bias[i % 3];
  actx_bias_gelu_f32(x, a, 300, bias, 3);
  actx_gelu_f32(xb, b, 300);
  EXPECT(memcmp(a, b, sizeof a) == 0, "bias_gelu(x, b) != gelu(x + b)");
}

int main(void) {
  check_table_race();
  check_prepare();
  check_errors();
  check_convenience();
  check_plan_errors();
  check_plan_bits();
  check_threads();
  return test_finish("test_api");
}
