/* Conv of the bfloat16 service (bf16_conv.c over oneDNN) against a double reference of ONNX's
 * definition (pads, auto_pad, strides, dilations, groups; 1-D and 2-D).
 *
 * The bound, as for MatMul (test_bf16_matmul.c): the products of exact bfloat16 operands are
 * exact in float32; float32 accumulation of the K = (C / group)·prod(kernel) products and the
 * bias errs by at most (K + 1)·u·(Σ|x·w| + |b|), u = 2^-24; the final rounding to bfloat16 adds
 * 2^-8 of the value:
 *   |y - r| <= 2^-8·|r| + (1 + 2^-8)·(K + 2)·2^-24·(Σ|x·w| + |b|),
 * NaN (quiet) where r is NaN, the same infinity where r is infinite.
 *
 * Also: packed (constant W and B) and runtime W give the same bits where oneDNN computes in
 * float32; two threads running one kernel give the bits of one; bad shapes and attributes are
 * ACTX_ERROR_INVALID_ARGUMENT with a message. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bf16.h"
#include "bf16_dnnl.h"
#include "half.h"

static int failures, checked;
#define CHECK(cond)                                                      \
  do {                                                                   \
    if (!(cond)) {                                                       \
      fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                        \
    }                                                                    \
  } while (0)

static uint64_t rng = 0x2545F4914F6CDD1Du;
static uint32_t next(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (uint32_t)(rng >> 32);
}
static uint16_t random_bf16(void) {
  const float mag = ldexpf(1.0f + (float)(next() & 0xFFFF) / 65536.0f, (int)(next() % 8) - 6);
  return actx_f32_to_bf16(next() & 1 ? -mag : mag);
}

static actx_shape shape_of(size_t rank, const int64_t *dims) {
  actx_shape s = {.rank = rank};
  for (size_t i = 0; i < rank; i++) s.dims[i] = dims[i];
  return s;
}

static actx_tensor tensor(actx_shape s) {
  const size_t n = (size_t)actx_shape_elements(&s);
  uint16_t *d = malloc(n > 0 ? n * 2 : 2);
  for (size_t i = 0; i < n; i++) d[i] = random_bf16();
  return (actx_tensor){.elem = ACTX_ELEM_BF16, .shape = s, .data = d};
}

/* A Conv's attributes as a test states them: 0 / NULL = unset. */
typedef struct conv_attrs {
  const char *auto_pad;
  int64_t group;
  size_t spatial;
  const int64_t *strides, *dilations, *pads, *kernel_shape;
} conv_attrs;

static actx_bf16_node node_of(const conv_attrs *c, bool bias) {
  actx_bf16_node n = {.op = ACTX_BF16_OP_CONV, .since_version = 22, .n_inputs = bias ? 3 : 2,
                      .n_outputs = 1, .input_present = {true, true, bias},
                      .output_present = {true}};
  actx_bf16_attrs *a = &n.attrs;
  if (c->auto_pad != NULL) {
    a->has_auto_pad = true;
    snprintf(a->auto_pad, sizeof a->auto_pad, "%s", c->auto_pad);
  }
  if (c->group != 0) a->has_group = true, a->group = c->group;
  const size_t sp = c->spatial;
  if (c->strides) a->has_strides = true, a->n_strides = sp, memcpy(a->strides, c->strides, sp * 8);
  if (c->dilations)
    a->has_dilations = true, a->n_dilations = sp, memcpy(a->dilations, c->dilations, sp * 8);
  if (c->pads) a->has_pads = true, a->n_pads = 2 * sp, memcpy(a->pads, c->pads, 2 * sp * 8);
  if (c->kernel_shape)
    a->has_kernel_shape = true, a->n_kernel_shape = sp,
    memcpy(a->kernel_shape, c->kernel_shape, sp * 8);
  return n;
}

/* ONNX's output size and pads, written out afresh for the reference */
static void reference_geometry(const conv_attrs *c, const actx_shape *x, const actx_shape *w,
                               int64_t *out, int64_t *lo) {
  for (size_t i = 0; i < c->spatial; i++) {
    const int64_t in = x->dims[2 + i], k = w->dims[2 + i];
    const int64_t s = c->strides ? c->strides[i] : 1, d = c->dilations ? c->dilations[i] : 1;
    const int64_t ext = d * (k - 1) + 1;
    const bool same_u = c->auto_pad && strcmp(c->auto_pad, "SAME_UPPER") == 0;
    const bool same_l = c->auto_pad && strcmp(c->auto_pad, "SAME_LOWER") == 0;
    if (same_u || same_l) {
      out[i] = (in + s - 1) / s;
      const int64_t need = (out[i] - 1) * s + ext - in, total = need > 0 ? need : 0;
      lo[i] = same_u ? total / 2 : (total + 1) / 2;
    } else {
      const bool valid = c->auto_pad && strcmp(c->auto_pad, "VALID") == 0;
      const int64_t pb = c->pads && !valid ? c->pads[i] : 0;
      const int64_t pe = c->pads && !valid ? c->pads[c->spatial + i] : 0;
      out[i] = (in + pb + pe - ext) / s + 1;
      lo[i] = pb;
    }
  }
}

static void check_against_reference(const conv_attrs *c, const actx_tensor *x,
                                    const actx_tensor *w, const actx_tensor *b,
                                    const actx_tensor *y, const char *label) {
  const actx_shape *xs = &x->shape, *ws = &w->shape;
  int64_t out[3] = {1, 1, 1}, lo[3] = {0, 0, 0};
  reference_geometry(c, xs, ws, out, lo);
  const int64_t n = xs->dims[0], ch = xs->dims[1], m = ws->dims[0];
  const int64_t g = c->group ? c->group : 1, cg = ch / g, mg = m / g;
  int64_t in[3] = {1, 1, 1}, k[3] = {1, 1, 1}, st[3] = {1, 1, 1}, dl[3] = {1, 1, 1};
  for (size_t i = 0; i < c->spatial; i++) {
    in[i] = xs->dims[2 + i], k[i] = ws->dims[2 + i];
    if (c->strides) st[i] = c->strides[i];
    if (c->dilations) dl[i] = c->dilations[i];
  }
  CHECK(y->shape.rank == xs->rank && y->shape.dims[1] == m);
  for (size_t i = 0; i < c->spatial; i++) CHECK(y->shape.dims[2 + i] == out[i]);
  const uint16_t *xd = x->data, *wd = w->data, *yd = y->data;
  const int64_t terms = cg * k[0] * k[1] * k[2];
  int bad = 0;
  for (int64_t bn = 0; bn < n; bn++)
    for (int64_t oc = 0; oc < m; oc++)
      for (int64_t o0 = 0; o0 < out[0]; o0++)
        for (int64_t o1 = 0; o1 < out[1]; o1++)
          for (int64_t o2 = 0; o2 < out[2]; o2++) {
            const int64_t grp = oc / mg;
            double sum = 0, mag = 0;
            for (int64_t ic = 0; ic < cg; ic++)
              for (int64_t k0 = 0; k0 < k[0]; k0++)
                for (int64_t k1 = 0; k1 < k[1]; k1++)
                  for (int64_t k2 = 0; k2 < k[2]; k2++) {
                    const int64_t i0 = o0 * st[0] - lo[0] + k0 * dl[0];
                    const int64_t i1 = o1 * st[1] - lo[1] + k1 * dl[1];
                    const int64_t i2 = o2 * st[2] - lo[2] + k2 * dl[2];
                    if (i0 < 0 || i0 >= in[0] || i1 < 0 || i1 >= in[1] || i2 < 0 || i2 >= in[2])
                      continue;
                    const int64_t xc = grp * cg + ic;
                    const double xv = actx_bf16_to_f32(
                        xd[(((bn * ch + xc) * in[0] + i0) * in[1] + i1) * in[2] + i2]);
                    const int64_t wi = (((oc * cg + ic) * k[0] + k0) * k[1] + k1) * k[2] + k2;
                    const double wv = actx_bf16_to_f32(wd[wi]);
                    sum += xv * wv;
                    mag += fabs(xv * wv);
                  }
            if (b != NULL) {
              const double bv = actx_bf16_to_f32(((const uint16_t *)b->data)[oc]);
              sum += bv;
              mag += fabs(bv);
            }
            const size_t yi = (size_t)((((bn * m + oc) * out[0] + o0) * out[1] + o1) * out[2] + o2);
            const uint16_t got = yd[yi];
            const float yv = actx_bf16_to_f32(got);
            bool ok;
            if (isnan(sum)) ok = isnan(yv) && (got & 0x0040u) != 0;
            else if (isinf(sum)) ok = yv == (float)sum;
            else
              ok = fabs((double)yv - sum) <= ldexp(fabs(sum), -8) + (1 + ldexp(1, -8)) *
                                                  (double)(terms + 2) * ldexp(mag, -24);
            checked++;
            if (!ok && bad++ < 3) {
              fprintf(stderr, "%s: y[%zu] = %.9g (0x%04x), reference %.12g\n", label, yi, yv, got,
                      sum);
              failures++;
            }
          }
}

/* runs X, W (and B) through a kernel with W at run time and one with W and B packed */
static void conv_case(const conv_attrs *c, actx_tensor x, actx_tensor w, const actx_tensor *b,
                      const char *label) {
  const actx_bf16_node node = node_of(c, b != NULL);
  actx_tensor outs[2] = {{0}, {0}};
  for (int packed = 0; packed < 2; packed++) {
    actx_bf16_kernel *k = NULL;
    const char *why = "";
    actx_status st = actx_bf16_kernel_create(&node, &k, &why);
    CHECK(st == ACTX_OK);
    if (st != ACTX_OK) {
      fprintf(stderr, "%s: create: %s\n", label, why);
      return;
    }
    actx_tensor in[3] = {x, w, b != NULL ? *b : ACTX_TENSOR_ABSENT};
    if (packed) {
      bool was = false;
      CHECK(actx_bf16_kernel_pack(k, 1, &w, &was, &why) == ACTX_OK);
      if (was) in[1] = ACTX_TENSOR_ABSENT;
      if (b != NULL) {
        CHECK(actx_bf16_kernel_pack(k, 2, b, &was, &why) == ACTX_OK && was);
        in[2] = ACTX_TENSOR_ABSENT;
      }
    }
    const size_t n_in = b != NULL ? 3 : 2;
    actx_tensor y = {.elem = ACTX_ELEM_COUNT};
    st = actx_bf16_kernel_shapes(k, in, n_in, &y, 1, &why);
    CHECK(st == ACTX_OK);
    if (st != ACTX_OK) {
      fprintf(stderr, "%s: shapes: %s\n", label, why);
      actx_bf16_kernel_destroy(k);
      return;
    }
    y.data = malloc((size_t)actx_shape_elements(&y.shape) * 2 + 2);
    const actx_parallel par = {.max_tasks = 2};
    st = actx_bf16_kernel_run(k, in, n_in, &y, 1, packed ? &par : NULL, &why);
    CHECK(st == ACTX_OK);
    if (st != ACTX_OK) fprintf(stderr, "%s: run: %s\n", label, why);
    else check_against_reference(c, &x, &w, b, &y, label);
    outs[packed] = y;
    actx_bf16_kernel_destroy(k);
  }
  const size_t n = (size_t)actx_shape_elements(&outs[0].shape);
  if (!actx_dnnl_native_bf16()) CHECK(memcmp(outs[0].data, outs[1].data, n * 2) == 0);
  free(outs[0].data);
  free(outs[1].data);
}

static void case2d(int64_t n, int64_t c, int64_t h, int64_t wd, int64_t m, int64_t kh,
                   int64_t kw, const conv_attrs *attrs, bool bias, const char *label) {
  const int64_t g = attrs->group ? attrs->group : 1;
  const int64_t xd[] = {n, c, h, wd}, wdims[] = {m, c / g, kh, kw}, bd[] = {m};
  actx_tensor x = tensor(shape_of(4, xd)), w = tensor(shape_of(4, wdims));
  actx_tensor b = tensor(shape_of(1, bd));
  conv_case(attrs, x, w, bias ? &b : NULL, label);
  free(x.data), free(w.data), free(b.data);
}

static void case1d(int64_t n, int64_t c, int64_t l, int64_t m, int64_t k,
                   const conv_attrs *attrs, bool bias, const char *label) {
  const int64_t g = attrs->group ? attrs->group : 1;
  const int64_t xd[] = {n, c, l}, wdims[] = {m, c / g, k}, bd[] = {m};
  actx_tensor x = tensor(shape_of(3, xd)), w = tensor(shape_of(3, wdims));
  actx_tensor b = tensor(shape_of(1, bd));
  conv_case(attrs, x, w, bias ? &b : NULL, label);
  free(x.data), free(w.data), free(b.data);
}

/* ---- slabs of rows over threads ----------------------------------------------------------- */

/* Tasks last to first, on the caller: enough to show that the split changes no bit (the
 * threads themselves are concurrent()'s). A run's one parallel-for is its slabs' (each rounds
 * its own rows). */
static size_t slab_tasks;
static void reversed_parallel_for(void *runner, actx_task_fn task, void *ctx, size_t n) {
  (void)runner;
  slab_tasks = n;
  for (size_t i = n; i-- > 0;) task(ctx, i);
}

/* A convolution split into slabs of output rows over 2, 3 and 7 tasks gives the bits of one
 * run, constant and runtime W alike, at the borders of every slab: pads, strides, dilations,
 * groups, 1-D; and it is split (large enough for the kernel to split it). */
static void slab_case(int64_t n, int64_t c, int64_t h, int64_t wd, int64_t m, int64_t kh,
                      int64_t kw, const conv_attrs *attrs, const char *label) {
  const bool two_d = attrs->spatial == 2;
  const int64_t g = attrs->group ? attrs->group : 1;
  const int64_t xd[] = {n, c, h, wd}, wdims[] = {m, c / g, kh, kw}, bd[] = {m};
  const int64_t xd1[] = {n, c, h}, wd1[] = {m, c / g, kh};
  actx_tensor x = tensor(two_d ? shape_of(4, xd) : shape_of(3, xd1));
  actx_tensor w = tensor(two_d ? shape_of(4, wdims) : shape_of(3, wd1));
  actx_tensor b = tensor(shape_of(1, bd));
  const actx_bf16_node node = node_of(attrs, true);
  for (int packed = 0; packed < 2; packed++) {
    uint16_t *first = NULL;
    const size_t tasks[] = {1, 2, 3, 7};
    for (size_t t = 0; t < sizeof tasks / sizeof tasks[0]; t++) {
      actx_bf16_kernel *k = NULL;
      const char *why = "";
      CHECK(actx_bf16_kernel_create(&node, &k, &why) == ACTX_OK);
      if (k == NULL) break;
      actx_tensor in[3] = {x, w, b};
      bool was = false;
      if (packed && actx_bf16_kernel_pack(k, 1, &w, &was, &why) == ACTX_OK && was)
        in[1] = ACTX_TENSOR_ABSENT;
      actx_tensor y = {.elem = ACTX_ELEM_COUNT};
      CHECK(actx_bf16_kernel_shapes(k, in, 3, &y, 1, &why) == ACTX_OK);
      const size_t count = (size_t)actx_shape_elements(&y.shape);
      y.data = calloc(count + 1, 2);
      const actx_parallel par = {reversed_parallel_for, NULL, tasks[t], 0};
      slab_tasks = 0;
      const actx_status st = actx_bf16_kernel_run(k, in, 3, &y, 1, tasks[t] > 1 ? &par : NULL,
                                                  &why);
      CHECK(st == ACTX_OK);
      if (st != ACTX_OK) fprintf(stderr, "%s: %s\n", label, why);
      if (tasks[t] > 1 && slab_tasks < 2)
        fprintf(stderr, "%s: %zu threads: not split\n", label, tasks[t]);
      CHECK(tasks[t] == 1 || slab_tasks >= 2);
      if (first == NULL) {
        first = y.data;
        check_against_reference(attrs, &x, &w, &b, &y, label);
      } else {
        const bool same = memcmp(first, y.data, count * 2) == 0;
        if (!same)
          fprintf(stderr, "%s (%s W): %zu tasks differ from one\n", label,
                  packed ? "constant" : "runtime", tasks[t]);
        CHECK(same);
        free(y.data);
      }
      actx_bf16_kernel_destroy(k);
    }
    free(first);
  }
  free(x.data), free(w.data), free(b.data);
}

static void slabs(void) {
  const int64_t p1[] = {1, 1, 1, 1}, pa[] = {2, 0, 1, 3}, s2[] = {2, 2}, d2[] = {2, 2};
  const int64_t p1d[] = {2, 1}, s1d[] = {2};
  slab_case(1, 16, 40, 40, 32, 3, 3, &(conv_attrs){.spatial = 2, .pads = p1}, "slabs: 3x3 pads 1");
  slab_case(2, 16, 81, 47, 32, 3, 3,
            &(conv_attrs){.spatial = 2, .strides = s2, .pads = pa}, "slabs: stride 2, N 2");
  slab_case(1, 16, 40, 30, 32, 3, 3,
            &(conv_attrs){.spatial = 2, .dilations = d2, .pads = pa}, "slabs: dilation 2");
  slab_case(1, 64, 30, 30, 64, 3, 3, &(conv_attrs){.spatial = 2, .group = 4, .pads = p1},
            "slabs: group 4");
  slab_case(1, 64, 40, 40, 64, 1, 1, &(conv_attrs){.spatial = 2}, "slabs: 1x1");
  /* depthwise: few multiply-adds (0.9 M), counted at the depthwise rate, so split all the same */
  slab_case(1, 32, 56, 56, 32, 3, 3, &(conv_attrs){.spatial = 2, .group = 32, .pads = p1},
            "slabs: depthwise");
  slab_case(1, 32, 2000, 1, 64, 5, 1, &(conv_attrs){.spatial = 1, .strides = s1d, .pads = p1d},
            "slabs: 1-D");
}

/* Where oneDNN computes bfloat16 in brgconv (AVX512_BF16, AMX) its convolutions take
 * channels-last src and dst, and the kernel's runs move them with its own transposes
 * (bf16_transpose.h) rather than oneDNN's reorders: the shapes above (case2d's 1x1 and detector block, every slab) went that way, so
 * their checks against the reference are checks of the transposes, views of slabs included. */
static void channels_last(void) {
  actx_dnnl_conv_shape s;
  memset(&s, 0, sizeof s);
  s = (actx_dnnl_conv_shape){.spatial = 2, .batch = 1, .channels = 32, .out_channels = 32,
                             .group = 1, .in = {20, 20}, .kernel = {3, 3}, .out = {20, 20},
                             .strides = {1, 1}, .dilations = {1, 1}, .pads_begin = {1, 1},
                             .pads_end = {1, 1}};
  actx_dnnl_op *op = NULL;
  const char *why = "";
  CHECK(actx_dnnl_conv_create(&s, NULL, &op, &why) == ACTX_OK);
  /* its two runs, the float32 result rounded after (actx_dnnl_run: the transpose back moves
   * float32) and rounded within (actx_dnnl_run_rounded: the rounding first), give one result */
  const size_t nx = 32 * 20 * 20, nw = 32 * 32 * 9, ny = 32 * 20 * 20;
  uint16_t *x = malloc(nx * 2), *w = malloc(nw * 2), *y = malloc(ny * 2), *y2 = malloc(ny * 2);
  float *acc = malloc(ny * sizeof *acc);
  if (op != NULL && x != NULL && w != NULL && y != NULL && y2 != NULL && acc != NULL) {
    for (size_t i = 0; i < nx; i++) x[i] = random_bf16();
    for (size_t i = 0; i < nw; i++) w[i] = random_bf16();
    CHECK(actx_dnnl_run(op, x, w, NULL, acc, &why) == ACTX_OK);
    actx_dnnl_round(acc, y, ny, NULL);
    CHECK(actx_dnnl_run_rounded(op, x, w, NULL, y2, NULL, NULL, &why) == ACTX_OK);
    CHECK(memcmp(y, y2, ny * 2) == 0);
  }
  free(x), free(w), free(y), free(y2), free(acc);
  /* brgconv (AVX512_BF16, AMX) computes channels-last; jit_bf16 (AVX-512 without
   * AVX512_BF16) a blocked layout, which oneDNN's reorders reach */
  if (actx_dnnl_native_bf16() && strncmp(actx_dnnl_op_impl(op), "brgconv", 7) == 0) {
    if (!actx_dnnl_op_transposes(op))
      fprintf(stderr, "channels-last: %s does not transpose\n", actx_dnnl_op_impl(op));
    CHECK(actx_dnnl_op_transposes(op));
  } else {
    printf("test_bf16_conv: channels-last transposes: skipped (oneDNN computes in %s, %s: "
           "%s)\n", actx_dnnl_native_bf16() ? "bfloat16" : "float32", actx_dnnl_op_impl(op),
           actx_dnnl_op_transposes(op) ? "transposes" : "reorders");
  }
  actx_dnnl_op_destroy(op);
}

/* On AMX, oneDNN's brgconv_1x1 copies a 48-channel input, padded, into its scratchpad, and the
 * op takes the next implementation instead (bf16_dnnl.c, copies_input_1x1): YOLOv8n's 48 -> 32
 * Conv at 80 x 80, and case2d's "1x1, 48 channels" at 40 x 40, whose results that case checks
 * against the reference. A 64-channel one (no copy) keeps brgconv_1x1. */
static void padding_1x1(void) {
  actx_dnnl_conv_shape s = {.spatial = 2, .batch = 1, .channels = 64, .out_channels = 32,
                            .group = 1, .in = {80, 80}, .kernel = {1, 1}, .out = {80, 80},
                            .strides = {1, 1}, .dilations = {1, 1}};
  actx_dnnl_op *op64 = NULL, *op48[2] = {NULL, NULL};
  const char *why = "";
  CHECK(actx_dnnl_conv_create(&s, NULL, &op64, &why) == ACTX_OK);
  const char *impl64 = actx_dnnl_op_impl(op64);
  const bool amx = strcmp(impl64, "brgconv_1x1:avx512_core_amx") == 0;
  s.channels = 48;
  for (size_t k = 0; k < 2; k++) {
    s.in[0] = s.in[1] = s.out[0] = s.out[1] = k == 0 ? 80 : 40;
    CHECK(actx_dnnl_conv_create(&s, NULL, &op48[k], &why) == ACTX_OK);
    const char *impl48 = actx_dnnl_op_impl(op48[k]);
    if (amx && (strcmp(impl48, impl64) == 0 || strncmp(impl48, "ref", 3) == 0))
      fprintf(stderr, "1x1, 48 channels, %lld x %lld: %s\n", (long long)s.in[0],
              (long long)s.in[1], impl48);
    CHECK(!amx || (strcmp(impl48, impl64) != 0 && strncmp(impl48, "ref", 3) != 0));
  }
  if (!amx) printf("test_bf16_conv: 1x1 padding copy: skipped (no AMX: %s)\n", impl64);
  actx_dnnl_op_destroy(op64);
  actx_dnnl_op_destroy(op48[0]);
  actx_dnnl_op_destroy(op48[1]);
}

/* ---- bad input ----------------------------------------------------------------------------- */

static void expect_error(const conv_attrs *c, actx_shape xs, actx_shape ws, const char *needle) {
  const actx_bf16_node node = node_of(c, false);
  actx_bf16_kernel *k = NULL;
  const char *why = "";
  CHECK(actx_bf16_kernel_create(&node, &k, &why) == ACTX_OK);
  if (k == NULL) return;
  actx_tensor x = tensor(xs), w = tensor(ws), y;
  actx_tensor in[2] = {x, w};
  CHECK(actx_bf16_kernel_shapes(k, in, 2, &y, 1, &why) == ACTX_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(why, needle) != NULL);
  if (strstr(why, needle) == NULL) fprintf(stderr, "  message: '%s', wanted '%s'\n", why, needle);
  bool was = true;
  if (ws.rank < 3) {
    CHECK(actx_bf16_kernel_pack(k, 1, &w, &was, &why) == ACTX_ERROR_INVALID_ARGUMENT && !was);
  }
  actx_bf16_kernel_destroy(k);
  free(x.data), free(w.data);
}

static void expect_create_error(const conv_attrs *c, const char *needle) {
  const actx_bf16_node node = node_of(c, false);
  actx_bf16_kernel *k = NULL;
  const char *why = "";
  CHECK(actx_bf16_kernel_create(&node, &k, &why) == ACTX_ERROR_INVALID_ARGUMENT && k == NULL);
  CHECK(strstr(why, needle) != NULL);
}

/* Packed W serve every image size at oneDNN's best: W is packed at pack time for a guessed
 * image (16 outputs a dimension, as bf16_conv.c's pack does), then an op of the real size
 * from the kernel's cache must run the implementation oneDNN picks for that size with W free
 * (not its reference loops "ref:any" for want of a layout), and must not reorder W per run.
 * The detector's shapes: 3x3 stride 2, 3x3 stride 1, 1x1, depthwise. */
static void packed_layouts(void) {
  typedef struct conv_case {
    int64_t c, m, group, k, stride, pad, image;
  } conv_case;
  const conv_case cases[] = {{64, 128, 1, 3, 2, 1, 16}, {16, 32, 1, 3, 2, 1, 80},
                             {32, 32, 1, 3, 1, 1, 40},  {64, 64, 1, 1, 1, 0, 20},
                             {64, 64, 64, 3, 1, 1, 20}, {3, 16, 1, 3, 2, 1, 64}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const conv_case *t = &cases[i];
    actx_dnnl_conv_shape guess, real;
    memset(&guess, 0, sizeof guess);
    guess.spatial = 2;
    guess.batch = 1;
    guess.channels = t->c;
    guess.out_channels = t->m;
    guess.group = t->group;
    guess.bias = true;
    for (int d = 0; d < 2; d++) {
      guess.kernel[d] = t->k;
      guess.strides[d] = t->stride;
      guess.dilations[d] = 1;
      guess.pads_begin[d] = guess.pads_end[d] = t->pad;
    }
    real = guess;
    for (int d = 0; d < 2; d++) {
      guess.in[d] = t->k + 15 * t->stride;
      guess.out[d] = (guess.in[d] + 2 * t->pad - t->k) / t->stride + 1;
      real.in[d] = t->image;
      real.out[d] = (t->image + 2 * t->pad - t->k) / t->stride + 1;
    }
    const size_t n_w = (size_t)(t->m * (t->c / t->group) * t->k * t->k);
    uint16_t *w = malloc(n_w * sizeof *w);
    for (size_t j = 0; j < n_w; j++) w[j] = random_bf16();
    actx_dnnl_weights *packed = NULL;
    const char *why = NULL;
    CHECK(actx_dnnl_conv_pack(&guess, w, &packed, &why) == ACTX_OK);
    actx_dnnl_cache *cache = actx_dnnl_cache_create(packed);
    actx_dnnl_op *op = NULL, *free_op = NULL;
    CHECK(cache != NULL && actx_dnnl_cache_conv(cache, &real, &op, &why) == ACTX_OK);
    CHECK(actx_dnnl_conv_create(&real, NULL, &free_op, &why) == ACTX_OK);
    if (op != NULL && free_op != NULL) {
      const char *impl = actx_dnnl_op_impl(op);
      if (strncmp(impl, "ref", 3) == 0 || strcmp(impl, actx_dnnl_op_impl(free_op)) != 0 ||
          actx_dnnl_op_reorders_weights(op))
        fprintf(stderr, "packed layout case %zu: packed W runs %s%s, free W %s\n", i, impl,
                actx_dnnl_op_reorders_weights(op) ? " reordering W per run" : "",
                actx_dnnl_op_impl(free_op));
      CHECK(strncmp(impl, "ref", 3) != 0);
      CHECK(strcmp(impl, actx_dnnl_op_impl(free_op)) == 0);
      CHECK(!actx_dnnl_op_reorders_weights(op));
    }
    actx_dnnl_cache_release(cache, op);
    actx_dnnl_op_destroy(free_op);
    actx_dnnl_cache_destroy(cache);
    free(w);
  }
}

static void bad_input(void) {
  const int64_t x4[] = {1, 4, 6, 6}, w4[] = {2, 4, 3, 3}, w2[] = {2, 4}, w4g[] = {3, 2, 3, 3},
                x3[] = {1, 4, 6}, w4big[] = {2, 4, 9, 9}, w4c[] = {2, 3, 3, 3};
  const conv_attrs plain = {.spatial = 2};
  expect_error(&plain, shape_of(2, w2), shape_of(2, w2), "W must have");
  expect_error(&plain, shape_of(3, x3), shape_of(4, w4), "rank");
  expect_error(&plain, shape_of(4, x4), shape_of(4, w4c), "channels"); /* C 4 vs 3 */
  expect_error(&plain, shape_of(4, x4), shape_of(4, w4big), "larger");
  const conv_attrs g2 = {.spatial = 2, .group = 2};
  expect_error(&g2, shape_of(4, x4), shape_of(4, w4g), "group does not divide"); /* M 3 */
  const conv_attrs g3 = {.spatial = 2, .group = 3};
  expect_error(&g3, shape_of(4, x4), shape_of(4, (const int64_t[]){3, 1, 3, 3}), "channels");
  const int64_t ks[] = {3, 2};
  const conv_attrs kshape = {.spatial = 2, .kernel_shape = ks};
  expect_error(&kshape, shape_of(4, x4), shape_of(4, w4), "kernel_shape");
  const int64_t s1[] = {1};
  const conv_attrs short_strides = {.spatial = 1, .strides = s1};
  expect_error(&short_strides, shape_of(4, x4), shape_of(4, w4), "one value per spatial");
  const int64_t zero[] = {0, 1}, neg[] = {-1, 0, 0, 0};
  expect_create_error(&(conv_attrs){.spatial = 2, .strides = zero}, "strides");
  expect_create_error(&(conv_attrs){.spatial = 2, .dilations = zero}, "dilations");
  expect_create_error(&(conv_attrs){.spatial = 2, .pads = neg}, "pads");
  expect_create_error(&(conv_attrs){.spatial = 2, .group = -1}, "group");
  expect_create_error(&(conv_attrs){.spatial = 2, .auto_pad = "SAME"}, "auto_pad");
  /* B of the wrong length */
  const actx_bf16_node node = node_of(&plain, true);
  actx_bf16_kernel *k = NULL;
  const char *why = "";
  CHECK(actx_bf16_kernel_create(&node, &k, &why) == ACTX_OK);
  actx_tensor x = tensor(shape_of(4, x4)), w = tensor(shape_of(4, w4));
  actx_tensor b = tensor(shape_of(1, (const int64_t[]){3})), y;
  actx_tensor in[3] = {x, w, b};
  CHECK(actx_bf16_kernel_shapes(k, in, 3, &y, 1, &why) == ACTX_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(why, "B must be") != NULL);
  bool was = false;
  CHECK(actx_bf16_kernel_pack(k, 2, &b, &was, &why) == ACTX_OK && was); /* [3]: taken... */
  CHECK(actx_bf16_kernel_shapes(k, in, 3, &y, 1, &why) == ACTX_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(why, "B must be") != NULL); /* ... and refused against W's M = 2 */
  actx_bf16_kernel_destroy(k);
  free(x.data), free(w.data), free(b.data);
  /* a declared float32 input */
  actx_bf16_node f = node_of(&plain, false);
  f.input_elems[0] = ACTX_ELEM_F32;
  CHECK(actx_bf16_kernel_create(&f, &k, &why) == ACTX_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(why, "bfloat16") != NULL);
}

/* ---- NaN, infinity, empty ------------------------------------------------------------------ */

static void special_values(void) {
  const int64_t xd[] = {1, 2, 5, 5}, wdims[] = {2, 2, 3, 3}, p1[] = {1, 1, 1, 1};
  actx_tensor x = tensor(shape_of(4, xd)), w = tensor(shape_of(4, wdims));
  uint16_t *xp = x.data;
  xp[0 * 25 + 2 * 5 + 2] = 0x7FC0; /* NaN at the centre of channel 0 */
  xp[1 * 25 + 0] = 0x7F80;         /* +inf in a corner of channel 1 */
  xp[1 * 25 + 24] = 0xFF80;        /* -inf in the opposite corner */
  xp[0 * 25 + 4] = 0xFF81;         /* a signalling NaN */
  const conv_attrs pad = {.spatial = 2, .pads = p1};
  conv_case(&pad, x, w, NULL, "Conv NaN / Inf");
  free(x.data), free(w.data);

  /* empty: N = 0 gives an empty Y; C = 0 (no input channel) gives the bias */
  const int64_t x0[] = {0, 2, 5, 5}, xc0[] = {2, 0, 5, 5}, wc0[] = {3, 0, 3, 3}, b3[] = {3};
  actx_tensor e = tensor(shape_of(4, x0)), w2 = tensor(shape_of(4, wdims));
  conv_case(&pad, e, w2, NULL, "Conv N = 0");
  actx_tensor ec = tensor(shape_of(4, xc0)), wc = tensor(shape_of(4, wc0));
  actx_tensor b = tensor(shape_of(1, b3));
  conv_case(&pad, ec, wc, &b, "Conv C = 0");
  free(e.data), free(w2.data), free(ec.data), free(wc.data), free(b.data);
}

/* NaNs and infinities in X over random shapes: oneDNN's kernels compute taps outside a window
 * with zero weights (bf16_conv_nonfinite.h), so without the repair a special spreads to the
 * outputs beside its own (on AMX, AVX512_BF16 and AVX-512 hosts: few channels, groups). */
static void special_shapes(void) {
  const int64_t channels[] = {1, 2, 3, 4, 8, 17, 32};
  for (int t = 0; t < 90; t++) {
    const int64_t c = channels[next() % 7], k = (int64_t[]){1, 3, 3, 5}[next() % 4];
    const int64_t s = 1 + next() % 2, p = next() % 3 == 0 ? 0 : k / 2;
    const bool depthwise = next() % 5 == 0, one_d = next() % 6 == 0;
    const int64_t g = depthwise ? c : 1;
    const int64_t m = depthwise ? c * (1 + next() % 2) : channels[next() % 7];
    const int64_t d = next() % 4 == 0 ? 2 : 1, extent = (k - 1) * d + 1;
    const int64_t h = one_d ? 1 : extent + next() % 12, wd = extent + next() % 16;
    const int64_t st[2] = {s, s}, dl[2] = {d, d}, pads[4] = {p, p, p, p};
    const conv_attrs at = {
        .spatial = one_d ? 1 : 2, .strides = st, .dilations = dl, .pads = pads, .group = g};
    const int64_t xd[] = {1 + next() % 2, c, h, wd}, wdims[] = {m, c / g, k, k}, bd[] = {m};
    actx_shape xs = shape_of(4, xd), ws = shape_of(4, wdims);
    if (one_d) xs.rank = 3, xs.dims[2] = wd, ws.rank = 3, ws.dims[2] = k;
    actx_tensor x = tensor(xs), w = tensor(ws), b = tensor(shape_of(1, bd));
    uint16_t *xp = x.data;
    const size_t n = (size_t)actx_shape_elements(&xs);
    static const uint16_t specials[] = {0x7FC0, 0xFFC1, 0x7F80, 0xFF80, 0x7F81};
    for (int i = 0; i < 3; i++) xp[next() % n] = specials[next() % 5];
    const size_t w_count = (size_t)actx_shape_elements(&ws);
    if (t % 10 == 0) ((uint16_t *)w.data)[next() % w_count] = 0; /* inf·0 */
    if (t % 10 == 5) ((uint16_t *)b.data)[0] = 0xFF80; /* -inf + inf in channel 0 */
    char label[112];
    snprintf(label, sizeof label, "Conv specials %lldx%lld c%lld m%lld g%lld k%lld s%lld d%lld "
             "p%lld",
             (long long)h, (long long)wd, (long long)c, (long long)m, (long long)g, (long long)k,
             (long long)s, (long long)d, (long long)p);
    conv_case(&at, x, w, t % 2 ? &b : NULL, label);
    free(x.data), free(w.data), free(b.data);
  }
}

/* ---- two threads, one kernel --------------------------------------------------------------- */

typedef struct job {
  const actx_bf16_kernel *k;
  actx_tensor in[3];
  actx_tensor y;
  actx_status st;
} job;

static void *run_job(void *arg) {
  job *j = arg;
  const char *why;
  for (int r = 0; r < 10 && j->st == ACTX_OK; r++)
    j->st = actx_bf16_kernel_run(j->k, j->in, 3, &j->y, 1, NULL, &why);
  return NULL;
}

static void concurrent(void) {
  const int64_t xd[] = {1, 8, 12, 12}, wdims[] = {16, 8, 3, 3}, bd[] = {16}, p1[] = {1, 1, 1, 1};
  const conv_attrs c = {.spatial = 2, .pads = p1};
  const actx_bf16_node node = node_of(&c, true);
  actx_bf16_kernel *k = NULL;
  const char *why;
  CHECK(actx_bf16_kernel_create(&node, &k, &why) == ACTX_OK);
  if (k == NULL) return;
  actx_tensor x = tensor(shape_of(4, xd)), w = tensor(shape_of(4, wdims));
  actx_tensor b = tensor(shape_of(1, bd));
  bool was;
  CHECK(actx_bf16_kernel_pack(k, 1, &w, &was, &why) == ACTX_OK && was);
  const int64_t yd[] = {1, 16, 12, 12};
  const size_t n = 16 * 144;
  job jobs[2];
  for (int t = 0; t < 2; t++)
    jobs[t] = (job){.k = k, .in = {x, ACTX_TENSOR_ABSENT, b}, .y = tensor(shape_of(4, yd)),
                    .st = ACTX_OK};
  actx_tensor ref = tensor(shape_of(4, yd));
  CHECK(actx_bf16_kernel_run(k, jobs[0].in, 3, &ref, 1, NULL, &why) == ACTX_OK);
  pthread_t th[2];
  for (int t = 0; t < 2; t++) pthread_create(&th[t], NULL, run_job, &jobs[t]);
  for (int t = 0; t < 2; t++) pthread_join(th[t], NULL);
  for (int t = 0; t < 2; t++) {
    CHECK(jobs[t].st == ACTX_OK);
    CHECK(memcmp(jobs[t].y.data, ref.data, n * 2) == 0);
    free(jobs[t].y.data);
  }
  free(ref.data), free(x.data), free(w.data), free(b.data);
  actx_bf16_kernel_destroy(k);
}

/* ---- an activation applied by the Conv (bf16.h's actx_bf16_kernel_fuse_activation) -------- */

static actx_bf16_kernel *unary_kernel(actx_bf16_op op, int version, float alpha) {
  actx_bf16_node n = {.op = op, .since_version = version, .n_inputs = 1, .n_outputs = 1,
                      .input_present = {true}, .output_present = {true},
                      .input_elems = {ACTX_ELEM_BF16}};
  if (alpha != 0.0f) n.attrs.has_alpha = true, n.attrs.alpha = alpha;
  actx_bf16_kernel *k = NULL;
  const char *why = "";
  CHECK(actx_bf16_kernel_create(&n, &k, &why) == ACTX_OK);
  return k;
}

/* Y of the Conv (node) on in, run with par, into a fresh buffer; *count its elements. */
static uint16_t *conv_run(actx_bf16_kernel *k, const actx_tensor *in, size_t n_in,
                          const actx_parallel *par, actx_tensor *y, const char *label) {
  const char *why = "";
  *y = (actx_tensor){.elem = ACTX_ELEM_COUNT};
  CHECK(actx_bf16_kernel_shapes(k, in, n_in, y, 1, &why) == ACTX_OK);
  const size_t count = (size_t)actx_shape_elements(&y->shape);
  y->data = calloc(count + 1, 2);
  const actx_status st = actx_bf16_kernel_run(k, in, n_in, y, 1, par, &why);
  CHECK(st == ACTX_OK);
  if (st != ACTX_OK) fprintf(stderr, "%s: %s\n", label, why);
  return y->data;
}

/* The Conv with the activation fused gives the bits of the Conv, then the activation's own
 * kernel on its result: every path of a run (channels-last and not, slabs over tasks, the
 * NaN / infinity repair, an input of no channel), W constant and at run time. */
static void fused_case(const conv_attrs *attrs, actx_tensor x, actx_tensor w, const actx_tensor *b,
                       const actx_bf16_kernel *act, size_t tasks, const char *label) {
  const actx_bf16_node node = node_of(attrs, b != NULL);
  const actx_parallel par = {reversed_parallel_for, NULL, tasks, 0};
  for (int packed = 0; packed < 2; packed++) {
    actx_bf16_kernel *plain = NULL, *fused = NULL;
    const char *why = "";
    CHECK(actx_bf16_kernel_create(&node, &plain, &why) == ACTX_OK);
    CHECK(actx_bf16_kernel_create(&node, &fused, &why) == ACTX_OK);
    if (plain == NULL || fused == NULL) return;
    CHECK(actx_bf16_kernel_fuse_activation(fused, act));
    CHECK(!actx_bf16_kernel_fuse_activation(fused, act)); /* one activation a Conv */
    actx_tensor in[3] = {x, w, b != NULL ? *b : ACTX_TENSOR_ABSENT}, in_fused[3];
    memcpy(in_fused, in, sizeof in);
    bool was = false;
    if (packed && actx_bf16_kernel_pack(plain, 1, &w, &was, &why) == ACTX_OK && was)
      in[1] = ACTX_TENSOR_ABSENT;
    if (packed && actx_bf16_kernel_pack(fused, 1, &w, &was, &why) == ACTX_OK && was)
      in_fused[1] = ACTX_TENSOR_ABSENT;
    const size_t n_in = b != NULL ? 3 : 2;
    actx_tensor y, z, yf;
    slab_tasks = 0;
    conv_run(plain, in, n_in, tasks > 1 ? &par : NULL, &y, label);
    const size_t count = (size_t)actx_shape_elements(&y.shape);
    z = y;
    z.data = calloc(count + 1, 2);
    CHECK(actx_bf16_kernel_run(act, &y, 1, &z, 1, NULL, &why) == ACTX_OK);
    conv_run(fused, in_fused, n_in, tasks > 1 ? &par : NULL, &yf, label);
    CHECK(tasks == 1 || slab_tasks >= 2);
    const bool same = memcmp(z.data, yf.data, count * 2) == 0;
    if (!same)
      fprintf(stderr, "%s (%s W, %zu tasks): the fused activation differs\n", label,
              packed ? "constant" : "runtime", tasks);
    CHECK(same);
    checked += (int)count;
    free(y.data), free(z.data), free(yf.data);
    actx_bf16_kernel_destroy(plain);
    actx_bf16_kernel_destroy(fused);
  }
}

static void fused_activations(void) {
  actx_bf16_kernel *acts[] = {unary_kernel(ACTX_BF16_OP_RELU, 14, 0.0f),
                              unary_kernel(ACTX_BF16_OP_HARD_SWISH, 22, 0.0f),
                              unary_kernel(ACTX_BF16_OP_LEAKY_RELU, 16, 0.1f),
                              unary_kernel(ACTX_BF16_OP_NEG, 13, 0.0f)};
  const char *names[] = {"Relu", "HardSwish", "LeakyRelu", "Neg"};
  const int64_t p1[] = {1, 1, 1, 1}, s2[] = {2, 2};
  for (size_t a = 0; a < sizeof acts / sizeof acts[0]; a++) {
    const actx_bf16_kernel *act = acts[a];
    if (act == NULL) continue;
    char label[96];
    const int64_t xd[] = {1, 32, 40, 40}, wd[] = {32, 32, 3, 3}, bd[] = {32};
    actx_tensor x = tensor(shape_of(4, xd)), w = tensor(shape_of(4, wd)), b = tensor(shape_of(1, bd));
    snprintf(label, sizeof label, "Conv + %s: 3x3 pads 1", names[a]);
    fused_case(&(conv_attrs){.spatial = 2, .pads = p1}, x, w, &b, act, 1, label);
    snprintf(label, sizeof label, "Conv + %s: slabs over 3 tasks", names[a]);
    fused_case(&(conv_attrs){.spatial = 2, .pads = p1}, x, w, &b, act, 3, label);
    /* a NaN, an infinity and a signalling NaN: the repair's results are looked up too */
    uint16_t *xp = x.data;
    xp[5 * 1600 + 10 * 40 + 10] = 0x7FC0, xp[9 * 1600] = 0x7F80, xp[2 * 1600 + 99] = 0xFF81;
    snprintf(label, sizeof label, "Conv + %s: NaN / Inf in X", names[a]);
    fused_case(&(conv_attrs){.spatial = 2, .pads = p1, .strides = s2}, x, w, NULL, act, 1, label);
    snprintf(label, sizeof label, "Conv + %s: NaN / Inf in X, slabs over 3 tasks", names[a]);
    fused_case(&(conv_attrs){.spatial = 2, .pads = p1}, x, w, &b, act, 3, label);
    free(x.data), free(w.data), free(b.data);
    /* depthwise, few channels (oneDNN's layouts differ), 1-D, and an input of no channel */
    const int64_t xg[] = {2, 8, 9, 11}, wg[] = {8, 1, 3, 3};
    actx_tensor xg_t = tensor(shape_of(4, xg)), wg_t = tensor(shape_of(4, wg));
    snprintf(label, sizeof label, "Conv + %s: depthwise, N 2", names[a]);
    fused_case(&(conv_attrs){.spatial = 2, .group = 8, .pads = p1}, xg_t, wg_t, NULL, act, 1,
               label);
    free(xg_t.data), free(wg_t.data);
    const int64_t x1[] = {1, 3, 30}, w1[] = {5, 3, 3}, b5[] = {5};
    actx_tensor x1_t = tensor(shape_of(3, x1)), w1_t = tensor(shape_of(3, w1));
    actx_tensor b5_t = tensor(shape_of(1, b5));
    snprintf(label, sizeof label, "Conv + %s: 1-D", names[a]);
    fused_case(&(conv_attrs){.spatial = 1}, x1_t, w1_t, &b5_t, act, 1, label);
    free(x1_t.data), free(w1_t.data);
    const int64_t x0[] = {1, 0, 5, 5}, w0[] = {5, 0, 3, 3};
    actx_tensor x0_t = tensor(shape_of(4, x0)), w0_t = tensor(shape_of(4, w0));
    snprintf(label, sizeof label, "Conv + %s: no input channel (the bias)", names[a]);
    fused_case(&(conv_attrs){.spatial = 2, .pads = p1}, x0_t, w0_t, &b5_t, act, 1, label);
    free(x0_t.data), free(w0_t.data), free(b5_t.data);
  }
  /* refused: an activation that is no table (Add), a ConvTranspose, none */
  const conv_attrs c = {.spatial = 2};
  const actx_bf16_node node = node_of(&c, false);
  actx_bf16_node t = node;
  t.op = ACTX_BF16_OP_CONV_TRANSPOSE;
  actx_bf16_node add = {.op = ACTX_BF16_OP_ADD, .since_version = 14, .n_inputs = 2,
                        .n_outputs = 1, .input_present = {true, true}, .output_present = {true},
                        .input_elems = {ACTX_ELEM_BF16, ACTX_ELEM_BF16}};
  actx_bf16_kernel *conv = NULL, *convt = NULL, *add_k = NULL;
  const char *why = "";
  CHECK(actx_bf16_kernel_create(&node, &conv, &why) == ACTX_OK);
  CHECK(actx_bf16_kernel_create(&t, &convt, &why) == ACTX_OK);
  CHECK(actx_bf16_kernel_create(&add, &add_k, &why) == ACTX_OK);
  CHECK(!actx_bf16_kernel_fuse_activation(conv, add_k));
  CHECK(!actx_bf16_kernel_fuse_activation(conv, NULL));
  CHECK(!actx_bf16_kernel_fuse_activation(convt, acts[0]));
  CHECK(!actx_bf16_kernel_fuse_activation(add_k, acts[0]));
  CHECK(actx_bf16_kernel_fuse_activation(conv, acts[0]));
  actx_bf16_kernel_destroy(conv);
  actx_bf16_kernel_destroy(convt);
  actx_bf16_kernel_destroy(add_k);
  for (size_t a = 0; a < sizeof acts / sizeof acts[0]; a++) actx_bf16_kernel_destroy(acts[a]);
}

int main(void) {
  if (!actx_dnnl_available()) {
    const conv_attrs c = {.spatial = 2};
    const actx_bf16_node node = node_of(&c, false);
    actx_bf16_kernel *k = NULL;
    const char *why = NULL;
    CHECK(actx_bf16_kernel_create(&node, &k, &why) != ACTX_OK && k == NULL);
    CHECK(why != NULL && strstr(why, "oneDNN not available") != NULL);
    printf("test_bf16_conv: skipped: oneDNN not available in this build\n");
    return failures ? 1 : 0;
  }
  const int64_t s2[] = {2, 2}, d2[] = {2, 2}, p1[] = {1, 1, 1, 1}, pa[] = {0, 1, 2, 0},
                s21[] = {2, 1}, k33[] = {3, 3};
  case2d(1, 3, 8, 8, 4, 3, 3, &(conv_attrs){.spatial = 2}, false, "2-D plain");
  case2d(2, 3, 9, 7, 5, 3, 3, &(conv_attrs){.spatial = 2, .pads = p1}, true, "pads 1, bias, N 2");
  case2d(1, 4, 9, 10, 3, 3, 2, &(conv_attrs){.spatial = 2, .pads = pa}, true, "asymmetric pads");
  case2d(1, 3, 11, 11, 4, 3, 3, &(conv_attrs){.spatial = 2, .strides = s2, .pads = p1}, true,
         "stride 2");
  case2d(1, 3, 12, 11, 4, 3, 3, &(conv_attrs){.spatial = 2, .dilations = d2}, false,
         "dilation 2");
  case2d(1, 3, 13, 12, 4, 3, 3,
         &(conv_attrs){.spatial = 2, .strides = s21, .dilations = d2, .pads = pa}, true,
         "stride, dilation, pads");
  case2d(1, 4, 7, 7, 6, 3, 3, &(conv_attrs){.spatial = 2, .group = 2, .pads = p1}, true,
         "group 2");
  case2d(1, 5, 8, 9, 5, 3, 3, &(conv_attrs){.spatial = 2, .group = 5, .pads = p1}, true,
         "depthwise");
  case2d(1, 6, 8, 8, 12, 3, 3, &(conv_attrs){.spatial = 2, .group = 6, .strides = s2}, false,
         "depthwise x2 multiplier, stride 2");
  case2d(1, 32, 7, 7, 48, 1, 1, &(conv_attrs){.spatial = 2}, true, "1x1");
  case2d(1, 48, 40, 40, 32, 1, 1, &(conv_attrs){.spatial = 2}, true, "1x1, 48 channels");
  case2d(1, 16, 20, 20, 32, 3, 3,
         &(conv_attrs){.spatial = 2, .strides = s2, .pads = p1, .kernel_shape = k33}, true,
         "detector block: 3x3 stride 2, kernel_shape");
  case2d(1, 3, 10, 9, 4, 3, 3, &(conv_attrs){.spatial = 2, .auto_pad = "SAME_UPPER", .strides = s2},
         true, "SAME_UPPER");
  case2d(1, 3, 10, 9, 4, 3, 3, &(conv_attrs){.spatial = 2, .auto_pad = "SAME_LOWER", .strides = s2},
         true, "SAME_LOWER");
  case2d(1, 3, 10, 9, 4, 4, 2, &(conv_attrs){.spatial = 2, .auto_pad = "SAME_LOWER"}, false,
         "SAME_LOWER, even kernel");
  case2d(1, 3, 10, 9, 4, 3, 3, &(conv_attrs){.spatial = 2, .auto_pad = "VALID", .pads = p1},
         false, "VALID (pads ignored)");
  case2d(1, 3, 10, 9, 4, 3, 3, &(conv_attrs){.spatial = 2, .auto_pad = "NOTSET", .pads = p1},
         false, "NOTSET");
  case2d(1, 2, 1, 1, 3, 1, 1, &(conv_attrs){.spatial = 2}, true, "1x1 image");
  /* a result rounded in many blocks of positions (bf16_dnnl.c's round_channels_first: 341 of
   * 24 channels a block), the last one short, in two images */
  case2d(2, 3, 41, 45, 24, 3, 3, &(conv_attrs){.spatial = 2, .pads = p1}, true,
         "1,845 positions of 24 channels, N 2: many rounding blocks");
  const int64_t s1[] = {2}, d1[] = {2}, p1d[] = {1, 2};
  case1d(2, 3, 11, 4, 3, &(conv_attrs){.spatial = 1}, true, "1-D");
  case1d(2, 3, 17, 4, 3, &(conv_attrs){.spatial = 1, .strides = s1, .dilations = d1, .pads = p1d},
         true, "1-D stride, dilation, pads");
  case1d(1, 6, 15, 6, 5, &(conv_attrs){.spatial = 1, .group = 3, .auto_pad = "SAME_UPPER"}, false,
         "1-D groups SAME_UPPER");
  special_values();
  special_shapes();
  bad_input();
  concurrent();
  packed_layouts();
  slabs();
  channels_last();
  padding_1x1();
  fused_activations();
  if (failures) {
    fprintf(stderr, "test_bf16_conv: %d failures\n", failures);
    return 1;
  }
  printf("test_bf16_conv: %d outputs within the bound (oneDNN computes in %s)\n", checked,
         actx_dnnl_native_bf16() ? "bfloat16 hardware" : "float32: no bfloat16 hardware here");
  return 0;
}
