/* What the element-wise families' tests add to bf16_test_run.h: counts of what was checked,
 * tensors and nodes made in one line, a kernel run that allocates its output (misaligned on
 * request), the reference's own rounding. */
#ifndef ACTX_ELEMENTWISE_TEST_H
#define ACTX_ELEMENTWISE_TEST_H

#include "bf16_test_run.h"

static long values_compared; /* output elements checked against a reference */
static long cases;           /* kernel runs or expected errors checked */

static inline bool shape_equal(const actx_shape *a, const actx_shape *b) {
  if (a->rank != b->rank) return false;
  for (size_t i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

static inline actx_tensor tensor_of(actx_elem elem, actx_shape shape, void *data) {
  return (actx_tensor){.elem = elem, .shape = shape, .data = data};
}

static inline actx_bf16_node node_of(actx_bf16_op op, int since, size_t n_in,
                                     const actx_elem *elems) {
  actx_bf16_node n = {.op = op, .since_version = since, .n_inputs = n_in, .n_outputs = 1};
  for (size_t i = 0; i < n_in; i++) {
    n.input_elems[i] = elems != NULL ? elems[i] : ACTX_ELEM_BF16;
    n.input_present[i] = true;
  }
  n.output_present[0] = true;
  return n;
}

/* The first since-version the op list serves for op. */
static inline int since_of(actx_bf16_op op) { return actx_bf16_op_info_get(op)->since[0]; }

static inline actx_bf16_kernel *make_kernel(const actx_bf16_node *n) {
  actx_bf16_kernel *k = NULL;
  const char *why = NULL;
  const actx_status st = actx_bf16_kernel_create(n, &k, &why);
  if (st != ACTX_OK) fprintf(stderr, "create %d failed: %s\n", (int)n->op, why);
  CHECK(st == ACTX_OK && k != NULL);
  return k;
}

/* Expects create to fail with INVALID_ARGUMENT and a message containing what. */
static inline void expect_create_error(const actx_bf16_node *n, const char *what) {
  actx_bf16_kernel *k = NULL;
  const char *why = NULL;
  const actx_status st = actx_bf16_kernel_create(n, &k, &why);
  CHECK(st == ACTX_ERROR_INVALID_ARGUMENT && k == NULL && why != NULL && strstr(why, what));
  if (st != ACTX_ERROR_INVALID_ARGUMENT || why == NULL || !strstr(why, what))
    fprintf(stderr, "  expected '%s', got '%s'\n", what, why ? why : "(null)");
  if (k != NULL) actx_bf16_kernel_destroy(k);
  cases++;
}

/* Shapes, then an output allocated (one spare element, data at offset, so a misaligned output
 * is one argument), then the run. *out owns out->data's block at *block. */
static inline actx_status run_kernel_at(const actx_bf16_kernel *k, const actx_tensor *in,
                                        size_t n_in, actx_tensor *out, void **block,
                                        size_t offset, const actx_parallel *par,
                                        const char **why) {
  *block = NULL;
  actx_status st = actx_bf16_kernel_shapes(k, in, n_in, out, 1, why);
  if (st != ACTX_OK) return st;
  const int64_t n = actx_shape_elements(&out->shape);
  *block = calloc(1, (size_t)(n + 1) * elem_size(out->elem) + offset + 8);
  out->data = (unsigned char *)*block + offset;
  cases++;
  return actx_bf16_kernel_run(k, in, n_in, out, 1, par, why);
}

static inline actx_status run_kernel(const actx_bf16_kernel *k, const actx_tensor *in,
                                     size_t n_in, actx_tensor *out, void **block,
                                     const char **why) {
  return run_kernel_at(k, in, n_in, out, block, 0, NULL, why);
}

/* The flat index in an input of shape s (numpy-broadcast into o) of the output element at flat
 * index i of shape o: the reference's own broadcasting. */
static inline int64_t ref_index(const actx_shape *o, const actx_shape *s, int64_t i) {
  int64_t idx = 0, stride = 1;
  const size_t lead = o->rank - s->rank;
  for (size_t d = o->rank; d-- > 0;) {
    const int64_t coord = i % o->dims[d];
    i /= o->dims[d];
    if (d >= lead) {
      const int64_t dim = s->dims[d - lead];
      idx += (dim == 1 ? 0 : coord) * stride;
      stride *= dim;
    }
  }
  return idx;
}

/* The reference's rounding, written out here (not src/half.h's): round to nearest even, a NaN
 * made quiet with its sign and top payload kept. */
static inline uint16_t ref_round(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  if (isnan(f)) return (uint16_t)((u >> 16) | 0x0040u);
  const uint32_t lower = u & 0xFFFFu, upper = u >> 16;
  if (lower > 0x8000u || (lower == 0x8000u && (upper & 1u))) return (uint16_t)(upper + 1u);
  return (uint16_t)upper;
}
static inline float ref_widen(uint16_t h) {
  const uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
/* The stated NaN rule: a NaN result from NaN operands is the first NaN operand's; from numbers,
 * the positive quiet NaN. */
static inline float ref_nan(float r, float a, float b) {
  if (!isnan(r)) return r;
  if (isnan(a)) return a;
  if (isnan(b)) return b;
  return ref_widen(0x7FC0);
}
static inline int is_quiet_nan(uint16_t h) { return (h & 0x7F80u) == 0x7F80u && (h & 0x0040u); }

static inline int finish(const char *name) {
  if (failures) {
    fprintf(stderr, "%s: %d failures\n", name, failures);
    return 1;
  }
  printf("%s: %ld cases, %ld values compared, all passed\n", name, cases, values_compared);
  return 0;
}

#endif /* ACTX_ELEMENTWISE_TEST_H */
