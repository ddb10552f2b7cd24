/* The binary family: Add, Sub, Mul, Div, PRelu, Pow, and the variadic Max / Min, with numpy
 * broadcasting of every input together (bf16_elementwise.h's walk: same shapes run as one
 * stretch, a scalar or a broadcast row as a held input). Each element: inputs widened, one
 * float32 op, rounded once (a NaN comes out quiet, by actx_nan_rule: a NaN operand's own, the
 * first if both are; one made from numbers, 0 / 0 or pow(-2, 0.5), the positive quiet NaN).
 *
 * PRelu(x, slope) = x < 0 ? slope · x : x, ORT's float32 kernel's (PRelu(-0) = -0), x and slope
 * broadcast both ways as ORT's kernel does (ONNX writes the slope's as unidirectional; a slope
 * that grows x's shape gives ORT's larger output).
 *
 * Pow's exponent may be bfloat16, float32 or int64 (Pow-13/15's T1): y = powf(x, e). An int64
 * e is converted to float32 (exact up to 2^24); beyond that, where the conversion could lose
 * the parity that decides a negative base's sign, powf(|x|, e) gets the sign of x^e.
 *
 * Max / Min are IEEE 754-2019 maximum / minimum, as ORT's float32 kernels are for NaN (Eigen's
 * PropagateNaN): a NaN among the inputs gives NaN (the first, in input order); and +0 > -0,
 * so Max(-0, +0) = +0 and Min(+0, -0) = -0 whatever the order (ORT's keep an operand order). */
#include <math.h>
#include <stdlib.h>

#include "bf16_elementwise.h"

typedef struct binary_state {
  actx_bf16_op op;
  actx_elem exponent_elem; /* Pow's input 1 */
  size_t n_inputs;
} binary_state;

/* The arithmetic: the float32 op on the widened bits, actx_nan_pick, rounded. */
#define op_add(a, b) ((a) + (b))
#define op_sub(a, b) ((a) - (b))
#define op_mul(a, b) ((a) * (b))
#define op_div(a, b) ((a) / (b))
#define op_prelu(a, b) ((a) < 0.0f ? (b) * (a) : (a))

/* Max / Min over float32 bits, in integers so that the loop vectorises: the key maps the bits
 * to an unsigned integer in the order of the values, with -0 just below +0; a NaN operand
 * (the first, if both) wins outright. */
static inline uint32_t order_key(uint32_t x) {
  return x & 0x80000000u ? ~x : x | 0x80000000u;
}
static inline uint32_t max_bits(uint32_t a, uint32_t b, bool max) {
  const uint32_t ka = order_key(a), kb = order_key(b);
  const uint32_t b_wins = (uint32_t)0 - (uint32_t)(max ? kb > ka : kb < ka);
  const uint32_t by_order = a ^ ((a ^ b) & b_wins);
  const uint32_t nan_b = b ^ ((b ^ by_order) & ~actx_nan_mask(b)); /* b if b is NaN */
  return a ^ ((a ^ nan_b) & ~actx_nan_mask(a));                   /* a if a is NaN */
}

/* One piece function an op, by blocks (bf16_elementwise.h): each element widened and
 * computed in one loop over the block, which also notes whether any result is a NaN; then
 * rounded into h (the NaN rule applied only in a block that has one), which is stored. */
#define BINARY_PIECE_(name, op)                                                        \
  ACTX_BF16_VECTORISED static void piece_##name(const void *ctx,                       \
                                                const unsigned char *const *in,        \
                                                const int64_t *step, unsigned char *out, \
                                                size_t n) {                            \
    (void)ctx;                                                                         \
    uint16_t ta[ACTX_BLOCK], tb[ACTX_BLOCK], h[ACTX_BLOCK];                            \
    uint32_t r[ACTX_BLOCK];                                                            \
    actx_hold_block(in[0], step[0], ta);                                               \
    actx_hold_block(in[1], step[1], tb);                                               \
    for (size_t i = 0; i < n; i += ACTX_BLOCK) {                                       \
      const size_t m = n - i < ACTX_BLOCK ? n - i : ACTX_BLOCK;                        \
      const unsigned char *pa = actx_block_src(in[0], step[0], i, m, ta);              \
      const unsigned char *pb = actx_block_src(in[1], step[1], i, m, tb);              \
      uint32_t nan = 0;                                                                \
      for (size_t j = 0; j < ACTX_BLOCK; j++) {                                        \
        const float a = actx_f32_from_bits((uint32_t)actx_ld_u16(pa + 2 * j) << 16);   \
        const float b = actx_f32_from_bits((uint32_t)actx_ld_u16(pb + 2 * j) << 16);   \
        r[j] = actx_f32_bits(op(a, b));                                                \
        nan |= actx_nan_bit(r[j]);                                                     \
      }                                                                                \
      if (nan >> 31) {                                                                 \
        for (size_t j = 0; j < ACTX_BLOCK; j++) {                                      \
          const uint32_t a = (uint32_t)actx_ld_u16(pa + 2 * j) << 16;                  \
          const uint32_t b = (uint32_t)actx_ld_u16(pb + 2 * j) << 16;                  \
          h[j] = actx_round_bits(actx_nan_pick(r[j], a, b));                           \
        }                                                                              \
      } else {                                                                         \
        for (size_t j = 0; j < ACTX_BLOCK; j++) h[j] = actx_round_number_bits(r[j]);   \
      }                                                                                \
      actx_store_block(h, out + 2 * i, m);                                             \
    }                                                                                  \
  }
BINARY_PIECE_(add, op_add)
BINARY_PIECE_(sub, op_sub)
BINARY_PIECE_(mul, op_mul)
BINARY_PIECE_(div, op_div)
BINARY_PIECE_(prelu, op_prelu)

static float pow_i64(float x, int64_t e) {
  if (e >= -(1 << 24) && e <= (1 << 24)) return powf(x, (float)e);
  const float y = powf(fabsf(x), (float)e);
  return signbit(x) && (e & 1) && !isnan(y) ? -y : y;
}

static void piece_pow(const void *ctx, const unsigned char *const *in, const int64_t *step,
                      unsigned char *out, size_t n) {
  const actx_elem elem = *(const actx_elem *)ctx;
  const size_t sa = step[0] ? 2 : 0, sb = step[1] ? actx_elem_size(elem) : 0;
  for (size_t i = 0; i < n; i++) {
    const float x = actx_ld_bf16(in[0] + sa * i);
    const unsigned char *e = in[1] + sb * i;
    if (elem == ACTX_ELEM_I64) {
      actx_st_bf16(out + 2 * i, actx_nan_rule(pow_i64(x, actx_ld_i64(e)), x, 0.0f));
    } else {
      const float y = elem == ACTX_ELEM_BF16 ? actx_ld_bf16(e) : actx_ld_f32(e);
      actx_st_bf16(out + 2 * i, actx_nan_rule(powf(x, y), x, y));
    }
  }
}

typedef struct fold_ctx {
  size_t n_in;
  bool max; /* Max, else Min */
} fold_ctx;

/* The running Max / Min of a block over the inputs in order, then rounded: a number is
 * unchanged (every operand is a widened bfloat16), a NaN made quiet. */
ACTX_BF16_VECTORISED static void piece_fold(const void *ctx, const unsigned char *const *in,
                                            const int64_t *step, unsigned char *out,
                                            size_t n) {
  const fold_ctx *f = ctx;
  uint16_t t[ACTX_BF16_MAX_INPUTS][ACTX_BLOCK], h[ACTX_BLOCK];
  uint32_t acc[ACTX_BLOCK];
  for (size_t k = 0; k < f->n_in; k++) actx_hold_block(in[k], step[k], t[k]);
  for (size_t i = 0; i < n; i += ACTX_BLOCK) {
    const size_t m = n - i < ACTX_BLOCK ? n - i : ACTX_BLOCK;
    const unsigned char *p = actx_block_src(in[0], step[0], i, m, t[0]);
    for (size_t j = 0; j < ACTX_BLOCK; j++) acc[j] = (uint32_t)actx_ld_u16(p + 2 * j) << 16;
    for (size_t k = 1; k < f->n_in; k++) {
      p = actx_block_src(in[k], step[k], i, m, t[k]);
      if (f->max)
        for (size_t j = 0; j < ACTX_BLOCK; j++)
          acc[j] = max_bits(acc[j], (uint32_t)actx_ld_u16(p + 2 * j) << 16, true);
      else
        for (size_t j = 0; j < ACTX_BLOCK; j++)
          acc[j] = max_bits(acc[j], (uint32_t)actx_ld_u16(p + 2 * j) << 16, false);
    }
    uint32_t nan = 0;
    for (size_t j = 0; j < ACTX_BLOCK; j++) nan |= actx_nan_bit(acc[j]);
    if (nan >> 31)
      for (size_t j = 0; j < ACTX_BLOCK; j++) h[j] = actx_round_bits(acc[j]);
    else
      for (size_t j = 0; j < ACTX_BLOCK; j++) h[j] = (uint16_t)(acc[j] >> 16);
    actx_store_block(h, out + 2 * i, m);
  }
}

static actx_status binary_create(const actx_bf16_node *node, void **out, const char **why) {
  switch (node->op) {
    case ACTX_BF16_OP_ADD: case ACTX_BF16_OP_SUB: case ACTX_BF16_OP_MUL: case ACTX_BF16_OP_DIV:
    case ACTX_BF16_OP_PRELU: case ACTX_BF16_OP_POW: case ACTX_BF16_OP_MAX: case ACTX_BF16_OP_MIN:
      break;
    default: return actx_bf16_fail(why, "not a binary operator");
  }
  for (size_t i = 0; i < node->n_inputs; i++) {
    if (!node->input_present[i]) return actx_bf16_fail(why, "a required input is missing");
    if (node->op == ACTX_BF16_OP_POW && i == 1) {
      const actx_elem e = node->input_elems[1];
      if (e != ACTX_ELEM_BF16 && e != ACTX_ELEM_F32 && e != ACTX_ELEM_I64)
        return actx_bf16_fail(why, "Pow's exponent must be bfloat16, float32 or int64");
    } else if (node->input_elems[i] != ACTX_ELEM_BF16) {
      return actx_bf16_fail(why, "an input is not bfloat16");
    }
  }
  binary_state *s = calloc(1, sizeof *s);
  if (s == NULL) return ACTX_ERROR_OUT_OF_MEMORY;
  s->op = node->op;
  s->n_inputs = node->n_inputs;
  s->exponent_elem = node->op == ACTX_BF16_OP_POW ? node->input_elems[1] : ACTX_ELEM_BF16;
  *out = s;
  return ACTX_OK;
}

static void binary_destroy(void *state) { free(state); }

static actx_status binary_shapes(const void *state, const actx_tensor *in, size_t n_in,
                                 actx_tensor *out, size_t n_out, const char **why) {
  const binary_state *s = state;
  if (n_in != s->n_inputs || n_out != 1)
    return actx_bf16_fail(why, "wrong number of inputs or outputs");
  actx_elem elems[ACTX_BF16_MAX_INPUTS];
  for (size_t k = 0; k < n_in; k++)
    elems[k] = k == 1 && s->op == ACTX_BF16_OP_POW ? s->exponent_elem : ACTX_ELEM_BF16;
  actx_shape shape;
  const actx_status st = actx_bf16_broadcast_inputs(in, n_in, elems, &shape, why);
  if (st != ACTX_OK) return st;
  out[0].elem = ACTX_ELEM_BF16;
  out[0].shape = shape;
  return ACTX_OK;
}

static actx_status binary_run(const void *state, const actx_tensor *in, size_t n_in,
                              actx_tensor *out, size_t n_out, const actx_parallel *par,
                              const char **why) {
  const binary_state *s = state;
  actx_tensor want;
  actx_status st = binary_shapes(state, in, n_in, &want, n_out, why);
  st = actx_bf16_check_run(st, in, n_in, &out[0], ACTX_ELEM_BF16, &want.shape, n_in, why);
  if (st != ACTX_OK) return st;
  fold_ctx fold = {n_in, s->op == ACTX_BF16_OP_MAX};
  actx_walk_piece_fn piece = NULL;
  const void *ctx = NULL;
  double ns = ACTX_WALK_NS_ARITHMETIC;
  switch (s->op) {
    case ACTX_BF16_OP_ADD: piece = piece_add; break;
    case ACTX_BF16_OP_SUB: piece = piece_sub; break;
    case ACTX_BF16_OP_MUL: piece = piece_mul; break;
    case ACTX_BF16_OP_DIV: piece = piece_div; break;
    case ACTX_BF16_OP_PRELU: piece = piece_prelu; break;
    case ACTX_BF16_OP_POW: piece = piece_pow, ctx = &s->exponent_elem, ns = ACTX_WALK_NS_POW; break;
    default: piece = piece_fold, ctx = &fold, ns = ACTX_WALK_NS_FOLD; break;
  }
  actx_walk_broadcast_run(&want.shape, in, n_in, out[0].data, 2, piece, ctx, ns, par);
  return ACTX_OK;
}

static bool binary_chain_form(const void *state, actx_bf16_chain_form *form) {
  const binary_state *s = state;
  switch (s->op) {
    case ACTX_BF16_OP_ADD: form->kind = ACTX_CHAIN_ADD; break;
    case ACTX_BF16_OP_SUB: form->kind = ACTX_CHAIN_SUB; break;
    case ACTX_BF16_OP_MUL: form->kind = ACTX_CHAIN_MUL; break;
    case ACTX_BF16_OP_DIV: form->kind = ACTX_CHAIN_DIV; break;
    case ACTX_BF16_OP_PRELU: form->kind = ACTX_CHAIN_PRELU; break;
    default: return false;
  }
  form->table = NULL;
  return true;
}

const actx_bf16_family actx_bf16_family_binary = {
    .create = binary_create,
    .pack = NULL,
    .shapes = binary_shapes,
    .run = binary_run,
    .destroy = binary_destroy,
    .chain_form = binary_chain_form,
};
