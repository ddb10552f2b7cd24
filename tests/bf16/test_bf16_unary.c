/* The unary family (bf16_unary.c) on all 65,536 bfloat16 inputs of every op against a reference
 * written here (widen, the float32 op, round), plus a bound: every finite result lies within
 * one bfloat16 ulp of the op computed in double. Then edge values by their expected bits,
 * attributes, Clip's bounds and oddities, shapes, in place, misaligned data, a split run and
 * bad input. */
#include <pthread.h>

#include "elementwise_test.h"

/* ---- the reference: one plain function an op, float32 as ORT's float32 kernels do ---- */
typedef struct ref_params {
  float alpha, beta;
} ref_params;

static float clamp01(float v) { /* min(v, 1) then max(., 0), NaN kept */
  if (v > 1.0f) v = 1.0f;
  if (v < 0.0f) v = 0.0f;
  return v;
}

static float ref_f32(actx_bf16_op op, float x, const ref_params *p) {
  switch (op) {
    case ACTX_BF16_OP_RELU: return x < 0.0f ? 0.0f : x;
    case ACTX_BF16_OP_LEAKY_RELU: return x >= 0.0f ? x : p->alpha * x;
    case ACTX_BF16_OP_HARD_SIGMOID: return clamp01(p->alpha * x + p->beta);
    case ACTX_BF16_OP_HARD_SWISH: return x * clamp01(x * (1.0f / 6.0f) + 0.5f);
    case ACTX_BF16_OP_SQRT: return sqrtf(x);
    case ACTX_BF16_OP_RECIPROCAL: return 1.0f / x;
    case ACTX_BF16_OP_NEG: return -x;
    case ACTX_BF16_OP_ABS: return fabsf(x);
    case ACTX_BF16_OP_EXP: return expf(x);
    case ACTX_BF16_OP_LOG: return logf(x);
    case ACTX_BF16_OP_FLOOR: return floorf(x);
    case ACTX_BF16_OP_CEIL: return ceilf(x);
    /* ORT's: exp(x) - 1 (not expm1), x > alpha (a NaN gives 0), x / (1 + |x|) (Inf: NaN) */
    case ACTX_BF16_OP_ELU: return x >= 0.0f ? x : p->alpha * (expf(x) - 1.0f);
    case ACTX_BF16_OP_THRESHOLDED_RELU: return x > p->alpha ? x : 0.0f;
    case ACTX_BF16_OP_SOFTPLUS: return x > 0.0f ? x + log1pf(expf(-x)) : log1pf(expf(x));
    case ACTX_BF16_OP_SOFTSIGN: return x / (1.0f + fabsf(x));
    case ACTX_BF16_OP_ROUND: return rintf(x);
    case ACTX_BF16_OP_SIN: return sinf(x);
    case ACTX_BF16_OP_COS: return cosf(x);
    case ACTX_BF16_OP_TAN: return tanf(x);
    case ACTX_BF16_OP_ATAN: return atanf(x);
    case ACTX_BF16_OP_CLIP: { /* alpha, beta: the bounds */
      float v = x < p->alpha ? p->alpha : x;
      return p->beta < v ? p->beta : v;
    }
    default: return NAN;
  }
}

/* The same op in double, for the bound. */
static double ref_f64(actx_bf16_op op, double x, const ref_params *p) {
  switch (op) {
    case ACTX_BF16_OP_LEAKY_RELU: return x >= 0 ? x : (double)p->alpha * x;
    case ACTX_BF16_OP_HARD_SIGMOID: {
      double v = (double)p->alpha * x + (double)p->beta;
      return v > 1 ? 1 : v < 0 ? 0 : v;
    }
    case ACTX_BF16_OP_HARD_SWISH: {
      double v = x / 6 + 0.5;
      return x * (v > 1 ? 1 : v < 0 ? 0 : v);
    }
    case ACTX_BF16_OP_SQRT: return sqrt(x);
    case ACTX_BF16_OP_RECIPROCAL: return 1 / x;
    case ACTX_BF16_OP_EXP: return exp(x);
    case ACTX_BF16_OP_LOG: return log(x);
    case ACTX_BF16_OP_SOFTPLUS: return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
    case ACTX_BF16_OP_SIN: return sin(x);
    case ACTX_BF16_OP_COS: return cos(x);
    case ACTX_BF16_OP_TAN: return tan(x);
    case ACTX_BF16_OP_ATAN: return atan(x);
    case ACTX_BF16_OP_ROUND: return nearbyint(x);
    default: return ref_f32(op, (float)x, p);
  }
}

/* Distance from the finite bfloat16 y to its neighbour away from zero. */
static double bf16_ulp(uint16_t y) {
  const uint16_t mag = y & 0x7FFFu;
  if (mag >= 0x7F7Fu) return ldexp(1.0, 127 - 7);
  return fabs((double)ref_widen((uint16_t)(mag + 1)) - (double)ref_widen(mag));
}

static const actx_bf16_op unary_ops[] = {
    ACTX_BF16_OP_RELU, ACTX_BF16_OP_LEAKY_RELU, ACTX_BF16_OP_HARD_SIGMOID,
    ACTX_BF16_OP_HARD_SWISH, ACTX_BF16_OP_SQRT, ACTX_BF16_OP_RECIPROCAL, ACTX_BF16_OP_NEG,
    ACTX_BF16_OP_ABS, ACTX_BF16_OP_EXP, ACTX_BF16_OP_LOG, ACTX_BF16_OP_FLOOR, ACTX_BF16_OP_CEIL,
    ACTX_BF16_OP_CLIP, ACTX_BF16_OP_ELU, ACTX_BF16_OP_THRESHOLDED_RELU, ACTX_BF16_OP_SOFTPLUS,
    ACTX_BF16_OP_SOFTSIGN, ACTX_BF16_OP_ROUND, ACTX_BF16_OP_SIN, ACTX_BF16_OP_COS,
    ACTX_BF16_OP_TAN, ACTX_BF16_OP_ATAN};
#define N_UNARY (sizeof unary_ops / sizeof unary_ops[0])

static uint16_t all_inputs[65536];

static actx_tensor bf16_scalar(uint16_t *v) {
  return tensor_of(ACTX_ELEM_BF16, shape_of(0, NULL), v);
}

/* Runs k on all 65,536 inputs (bounds: Clip's in[1], in[2] or NULL) and checks each result
 * against the reference; returns how many are not the correctly rounded double result. */
static long check_all(actx_bf16_kernel *k, actx_bf16_op op, const ref_params *p,
                      uint16_t *lo, uint16_t *hi) {
  const int64_t dims[] = {256, 256};
  actx_tensor in[3] = {tensor_of(ACTX_ELEM_BF16, shape_of(2, dims), all_inputs),
                       ACTX_TENSOR_ABSENT, ACTX_TENSOR_ABSENT};
  if (lo != NULL) in[1] = bf16_scalar(lo);
  if (hi != NULL) in[2] = bf16_scalar(hi);
  actx_tensor out;
  void *block;
  const char *why = NULL;
  const actx_status st =
      run_kernel(k, in, op == ACTX_BF16_OP_CLIP ? 3 : 1, &out, &block, &why);
  CHECK(st == ACTX_OK);
  if (st != ACTX_OK) {
    fprintf(stderr, "  op %d: %s\n", (int)op, why);
    free(block);
    return 0;
  }
  CHECK(out.elem == ACTX_ELEM_BF16 && out.shape.rank == 2 && out.shape.dims[1] == 256);
  const uint16_t *y = out.data;
  long not_correctly_rounded = 0;
  int reported = 0;
  for (uint32_t i = 0; i < 65536; i++) {
    const float x = ref_widen((uint16_t)i);
    const float r = ref_f32(op, x, p);
    const uint16_t want = ref_round(isnan(x) ? r : ref_nan(r, x, x));
    if (y[i] != want && reported++ < 5)
      fprintf(stderr, "  op %d x=0x%04x: got 0x%04x want 0x%04x\n", (int)op, i, y[i], want);
    CHECK(y[i] == want);
    values_compared++;
    /* NaN in: quiet NaN out (but ThresholdedRelu's x > alpha, false for NaN: 0, as ORT's) */
    if (isnan(x)) CHECK(op == ACTX_BF16_OP_THRESHOLDED_RELU ? y[i] == 0 : is_quiet_nan(y[i]));
    const double t = ref_f64(op, (double)x, p);
    const float yf = ref_widen(y[i]);
    if (isfinite(yf) && isfinite(t)) {
      CHECK(fabs((double)yf - t) <= bf16_ulp(y[i]));
      if (ref_round((float)t) != y[i] && fabs((double)ref_widen(ref_round((float)t)) - t) <
                                             fabs((double)yf - t))
        not_correctly_rounded++;
    }
  }
  free(block);
  return not_correctly_rounded;
}

static actx_bf16_kernel *unary_kernel(actx_bf16_op op, const actx_bf16_attrs *attrs) {
  actx_bf16_node n = node_of(op, since_of(op), op == ACTX_BF16_OP_CLIP ? 3 : 1, NULL);
  if (attrs != NULL) n.attrs = *attrs;
  return make_kernel(&n);
}

/* One input value through op: the output's bits. */
static uint16_t one(actx_bf16_op op, const actx_bf16_attrs *attrs, uint16_t x) {
  actx_bf16_kernel *k = unary_kernel(op, attrs);
  uint16_t v = x;
  actx_tensor in[3] = {bf16_scalar(&v), ACTX_TENSOR_ABSENT, ACTX_TENSOR_ABSENT};
  actx_tensor out;
  void *block;
  const char *why;
  CHECK(run_kernel(k, in, op == ACTX_BF16_OP_CLIP ? 3 : 1, &out, &block, &why) == ACTX_OK);
  const uint16_t y = *(uint16_t *)out.data;
  values_compared++;
  free(block);
  actx_bf16_kernel_destroy(k);
  return y;
}

static void test_all_inputs(void) {
  for (size_t i = 0; i < N_UNARY; i++) {
    const actx_bf16_op op = unary_ops[i];
    /* the attributes' defaults: LeakyRelu's alpha 0.01, HardSigmoid's 0.2 and 0.5, Elu's and
     * ThresholdedRelu's alpha 1 */
    const bool alpha_one = op == ACTX_BF16_OP_ELU || op == ACTX_BF16_OP_THRESHOLDED_RELU;
    const ref_params p = {op == ACTX_BF16_OP_LEAKY_RELU ? 0.01f : alpha_one ? 1.0f : 0.2f, 0.5f};
    actx_bf16_kernel *k = unary_kernel(op, NULL);
    const long off = op == ACTX_BF16_OP_CLIP ? check_all(k, op, &(ref_params){ref_widen(0xFF7F),
                                                                       ref_widen(0x7F7F)},
                                                         NULL, NULL)
                                             : check_all(k, op, &p, NULL, NULL);
    if (off) printf("  %s: %ld of 65,536 results one ulp from the correctly rounded one\n",
                    actx_bf16_op_info_get(op)->name, off);
    actx_bf16_kernel_destroy(k);
  }
  /* attributes set; kernels of one op with other attributes alive at once (their tables are
   * shared by (op, alpha, beta): each must keep its own), and one made again after a free */
  actx_bf16_attrs a = {.has_alpha = true, .alpha = 0.25f, .has_beta = true, .beta = -0.75f};
  actx_bf16_kernel *k = unary_kernel(ACTX_BF16_OP_LEAKY_RELU, &a);
  actx_bf16_kernel *k_default = unary_kernel(ACTX_BF16_OP_LEAKY_RELU, NULL);
  actx_bf16_kernel *k_default2 = unary_kernel(ACTX_BF16_OP_LEAKY_RELU, NULL);
  check_all(k, ACTX_BF16_OP_LEAKY_RELU, &(ref_params){0.25f, 0}, NULL, NULL);
  check_all(k_default, ACTX_BF16_OP_LEAKY_RELU, &(ref_params){0.01f, 0}, NULL, NULL);
  actx_bf16_kernel_destroy(k_default);
  check_all(k_default2, ACTX_BF16_OP_LEAKY_RELU, &(ref_params){0.01f, 0}, NULL, NULL);
  actx_bf16_kernel_destroy(k_default2);
  k_default = unary_kernel(ACTX_BF16_OP_LEAKY_RELU, NULL);
  check_all(k_default, ACTX_BF16_OP_LEAKY_RELU, &(ref_params){0.01f, 0}, NULL, NULL);
  actx_bf16_kernel_destroy(k_default);
  actx_bf16_kernel_destroy(k);
  k = unary_kernel(ACTX_BF16_OP_HARD_SIGMOID, &a);
  check_all(k, ACTX_BF16_OP_HARD_SIGMOID, &(ref_params){0.25f, -0.75f}, NULL, NULL);
  actx_bf16_kernel_destroy(k);
  a.has_beta = false; /* alpha alone: beta keeps its default */
  k = unary_kernel(ACTX_BF16_OP_HARD_SIGMOID, &a);
  check_all(k, ACTX_BF16_OP_HARD_SIGMOID, &(ref_params){0.25f, 0.5f}, NULL, NULL);
  actx_bf16_kernel_destroy(k);
}

static void test_clip(void) {
  actx_bf16_kernel *k = unary_kernel(ACTX_BF16_OP_CLIP, NULL);
  /* lo, hi as bfloat16 bits; 0 in present[] leaves one out */
  const struct {
    uint16_t lo, hi;
    int has_lo, has_hi;
  } bounds[] = {
      {0xBF80, 0x3F80, 1, 1}, /* [-1, 1] */
      {0x0000, 0, 1, 0},      /* min 0 only: Relu's bits (max(-0, 0) = -0) */
      {0, 0x40C0, 0, 1},      /* max 6 only */
      {0x4000, 0x3F80, 1, 1}, /* min 2 > max 1: every value is max */
      {0x7FC0, 0x3F80, 1, 1}, /* NaN min: no lower bound */
      {0xBF80, 0xFFC1, 1, 1}, /* NaN max (negative, payload): no upper bound */
      {0x8000, 0x0000, 1, 1}, /* [-0, +0] */
      {0xFF80, 0x7F80, 1, 1}, /* [-Inf, Inf]: nothing clipped, Inf kept */
      {0x0001, 0x0002, 1, 1}, /* subnormal bounds */
  };
  for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
    uint16_t lo = bounds[i].lo, hi = bounds[i].hi;
    const ref_params p = {bounds[i].has_lo ? ref_widen(lo) : ref_widen(0xFF7F),
                          bounds[i].has_hi ? ref_widen(hi) : ref_widen(0x7F7F)};
    check_all(k, ACTX_BF16_OP_CLIP, &p, bounds[i].has_lo ? &lo : NULL,
              bounds[i].has_hi ? &hi : NULL);
  }
  /* the oddities by their bits */
  CHECK(one(ACTX_BF16_OP_CLIP, NULL, 0xFF80) == 0xFF7F); /* -Inf, no min: lowest finite */
  CHECK(one(ACTX_BF16_OP_CLIP, NULL, 0x7F80) == 0x7F7F); /* +Inf, no max: largest finite */
  CHECK(one(ACTX_BF16_OP_CLIP, NULL, 0x7F81) == 0x7FC1); /* a signalling NaN: made quiet */
  CHECK(one(ACTX_BF16_OP_CLIP, NULL, 0x8000) == 0x8000);
  /* a bound of shape [1] is a single value too; two values, or float32, are not */
  uint16_t x[4] = {0x4000, 0xC000, 0x3F00, 0x0000}, lo = 0xBF80, hi2[2] = {0x3F80, 0x3F80};
  const int64_t d1[] = {1}, d2[] = {2}, d4[] = {4};
  actx_tensor in[4] = {tensor_of(ACTX_ELEM_BF16, shape_of(1, d4), x),
                       tensor_of(ACTX_ELEM_BF16, shape_of(1, d1), &lo), ACTX_TENSOR_ABSENT,
                       ACTX_TENSOR_ABSENT};
  actx_tensor out;
  void *block;
  const char *why;
  CHECK(run_kernel(k, in, 3, &out, &block, &why) == ACTX_OK);
  const uint16_t want[4] = {0x4000, 0xBF80, 0x3F00, 0x0000};
  CHECK(memcmp(out.data, want, sizeof want) == 0);
  values_compared += 4;
  free(block);
  in[2] = tensor_of(ACTX_ELEM_BF16, shape_of(1, d2), hi2);
  CHECK(run_kernel(k, in, 3, &out, &block, &why) == ACTX_ERROR_INVALID_ARGUMENT &&
        strstr(why, "single values"));
  free(block);
  in[2] = tensor_of(ACTX_ELEM_BF16, shape_of(0, NULL), NULL); /* no data: shapes only */
  CHECK(actx_bf16_kernel_shapes(k, in, 3, &out, 1, &why) == ACTX_OK);
  CHECK(run_kernel(k, in, 3, &out, &block, &why) == ACTX_ERROR_INVALID_ARGUMENT &&
        strstr(why, "no data"));
  free(block);
  in[1] = in[0]; /* four values: not a bound */
  CHECK(run_kernel(k, in, 3, &out, &block, &why) == ACTX_ERROR_INVALID_ARGUMENT &&
        strstr(why, "single values"));
  free(block);
  in[1] = tensor_of(ACTX_ELEM_BF16, shape_of(1, d1), &lo);
  CHECK(run_kernel(k, in, 4, &out, &block, &why) == ACTX_ERROR_INVALID_ARGUMENT &&
        strstr(why, "number"));
  free(block);
  float f = 1.0f;
  in[2] = tensor_of(ACTX_ELEM_F32, shape_of(0, NULL), &f);
  CHECK(run_kernel(k, in, 3, &out, &block, &why) == ACTX_ERROR_INVALID_ARGUMENT &&
        strstr(why, "bfloat16"));
  free(block);
  actx_bf16_kernel_destroy(k);
  /* the node's own declaration of a bound's type */
  const actx_elem elems[] = {ACTX_ELEM_BF16, ACTX_ELEM_F32, ACTX_ELEM_BF16};
  actx_bf16_node n = node_of(ACTX_BF16_OP_CLIP, 13, 3, elems);
  expect_create_error(&n, "bfloat16");
}

static void test_edges(void) {
  const actx_bf16_op R = ACTX_BF16_OP_RELU;
  CHECK(one(R, NULL, 0x8000) == 0x8000);  /* Relu(-0) = -0, as ORT's max(x, 0) gives */
  CHECK(one(R, NULL, 0xFF80) == 0x0000);  /* Relu(-Inf) = +0 */
  CHECK(one(R, NULL, 0x7F80) == 0x7F80);
  CHECK(one(R, NULL, 0xFF81) == 0xFFC1);  /* a NaN: quiet, sign and payload kept */
  CHECK(one(R, NULL, 0x0001) == 0x0001);  /* subnormal */
  CHECK(one(R, NULL, 0x8001) == 0x0000);
  CHECK(one(ACTX_BF16_OP_NEG, NULL, 0x0000) == 0x8000);
  CHECK(one(ACTX_BF16_OP_NEG, NULL, 0x7FC1) == 0xFFC1);
  CHECK(one(ACTX_BF16_OP_ABS, NULL, 0xFFC1) == 0x7FC1);
  CHECK(one(ACTX_BF16_OP_ABS, NULL, 0xFF7F) == 0x7F7F);
  CHECK(one(ACTX_BF16_OP_SQRT, NULL, 0x8000) == 0x8000); /* sqrt(-0) = -0 */
  CHECK(one(ACTX_BF16_OP_SQRT, NULL, 0xBF80) == 0x7FC0); /* made from a number: +qNaN */
  CHECK(one(ACTX_BF16_OP_SQRT, NULL, 0x4080) == 0x4000);
  CHECK(one(ACTX_BF16_OP_RECIPROCAL, NULL, 0x0000) == 0x7F80);
  CHECK(one(ACTX_BF16_OP_RECIPROCAL, NULL, 0x8000) == 0xFF80);
  CHECK(one(ACTX_BF16_OP_RECIPROCAL, NULL, 0x7F80) == 0x0000);
  CHECK(one(ACTX_BF16_OP_RECIPROCAL, NULL, 0x7F7F) == 0x0020); /* 1 / max: a subnormal */
  CHECK(one(ACTX_BF16_OP_RECIPROCAL, NULL, 0x0001) == 0x7F80); /* 1 / 2^-133 overflows */
  CHECK(one(ACTX_BF16_OP_EXP, NULL, 0xFF80) == 0x0000);
  CHECK(one(ACTX_BF16_OP_EXP, NULL, 0x42C8) == 0x7F80); /* exp(100) */
  CHECK(one(ACTX_BF16_OP_EXP, NULL, 0x0000) == 0x3F80);
  CHECK(one(ACTX_BF16_OP_LOG, NULL, 0x0000) == 0xFF80);
  CHECK(one(ACTX_BF16_OP_LOG, NULL, 0x8000) == 0xFF80);
  CHECK(one(ACTX_BF16_OP_LOG, NULL, 0xBF80) == 0x7FC0);
  CHECK(one(ACTX_BF16_OP_LOG, NULL, 0xFF80) == 0x7FC0);
  CHECK(one(ACTX_BF16_OP_LOG, NULL, 0x3F80) == 0x0000);
  CHECK(one(ACTX_BF16_OP_FLOOR, NULL, 0xBF00) == 0xBF80); /* floor(-0.5) = -1 */
  CHECK(one(ACTX_BF16_OP_CEIL, NULL, 0xBF00) == 0x8000);  /* ceil(-0.5) = -0 */
  CHECK(one(ACTX_BF16_OP_FLOOR, NULL, 0x0001) == 0x0000);
  CHECK(one(ACTX_BF16_OP_CEIL, NULL, 0x0001) == 0x3F80);
  CHECK(one(ACTX_BF16_OP_HARD_SIGMOID, NULL, 0x0000) == 0x3F00); /* 0.5 */
  CHECK(one(ACTX_BF16_OP_HARD_SIGMOID, NULL, 0x4040) == 0x3F80); /* 3 -> 1 */
  CHECK(one(ACTX_BF16_OP_HARD_SWISH, NULL, 0x4040) == 0x4040);   /* 3 -> 3 */
  CHECK(one(ACTX_BF16_OP_HARD_SWISH, NULL, 0xC120) == 0x8000);   /* -10 * 0 = -0 */
  CHECK(one(ACTX_BF16_OP_LEAKY_RELU, NULL, 0xC2C8) == 0xBF80);   /* -100 * 0.01 = -1 */
  CHECK(one(ACTX_BF16_OP_LEAKY_RELU, NULL, 0x8000) == 0x8000);
}

static void test_shapes_and_memory(void) {
  actx_bf16_kernel *k = unary_kernel(ACTX_BF16_OP_EXP, NULL);
  const char *why;
  /* empty tensors (data NULL), a 1-element one, rank 4 */
  const int64_t dims0[] = {0}, dims203[] = {2, 0, 3}, dims1[] = {1, 1, 1},
                dims4[] = {2, 3, 4, 5};
  const actx_shape shapes[] = {shape_of(1, dims0), shape_of(3, dims203), shape_of(3, dims1),
                               shape_of(4, dims4), shape_of(0, NULL)};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    const int64_t n = actx_shape_elements(&shapes[s]);
    actx_tensor in = tensor_of(ACTX_ELEM_BF16, shapes[s], n ? all_inputs + 0x3000 : NULL);
    actx_tensor out;
    CHECK(actx_bf16_kernel_shapes(k, &in, 1, &out, 1, &why) == ACTX_OK);
    CHECK(out.shape.rank == shapes[s].rank && actx_shape_elements(&out.shape) == n);
    uint16_t y[120];
    out.data = n ? y : NULL;
    CHECK(actx_bf16_kernel_run(k, &in, 1, &out, 1, NULL, &why) == ACTX_OK);
    for (int64_t i = 0; i < n; i++, values_compared++)
      CHECK(y[i] == ref_round(expf(ref_widen(all_inputs[0x3000 + i]))));
    cases++;
  }
  /* in place, all inputs, split over a parallel-for; misaligned in and out */
  uint16_t *buf = malloc(65536 * 2);
  memcpy(buf, all_inputs, 65536 * 2);
  const int64_t dn[] = {65536};
  actx_tensor in = tensor_of(ACTX_ELEM_BF16, shape_of(1, dn), buf);
  actx_tensor out = in;
  CHECK(actx_bf16_kernel_run(k, &in, 1, &out, 1, &test_par, &why) == ACTX_OK);
  CHECK(last_num_tasks == 4);
  for (uint32_t i = 0; i < 65536; i++, values_compared++)
    CHECK(buf[i] == ref_round(expf(ref_widen((uint16_t)i))));
  cases++;
  unsigned char *raw = malloc(65536 * 2 + 3);
  memcpy(raw + 1, all_inputs, 65536 * 2); /* an odd address */
  in.data = raw + 1;
  void *block;
  CHECK(run_kernel_at(k, &in, 1, &out, &block, 3, &test_par, &why) == ACTX_OK);
  for (uint32_t i = 0; i < 65536; i++, values_compared++) {
    uint16_t v;
    memcpy(&v, (unsigned char *)out.data + 2 * i, 2);
    CHECK(v == ref_round(expf(ref_widen((uint16_t)i))));
  }
  free(block);
  free(raw);
  free(buf);

  /* bad input at run: wrong type, negative dim, no data, wrong output, overlapping output */
  float f[4] = {0};
  const int64_t d4[] = {4}, dneg[] = {-1}, d3[] = {3};
  actx_tensor bad = tensor_of(ACTX_ELEM_F32, shape_of(1, d4), f);
  CHECK(actx_bf16_kernel_shapes(k, &bad, 1, &out, 1, &why) == ACTX_ERROR_INVALID_ARGUMENT &&
        strstr(why, "not bfloat16"));
  bad = tensor_of(ACTX_ELEM_BF16, shape_of(1, dneg), f);
  CHECK(actx_bf16_kernel_shapes(k, &bad, 1, &out, 1, &why) == ACTX_ERROR_INVALID_ARGUMENT &&
        strstr(why, "negative"));
  /* no data: _shapes needs none (only the shape), a run refuses */
  bad = tensor_of(ACTX_ELEM_BF16, shape_of(1, d4), NULL);
  CHECK(actx_bf16_kernel_shapes(k, &bad, 1, &out, 1, &why) == ACTX_OK &&
        out.shape.dims[0] == 4);
  out.data = f;
  CHECK(actx_bf16_kernel_run(k, &bad, 1, &out, 1, NULL, &why) == ACTX_ERROR_INVALID_ARGUMENT &&
        strstr(why, "no data"));
  uint16_t x4[5] = {0x3F80, 0x4000, 0x4040, 0x4080, 0};
  in = tensor_of(ACTX_ELEM_BF16, shape_of(1, d4), x4);
  out = tensor_of(ACTX_ELEM_BF16, shape_of(1, d3), f);
  CHECK(actx_bf16_kernel_run(k, &in, 1, &out, 1, NULL, &why) == ACTX_ERROR_INVALID_ARGUMENT &&
        strstr(why, "output's shape"));
  out = tensor_of(ACTX_ELEM_BF16, shape_of(1, d4), x4 + 1); /* shifted by one: overlaps */
  CHECK(actx_bf16_kernel_run(k, &in, 1, &out, 1, NULL, &why) == ACTX_ERROR_INVALID_ARGUMENT &&
        strstr(why, "overlaps"));
  out = tensor_of(ACTX_ELEM_F32, shape_of(1, d4), f);
  CHECK(actx_bf16_kernel_run(k, &in, 1, &out, 1, NULL, &why) == ACTX_ERROR_INVALID_ARGUMENT &&
        strstr(why, "element type"));
  CHECK(actx_bf16_kernel_run(k, &in, 1, &out, 2, NULL, &why) == ACTX_ERROR_INVALID_ARGUMENT &&
        strstr(why, "number"));
  cases += 7;
  actx_bf16_kernel_destroy(k);

  /* bad nodes: a float32 input, non-finite attributes */
  const actx_elem f32[] = {ACTX_ELEM_F32};
  actx_bf16_node n = node_of(ACTX_BF16_OP_RELU, 14, 1, f32);
  expect_create_error(&n, "bfloat16");
  n = node_of(ACTX_BF16_OP_LEAKY_RELU, 16, 1, NULL);
  n.attrs.has_alpha = true;
  n.attrs.alpha = NAN;
  expect_create_error(&n, "alpha");
  n = node_of(ACTX_BF16_OP_HARD_SIGMOID, 22, 1, NULL);
  n.attrs.has_beta = true;
  n.attrs.beta = INFINITY;
  expect_create_error(&n, "beta");
}

/* Kernels made, run and freed on several threads at once (their shared tables are counted
 * under a lock; run under ThreadSanitizer by the sanitizer suite). */
static void *thread_body(void *arg) {
  long *bad = arg;
  const actx_bf16_op ops2[2] = {ACTX_BF16_OP_RELU, ACTX_BF16_OP_SQRT};
  for (int it = 0; it < 10; it++) {
    actx_bf16_kernel *k = NULL;
    const actx_bf16_node n = node_of(ops2[it & 1], 13, 1, NULL);
    const char *why;
    if (actx_bf16_kernel_create(&n, &k, &why) != ACTX_OK) {
      (*bad)++;
      continue;
    }
    uint16_t x[256], y[256];
    for (int i = 0; i < 256; i++) x[i] = (uint16_t)(i * 251 + it);
    const int64_t d[] = {256};
    actx_tensor in = tensor_of(ACTX_ELEM_BF16, shape_of(1, d), x);
    actx_tensor out = tensor_of(ACTX_ELEM_BF16, shape_of(1, d), y);
    if (actx_bf16_kernel_run(k, &in, 1, &out, 1, NULL, &why) != ACTX_OK) (*bad)++;
    for (int i = 0; i < 256; i++) {
      const float v = ref_widen(x[i]);
      const float r = ops2[it & 1] == ACTX_BF16_OP_RELU ? (v < 0.0f ? 0.0f : v) : sqrtf(v);
      if (y[i] != ref_round(isnan(v) ? r : ref_nan(r, v, v))) (*bad)++;
    }
    actx_bf16_kernel_destroy(k);
  }
  return NULL;
}

static void test_threads(void) {
  pthread_t t[4];
  long bad[4] = {0};
  for (int i = 0; i < 4; i++) CHECK(pthread_create(&t[i], NULL, thread_body, &bad[i]) == 0);
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    CHECK(bad[i] == 0);
  }
  values_compared += 4 * 10 * 256;
  cases += 40;
}

int main(void) {
  for (uint32_t i = 0; i < 65536; i++) all_inputs[i] = (uint16_t)i;
  test_all_inputs();
  test_clip();
  test_edges();
  test_shapes_and_memory();
  test_threads();
  return finish("test_bf16_unary");
}
