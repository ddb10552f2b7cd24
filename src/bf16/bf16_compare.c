/* The compare family: Equal, Less, Greater, LessOrEqual, GreaterOrEqual on two bfloat16 inputs
 * (numpy broadcasting), a bool per element (one byte, 0 or 1): the float32 comparison of the
 * widened values, so a NaN compares false (Equal(NaN, NaN) is 0) and -0 == +0. And Where:
 * cond (bool; any non-zero byte is true) ? X : Y, all three broadcast together, the chosen
 * element's bits copied as they are (a selection, not arithmetic: nothing is rounded). */
#include <stdlib.h>
#include <string.h>

#include "bf16_elementwise.h"

typedef struct compare_state {
  actx_bf16_op op;
} compare_state;

/* By blocks (bf16_elementwise.h): widen, compare, store the bytes. */
#define COMPARE_PIECE_(name, cmp)                                                          \
  static void piece_##name(const void *ctx, const unsigned char *const *in,                \
                           const int64_t *step, unsigned char *out, size_t n) {            \
    (void)ctx;                                                                             \
    actx_block a, b;                                                                       \
    unsigned char r[ACTX_BLOCK];                                                           \
    for (size_t i = 0; i < n; i += ACTX_BLOCK) {                                           \
      const size_t m = n - i < ACTX_BLOCK ? n - i : ACTX_BLOCK;                            \
      actx_widen_block(in[0] + 2 * (size_t)step[0] * i, step[0], m, &a);                   \
      actx_widen_block(in[1] + 2 * (size_t)step[1] * i, step[1], m, &b);                   \
      for (size_t j = 0; j < ACTX_BLOCK; j++) r[j] = (unsigned char)(a.f[j] cmp b.f[j]);   \
      memcpy(out + i, r, m);                                                               \
    }                                                                                      \
  }
COMPARE_PIECE_(equal, ==)
COMPARE_PIECE_(less, <)
COMPARE_PIECE_(greater, >)
COMPARE_PIECE_(less_or_equal, <=)
COMPARE_PIECE_(greater_or_equal, >=)
#undef COMPARE_PIECE_

static void piece_where(const void *ctx, const unsigned char *const *in, const int64_t *step,
                        unsigned char *out, size_t n) {
  (void)ctx;
  const size_t sc = step[0] ? 1 : 0, sx = step[1] ? 2 : 0, sy = step[2] ? 2 : 0;
  for (size_t i = 0; i < n; i++)
    actx_st_u16(out + 2 * i, in[0][sc * i] ? actx_ld_u16(in[1] + sx * i)
                                            : actx_ld_u16(in[2] + sy * i));
}

static actx_elem input_elem(actx_bf16_op op, size_t k) {
  return op == ACTX_BF16_OP_WHERE && k == 0 ? ACTX_ELEM_BOOL : ACTX_ELEM_BF16;
}

static actx_status compare_create(const actx_bf16_node *node, void **out, const char **why) {
  switch (node->op) {
    case ACTX_BF16_OP_EQUAL: case ACTX_BF16_OP_LESS: case ACTX_BF16_OP_GREATER:
    case ACTX_BF16_OP_LESS_OR_EQUAL: case ACTX_BF16_OP_GREATER_OR_EQUAL:
    case ACTX_BF16_OP_WHERE: break;
    default: return actx_bf16_fail(why, "not a comparison or Where");
  }
  for (size_t k = 0; k < node->n_inputs; k++)
    if (node->input_elems[k] != input_elem(node->op, k))
      return actx_bf16_fail(why, node->op == ACTX_BF16_OP_WHERE && k == 0
                                     ? "Where's condition is not bool"
                                     : "an input is not bfloat16");
  compare_state *s = calloc(1, sizeof *s);
  if (s == NULL) return ACTX_ERROR_OUT_OF_MEMORY;
  s->op = node->op;
  *out = s;
  return ACTX_OK;
}

static void compare_destroy(void *state) { free(state); }

static actx_status compare_shapes(const void *state, const actx_tensor *in, size_t n_in,
                                  actx_tensor *out, size_t n_out, const char **why) {
  const compare_state *s = state;
  const size_t arity = s->op == ACTX_BF16_OP_WHERE ? 3 : 2;
  if (n_in != arity || n_out != 1) return actx_bf16_fail(why, "wrong number of inputs or outputs");
  actx_elem elems[3];
  for (size_t k = 0; k < n_in; k++) elems[k] = input_elem(s->op, k);
  actx_shape shape;
  const actx_status st = actx_bf16_broadcast_inputs(in, n_in, elems, &shape, why);
  if (st != ACTX_OK) return st;
  out[0].elem = s->op == ACTX_BF16_OP_WHERE ? ACTX_ELEM_BF16 : ACTX_ELEM_BOOL;
  out[0].shape = shape;
  return ACTX_OK;
}

static actx_status compare_run(const void *state, const actx_tensor *in, size_t n_in,
                               actx_tensor *out, size_t n_out, const actx_parallel *par,
                               const char **why) {
  const compare_state *s = state;
  actx_tensor want;
  actx_status st = compare_shapes(state, in, n_in, &want, n_out, why);
  st = actx_bf16_check_run(st, in, n_in, &out[0], want.elem, &want.shape, n_in, why);
  if (st != ACTX_OK) return st;
  actx_walk_piece_fn piece = piece_where;
  switch (s->op) {
    case ACTX_BF16_OP_EQUAL: piece = piece_equal; break;
    case ACTX_BF16_OP_LESS: piece = piece_less; break;
    case ACTX_BF16_OP_GREATER: piece = piece_greater; break;
    case ACTX_BF16_OP_LESS_OR_EQUAL: piece = piece_less_or_equal; break;
    case ACTX_BF16_OP_GREATER_OR_EQUAL: piece = piece_greater_or_equal; break;
    default: break;
  }
  actx_walk_broadcast_run(&want.shape, in, n_in, out[0].data, actx_elem_size(want.elem), piece,
                          NULL, ACTX_WALK_NS_COMPARE, par);
  return ACTX_OK;
}

const actx_bf16_family actx_bf16_family_compare = {
    .create = compare_create,
    .pack = NULL,
    .shapes = compare_shapes,
    .run = compare_run,
    .destroy = compare_destroy,
};
