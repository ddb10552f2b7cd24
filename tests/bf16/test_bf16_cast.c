/* The cast family (bf16_cast.c) against its stated rule, which is ORT 1.30's Cast (the EP test
 * test_ep_bf16_session checks it against ORT itself): float32 -> bfloat16 rounds to nearest even
 * and makes every NaN the quiet NaN of its sign. Every float32 bit pattern, whole and (every
 * 4th chunk) split over tasks; the casts it does not serve (bfloat16 -> float32 among them), a
 * missing `to`, and an input of another type are refused; an empty tensor is fine. */
#include "bf16_test_run.h"

#define TO_FLOAT 1
#define TO_FLOAT16 10
#define TO_BFLOAT16 16

static uint16_t ort_narrow(uint32_t u) {
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)(((u >> 16) & 0x8000u) | 0x7FC0u);
  return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

static actx_bf16_node cast_node(actx_elem from, int64_t to, bool has_to) {
  actx_bf16_node n = node_make(ACTX_BF16_OP_CAST, 21, 1, &from, 1);
  n.attrs.has_to = has_to;
  n.attrs.to = to;
  return n;
}

static void every_float(void) {
  const size_t chunk = (size_t)1 << 22;
  uint32_t *x = malloc(chunk * sizeof *x);
  const actx_bf16_node node = cast_node(ACTX_ELEM_F32, TO_BFLOAT16, true);
  size_t bad = 0, split_bad = 0;
  for (uint64_t base = 0; base < ((uint64_t)1 << 32); base += chunk) {
    for (size_t i = 0; i < chunk; i++) x[i] = (uint32_t)(base + i);
    const actx_tensor in = {ACTX_ELEM_F32, {1, {(int64_t)chunk}}, x};
    actx_tensor out[1];
    const char *why = NULL;
    /* every 4th chunk split over tasks (among them the last of each sign: NaNs) */
    const bool split = (base / chunk) % 4 == 3;
    CHECK(run_node(&node, &in, 1, out, 1, split ? &test_par : NULL, &why) == ACTX_OK);
    const uint16_t *y = out[0].data;
    for (size_t i = 0; y != NULL && i < chunk; i++) {
      const bool wrong = y[i] != ort_narrow(x[i]);
      bad += wrong;
      split_bad += wrong && split;
    }
    outputs_free(out, 1);
  }
  printf("float32 -> bfloat16, every float32: %zu wrong (%zu in split runs)\n", bad, split_bad);
  CHECK(bad == 0);
  free(x);
}

static void refusals(void) {
  const char *why = NULL;
  actx_bf16_kernel *k = NULL;
  actx_bf16_node n = cast_node(ACTX_ELEM_F32, TO_FLOAT16, true);
  CHECK(actx_bf16_kernel_create(&n, &k, &why) == ACTX_ERROR_INVALID_ARGUMENT && k == NULL);
  n = cast_node(ACTX_ELEM_BF16, TO_BFLOAT16, true); /* bfloat16 -> bfloat16: ORT's */
  CHECK(actx_bf16_kernel_create(&n, &k, &why) == ACTX_ERROR_INVALID_ARGUMENT && k == NULL);
  n = cast_node(ACTX_ELEM_BF16, TO_FLOAT, true); /* ORT's: as fast as ours */
  CHECK(actx_bf16_kernel_create(&n, &k, &why) == ACTX_ERROR_INVALID_ARGUMENT && k == NULL);
  n = cast_node(ACTX_ELEM_F32, TO_BFLOAT16, false);
  CHECK(actx_bf16_kernel_create(&n, &k, &why) == ACTX_ERROR_INVALID_ARGUMENT && k == NULL);
  CHECK(why != NULL && strstr(why, "'to'") != NULL);
  /* a kernel made for float32 given bfloat16 */
  n = cast_node(ACTX_ELEM_F32, TO_BFLOAT16, true);
  uint16_t h[4] = {0};
  const actx_tensor wrong = {ACTX_ELEM_BF16, {1, {4}}, h};
  CHECK_FAILS(&n, &wrong, 1, 1, "type");
  /* empty: nothing to do, no data needed */
  const actx_tensor empty = {ACTX_ELEM_F32, {2, {0, 3}}, NULL};
  actx_tensor out[1];
  CHECK(run_node(&n, &empty, 1, out, 1, &test_par, &why) == ACTX_OK);
  CHECK(out[0].shape.rank == 2 && out[0].shape.dims[0] == 0 && out[0].elem == ACTX_ELEM_BF16);
  outputs_free(out, 1);
}

int main(void) {
  refusals();
  every_float();
  if (failures) return 1;
  printf("test_bf16_cast: checks passed\n");
  return 0;
}
