/* The ORT oracle: every activation through an ORT 1.30 session (CPU EP) and through libactx,
 * on the same inputs, must give the same bits.
 *
 * usage: test_ort_oracle [-v] [-a] [--f32 | --f16 | --bf16] [--threads N] [op-name ...]
 *   no names: every op; --f32 / --f16 / --bf16: only that element type (default all three);
 *   --threads N: only N intra-op threads (default 1 and 2); -v: list the input sets; -a: print
 *   every mismatch. Each op's runs start from the same random seed, so any selection
 *   reproduces the same inputs.
 *
 * For each op (one ONNX node per model) and for 1 and 2 intra-op threads (actx mirrors the
 * thread count), the inputs are:
 *   - 2^18 values each: uniform in [-1,1], [-6,6], [-20,20], and random bit patterns;
 *   - every float32 value that is exactly a float16 value (all 65536 widened), and every one
 *     that is a bfloat16 value (all 65536 widened);
 *   - every power of two of float32 (normal and subnormal), both signs, with both neighbours;
 *   - MLAS's branch points and clamps (erf's 0.921875 split and 3.925 clamp, tanh's ±9,
 *     logistic's ±18), mapped through each op's scaling (x/√2 for GELU's erf, the tanh-GELU
 *     polynomial, alpha for QuickGelu), with 64 float neighbours on each side;
 *   - specials: ±0, ±Inf, NaNs with payloads and both signs, subnormals, ±FLT_MAX, ±FLT_MIN;
 *   - every length 0..100 as its own run (SIMD bodies and tails), bias ops with bias length L;
 *   - bias ops: every bias length 1..64 over 37 rows (short rows are tiled differently).
 * Bias ops run with a random bias and with a bias of -0.0 (which passes x through exactly, so
 * the special inputs reach the activation unchanged). Ops ORT's CPU EP also runs in float16
 * (Erf, Gelu, Tanh, Sigmoid) are checked on all 65536 float16 inputs too, within the float16
 * rule described at f16_acceptable() (float16 against ORT is a bound, not bit identity).
 * Every op is checked in bfloat16 on all 65536 bfloat16 inputs (and lengths 0..100), bit for
 * bit against ORT's float32 result of the widened input narrowed once (round to nearest even,
 * a NaN made quiet): what actx's bfloat16 kernels promise (include/actx.h).
 * The "NaN x + NaN bias" run needs the CPU's rule for an add of two NaNs (x86: the first
 * operand's); an emulator that picks otherwise (qemu 7.2 picks the larger payload, the x87
 * rule) gives ORT's result other bits there, so that run is skipped, and says so, on such a CPU.
 * Two NaNs match only if their bits do. The first mismatches are printed as
 * input (and bias) bits, ORT's bits, actx's bits. */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../emu/first_nan.h"
#include "actx.h"
#include "host.h"
#include "model.h"

#define RANDOM_SET_SIZE (1u << 18)
#define NEIGHBOURS 64
#define MAX_LENGTH 100
#define BIAS_WIDTH 768      /* row length of the big bias runs: BERT-base's hidden size */
#define BIAS_ROWS 37        /* rows of the short-bias runs */
#define MISMATCHES_SHOWN 10 /* per op, dtype and thread count */
#define QUICK_GELU_DEFAULT ACTX_QUICK_GELU_DEFAULT_ALPHA
/* A run of `len` elements with a bias: one row of len, or no row of 1 when len is 0 (a bias of
 * length 0 is refused by actx, a defined status tested elsewhere). */
#define BIAS_OF(len) ((len) != 0 ? (len) : 1)

/* ---- The ops ------------------------------------------------------------------------------- */

typedef enum op_kind {
  ERF,
  GELU,
  GELU_TANH,
  TANH,
  SIGMOID,
  BIAS_GELU,
  FAST_GELU,
  QUICK_GELU
} op_kind;

typedef struct op_case {
  const char *name;
  op_kind kind;
  const char *op_type;
  const char *domain;      /* "" is ai.onnx */
  int64_t opset;           /* ai.onnx opset imported */
  const char *approximate; /* ai.onnx Gelu's attribute, else NULL */
  bool has_bias;           /* a second input "bias" of length = last dim */
  float alpha;             /* QuickGelu */
  bool float16;            /* ORT's CPU EP also runs it in float16 (own kernel or Casts) */
} op_case;

static const op_case k_ops[] = {
    {"Erf", ERF, "Erf", "", 13, NULL, false, 0, true},
    {"Gelu", GELU, "Gelu", "", 20, "none", false, 0, true},
    {"Gelu-tanh", GELU_TANH, "Gelu", "", 20, "tanh", false, 0, true},
    {"Tanh", TANH, "Tanh", "", 13, NULL, false, 0, true},
    {"Sigmoid", SIGMOID, "Sigmoid", "", 13, NULL, false, 0, true},
    {"ms.Gelu", GELU, "Gelu", ACTX_MODEL_MS_DOMAIN, 13, NULL, false, 0, false},
    {"ms.BiasGelu", BIAS_GELU, "BiasGelu", ACTX_MODEL_MS_DOMAIN, 13, NULL, true, 0, false},
    {"ms.FastGelu", FAST_GELU, "FastGelu", ACTX_MODEL_MS_DOMAIN, 13, NULL, false, 0, false},
    {"ms.FastGelu+bias", FAST_GELU, "FastGelu", ACTX_MODEL_MS_DOMAIN, 13, NULL, true, 0, false},
    {"ms.QuickGelu(1.702)", QUICK_GELU, "QuickGelu", ACTX_MODEL_MS_DOMAIN, 13, NULL, false,
     QUICK_GELU_DEFAULT, false},
    {"ms.QuickGelu(1.0)", QUICK_GELU, "QuickGelu", ACTX_MODEL_MS_DOMAIN, 13, NULL, false, 1.0f,
     false},
    {"ms.QuickGelu(-0.5)", QUICK_GELU, "QuickGelu", ACTX_MODEL_MS_DOMAIN, 13, NULL, false, -0.5f,
     false},
};
#define N_OPS (sizeof k_ops / sizeof k_ops[0])

/* ---- Bits and random numbers ------------------------------------------------------------ */

static float f32_from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* Exact widening of an IEEE binary16 bit pattern (NaN payloads kept in the top bits). */
static float f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  if (exponent == 0x1f)
    return f32_from_bits(sign | 0x7f800000u | mantissa << 13);
  if (exponent == 0) {
    float magnitude = ldexpf((float)mantissa, -24); /* subnormal (or zero): exact */
    return sign ? -magnitude : magnitude;
  }
  return f32_from_bits(sign | (exponent + 112) << 23 | mantissa << 13);
}

static float bf16_to_f32(uint16_t h) { return f32_from_bits((uint32_t)h << 16); }

static uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

/* float32 to bfloat16 once: round to nearest even, a NaN made quiet with its top bits kept. */
static uint16_t f32_to_bf16(uint32_t u) {
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u | 0x00400000u) >> 16);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

#define RANDOM_SEED 0x9e3779b97f4a7c15u
static uint64_t g_rng = RANDOM_SEED;
/* Print every mismatch, not only the first MISMATCHES_SHOWN (-a). */
static bool g_show_all;

static uint64_t next_random(void) { /* splitmix64 */
  uint64_t z = (g_rng += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

static float uniform(float lo, float hi) {
  double unit = (double)(next_random() >> 11) / 9007199254740992.0; /* [0, 1) */
  return (float)(lo + (hi - lo) * unit);
}

/* ---- Input sets ---------------------------------------------------------------------------- */

typedef struct input_set {
  char name[64];
  size_t start, count;
} input_set;

typedef struct inputs {
  float *values;
  size_t count, capacity;
  input_set sets[16];
  size_t n_sets;
} inputs;

static void push_value(inputs *in, float v) {
  if (in->count == in->capacity) {
    in->capacity = in->capacity ? in->capacity * 2 : 1 << 20;
    float *grown = realloc(in->values, in->capacity * sizeof *grown);
    if (grown == NULL) {
      fprintf(stderr, "out of memory\n");
      exit(2);
    }
    in->values = grown;
  }
  in->values[in->count++] = v;
}

static void begin_set(inputs *in, const char *name) {
  input_set *s = &in->sets[in->n_sets++];
  snprintf(s->name, sizeof s->name, "%s", name);
  s->start = in->count;
}

static void end_set(inputs *in) {
  input_set *s = &in->sets[in->n_sets - 1];
  s->count = in->count - s->start;
}

static void push_with_neighbours(inputs *in, float center, int k) {
  push_value(in, center);
  float up = center, down = center;
  for (int i = 0; i < k; i++) {
    up = nextafterf(up, INFINITY);
    down = nextafterf(down, -INFINITY);
    push_value(in, up);
    push_value(in, down);
  }
}

/* The x where the tanh-GELU's tanh argument sqrt(2/pi)*(x + 0.044715 x^3) reaches target. */
static double tanh_gelu_inverse(double target) {
  double lo = 0, hi = 16;
  for (int i = 0; i < 200; i++) {
    double mid = (lo + hi) / 2;
    double u = 0.7978845608028654 * (mid + 0.044715 * mid * mid * mid);
    if (u < target)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

static void build_inputs(inputs *in) {
  memset(in, 0, sizeof *in);
  const struct {
    const char *name;
    float lo, hi;
  } ranges[] = {
      {"uniform [-1,1]", -1, 1}, {"uniform [-6,6]", -6, 6}, {"uniform [-20,20]", -20, 20}};
  for (size_t r = 0; r < 3; r++) {
    begin_set(in, ranges[r].name);
    for (size_t i = 0; i < RANDOM_SET_SIZE; i++)
      push_value(in, uniform(ranges[r].lo, ranges[r].hi));
    end_set(in);
  }
  begin_set(in, "random bit patterns");
  for (size_t i = 0; i < RANDOM_SET_SIZE; i++)
    push_value(in, f32_from_bits((uint32_t)next_random()));
  end_set(in);

  begin_set(in, "every float16 value");
  for (uint32_t h = 0; h < 65536; h++)
    push_value(in, f16_to_f32((uint16_t)h));
  end_set(in);

  begin_set(in, "every bfloat16 value");
  for (uint32_t h = 0; h < 65536; h++)
    push_value(in, bf16_to_f32((uint16_t)h));
  end_set(in);

  begin_set(in, "powers of two and neighbours");
  for (int e = -149; e <= 127; e++) {
    float p = ldexpf(1.0f, e);
    push_with_neighbours(in, p, 1);
    push_with_neighbours(in, -p, 1);
  }
  end_set(in);

  begin_set(in, "MLAS branch points and clamps");
  const double sqrt2 = 1.4142135623730951;
  const double points[] = {
      0.921875,
      3.925,
      9.0,
      18.0, /* erf split and clamp, tanh, logistic */
      0.921875 * sqrt2,
      3.925 * sqrt2,          /* GELU: erf(x/sqrt2) */
      tanh_gelu_inverse(9.0), /* tanh-GELU's tanh clamp */
      18.0 / QUICK_GELU_DEFAULT,
      18.0 / 0.5, /* QuickGelu's logistic clamp (alpha 1: 18) */
  };
  for (size_t i = 0; i < sizeof points / sizeof points[0]; i++) {
    push_with_neighbours(in, (float)points[i], NEIGHBOURS);
    push_with_neighbours(in, (float)-points[i], NEIGHBOURS);
  }
  end_set(in);

  /* ORT's AVX-512F SiLU clamps its logistic to at most 1, which decides 20 inputs here, all
   * between 17.48 and 17.99 (the FMA3 logistic rounds to 1 + 2^-23 there) */
  begin_set(in, "every float32 in [17.25, 18]");
  for (float v = 17.25f; v <= 18.0f; v = nextafterf(v, INFINITY)) push_value(in, v);
  end_set(in);

  begin_set(in, "specials");
  const uint32_t specials[] = {
      0x00000000, 0x80000000, 0x7f800000, 0xff800000,             /* zeros, infinities */
      0x7fc00000, 0xffc00000, 0x7fc00001, 0xffc12345, 0x7fffffff, /* quiet NaNs */
      0xffffffff, 0x7f800001, 0xff800001, 0x7fbfffff, 0x7fa00000, /* signalling NaNs */
      0x00000001, 0x80000001, 0x007fffff, 0x807fffff, 0x00400000, /* subnormals */
      0x7f7fffff, 0xff7fffff, 0x00800000, 0x80800000,             /* FLT_MAX, FLT_MIN */
      0x3f800000, 0xbf800000, 0x34000000, 0xb4000000,             /* ±1, ±2^-23 */
  };
  for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
    push_value(in, f32_from_bits(specials[i]));
  end_set(in);
}

/* A random member of the "specials" set (the last one built). */
static float special_value(const inputs *in) {
  const input_set *specials = &in->sets[in->n_sets - 1];
  return in->values[specials->start + next_random() % specials->count];
}

static const char *set_of(const inputs *in, size_t index) {
  for (size_t s = 0; s < in->n_sets; s++)
    if (index >= in->sets[s].start && index < in->sets[s].start + in->sets[s].count)
      return in->sets[s].name;
  return "padding";
}

/* ---- ORT side -------------------------------------------------------------------------------- */

static uint8_t *build_model(const op_case *op, int32_t elem_type, size_t *size) {
  bool ms = strcmp(op->domain, ACTX_MODEL_MS_DOMAIN) == 0;
  actx_model *m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, op->opset, ms ? 1 : 0);
  const int64_t dims[2] = {-1, -1};
  const char *params[2] = {"N", "H"};
  size_t rank = op->has_bias ? 2 : 1;
  actx_model_add_input(m, "x", elem_type, rank, dims, params);
  if (op->has_bias)
    actx_model_add_input(m, "bias", elem_type, 1, dims + 1, params + 1);
  const char *in[2] = {"x", "bias"}, *out[1] = {"y"};
  actx_model_node *node =
      actx_model_add_named_node(m, op->name, op->op_type, op->domain, rank, in, 1, out);
  if (op->approximate != NULL)
    actx_model_node_attr_string(node, "approximate", op->approximate);
  if (op->kind == QUICK_GELU)
    actx_model_node_attr_float(node, "alpha", op->alpha);
  actx_model_add_output(m, "y", elem_type, rank, dims, params);
  uint8_t *bytes = NULL;
  if (actx_model_serialize(m, &bytes, size) != 0)
    fprintf(stderr, "%s: building the model: %s\n", op->name, actx_model_error(m));
  actx_model_free(m);
  return bytes;
}

/* Runs x (rows x width, or n elements when width is 0) through the session into y. */
static int run_ort(actx_ort_session *s, int32_t elem_type, const void *x, size_t n,
                   const void *bias, size_t width, void *y, size_t elem_size) {
  actx_ort_tensor in[2] = {{0}, {0}};
  in[0].elem_type = (ONNXTensorElementDataType)elem_type;
  in[0].data = (void *)x;
  if (bias != NULL) {
    in[0].rank = 2;
    in[0].dims[0] = (int64_t)(n / width);
    in[0].dims[1] = (int64_t)width;
    in[1].elem_type = in[0].elem_type;
    in[1].rank = 1;
    in[1].dims[0] = (int64_t)width;
    in[1].data = (void *)bias;
  } else {
    in[0].rank = 1;
    in[0].dims[0] = (int64_t)n;
  }
  actx_ort_tensor *out = NULL;
  size_t n_out = 0;
  actx_ort_error err;
  if (actx_ort_run(s, bias != NULL ? 2 : 1, in, &out, &n_out, &err) != 0) {
    printf("FAIL ORT run of %zu elements: %s\n", n, err.message);
    return -1;
  }
  int rc = 0;
  if (n_out != 1 || out[0].count != n || out[0].bytes != n * elem_size) {
    printf("FAIL ORT returned %zu outputs, %zu elements\n", n_out, n_out ? out[0].count : 0);
    rc = -1;
  } else {
    memcpy(y, out[0].data, n * elem_size);
  }
  actx_ort_tensors_free(out, n_out);
  return rc;
}

/* ---- actx side ----------------------------------------------------------------------------- */

/* The element types checked; the float32 outputs of ORT are bfloat16's reference too. */
typedef enum elem { F32, F16, BF16 } elem;
static const char *const k_elem_names[] = {"f32", "f16", "bf16"};

static actx_status run_actx(const op_case *op, elem dt, const void *x, void *y, size_t n,
                            const void *bias, size_t width) {
  if (dt == BF16) {
    const uint16_t *xh = x, *bh = bias;
    uint16_t *yh = y;
    switch (op->kind) {
      case ERF: return actx_erf_bf16(xh, yh, n);
      case GELU: return actx_gelu_bf16(xh, yh, n);
      case GELU_TANH: return actx_gelu_tanh_bf16(xh, yh, n);
      case TANH: return actx_tanh_bf16(xh, yh, n);
      case SIGMOID: return actx_sigmoid_bf16(xh, yh, n);
      case BIAS_GELU: return actx_bias_gelu_bf16(xh, yh, n, bh, width);
      case FAST_GELU: return actx_fast_gelu_bf16(xh, yh, n, bh, bh != NULL ? width : 0);
      case QUICK_GELU: return actx_quick_gelu_bf16(xh, yh, n, op->alpha);
    }
  } else if (dt == F32) {
    const float *xf = x, *bf = bias;
    float *yf = y;
    switch (op->kind) {
      case ERF: return actx_erf_f32(xf, yf, n);
      case GELU: return actx_gelu_f32(xf, yf, n);
      case GELU_TANH: return actx_gelu_tanh_f32(xf, yf, n);
      case TANH: return actx_tanh_f32(xf, yf, n);
      case SIGMOID: return actx_sigmoid_f32(xf, yf, n);
      case BIAS_GELU: return actx_bias_gelu_f32(xf, yf, n, bf, width);
      case FAST_GELU: return actx_fast_gelu_f32(xf, yf, n, bf, bf != NULL ? width : 0);
      case QUICK_GELU: return actx_quick_gelu_f32(xf, yf, n, op->alpha);
    }
  } else {
    const uint16_t *xh = x;
    uint16_t *yh = y;
    switch (op->kind) {
      case ERF: return actx_erf_f16(xh, yh, n);
      case GELU: return actx_gelu_f16(xh, yh, n);
      case GELU_TANH: return actx_gelu_tanh_f16(xh, yh, n);
      case TANH: return actx_tanh_f16(xh, yh, n);
      case SIGMOID: return actx_sigmoid_f16(xh, yh, n);
      default: break;
    }
  }
  return ACTX_ERROR_INVALID_ARGUMENT;
}

/* ---- Comparison ------------------------------------------------------------------------------ */

typedef struct tally {
  size_t compared, mismatched, shown;
} tally;

static uint32_t load_bits(const void *p, size_t i, size_t elem_size) {
  if (elem_size == 4)
    return ((const uint32_t *)p)[i];
  return ((const uint16_t *)p)[i];
}

/* float16 is not bit-exact against ORT, by design: ORT 1.30 on x86 has no float16 kernel for
 * these ops. It runs Tanh and Sigmoid between Casts (the same single rounding as actx), Erf
 * through MlasComputeFP16Erf, whose scalar tail conversion turns a NaN into the canonical
 * 0x7e00, and Gelu as the ONNX function body with Casts between float16 ops (several roundings).
 * actx computes round(f32 kernel(widen(x))), once. So float16 results must agree with ORT's to
 * within F16_MAX_ULP (NaN against NaN agrees), except tanh-GELU: ORT's chain of float16 ops
 * (Mul, Pow, Sum, Tanh, ...) drifts up to F16_GELU_TANH_MAX_ULP from the single rounding where
 * 1 + tanh(u) cancels (x < -3). Every difference is counted and reported. */
#define F16_MAX_ULP 1
#define F16_GELU_TANH_MAX_ULP 10 /* measured: 255 of 65536 inputs differ, at most by 10 */
typedef struct f16_tally {
  size_t nan_payload, differ;
  int64_t max_ulp;
} f16_tally;
static f16_tally g_f16;

static int64_t f16_ordinal(uint16_t h) { /* monotonic integer for non-NaN halves */
  return (h & 0x8000) ? -(int64_t)(h & 0x7fff) : (int64_t)h;
}

/* 1 when the float16 difference is within the rule above; counts it in g_f16. */
static int f16_acceptable(const op_case *op, uint16_t o, uint16_t a) {
  const int o_nan = (o & 0x7c00) == 0x7c00 && (o & 0x3ff), a_nan = (a & 0x7c00) == 0x7c00 && (a & 0x3ff);
  if (o_nan && a_nan) return ++g_f16.nan_payload, 1;
  if (o_nan || a_nan) return 0;
  int64_t d = f16_ordinal(o) - f16_ordinal(a);
  d = d < 0 ? -d : d;
  g_f16.differ++;
  if (d > g_f16.max_ulp) g_f16.max_ulp = d;
  return d <= (op->kind == GELU_TANH ? F16_GELU_TANH_MAX_ULP : F16_MAX_ULP);
}

static void compare(const op_case *op, elem dt, int threads, const char *run,
                    const inputs *sets, const void *x, const void *bias, size_t width,
                    const void *ort, const void *ax, size_t n, tally *t) {
  const size_t elem_size = dt == F32 ? 4 : 2;
  const char *dtype = k_elem_names[dt];
  int hex = (int)elem_size * 2;
  for (size_t i = 0; i < n; i++) {
    uint32_t o = load_bits(ort, i, elem_size), a = load_bits(ax, i, elem_size);
    if (o == a)
      continue;
    if (dt == F16 && f16_acceptable(op, (uint16_t)o, (uint16_t)a))
      continue;
    t->mismatched++;
    if (t->shown++ >= MISMATCHES_SHOWN && !g_show_all)
      continue;
    char bias_text[32] = "";
    if (bias != NULL)
      snprintf(bias_text, sizeof bias_text, " bias 0x%0*x", hex,
               load_bits(bias, i % width, elem_size));
    printf("  MISMATCH %s %s threads=%d %s [%zu, %s]: in 0x%0*x%s  ORT 0x%0*x  actx 0x%0*x\n",
           op->name, dtype, threads, run, i, sets != NULL ? set_of(sets, i) : "-", hex,
           load_bits(x, i, elem_size), bias_text, hex, o, hex, a);
  }
  t->compared += n;
}

/* ---- One op ------------------------------------------------------------------------------- */

static actx_ort_session *open_session(const op_case *op, int32_t elem_type, int threads) {
  size_t size = 0;
  uint8_t *model = build_model(op, elem_type, &size);
  if (model == NULL)
    return NULL;
  actx_ort_session_options opt = {.intra_op_threads = threads, .record_assignments = true};
  actx_ort_session *s = NULL;
  actx_ort_error err;
  if (actx_ort_session_create(model, size, &opt, &s, &err) != 0)
    printf("FAIL %s: session: %s\n", op->name, err.message);
  free(model);
  if (s != NULL && threads == 1) {
    actx_ort_assignment *list = NULL;
    size_t n = 0;
    if (actx_ort_session_assignments(s, &list, &n, &err) == 0)
      for (size_t i = 0; i < n; i++)
        printf("  %s %s: ORT runs %s:%s on %s\n", op->name,
               elem_type == ACTX_ELEM_FLOAT ? "f32" : "f16",
               list[i].domain[0] ? list[i].domain : "ai.onnx", list[i].op_type, list[i].ep_name);
    free(list);
  }
  return s;
}

/* Both sides on x (n elements; rows of `width` when there is a bias), compared. */
static int check_run(const op_case *op, actx_ort_session *s, elem dt, int threads,
                     const char *run, const inputs *sets, const void *x, size_t n, const void *bias,
                     size_t width, void *ort, void *ax, tally *t) {
  size_t elem_size = dt == F32 ? 4 : 2;
  int32_t elem_type = dt == F16 ? ACTX_ELEM_FLOAT16 : ACTX_ELEM_FLOAT;
  if (dt == BF16) { /* ORT in float32 on the widened values, narrowed once */
    const uint16_t *xh = x, *bh = bias;
    float *xf = malloc((n + width + 1) * sizeof *xf), *bf = xf + n; /* x, then the bias */
    uint32_t *of = malloc((n + 1) * sizeof *of);
    int rc = xf != NULL && of != NULL ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++) xf[i] = bf16_to_f32(xh[i]);
    for (size_t i = 0; rc == 0 && bias != NULL && i < width; i++) bf[i] = bf16_to_f32(bh[i]);
    if (rc == 0) rc = run_ort(s, ACTX_ELEM_FLOAT, xf, n, bias != NULL ? bf : NULL, width, of, 4);
    for (size_t i = 0; rc == 0 && i < n; i++) ((uint16_t *)ort)[i] = f32_to_bf16(of[i]);
    free(xf);
    free(of);
    if (rc != 0) return -1;
  } else if (run_ort(s, elem_type, x, n, bias, width, ort, elem_size) != 0) {
    return -1;
  }
  memset(ax, 0xa5, n * elem_size); /* a pattern no correct result leaves untouched by chance */
  actx_status st = run_actx(op, dt, x, ax, n, bias, width);
  if (st != ACTX_OK) {
    printf("FAIL %s actx: %s\n", op->name, actx_status_string(st));
    return -1;
  }
  compare(op, dt, threads, run, sets, x, bias, width, ort, ax, n, t);
  return 0;
}

static int check_op_f32(const op_case *op, const inputs *sets, int threads, tally *t) {
  actx_ort_session *s = open_session(op, ACTX_ELEM_FLOAT, threads);
  if (s == NULL)
    return -1;
  int rc = 0;
  /* The big run, padded to whole rows for bias ops. */
  size_t n = sets->count;
  size_t width = op->has_bias ? BIAS_WIDTH : 0;
  size_t padded = op->has_bias ? (n + width - 1) / width * width : n;
  float *x = malloc(padded * sizeof *x), *ort = malloc(padded * sizeof *ort),
        *ax = malloc(padded * sizeof *ax);
  float bias[BIAS_WIDTH], short_bias[MAX_LENGTH];
  if (x == NULL || ort == NULL || ax == NULL) {
    printf("FAIL out of memory\n");
    rc = -1;
    goto done;
  }
  memcpy(x, sets->values, n * sizeof *x);
  for (size_t i = n; i < padded; i++)
    x[i] = uniform(-6, 6);
  if (op->has_bias) {
    for (size_t i = 0; i < width; i++)
      bias[i] = -0.0f; /* x + -0 == x for every x, -0 included */
    rc |= check_run(op, s, F32, threads, "bias -0", sets, x, padded, bias, width, ort, ax, t);
    for (size_t i = 0; i < width; i++)
      bias[i] = uniform(-1, 1);
    rc |= check_run(op, s, F32, threads, "bias random", sets, x, padded, bias, width, ort, ax, t);
    /* NaN + NaN: which payload survives (x's, in ORT and in actx) */
    for (size_t i = 0; i < width; i++) {
      bias[i] = f32_from_bits(0xffc00000u | (uint32_t)(i * 2654435761u >> 11));
      x[i] = i % 3 ? f32_from_bits(0x7fc00000u | (uint32_t)i) : uniform(-6, 6);
    }
    if (cpu_keeps_first_nan())
      rc |= check_run(op, s, F32, threads, "NaN x + NaN bias", NULL, x, width, bias, width, ort,
                      ax, t);
    else if (threads == 1)
      printf("  %s: NaN x + NaN bias skipped: this CPU's add of two NaNs does not give the first"
             " operand's (an emulator's rule, not x86's)\n", op->name);
    memcpy(x, sets->values, width * sizeof *x);
  } else {
    rc |= check_run(op, s, F32, threads, "all sets", sets, x, n, NULL, 0, ort, ax, t);
  }
  /* Every length 0..MAX_LENGTH on its own, with specials mixed in. */
  for (size_t len = 0; len <= MAX_LENGTH && rc == 0; len++) {
    for (size_t i = 0; i < len; i++)
      x[i] = i % 7 == 3 ? special_value(sets) : uniform(-6, 6);
    for (size_t i = 0; i < BIAS_OF(len); i++)
      short_bias[i] = uniform(-1, 1);
    char run[32];
    snprintf(run, sizeof run, "length %zu", len);
    rc |= check_run(op, s, F32, threads, run, NULL, x, len, op->has_bias ? short_bias : NULL,
                    BIAS_OF(len), ort, ax, t);
  }
  /* Bias ops: every short bias length over several rows. */
  for (size_t h = 1; op->has_bias && h <= 64 && rc == 0; h++) {
    size_t count = h * BIAS_ROWS;
    for (size_t i = 0; i < count; i++)
      x[i] = i % 5 == 2 ? special_value(sets) : uniform(-6, 6);
    for (size_t i = 0; i < h; i++)
      bias[i] = uniform(-1, 1);
    char run[48];
    snprintf(run, sizeof run, "bias length %zu x %d rows", h, BIAS_ROWS);
    rc |= check_run(op, s, F32, threads, run, NULL, x, count, bias, h, ort, ax, t);
  }
done:
  free(x);
  free(ort);
  free(ax);
  actx_ort_session_free(s);
  return rc;
}

/* All 65536 float16 (or bfloat16) inputs, then every length 0..MAX_LENGTH. bfloat16 runs
 * ORT's float32 session, and bias ops run a random bias (BF16_BIAS_WIDTH long) and one of -0. */
#define BF16_BIAS_WIDTH 256
static int check_op_half(const op_case *op, elem dt, int threads, tally *t) {
  actx_ort_session *s = open_session(op, dt == F16 ? ACTX_ELEM_FLOAT16 : ACTX_ELEM_FLOAT, threads);
  if (s == NULL)
    return -1;
  static uint16_t x[65536], ort[65536], ax[65536], bias[BF16_BIAS_WIDTH];
  for (uint32_t h = 0; h < 65536; h++)
    x[h] = (uint16_t)h;
  const bool has_bias = dt == BF16 && op->has_bias;
  const char *every = dt == F16 ? "every float16" : "every bfloat16";
  int rc = 0;
  for (int b = 0; b < (has_bias ? 2 : 1); b++) {
    for (size_t i = 0; i < BF16_BIAS_WIDTH; i++)
      bias[i] = b == 0 ? 0x8000 : f32_to_bf16(f32_bits(uniform(-1, 1)));
    rc |= check_run(op, s, dt, threads, every, NULL, x, 65536, has_bias ? bias : NULL,
                    BF16_BIAS_WIDTH, ort, ax, t);
  }
  for (size_t len = 0; len <= MAX_LENGTH && rc == 0; len++) {
    for (size_t i = 0; i < len; i++) {
      x[i] = (uint16_t)next_random();
      bias[i % BF16_BIAS_WIDTH] = f32_to_bf16(f32_bits(uniform(-1, 1)));
    }
    char run[32];
    snprintf(run, sizeof run, "length %zu", len);
    rc |= check_run(op, s, dt, threads, run, NULL, x, len, has_bias ? bias : NULL, BIAS_OF(len),
                    ort, ax, t);
  }
  actx_ort_session_free(s);
  return rc;
}

static bool selected(const op_case *op, int argc, char **argv) {
  bool any = false;
  for (int i = 1; i < argc; i++) {
    if (argv[i][0] == '-')
      continue;
    any = true;
    if (strcmp(argv[i], op->name) == 0)
      return true;
  }
  return !any;
}

int main(int argc, char **argv) {
  bool verbose = false, want[3] = {false, false, false}, any_type = false;
  int only_threads = 0; /* 0: 1 and 2 */
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-v") == 0)
      verbose = true;
    else if (strcmp(argv[i], "-a") == 0)
      g_show_all = true;
    else if (strcmp(argv[i], "--f32") == 0 || strcmp(argv[i], "--f16") == 0 ||
             strcmp(argv[i], "--bf16") == 0)
      want[argv[i][2] == 'b' ? BF16 : argv[i][3] == '1' ? F16 : F32] = any_type = true;
    else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc &&
             (only_threads = atoi(argv[i + 1])) >= 1 && only_threads <= 2)
      argv[++i] = "-"; /* not an op name */
    else if (argv[i][0] == '-') {
      fprintf(stderr,
              "usage: %s [-v] [-a] [--f32 | --f16 | --bf16] [--threads 1|2] [op-name ...]\n",
              argv[0]);
      return 2;
    }
  }
  if (!any_type)
    want[F32] = want[F16] = want[BF16] = true;
  actx_ort_error err;
  if (actx_ort_api(&err) == NULL) {
    printf("FAIL %s\n", err.message);
    return 1;
  }
  static inputs sets;
  build_inputs(&sets);
  printf("%zu float32 inputs per op in %zu sets, plus lengths 0..%d; actx ISA %s, ORT rule %s\n",
         sets.count, sets.n_sets, MAX_LENGTH, actx_isa_name(actx_get_isa()),
         actx_ort_rule_name(actx_get_ort_rule()));
  if (verbose)
    for (size_t i = 0; i < sets.n_sets; i++)
      printf("  set %-32s %zu values\n", sets.sets[i].name, sets.sets[i].count);

  int failures = 0;
  size_t total_compared = 0, total_mismatched = 0;
  for (size_t o = 0; o < N_OPS; o++) {
    const op_case *op = &k_ops[o];
    if (!selected(op, argc, argv))
      continue;
    for (elem dt = F32; dt <= BF16; dt++) {
      if (!want[dt] || (dt == F16 && !op->float16))
        continue;
      for (int threads = 1; threads <= 2; threads++) {
        if (only_threads != 0 && threads != only_threads)
          continue;
        if (actx_set_num_threads((size_t)threads) != ACTX_OK) {
          printf("FAIL actx_set_num_threads(%d)\n", threads);
          failures++;
          continue;
        }
        tally t = {0};
        g_rng = RANDOM_SEED ^ (uint64_t)o; /* inputs independent of which ops were selected */
        g_f16 = (f16_tally){0};
        int rc = dt == F32 ? check_op_f32(op, &sets, threads, &t)
                           : check_op_half(op, dt, threads, &t);
        printf("%-20s %-4s threads=%d: %9zu values compared, %zu mismatches%s\n", op->name,
               k_elem_names[dt], threads, t.compared, t.mismatched,
               rc != 0 ? " (run failed)" : "");
        if (dt == F16)
          printf("%-20s     vs ORT: %zu differ in value (max %lld float16 ulp), %zu NaNs differ "
                 "in payload only\n", "", g_f16.differ, (long long)g_f16.max_ulp, g_f16.nan_payload);
        failures += rc != 0 || t.mismatched != 0;
        total_compared += t.compared;
        total_mismatched += t.mismatched;
      }
    }
  }
  actx_set_num_threads(1);
  free(sets.values);
  actx_ort_shutdown();
  printf("%zu values compared, %zu mismatches\n%s\n", total_compared, total_mismatched,
         failures == 0 ? "PASS" : "FAILED");
  return failures == 0 ? 0 : 1;
}
