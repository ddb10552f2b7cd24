/* The cast family: Cast from float32 to bfloat16, the input edge of every bfloat16 twin. ORT's
 * CPU EP runs it itself, one element at a time (measured per node on an AVX-512 Xeon, 1 thread:
 * 673 us for 1 Mi elements against 274 here, 97 against 47 at 128 Ki, the same under 16 Ki);
 * here at memory speed, with ORT 1.30's bits: rounded to nearest even (subnormals and overflow to
 * infinity included), and a NaN becomes the quiet NaN of its sign, 0x7FC0 | sign, its payload
 * dropped (as Eigen's bfloat16 conversion, which ORT's Cast uses). Checked against the rule on
 * every float32 (test_bf16_cast) and against ORT itself (test_ep_bf16_session).
 *
 * The way back, bfloat16 to float32, stays ORT's: it only shifts bits, and ORT's was measured as
 * fast as ours (0.96-1.00 from 128 to 1 Mi elements). Other casts are ORT's too. */
#include <stdlib.h>
#include <string.h>

#include "bf16_family.h"
#include "bf16_round.h"

/* ONNX TensorProto's bfloat16, as Cast's `to` */
#define ONNX_BFLOAT16 16

static actx_status cast_create(const actx_bf16_node *node, void **out, const char **why) {
  *out = NULL;
  if (node->op != ACTX_BF16_OP_CAST) return actx_bf16_fail(why, "not a Cast");
  if (!node->attrs.has_to) return actx_bf16_fail(why, "Cast has no 'to'");
  if (node->input_elems[0] != ACTX_ELEM_F32 || node->attrs.to != ONNX_BFLOAT16)
    return actx_bf16_fail(why, "Cast: only float32 -> bfloat16 is served");
  return ACTX_OK;
}

static void cast_destroy(void *state) { (void)state; }

static actx_status cast_shapes(const void *state, const actx_tensor *in, size_t n_in,
                               actx_tensor *out, size_t n_out, const char **why) {
  (void)state;
  if (n_in != 1 || n_out != 1) return actx_bf16_fail(why, "Cast: one input and one output");
  if (in[0].elem != ACTX_ELEM_F32) return actx_bf16_fail(why, "Cast: the input type is not float32");
  out[0].elem = ACTX_ELEM_BF16;
  out[0].shape = in[0].shape;
  return ACTX_OK;
}

/* Elements a task at least, and their speed (for actx_bf16_tasks's rule) */
#define CAST_MIN_PER_TASK 32768
#define CAST_NS_PER_ELEMENT 0.05

typedef struct cast_job {
  const float *x;
  uint16_t *y;
} cast_job;

/* ORT's NaN: the quiet NaN of the input's sign */
static void canonical_nans(const float *x, uint16_t *y, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    uint32_t u;
    memcpy(&u, &x[i], sizeof u);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) y[i] = (uint16_t)(((u >> 16) & 0x8000u) | 0x7FC0u);
  }
}

static void cast_range(const void *ctx, size_t task, int64_t begin, int64_t end) {
  (void)task;
  const cast_job *j = ctx;
  /* the rounding pass says whether the span holds a NaN (or an infinity): only then a second */
  if (actx_bf16_round_span(j->x + begin, j->y + begin, (size_t)(end - begin)) != 0)
    canonical_nans(j->x + begin, j->y + begin, end - begin);
}

static actx_status cast_run(const void *state, const actx_tensor *in, size_t n_in,
                            actx_tensor *out, size_t n_out, const actx_parallel *par,
                            const char **why) {
  actx_tensor want;
  actx_status st = cast_shapes(state, in, n_in, &want, n_out, why);
  if (st != ACTX_OK) return st;
  if (out[0].elem != want.elem || out[0].shape.rank != want.shape.rank ||
      memcmp(out[0].shape.dims, want.shape.dims, want.shape.rank * sizeof want.shape.dims[0]) != 0)
    return actx_bf16_fail(why, "Cast: the output is not the input's shape in the cast type");
  const int64_t n = actx_shape_elements(&want.shape);
  if (n == 0) return ACTX_OK;
  if (in[0].data == NULL || out[0].data == NULL) return actx_bf16_fail(why, "Cast: NULL data");
  /* in == out cannot be: the element sizes differ; any other overlap is the caller's error */
  const cast_job job = {in[0].data, out[0].data};
  const size_t tasks = actx_bf16_tasks(par, n, n, CAST_MIN_PER_TASK, CAST_NS_PER_ELEMENT);
  actx_bf16_run_split(par, tasks, n, cast_range, &job);
  return ACTX_OK;
}

const actx_bf16_family actx_bf16_family_cast = {
    .create = cast_create,
    .pack = NULL,
    .shapes = cast_shapes,
    .run = cast_run,
    .destroy = cast_destroy,
};
