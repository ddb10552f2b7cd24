/* The layout family (bf16_layout.c): Expand, Tile and Pad against references written here by
 * plain index arithmetic (Pad's as the two steps it states: crop, then pad by reflecting or
 * wrapping one step at a time), every output element's bits compared; shapes of rank 0..4,
 * empty, one element; every Pad mode, negative pads, axes; the ONNX documentation's examples
 * by value; split runs; odd addresses; bad input. */
#include "elementwise_test.h"

#define S(...) \
  shape_of(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t), (int64_t[]){__VA_ARGS__})
#define S0 shape_of(0, NULL)
#define V(...) (sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), ((int64_t[]){__VA_ARGS__})

static uint16_t *values(int64_t n, uint32_t seed) {
  uint16_t *v = malloc((size_t)(n > 0 ? n : 1) * 2);
  static const uint16_t edge[] = {0x7F81, 0xFFC1, 0x8000, 0x0001, 0x7F80, 0xFF7F};
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = i < 6 ? edge[i] : (uint16_t)(seed >> 16);
  }
  return v;
}

static void coords(const actx_shape *s, int64_t i, int64_t *c) {
  for (size_t d = s->rank; d-- > 0;) {
    c[d] = i % s->dims[d];
    i /= s->dims[d];
  }
}
static int64_t flat(const actx_shape *s, const int64_t *c) {
  int64_t i = 0;
  for (size_t d = 0; d < s->rank; d++) i = i * s->dims[d] + c[d];
  return i;
}

static actx_bf16_kernel *layout_kernel(actx_bf16_op op, int since, size_t n_in, const char *mode) {
  const actx_elem elems[] = {ACTX_ELEM_BF16, ACTX_ELEM_I64, ACTX_ELEM_BF16, ACTX_ELEM_I64};
  actx_bf16_node n = node_of(op, since, n_in, elems);
  if (mode != NULL) {
    n.attrs.has_mode = true;
    strcpy(n.attrs.mode, mode);
  }
  return make_kernel(&n);
}

static actx_tensor i64_list(size_t n, int64_t *v) {
  const int64_t d[] = {(int64_t)n};
  return tensor_of(ACTX_ELEM_I64, shape_of(1, d), v);
}

/* Runs k; returns the output (caller frees *block) or NULL with the status in *st. */
static const unsigned char *run(actx_bf16_kernel *k, actx_tensor *in, size_t n_in,
                                actx_tensor *out, void **block, size_t offset,
                                const actx_parallel *par, actx_status *st, const char **why) {
  *st = run_kernel_at(k, in, n_in, out, block, offset, par, why);
  return *st == ACTX_OK ? out->data : NULL;
}

static uint16_t at(const unsigned char *p, int64_t i) {
  uint16_t v;
  memcpy(&v, p + 2 * i, 2);
  return v;
}

/* ---- Expand ---- */
static void check_expand(actx_shape x, size_t n, int64_t *target, actx_shape want,
                         const actx_parallel *par) {
  actx_bf16_kernel *k = layout_kernel(ACTX_BF16_OP_EXPAND, 13, 2, NULL);
  const int64_t nx = actx_shape_elements(&x);
  uint16_t *data = values(nx, 5);
  actx_tensor in[2] = {tensor_of(ACTX_ELEM_BF16, x, nx ? data : NULL), i64_list(n, target)};
  actx_tensor out;
  void *block;
  const char *why;
  actx_status st;
  const unsigned char *y = run(k, in, 2, &out, &block, 1, par, &st, &why);
  CHECK(st == ACTX_OK && shape_equal(&out.shape, &want));
  if (y != NULL && shape_equal(&out.shape, &want)) {
    for (int64_t i = 0; i < actx_shape_elements(&want); i++, values_compared++) {
      int64_t c[ACTX_BF16_MAX_RANK], xc[ACTX_BF16_MAX_RANK];
      coords(&want, i, c);
      const size_t lead = want.rank - x.rank;
      for (size_t d = 0; d < x.rank; d++) xc[d] = x.dims[d] == 1 ? 0 : c[d + lead];
      CHECK(at(y, i) == data[flat(&x, xc)]);
    }
  }
  free(block);
  free(data);
  actx_bf16_kernel_destroy(k);
}

static void test_expand(void) {
  check_expand(S(3, 1), V(2, 1, 6), S(2, 3, 6), NULL);
  check_expand(S(3), 0, NULL, S(3), NULL); /* an empty shape: the input's */
  check_expand(S0, V(2, 3), S(2, 3), NULL);
  check_expand(S0, 0, NULL, S0, NULL);
  check_expand(S(1, 4), V(3, 1), S(3, 4), NULL);
  check_expand(S(2, 3), V(2, 3), S(2, 3), NULL);
  check_expand(S(1), V(0), S(0), NULL);
  check_expand(S(2, 1, 3), V(1, 4, 1), S(2, 4, 3), NULL);
  check_expand(S(1, 2, 1, 3), V(5, 1, 2, 4, 1), S(5, 1, 2, 4, 3), NULL);
  check_expand(S(1, 200), V(400, 200), S(400, 200), &test_par);
  check_expand(S(400, 1), V(400, 200), S(400, 200), &test_par);

  actx_bf16_kernel *k = layout_kernel(ACTX_BF16_OP_EXPAND, 13, 2, NULL);
  uint16_t x[4] = {0};
  actx_tensor out;
  const char *why;
  struct {
    actx_shape x;
    actx_tensor shape;
    const char *what;
  } bad[] = {
      {S(3), i64_list(V(4)), "does not broadcast"},
      {S(3), i64_list(V(-1, 3)), "negative"},
      {S(1), i64_list(V(1, 1, 1, 1, 1, 1, 1, 1, 1)), "more than 8"},
      {S(1), tensor_of(ACTX_ELEM_I64, S(1, 1), x), "1-D"},
      {S(1), tensor_of(ACTX_ELEM_F32, S(1), x), "not int64"},
  };
  for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
    actx_tensor in[2] = {tensor_of(ACTX_ELEM_BF16, bad[b].x, x), bad[b].shape};
    const actx_status st = actx_bf16_kernel_shapes(k, in, 2, &out, 1, &why);
    CHECK(st == ACTX_ERROR_INVALID_ARGUMENT && strstr(why, bad[b].what));
    cases++;
  }
  actx_bf16_kernel_destroy(k);
  const actx_elem f32_shape[] = {ACTX_ELEM_BF16, ACTX_ELEM_F32};
  actx_bf16_node n = node_of(ACTX_BF16_OP_EXPAND, 13, 2, f32_shape);
  expect_create_error(&n, "Expand's shape is not int64");
}

/* ---- Tile ---- */
static void check_tile(actx_shape x, size_t n, int64_t *repeats, const actx_parallel *par) {
  actx_bf16_kernel *k = layout_kernel(ACTX_BF16_OP_TILE, 13, 2, NULL);
  const int64_t nx = actx_shape_elements(&x);
  uint16_t *data = values(nx, 9);
  actx_tensor in[2] = {tensor_of(ACTX_ELEM_BF16, x, nx ? data : NULL), i64_list(n, repeats)};
  actx_tensor out;
  void *block;
  const char *why;
  actx_status st;
  const unsigned char *y = run(k, in, 2, &out, &block, 0, par, &st, &why);
  actx_shape want = {.rank = x.rank};
  for (size_t d = 0; d < x.rank; d++) want.dims[d] = x.dims[d] * repeats[d];
  CHECK(st == ACTX_OK && shape_equal(&out.shape, &want));
  if (y != NULL && shape_equal(&out.shape, &want)) {
    for (int64_t i = 0; i < actx_shape_elements(&want); i++, values_compared++) {
      int64_t c[ACTX_BF16_MAX_RANK];
      coords(&want, i, c);
      for (size_t d = 0; d < x.rank; d++) c[d] %= x.dims[d];
      CHECK(at(y, i) == data[flat(&x, c)]);
    }
  }
  free(block);
  free(data);
  actx_bf16_kernel_destroy(k);
}

static void test_tile(void) {
  check_tile(S(2, 3), V(2, 2), NULL);
  check_tile(S(3), V(0), NULL);
  check_tile(S0, 0, NULL, NULL);
  check_tile(S(1), V(5), NULL);
  check_tile(S(1, 2, 1, 3), V(3, 1, 2, 2), NULL);
  check_tile(S(2, 0), V(2, 3), NULL);
  check_tile(S(2, 3, 4), V(1, 1, 1), NULL);
  check_tile(S(100, 10), V(10, 10), &test_par);
  check_tile(S(100, 10), V(10, 10), &thread_par);
  check_tile(S(1, 7), V(3000, 1), &test_par);
  actx_bf16_kernel *k = layout_kernel(ACTX_BF16_OP_TILE, 13, 2, NULL);
  uint16_t x[4] = {0};
  actx_tensor out;
  const char *why;
  actx_tensor in[2] = {tensor_of(ACTX_ELEM_BF16, S(2, 2), x), i64_list(V(1, -1))};
  CHECK(actx_bf16_kernel_shapes(k, in, 2, &out, 1, &why) == ACTX_ERROR_INVALID_ARGUMENT &&
        strstr(why, "negative"));
  in[1] = i64_list(V(2));
  CHECK(actx_bf16_kernel_shapes(k, in, 2, &out, 1, &why) == ACTX_ERROR_INVALID_ARGUMENT &&
        strstr(why, "one value an axis"));
  in[1] = i64_list(V(INT64_MAX / 2, 3));
  CHECK(actx_bf16_kernel_shapes(k, in, 2, &out, 1, &why) == ACTX_ERROR_INVALID_ARGUMENT &&
        strstr(why, "too large"));
  /* output over the input: refused (a byte mover reads other elements than it writes) */
  in[1] = i64_list(V(1, 1));
  out = in[0];
  CHECK(actx_bf16_kernel_run(k, in, 2, &out, 1, NULL, &why) == ACTX_ERROR_INVALID_ARGUMENT &&
        strstr(why, "overlaps"));
  cases += 4;
  actx_bf16_kernel_destroy(k);
}

/* ---- Pad ---- */
typedef enum { CONSTANT, REFLECT, EDGE, WRAP } mode_t_;
static const char *const mode_names[] = {"constant", "reflect", "edge", "wrap"};

/* The index in a cropped axis of n elements of the padded position i (may be outside), or -1
 * for the constant: reflected or wrapped one step at a time. */
static int64_t ref_pad_index(mode_t_ mode, int64_t i, int64_t n) {
  if (i >= 0 && i < n) return i;
  if (mode == CONSTANT) return -1;
  if (mode == EDGE) return i < 0 ? 0 : n - 1;
  if (mode == WRAP) {
    while (i < 0) i += n;
    while (i >= n) i -= n;
    return i;
  }
  if (n == 1) return 0;
  while (i < 0 || i >= n) {
    if (i < 0) i = -i;
    if (i >= n) i = 2 * (n - 1) - i;
  }
  return i;
}

/* pads: 2 * rank values (begins then ends), the full form; axes form is tested by passing
 * pads_in / axes_in separately. */
static void check_pad(mode_t_ mode, int since, actx_shape x, const int64_t *full_pads,
                      actx_tensor pads_in, const actx_tensor *axes_in, const uint16_t *constant,
                      const actx_parallel *par) {
  const size_t n_in = axes_in != NULL ? 4 : 3;
  actx_bf16_kernel *k = layout_kernel(ACTX_BF16_OP_PAD, since, n_in, mode_names[mode]);
  const int64_t nx = actx_shape_elements(&x);
  uint16_t *data = values(nx, 11), cv = constant ? *constant : 0;
  actx_tensor in[4] = {tensor_of(ACTX_ELEM_BF16, x, nx ? data : NULL), pads_in,
                       constant ? tensor_of(ACTX_ELEM_BF16, S0, &cv) : ACTX_TENSOR_ABSENT,
                       axes_in ? *axes_in : ACTX_TENSOR_ABSENT};
  actx_tensor out;
  void *block;
  const char *why = NULL;
  actx_status st;
  const unsigned char *y = run(k, in, n_in, &out, &block, 1, par, &st, &why);
  /* the reference: crop, then pad */
  actx_shape want = {.rank = x.rank};
  int64_t lo[ACTX_BF16_MAX_RANK], kept[ACTX_BF16_MAX_RANK];
  for (size_t d = 0; d < x.rank; d++) {
    const int64_t b = full_pads[d], e = full_pads[d + x.rank];
    lo[d] = b < 0 ? -b : 0;
    kept[d] = x.dims[d] - lo[d] - (e < 0 ? -e : 0);
    want.dims[d] = x.dims[d] + b + e;
  }
  CHECK(st == ACTX_OK && shape_equal(&out.shape, &want));
  if (st != ACTX_OK) fprintf(stderr, "  pad: %s\n", why);
  if (y != NULL && shape_equal(&out.shape, &want)) {
    for (int64_t i = 0; i < actx_shape_elements(&want); i++, values_compared++) {
      int64_t c[ACTX_BF16_MAX_RANK];
      coords(&want, i, c);
      bool is_constant = false;
      for (size_t d = 0; d < x.rank; d++) {
        const int64_t b = full_pads[d] > 0 ? full_pads[d] : 0;
        const int64_t j = ref_pad_index(mode, c[d] - b, kept[d]);
        if (j < 0) is_constant = true;
        c[d] = lo[d] + j;
      }
      CHECK(at(y, i) == (is_constant ? cv : data[flat(&x, c)]));
    }
  }
  free(block);
  free(data);
  actx_bf16_kernel_destroy(k);
}

static void pad_all_modes(actx_shape x, size_t n, int64_t *pads, const actx_parallel *par) {
  const uint16_t one = 0x3F80, snan = 0x7F81;
  for (int m = CONSTANT; m <= WRAP; m++) {
    check_pad((mode_t_)m, 19, x, pads, i64_list(n, pads), NULL, NULL, par);
    if (m == CONSTANT) {
      check_pad(CONSTANT, 13, x, pads, i64_list(n, pads), NULL, &one, par);
      check_pad(CONSTANT, 21, x, pads, i64_list(n, pads), NULL, &snan, par); /* bits kept */
    }
  }
}

static void test_pad(void) {
  pad_all_modes(S(3, 2), V(0, 2, 0, 0), NULL);
  pad_all_modes(S(4, 5), V(1, -1, 2, 3), NULL);
  pad_all_modes(S(5), V(-3, 3), NULL);   /* crop first: what is left is reflected */
  pad_all_modes(S(3), V(7, 8), NULL);    /* pads longer than the axis */
  pad_all_modes(S(1, 3), V(2, 0, 2, 0), NULL); /* an axis of one element */
  pad_all_modes(S0, 0, NULL, NULL);            /* rank 0 */
  pad_all_modes(S(2, 3, 4, 5), V(1, 1, 1, 1, 1, 1, 1, 1), NULL);
  pad_all_modes(S(2, 3), V(0, 0, 0, 0), NULL);
  pad_all_modes(S(3), V(-3, 0), NULL); /* cropped to nothing */
  pad_all_modes(S(300, 250), V(1, 2, 3, 4), &test_par);
  pad_all_modes(S(300, 250), V(1, 2, 3, 4), &thread_par);
  check_pad(CONSTANT, 13, S(0, 3), (int64_t[]){1, 0, 1, 0}, i64_list(V(1, 0, 1, 0)), NULL,
            NULL, NULL);
  /* the axes input (Pad-18 on): negative axes, a subset, their order */
  int64_t full[6] = {0, 0, 1, 0, 0, 2};
  actx_tensor axes = i64_list(V(-1));
  check_pad(REFLECT, 18, S(2, 3, 4), full, i64_list(V(1, 2)), &axes, NULL, NULL);
  int64_t full2[6] = {1, 0, 0, 0, 0, 1};
  axes = i64_list(V(2, 0));
  check_pad(EDGE, 18, S(2, 3, 4), full2, i64_list(V(0, 1, 1, 0)), &axes, NULL, NULL);
  int64_t none[6] = {0};
  axes = i64_list(0, NULL);
  check_pad(WRAP, 19, S(2, 3, 4), none, i64_list(0, NULL), &axes, NULL, NULL);

  /* the ONNX documentation's examples, by value */
  const float data[6] = {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f};
  uint16_t x[6];
  for (int i = 0; i < 6; i++) x[i] = ref_round(data[i]);
  const float want[3][12] = {
      {0, 0, 1.0f, 1.2f, 0, 0, 2.3f, 3.4f, 0, 0, 4.5f, 5.7f},          /* constant */
      {1.0f, 1.2f, 1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f, 4.5f, 5.7f}, /* reflect */
      {1.0f, 1.0f, 1.0f, 1.2f, 2.3f, 2.3f, 2.3f, 3.4f, 4.5f, 4.5f, 4.5f, 5.7f}, /* edge */
  };
  for (int m = 0; m < 3; m++) {
    actx_bf16_kernel *k = layout_kernel(ACTX_BF16_OP_PAD, 13, 2, mode_names[m]);
    actx_tensor in[2] = {tensor_of(ACTX_ELEM_BF16, S(3, 2), x), i64_list(V(0, 2, 0, 0))};
    actx_tensor out;
    void *block;
    const char *why;
    CHECK(run_kernel(k, in, 2, &out, &block, &why) == ACTX_OK);
    CHECK(out.shape.rank == 2 && out.shape.dims[0] == 3 && out.shape.dims[1] == 4);
    for (int i = 0; i < 12; i++, values_compared++)
      CHECK(((uint16_t *)out.data)[i] == ref_round(want[m][i]));
    free(block);
    actx_bf16_kernel_destroy(k);
  }
}

static void test_pad_errors(void) {
  uint16_t x[6] = {0}, two[2] = {0};
  actx_tensor out;
  const char *why;
  actx_bf16_kernel *k = layout_kernel(ACTX_BF16_OP_PAD, 18, 4, "edge");
  struct {
    actx_shape x;
    actx_tensor pads, constant, axes;
    const char *what;
  } bad[] = {
      {S(2, 3), i64_list(V(1, 1, 1)), ACTX_TENSOR_ABSENT, ACTX_TENSOR_ABSENT, "2 values an axis"},
      {S(2, 3), i64_list(V(1, 1, 1, 1)), ACTX_TENSOR_ABSENT, i64_list(V(1, -1)), "repeat"},
      {S(2, 3), i64_list(V(1, 1)), ACTX_TENSOR_ABSENT, i64_list(V(2)), "out of range"},
      {S(2, 3), i64_list(V(1, 1)), ACTX_TENSOR_ABSENT, i64_list(V(-3)), "out of range"},
      {S(2, 3), i64_list(V(0, -2, 0, -2)), ACTX_TENSOR_ABSENT, ACTX_TENSOR_ABSENT, "crop more"},
      {S(0, 3), i64_list(V(1, 0, 0, 0)), ACTX_TENSOR_ABSENT, ACTX_TENSOR_ABSENT, "empty axis"},
      {S(2, 3), i64_list(V(0, 0, 0, 0)), tensor_of(ACTX_ELEM_BF16, S(2), two), ACTX_TENSOR_ABSENT,
       "one value"},
      {S(2, 3), i64_list(V(0, 0, 0, 0)), tensor_of(ACTX_ELEM_F32, S0, two), ACTX_TENSOR_ABSENT,
       "not bfloat16"},
      {S(2, 3), tensor_of(ACTX_ELEM_I64, S(2, 2), x), ACTX_TENSOR_ABSENT, ACTX_TENSOR_ABSENT,
       "1-D"},
      {S(2, 3), i64_list(V((int64_t)1 << 60, 0, 0, 0)), ACTX_TENSOR_ABSENT, ACTX_TENSOR_ABSENT,
       "too large"},
  };
  for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
    actx_tensor in[4] = {tensor_of(ACTX_ELEM_BF16, bad[b].x, x), bad[b].pads, bad[b].constant,
                         bad[b].axes};
    const actx_status st = actx_bf16_kernel_shapes(k, in, 4, &out, 1, &why);
    CHECK(st == ACTX_ERROR_INVALID_ARGUMENT && strstr(why, bad[b].what));
    if (st != ACTX_ERROR_INVALID_ARGUMENT || !strstr(why, bad[b].what))
      fprintf(stderr, "  pad case %zu: expected '%s', got '%s'\n", b, bad[b].what, why);
    cases++;
  }
  actx_bf16_kernel_destroy(k);

  const actx_elem elems[] = {ACTX_ELEM_BF16, ACTX_ELEM_I64, ACTX_ELEM_BF16, ACTX_ELEM_I64};
  actx_bf16_node n = node_of(ACTX_BF16_OP_PAD, 19, 2, elems);
  n.attrs.has_mode = true;
  strcpy(n.attrs.mode, "bogus");
  expect_create_error(&n, "constant, reflect, edge or wrap");
  strcpy(n.attrs.mode, "wrap");
  n.since_version = 18;
  expect_create_error(&n, "Pad-19's");
  n = node_of(ACTX_BF16_OP_PAD, 13, 4, elems);
  expect_create_error(&n, "Pad-18 on");
  const actx_elem f32_pads[] = {ACTX_ELEM_BF16, ACTX_ELEM_F32};
  n = node_of(ACTX_BF16_OP_PAD, 13, 2, f32_pads);
  expect_create_error(&n, "pads are not int64");
  const actx_elem f32_value[] = {ACTX_ELEM_BF16, ACTX_ELEM_I64, ACTX_ELEM_F32};
  n = node_of(ACTX_BF16_OP_PAD, 13, 3, f32_value);
  expect_create_error(&n, "constant_value is not bfloat16");
  const actx_elem f32_data[] = {ACTX_ELEM_F32, ACTX_ELEM_I64};
  n = node_of(ACTX_BF16_OP_TILE, 13, 2, f32_data);
  expect_create_error(&n, "not bfloat16");
}

int main(void) {
  test_expand();
  test_tile();
  test_pad();
  test_pad_errors();
  return finish("test_bf16_layout");
}
