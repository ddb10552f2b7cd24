/* Chains (bf16_chain.c) against their definition: the same steps' kernels run one by one, each
 * result in its own buffer (the kernels are checked against references of their own in the
 * family tests). Bit for bit, over every kind of step (Add, Sub, Mul, Div with a step or an
 * input on either side, Clip with bounds present, absent, NaN or crossed, every table op),
 * inputs broadcast (scalar, per channel, row, full), edge values (NaN, Inf, -0, subnormals,
 * the largest finite), a DAG that reads one result twice (HardSwish written out), the chains
 * that fall back to one kernel at a time, splits over threads, misaligned and in-place data,
 * empty tensors; and what is refused. */
#include "elementwise_test.h"

static const uint16_t edges[] = {0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC1, 0x7F81,
                                 0x7F7F, 0xFF7F, 0x0001, 0x8001, 0x007F, 0x0080, 0x3F80,
                                 0xBF80, 0x4040, 0x40C0, 0xC040, 0x4B80, 0x0100};
#define N_EDGES (sizeof edges / sizeof edges[0])

/* Edge values first, then random bits, a third of them small numbers (where Clip and the
 * HardSwish steps do something); a single value is a small number. */
static void fill(uint16_t *v, int64_t n) {
  if (n == 1) {
    v[0] = bf(rng_uniform(-8.0f, 8.0f));
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    const uint32_t r = rng_u32();
    v[i] = (size_t)i < N_EDGES ? edges[(size_t)i]
           : r % 3 == 0        ? bf(rng_uniform(-8.0f, 8.0f))
                               : (uint16_t)r;
  }
}

/* A kernel of op with n_in inputs, those with absent[i] left out; alpha set when not 0. */
static actx_bf16_kernel *op_kernel(actx_bf16_op op, size_t n_in, unsigned absent, float alpha) {
  actx_elem elems[ACTX_BF16_MAX_INPUTS];
  for (size_t i = 0; i < n_in; i++) elems[i] = absent >> i & 1 ? ACTX_ELEM_COUNT : ACTX_ELEM_BF16;
  actx_bf16_node n = node_make(op, since_of(op), n_in, elems, 1);
  if (alpha != 0.0f) {
    n.attrs.has_alpha = true;
    n.attrs.alpha = alpha;
  }
  return make_kernel(&n);
}

#define MAX_IN 12
#define IN(k) (k)
#define STEP(k) ACTX_BF16_CHAIN_STEP(k)
#define NONE ACTX_BF16_CHAIN_ABSENT

typedef struct chain_case {
  const char *name;
  size_t n_steps, n_in;
  size_t arity[ACTX_BF16_CHAIN_MAX_STEPS];
  actx_bf16_chain_step steps[ACTX_BF16_CHAIN_MAX_STEPS];
  actx_shape shapes[MAX_IN];
  uint16_t fixed[MAX_IN]; /* a one-element input's value where not 0 */
} chain_case;

static void step1(chain_case *c, actx_bf16_kernel *k, int a) {
  c->arity[c->n_steps] = 1;
  c->steps[c->n_steps++] = (actx_bf16_chain_step){.kernel = k, .operand = {a}};
}
static void step2(chain_case *c, actx_bf16_op op, int a, int b) {
  c->arity[c->n_steps] = 2;
  c->steps[c->n_steps++] =
      (actx_bf16_chain_step){.kernel = op_kernel(op, 2, 0, 0.0f), .operand = {a, b}};
}
static void step_clip(chain_case *c, int x, int lo, int hi) {
  const unsigned absent = (lo == NONE ? 2u : 0u) | (hi == NONE ? 4u : 0u);
  c->arity[c->n_steps] = 3;
  c->steps[c->n_steps++] = (actx_bf16_chain_step){
      .kernel = op_kernel(ACTX_BF16_OP_CLIP, 3, absent, 0.0f), .operand = {x, lo, hi}};
}

static void case_free(chain_case *c) {
  for (size_t s = 0; s < c->n_steps; s++)
    actx_bf16_kernel_destroy((actx_bf16_kernel *)c->steps[s].kernel);
  c->n_steps = 0;
}

/* The definition: each step's kernel in turn; *out owns its data. */
static actx_status reference(const chain_case *c, const actx_tensor *in, actx_tensor *out) {
  actx_tensor results[ACTX_BF16_CHAIN_MAX_STEPS];
  const char *why = NULL;
  actx_status st = ACTX_OK;
  size_t s = 0;
  for (; s < c->n_steps && st == ACTX_OK; s++) {
    actx_tensor ops[3];
    for (size_t k = 0; k < c->arity[s]; k++) {
      const int op = c->steps[s].operand[k];
      ops[k] = op >= 0 ? in[op] : op == NONE ? ACTX_TENSOR_ABSENT : results[-2 - op];
    }
    results[s] = ACTX_TENSOR_ABSENT;
    st = actx_bf16_kernel_shapes(c->steps[s].kernel, ops, c->arity[s], &results[s], 1, &why);
    if (st != ACTX_OK) break;
    const int64_t n = actx_shape_elements(&results[s].shape);
    results[s].data = calloc((size_t)(n > 0 ? n : 1), 2);
    st = actx_bf16_kernel_run(c->steps[s].kernel, ops, c->arity[s], &results[s], 1, NULL, &why);
  }
  for (size_t k = 0; k < s && k < c->n_steps; k++)
    if (st != ACTX_OK || k + 1 < c->n_steps) free(results[k].data);
  if (st == ACTX_OK) *out = results[c->n_steps - 1];
  return st;
}

/* Runs the case's chain on random inputs (edges first) and compares it with the definition:
 * on one thread and split over test_par, output at offset 0 and 1 byte (misaligned), inputs
 * misaligned with odd. */
static void check_case(chain_case *c, bool odd) {
  actx_bf16_chain *chain = NULL;
  const char *why = NULL;
  actx_status st = actx_bf16_chain_create(c->steps, c->n_steps, c->n_in, &chain, &why);
  CHECK(st == ACTX_OK);
  if (st != ACTX_OK) {
    fprintf(stderr, "  %s: create: %s\n", c->name, why);
    case_free(c);
    return;
  }
  actx_tensor in[MAX_IN];
  unsigned char *blocks[MAX_IN];
  for (size_t k = 0; k < c->n_in; k++) {
    const int64_t n = actx_shape_elements(&c->shapes[k]);
    blocks[k] = malloc(2 * (size_t)(n > 0 ? n : 1) + 1);
    uint16_t *v = malloc(2 * (size_t)(n > 0 ? n : 1));
    fill(v, n);
    if (n == 1 && c->fixed[k] != 0) v[0] = c->fixed[k];
    memcpy(blocks[k] + odd, v, 2 * (size_t)n);
    free(v);
    in[k] = tensor_bf16(c->shapes[k], n > 0 ? (uint16_t *)(void *)(blocks[k] + odd) : NULL);
  }
  actx_tensor want = ACTX_TENSOR_ABSENT;
  st = reference(c, in, &want);
  CHECK(st == ACTX_OK);
  actx_shape shape;
  CHECK(actx_bf16_chain_shape(chain, in, c->n_in, &shape, &why) == ACTX_OK);
  CHECK(st != ACTX_OK || shape_equal(&shape, &want.shape));
  const int64_t n = actx_shape_elements(&shape);
  for (int run = 0; run < 4 && st == ACTX_OK; run++) {
    const size_t offset = (size_t)run & 1;
    const actx_parallel *par = run < 2 ? NULL : &test_par;
    unsigned char *block = calloc(1, 2 * (size_t)(n > 0 ? n : 1) + 2);
    actx_tensor out = tensor_bf16(shape, (uint16_t *)(void *)(block + offset));
    const actx_status rs = actx_bf16_chain_run(chain, in, c->n_in, &out, par, &why);
    CHECK(rs == ACTX_OK);
    if (rs != ACTX_OK) fprintf(stderr, "  %s: run: %s\n", c->name, why);
    int64_t bad = 0;
    for (int64_t i = 0; rs == ACTX_OK && i < n; i++) {
      uint16_t got;
      memcpy(&got, block + offset + 2 * i, 2);
      const uint16_t ref = ((const uint16_t *)want.data)[i];
      if (got != ref && bad++ < 3)
        fprintf(stderr, "  %s: element %lld: chain 0x%04x, nodes one by one 0x%04x\n", c->name,
                (long long)i, got, ref);
    }
    CHECK(bad == 0);
    values_compared += n;
    cases++;
    free(block);
  }
  /* in place: the output in the buffer of input 0 when that has the output's shape */
  if (st == ACTX_OK && shape_equal(&in[0].shape, &shape) && n > 0) {
    const actx_status rs = actx_bf16_chain_run(chain, in, c->n_in, &in[0], NULL, &why);
    CHECK(rs == ACTX_OK && memcmp(in[0].data, want.data, 2 * (size_t)n) == 0);
    cases++;
  }
  if (st == ACTX_OK) free(want.data);
  for (size_t k = 0; k < c->n_in; k++) free(blocks[k]);
  actx_bf16_chain_destroy(chain);
  case_free(c);
}

static actx_shape dims4(int64_t a, int64_t b, int64_t c, int64_t d) {
  const int64_t dims[4] = {a, b, c, d};
  return shape_of(4, dims);
}
static actx_shape dims1(int64_t a) { return shape_of(1, &a); }

/* PP-LCNet's block between two convolutions: a learnt scale and shift, HardSwish written out
 * (x · Clip(x + 3, 0, 6) / 6, reading x twice), another scale and shift. x has shape s. */
static void check_lcnet(actx_shape s, bool odd) {
  chain_case c = {.name = "lcnet", .n_in = 9,
                  .fixed = {0, 0, 0, 0x4040, 0x8000, 0x40C0, 0x40C0}}; /* 3, -0, 6, 6 */
  c.shapes[0] = s;
  for (size_t k = 1; k < 9; k++) c.shapes[k] = dims1(1);
  step2(&c, ACTX_BF16_OP_MUL, IN(1), IN(0));       /* w · x */
  step2(&c, ACTX_BF16_OP_ADD, STEP(0), IN(2));     /* + b */
  step2(&c, ACTX_BF16_OP_ADD, STEP(1), IN(3));     /* + 3 */
  step_clip(&c, STEP(2), IN(4), IN(5));            /* Clip(0, 6) */
  step2(&c, ACTX_BF16_OP_MUL, STEP(1), STEP(3));   /* x · clip */
  step2(&c, ACTX_BF16_OP_DIV, STEP(4), IN(6));     /* / 6 */
  step2(&c, ACTX_BF16_OP_MUL, IN(7), STEP(5));
  step2(&c, ACTX_BF16_OP_ADD, STEP(6), IN(8));
  check_case(&c, odd);
}

/* Each binary op with its operands in each arrangement, the other input of shape other. */
static void check_binary_kinds(actx_shape x, actx_shape other) {
  static const actx_bf16_op ops[] = {ACTX_BF16_OP_ADD, ACTX_BF16_OP_SUB, ACTX_BF16_OP_MUL,
                                     ACTX_BF16_OP_DIV, ACTX_BF16_OP_PRELU};
  for (size_t o = 0; o < 5; o++)
    for (int arrangement = 0; arrangement < 3; arrangement++) {
      chain_case c = {.name = "binary", .n_in = 2, .shapes = {x, other}};
      step2(&c, ACTX_BF16_OP_ADD, IN(0), IN(1));
      if (arrangement == 0) step2(&c, ops[o], STEP(0), IN(1));
      if (arrangement == 1) step2(&c, ops[o], IN(0), STEP(0));
      if (arrangement == 2) step2(&c, ops[o], STEP(0), STEP(0));
      check_case(&c, o & 1);
    }
}

/* Every table op after a Sub (so its input is a rounded result), with an alpha where it has
 * one. */
static void check_table_kinds(void) {
  static const actx_bf16_op ops[] = {
      ACTX_BF16_OP_RELU, ACTX_BF16_OP_LEAKY_RELU, ACTX_BF16_OP_HARD_SIGMOID,
      ACTX_BF16_OP_HARD_SWISH, ACTX_BF16_OP_SQRT, ACTX_BF16_OP_RECIPROCAL, ACTX_BF16_OP_NEG,
      ACTX_BF16_OP_ABS, ACTX_BF16_OP_EXP, ACTX_BF16_OP_LOG, ACTX_BF16_OP_FLOOR, ACTX_BF16_OP_CEIL,
      ACTX_BF16_OP_ELU, ACTX_BF16_OP_THRESHOLDED_RELU, ACTX_BF16_OP_SOFTPLUS,
      ACTX_BF16_OP_SOFTSIGN, ACTX_BF16_OP_ROUND, ACTX_BF16_OP_SIN, ACTX_BF16_OP_COS,
      ACTX_BF16_OP_TAN, ACTX_BF16_OP_ATAN};
  for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
    chain_case c = {.name = actx_bf16_op_info_get(ops[o])->name, .n_in = 2,
                    .shapes = {dims4(2, 3, 5, 37), dims4(1, 3, 1, 1)}};
    step2(&c, ACTX_BF16_OP_SUB, IN(0), IN(1));
    const bool alpha = ops[o] == ACTX_BF16_OP_LEAKY_RELU || ops[o] == ACTX_BF16_OP_ELU ||
                       ops[o] == ACTX_BF16_OP_THRESHOLDED_RELU;
    step1(&c, op_kernel(ops[o], 1, 0, alpha ? 0.3f : 0.0f), STEP(0));
    step1(&c, op_kernel(ACTX_BF16_OP_NEG, 1, 0, 0.0f), STEP(1));
    check_case(&c, o & 1);
  }
}

/* Clip's bounds: both, one, none; and bound values NaN, crossed (lo > hi), infinite. */
static void check_clip_kinds(void) {
  for (int form = 0; form < 4; form++) {
    chain_case c = {.name = "clip", .n_in = 3,
                    .shapes = {dims4(1, 4, 9, 33), dims1(1), shape_of(0, NULL)}};
    step2(&c, ACTX_BF16_OP_MUL, IN(0), IN(0));
    step_clip(&c, STEP(0), form & 1 ? NONE : IN(1), form & 2 ? NONE : IN(2));
    check_case(&c, form & 1);
  }
  /* bound values: the fill puts edges first, so a one-element bound is 0; set them here */
  static const uint16_t bounds[][2] = {{0x7FC0, 0x40C0}, {0x40C0, 0x0000}, {0xFF80, 0x7F80},
                                       {0x8000, 0x0000}};
  for (size_t b = 0; b < 4; b++) {
    actx_bf16_chain_step steps[2];
    actx_bf16_kernel *add = op_kernel(ACTX_BF16_OP_ADD, 2, 0, 0.0f);
    actx_bf16_kernel *clip = op_kernel(ACTX_BF16_OP_CLIP, 3, 0, 0.0f);
    steps[0] = (actx_bf16_chain_step){.kernel = add, .operand = {0, 0}};
    steps[1] = (actx_bf16_chain_step){.kernel = clip, .operand = {STEP(0), 1, 2}};
    actx_bf16_chain *chain = NULL;
    CHECK(actx_bf16_chain_create(steps, 2, 3, &chain, NULL) == ACTX_OK);
    uint16_t x[200], lo = bounds[b][0], hi = bounds[b][1], got[200], sum[200], want[200];
    fill(x, 200);
    actx_tensor in[3] = {tensor_bf16(dims1(200), x), tensor_bf16(dims1(1), &lo),
                         tensor_bf16(dims1(1), &hi)};
    actx_tensor out = tensor_bf16(dims1(200), got), t = tensor_bf16(dims1(200), sum);
    actx_tensor w = tensor_bf16(dims1(200), want);
    actx_tensor add_in[2] = {in[0], in[0]}, clip_in[3] = {t, in[1], in[2]};
    CHECK(actx_bf16_kernel_run(add, add_in, 2, &t, 1, NULL, NULL) == ACTX_OK);
    CHECK(actx_bf16_kernel_run(clip, clip_in, 3, &w, 1, NULL, NULL) == ACTX_OK);
    CHECK(actx_bf16_chain_run(chain, in, 3, &out, NULL, NULL) == ACTX_OK);
    CHECK(memcmp(got, want, sizeof got) == 0);
    values_compared += 200;
    cases++;
    actx_bf16_chain_destroy(chain);
    actx_bf16_kernel_destroy(add);
    actx_bf16_kernel_destroy(clip);
  }
}

/* Runs that are not one pass: a result broadcast bigger than an earlier one's, a Clip bound
 * made by a step. Still the definition's bits. */
static void check_fallbacks(void) {
  chain_case grow = {.name = "grow", .n_in = 2, .shapes = {dims4(1, 3, 7, 1), dims4(1, 1, 1, 40)}};
  step1(&grow, op_kernel(ACTX_BF16_OP_RELU, 1, 0, 0.0f), IN(0));
  step2(&grow, ACTX_BF16_OP_MUL, STEP(0), IN(1));
  step2(&grow, ACTX_BF16_OP_ADD, STEP(1), IN(0));
  check_case(&grow, true);
  chain_case bound = {.name = "bound", .n_in = 2, .shapes = {dims4(1, 3, 7, 20), dims1(1)}};
  step1(&bound, op_kernel(ACTX_BF16_OP_NEG, 1, 0, 0.0f), IN(1));
  step_clip(&bound, IN(0), STEP(0), IN(1));
  check_case(&bound, false);
}

/* What is refused, and how. */
static void check_refusals(void) {
  actx_bf16_kernel *add = op_kernel(ACTX_BF16_OP_ADD, 2, 0, 0.0f);
  actx_elem three[3] = {ACTX_ELEM_BF16, ACTX_ELEM_BF16, ACTX_ELEM_BF16};
  const actx_bf16_node max3 = node_make(ACTX_BF16_OP_MAX, since_of(ACTX_BF16_OP_MAX), 3, three, 1);
  actx_bf16_kernel *max = make_kernel(&max3);
  actx_elem one[1] = {ACTX_ELEM_BF16};
  actx_bf16_node sm = node_make(ACTX_BF16_OP_SOFTMAX, 13, 1, one, 1);
  actx_bf16_kernel *softmax = make_kernel(&sm);
  CHECK(actx_bf16_kernel_chains(add));
  CHECK(!actx_bf16_kernel_chains(max));
  CHECK(!actx_bf16_kernel_chains(softmax));
  CHECK(!actx_bf16_kernel_chains(NULL));
  actx_bf16_chain *chain = NULL;
  const char *why = NULL;
  actx_bf16_chain_step steps[ACTX_BF16_CHAIN_MAX_STEPS + 1];
  for (size_t s = 0; s <= ACTX_BF16_CHAIN_MAX_STEPS; s++)
    steps[s] = (actx_bf16_chain_step){.kernel = add, .operand = {0, 1}};
  struct {
    size_t n_steps, n_in;
    int a1, b1;
    const actx_bf16_kernel *k1;
    const char *want;
  } bad[] = {
      {1, 2, 0, 1, NULL, "2 to"},
      {ACTX_BF16_CHAIN_MAX_STEPS + 1, 2, 0, 1, NULL, "2 to"},
      {2, ACTX_BF16_CHAIN_MAX_INPUTS + 1, 0, 1, NULL, "at most"},
      {2, 2, STEP(1), 1, NULL, "earlier step"},  /* reads itself */
      {2, 2, 0, 2, NULL, "earlier step"},        /* input 2 of 2 */
      {2, 2, 0, NONE, NULL, "earlier step"},     /* Add's operand left out */
      {2, 2, 0, 1, NULL, "cannot be part"},      /* k1: Max of 3 */
      {2, 2, 0, 1, NULL, "cannot be part"},      /* k1: Softmax */
  };
  bad[6].k1 = max;
  bad[7].k1 = softmax;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    steps[1].operand[0] = bad[i].a1;
    steps[1].operand[1] = bad[i].b1;
    steps[1].kernel = bad[i].k1 != NULL ? bad[i].k1 : add;
    const actx_status st = actx_bf16_chain_create(steps, bad[i].n_steps, bad[i].n_in, &chain,
                                                  &why);
    CHECK(st == ACTX_ERROR_INVALID_ARGUMENT && chain == NULL && strstr(why, bad[i].want));
    if (st != ACTX_ERROR_INVALID_ARGUMENT || strstr(why, bad[i].want) == NULL)
      fprintf(stderr, "  refusal %zu: status %d '%s'\n", i, (int)st, why);
    cases++;
  }
  CHECK(actx_bf16_chain_create(NULL, 2, 2, &chain, &why) == ACTX_ERROR_INVALID_ARGUMENT);
  /* runs: inputs that do not broadcast, a wrong count, a float32 input, data missing, an
   * output of another shape or overlapping an input it is not */
  steps[1] = (actx_bf16_chain_step){.kernel = add, .operand = {STEP(0), 1}};
  CHECK(actx_bf16_chain_create(steps, 2, 2, &chain, &why) == ACTX_OK);
  uint16_t a[12] = {0}, b[12] = {0}, y[12];
  float f[12] = {0};
  actx_tensor in[2] = {tensor_bf16(dims1(12), a), tensor_bf16(dims1(5), b)};
  actx_tensor out = tensor_bf16(dims1(12), y);
  CHECK(actx_bf16_chain_run(chain, in, 2, &out, NULL, &why) == ACTX_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(why, "broadcast") != NULL);
  in[1] = tensor_bf16(dims1(12), b);
  CHECK(actx_bf16_chain_run(chain, in, 1, &out, NULL, &why) == ACTX_ERROR_INVALID_ARGUMENT);
  in[1].elem = ACTX_ELEM_F32;
  in[1].data = f;
  CHECK(actx_bf16_chain_run(chain, in, 2, &out, NULL, &why) == ACTX_ERROR_INVALID_ARGUMENT);
  in[1] = tensor_bf16(dims1(12), NULL);
  CHECK(actx_bf16_chain_run(chain, in, 2, &out, NULL, &why) == ACTX_ERROR_INVALID_ARGUMENT);
  in[1] = tensor_bf16(dims1(12), b);
  out.shape = dims1(11);
  CHECK(actx_bf16_chain_run(chain, in, 2, &out, NULL, &why) == ACTX_ERROR_INVALID_ARGUMENT);
  out = tensor_bf16(dims1(12), a + 1);
  CHECK(actx_bf16_chain_run(chain, in, 2, &out, NULL, &why) == ACTX_ERROR_INVALID_ARGUMENT);
  CHECK(actx_bf16_chain_run(chain, in, 2, NULL, NULL, &why) == ACTX_ERROR_INVALID_ARGUMENT);
  CHECK(actx_bf16_chain_run(NULL, in, 2, &out, NULL, NULL) == ACTX_ERROR_INVALID_ARGUMENT);
  cases += 8;
  actx_bf16_chain_destroy(chain);
  actx_bf16_chain_destroy(NULL);
  actx_bf16_kernel_destroy(add);
  actx_bf16_kernel_destroy(max);
  actx_bf16_kernel_destroy(softmax);
}

int main(void) {
  check_lcnet(dims4(1, 240, 12, 80), false); /* split over threads (above 16 Ki elements) */
  check_lcnet(dims4(1, 3, 5, 7), true);      /* a tail block */
  check_lcnet(dims4(1, 3, 0, 7), false);     /* empty */
  check_lcnet(shape_of(0, NULL), false);     /* rank 0 */
  check_binary_kinds(dims4(2, 3, 4, 33), dims1(1));          /* scalar */
  check_binary_kinds(dims4(2, 3, 4, 33), dims4(1, 3, 1, 1)); /* per channel */
  check_binary_kinds(dims4(2, 3, 4, 33), dims1(33));         /* row */
  check_binary_kinds(dims4(2, 3, 4, 33), dims4(2, 3, 4, 33)); /* full */
  check_binary_kinds(dims4(1, 3, 1, 1), dims4(2, 1, 4, 33)); /* both broadcast: one pass */
  check_table_kinds();
  check_clip_kinds();
  check_fallbacks();
  check_refusals();
  return finish("test_bf16_chain");
}
