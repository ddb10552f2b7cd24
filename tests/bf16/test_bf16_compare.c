/* The compare family (bf16_compare.c): the five comparisons on every pair of edge values and on
 * every broadcast kind, against plain float32 comparisons of the widened values by index
 * arithmetic; Where's three-way broadcasting, its bits copied (a signalling NaN too); a split
 * run; misaligned data; bad input. */
#include "elementwise_test.h"

#define S(...) \
  shape_of(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t), (int64_t[]){__VA_ARGS__})
#define S0 shape_of(0, NULL)

static int ref_cmp(actx_bf16_op op, float a, float b) {
  switch (op) {
    case ACTX_BF16_OP_EQUAL: return a == b;
    case ACTX_BF16_OP_LESS: return a < b;
    case ACTX_BF16_OP_GREATER: return a > b;
    case ACTX_BF16_OP_LESS_OR_EQUAL: return a <= b;
    case ACTX_BF16_OP_GREATER_OR_EQUAL: return a >= b;
    default: return -1;
  }
}

static uint32_t rng = 777;
static uint16_t next_value(void) {
  rng = rng * 1664525u + 1013904223u;
  /* few distinct values, so that equal pairs are common */
  static const uint16_t pool[] = {0x0000, 0x8000, 0x3F80, 0xBF80, 0x7F80, 0xFF80, 0x7FC0,
                                  0x0001, 0x4000, 0x7F7F};
  return (rng >> 9) % 3 == 0 ? (uint16_t)(rng >> 13) : pool[(rng >> 9) % 10];
}

static const actx_bf16_op cmps[] = {ACTX_BF16_OP_EQUAL, ACTX_BF16_OP_LESS, ACTX_BF16_OP_GREATER,
                                    ACTX_BF16_OP_LESS_OR_EQUAL, ACTX_BF16_OP_GREATER_OR_EQUAL};
#define N_CMPS (sizeof cmps / sizeof cmps[0])

static actx_bf16_kernel *kernel(actx_bf16_op op) {
  const actx_elem where[] = {ACTX_ELEM_BOOL, ACTX_ELEM_BF16, ACTX_ELEM_BF16};
  const actx_bf16_node n =
      node_of(op, since_of(op), op == ACTX_BF16_OP_WHERE ? 3 : 2,
              op == ACTX_BF16_OP_WHERE ? where : NULL);
  return make_kernel(&n);
}

/* Runs op on inputs of the given shapes (Where: the first is the bool condition) and checks
 * every output element against the reference. */
static void check(actx_bf16_op op, const actx_shape *shapes, const actx_parallel *par,
                  size_t offset) {
  const bool where = op == ACTX_BF16_OP_WHERE;
  const size_t n_in = where ? 3 : 2;
  actx_bf16_kernel *k = kernel(op);
  actx_tensor in[3];
  unsigned char *data[3];
  for (size_t j = 0; j < n_in; j++) {
    const int64_t n = actx_shape_elements(&shapes[j]);
    data[j] = malloc((size_t)n * 2 + offset + 1);
    for (int64_t i = 0; i < n; i++) {
      if (where && j == 0) {
        data[j][offset + i] = (unsigned char)(next_value() % 3); /* 0, 1 or 2 (true too) */
      } else {
        const uint16_t v = next_value();
        memcpy(data[j] + offset + 2 * i, &v, 2);
      }
    }
    in[j] = tensor_of(where && j == 0 ? ACTX_ELEM_BOOL : ACTX_ELEM_BF16, shapes[j],
                      n ? data[j] + offset : NULL);
  }
  actx_tensor out;
  void *block;
  const char *why = NULL;
  const actx_status st = run_kernel_at(k, in, n_in, &out, &block, offset, par, &why);
  CHECK(st == ACTX_OK);
  if (st != ACTX_OK) fprintf(stderr, "  op %d: %s\n", (int)op, why);
  CHECK(out.elem == (where ? ACTX_ELEM_BF16 : ACTX_ELEM_BOOL));
  const int64_t n = st == ACTX_OK ? actx_shape_elements(&out.shape) : 0;
  for (int64_t i = 0; i < n; i++, values_compared++) {
    uint16_t v[3];
    for (size_t j = where ? 1 : 0; j < n_in; j++)
      memcpy(&v[j], data[j] + offset + 2 * ref_index(&out.shape, &shapes[j], i), 2);
    if (where) {
      const unsigned char c = data[0][offset + ref_index(&out.shape, &shapes[0], i)];
      uint16_t y;
      memcpy(&y, (unsigned char *)out.data + 2 * i, 2);
      CHECK(y == (c ? v[1] : v[2]));
    } else {
      const unsigned char y = ((unsigned char *)out.data)[i];
      CHECK(y == ref_cmp(op, ref_widen(v[0]), ref_widen(v[1])));
    }
  }
  free(block);
  for (size_t j = 0; j < n_in; j++) free(data[j]);
  actx_bf16_kernel_destroy(k);
}

static void test_edge_pairs(void) {
  static const uint16_t e[] = {0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC1, 0x7F81,
                               0x7F7F, 0xFF7F, 0x0001, 0x8001, 0x3F80, 0xBF80, 0x3F81};
  enum { M = sizeof e / sizeof e[0], N = M * M };
  uint16_t a[N], b[N];
  for (size_t i = 0; i < N; i++) a[i] = e[i / M], b[i] = e[i % M];
  const int64_t dims[] = {N};
  for (size_t c = 0; c < N_CMPS; c++) {
    actx_bf16_kernel *k = kernel(cmps[c]);
    actx_tensor in[2] = {tensor_of(ACTX_ELEM_BF16, shape_of(1, dims), a),
                         tensor_of(ACTX_ELEM_BF16, shape_of(1, dims), b)};
    actx_tensor out;
    void *block;
    const char *why;
    CHECK(run_kernel(k, in, 2, &out, &block, &why) == ACTX_OK);
    for (size_t i = 0; i < N; i++, values_compared++)
      CHECK(((unsigned char *)out.data)[i] ==
            ref_cmp(cmps[c], ref_widen(a[i]), ref_widen(b[i])));
    free(block);
    actx_bf16_kernel_destroy(k);
  }
  /* the rules by name: NaN compares false, -0 == +0, subnormals are not zero */
  const uint16_t pairs[][2] = {{0x7FC0, 0x7FC0}, {0x8000, 0x0000}, {0x0001, 0x0000}};
  const int want[][5] = {{0, 0, 0, 0, 0}, {1, 0, 0, 1, 1}, {0, 0, 1, 0, 1}};
  for (size_t p = 0; p < 3; p++)
    for (size_t c = 0; c < N_CMPS; c++) {
      actx_bf16_kernel *k = kernel(cmps[c]);
      uint16_t x = pairs[p][0], y = pairs[p][1];
      actx_tensor in[2] = {tensor_of(ACTX_ELEM_BF16, S0, &x), tensor_of(ACTX_ELEM_BF16, S0, &y)};
      actx_tensor out;
      void *block;
      const char *why;
      CHECK(run_kernel(k, in, 2, &out, &block, &why) == ACTX_OK);
      CHECK(out.shape.rank == 0 && *(unsigned char *)out.data == want[p][c]);
      values_compared++;
      free(block);
      actx_bf16_kernel_destroy(k);
    }
}

static void test_broadcasts(void) {
  const actx_shape pairs[][2] = {
      {S(2, 3, 4), S(2, 3, 4)}, {S0, S(2, 3)},  {S(2, 3), S0},       {S0, S0},
      {S(1), S(5)},             {S(4, 5), S(5)}, {S(4, 1), S(4, 5)}, {S(4, 1), S(1, 5)},
      {S(2, 1, 3, 1), S(1, 4, 1, 5)}, {S(0, 3), S(3)}, {S(2, 0), S(1)}, {S(9, 1), S(1, 1)}};
  for (size_t c = 0; c < N_CMPS; c++)
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) check(cmps[c], pairs[p], NULL, 0);
  const actx_shape big[2] = {S(300, 1), S(1, 200)};
  last_num_tasks = 0;
  check(ACTX_BF16_OP_LESS, big, &test_par, 1); /* split, and at odd addresses */
  CHECK(last_num_tasks >= 2);
  const actx_shape triples[][3] = {
      {S(2, 3), S(2, 3), S(2, 3)}, {S0, S(2, 3), S(2, 3)},  {S(2, 3), S0, S(3)},
      {S(4, 1), S(1, 5), S0},      {S(1, 1, 3), S(2, 1, 1), S(4, 1)}, {S0, S0, S0},
      {S(0, 2), S(2), S(1)},       {S(5), S(1), S(1)},      {S(2, 1, 2, 1), S(3, 1, 4), S(1)}};
  for (size_t t = 0; t < sizeof triples / sizeof triples[0]; t++)
    check(ACTX_BF16_OP_WHERE, triples[t], NULL, t & 1);
  const actx_shape big3[3] = {S(70000), S0, S(70000)};
  last_num_tasks = 0;
  check(ACTX_BF16_OP_WHERE, big3, &test_par, 0);
  CHECK(last_num_tasks >= 2);
}

static void test_where_and_errors(void) {
  /* Where copies bits: a signalling NaN stays signalling; the output may be X itself */
  actx_bf16_kernel *k = kernel(ACTX_BF16_OP_WHERE);
  unsigned char cond[4] = {1, 0, 255, 0};
  uint16_t x[4] = {0x7F81, 0x3F80, 0x8000, 0x4000}, y[4] = {0, 0xFF81, 0x1234, 0x0001};
  const int64_t d4[] = {4}, d3[] = {3};
  actx_tensor in[3] = {tensor_of(ACTX_ELEM_BOOL, shape_of(1, d4), cond),
                       tensor_of(ACTX_ELEM_BF16, shape_of(1, d4), x),
                       tensor_of(ACTX_ELEM_BF16, shape_of(1, d4), y)};
  actx_tensor out = in[1];
  const char *why;
  CHECK(actx_bf16_kernel_run(k, in, 3, &out, 1, NULL, &why) == ACTX_OK);
  const uint16_t want[4] = {0x7F81, 0xFF81, 0x8000, 0x0001};
  CHECK(memcmp(x, want, sizeof want) == 0);
  values_compared += 4;
  /* the condition's type, shapes that do not broadcast, an output over the condition */
  in[0].elem = ACTX_ELEM_BF16;
  actx_tensor o;
  CHECK(actx_bf16_kernel_shapes(k, in, 3, &o, 1, &why) == ACTX_ERROR_INVALID_ARGUMENT &&
        strstr(why, "not bool"));
  in[0].elem = ACTX_ELEM_BOOL;
  in[2].shape = shape_of(1, d3);
  CHECK(actx_bf16_kernel_shapes(k, in, 3, &o, 1, &why) == ACTX_ERROR_INVALID_ARGUMENT &&
        strstr(why, "do not broadcast"));
  in[2].shape = shape_of(1, d4);
  out = tensor_of(ACTX_ELEM_BF16, shape_of(1, d4), cond);
  CHECK(actx_bf16_kernel_run(k, in, 3, &out, 1, NULL, &why) == ACTX_ERROR_INVALID_ARGUMENT &&
        strstr(why, "overlaps"));
  CHECK(actx_bf16_kernel_shapes(k, in, 2, &o, 1, &why) == ACTX_ERROR_INVALID_ARGUMENT &&
        strstr(why, "number"));
  actx_bf16_kernel_destroy(k);
  /* a comparison's output is bool: a bfloat16 output is refused */
  k = kernel(ACTX_BF16_OP_EQUAL);
  in[0] = in[1];
  out = tensor_of(ACTX_ELEM_BF16, shape_of(1, d4), y);
  CHECK(actx_bf16_kernel_run(k, in, 2, &out, 1, NULL, &why) == ACTX_ERROR_INVALID_ARGUMENT &&
        strstr(why, "element type"));
  in[1].elem = ACTX_ELEM_I64;
  CHECK(actx_bf16_kernel_shapes(k, in, 2, &o, 1, &why) == ACTX_ERROR_INVALID_ARGUMENT &&
        strstr(why, "not bfloat16"));
  cases += 6;
  actx_bf16_kernel_destroy(k);
  const actx_elem bad_cond[] = {ACTX_ELEM_BF16, ACTX_ELEM_BF16, ACTX_ELEM_BF16};
  actx_bf16_node n = node_of(ACTX_BF16_OP_WHERE, 16, 3, bad_cond);
  expect_create_error(&n, "condition is not bool");
  const actx_elem f32[] = {ACTX_ELEM_F32, ACTX_ELEM_BF16};
  n = node_of(ACTX_BF16_OP_GREATER, 13, 2, f32);
  expect_create_error(&n, "not bfloat16");
}

int main(void) {
  test_edge_pairs();
  test_broadcasts();
  test_where_and_errors();
  return finish("test_bf16_compare");
}
