/* The unary family: y = round(f(widen(x))) with f one float32 function an op, defined once
 * below. Every op but Clip builds, with its kernel, the table of f's rounded result for all
 * 65,536 inputs (128 KiB, one for all kernels of an op and attributes) and runs by lookup:
 * the table is the definition, so no input can differ from it. Clip's bounds are inputs (known
 * only at run), and its result is always x, min or max, so it is computed directly with the
 * same f, vectorised (f_clip's two selects are x86's vmaxps / vminps with their operands in
 * that order): 0.43 -> 0.21 ns an element on [1, 240, 12, 80], the same bits.
 *
 * The float32 functions follow ORT's float32 kernels (Eigen's cwiseMax / cwiseMin are
 * std::max / std::min: max(a, b) = a < b ? b : a, min(a, b) = b < a ? b : a):
 *   Relu(x) = max(x, 0): Relu(-0) = -0, Relu(NaN) = NaN
 *   LeakyRelu(x) = x >= 0 ? x : alpha * x
 *   HardSigmoid(x) = max(min(alpha * x + beta, 1), 0)   (NaN stays NaN)
 *   HardSwish(x) = x * HardSigmoid(x) at alpha 1/6, beta 0.5
 *   Clip(x) = min(max(x, lo), hi): a NaN x stays NaN, a NaN bound bounds nothing, lo > hi gives
 *            hi everywhere; an absent bound is bfloat16's lowest / largest finite value (ONNX
 *            Clip-13's numeric_limits default), so Clip(+-Inf) without bounds is +-max finite
 *   Elu(x) = x >= 0 ? x : alpha * (exp(x) - 1)   (ORT's: exp(x) - 1, not expm1)
 *   ThresholdedRelu(x) = x > alpha ? x : 0         (so a NaN gives 0, as ORT's)
 *   Softplus(x) = x > 0 ? x + log1p(exp(-x)) : log1p(exp(x))   (no overflow)
 *   Softsign(x) = x / (1 + |x|)                    (±Inf gives NaN, as ORT's)
 *   Round(x): to nearest, ties to even (rint)
 *   Sin, Cos, Tan, Atan: the C library's
 *   Sqrt, Reciprocal (1 / x), Neg, Abs, Floor, Ceil: IEEE-exact in float32
 *   Exp, Log: the C library's expf / logf (glibc's are within 1 float32 ulp, not correctly
 *            rounded); the tests bound every finite result within 1 bfloat16 ulp of exp / log
 *            computed in double, and so for Softplus, Sin, Cos, Tan and Atan.
 * A NaN in gives a quiet NaN out (rounding makes it quiet and keeps its sign and top payload);
 * a NaN made from a number (sqrt(-1), log(-1)) is the positive quiet NaN 0x7FC0 on every ISA. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bf16_elementwise.h"
#include "lut.h"

typedef struct unary_params {
  float alpha, beta;
} unary_params;

static float f_relu(float x, const unary_params *p) {
  (void)p;
  return x < 0.0f ? 0.0f : x;
}
static float f_leaky_relu(float x, const unary_params *p) { return x >= 0.0f ? x : p->alpha * x; }
static float f_hard_sigmoid(float x, const unary_params *p) {
  float v = p->alpha * x + p->beta;
  v = 1.0f < v ? 1.0f : v;
  return v < 0.0f ? 0.0f : v;
}
static float f_hard_swish(float x, const unary_params *p) {
  (void)p;
  const unary_params hs = {1.0f / 6.0f, 0.5f};
  return x * f_hard_sigmoid(x, &hs);
}
static float f_sqrt(float x, const unary_params *p) {
  (void)p;
  return sqrtf(x);
}
static float f_reciprocal(float x, const unary_params *p) {
  (void)p;
  return 1.0f / x;
}
static float f_neg(float x, const unary_params *p) {
  (void)p;
  return -x;
}
static float f_abs(float x, const unary_params *p) {
  (void)p;
  return fabsf(x);
}
static float f_exp(float x, const unary_params *p) {
  (void)p;
  return expf(x);
}
static float f_log(float x, const unary_params *p) {
  (void)p;
  return logf(x);
}
static float f_floor(float x, const unary_params *p) {
  (void)p;
  return floorf(x);
}
static float f_ceil(float x, const unary_params *p) {
  (void)p;
  return ceilf(x);
}
static float f_elu(float x, const unary_params *p) {
  return x >= 0.0f ? x : p->alpha * (expf(x) - 1.0f);
}
static float f_thresholded_relu(float x, const unary_params *p) {
  return x > p->alpha ? x : 0.0f;
}
static float f_softplus(float x, const unary_params *p) {
  (void)p;
  return x > 0.0f ? x + log1pf(expf(-x)) : log1pf(expf(x));
}
static float f_softsign(float x, const unary_params *p) {
  (void)p;
  return x / (1.0f + fabsf(x));
}
static float f_round(float x, const unary_params *p) {
  (void)p;
  return rintf(x);
}
static float f_sin(float x, const unary_params *p) {
  (void)p;
  return sinf(x);
}
static float f_cos(float x, const unary_params *p) {
  (void)p;
  return cosf(x);
}
static float f_tan(float x, const unary_params *p) {
  (void)p;
  return tanf(x);
}
static float f_atan(float x, const unary_params *p) {
  (void)p;
  return atanf(x);
}
/* alpha / beta hold Clip's bounds here */
static float f_clip(float x, const unary_params *p) { return actx_clip_f32(x, p->alpha, p->beta); }

/* op, f, default alpha, default beta, whether alpha / beta are attributes */
#define UNARY_OPS(X)                                   \
  X(RELU, f_relu, 0.0f, 0.0f, 0)                       \
  X(LEAKY_RELU, f_leaky_relu, 0.01f, 0.0f, 1)          \
  X(HARD_SIGMOID, f_hard_sigmoid, 0.2f, 0.5f, 2)       \
  X(HARD_SWISH, f_hard_swish, 0.0f, 0.0f, 0)           \
  X(SQRT, f_sqrt, 0.0f, 0.0f, 0)                       \
  X(RECIPROCAL, f_reciprocal, 0.0f, 0.0f, 0)           \
  X(NEG, f_neg, 0.0f, 0.0f, 0)                         \
  X(ABS, f_abs, 0.0f, 0.0f, 0)                         \
  X(EXP, f_exp, 0.0f, 0.0f, 0)                         \
  X(LOG, f_log, 0.0f, 0.0f, 0)                         \
  X(FLOOR, f_floor, 0.0f, 0.0f, 0)                     \
  X(CEIL, f_ceil, 0.0f, 0.0f, 0)                       \
  X(CLIP, f_clip, 0.0f, 0.0f, 0)                       \
  X(ELU, f_elu, 1.0f, 0.0f, 1)                         \
  X(THRESHOLDED_RELU, f_thresholded_relu, 1.0f, 0.0f, 1) \
  X(SOFTPLUS, f_softplus, 0.0f, 0.0f, 0)               \
  X(SOFTSIGN, f_softsign, 0.0f, 0.0f, 0)               \
  X(ROUND, f_round, 0.0f, 0.0f, 0)                     \
  X(SIN, f_sin, 0.0f, 0.0f, 0)                         \
  X(COS, f_cos, 0.0f, 0.0f, 0)                         \
  X(TAN, f_tan, 0.0f, 0.0f, 0)                         \
  X(ATAN, f_atan, 0.0f, 0.0f, 0)

typedef float (*unary_fn)(float x, const unary_params *p);

typedef struct unary_row {
  unary_fn f;
  float alpha, beta;
  int n_attrs; /* 0: none, 1: alpha, 2: alpha and beta */
} unary_row;

#define UNARY_ROW_(e, fn, a, b, n) [ACTX_BF16_OP_##e] = {fn, a, b, n},
static const unary_row unary_rows[ACTX_BF16_OP_COUNT] = {UNARY_OPS(UNARY_ROW_)};
#undef UNARY_ROW_

/* The tables, shared: every kernel of one (op, alpha, beta) uses one table, counted, so that a
 * graph of a hundred Relu nodes holds 128 KiB, not 12.8 MiB. Guarded by a lock, since sessions
 * (and their kernels) may be made and freed on several threads at once. */
typedef struct unary_table {
  struct unary_table *next;
  actx_bf16_op op;
  unary_params params;
  size_t refs;
  uint16_t y[ACTX_LUT_ENTRIES]; /* actx_lut_apply's table (its spares zero) */
} unary_table;

static pthread_mutex_t tables_lock = PTHREAD_MUTEX_INITIALIZER;
static unary_table *tables;

static const unary_table *table_acquire(actx_bf16_op op, const unary_params *p) {
  pthread_mutex_lock(&tables_lock);
  unary_table *t = tables;
  while (t != NULL && !(t->op == op && memcmp(&t->params, p, sizeof *p) == 0)) t = t->next;
  if (t == NULL && (t = calloc(1, sizeof *t)) != NULL) {
    t->op = op;
    t->params = *p;
    t->refs = 0;
    const unary_fn f = unary_rows[op].f;
    for (uint32_t x = 0; x < 65536; x++) {
      const float v = actx_bf16_to_f32((uint16_t)x), y = f(v, p);
      /* a NaN of a NaN input is f's (Neg and Abs set its sign); one made from a number,
       * sqrt(-1) or log(-1), is the positive quiet NaN on every ISA */
      t->y[x] = actx_f32_to_bf16(v != v ? y : actx_nan_rule(y, v, v));
    }
    t->next = tables;
    tables = t;
  }
  if (t != NULL) t->refs++;
  pthread_mutex_unlock(&tables_lock);
  return t;
}

static void table_release(const unary_table *table) {
  if (table == NULL) return;
  pthread_mutex_lock(&tables_lock);
  for (unary_table **at = &tables; *at != NULL; at = &(*at)->next) {
    if (*at != table) continue;
    unary_table *t = *at;
    if (--t->refs == 0) {
      *at = t->next;
      free(t);
    }
    break;
  }
  pthread_mutex_unlock(&tables_lock);
}

typedef struct unary_state {
  actx_bf16_op op;
  unary_params params;
  const unary_table *table; /* NULL for Clip */
} unary_state;

static actx_status unary_create(const actx_bf16_node *node, void **out, const char **why) {
  const unary_row *row = &unary_rows[node->op];
  if (row->f == NULL) return actx_bf16_fail(why, "not a unary operator");
  for (size_t i = 0; i < node->n_inputs; i++)
    if (node->input_present[i] && node->input_elems[i] != ACTX_ELEM_BF16)
      return actx_bf16_fail(why, "an input is not bfloat16");
  unary_params p = {row->alpha, row->beta};
  if (row->n_attrs >= 1 && node->attrs.has_alpha) p.alpha = node->attrs.alpha;
  if (row->n_attrs >= 2 && node->attrs.has_beta) p.beta = node->attrs.beta;
  if (!isfinite(p.alpha)) return actx_bf16_fail(why, "alpha is not finite");
  if (!isfinite(p.beta)) return actx_bf16_fail(why, "beta is not finite");
  unary_state *s = calloc(1, sizeof *s);
  if (s == NULL) return ACTX_ERROR_OUT_OF_MEMORY;
  s->op = node->op;
  s->params = p;
  if (node->op != ACTX_BF16_OP_CLIP && (s->table = table_acquire(node->op, &p)) == NULL) {
    free(s);
    return ACTX_ERROR_OUT_OF_MEMORY;
  }
  *out = s;
  return ACTX_OK;
}

static void unary_destroy(void *state) {
  unary_state *s = state;
  if (s == NULL) return;
  table_release(s->table);
  free(s);
}

/* Clip's bound k (1: min, 2: max): absent, or a bfloat16 tensor of one element; its value is
 * read only with a place for it (a run: _shapes may not have the data). */
static actx_status clip_bound(const actx_tensor *in, size_t n_in, size_t k, uint16_t absent,
                              float *bound, const char **why) {
  if (bound != NULL) *bound = actx_bf16_to_f32(absent);
  if (k >= n_in || in[k].elem == ACTX_ELEM_COUNT) return ACTX_OK;
  const actx_status st = actx_bf16_check_tensor(&in[k], ACTX_ELEM_BF16, bound != NULL, why);
  if (st != ACTX_OK) return st;
  if (actx_shape_elements(&in[k].shape) != 1)
    return actx_bf16_fail(why, "Clip's min and max must be single values");
  if (bound != NULL) *bound = actx_ld_bf16(in[k].data);
  return ACTX_OK;
}

static actx_status unary_shapes(const void *state, const actx_tensor *in, size_t n_in,
                                actx_tensor *out, size_t n_out, const char **why) {
  const unary_state *s = state;
  if (n_in < 1 || n_out != 1) return actx_bf16_fail(why, "wrong number of inputs or outputs");
  actx_status st = actx_bf16_check_tensor(&in[0], ACTX_ELEM_BF16, false, why);
  if (st != ACTX_OK) return st;
  if (s->op == ACTX_BF16_OP_CLIP) {
    if (n_in > 3) return actx_bf16_fail(why, "wrong number of inputs or outputs");
    if ((st = clip_bound(in, n_in, 1, ACTX_BF16_LOWEST, NULL, why)) != ACTX_OK) return st;
    if ((st = clip_bound(in, n_in, 2, ACTX_BF16_MAX_FINITE, NULL, why)) != ACTX_OK) return st;
  } else if (n_in > 1) {
    return actx_bf16_fail(why, "wrong number of inputs or outputs");
  }
  out[0].elem = ACTX_ELEM_BF16;
  out[0].shape = in[0].shape;
  return ACTX_OK;
}

static void table_piece(const void *ctx, const unsigned char *const *in, const int64_t *step,
                        unsigned char *out, size_t n) {
  const uint16_t *table = ctx;
  (void)step; /* the one input has the output's shape: step 1 */
  actx_lut_apply(table, in[0], out, n);
}

ACTX_BF16_VECTORISED static void clip_piece(const void *ctx, const unsigned char *const *in,
                                            const int64_t *step, unsigned char *out, size_t n) {
  const unary_params p = *(const unary_params *)ctx;
  actx_block x, y;
  for (size_t i = 0; i < n; i += ACTX_BLOCK) {
    const size_t m = n - i < ACTX_BLOCK ? n - i : ACTX_BLOCK;
    actx_widen_block(in[0] + 2 * i, step[0], m, &x);
    for (size_t j = 0; j < ACTX_BLOCK; j++) y.f[j] = f_clip(x.f[j], &p);
    actx_round_block(&y, out + 2 * i, m);
  }
}

static actx_status unary_run(const void *state, const actx_tensor *in, size_t n_in,
                             actx_tensor *out, size_t n_out, const actx_parallel *par,
                             const char **why) {
  const unary_state *s = state;
  actx_tensor shape;
  actx_status st = unary_shapes(state, in, n_in, &shape, n_out == 1 ? 1 : 0, why);
  st = actx_bf16_check_run(st, in, n_in, &out[0], ACTX_ELEM_BF16, &in[0].shape, 1, why);
  if (st != ACTX_OK) return st;
  if (s->op == ACTX_BF16_OP_CLIP) {
    unary_params bounds;
    if ((st = clip_bound(in, n_in, 1, ACTX_BF16_LOWEST, &bounds.alpha, why)) != ACTX_OK ||
        (st = clip_bound(in, n_in, 2, ACTX_BF16_MAX_FINITE, &bounds.beta, why)) != ACTX_OK)
      return st;
    actx_walk_broadcast_run(&in[0].shape, in, 1, out[0].data, 2, clip_piece, &bounds,
                            ACTX_WALK_NS_CLIP, par);
  } else {
    actx_walk_broadcast_run(&in[0].shape, in, 1, out[0].data, 2, table_piece, s->table->y,
                            ACTX_WALK_NS_TABLE, par);
  }
  return ACTX_OK;
}

static bool unary_chain_form(const void *state, actx_bf16_chain_form *form) {
  const unary_state *s = state;
  form->kind = s->op == ACTX_BF16_OP_CLIP ? ACTX_CHAIN_CLIP : ACTX_CHAIN_TABLE;
  form->table = s->table != NULL ? s->table->y : NULL;
  return true;
}

const actx_bf16_family actx_bf16_family_unary = {
    .create = unary_create,
    .pack = NULL,
    .shapes = unary_shapes,
    .run = unary_run,
    .destroy = unary_destroy,
    .chain_form = unary_chain_form,
};
