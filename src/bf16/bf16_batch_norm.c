/* bf16_batch_norm.c — BatchNormalization (14, 15) in inference mode on bfloat16: X [N, C, D...]
 * scaled and shifted per channel by the statistics it is given. CNN exports that do not fold it
 * into the Conv before it write one after each Conv (PaddlePaddle's OCR models, older PyTorch
 * exports).
 *
 * Per channel c, in float32 from the widened inputs (scale γ and B β, input_mean μ and
 * input_var σ², each bfloat16 or float32 as the schema allows):
 *   a_c = (1 / sqrtf(σ²_c + ε)) · γ_c    b_c = β_c − μ_c · a_c    y = round(x · a_c + b_c)
 * the arrangement of ORT's float32 kernel (an inverse standard deviation, then one scale and
 * one offset a channel), without fma. NaNs follow the service's rule (actx_nan_rule): x's own
 * NaN first, then the channel's; a variance below −ε makes its channel NaN (sqrt of a negative),
 * as float32 does.
 * X of rank 1 is one channel of N elements (ONNX: "C is assumed to be 1"); the four statistics
 * are 1-D [C]. ε defaults to 1e-5 and must be finite and >= 0. training_mode 1 (which computes
 * the batch's statistics and has the running ones as outputs) is not served; momentum only
 * matters there and is not read. */
#include <math.h>
#include <stdlib.h>

#include "bf16_elementwise.h"

/* BatchNormalization's inputs: X, then the four per-channel statistics. */
enum { BN_X, BN_SCALE, BN_B, BN_MEAN, BN_VAR, BN_INPUTS };

typedef struct bn_state {
  float epsilon;
} bn_state;

static bool stat_elem(actx_elem e) { return e == ACTX_ELEM_BF16 || e == ACTX_ELEM_F32; }

static actx_status bn_create(const actx_bf16_node *node, void **state, const char **why) {
  *state = NULL;
  const actx_bf16_attrs *a = &node->attrs;
  if (node->op != ACTX_BF16_OP_BATCH_NORM) return actx_bf16_fail(why, "not BatchNormalization");
  if (node->input_elems[BN_X] != ACTX_ELEM_BF16)
    return actx_bf16_fail(why, "BatchNormalization's X must be bfloat16");
  for (size_t i = BN_SCALE; i < BN_INPUTS; i++)
    if (!stat_elem(node->input_elems[i]))
      return actx_bf16_fail(why, "BatchNormalization's statistics must be bfloat16 or float");
  if (a->has_training_mode && a->training_mode != 0)
    return actx_bf16_fail(why, "BatchNormalization in training mode is not served");
  bn_state s = {.epsilon = 1e-5f};
  if (a->has_epsilon) {
    if (!(a->epsilon >= 0.0f) || isinf(a->epsilon))
      return actx_bf16_fail(why, "epsilon must be finite and >= 0");
    s.epsilon = a->epsilon;
  }
  bn_state *p = malloc(sizeof *p);
  if (p == NULL) return ACTX_ERROR_OUT_OF_MEMORY;
  *p = s;
  *state = p;
  return ACTX_OK;
}

/* The run's channels C, and X as planes of `inner` contiguous elements, plane p of channel
 * p mod C. */
typedef struct bn_plan {
  int64_t channels, planes, inner;
} bn_plan;

static actx_status bn_plan_make(const actx_tensor *in, size_t n_in, bn_plan *p,
                                const char **why) {
  if (n_in < BN_INPUTS) return actx_bf16_fail(why, "a required input is missing");
  if (in[BN_X].elem != ACTX_ELEM_BF16)
    return actx_bf16_fail(why, "BatchNormalization's X must be bfloat16");
  const actx_shape *x = &in[BN_X].shape;
  if (x->rank < 1) return actx_bf16_fail(why, "BatchNormalization's X must have rank >= 1");
  for (size_t d = 0; d < x->rank; d++)
    if (x->dims[d] < 0) return actx_bf16_fail(why, "negative dimension");
  p->channels = x->rank == 1 ? 1 : x->dims[1];
  p->planes = x->rank == 1 ? 1 : x->dims[0] * x->dims[1];
  p->inner = x->rank == 1 ? x->dims[0] : 1;
  for (size_t d = 2; d < x->rank; d++) p->inner *= x->dims[d];
  for (size_t i = BN_SCALE; i < BN_INPUTS; i++) {
    if (!stat_elem(in[i].elem))
      return actx_bf16_fail(why, "BatchNormalization's statistics must be bfloat16 or float");
    if (in[i].shape.rank != 1 || in[i].shape.dims[0] != p->channels)
      return actx_bf16_fail(why, "BatchNormalization's statistics must be 1-D of X's channels");
  }
  for (size_t i = 0; i < BN_INPUTS; i++)
    if (actx_shape_elements(&in[i].shape) > 0 && in[i].data == NULL)
      return actx_bf16_fail(why, "BatchNormalization input has no data");
  return ACTX_OK;
}

static actx_status bn_shapes(const void *state, const actx_tensor *in, size_t n_in,
                             actx_tensor *out, size_t n_out, const char **why) {
  (void)state;
  bn_plan p;
  const actx_status st = bn_plan_make(in, n_in, &p, why);
  if (st != ACTX_OK) return st;
  if (n_out != 1) return actx_bf16_fail(why, "BatchNormalization has one output here");
  out[0] = (actx_tensor){.elem = ACTX_ELEM_BF16, .shape = in[BN_X].shape};
  return ACTX_OK;
}

static float stat_at(const actx_tensor *t, int64_t c) {
  const unsigned char *p = t->data;
  return t->elem == ACTX_ELEM_F32 ? actx_ld_f32(p + 4 * c) : actx_ld_bf16(p + 2 * c);
}

/* float32 bits of r, or under the service's NaN rule the NaN of a, then of b, where r is one */
static float nan_rule_f(float r, float a, float b) {
  return actx_f32_from_bits(actx_nan_pick(actx_f32_bits(r), actx_f32_bits(a), actx_f32_bits(b)));
}

/* One block: h = round(x · a + b) for the block's ACTX_BLOCK elements at xi, a and b each
 * element's (step 1) or the block's one value (step 0, a constant where this is inlined).
 * Computed and rounded as numbers (a NaN of x, a or b makes the sum a NaN), and a block that
 * turns out to hold a NaN again with the NaN rule (the two agree on every number). */
static inline __attribute__((always_inline)) void bn_block(const unsigned char *xi,
                                                           const float *a, const float *b,
                                                           size_t step, uint16_t *h) {
  uint32_t nan = 0;
  for (size_t j = 0; j < ACTX_BLOCK; j++) {
    const float xf = actx_f32_from_bits((uint32_t)actx_ld_u16(xi + 2 * j) << 16);
    const uint32_t t = actx_f32_bits(xf * a[j * step] + b[j * step]);
    nan |= actx_nan_bit(t);
    h[j] = actx_round_number_bits(t);
  }
  if (nan >> 31)
    for (size_t j = 0; j < ACTX_BLOCK; j++) {
      const float aj = a[j * step], bj = b[j * step];
      const uint32_t xb = (uint32_t)actx_ld_u16(xi + 2 * j) << 16;
      const uint32_t p =
          actx_nan_pick(actx_f32_bits(actx_f32_from_bits(xb) * aj), xb, actx_f32_bits(aj));
      const uint32_t t =
          actx_nan_pick(actx_f32_bits(actx_f32_from_bits(p) + bj), p, actx_f32_bits(bj));
      h[j] = actx_round_bits(t);
    }
}

/* y = round(x · a_c + b_c) over planes [q0, q1) of `inner` elements each (plane q is channel
 * q % channels); x and y may be one tensor (a block is read before it is written). The planes
 * are one run of elements, walked ACTX_BLOCK at a time: a block inside one plane with its a and
 * b, one that crosses planes (MobileNetV3's 7 x 7) with each element's beside it, so that a
 * small plane costs no block of its own. Before, a plane at a time with the NaN rule on every
 * element: a MobileNetV3 twin (27 BatchNormalizations, 224 x 224) ran 1.08x faster after, in
 * one interleaved run on the AMX Xeon, the same bits. */
ACTX_BF16_VECTORISED static void bn_scale_shift(const unsigned char *x, unsigned char *y,
                                                int64_t q0, int64_t q1, int64_t inner,
                                                int64_t channels, const float *a,
                                                const float *b) {
  uint16_t h[ACTX_BLOCK], tmp[ACTX_BLOCK];
  float ab[ACTX_BLOCK], bb[ACTX_BLOCK];
  const int64_t n = (q1 - q0) * inner;
  x += 2 * (size_t)(q0 * inner);
  y += 2 * (size_t)(q0 * inner);
  int64_t q = q0, r = 0; /* the plane of the block's first element, and its place there */
  for (int64_t i = 0; i < n; i += ACTX_BLOCK) {
    const size_t m = n - i < ACTX_BLOCK ? (size_t)(n - i) : ACTX_BLOCK;
    const unsigned char *xi = actx_block_src(x, 1, (size_t)i, m, tmp);
    if ((size_t)(inner - r) >= m) { /* inside one plane */
      const int64_t c = q % channels;
      bn_block(xi, &a[c], &b[c], 0, h);
      if ((r += (int64_t)m) == inner) r = 0, q++;
    } else {
      for (size_t j = 0; j < m;) { /* runs of one plane's elements */
        const int64_t c = q % channels;
        const size_t run = (size_t)(inner - r) < m - j ? (size_t)(inner - r) : m - j;
        for (size_t k = j; k < j + run; k++) ab[k] = a[c], bb[k] = b[c];
        j += run;
        if ((r += (int64_t)run) == inner) r = 0, q++;
      }
      for (size_t j = m; j < ACTX_BLOCK; j++) ab[j] = bb[j] = 0.0f;
      bn_block(xi, ab, bb, 1, h);
    }
    actx_store_block(h, y + 2 * i, m);
  }
}

typedef struct bn_job {
  bn_plan p;
  const unsigned char *x;
  unsigned char *y;
  const float *a, *b; /* a_c, b_c */
} bn_job;

static void bn_planes(const void *ctx, size_t task, int64_t begin, int64_t end) {
  (void)task;
  const bn_job *j = ctx;
  bn_scale_shift(j->x, j->y, begin, end, j->p.inner, j->p.channels, j->a, j->b);
}

#define BN_MIN_ELEMENTS_PER_TASK 16384
#define BN_NS_PER_ELEMENT 0.15 /* estimated: a load, two operations and a rounding an element */

static actx_status bn_run(const void *state, const actx_tensor *in, size_t n_in,
                          actx_tensor *out, size_t n_out, const actx_parallel *par,
                          const char **why) {
  const bn_state *s = state;
  bn_plan p;
  actx_status st = bn_plan_make(in, n_in, &p, why);
  if (st != ACTX_OK) return st;
  if (n_out != 1 || out[0].elem != ACTX_ELEM_BF16 || out[0].shape.rank != in[BN_X].shape.rank)
    return actx_bf16_fail(why, "BatchNormalization output is not the shape of X");
  for (size_t d = 0; d < out[0].shape.rank; d++)
    if (out[0].shape.dims[d] != in[BN_X].shape.dims[d])
      return actx_bf16_fail(why, "BatchNormalization output is not the shape of X");
  if (p.planes == 0 || p.inner == 0) return ACTX_OK;
  if (out[0].data == NULL) return actx_bf16_fail(why, "BatchNormalization output has no data");
  float *ab = malloc(2 * (size_t)p.channels * sizeof *ab);
  if (ab == NULL) return ACTX_ERROR_OUT_OF_MEMORY;
  for (int64_t c = 0; c < p.channels; c++) {
    const float var = stat_at(&in[BN_VAR], c), gamma = stat_at(&in[BN_SCALE], c);
    const float beta = stat_at(&in[BN_B], c), mean = stat_at(&in[BN_MEAN], c);
    const float q = nan_rule_f(var + s->epsilon, var, var);
    const float root = nan_rule_f(sqrtf(q), q, q);
    const float inv = nan_rule_f(1.0f / root, root, root);
    const float a = nan_rule_f(inv * gamma, inv, gamma);
    const float m = nan_rule_f(mean * a, mean, a);
    ab[c] = a;
    ab[p.channels + c] = nan_rule_f(beta - m, beta, m);
  }
  const bn_job job = {p, in[BN_X].data, out[0].data, ab, ab + p.channels};
  const size_t tasks = actx_bf16_tasks(par, p.planes * p.inner, p.planes,
                                       BN_MIN_ELEMENTS_PER_TASK, BN_NS_PER_ELEMENT);
  actx_bf16_run_split(par, tasks, p.planes, bn_planes, &job);
  free(ab);
  return ACTX_OK;
}

static void bn_destroy(void *state) { free(state); }

const actx_bf16_family actx_bf16_family_batch_norm = {
    .create = bn_create,
    .pack = NULL,
    .shapes = bn_shapes,
    .run = bn_run,
    .destroy = bn_destroy,
};
