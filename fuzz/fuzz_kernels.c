/* libFuzzer harness for libactx: arbitrary bytes become an op, a dtype, inputs, a length, a bias
 * and its width, buffer offsets, in-place or not, a task count and task order, QuickGelu's alpha
 * and the ORT rule (actx_set_ort_rule). Every input is computed on every ISA the CPU has (avx512,
 * avx2, portable) and must give the same bits on all; float32 results must be within each op's
 * accuracy bound of a double-precision reference, and a NaN input must come out as the rule
 * says (unchanged where it keeps NaNs, tests/kernels/cases.h, made quiet elsewhere); float16 /
 * bfloat16 results must be the float32 result of the widened inputs, rounded once (actx.h's
 * definition). Bad arguments the bytes ask for (a bias length that does not divide n, alpha on
 * an op without one, a bias on an op without one, overlapping buffers) must get their
 * actx_status and leave y untouched.
 *
 * The same file, built with ACTX_FUZZ_SPLIT=1, is fuzz_kernels_split: every input is tiled past
 * the length actx_compute splits into tasks, and the split over fake threads (tasks run in a
 * scrambled order on this thread) and over the built-in pool must give the bits of one call.
 *
 * A plan made for the input (actx_plan_create / actx_plan_run) must give the same bits too.
 *
 * Buffers are malloc'ed at their exact size (plus the requested misalignment), so AddressSanitizer
 * sees any read or write outside them. Any failure prints what was wrong and aborts. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/half.h"
#include "../tests/kernels/cases.h" /* the op list, the ORT rules' parameters */
#include "actx.h"

/* The input's header; the bytes after it are the bias (first) and x. */
enum {
  H_OP = 0,
  H_DTYPE,
  H_FLAGS,
  H_BIAS_LEN, /* 2 bytes: h - 1 */
  H_TASKS = 5, /* low nibble: tasks of the fake parallel-for; high: the order's seed */
  H_OFFSETS,   /* low nibble: x's byte offset; high: y's */
  H_ALPHA,     /* 4 bytes: float bits */
  H_BIG = 11,  /* 2 bytes: the extra length of fuzz_kernels_split */
  H_SIZE = 13
};

enum {
  F_BIAS = 1 << 0,
  F_IN_PLACE = 1 << 1,
  F_CONVENIENCE = 1 << 2, /* the actx_<op>_<dtype> entry points on the built-in pool */
  F_RULE_AVX512 = 1 << 3, /* the ORT rule of an AVX-512 host; else an AVX2 host's */
  F_BAD_BIAS_LEN = 1 << 4,
  F_BAD_ALPHA = 1 << 5,
  F_OVERLAP = 1 << 6,
};

/* Built with ACTX_FUZZ_SPLIT=1 (the fuzz_kernels_split target), every input is tiled to two
 * tasks' worth of elements (actx_min_elements_per_task) plus up to BIG_EXTRA_MAX more, so that
 * actx_compute splits it: over the fake tasks in any order and over the built-in pool. One such
 * input costs ~100 small ones, and libFuzzer would fill its corpus with them (every length
 * hits the kernels' loops a different number of times), so they have a target of their own. */
#ifndef ACTX_FUZZ_SPLIT
#define ACTX_FUZZ_SPLIT 0
#endif
#define BIG_EXTRA_MAX 4096
/* Threads of the built-in pool the convenience entry points use. */
#define POOL_THREADS 2
/* How many elements of a big input get the (slow) reference check; the rest repeat them. */
#define CHECKED_MAX 1024

/* Accuracy bounds for every finite input, in the measures of tests/kernels/test_accuracy.c: erf
 * and tanh in ulps of the result, the others as absolute error over max(1, |x|). That test's
 * bounds hold on its sweep of [-6, 6]; these are MLAS's worst cases over all float32 (measured
 * on every float in [2^-8, 2^7] and every 61st elsewhere, against double-precision libm), a
 * little rounded up: erf 1.001 ulp at 1.1998; tanh 5.46 ulp and 3.25e-7 at 8.4755; sigmoid
 * 1.78e-7 at 15.93; gelu 1.14e-7 at 1.149; tanh gelu 2.10e-7 at 4.144; QuickGelu 2.08e-7
 * (alpha 1 at 8.03; alphas 1.702, -0.5, 100 and 0.001 stay below). */
#define BOUND_ERF_ULP 1.05
#define BOUND_TANH_ULP 6.0
#define TANH_ULP_MIN_ABS_X 1e-18 /* below it x^2 underflows; only the absolute bound holds */
#define BOUND_TANH_ABS 3.5e-7
#define BOUND_SIGMOID_ABS 2e-7
#define BOUND_GELU_ABS 1.5e-7
#define BOUND_GELU_TANH_ABS 2.5e-7
#define BOUND_QUICK_GELU_ABS 2.5e-7

/* The checking code is not instrumented for coverage: its branches say nothing about libactx,
 * and tracing its comparisons cost more than the kernels. */
#define NO_COVERAGE __attribute__((no_sanitize("coverage")))

#define FAIL(...)                                  \
  do {                                             \
    fprintf(stderr, "fuzz_kernels: " __VA_ARGS__); \
    fputc('\n', stderr);                           \
    abort();                                       \
  } while (0)

typedef struct fuzz_case {
  actx_op_desc desc;
  size_t n, es;
  const unsigned char *x; /* n elements */
  size_t x_offset, y_offset;
  unsigned flags;
  size_t tasks;
  unsigned order_seed;
} fuzz_case;

/* The ISAs this CPU has (src/kernels.h's list), portable first; the last is the best. */
static actx_isa isas[ACTX_ISA_COUNT];
static size_t n_isas;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
#define FUZZ_ISA_(suffix, e) \
  if (actx_isa_supported(e)) isas[n_isas++] = e;
  ACTX_ISAS(FUZZ_ISA_)
#undef FUZZ_ISA_
  if (actx_set_num_threads(POOL_THREADS) != ACTX_OK) FAIL("cannot start the pool");
  return 0;
}

/* ---- the fake parallel-for: every task once, in an order scrambled by a seed ---- */

typedef struct scramble {
  unsigned seed;
  size_t calls, tasks;
} scramble;

static void scrambled_parallel_for(void *runner, actx_task_fn task, void *ctx, size_t num_tasks) {
  scramble *s = runner;
  s->calls++;
  s->tasks = num_tasks;
  /* i -> (start + i * step) mod num_tasks visits each task once for a step coprime with
   * num_tasks: 1 (rotated) and num_tasks - 1 (rotated and reversed) always are */
  const size_t start = s->seed % (num_tasks ? num_tasks : 1);
  const size_t step = (s->seed & 8) ? num_tasks - 1 : 1;
  for (size_t i = 0; i < num_tasks; i++) task(ctx, (start + i * step) % num_tasks);
}

/* ---- running one case ---- */

/* Calls the convenience entry point for desc (which must be valid for one). */
static actx_status convenience(const actx_op_desc *d, const void *x, void *y, size_t n) {
#define CALL(sfx, T)                                                                             \
  switch (d->op) {                                                                               \
    case ACTX_OP_ERF: return actx_erf_##sfx(x, y, n);                                            \
    case ACTX_OP_GELU:                                                                           \
      return d->bias ? actx_bias_gelu_##sfx(x, y, n, (const T *)d->bias, d->bias_len)            \
                     : actx_gelu_##sfx(x, y, n);                                                 \
    case ACTX_OP_GELU_TANH:                                                                      \
      return d->bias ? actx_fast_gelu_##sfx(x, y, n, (const T *)d->bias, d->bias_len)            \
                     : actx_gelu_tanh_##sfx(x, y, n);                                            \
    case ACTX_OP_QUICK_GELU: return actx_quick_gelu_##sfx(x, y, n, d->alpha);                    \
    case ACTX_OP_TANH: return actx_tanh_##sfx(x, y, n);                                          \
    case ACTX_OP_SIGMOID: return actx_sigmoid_##sfx(x, y, n);                                    \
    default: return ACTX_ERROR_INVALID_ARGUMENT;                                                 \
  }
  switch (d->dtype) {
    case ACTX_F32: CALL(f32, float)
    case ACTX_F16: CALL(f16, uint16_t)
    case ACTX_BF16: CALL(bf16, uint16_t)
    default: return ACTX_ERROR_INVALID_ARGUMENT;
  }
#undef CALL
}

/* Computes the case on the current ISA into a fresh buffer (malloc'ed, y_offset bytes before
 * the result; free with free(result - y_offset)). way: 0 single call, 1 fake tasks, 2 the
 * convenience entry point, 3 a plan (over the fake tasks when there are several). */
static unsigned char *compute(const fuzz_case *c, int way) {
  const size_t bytes = c->n * c->es;
  unsigned char *ybuf = malloc(c->y_offset + bytes + (bytes == 0)); /* exact: ASan's bounds */
  if (ybuf == NULL) FAIL("out of memory");
  unsigned char *y = ybuf + c->y_offset;
  const unsigned char *x = c->x;
  unsigned char *xbuf = NULL;
  if (c->flags & F_IN_PLACE) {
    memcpy(y, c->x, bytes);
    x = y;
  } else {
    xbuf = malloc(c->x_offset + bytes + (bytes == 0));
    if (xbuf == NULL) FAIL("out of memory");
    memcpy(xbuf + c->x_offset, c->x, bytes);
    x = xbuf + c->x_offset;
  }
  actx_status st;
  scramble s = {c->order_seed, 0, 0};
  const actx_parallel par = {scrambled_parallel_for, &s, c->tasks, 0};
  if (way == 2) {
    st = convenience(&c->desc, x, y, c->n);
  } else if (way == 3) {
    actx_plan *plan = NULL;
    st = actx_plan_create(&c->desc, &plan);
    if (st == ACTX_OK)
      st = actx_plan_run(plan, x, y, c->n, c->desc.bias, c->desc.bias_len, &par);
    actx_plan_destroy(plan);
  } else {
    st = actx_compute(&c->desc, x, y, c->n, way == 1 ? &par : NULL);
  }
  if (st != ACTX_OK)
    FAIL("%s %s n=%zu: %s", actx_op_name(c->desc.op), actx_dtype_name(c->desc.dtype), c->n,
         actx_status_string(st));
  if (way == 1) {
    const size_t min = actx_min_elements_per_task(c->desc.dtype);
    const int expect_split = c->tasks > 1 && c->n / min > 1;
    if (s.calls != (size_t)expect_split)
      FAIL("n=%zu, %zu tasks allowed: parallel_for called %zu times", c->n, c->tasks, s.calls);
    if (expect_split && (s.tasks < 2 || s.tasks > c->tasks))
      FAIL("n=%zu split into %zu tasks, %zu allowed", c->n, s.tasks, c->tasks);
  }
  free(xbuf);
  return y;
}

/* ---- the reference ---- */

NO_COVERAGE static double reference(actx_op op, double x, double alpha) {
  switch (op) {
    case ACTX_OP_ERF: return erf(x);
    case ACTX_OP_GELU: return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    case ACTX_OP_GELU_TANH:
      return 0.5 * x * (1.0 + tanh(sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
    case ACTX_OP_QUICK_GELU: return x / (1.0 + exp(-alpha * x));
    case ACTX_OP_TANH: return tanh(x);
    case ACTX_OP_SIGMOID: return 1.0 / (1.0 + exp(-x));
    default: return NAN;
  }
}

NO_COVERAGE static double ulp_at(double v) {
  const double a = fabs(v);
  if (a < 0x1p-126) return 0x1p-149;
  int e;
  frexp(a, &e);
  return ldexp(1.0, e - 24);
}

/* Checks y = op(v) for one float32 (v is x, plus the bias when there is one). A NaN v comes out
 * made quiet, or unchanged where the active ORT rule keeps NaNs. */
NO_COVERAGE static void check_value(const actx_op_desc *d, float v, float y) {
  if (isnan(v)) {
    const int keep = rule_keeps_nan(actx_get_ort_rule(), d->op, d->alpha, d->bias != NULL);
    const uint32_t want = keep ? actx_f32_bits(v) : actx_f32_bits(v) | 0x00400000u;
    if (actx_f32_bits(y) != want)
      FAIL("%s(NaN %08x) alpha %a, %s rule = %08x, want %08x", actx_op_name(d->op),
           actx_f32_bits(v), d->alpha, actx_ort_rule_name(actx_get_ort_rule()), actx_f32_bits(y),
           want);
    return;
  }
  if (isinf(v)) return; /* the infinities' exact results are tests/kernels/test_specials.c's */
  const double r = reference(d->op, v, d->alpha);
  if (isnan(r)) return; /* 0 * inf in the reference (alpha = inf): nothing to compare */
  double err, bound;
  const char *measure = "abs/max(1,|x|)";
  switch (d->op) {
    case ACTX_OP_ERF:
      err = fabs(y - r) / ulp_at(r), bound = BOUND_ERF_ULP, measure = "ulp";
      break;
    case ACTX_OP_TANH:
      if (fabs(v) >= TANH_ULP_MIN_ABS_X) {
        err = fabs(y - r) / ulp_at(r), bound = BOUND_TANH_ULP, measure = "ulp";
      } else {
        err = fabs(y - r), bound = BOUND_TANH_ABS, measure = "abs";
      }
      break;
    case ACTX_OP_SIGMOID: err = fabs(y - r), bound = BOUND_SIGMOID_ABS, measure = "abs"; break;
    case ACTX_OP_GELU: err = fabs(y - r) / fmax(1.0, fabs(v)), bound = BOUND_GELU_ABS; break;
    case ACTX_OP_GELU_TANH:
      err = fabs(y - r) / fmax(1.0, fabs(v)), bound = BOUND_GELU_TANH_ABS;
      break;
    default: err = fabs(y - r) / fmax(1.0, fabs(v)), bound = BOUND_QUICK_GELU_ABS; break;
  }
  if (!(err <= bound))
    FAIL("%s(%a) alpha %a = %a, reference %.17g: error %g %s > bound %g", actx_op_name(d->op), v,
         d->alpha, y, r, err, measure, bound);
}

NO_COVERAGE static float load(actx_dtype dt, const unsigned char *p, size_t i) {
  if (dt == ACTX_F32) {
    float f;
    memcpy(&f, p + 4 * i, 4);
    return f;
  }
  uint16_t h;
  memcpy(&h, p + 2 * i, 2);
  return dt == ACTX_F16 ? actx_f16_to_f32(h) : actx_bf16_to_f32(h);
}

/* float32: the bound on every checked element. float16 / bfloat16: the float32 kernel on the
 * widened x and bias, rounded once, bit for bit (and that float32 result within the bound). */
NO_COVERAGE static void check_results(const fuzz_case *c, const unsigned char *y) {
  const actx_op_desc *d = &c->desc;
  const size_t n = c->n < CHECKED_MAX ? c->n : CHECKED_MAX - CHECKED_MAX % (d->bias_len ? d->bias_len : 1);
  float *xf = malloc((n + 1) * 4), *yf = malloc((n + 1) * 4), *bf = NULL;
  if (xf == NULL || yf == NULL) FAIL("out of memory");
  for (size_t i = 0; i < n; i++) xf[i] = load(d->dtype, c->x, i);
  actx_op_desc wide = *d;
  wide.dtype = ACTX_F32;
  if (d->bias) {
    bf = malloc(d->bias_len * 4);
    if (bf == NULL) FAIL("out of memory");
    for (size_t i = 0; i < d->bias_len; i++) bf[i] = load(d->dtype, d->bias, i);
    wide.bias = bf;
  }
  const actx_status st = actx_compute(&wide, xf, yf, n, NULL);
  if (st != ACTX_OK) FAIL("float32 of the widened input: %s", actx_status_string(st));
  for (size_t i = 0; i < n; i++) {
    if (d->dtype != ACTX_F32) {
      uint16_t got, want;
      memcpy(&got, y + 2 * i, 2);
      want = d->dtype == ACTX_F16 ? actx_f32_to_f16(yf[i]) : actx_f32_to_bf16(yf[i]);
      if (got != want)
        FAIL("%s %s [%zu]: %04x, but the float32 result %a rounds to %04x", actx_op_name(d->op),
             actx_dtype_name(d->dtype), i, got, yf[i], want);
    } else if (memcmp(y + 4 * i, &yf[i], 4) != 0) {
      FAIL("%s f32 [%zu]: a second computation differs", actx_op_name(d->op), i);
    }
    /* the value the op sees: x plus the bias, added in float32, x's NaN first */
    float v = xf[i];
    if (bf != NULL) {
      const float b = bf[i % d->bias_len];
      v = isnan(v) ? v : v + b;
    }
    check_value(d, v, yf[i]);
  }
  free(xf), free(yf), free(bf);
}

/* ---- bad arguments: the status, and y untouched ---- */

NO_COVERAGE static void expect_status(const fuzz_case *c, const actx_op_desc *d, const void *x, void *y,
                          size_t n, actx_status want, const char *what) {
  const actx_status got = actx_compute(d, x, y, n, NULL);
  if (got != want)
    FAIL("%s (%s n=%zu): got '%s', want '%s'", what, actx_op_name(c->desc.op), n,
         actx_status_string(got), actx_status_string(want));
}

NO_COVERAGE static void check_bad_arguments(const fuzz_case *c) {
  const size_t bytes = c->n * c->es;
  unsigned char *y = malloc(bytes + 1);
  if (y == NULL) FAIL("out of memory");
  memset(y, 0x5a, bytes + 1);
  if ((c->flags & F_BAD_BIAS_LEN) && c->desc.bias_len > 1) /* n is a multiple of h > 1 */
    expect_status(c, &c->desc, c->x, y, c->n - 1, ACTX_ERROR_INVALID_BIAS, "n not a multiple of h");
  if ((c->flags & F_BAD_ALPHA) && !actx_op_takes_alpha[c->desc.op] && c->n > 0) {
    actx_op_desc d = c->desc;
    d.alpha = 1.0f;
    expect_status(c, &d, c->x, y, c->n, ACTX_ERROR_INVALID_ARGUMENT, "alpha on an op without");
  }
  if ((c->flags & F_BIAS) && c->desc.bias == NULL && c->n > 0) {
    actx_op_desc d = c->desc;
    d.bias = c->x;
    d.bias_len = 1;
    expect_status(c, &d, c->x, y, c->n, ACTX_ERROR_INVALID_ARGUMENT, "bias on an op without");
  }
  for (size_t i = 0; i < bytes + 1; i++)
    if (y[i] != 0x5a) FAIL("a refused call wrote to y");
  if ((c->flags & F_OVERLAP) && c->n > 1) {
    /* x and y in one buffer, shifted by less than their size: overlapping, not equal */
    unsigned char *buf = malloc(2 * bytes);
    if (buf == NULL) FAIL("out of memory");
    memcpy(buf, c->x, bytes);
    const size_t shift = 1 + c->x_offset % (bytes - 1);
    expect_status(c, &c->desc, buf, buf + shift, c->n, ACTX_ERROR_OVERLAP, "x, y overlap");
    expect_status(c, &c->desc, buf + shift, buf, c->n, ACTX_ERROR_OVERLAP, "y, x overlap");
    if (memcmp(buf, c->x, bytes) != 0) FAIL("a refused overlapping call wrote");
    free(buf);
  }
  free(y);
}

/* ---- the entry point ---- */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < H_SIZE) return 0;
  fuzz_case c;
  memset(&c, 0, sizeof c);
  c.desc.op = (actx_op)(data[H_OP] % ACTX_OP_COUNT);
  c.desc.dtype = (actx_dtype)(data[H_DTYPE] % ACTX_DTYPE_COUNT);
  c.es = actx_dtype_size(c.desc.dtype);
  c.flags = data[H_FLAGS];
  c.tasks = data[H_TASKS] & 15;
  c.order_seed = data[H_TASKS] >> 4;
  c.x_offset = data[H_OFFSETS] & 15;
  c.y_offset = data[H_OFFSETS] >> 4;
  if (actx_op_takes_alpha[c.desc.op]) memcpy(&c.desc.alpha, data + H_ALPHA, 4);

  const unsigned char *payload = data + H_SIZE;
  const size_t payload_n = (size - H_SIZE) / c.es;
  const int bias_op = actx_op_takes_bias[c.desc.op];
  size_t h = 0;
  if ((c.flags & F_BIAS) && bias_op) {
    h = 1 + (((size_t)data[H_BIAS_LEN] | (size_t)data[H_BIAS_LEN + 1] << 8) % 1024);
    if (h > payload_n) h = payload_n;
  }
  const unsigned char *bias_bytes = payload;
  const unsigned char *x_bytes = payload + h * c.es;
  size_t data_n = payload_n - h;

  /* the length: the data's, or in big mode the data tiled past the split threshold */
  size_t n = data_n;
  if (ACTX_FUZZ_SPLIT && data_n > 0)
    n = 2 * actx_min_elements_per_task(c.desc.dtype) +
        ((size_t)data[H_BIG] | (size_t)data[H_BIG + 1] << 8) % BIG_EXTRA_MAX;
  if (h > 0) n -= n % h;
  if (h > 0 && n == 0) return 0;

  unsigned char *x = malloc(n * c.es + (n == 0)), *bias = h ? malloc(h * c.es) : NULL;
  if (x == NULL || (h && bias == NULL)) FAIL("out of memory");
  /* tiling by doubling: a per-element loop here would cost more than the kernels (every
   * comparison in this file is traced for libFuzzer) */
  const size_t data_bytes = data_n * c.es, bytes = n * c.es;
  if (bytes > 0) memcpy(x, x_bytes, bytes < data_bytes ? bytes : data_bytes);
  for (size_t done = data_bytes; done < bytes; done *= 2)
    memcpy(x + done, x, bytes - done < done ? bytes - done : done);
  if (h) memcpy(bias, bias_bytes, h * c.es);
  c.n = n;
  c.x = x;
  c.desc.bias = bias;
  c.desc.bias_len = h;

  check_bad_arguments(&c);

  actx_set_ort_rule(c.flags & F_RULE_AVX512 ? ACTX_ORT_RULE_AVX512 : ACTX_ORT_RULE_AVX2);

  /* the same bits: the best ISA's single call, then every other ISA's, split, pool */
  const actx_isa best = isas[n_isas - 1];
  actx_set_isa(best);
  unsigned char *ref = compute(&c, 0);
  enum { OTHERS = ACTX_ISA_COUNT + 3 };
  unsigned char *other[OTHERS] = {NULL};
  size_t compared[OTHERS] = {0};
  char what[OTHERS][48];
  /* the portable path on a prefix only when the input is big: per element it is the same code,
   * and it is ten times slower than the vector paths */
  fuzz_case prefix = c;
  prefix.n = n < CHECKED_MAX ? n : CHECKED_MAX - CHECKED_MAX % (h ? h : 1);
  for (size_t k = 0; k + 1 < n_isas; k++) {
    const fuzz_case *run = isas[k] == ACTX_ISA_PORTABLE ? &prefix : &c;
    actx_set_isa(isas[k]);
    other[k] = compute(run, 0);
    compared[k] = run->n * c.es;
    snprintf(what[k], sizeof what[k], "the %s path", actx_isa_name(isas[k]));
  }
  actx_set_isa(best);
  if (c.tasks > 1) {
    other[ACTX_ISA_COUNT] = compute(&c, 1);
    compared[ACTX_ISA_COUNT] = bytes;
    snprintf(what[ACTX_ISA_COUNT], sizeof what[0], "the split over fake tasks");
  }
  if (c.flags & F_CONVENIENCE) {
    other[ACTX_ISA_COUNT + 1] = compute(&c, 2);
    compared[ACTX_ISA_COUNT + 1] = bytes;
    snprintf(what[ACTX_ISA_COUNT + 1], sizeof what[0], "the convenience entry point");
  }
  other[ACTX_ISA_COUNT + 2] = compute(&c, 3);
  compared[ACTX_ISA_COUNT + 2] = bytes;
  snprintf(what[ACTX_ISA_COUNT + 2], sizeof what[0], "a plan");
  for (int k = 0; k < OTHERS; k++) {
    if (other[k] == NULL) continue;
    if (memcmp(ref, other[k], compared[k]) != 0) {
      size_t i = 0;
      while (ref[i] == other[k][i]) i++;
      FAIL("%s %s n=%zu, %s rule: %s differs from the %s single call at element %zu",
           actx_op_name(c.desc.op), actx_dtype_name(c.desc.dtype), n,
           actx_ort_rule_name(actx_get_ort_rule()), what[k], actx_isa_name(best), i / c.es);
    }
    free(other[k] - c.y_offset);
  }
  check_results(&c, ref);
  free(ref - c.y_offset);
  free(x);
  free(bias);
  return 0;
}
