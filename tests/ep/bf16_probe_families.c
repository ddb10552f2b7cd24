/* Test-only families of the bfloat16 service, linked into a test build of the EP
 * (actx_ep_bf16_probe) in place of src/bf16's, so that the EP's bfloat16 plumbing (claim,
 * registry, PrePackWeight, Compute, ORT's pool) is tested whichever real families exist yet.
 * Relu (unary) and Add / Mul (binary, numpy broadcasting) only, by the service's contract:
 * widen, compute in float32, round once. The binary family keeps a copy of a constant input 1
 * (packed, so ORT may free its own) and, when ACTX_BF16_PROBE_TRACE is set, says on stderr how
 * the run then receives that input. Gemm, MatMul, Conv, Resize and the reductions are made only
 * with the attributes test_ep_bf16_attrs.c sets (and never run); every other op refuses, as
 * src/bf16/bf16_unserved.c does. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bf16_family.h"
#include "bf16_probe.h"
#include "half.h"

static actx_status unserved(const actx_bf16_node *node, void **state, const char **why) {
  (void)node;
  *state = NULL;
  return actx_bf16_fail(why, "operator family not yet served in bfloat16");
}

#define UNSERVED(fam) const actx_bf16_family actx_bf16_family_##fam = {.create = unserved};
UNSERVED(compare)
UNSERVED(softmax)
UNSERVED(norm)
UNSERVED(batch_norm)
UNSERVED(pool)
UNSERVED(layout)
UNSERVED(cast)

/* ---- echo: the attributes test_ep_bf16_attrs.c sets, checked as the reader gives them ----- */

/* Gemm, Conv, Resize and ReduceMean nodes are made only when every attribute reads as the test
 * set it (PROBE_* in bf16_probe.h) and every other one as unset, but for the schema defaults
 * ORT writes into a node as it resolves the graph (so has_ means set or defaulted): the claim's
 * read (OrtNode) and the kernel's (OrtKernelInfo) each pass through here. They never run. */
static bool ints_are(const int64_t *v, size_t n, const int64_t *want, size_t n_want) {
  return n == n_want && memcmp(v, want, n * sizeof *v) == 0;
}

static const char *echo_check(const actx_bf16_node *node) {
  const actx_bf16_attrs *a = &node->attrs;
  actx_bf16_attrs set = {0}; /* the has_ flags the test sets */
  switch (node->op) {
    case ACTX_BF16_OP_GEMM:
      if (a->alpha != PROBE_GEMM_ALPHA || a->beta != PROBE_GEMM_BETA || a->trans_a != 1 ||
          a->trans_b != 0)
        return "Gemm attributes misread";
      if (node->n_inputs != 3 || !node->input_present[1] || node->input_present[2])
        return "Gemm inputs misread (C is left out)";
      set.has_alpha = set.has_beta = set.has_trans_a = set.has_trans_b = true;
      break;
    case ACTX_BF16_OP_CONV: {
      static const int64_t strides[] = PROBE_CONV_STRIDES, pads[] = PROBE_CONV_PADS,
                           dilations[] = PROBE_CONV_DILATIONS, kernel[] = {3, 3};
      if (a->group != 2 || !ints_are(a->strides, a->n_strides, strides, 2) ||
          !ints_are(a->pads, a->n_pads, pads, 4) ||
          !ints_are(a->dilations, a->n_dilations, dilations, 2) ||
          !ints_are(a->kernel_shape, a->n_kernel_shape, kernel, 2) ||
          strcmp(a->auto_pad, "NOTSET") != 0)
        return "Conv attributes misread";
      set.has_group = set.has_strides = set.has_pads = set.has_dilations = true;
      set.has_kernel_shape = set.has_auto_pad = true;
      break;
    }
    case ACTX_BF16_OP_RESIZE:
      if (strcmp(a->mode, "linear") != 0 || strcmp(a->coordinate_mode, "align_corners") != 0 ||
          strcmp(a->nearest_mode, "floor") != 0 || a->cubic_coeff_a != PROBE_RESIZE_CUBIC ||
          a->exclude_outside != 1 || a->extrapolation_value != PROBE_RESIZE_EXTRAPOLATION ||
          a->antialias != 0)
        return "Resize attributes misread";
      if (node->input_present[1] || !node->input_present[2] ||
          node->input_elems[2] != ACTX_ELEM_F32)
        return "Resize inputs misread (roi left out, float scales)";
      set.has_mode = set.has_coordinate_mode = set.has_nearest_mode = true;
      set.has_cubic_coeff_a = set.has_exclude_outside = set.has_extrapolation_value = true;
      set.has_antialias = true;
      /* unset, and ORT fills in the schema's default as it resolves the graph */
      if (strcmp(a->keep_aspect_ratio_policy, "stretch") != 0)
        return "Resize's keep_aspect_ratio_policy is not ORT's default";
      set.has_keep_aspect_ratio_policy = true;
      break;
    case ACTX_BF16_OP_REDUCE_MEAN: {
      static const int64_t axes[] = PROBE_REDUCE_AXES;
      if (!ints_are(a->axes, a->n_axes, axes, 2) || a->keepdims != 0)
        return "ReduceMean attributes misread";
      set.has_axes = set.has_keepdims = true;
      break;
    }
    default: return "operator not served by the probe";
  }
  /* every has_ flag the test did not set is false (the flags are declared together) */
  const size_t first = offsetof(actx_bf16_attrs, has_axis),
               end = offsetof(actx_bf16_attrs, has_keep_aspect_ratio_policy) + sizeof(bool);
  if (memcmp((const char *)a + first, (const char *)&set + first, end - first) != 0)
    return "an attribute the node does not set reads as set, or one it sets as unset";
  return NULL;
}

static actx_status echo_create(const actx_bf16_node *node, void **state, const char **why) {
  *state = NULL;
  const char *wrong = echo_check(node);
  if (wrong != NULL) {
    if (getenv("ACTX_BF16_PROBE_TRACE") != NULL) fprintf(stderr, "probe: %s\n", wrong);
    return actx_bf16_fail(why, wrong);
  }
  return ACTX_OK;
}

static actx_status echo_shapes(const void *state, const actx_tensor *in, size_t n_in,
                               actx_tensor *out, size_t n_out, const char **why) {
  (void)state, (void)in, (void)n_in, (void)out, (void)n_out;
  return actx_bf16_fail(why, "the probe's attribute echo does not run");
}

static actx_status echo_run(const void *state, const actx_tensor *in, size_t n_in,
                            actx_tensor *out, size_t n_out, const actx_parallel *par,
                            const char **why) {
  (void)par;
  return echo_shapes(state, in, n_in, out, n_out, why);
}

static void echo_destroy(void *state) { (void)state; }

#define ECHO(fam)                                                                        \
  const actx_bf16_family actx_bf16_family_##fam = {echo_create, NULL, echo_shapes, echo_run, \
                                                   echo_destroy, NULL, NULL};
ECHO(matmul)
ECHO(conv)
ECHO(resize)
ECHO(reduce)

typedef struct probe {
  actx_bf16_op op;
  actx_tensor packed; /* a copy of constant input 1; data NULL when none */
} probe;

static actx_status probe_create(const actx_bf16_node *node, void **state, const char **why) {
  *state = NULL;
  if (node->op != ACTX_BF16_OP_RELU && node->op != ACTX_BF16_OP_ADD &&
      node->op != ACTX_BF16_OP_MUL)
    return actx_bf16_fail(why, "operator not served by the probe");
  /* no element type check: the EP's claim alone must keep a float32 Add ORT's, and
   * test_ep_bf16_session checks that it does */
  probe *p = calloc(1, sizeof *p);
  if (p == NULL) return ACTX_ERROR_OUT_OF_MEMORY;
  p->op = node->op;
  *state = p;
  return ACTX_OK;
}

static actx_status probe_pack(void *state, size_t input, const actx_tensor *value, bool *packed,
                              const char **why) {
  probe *p = state;
  *packed = false;
  if (p->op == ACTX_BF16_OP_RELU || input != 1 || p->packed.data != NULL) return ACTX_OK;
  if (value->elem != ACTX_ELEM_BF16) return actx_bf16_fail(why, "not bfloat16");
  const size_t bytes = (size_t)actx_shape_elements(&value->shape) * 2;
  p->packed = *value;
  p->packed.data = malloc(bytes ? bytes : 1);
  if (p->packed.data == NULL) return ACTX_ERROR_OUT_OF_MEMORY;
  if (bytes) memcpy(p->packed.data, value->data, bytes);
  *packed = true;
  return ACTX_OK;
}

/* input 1 as the kernel uses it: the packed copy when ORT freed (or still passes) its own */
static const actx_tensor *input_b(const probe *p, const actx_tensor *in) {
  if (p->packed.data == NULL) return &in[1];
  if (getenv("ACTX_BF16_PROBE_TRACE") != NULL)
    fprintf(stderr, "probe: packed input 1 arrives %s\n",
            in[1].elem == ACTX_ELEM_COUNT ? "absent" : "as ORT's original");
  return &p->packed;
}

static actx_status probe_shapes(const void *state, const actx_tensor *in, size_t n_in,
                                actx_tensor *out, size_t n_out, const char **why) {
  const probe *p = state;
  if (n_out != 1 || n_in < 1) return actx_bf16_fail(why, "arity");
  out[0].elem = ACTX_ELEM_BF16;
  out[0].data = NULL;
  if (p->op == ACTX_BF16_OP_RELU) {
    out[0].shape = in[0].shape;
    return ACTX_OK;
  }
  if (!actx_shape_broadcast(&in[0].shape, &input_b(p, in)->shape, &out[0].shape))
    return actx_bf16_fail(why, "shapes do not broadcast");
  return ACTX_OK;
}

/* the element of a broadcast input at output index o */
static size_t source_index(const actx_shape *in, const actx_shape *out, size_t o) {
  size_t index = 0, stride = 1;
  for (size_t d = out->rank; d-- > 0;) {
    const size_t coord = o % (size_t)out->dims[d];
    o /= (size_t)out->dims[d];
    const size_t k = d + in->rank - out->rank; /* in's dimension, when d >= out->rank - in->rank */
    if (d + in->rank >= out->rank) {
      if (in->dims[k] != 1) index += coord * stride;
      stride *= (size_t)in->dims[k];
    }
  }
  return index;
}

typedef struct run_ctx {
  const probe *p;
  const actx_tensor *a, *b;
  actx_tensor *y;
  size_t n, per_task;
} run_ctx;

static void run_task(void *ctx, size_t t) {
  const run_ctx *c = ctx;
  const uint16_t *a = c->a->data;
  uint16_t *y = c->y->data;
  const size_t end = (t + 1) * c->per_task < c->n ? (t + 1) * c->per_task : c->n;
  for (size_t o = t * c->per_task; o < end; o++) {
    const float x = actx_bf16_to_f32(a[source_index(&c->a->shape, &c->y->shape, o)]);
    float r;
    if (c->p->op == ACTX_BF16_OP_RELU) {
      r = x > 0.0f ? x : 0.0f;
    } else {
      const uint16_t *b = c->b->data;
      const float v = actx_bf16_to_f32(b[source_index(&c->b->shape, &c->y->shape, o)]);
      r = c->p->op == ACTX_BF16_OP_ADD ? x + v : x * v;
    }
    y[o] = actx_f32_to_bf16(r);
  }
}

static actx_status probe_run(const void *state, const actx_tensor *in, size_t n_in,
                             actx_tensor *out, size_t n_out, const actx_parallel *par,
                             const char **why) {
  const probe *p = state;
  (void)n_in;
  (void)n_out;
  run_ctx c = {p, &in[0], p->op == ACTX_BF16_OP_RELU ? NULL : input_b(p, in), &out[0],
               (size_t)actx_shape_elements(&out[0].shape), 0};
  if (c.n == 0) return ACTX_OK;
  if (c.a->data == NULL || (c.b != NULL && c.b->data == NULL))
    return actx_bf16_fail(why, "an input has no data");
  const size_t tasks = par != NULL && par->parallel_for != NULL && c.n >= 4096 ? 4 : 1;
  c.per_task = (c.n + tasks - 1) / tasks;
  if (tasks > 1)
    par->parallel_for(par->runner_ctx, run_task, &c, tasks);
  else
    run_task(&c, 0);
  return ACTX_OK;
}

static void probe_destroy(void *state) {
  probe *p = state;
  if (p != NULL) free(p->packed.data);
  free(p);
}

const actx_bf16_family actx_bf16_family_unary = {probe_create, NULL, probe_shapes, probe_run,
                                                 probe_destroy, NULL, NULL};
const actx_bf16_family actx_bf16_family_binary = {probe_create, probe_pack, probe_shapes,
                                                  probe_run, probe_destroy, NULL, NULL};
