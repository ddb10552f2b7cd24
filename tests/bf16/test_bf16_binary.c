/* The binary family (bf16_binary.c) against a reference written here: numpy broadcasting by
 * plain index arithmetic, each element widened, one float32 op, rounded. Every op over shape
 * pairs of every broadcast kind (same, scalar either side, row, column, both, rank 0..8, empty,
 * one element, a split run), every pair of edge values, Pow's three exponent types, Max / Min
 * with 1..8 inputs and their NaN and zero rules, in place, misaligned data, bad input. */
#include "elementwise_test.h"

static float ref_max(float a, float b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a == 0 && b == 0) return signbit(a) ? b : a; /* +0 wins */
  return a > b ? a : b;
}
static float ref_min(float a, float b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a == 0 && b == 0) return signbit(a) ? a : b; /* -0 wins */
  return a < b ? a : b;
}

static float ref_op(actx_bf16_op op, float a, float b) {
  switch (op) {
    case ACTX_BF16_OP_ADD: return ref_nan(a + b, a, b);
    case ACTX_BF16_OP_SUB: return ref_nan(a - b, a, b);
    case ACTX_BF16_OP_MUL: return ref_nan(a * b, a, b);
    case ACTX_BF16_OP_DIV: return ref_nan(a / b, a, b);
    case ACTX_BF16_OP_PRELU: return ref_nan(a < 0 ? b * a : a, a, b);
    case ACTX_BF16_OP_POW: return ref_nan(powf(a, b), a, b);
    case ACTX_BF16_OP_MAX: return ref_max(a, b);
    case ACTX_BF16_OP_MIN: return ref_min(a, b);
    default: return NAN;
  }
}

static uint32_t rng = 12345;
static uint32_t next_rand(void) {
  rng = rng * 1664525u + 1013904223u;
  return rng >> 8;
}
/* Edge values first, then random bits (a quarter of them small integers, which Pow likes). */
static const uint16_t edges[] = {
    0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC1, 0x7F81, 0x7F7F, 0xFF7F, 0x0001, 0x8001,
    0x007F, 0x0080, 0x3F80, 0xBF80, 0x4000, 0x3F00, 0xC040, 0x4B80, 0x0100};
#define N_EDGES (sizeof edges / sizeof edges[0])
static uint16_t value(uint32_t i) {
  if (i < N_EDGES) return edges[i];
  const uint32_t r = next_rand();
  if ((r & 3) == 0) return ref_round((float)((int)(r >> 4) % 9 - 4));
  return (uint16_t)(r >> 2);
}
static void fill(uint16_t *v, int64_t n, uint32_t start) {
  for (int64_t i = 0; i < n; i++) v[i] = value(start + (uint32_t)i);
}

static actx_bf16_kernel *binary_kernel(actx_bf16_op op, size_t n_in, actx_elem exponent) {
  actx_elem elems[ACTX_BF16_MAX_INPUTS];
  for (size_t i = 0; i < n_in; i++) elems[i] = ACTX_ELEM_BF16;
  if (op == ACTX_BF16_OP_POW) elems[1] = exponent;
  const actx_bf16_node n = node_of(op, since_of(op), n_in, elems);
  return make_kernel(&n);
}

/* Runs op on inputs of these shapes (random values, edges first) and checks every element. */
static void check_shapes(actx_bf16_op op, size_t n_in, const actx_shape *shapes,
                         const actx_parallel *par) {
  actx_bf16_kernel *k = binary_kernel(op, n_in, ACTX_ELEM_BF16);
  actx_tensor in[ACTX_BF16_MAX_INPUTS];
  uint16_t *data[ACTX_BF16_MAX_INPUTS];
  for (size_t j = 0; j < n_in; j++) {
    const int64_t n = actx_shape_elements(&shapes[j]);
    data[j] = malloc((size_t)(n + 1) * 2);
    fill(data[j], n, (uint32_t)j * 7);
    in[j] = tensor_of(ACTX_ELEM_BF16, shapes[j], n ? data[j] : NULL);
  }
  actx_tensor out;
  void *block;
  const char *why = NULL;
  const actx_status st = run_kernel_at(k, in, n_in, &out, &block, 0, par, &why);
  CHECK(st == ACTX_OK);
  if (st != ACTX_OK) fprintf(stderr, "  op %d: %s\n", (int)op, why);
  const int64_t n = st == ACTX_OK ? actx_shape_elements(&out.shape) : 0;
  int reported = 0;
  for (int64_t i = 0; i < n; i++, values_compared++) {
    float acc = ref_widen(data[0][ref_index(&out.shape, &shapes[0], i)]);
    for (size_t j = 1; j < n_in; j++)
      acc = ref_op(op, acc, ref_widen(data[j][ref_index(&out.shape, &shapes[j], i)]));
    const uint16_t want = ref_round(acc), got = ((uint16_t *)out.data)[i];
    CHECK(got == want);
    if (got != want && reported++ < 3)
      fprintf(stderr, "  op %d element %lld: got 0x%04x want 0x%04x\n", (int)op, (long long)i,
              got, want);
  }
  free(block);
  for (size_t j = 0; j < n_in; j++) free(data[j]);
  actx_bf16_kernel_destroy(k);
}

static const actx_bf16_op ops[] = {ACTX_BF16_OP_ADD, ACTX_BF16_OP_SUB, ACTX_BF16_OP_MUL,
                                   ACTX_BF16_OP_DIV, ACTX_BF16_OP_POW, ACTX_BF16_OP_MAX,
                                   ACTX_BF16_OP_MIN};
#define N_OPS (sizeof ops / sizeof ops[0])

#define S(...) \
  shape_of(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t), (int64_t[]){__VA_ARGS__})
#define S0 shape_of(0, NULL)

static void test_broadcasts(void) {
  const actx_shape pairs[][2] = {
      {S(2, 3, 4), S(2, 3, 4)},    /* same shape */
      {S0, S(2, 3)},               /* scalar first */
      {S(2, 3), S0},               /* scalar second */
      {S0, S0},                    /* rank 0 */
      {S(1), S(5)},                /* one element */
      {S(1, 1), S(1)},             /* one element out */
      {S(4, 5), S(5)},             /* row */
      {S(5), S(4, 5)},             /* row, first */
      {S(4, 1), S(4, 5)},          /* column */
      {S(4, 5), S(4, 1)},          /* column, second */
      {S(4, 1), S(1, 5)},          /* both */
      {S(2, 1, 3), S(4, 1)},       /* rank 3 from 3 and 2 */
      {S(2, 1, 3, 1), S(1, 4, 1, 5)},
      {S(3, 4, 5, 6), S(1, 4, 1, 6)},
      {S(2, 1, 2, 1, 2, 1, 2, 1), S(1, 2, 1, 2, 1, 2, 1, 2)}, /* rank 8 */
      {S(0, 3), S(3)},             /* empty */
      {S(0), S(1)},
      {S(2, 0), S(2, 1)},
      {S(7, 33), S(7, 33)},        /* odd lengths */
  };
  for (size_t o = 0; o < N_OPS; o++)
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++)
      check_shapes(ops[o], 2, pairs[p], NULL);
  /* long enough to split over the parallel-for (chunks of 16 Ki): every broadcast kind */
  const actx_shape big[][2] = {{S(300, 200), S(300, 200)}, {S(300, 200), S(200)},
                               {S(300, 1), S(300, 200)}, {S0, S(70000)}, {S(3, 1, 257), S(97, 1)}};
  for (size_t o = 0; o < N_OPS; o++)
    for (size_t p = 0; p < sizeof big / sizeof big[0]; p++) {
      last_num_tasks = 0;
      check_shapes(ops[o], 2, big[p], &test_par);
      CHECK(last_num_tasks >= 2);
      check_shapes(ops[o], 2, big[p], &thread_par);
    }
  /* Max / Min: one input, three and eight broadcast together */
  const actx_shape three[] = {S(2, 1, 1), S(1, 3, 1), S(1, 1, 4)};
  const actx_shape eight[] = {S(2, 1, 1), S(1, 3, 1), S(1, 1, 4), S0,
                              S(4),       S(3, 1),    S(2, 3, 4), S(1)};
  const actx_shape lone[] = {S(3, 5)};
  for (size_t o = 5; o < 7; o++) {
    check_shapes(ops[o], 1, lone, NULL);
    check_shapes(ops[o], 3, three, NULL);
    check_shapes(ops[o], 8, eight, NULL);
  }
}

/* Random shapes that broadcast (rank 0..6, dims 1..4, each input's dim 1 at random, leading
 * dims dropped at random): 300 cases of Sub (order matters) and 100 of Min over 3 inputs. */
static void test_random_broadcasts(void) {
  for (int c = 0; c < 400; c++) {
    const size_t n_in = c < 300 ? 2 : 3;
    const size_t rank = next_rand() % 7;
    int64_t full[8];
    for (size_t d = 0; d < rank; d++) full[d] = 1 + (int64_t)(next_rand() % 4);
    actx_shape shapes[3];
    for (size_t k = 0; k < n_in; k++) {
      const size_t drop = rank ? next_rand() % (rank + 1) : 0;
      shapes[k].rank = rank - drop;
      for (size_t d = drop; d < rank; d++)
        shapes[k].dims[d - drop] = next_rand() % 3 == 0 ? 1 : full[d];
    }
    check_shapes(c < 300 ? ACTX_BF16_OP_SUB : ACTX_BF16_OP_MIN, n_in, shapes, NULL);
  }
}

/* Every pair of edge values, same shape, through op. */
static void check_edge_pairs(actx_bf16_op op) {
  enum { N = N_EDGES * N_EDGES };
  uint16_t a[N], b[N];
  for (size_t i = 0; i < N; i++) {
    a[i] = edges[i / N_EDGES];
    b[i] = edges[i % N_EDGES];
  }
  const int64_t dims[] = {N};
  actx_bf16_kernel *k = binary_kernel(op, 2, ACTX_ELEM_BF16);
  actx_tensor in[2] = {tensor_of(ACTX_ELEM_BF16, shape_of(1, dims), a),
                       tensor_of(ACTX_ELEM_BF16, shape_of(1, dims), b)};
  actx_tensor out;
  void *block;
  const char *why;
  CHECK(run_kernel(k, in, 2, &out, &block, &why) == ACTX_OK);
  for (size_t i = 0; i < N; i++, values_compared++) {
    const uint16_t y = ((uint16_t *)out.data)[i];
    CHECK(y == ref_round(ref_op(op, ref_widen(a[i]), ref_widen(b[i]))));
    /* a NaN in gives a quiet NaN, but for Pow's pow(x, 0) = 1 and pow(1, y) = 1, and PRelu's
     * NaN slope of an x >= 0 */
    if ((isnan(ref_widen(a[i])) || isnan(ref_widen(b[i]))) && op != ACTX_BF16_OP_POW &&
        op != ACTX_BF16_OP_PRELU)
      CHECK(is_quiet_nan(y));
  }
  free(block);
  actx_bf16_kernel_destroy(k);
}

static void test_edge_pairs(void) {
  for (size_t o = 0; o < N_OPS; o++) check_edge_pairs(ops[o]);
}

static uint16_t one2(actx_bf16_op op, uint16_t a, uint16_t b);

/* PRelu: its slope broadcast to X's shape every way (one pass, and split), and a slope that grows
 * X's shape (ORT's kernel broadcasts both ways), every pair of edge values (PRelu(-0) = -0; a
 * NaN slope matters only for a negative x). */
static void test_prelu(void) {
  const actx_shape pairs[][2] = {
      {S(2, 3, 4), S(2, 3, 4)}, {S(2, 3), S0},       {S(2, 3, 4, 5), S(3, 1, 1)},
      {S(4, 5), S(5)},          {S(4, 5), S(4, 1)},  {S(0, 3), S(3)},
      {S(7, 33), S(1)},         {S0, S0},            {S(3), S(2, 3)},
      {S(3, 1), S(1, 4)},
  };
  for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++)
    check_shapes(ACTX_BF16_OP_PRELU, 2, pairs[p], NULL);
  const actx_shape big[2] = {S(1, 64, 40, 40), S(64, 1, 1)};
  last_num_tasks = 0;
  check_shapes(ACTX_BF16_OP_PRELU, 2, big, &test_par);
  CHECK(last_num_tasks >= 2);
  check_edge_pairs(ACTX_BF16_OP_PRELU);
  CHECK(one2(ACTX_BF16_OP_PRELU, 0x8000, 0xC000) == 0x8000); /* PRelu(-0, -2) = -0 */
  CHECK(one2(ACTX_BF16_OP_PRELU, 0x4000, 0x7FC0) == 0x4000); /* a NaN slope, x >= 0: x */
  CHECK(one2(ACTX_BF16_OP_PRELU, 0xC000, 0x3F00) == 0xBF80); /* -2 · 0.5 */
}


/* A 1-element op by its bits. */
static uint16_t one2(actx_bf16_op op, uint16_t a, uint16_t b) {
  actx_bf16_kernel *k = binary_kernel(op, 2, ACTX_ELEM_BF16);
  actx_tensor in[2] = {tensor_of(ACTX_ELEM_BF16, S0, &a), tensor_of(ACTX_ELEM_BF16, S0, &b)};
  actx_tensor out;
  void *block;
  const char *why;
  CHECK(run_kernel(k, in, 2, &out, &block, &why) == ACTX_OK);
  const uint16_t y = *(uint16_t *)out.data;
  values_compared++;
  free(block);
  actx_bf16_kernel_destroy(k);
  return y;
}

static void test_semantics(void) {
  const actx_bf16_op MAX = ACTX_BF16_OP_MAX, MIN = ACTX_BF16_OP_MIN, POW = ACTX_BF16_OP_POW;
  CHECK(one2(MAX, 0x3F80, 0x7FC1) == 0x7FC1); /* NaN wins, either side */
  CHECK(one2(MAX, 0x7F81, 0x3F80) == 0x7FC1); /* and is made quiet */
  CHECK(one2(MIN, 0xFFC2, 0x7FC1) == 0xFFC2); /* two NaNs: the first */
  CHECK(one2(MAX, 0x8000, 0x0000) == 0x0000 && one2(MAX, 0x0000, 0x8000) == 0x0000);
  CHECK(one2(MIN, 0x8000, 0x0000) == 0x8000 && one2(MIN, 0x0000, 0x8000) == 0x8000);
  CHECK(one2(MAX, 0xFF80, 0x7F7F) == 0x7F7F && one2(MIN, 0xFF80, 0x7F7F) == 0xFF80);
  CHECK(one2(POW, 0x7FC0, 0x0000) == 0x3F80); /* pow(NaN, 0) = 1 */
  CHECK(one2(POW, 0x3F80, 0x7FC0) == 0x3F80); /* pow(1, NaN) = 1 */
  CHECK(one2(POW, 0xC000, 0x3F00) == 0x7FC0); /* pow(-2, 0.5): the positive quiet NaN */
  CHECK(one2(ACTX_BF16_OP_ADD, 0xFFC3, 0x7FC5) == 0xFFC3); /* two NaNs: the first's */
  CHECK(one2(ACTX_BF16_OP_SUB, 0x3F80, 0x7F85) == 0x7FC5); /* the NaN's own, sign kept */
  CHECK(one2(ACTX_BF16_OP_SUB, 0x7F80, 0x7F80) == 0x7FC0); /* Inf - Inf */
  CHECK(one2(POW, 0x8000, 0xBF80) == 0xFF80); /* pow(-0, -1) = -Inf */
  CHECK(one2(POW, 0x4000, 0x4040) == 0x4100); /* 2^3 = 8 */
  CHECK(one2(ACTX_BF16_OP_DIV, 0x3F80, 0x8000) == 0xFF80);
  CHECK(one2(ACTX_BF16_OP_DIV, 0x0000, 0x0000) == 0x7FC0);
  CHECK(one2(ACTX_BF16_OP_ADD, 0x7F7F, 0x7F7F) == 0x7F80); /* overflow */
  CHECK(one2(ACTX_BF16_OP_ADD, 0x3F80, 0x3B80) == 0x3F80); /* 1 + 2^-8: a tie, to even */
  CHECK(one2(ACTX_BF16_OP_ADD, 0x3F81, 0x3B80) == 0x3F82); /* (1 + 2^-7) + 2^-8: tie, up */
  CHECK(one2(ACTX_BF16_OP_SUB, 0x0000, 0x0000) == 0x0000);
  CHECK(one2(ACTX_BF16_OP_SUB, 0x8000, 0x0000) == 0x8000);
  CHECK(one2(ACTX_BF16_OP_MUL, 0x0001, 0x3F00) == 0x0000); /* 2^-134 ties to even 0 */
  CHECK(one2(ACTX_BF16_OP_MUL, 0x0003, 0x3F00) == 0x0002); /* 1.5 * 2^-133 ties to 2 */

  /* Pow's exponent as float32 (values no bfloat16 holds) and int64 (past 2^24) */
  const int64_t d4[] = {4}, d1[] = {1};
  uint16_t base[4] = {0x4000, 0xBF80, 0x8000, 0x3F81};
  float fe[4] = {0.3f, 3.0f, -1.0f, 1e-3f};
  actx_bf16_kernel *k = binary_kernel(POW, 2, ACTX_ELEM_F32);
  actx_tensor in[2] = {tensor_of(ACTX_ELEM_BF16, shape_of(1, d4), base),
                       tensor_of(ACTX_ELEM_F32, shape_of(1, d4), fe)};
  actx_tensor out;
  void *block;
  const char *why;
  CHECK(run_kernel(k, in, 2, &out, &block, &why) == ACTX_OK);
  for (int i = 0; i < 4; i++, values_compared++)
    CHECK(((uint16_t *)out.data)[i] ==
          ref_round(ref_nan(powf(ref_widen(base[i]), fe[i]), ref_widen(base[i]), fe[i])));
  free(block);
  /* a float32 exponent broadcast as a scalar, at an odd address */
  unsigned char raw[5];
  const float half = 0.5f;
  memcpy(raw + 1, &half, 4);
  in[1] = tensor_of(ACTX_ELEM_F32, shape_of(1, d1), raw + 1);
  CHECK(run_kernel(k, in, 2, &out, &block, &why) == ACTX_OK);
  for (int i = 0; i < 4; i++, values_compared++)
    CHECK(((uint16_t *)out.data)[i] ==
          ref_round(ref_nan(powf(ref_widen(base[i]), 0.5f), ref_widen(base[i]), 0.5f)));
  free(block);
  in[1] = tensor_of(ACTX_ELEM_BF16, shape_of(1, d4), base); /* not the declared type */
  CHECK(run_kernel(k, in, 2, &out, &block, &why) == ACTX_ERROR_INVALID_ARGUMENT &&
        strstr(why, "not float32"));
  free(block);
  actx_bf16_kernel_destroy(k);

  k = binary_kernel(POW, 2, ACTX_ELEM_I64);
  const int64_t big = (int64_t)1 << 40;
  uint16_t b8[8] = {0xBF80, 0xBF80, 0x8000, 0x8000, 0xC000, 0x3F80, 0x4000, 0xBF81};
  int64_t ie[8] = {big + 1, big, -(big + 1), big + 1, 3, -big, -2, 16777217};
  const int64_t d8[] = {8};
  in[0] = tensor_of(ACTX_ELEM_BF16, shape_of(1, d8), b8);
  in[1] = tensor_of(ACTX_ELEM_I64, shape_of(1, d8), ie);
  CHECK(run_kernel(k, in, 2, &out, &block, &why) == ACTX_OK);
  const uint16_t want8[8] = {0xBF80, 0x3F80, 0xFF80, 0x8000, 0xC100, 0x3F80, 0x3E80, 0xFF80};
  for (int i = 0; i < 8; i++, values_compared++) {
    const uint16_t y = ((uint16_t *)out.data)[i];
    CHECK(y == want8[i]);
    CHECK(y == ref_round((float)pow((double)ref_widen(b8[i]), (double)ie[i])));
  }
  free(block);
  actx_bf16_kernel_destroy(k);
}

static void test_memory_and_errors(void) {
  /* in place: out is in[0], then in[1], with the other input broadcast or not */
  const int64_t d[] = {6, 5}, r[] = {5};
  uint16_t a[30], b[30], keep_a[30], keep_b[30];
  fill(a, 30, 3);
  fill(b, 30, 40);
  memcpy(keep_a, a, sizeof a);
  memcpy(keep_b, b, sizeof b);
  actx_bf16_kernel *k = binary_kernel(ACTX_BF16_OP_SUB, 2, ACTX_ELEM_BF16);
  const char *why;
  actx_tensor in[2] = {tensor_of(ACTX_ELEM_BF16, shape_of(2, d), a),
                       tensor_of(ACTX_ELEM_BF16, shape_of(2, d), b)};
  actx_tensor out = in[0];
  CHECK(actx_bf16_kernel_run(k, in, 2, &out, 1, &test_par, &why) == ACTX_OK);
  for (int i = 0; i < 30; i++, values_compared++)
    CHECK(a[i] == ref_round(ref_widen(keep_a[i]) - ref_widen(keep_b[i])));
  memcpy(a, keep_a, sizeof a);
  out = in[1];
  CHECK(actx_bf16_kernel_run(k, in, 2, &out, 1, NULL, &why) == ACTX_OK);
  for (int i = 0; i < 30; i++, values_compared++)
    CHECK(b[i] == ref_round(ref_widen(keep_a[i]) - ref_widen(keep_b[i])));
  memcpy(b, keep_b, sizeof b);
  in[1].shape = shape_of(1, r); /* b a row now */
  out = in[0];
  CHECK(actx_bf16_kernel_run(k, in, 2, &out, 1, NULL, &why) == ACTX_OK);
  for (int i = 0; i < 30; i++, values_compared++)
    CHECK(a[i] == ref_round(ref_widen(keep_a[i]) - ref_widen(keep_b[i % 5])));
  out = tensor_of(ACTX_ELEM_BF16, shape_of(2, d), b); /* out over the broadcast row: refused */
  CHECK(actx_bf16_kernel_run(k, in, 2, &out, 1, NULL, &why) == ACTX_ERROR_INVALID_ARGUMENT &&
        strstr(why, "overlaps"));
  cases += 4;

  /* misaligned: both inputs and the output at odd addresses */
  unsigned char *ra = malloc(61), *rb = malloc(61);
  memcpy(ra + 1, keep_a, 60);
  memcpy(rb + 1, keep_b, 60);
  in[0] = tensor_of(ACTX_ELEM_BF16, shape_of(2, d), ra + 1);
  in[1] = tensor_of(ACTX_ELEM_BF16, shape_of(2, d), rb + 1);
  void *block;
  CHECK(run_kernel_at(k, in, 2, &out, &block, 1, NULL, &why) == ACTX_OK);
  for (int i = 0; i < 30; i++, values_compared++) {
    uint16_t y;
    memcpy(&y, (unsigned char *)out.data + 2 * i, 2);
    CHECK(y == ref_round(ref_widen(keep_a[i]) - ref_widen(keep_b[i])));
  }
  free(block);
  free(ra);
  free(rb);

  /* shapes that do not broadcast; wrong types; wrong counts */
  const int64_t d23[] = {2, 3}, d4[] = {4}, d2[] = {2}, d32[] = {3, 2};
  in[0] = tensor_of(ACTX_ELEM_BF16, shape_of(2, d23), a);
  in[1] = tensor_of(ACTX_ELEM_BF16, shape_of(1, d4), b);
  actx_tensor o;
  CHECK(actx_bf16_kernel_shapes(k, in, 2, &o, 1, &why) == ACTX_ERROR_INVALID_ARGUMENT &&
        strstr(why, "do not broadcast"));
  in[1] = tensor_of(ACTX_ELEM_BF16, shape_of(1, d2), b);
  CHECK(actx_bf16_kernel_shapes(k, in, 2, &o, 1, &why) == ACTX_ERROR_INVALID_ARGUMENT);
  in[1] = tensor_of(ACTX_ELEM_BF16, shape_of(2, d32), b);
  CHECK(actx_bf16_kernel_shapes(k, in, 2, &o, 1, &why) == ACTX_ERROR_INVALID_ARGUMENT);
  in[1].elem = ACTX_ELEM_F32;
  CHECK(actx_bf16_kernel_shapes(k, in, 2, &o, 1, &why) == ACTX_ERROR_INVALID_ARGUMENT &&
        strstr(why, "not bfloat16"));
  CHECK(actx_bf16_kernel_shapes(k, in, 1, &o, 1, &why) == ACTX_ERROR_INVALID_ARGUMENT &&
        strstr(why, "number"));
  in[1] = tensor_of(ACTX_ELEM_BF16, shape_of(1, d2), NULL); /* no data: a run refuses */
  in[0].shape = shape_of(1, d2);
  out = tensor_of(ACTX_ELEM_BF16, shape_of(1, d2), keep_a);
  CHECK(actx_bf16_kernel_run(k, in, 2, &out, 1, NULL, &why) == ACTX_ERROR_INVALID_ARGUMENT &&
        strstr(why, "no data"));
  cases += 6;
  actx_bf16_kernel_destroy(k);

  const actx_elem f32[] = {ACTX_ELEM_BF16, ACTX_ELEM_F32}, boolean[] = {ACTX_ELEM_BF16,
                                                                          ACTX_ELEM_BOOL};
  actx_bf16_node n = node_of(ACTX_BF16_OP_ADD, 14, 2, f32);
  expect_create_error(&n, "not bfloat16");
  n = node_of(ACTX_BF16_OP_POW, 15, 2, boolean);
  expect_create_error(&n, "Pow's exponent must be bfloat16, float32 or int64");
  const actx_elem f32_base[] = {ACTX_ELEM_F32, ACTX_ELEM_BF16};
  n = node_of(ACTX_BF16_OP_POW, 15, 2, f32_base);
  expect_create_error(&n, "not bfloat16");
  n = node_of(ACTX_BF16_OP_MAX, 13, 8, NULL);
  n.n_inputs = 9;
  expect_create_error(&n, "inputs");
  n = node_of(ACTX_BF16_OP_MIN, 13, 0, NULL);
  expect_create_error(&n, "inputs");
}

int main(void) {
  test_broadcasts();
  test_random_broadcasts();
  test_edge_pairs();
  test_prelu();
  test_semantics();
  test_memory_and_errors();
  return finish("test_bf16_binary");
}
