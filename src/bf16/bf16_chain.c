/* Chains (bf16.h): element-wise nodes that read one another's results, in one pass.
 *
 * The pass: the output is walked as the element-wise families walk theirs (bf16_elementwise.h),
 * with every input of more than one element a walked input (broadcast into the output's shape)
 * and every single-element input a held value. Each block of elements is widened once;
 * then every step computes its block from its operands' blocks with its own family's arithmetic
 * and rounding, and keeps the result widened again (a bfloat16 value, exactly), as the next
 * step's operand; the last step's block is stored. So each element's bits are those of its nodes
 * run one by one (bf16_binary.c's pieces, Clip's actx_clip_f32, a unary op's table); tests
 * compare the two on every kind of step. A block's inputs are all read before its output is
 * stored, so an output that is an input is exact.
 *
 * Any other run (a step's result broadcast bigger than an earlier one's, a Clip bound computed
 * by a step) runs the steps' own kernels in turn, each result in a buffer of its own. */
#include <stdlib.h>
#include <string.h>

#include "bf16_elementwise.h"

/* Slots of a block's values: walked inputs, then held inputs, then steps' results. */
#define CHAIN_MAX_HELD ACTX_BF16_CHAIN_MAX_INPUTS
#define CHAIN_MAX_SLOTS (ACTX_BF16_MAX_INPUTS + CHAIN_MAX_HELD + ACTX_BF16_CHAIN_MAX_STEPS)

typedef struct chain_step {
  const actx_bf16_kernel *kernel;
  actx_bf16_chain_form form;
  size_t n_operands;
  int operand[ACTX_BF16_MAX_INPUTS];
} chain_step;

struct actx_bf16_chain {
  size_t n_steps, n_inputs;
  double ns_per_element; /* the steps' ACTX_WALK_NS_* summed: the split rule's cost */
  chain_step steps[ACTX_BF16_CHAIN_MAX_STEPS];
};

actx_status actx_bf16_chain_create(const actx_bf16_chain_step *steps, size_t n_steps,
                                   size_t n_inputs, actx_bf16_chain **out, const char **why) {
  static const char *unused;
  if (why == NULL) why = &unused;
  *why = "";
  if (out == NULL || steps == NULL) return actx_bf16_fail(why, "NULL argument");
  *out = NULL;
  if (n_steps < 2 || n_steps > ACTX_BF16_CHAIN_MAX_STEPS)
    return actx_bf16_fail(why, "a chain has 2 to ACTX_BF16_CHAIN_MAX_STEPS steps");
  if (n_inputs > ACTX_BF16_CHAIN_MAX_INPUTS)
    return actx_bf16_fail(why, "a chain has at most ACTX_BF16_CHAIN_MAX_INPUTS inputs");
  actx_bf16_chain *c = calloc(1, sizeof *c);
  if (c == NULL) return ACTX_ERROR_OUT_OF_MEMORY;
  c->n_steps = n_steps;
  c->n_inputs = n_inputs;
  for (size_t s = 0; s < n_steps; s++) {
    chain_step *st = &c->steps[s];
    st->kernel = steps[s].kernel;
    if (!actx_bf16_kernel_chain_form(st->kernel, &st->form)) {
      free(c);
      return actx_bf16_fail(why, "a step's node cannot be part of a chain");
    }
    st->n_operands = st->form.kind == ACTX_CHAIN_CLIP ? 3 : st->form.kind == ACTX_CHAIN_TABLE ? 1
                                                                                               : 2;
    for (size_t k = 0; k < st->n_operands; k++) {
      const int op = steps[s].operand[k];
      const bool input = op >= 0 && (size_t)op < n_inputs;
      const bool earlier = op <= ACTX_BF16_CHAIN_STEP(0) && (size_t)(-2 - op) < s;
      /* Clip's bounds are optional; every other operand is required */
      const bool absent = op == ACTX_BF16_CHAIN_ABSENT && st->form.kind == ACTX_CHAIN_CLIP && k > 0;
      if (!input && !earlier && !absent) {
        free(c);
        return actx_bf16_fail(why, "a step reads neither an input nor an earlier step");
      }
      st->operand[k] = op;
    }
    c->ns_per_element += st->form.kind == ACTX_CHAIN_CLIP    ? ACTX_WALK_NS_CLIP
                         : st->form.kind == ACTX_CHAIN_TABLE ? ACTX_WALK_NS_TABLE
                                                             : ACTX_WALK_NS_ARITHMETIC;
  }
  *out = c;
  return ACTX_OK;
}

void actx_bf16_chain_destroy(actx_bf16_chain *chain) { free(chain); }

/* The operands of step s as its kernel reads them: inputs as given, earlier steps' results as
 * bfloat16 tensors of their shapes (data from results[], NULL while only shapes are asked). */
static void step_operands(const actx_bf16_chain *c, size_t s, const actx_tensor *in,
                          const actx_tensor *results, actx_tensor *ops) {
  const chain_step *st = &c->steps[s];
  for (size_t k = 0; k < st->n_operands; k++) {
    const int op = st->operand[k];
    ops[k] = op >= 0 ? in[op] : op == ACTX_BF16_CHAIN_ABSENT ? ACTX_TENSOR_ABSENT
                                                             : results[-2 - op];
  }
}

/* Every step's result shape into results[s] (elem and shape; data NULL). */
static actx_status step_shapes(const actx_bf16_chain *c, const actx_tensor *in, size_t n_in,
                               actx_tensor *results, const char **why) {
  if (c == NULL || (n_in > 0 && in == NULL)) return actx_bf16_fail(why, "NULL argument");
  if (n_in != c->n_inputs) return actx_bf16_fail(why, "wrong number of inputs");
  for (size_t s = 0; s < c->n_steps; s++) {
    actx_tensor ops[ACTX_BF16_MAX_INPUTS];
    step_operands(c, s, in, results, ops);
    const actx_status st =
        actx_bf16_kernel_shapes(c->steps[s].kernel, ops, c->steps[s].n_operands, &results[s], 1,
                                why);
    if (st != ACTX_OK) return st;
    results[s].data = NULL;
  }
  return ACTX_OK;
}

actx_status actx_bf16_chain_shape(const actx_bf16_chain *c, const actx_tensor *in, size_t n_in,
                                  actx_shape *out, const char **why) {
  static const char *unused;
  if (why == NULL) why = &unused;
  *why = "";
  if (out == NULL) return actx_bf16_fail(why, "NULL argument");
  actx_tensor results[ACTX_BF16_CHAIN_MAX_STEPS];
  const actx_status st = step_shapes(c, in, n_in, results, why);
  if (st == ACTX_OK) *out = results[c->n_steps - 1].shape;
  return st;
}

/* ---- the one pass ------------------------------------------------------------------------- */

typedef struct pass_step {
  actx_bf16_chain_kind kind;
  const uint16_t *table;
  uint8_t a, b;   /* operand slots (b: binary ops only) */
  float lo, hi;   /* Clip's bounds */
} pass_step;

typedef struct pass {
  size_t n_walked, n_held, n_steps;
  pass_step steps[ACTX_BF16_CHAIN_MAX_STEPS];
  uint32_t held[CHAIN_MAX_HELD]; /* widened */
} pass;

/* A chain's block: longer than the families' ACTX_BLOCK, since every step ends in a check of
 * its whole block for a NaN (a reduction across lanes) that a short block pays per few
 * elements; 256 elements of the values a chain of 8 steps keeps fit in L1 with room. Where a
 * block has a NaN or not decides only whether the NaN rule's rounding runs after the one of
 * numbers (they agree on every number), so the bits do not depend on the block's length. */
#define CHAIN_BLOCK 256

/* The steps are inlined into chain_piece, so each is built for every ISA it is. */
#define CHAIN_INLINE static inline __attribute__((always_inline))

/* A binary step on widened operands a and b into r: bf16_binary.c's piece, kept widened. One
 * loop computes and rounds as a number; a block that turns out to hold a NaN is rounded again
 * with the NaN rule (the two roundings agree on every number). */
CHAIN_INLINE void pass_binary(actx_bf16_chain_kind kind, const uint32_t *a, const uint32_t *b,
                              uint32_t *r) {
  uint32_t nan = 0;
  switch (kind) {
#define CHAIN_OP_(k, expr)                                                           \
  case k:                                                                            \
    for (size_t j = 0; j < CHAIN_BLOCK; j++) {                                       \
      const float x = actx_f32_from_bits(a[j]), y = actx_f32_from_bits(b[j]);        \
      const uint32_t v = actx_f32_bits(expr);                                        \
      nan |= actx_nan_bit(v);                                                        \
      r[j] = (uint32_t)actx_round_number_bits(v) << 16;                              \
    }                                                                                \
    if (nan >> 31)                                                                   \
      for (size_t j = 0; j < CHAIN_BLOCK; j++) {                                     \
        const float x = actx_f32_from_bits(a[j]), y = actx_f32_from_bits(b[j]);      \
        r[j] = (uint32_t)actx_round_bits(actx_nan_pick(actx_f32_bits(expr), a[j], b[j])) \
               << 16;                                                                \
      }                                                                              \
    break;
    CHAIN_OP_(ACTX_CHAIN_ADD, x + y)
    CHAIN_OP_(ACTX_CHAIN_SUB, x - y)
    CHAIN_OP_(ACTX_CHAIN_MUL, x * y)
    CHAIN_OP_(ACTX_CHAIN_PRELU, x < 0.0f ? y * x : x)
    default: CHAIN_OP_(ACTX_CHAIN_DIV, x / y)
#undef CHAIN_OP_
  }
}

/* Clip: the unary family's clip_piece, kept widened (its result is x, lo or hi: a NaN is x's). */
CHAIN_INLINE void pass_clip(const uint32_t *a, float lo, float hi, uint32_t *r) {
  uint32_t nan = 0;
  for (size_t j = 0; j < CHAIN_BLOCK; j++) {
    const uint32_t v = actx_f32_bits(actx_clip_f32(actx_f32_from_bits(a[j]), lo, hi));
    nan |= actx_nan_bit(v);
    r[j] = (uint32_t)actx_round_number_bits(v) << 16;
  }
  if (nan >> 31)
    for (size_t j = 0; j < CHAIN_BLOCK; j++)
      r[j] = (uint32_t)actx_round_bits(actx_f32_bits(actx_clip_f32(actx_f32_from_bits(a[j]), lo,
                                                                   hi)))
             << 16;
}

/* A walked input's block widened: m <= CHAIN_BLOCK elements at p (step 1), zero-padded, or the
 * one at p (step 0). */
CHAIN_INLINE void pass_widen(const unsigned char *p, int64_t step, size_t m, uint32_t *r) {
  if (step == 0) {
    const uint32_t v = (uint32_t)actx_ld_u16(p) << 16;
    for (size_t j = 0; j < CHAIN_BLOCK; j++) r[j] = v;
  } else if (m == CHAIN_BLOCK) {
    for (size_t j = 0; j < CHAIN_BLOCK; j++) r[j] = (uint32_t)actx_ld_u16(p + 2 * j) << 16;
  } else {
    for (size_t j = 0; j < CHAIN_BLOCK; j++)
      r[j] = j < m ? (uint32_t)actx_ld_u16(p + 2 * j) << 16 : 0;
  }
}

ACTX_BF16_VECTORISED static void chain_piece(const void *ctx, const unsigned char *const *in,
                                             const int64_t *step, unsigned char *out, size_t n) {
  const pass *p = ctx;
  uint32_t values[ACTX_BF16_MAX_INPUTS + CHAIN_MAX_HELD + ACTX_BF16_CHAIN_MAX_STEPS]
                 [CHAIN_BLOCK];
  uint32_t *slot[CHAIN_MAX_SLOTS];
  for (size_t k = 0; k < CHAIN_MAX_SLOTS; k++) slot[k] = values[k];
  /* held inputs: their one value over a whole block, once a piece */
  for (size_t h = 0; h < p->n_held; h++)
    for (size_t j = 0; j < CHAIN_BLOCK; j++) slot[p->n_walked + h][j] = p->held[h];
  const size_t first_step = p->n_walked + p->n_held;
  uint16_t h[CHAIN_BLOCK];
  for (size_t i = 0; i < n; i += CHAIN_BLOCK) {
    const size_t m = n - i < CHAIN_BLOCK ? n - i : CHAIN_BLOCK;
    for (size_t k = 0; k < p->n_walked; k++)
      pass_widen(in[k] + (step[k] ? 2 * i : 0), step[k], m, slot[k]);
    for (size_t s = 0; s < p->n_steps; s++) {
      const pass_step *ps = &p->steps[s];
      uint32_t *r = slot[first_step + s];
      const uint32_t *a = slot[ps->a];
      switch (ps->kind) {
        case ACTX_CHAIN_CLIP: pass_clip(a, ps->lo, ps->hi, r); break;
        case ACTX_CHAIN_TABLE:
          for (size_t j = 0; j < CHAIN_BLOCK; j++) r[j] = (uint32_t)ps->table[a[j] >> 16] << 16;
          break;
        default: pass_binary(ps->kind, a, slot[ps->b], r); break;
      }
    }
    const uint32_t *y = slot[first_step + p->n_steps - 1];
    for (size_t j = 0; j < CHAIN_BLOCK; j++) h[j] = (uint16_t)(y[j] >> 16);
    memcpy(out + 2 * i, h, 2 * m);
  }
}

/* The pass for these inputs, when the run is one (the file comment); false otherwise. The walked
 * inputs' tensors go to walked[]. */
static bool plan_pass(const actx_bf16_chain *c, const actx_tensor *in,
                      const actx_tensor *results, pass *p, actx_tensor *walked) {
  const actx_shape *shape = &results[c->n_steps - 1].shape;
  int slot_of[ACTX_BF16_CHAIN_MAX_INPUTS];
  for (size_t k = 0; k < c->n_inputs; k++) slot_of[k] = -1;
  p->n_walked = p->n_held = 0;
  p->n_steps = c->n_steps;
  /* walked inputs take the first slots, so count them first */
  for (int pass_no = 0; pass_no < 2; pass_no++) {
    for (size_t s = 0; s < c->n_steps; s++) {
      const chain_step *st = &c->steps[s];
      /* the operands read per element: all but Clip's bounds */
      const size_t n_data = st->form.kind == ACTX_CHAIN_CLIP ? 1 : st->n_operands;
      for (size_t k = 0; k < n_data; k++) {
        const int op = st->operand[k];
        if (op < 0 || slot_of[op] >= 0) continue;
        const bool held = actx_shape_elements(&in[op].shape) == 1;
        if (held != (pass_no == 1)) continue;
        if (held) {
          if (p->n_held == CHAIN_MAX_HELD) return false;
          slot_of[op] = (int)(ACTX_BF16_MAX_INPUTS + p->n_held++);
        } else {
          if (p->n_walked == ACTX_BF16_MAX_INPUTS) return false;
          walked[p->n_walked] = in[op];
          slot_of[op] = (int)p->n_walked++;
        }
      }
    }
  }
  /* held slots were numbered from ACTX_BF16_MAX_INPUTS: renumber after the walked ones */
  for (size_t k = 0; k < c->n_inputs; k++)
    if (slot_of[k] >= ACTX_BF16_MAX_INPUTS) {
      const size_t h = (size_t)slot_of[k] - ACTX_BF16_MAX_INPUTS;
      p->held[h] = (uint32_t)actx_ld_u16(in[k].data) << 16;
      slot_of[k] = (int)(p->n_walked + h);
    }
  const size_t first_step = p->n_walked + p->n_held;
  for (size_t s = 0; s < c->n_steps; s++) {
    const chain_step *st = &c->steps[s];
    if (!actx_shape_equal(&results[s].shape, shape)) return false;
    pass_step *ps = &p->steps[s];
    ps->kind = st->form.kind;
    ps->table = st->form.table;
    int slots[3] = {0, 0, 0};
    for (size_t k = 0; k < st->n_operands; k++) {
      const int op = st->operand[k];
      if (st->form.kind == ACTX_CHAIN_CLIP && k > 0) continue; /* bounds: below */
      slots[k] = op >= 0 ? slot_of[op] : (int)first_step + (-2 - op);
    }
    ps->a = (uint8_t)slots[0];
    ps->b = (uint8_t)slots[1];
    if (st->form.kind == ACTX_CHAIN_CLIP) {
      /* bounds: inputs of one element (Clip's _shapes checked), or absent */
      const int lo = st->operand[1], hi = st->operand[2];
      if (lo < ACTX_BF16_CHAIN_ABSENT || hi < ACTX_BF16_CHAIN_ABSENT) return false;
      ps->lo = actx_bf16_to_f32(lo >= 0 ? actx_ld_u16(in[lo].data) : ACTX_BF16_LOWEST);
      ps->hi = actx_bf16_to_f32(hi >= 0 ? actx_ld_u16(in[hi].data) : ACTX_BF16_MAX_FINITE);
    }
  }
  return true;
}

/* The steps' kernels in turn: each result but the last in a buffer of its own. */
static actx_status run_steps(const actx_bf16_chain *c, const actx_tensor *in,
                             actx_tensor *results, actx_tensor *out, const actx_parallel *par,
                             const char **why) {
  actx_status st = ACTX_OK;
  size_t s = 0;
  for (; s < c->n_steps && st == ACTX_OK; s++) {
    const bool last = s + 1 == c->n_steps;
    if (!last) {
      const int64_t n = actx_shape_elements(&results[s].shape);
      results[s].data = malloc(n > 0 ? 2 * (size_t)n : 1);
      if (results[s].data == NULL) {
        st = ACTX_ERROR_OUT_OF_MEMORY;
        break;
      }
    }
    actx_tensor ops[ACTX_BF16_MAX_INPUTS];
    step_operands(c, s, in, results, ops);
    st = actx_bf16_kernel_run(c->steps[s].kernel, ops, c->steps[s].n_operands,
                              last ? out : &results[s], 1, par, why);
  }
  for (size_t k = 0; k + 1 < c->n_steps && k < s; k++) free(results[k].data);
  return st;
}

actx_status actx_bf16_chain_run(const actx_bf16_chain *c, const actx_tensor *in, size_t n_in,
                                actx_tensor *out, const actx_parallel *par, const char **why) {
  static const char *unused;
  if (why == NULL) why = &unused;
  *why = "";
  if (out == NULL) return actx_bf16_fail(why, "NULL argument");
  actx_tensor results[ACTX_BF16_CHAIN_MAX_STEPS];
  actx_status st = step_shapes(c, in, n_in, results, why);
  const actx_shape *shape = &results[c != NULL ? c->n_steps - 1 : 0].shape;
  st = actx_bf16_check_run(st, in, n_in, out, ACTX_ELEM_BF16, shape, n_in, why);
  if (st != ACTX_OK) return st;
  pass *p = malloc(sizeof *p);
  if (p == NULL) return ACTX_ERROR_OUT_OF_MEMORY;
  actx_tensor walked[ACTX_BF16_MAX_INPUTS];
  if (plan_pass(c, in, results, p, walked)) {
    actx_walk_broadcast_run(shape, walked, p->n_walked, out->data, 2, chain_piece, p,
                            c->ns_per_element, par);
  } else {
    st = run_steps(c, in, results, out, par, why);
  }
  free(p);
  return st;
}
