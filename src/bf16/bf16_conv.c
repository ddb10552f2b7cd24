/* The conv family: ONNX Conv (opset 22) on X [N, C, spatial...] (1-D, 2-D, 3-D) and weights
 * W [M, C / group, kernel...], optional bias B [M]; attributes auto_pad (NOTSET, SAME_UPPER,
 * SAME_LOWER, VALID), dilations, group, kernel_shape, pads, strides. oneDNN (bf16_dnnl.h)
 * computes the convolution and adds the bias in float32 and rounds once (actx_dnnl_run_rounded).
 *
 * ConvTranspose (22) too, the same way (oneDNN's deconvolution): W [C, M / group, kernel...],
 * and output_padding and output_shape. Its output size and pads are ORT 1.30-1.32's float32
 * kernel's (measured): full = (in - 1) · stride + (kernel - 1) · dilation + 1 + output_padding
 * and out = full - pads; with output_shape (one a spatial dimension) the total pad is
 * max(0, full - output_shape) and out = output_shape; with a SAME auto_pad the total pad is
 * max(0, full - in · stride) and out = full - it; SAME_UPPER puts an odd total's extra pad at
 * the end, output_shape and SAME_LOWER at the start; VALID pads nothing. Refused as ORT refuses
 * them: output_padding not below max(stride, dilation), and an output that padded back by its
 * pads runs a stride or more past what the taps reach. A transposed run is not split into
 * slabs (one oneDNN run on the calling thread).
 *
 * A constant W is reordered once at pack time into oneDNN's preferred (blocked) layout, and a
 * constant B widened to float32; the kernel holds those copies only. The image size is known
 * only at run time, so ops are made per input shape and cached in the kernel. */
#include <stdlib.h>
#include <string.h>

#include "bf16_conv_nonfinite.h"
#include "bf16_dnnl.h"
#include "bf16_elementwise.h" /* actx_dims_elements */
#include "bf16_family.h"
#include "half.h"
#include "lut.h"

typedef enum auto_pad { PAD_NOTSET, PAD_SAME_UPPER, PAD_SAME_LOWER, PAD_VALID } auto_pad;

/* The largest stride, dilation, pad, output padding or output size served: with tensor
 * dimensions below 2^48, no size computed from them overflows. */
#define CONV_MAX_ATTRIBUTE ((int64_t)1 << 24)

typedef struct conv_state {
  actx_bf16_attrs attrs; /* as the node has them; checked against the spatial rank per run */
  bool transposed;       /* ConvTranspose */
  auto_pad pad_mode;
  int64_t group;
  bool has_bias;
  bool w_packed;
  actx_shape w_shape;
  actx_dnnl_cache *packed_ops;
  actx_dnnl_cache *ops; /* ops of a runtime W */
  float *bias;          /* a constant B, widened; NULL when B comes per run */
  int64_t bias_len;
  const uint16_t *activation; /* a fused activation's table (bf16.h); NULL: none */
} conv_state;

static actx_status create(const actx_bf16_node *node, void **out, const char **why) {
  *out = NULL;
  for (size_t i = 0; i < node->n_inputs; i++)
    if (node->input_present[i] && node->input_elems[i] != ACTX_ELEM_BF16)
      return actx_bf16_fail(why, "Conv: every input must be bfloat16");
  const actx_bf16_attrs *a = &node->attrs;
  const bool transposed = node->op == ACTX_BF16_OP_CONV_TRANSPOSE;
  if (!transposed && (a->has_output_padding || a->has_output_shape))
    return actx_bf16_fail(why, "Conv has no output_padding or output_shape");
  for (size_t i = 0; a->has_output_padding && i < a->n_output_padding; i++) {
    if (a->output_padding[i] < 0)
      return actx_bf16_fail(why, "ConvTranspose: output_padding must not be negative");
    /* ORT's rule */
    const int64_t st = a->has_strides && i < a->n_strides ? a->strides[i] : 1;
    const int64_t d = a->has_dilations && i < a->n_dilations ? a->dilations[i] : 1;
    if (a->output_padding[i] >= (st > d ? st : d))
      return actx_bf16_fail(why, "ConvTranspose: output_padding must be less than the stride "
                                 "or the dilation");
  }
  for (size_t i = 0; a->has_output_shape && i < a->n_output_shape; i++)
    if (a->output_shape[i] < 1)
      return actx_bf16_fail(why, "ConvTranspose: output_shape must be positive");
  auto_pad mode = PAD_NOTSET;
  if (a->has_auto_pad && a->auto_pad[0] != '\0' && strcmp(a->auto_pad, "NOTSET") != 0) {
    if (strcmp(a->auto_pad, "SAME_UPPER") == 0) mode = PAD_SAME_UPPER;
    else if (strcmp(a->auto_pad, "SAME_LOWER") == 0) mode = PAD_SAME_LOWER;
    else if (strcmp(a->auto_pad, "VALID") == 0) mode = PAD_VALID;
    else
      return actx_bf16_fail(why, "Conv: auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or "
                                 "VALID");
  }
  if (a->has_group && a->group < 1) return actx_bf16_fail(why, "Conv: group must be positive");
  for (size_t i = 0; a->has_strides && i < a->n_strides; i++)
    if (a->strides[i] < 1) return actx_bf16_fail(why, "Conv: strides must be positive");
  for (size_t i = 0; a->has_dilations && i < a->n_dilations; i++)
    if (a->dilations[i] < 1) return actx_bf16_fail(why, "Conv: dilations must be positive");
  for (size_t i = 0; a->has_pads && i < a->n_pads; i++)
    if (a->pads[i] < 0) return actx_bf16_fail(why, "Conv: pads must not be negative");
  for (size_t i = 0; a->has_kernel_shape && i < a->n_kernel_shape; i++)
    if (a->kernel_shape[i] < 1) return actx_bf16_fail(why, "Conv: kernel_shape must be positive");
  /* so that sizes computed from them cannot overflow (tensor dims are below 2^48) */
  const struct {
    bool has;
    size_t n;
    const int64_t *v;
  } sizes[] = {{a->has_strides, a->n_strides, a->strides},
               {a->has_dilations, a->n_dilations, a->dilations},
               {a->has_pads, a->n_pads, a->pads},
               {a->has_output_padding, a->n_output_padding, a->output_padding},
               {a->has_output_shape, a->n_output_shape, a->output_shape}};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
    for (size_t i = 0; sizes[k].has && i < sizes[k].n; i++)
      if (sizes[k].v[i] > CONV_MAX_ATTRIBUTE)
        return actx_bf16_fail(why, "Conv: strides, dilations, pads, output_padding or "
                                   "output_shape above 2^24");
  if (!actx_dnnl_available()) {
    *why = "Conv: oneDNN not available in this build";
    return ACTX_ERROR_UNSUPPORTED;
  }
  conv_state *s = calloc(1, sizeof *s);
  if (s == NULL) return ACTX_ERROR_OUT_OF_MEMORY;
  s->attrs = *a;
  s->transposed = transposed;
  s->pad_mode = mode;
  s->group = a->has_group ? a->group : 1;
  s->has_bias = node->n_inputs > 2 && node->input_present[2];
  s->ops = actx_dnnl_cache_create(NULL);
  if (s->ops == NULL) {
    free(s);
    return ACTX_ERROR_OUT_OF_MEMORY;
  }
  *out = s;
  return ACTX_OK;
}

static void destroy(void *state) {
  conv_state *s = state;
  if (s == NULL) return;
  actx_dnnl_cache_destroy(s->ops);
  actx_dnnl_cache_destroy(s->packed_ops);
  free(s->bias);
  free(s);
}

/* ---- shapes -------------------------------------------------------------------------------- */

/* W's facts alone: its rank, and that kernel_shape and the attributes' lengths agree. */
static actx_status check_weights(const conv_state *s, const actx_shape *w, const char **why) {
  if (w->rank < 3 || w->rank > 2 + ACTX_BF16_MAX_SPATIAL)
    return actx_bf16_fail(why, "Conv: W must have 3 to 5 dimensions [M, C / group, kernel...]");
  const size_t spatial = w->rank - 2;
  const actx_bf16_attrs *a = &s->attrs;
  if ((a->has_strides && a->n_strides != spatial) ||
      (a->has_dilations && a->n_dilations != spatial) ||
      (a->has_kernel_shape && a->n_kernel_shape != spatial) ||
      (a->has_pads && s->pad_mode == PAD_NOTSET && a->n_pads != 2 * spatial) ||
      (a->has_output_padding && a->n_output_padding != spatial) ||
      (a->has_output_shape && a->n_output_shape != spatial))
    return actx_bf16_fail(why, "Conv: strides, dilations, kernel_shape, pads, output_padding or "
                               "output_shape do not have one value per spatial dimension of W");
  for (size_t i = 0; i < spatial; i++)
    if (w->dims[2 + i] < 1)
      return actx_bf16_fail(why, "Conv: W's kernel dimensions must be positive");
  for (size_t i = 0; a->has_kernel_shape && i < spatial; i++)
    if (a->kernel_shape[i] != w->dims[2 + i])
      return actx_bf16_fail(why, "Conv: kernel_shape differs from W's spatial dimensions");
  if (w->dims[0] % s->group != 0)
    return actx_bf16_fail(why, s->transposed ? "ConvTranspose: group does not divide W's input "
                                               "channels C"
                                             : "Conv: group does not divide W's output channels M");
  return ACTX_OK;
}

/* ConvTranspose's output size and pads along spatial dimension i (the header comment). */
static actx_status transposed_dim(const conv_state *s, size_t i, int64_t in, int64_t extent,
                                  actx_dnnl_conv_shape *cs, const char **why) {
  const actx_bf16_attrs *a = &s->attrs;
  const int64_t st = cs->strides[i];
  const int64_t reach = (in - 1) * st + extent; /* the outputs taps reach */
  const int64_t full = reach + (a->has_output_padding ? a->output_padding[i] : 0);
  const bool same = s->pad_mode == PAD_SAME_UPPER || s->pad_mode == PAD_SAME_LOWER;
  int64_t lo = 0, hi = 0, out;
  if (a->has_output_shape || same) {
    const int64_t target = a->has_output_shape ? a->output_shape[i] : in * st;
    const int64_t total = full > target ? full - target : 0;
    lo = s->pad_mode == PAD_SAME_UPPER ? total / 2 : total - total / 2;
    hi = total - lo;
    out = a->has_output_shape ? target : full - total;
  } else {
    if (s->pad_mode == PAD_NOTSET && a->has_pads) {
      lo = a->pads[i];
      hi = a->pads[cs->spatial + i];
    }
    out = full - lo - hi;
  }
  if (out < 1) return actx_bf16_fail(why, "ConvTranspose: the output would be empty");
  /* ORT's check: the padded output, read back as a convolution, gives the input's size */
  if (out + lo + hi - reach >= st)
    return actx_bf16_fail(why, "ConvTranspose: output_shape or output_padding is larger than "
                               "the input's size allows");
  cs->out[i] = out;
  cs->pads_begin[i] = lo;
  /* oneDNN has no output padding: outputs past those the taps reach (output_padding, an
   * output_shape beyond them, within a stride) are a negative end pad, which run() computes
   * apart (reached_part) */
  cs->pads_end[i] = reach - lo - out;
  return ACTX_OK;
}

/* The convolution of X's shape (batch, channels, in...) by W: pads and output size. */
static actx_status conv_shape_of(const conv_state *s, const actx_shape *w, int64_t batch,
                                 int64_t channels, const int64_t *in, actx_dnnl_conv_shape *cs,
                                 const char **why) {
  memset(cs, 0, sizeof *cs);
  const actx_bf16_attrs *a = &s->attrs;
  cs->spatial = w->rank - 2;
  cs->batch = batch;
  cs->channels = channels;
  cs->out_channels = s->transposed ? w->dims[1] * s->group : w->dims[0];
  cs->group = s->group;
  cs->bias = s->has_bias;
  cs->transposed = s->transposed;
  for (size_t i = 0; i < cs->spatial; i++) {
    const int64_t k = w->dims[2 + i];
    const int64_t st = a->has_strides ? a->strides[i] : 1;
    const int64_t d = a->has_dilations ? a->dilations[i] : 1;
    const int64_t extent = (k - 1) * d + 1;
    if (s->transposed) {
      cs->in[i] = in[i];
      cs->kernel[i] = k;
      cs->strides[i] = st;
      cs->dilations[i] = d;
      const actx_status status = transposed_dim(s, i, in[i], extent, cs, why);
      if (status != ACTX_OK) return status;
      continue;
    }
    int64_t lo = 0, hi = 0, out;
    if (s->pad_mode == PAD_SAME_UPPER || s->pad_mode == PAD_SAME_LOWER) {
      out = (in[i] + st - 1) / st;
      int64_t total = (out - 1) * st + extent - in[i];
      if (total < 0) total = 0;
      lo = s->pad_mode == PAD_SAME_UPPER ? total / 2 : total - total / 2;
      hi = total - lo;
    } else {
      if (s->pad_mode == PAD_NOTSET && a->has_pads) {
        lo = a->pads[i];
        hi = a->pads[cs->spatial + i];
      }
      const int64_t span = in[i] + lo + hi - extent;
      if (span < 0) return actx_bf16_fail(why, "Conv: the kernel is larger than the padded input");
      out = span / st + 1;
    }
    cs->in[i] = in[i];
    cs->kernel[i] = k;
    cs->out[i] = out;
    cs->strides[i] = st;
    cs->dilations[i] = d;
    cs->pads_begin[i] = lo;
    cs->pads_end[i] = hi;
  }
  return ACTX_OK;
}

static const actx_shape *w_shape_of(const conv_state *s, const actx_tensor *in) {
  return s->w_packed ? &s->w_shape : &in[1].shape;
}

static actx_status problem_of(const conv_state *s, const actx_tensor *in, size_t n_in,
                              actx_dnnl_conv_shape *cs, actx_shape *y, const char **why) {
  if (n_in < 2) return actx_bf16_fail(why, "Conv: too few inputs");
  const actx_shape *x = &in[0].shape, *w = w_shape_of(s, in);
  if (in[0].elem != ACTX_ELEM_BF16 || (!s->w_packed && in[1].elem != ACTX_ELEM_BF16))
    return actx_bf16_fail(why, "Conv: X and W must be bfloat16");
  actx_status st = check_weights(s, w, why);
  if (st != ACTX_OK) return st;
  if (x->rank != w->rank) return actx_bf16_fail(why, "Conv: X and W differ in rank");
  if (s->transposed ? x->dims[1] != w->dims[0] : x->dims[1] != w->dims[1] * s->group)
    return actx_bf16_fail(why, s->transposed ? "ConvTranspose: X's channels are not W's C"
                                             : "Conv: X's channels are not W's C / group times "
                                               "group");
  const int64_t m = s->transposed ? w->dims[1] * s->group : w->dims[0];
  if (s->bias != NULL && s->bias_len != m)
    return actx_bf16_fail(why, "Conv: B must be bfloat16 [M]");
  if (s->has_bias && s->bias == NULL) {
    if (n_in < 3 || in[2].elem != ACTX_ELEM_BF16 || in[2].shape.rank != 1 ||
        in[2].shape.dims[0] != m)
      return actx_bf16_fail(why, "Conv: B must be bfloat16 [M]");
  }
  for (size_t i = 2; s->transposed && i < x->rank; i++)
    if (x->dims[i] < 1)
      return actx_bf16_fail(why, "ConvTranspose: X's spatial sizes must be positive");
  st = conv_shape_of(s, w, x->dims[0], x->dims[1], x->dims + 2, cs, why);
  if (st != ACTX_OK) return st;
  *y = (actx_shape){.rank = x->rank, .dims = {x->dims[0], m}};
  for (size_t i = 0; i < cs->spatial; i++) y->dims[2 + i] = cs->out[i];
  int64_t count = 0;
  if (!actx_dims_elements(y->rank, y->dims, &count))
    return actx_bf16_fail(why, "Conv: the output is too large");
  return ACTX_OK;
}

static actx_status shapes(const void *state, const actx_tensor *in, size_t n_in,
                          actx_tensor *out, size_t n_out, const char **why) {
  actx_dnnl_conv_shape cs;
  actx_shape y;
  const actx_status st = problem_of(state, in, n_in, &cs, &y, why);
  if (st != ACTX_OK) return st;
  if (n_out < 1) return actx_bf16_fail(why, "Conv: no output");
  out[0] = (actx_tensor){.elem = ACTX_ELEM_BF16, .shape = y, .data = out[0].data};
  return ACTX_OK;
}

/* ---- packing ------------------------------------------------------------------------------- */

static actx_status pack(void *state, size_t input, const actx_tensor *value, bool *packed,
                        const char **why) {
  conv_state *s = state;
  *packed = false;
  if (value->elem != ACTX_ELEM_BF16) return ACTX_OK;
  if (input == 2 && s->has_bias && s->bias == NULL) {
    if (value->shape.rank != 1) return actx_bf16_fail(why, "Conv: B must be bfloat16 [M]");
    const size_t n = (size_t)value->shape.dims[0];
    if (n > 0 && value->data == NULL) return actx_bf16_fail(why, "Conv: B's data is NULL");
    if (s->w_packed && (int64_t)n != (s->transposed ? s->w_shape.dims[1] * s->group
                                                     : s->w_shape.dims[0]))
      return actx_bf16_fail(why, "Conv: B must be bfloat16 [M]");
    s->bias = malloc(n > 0 ? n * sizeof *s->bias : 1);
    if (s->bias == NULL) return ACTX_ERROR_OUT_OF_MEMORY;
    const uint16_t *b = value->data;
    for (size_t i = 0; i < n; i++) s->bias[i] = actx_bf16_to_f32(b[i]);
    s->bias_len = (int64_t)n;
    *packed = true;
    return ACTX_OK;
  }
  if (input != 1 || s->w_packed) return ACTX_OK;
  const actx_shape *w = &value->shape;
  actx_status st = check_weights(s, w, why);
  if (st != ACTX_OK) return st;
  if (actx_shape_elements(w) == 0) return ACTX_OK; /* nothing to reorder: runs handle it */
  if (value->data == NULL) return actx_bf16_fail(why, "Conv: W's data is NULL");
  /* oneDNN picks W's layout for a shape; the image size is not known yet: take one that gives
   * a Conv 16 outputs a dimension, a ConvTranspose 16 inputs, with no pads, output_padding or
   * output_shape, which could not hold at that size (other shapes use the same layout, or
   * reorder the weights once for their own) */
  int64_t in[ACTX_BF16_MAX_SPATIAL];
  conv_state packing = *s;
  actx_bf16_attrs *a = &packing.attrs;
  if (s->transposed) {
    a->has_pads = a->has_output_padding = a->has_output_shape = false;
    packing.pad_mode = PAD_VALID;
  }
  for (size_t i = 0; i + 2 < w->rank; i++) {
    const int64_t st_i = a->has_strides ? a->strides[i] : 1;
    const int64_t d = a->has_dilations ? a->dilations[i] : 1;
    in[i] = s->transposed ? 16 : (w->dims[2 + i] - 1) * d + 1 + 15 * st_i;
  }
  actx_dnnl_conv_shape cs;
  st = conv_shape_of(&packing, w, 1, s->transposed ? w->dims[0] : w->dims[1] * s->group, in,
                     &cs, why);
  if (st != ACTX_OK) return st;
  actx_dnnl_weights *packed_w = NULL;
  st = actx_dnnl_conv_pack(&cs, value->data, &packed_w, why);
  if (st != ACTX_OK) return st;
  s->packed_ops = actx_dnnl_cache_create(packed_w);
  if (s->packed_ops == NULL) return ACTX_ERROR_OUT_OF_MEMORY; /* it destroyed them */
  s->w_shape = *w;
  s->w_packed = true;
  *packed = true;
  return ACTX_OK;
}

/* ---- running ------------------------------------------------------------------------------- */

/* The least multiply-adds a slab takes whatever the pool costs (actx_dnnl_split_tasks also asks
 * for twice the measured cost of a parallel-for call). */
#define SLAB_MIN_MACS (1 << 21)
/* more slabs than this a run are not worth their ops (each slab shape is an op of its own) */
#define SLAB_MAX_TASKS 16
/* A Conv of one input channel a group (depthwise, or a one-channel image's) runs far below the
 * dense rate the split rule counts multiply-adds at (actx_dnnl_ns_per_mac): oneDNN has no matrix
 * form of it, and our layout changes around it weigh as much as its few sums. Its multiply-adds
 * are counted at this rate instead: MobileNetV3's 16-channel 112 x 112 depthwise 3 x 3 Conv and
 * its HardSwish took 214 us on one core of the AMX Xeon, 0.12 ns a multiply-add (AMX's dense
 * rate 0.0025), rounded down; assumed the same, unmeasured, on AVX512_BF16 and float32 hosts. */
#define NS_PER_MAC_DEPTHWISE 0.1

typedef struct slabs_job {
  actx_dnnl_cache *cache;
  const actx_dnnl_conv_shape *whole;
  const uint16_t *x, *w; /* w: NULL when packed */
  const float *bias;
  uint16_t *y; /* dense [N, M, out...] */
  const uint16_t *table; /* the results looked up in it as they are rounded; NULL: none */
  int64_t rows_per_task;
  actx_status status[SLAB_MAX_TASKS];
  const char *why[SLAB_MAX_TASKS];
  bool nonfinite[SLAB_MAX_TASKS]; /* a NaN or an infinity among the slab's results */
} slabs_job;

/* The convolution that gives output rows [r0, r1) of the first spatial dimension: the input
 * rows their windows cover (clipped to the image; what the window loses to the clip becomes
 * padding), as views into the whole x and y. Each output's sum runs over the same window as in
 * the whole convolution, so the slabs give the whole convolution's bits. Also returns the
 * offsets of the slab's first input and output elements. */
static actx_dnnl_conv_shape slab_shape(const actx_dnnl_conv_shape *whole, int64_t r0, int64_t r1,
                                       size_t *x_offset, size_t *y_offset) {
  actx_dnnl_conv_shape s = *whole;
  const int64_t extent = (whole->kernel[0] - 1) * whole->dilations[0] + 1;
  const int64_t first = r0 * whole->strides[0] - whole->pads_begin[0];
  const int64_t last = (r1 - 1) * whole->strides[0] - whole->pads_begin[0] + extent; /* past */
  const int64_t lo = first < 0 ? 0 : first, hi = last > whole->in[0] ? whole->in[0] : last;
  s.in[0] = hi - lo;
  s.out[0] = r1 - r0;
  s.pads_begin[0] = lo - first;
  s.pads_end[0] = last - hi;
  const size_t nd = 2 + whole->spatial;
  int64_t x_stride = 1, y_stride = 1;
  for (size_t d = nd; d-- > 0;) {
    s.x_strides[d] = x_stride;
    s.y_strides[d] = y_stride;
    x_stride *= d == 0 ? whole->batch : d == 1 ? whole->channels : whole->in[d - 2];
    y_stride *= d == 0 ? whole->batch : d == 1 ? whole->out_channels : whole->out[d - 2];
  }
  *x_offset = (size_t)(lo * s.x_strides[2]);
  *y_offset = (size_t)(r0 * s.y_strides[2]);
  return s;
}

static actx_status run_slab(const slabs_job *j, int64_t r0, int64_t r1, bool *nonfinite,
                            const char **why) {
  size_t x_offset = 0, y_offset = 0;
  actx_dnnl_conv_shape shape = *j->whole;
  if (r0 != 0 || r1 != j->whole->out[0]) shape = slab_shape(j->whole, r0, r1, &x_offset, &y_offset);
  actx_dnnl_op *op = NULL;
  actx_status st = actx_dnnl_cache_conv(j->cache, &shape, &op, why);
  if (st != ACTX_OK) return st;
  /* the slab's rows rounded by its own run, on its task */
  st = actx_dnnl_run_rounded(op, j->x + x_offset, j->w, j->bias, j->y + y_offset, j->table,
                             nonfinite, why);
  actx_dnnl_cache_release(j->cache, op);
  return st;
}

static void slab_task(void *ctx, size_t task) {
  slabs_job *j = ctx;
  const int64_t r0 = (int64_t)task * j->rows_per_task, rows = j->whole->out[0];
  const int64_t r1 = r0 + j->rows_per_task < rows ? r0 + j->rows_per_task : rows;
  j->status[task] = run_slab(j, r0, r1, &j->nonfinite[task], &j->why[task]);
}

/* The convolution split into slabs of output rows over the caller's parallel-for, each slab one
 * oneDNN run on its task's thread alone (see bf16_matmul.c's run_split for why not oneDNN's own
 * team). */
static actx_status run_slabs(const slabs_job *whole_job, const actx_parallel *par,
                             bool *nonfinite, const char **why) {
  const actx_dnnl_conv_shape *cs = whole_job->whole;
  double macs = (double)cs->batch * (double)cs->out_channels * (double)(cs->channels / cs->group);
  for (size_t i = 0; i < cs->spatial; i++) macs *= (double)cs->out[i] * (double)cs->kernel[i];
  const double ns_per_mac = actx_dnnl_ns_per_mac();
  if (cs->channels == cs->group && ns_per_mac < NS_PER_MAC_DEPTHWISE)
    macs *= NS_PER_MAC_DEPTHWISE / ns_per_mac; /* the dense rate's multiply-adds of that time */
  size_t tasks = actx_dnnl_split_tasks(par, macs, cs->out[0], SLAB_MIN_MACS, SLAB_MAX_TASKS);
  if (tasks <= 1 || cs->transposed) return run_slab(whole_job, 0, cs->out[0], nonfinite, why);
  slabs_job job = *whole_job;
  job.rows_per_task = (cs->out[0] + (int64_t)tasks - 1) / (int64_t)tasks;
  tasks = (size_t)((cs->out[0] + job.rows_per_task - 1) / job.rows_per_task);
  par->parallel_for(par->runner_ctx, slab_task, &job, tasks);
  for (size_t i = 0; i < tasks; i++) *nonfinite |= job.nonfinite[i];
  for (size_t i = 0; i < tasks; i++)
    if (job.status[i] != ACTX_OK) {
      if (why != NULL) *why = job.why[i];
      return job.status[i];
    }
  return ACTX_OK;
}

/* The outputs whose windows hold a NaN or an infinity of X, recomputed from X itself and W in
 * float32 (packed W brought back to its plain layout for it). */
static actx_status repair(const conv_state *s, const actx_dnnl_conv_shape *cs,
                          const actx_tensor *in, const float *bias, uint16_t *y,
                          const char **why) {
  const actx_shape *ws = w_shape_of(s, in);
  const size_t w_count = (size_t)actx_shape_elements(ws);
  float *w = malloc(w_count * sizeof *w);
  if (w == NULL) return ACTX_ERROR_OUT_OF_MEMORY;
  actx_status st = ACTX_OK;
  if (s->w_packed) {
    st = actx_dnnl_weights_plain(actx_dnnl_cache_weights(s->packed_ops), w, why);
  } else if (!s->transposed) {
    const uint16_t *wb = in[1].data;
    for (size_t i = 0; i < w_count; i++) w[i] = actx_bf16_to_f32(wb[i]);
  } else { /* ONNX's [C, M / group, kernel...] as [M, C / group, kernel...] */
    const uint16_t *wb = in[1].data;
    const int64_t cg = cs->channels / cs->group, mg = cs->out_channels / cs->group;
    const int64_t taps = (int64_t)w_count / (cs->channels * mg);
    for (int64_t g = 0; g < cs->group; g++)
      for (int64_t c = 0; c < cg; c++)
        for (int64_t o = 0; o < mg; o++)
          for (int64_t t = 0; t < taps; t++)
            w[((g * mg + o) * cg + c) * taps + t] =
                actx_bf16_to_f32(wb[((g * cg + c) * mg + o) * taps + t]);
  }
  if (st == ACTX_OK && !actx_conv_repair(cs, in[0].data, w, bias, y))
    st = ACTX_ERROR_OUT_OF_MEMORY;
  free(w);
  return st;
}

/* A ConvTranspose whose output runs past the positions its taps reach (output_padding, an
 * output_shape beyond them: a negative end pad) has there the bias alone. oneDNN takes a
 * negative end pad only within a stride, so such a run computes the reached part (end pads 0)
 * into a buffer of its own and places it. Whether cs has such a part; *cs becomes it. */
static bool reached_part(actx_dnnl_conv_shape *cs, size_t *count) {
  bool past = false;
  *count = (size_t)(cs->batch * cs->out_channels);
  for (size_t i = 0; cs->transposed && i < cs->spatial; i++) {
    if (cs->pads_end[i] < 0) {
      cs->out[i] += cs->pads_end[i];
      cs->pads_end[i] = 0;
      past = true;
    }
    if (cs->out[i] < 1) cs->out[i] = 0; /* none reached (the begin pad takes them all) */
    *count *= (size_t)cs->out[i];
  }
  return past;
}

/* y (dense, the whole output) from the reached part r (dense, its own sizes) and, past it,
 * the bias rounded (+0 without one). */
static void place_reached(const actx_dnnl_conv_shape *whole, const actx_dnnl_conv_shape *r,
                          const uint16_t *part, const float *bias, uint16_t *y) {
  int64_t wo[3] = {1, 1, 1}, ro[3] = {1, 1, 1};
  for (size_t i = 0; i < whole->spatial; i++) wo[i] = whole->out[i], ro[i] = r->out[i];
  size_t at = 0, from = 0;
  for (int64_t n = 0; n < whole->batch; n++)
    for (int64_t m = 0; m < whole->out_channels; m++) {
      const uint16_t past = actx_f32_to_bf16(bias != NULL ? bias[m] : 0.0f);
      for (int64_t o0 = 0; o0 < wo[0]; o0++)
        for (int64_t o1 = 0; o1 < wo[1]; o1++)
          for (int64_t o2 = 0; o2 < wo[2]; o2++)
            y[at++] = o0 < ro[0] && o1 < ro[1] && o2 < ro[2] ? part[from++] : past;
    }
}

static actx_status run(const void *state, const actx_tensor *in, size_t n_in, actx_tensor *out,
                       size_t n_out, const actx_parallel *par, const char **why) {
  const conv_state *s = state;
  actx_dnnl_conv_shape cs;
  actx_shape y;
  actx_status st = problem_of(s, in, n_in, &cs, &y, why);
  if (st != ACTX_OK) return st;
  if (n_out < 1 || out[0].elem != ACTX_ELEM_BF16 || out[0].shape.rank != y.rank ||
      memcmp(out[0].shape.dims, y.dims, y.rank * sizeof y.dims[0]) != 0)
    return actx_bf16_fail(why, "Conv: the output is not bfloat16 of the shape _shapes gave");
  const size_t count = (size_t)actx_shape_elements(&y);
  if (count == 0) return ACTX_OK;
  const bool empty_sum = actx_shape_elements(&in[0].shape) == 0 ||
                         actx_shape_elements(w_shape_of(s, in)) == 0;
  if (out[0].data == NULL || (!empty_sum && in[0].data == NULL) ||
      (!empty_sum && !s->w_packed && in[1].data == NULL) ||
      (s->has_bias && s->bias == NULL && y.dims[1] > 0 && in[2].data == NULL))
    return actx_bf16_fail(why, "Conv: NULL data");
  const size_t m = (size_t)y.dims[1];
  float *bias = s->bias;
  if (s->has_bias && bias == NULL) {
    bias = malloc(m * sizeof *bias);
    if (bias == NULL) return ACTX_ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; i < m; i++) bias[i] = actx_bf16_to_f32(((const uint16_t *)in[2].data)[i]);
  }
  if (empty_sum) {
    /* no input channel, or an input of padding only: the bias alone */
    const size_t plane = count / ((size_t)y.dims[0] * m);
    uint16_t *yd = out[0].data;
    for (size_t i = 0; i < count; i++)
      yd[i] = actx_f32_to_bf16(bias != NULL ? bias[i / plane % m] : 0.0f);
    if (s->activation != NULL) actx_lut_apply(s->activation, yd, yd, count);
  } else {
    /* a ConvTranspose's outputs past those its taps reach: computed apart (reached_part) */
    actx_dnnl_conv_shape reached = cs;
    uint16_t *y_reached = out[0].data;
    size_t reached_count = 0;
    if (reached_part(&reached, &reached_count)) {
      y_reached = malloc(reached_count > 0 ? reached_count * 2 : 2);
      if (y_reached == NULL) st = ACTX_ERROR_OUT_OF_MEMORY;
    }
    slabs_job job = {.cache = s->w_packed ? s->packed_ops : s->ops,
                     .whole = &reached,
                     .x = in[0].data,
                     .w = s->w_packed ? NULL : in[1].data,
                     .bias = bias,
                     .y = y_reached,
                     .table = s->activation};
    bool nonfinite = false;
    if (st == ACTX_OK && (y_reached == out[0].data || reached_count > 0))
      st = run_slabs(&job, par, &nonfinite, why);
    /* A NaN or an infinity in the results: oneDNN may have spread X's to outputs beside their
     * own (bf16_conv_nonfinite.h). Then again with them as zeros, and their outputs recomputed;
     * a finite X's results (overflow) stand as they are. */
    const size_t x_count = (size_t)actx_shape_elements(&in[0].shape);
    if (st == ACTX_OK && nonfinite && actx_conv_has_nonfinite(in[0].data, x_count)) {
      uint16_t *finite = actx_conv_finite_copy(in[0].data, x_count);
      job.x = finite;
      job.table = NULL; /* the repaired results are looked up with the others, after */
      st = finite == NULL ? ACTX_ERROR_OUT_OF_MEMORY : run_slabs(&job, par, &nonfinite, why);
      if (st == ACTX_OK) st = repair(s, &reached, in, bias, y_reached, why);
      /* y_reached is the whole output here: only a ConvTranspose's part may be smaller, and a
       * ConvTranspose takes no activation (fuse_table) */
      if (st == ACTX_OK && s->activation != NULL)
        actx_lut_apply(s->activation, y_reached, y_reached, count);
      free(finite);
    }
    if (y_reached != out[0].data) {
      if (st == ACTX_OK) place_reached(&cs, &reached, y_reached, bias, out[0].data);
      free(y_reached);
    }
  }
  if (bias != s->bias) free(bias);
  return st;
}

/* A Conv's activation: applied as the results are rounded (bf16.h). A ConvTranspose's results
 * past its taps are placed apart (place_reached), so it takes none. */
static bool fuse_table(void *state, const uint16_t *table) {
  conv_state *s = state;
  if (s->transposed || s->activation != NULL) return false;
  s->activation = table;
  return true;
}

const actx_bf16_family actx_bf16_family_conv = {.create = create,
                                                .pack = pack,
                                                .shapes = shapes,
                                                .run = run,
                                                .destroy = destroy,
                                                .fuse_table = fuse_table};
