/* ConvTranspose of the bfloat16 service (bf16_conv.c over oneDNN's deconvolution) against a
 * double reference of ONNX's definition, written as the scatter it is: input position i of
 * channel c adds x · w[c, m, k] to output i · stride + k · dilation - pad_begin of every
 * channel m of its group. Output size and pads as ORT's float32 kernel gives them (measured on
 * ORT 1.30-1.32: output_shape or SAME total pads put the odd one at the start, but SAME_UPPER's
 * at the end; a SAME output no longer than the taps reach); 1-D, 2-D and 3-D, groups,
 * depthwise, dilations, output_padding beyond the end pad, an output_shape a stride short of
 * one more input; and what ORT refuses, refused.
 *
 * The bound is test_bf16_conv.c's: exact products, float32 accumulation of the K terms an output
 * has and the bias, one rounding:
 *   |y - r| <= 2^-8·|r| + (1 + 2^-8)·(K + 2)·2^-24·(Σ|x·w| + |b|);
 * NaN (quiet) where r is NaN, the same infinity where r is infinite (X with NaNs and infinities:
 * bf16_conv_nonfinite.h's repair, transposed). Also: packed and runtime W give the same bits
 * where oneDNN computes in float32, and what is refused. */
#include "bf16_dnnl.h"
#include "bf16_test_run.h"

static int checked;

static uint16_t random_bf16(void) {
  const float mag =
      ldexpf(1.0f + (float)(rng_u32() & 0xFFFF) / 65536.0f, (int)(rng_u32() % 8) - 6);
  return bf(rng_u32() & 1 ? -mag : mag);
}

static actx_tensor tensor(size_t rank, const int64_t *dims) {
  const actx_shape s = shape_of(rank, dims);
  const size_t n = (size_t)actx_shape_elements(&s);
  uint16_t *d = malloc(n > 0 ? n * 2 : 2);
  for (size_t i = 0; i < n; i++) d[i] = random_bf16();
  return tensor_bf16(s, d);
}

/* A ConvTranspose as a test states it: 0 / NULL = unset. */
typedef struct ct_case {
  const char *label, *auto_pad;
  size_t spatial;
  int64_t n, c, m, group;
  int64_t in[3], k[3];
  const int64_t *strides, *dilations, *pads, *output_padding, *output_shape;
  bool bias;
  bool specials; /* NaNs and infinities in X */
} ct_case;

static actx_bf16_node node_of(const ct_case *t) {
  actx_bf16_node n = {.op = ACTX_BF16_OP_CONV_TRANSPOSE, .since_version = 22,
                      .n_inputs = t->bias ? 3 : 2, .n_outputs = 1,
                      .input_present = {true, true, t->bias}, .output_present = {true}};
  actx_bf16_attrs *a = &n.attrs;
  const size_t sp = t->spatial;
  if (t->auto_pad)
    a->has_auto_pad = true, snprintf(a->auto_pad, sizeof a->auto_pad, "%s", t->auto_pad);
  if (t->group) a->has_group = true, a->group = t->group;
  if (t->strides) a->has_strides = true, a->n_strides = sp, memcpy(a->strides, t->strides, sp * 8);
  if (t->dilations)
    a->has_dilations = true, a->n_dilations = sp, memcpy(a->dilations, t->dilations, sp * 8);
  if (t->pads) a->has_pads = true, a->n_pads = 2 * sp, memcpy(a->pads, t->pads, 2 * sp * 8);
  if (t->output_padding)
    a->has_output_padding = true, a->n_output_padding = sp,
    memcpy(a->output_padding, t->output_padding, sp * 8);
  if (t->output_shape)
    a->has_output_shape = true, a->n_output_shape = sp,
    memcpy(a->output_shape, t->output_shape, sp * 8);
  return n;
}

/* The output size and begin pad along spatial dimension i, written out afresh. */
static void geometry(const ct_case *t, size_t i, int64_t *out, int64_t *lo) {
  const int64_t s = t->strides ? t->strides[i] : 1, d = t->dilations ? t->dilations[i] : 1;
  const int64_t adj = t->output_padding ? t->output_padding[i] : 0;
  const int64_t full = (t->in[i] - 1) * s + adj + (t->k[i] - 1) * d + 1;
  const bool same = t->auto_pad && strncmp(t->auto_pad, "SAME", 4) == 0;
  const bool upper = same && strcmp(t->auto_pad, "SAME_UPPER") == 0;
  if (t->output_shape || same) {
    const int64_t want = t->output_shape ? t->output_shape[i] : t->in[i] * s;
    const int64_t total = full > want ? full - want : 0;
    *lo = upper ? total / 2 : total - total / 2;
    /* an output_shape past full: outputs no input reaches, the bias alone */
    *out = t->output_shape ? want : full - total;
  } else {
    const bool valid = t->auto_pad && strcmp(t->auto_pad, "VALID") == 0;
    *lo = t->pads && !valid ? t->pads[i] : 0;
    *out = full - *lo - (t->pads && !valid ? t->pads[t->spatial + i] : 0);
  }
}

static void check_against_reference(const ct_case *t, const actx_tensor *x, const actx_tensor *w,
                                    const actx_tensor *b, const actx_tensor *y) {
  int64_t out[3] = {1, 1, 1}, lo[3] = {0, 0, 0}, in[3] = {1, 1, 1}, k[3] = {1, 1, 1};
  int64_t st[3] = {1, 1, 1}, dl[3] = {1, 1, 1};
  for (size_t i = 0; i < t->spatial; i++) {
    geometry(t, i, &out[i], &lo[i]);
    in[i] = t->in[i], k[i] = t->k[i];
    if (t->strides) st[i] = t->strides[i];
    if (t->dilations) dl[i] = t->dilations[i];
  }
  CHECK(y->shape.rank == 2 + t->spatial && y->shape.dims[0] == t->n && y->shape.dims[1] == t->m);
  for (size_t i = 0; i < t->spatial; i++) CHECK(y->shape.dims[2 + i] == out[i]);
  const int64_t g = t->group ? t->group : 1, cg = t->c / g, mg = t->m / g;
  const size_t plane = (size_t)(out[0] * out[1] * out[2]), count = (size_t)(t->n * t->m) * plane;
  double *sum = calloc(count, sizeof *sum), *mag = calloc(count, sizeof *mag);
  int *terms = calloc(count, sizeof *terms);
  const uint16_t *xd = x->data, *wd = w->data, *yd = y->data;
  for (int64_t n = 0; n < t->n; n++)
    for (int64_t c = 0; c < t->c; c++)
      for (int64_t i0 = 0; i0 < in[0]; i0++)
        for (int64_t i1 = 0; i1 < in[1]; i1++)
          for (int64_t i2 = 0; i2 < in[2]; i2++) {
            const double xv =
                actx_bf16_to_f32(xd[(((n * t->c + c) * in[0] + i0) * in[1] + i1) * in[2] + i2]);
            for (int64_t mo = 0; mo < mg; mo++)
              for (int64_t k0 = 0; k0 < k[0]; k0++)
                for (int64_t k1 = 0; k1 < k[1]; k1++)
                  for (int64_t k2 = 0; k2 < k[2]; k2++) {
                    const int64_t o0 = i0 * st[0] + k0 * dl[0] - lo[0];
                    const int64_t o1 = i1 * st[1] + k1 * dl[1] - lo[1];
                    const int64_t o2 = i2 * st[2] + k2 * dl[2] - lo[2];
                    if (o0 < 0 || o0 >= out[0] || o1 < 0 || o1 >= out[1] || o2 < 0 ||
                        o2 >= out[2])
                      continue;
                    const double wv = actx_bf16_to_f32(
                        wd[(((c * mg + mo) * k[0] + k0) * k[1] + k1) * k[2] + k2]);
                    const size_t at = (size_t)((n * t->m + c / cg * mg + mo) * (int64_t)plane +
                                               (o0 * out[1] + o1) * out[2] + o2);
                    sum[at] += xv * wv;
                    mag[at] += fabs(xv * wv);
                    terms[at]++;
                  }
          }
  int bad = 0;
  for (size_t at = 0; at < count; at++) {
    double r = sum[at], e = mag[at];
    if (b != NULL) {
      const double bv = actx_bf16_to_f32(((const uint16_t *)b->data)[at / plane % (size_t)t->m]);
      r += bv, e += fabs(bv);
    }
    const float yv = actx_bf16_to_f32(yd[at]);
    bool ok;
    if (isnan(r)) ok = isnan(yv) && (yd[at] & 0x0040u) != 0;
    else if (isinf(r)) ok = yv == (float)r;
    else
      ok = fabs(yv - r) <=
           ldexp(fabs(r), -8) + (1 + ldexp(1, -8)) * (terms[at] + 2) * ldexp(e, -24);
    checked++;
    if (!ok && bad++ < 3) {
      fprintf(stderr, "%s: y[%zu] = %.9g (0x%04x), reference %.12g\n", t->label, at, yv, yd[at],
              r);
      failures++;
    }
  }
  free(sum), free(mag), free(terms);
}

/* The case with W at run time and with W and B packed. */
static void run_case(const ct_case *t) {
  const size_t rank = 2 + t->spatial;
  int64_t xd[5] = {t->n, t->c}, wd[5] = {t->c, t->m / (t->group ? t->group : 1)};
  for (size_t i = 0; i < t->spatial; i++) xd[2 + i] = t->in[i], wd[2 + i] = t->k[i];
  actx_tensor x = tensor(rank, xd), w = tensor(rank, wd), b = tensor(1, &t->m);
  if (t->specials) {
    uint16_t *p = x.data;
    const size_t n = (size_t)actx_shape_elements(&x.shape);
    p[n / 3] = 0x7FC1, p[n / 2] = 0x7F80, p[n - 1] = 0xFF80;
  }
  const actx_bf16_node node = node_of(t);
  uint16_t *outs[2] = {NULL, NULL};
  size_t count = 0;
  for (int packed = 0; packed < 2; packed++) {
    actx_bf16_kernel *k = NULL;
    const char *why = "";
    if (actx_bf16_kernel_create(&node, &k, &why) != ACTX_OK) {
      fprintf(stderr, "%s: create: %s\n", t->label, why);
      failures++;
      break;
    }
    actx_tensor in[3] = {x, w, t->bias ? b : ACTX_TENSOR_ABSENT};
    if (packed) {
      bool was = false;
      CHECK(actx_bf16_kernel_pack(k, 1, &w, &was, &why) == ACTX_OK && was);
      in[1] = ACTX_TENSOR_ABSENT;
      if (t->bias) {
        CHECK(actx_bf16_kernel_pack(k, 2, &b, &was, &why) == ACTX_OK && was);
        in[2] = ACTX_TENSOR_ABSENT;
      }
    }
    actx_tensor y = {.elem = ACTX_ELEM_COUNT};
    actx_status st = actx_bf16_kernel_shapes(k, in, t->bias ? 3 : 2, &y, 1, &why);
    if (st == ACTX_OK) {
      count = (size_t)actx_shape_elements(&y.shape);
      y.data = outs[packed] = malloc(count * 2 + 2);
      st = actx_bf16_kernel_run(k, in, t->bias ? 3 : 2, &y, 1, NULL, &why);
    }
    if (st != ACTX_OK) {
      fprintf(stderr, "%s: %s\n", t->label, why);
      failures++;
    } else {
      check_against_reference(t, &x, &w, t->bias ? &b : NULL, &y);
    }
    actx_bf16_kernel_destroy(k);
  }
  if (outs[0] && outs[1] && !actx_dnnl_native_bf16())
    CHECK(memcmp(outs[0], outs[1], count * 2) == 0);
  free(outs[0]), free(outs[1]), free(x.data), free(w.data), free(b.data);
}

static const int64_t S2[] = {2, 2}, S32[] = {3, 2}, S12[] = {1, 2}, S3[] = {3}, S221[] = {2, 2, 1};
static const int64_t D2[] = {2, 2}, D13[] = {1, 3};
static const int64_t P1[] = {1, 1, 1, 1}, P0100[] = {0, 1, 0, 0}, P2[] = {2, 0, 1, 1};
static const int64_t A1[] = {1, 1}, A21[] = {2, 1}, OS[] = {10, 9}, OS_BIG[] = {12, 12};
static const int64_t OS40[] = {40, 40};

static void cases(void) {
  const ct_case list[] = {
      {"k2 s2 (DBNet's upsampling)", NULL, 2, 1, 8, 4, 0, {5, 6}, {2, 2}, S2, NULL, NULL, NULL,
       NULL, true, false},
      {"k3 s2 pads 1 output_padding 1, N 2", NULL, 2, 2, 6, 3, 0, {7, 5}, {3, 3}, S2, NULL, P1,
       A1, NULL, true, false},
      {"output_padding beyond the end pad", NULL, 2, 1, 4, 5, 0, {4, 4}, {3, 3}, S32, NULL,
       P0100, A21, NULL, false, false},
      {"group 2, dilations 2", NULL, 2, 1, 6, 4, 2, {5, 5}, {3, 3}, S12, D2, NULL, NULL, NULL,
       true, false},
      {"SAME_UPPER, odd total", "SAME_UPPER", 2, 1, 4, 4, 0, {5, 5}, {4, 3}, S2, NULL, NULL,
       NULL, NULL, false, false},
      {"SAME_LOWER, odd total", "SAME_LOWER", 2, 1, 4, 4, 0, {5, 5}, {4, 3}, S2, NULL, NULL,
       NULL, NULL, false, false},
      {"VALID, pads ignored", "VALID", 2, 1, 3, 2, 0, {4, 3}, {2, 3}, S12, D13, NULL, NULL, NULL,
       true, false},
      {"output_shape", NULL, 2, 1, 4, 4, 0, {5, 5}, {3, 3}, S2, NULL, NULL, NULL, OS, true,
       false},
      {"output_shape past what the taps reach", NULL, 2, 1, 4, 4, 0, {5, 5}, {3, 3}, S2, NULL,
       NULL, NULL, OS_BIG, true, false},
      {"output_shape 2 x in, 20 x 20 (packed for another size)", NULL, 2, 1, 3, 4, 0, {20, 20},
       {2, 2}, S2, NULL, NULL, NULL, OS40, true, false},
      {"SAME_UPPER, kernel below the stride", "SAME_UPPER", 2, 1, 2, 2, 0, {2, 3}, {1, 1}, S2,
       NULL, NULL, NULL, NULL, true, false},
      {"NaN and infinities in X, output_padding beyond the end pad", NULL, 2, 1, 4, 5, 0, {4, 4},
       {3, 3}, S32, NULL, P0100, A21, NULL, true, true},
      {"1-D", NULL, 1, 2, 3, 5, 0, {9}, {4}, S3, NULL, NULL, NULL, NULL, true, false},
      {"3-D", NULL, 3, 1, 2, 3, 0, {3, 4, 3}, {2, 2, 2}, S221, NULL, NULL, NULL, NULL, true,
       false},
      {"depthwise", NULL, 2, 1, 8, 8, 8, {6, 6}, {3, 3}, S2, NULL, P1, A1, NULL, true, false},
      {"pads 2 0 1 1, 33 channels", NULL, 2, 1, 33, 17, 0, {6, 7}, {3, 2}, S2, NULL, P2, NULL,
       NULL, true, false},
      {"NaN and infinities in X", NULL, 2, 1, 5, 6, 0, {6, 6}, {3, 3}, S2, NULL, P1, A1, NULL,
       true, true},
      {"NaN and infinities in X, groups, 1-D", NULL, 1, 2, 4, 6, 2, {11}, {4}, S3, NULL, NULL,
       NULL, NULL, true, true},
  };
  for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) run_case(&list[i]);
}

static void expect(const actx_bf16_node *node, int64_t c, int64_t h, int64_t wc, int64_t k,
                   const char *needle) {
  actx_bf16_kernel *kernel = NULL;
  const char *why = "";
  actx_status st = actx_bf16_kernel_create(node, &kernel, &why);
  if (st == ACTX_OK) {
    const int64_t xd[4] = {1, c, h, h}, wd[4] = {wc, 2, k, k};
    actx_tensor x = tensor(4, xd), w = tensor(4, wd), y;
    actx_tensor in[2] = {x, w};
    st = actx_bf16_kernel_shapes(kernel, in, 2, &y, 1, &why);
    free(x.data), free(w.data);
    actx_bf16_kernel_destroy(kernel);
  }
  CHECK(st == ACTX_ERROR_INVALID_ARGUMENT && strstr(why, needle) != NULL);
  if (strstr(why, needle) == NULL) fprintf(stderr, "  wanted '%s', got '%s'\n", needle, why);
}

static void bad_input(void) {
  const ct_case plain = {.spatial = 2, .strides = S2};
  actx_bf16_node n = node_of(&plain);
  expect(&n, 4, 5, 3, 2, "X's channels are not W's C");
  n.attrs.has_output_padding = true, n.attrs.n_output_padding = 2;
  n.attrs.output_padding[0] = -1;
  expect(&n, 4, 5, 4, 2, "output_padding must not be negative");
  n.attrs.output_padding[0] = 2; /* stride 2 */
  expect(&n, 4, 5, 4, 2, "less than the stride or the dilation");
  n.attrs.output_padding[0] = 0, n.attrs.n_output_padding = 1;
  expect(&n, 4, 5, 4, 2, "one value per spatial dimension");
  n = node_of(&plain);
  n.attrs.has_output_shape = true, n.attrs.n_output_shape = 2;
  n.attrs.output_shape[0] = 0, n.attrs.output_shape[1] = 4;
  expect(&n, 4, 5, 4, 2, "output_shape must be positive");
  n = node_of(&plain);
  n.attrs.has_output_shape = true, n.attrs.n_output_shape = 2;
  n.attrs.output_shape[0] = 12, n.attrs.output_shape[1] = 10; /* reach 10, stride 2 */
  expect(&n, 4, 5, 4, 2, "larger than the input's size allows");
  n.attrs.n_output_shape = 4; /* N and M too: ONNX's shape inference refuses it */
  n.attrs.output_shape[0] = 1, n.attrs.output_shape[1] = 4;
  n.attrs.output_shape[2] = n.attrs.output_shape[3] = 10;
  expect(&n, 4, 5, 4, 2, "one value per spatial dimension");
  static const int64_t s1[] = {1, 1}, d2[] = {2, 2}, a1[] = {1, 1}, huge[] = {1 << 25, 1};
  const ct_case dilated = {.spatial = 2, .strides = s1, .dilations = d2, .output_padding = a1};
  n = node_of(&dilated); /* output_padding 1 < dilation 2, but a stride 1 past the taps */
  expect(&n, 4, 5, 4, 2, "larger than the input's size allows");
  const ct_case far = {.spatial = 2, .strides = huge};
  n = node_of(&far);
  expect(&n, 4, 5, 4, 2, "above 2^24");
  n = node_of(&plain);
  n.attrs.has_group = true, n.attrs.group = 3;
  expect(&n, 4, 5, 4, 2, "group does not divide W's input channels C");
  n = node_of(&plain);
  n.attrs.has_pads = true, n.attrs.n_pads = 4;
  n.attrs.pads[0] = n.attrs.pads[2] = 6; /* (1 - 1)·2 + 2 - 12 */
  expect(&n, 4, 1, 4, 2, "the output would be empty");
  /* Conv has neither attribute */
  n = node_of(&plain);
  n.op = ACTX_BF16_OP_CONV;
  n.attrs.has_output_padding = true, n.attrs.n_output_padding = 2;
  actx_bf16_kernel *k = NULL;
  const char *why = "";
  CHECK(actx_bf16_kernel_create(&n, &k, &why) == ACTX_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(why, "Conv has no output_padding") != NULL);
  /* X with a spatial size of 0 */
  n = node_of(&plain);
  expect(&n, 4, 0, 4, 2, "spatial sizes must be positive");
}

int main(void) {
  if (!actx_dnnl_available()) {
    printf("test_bf16_conv_transpose: skipped (oneDNN not available in this build)\n");
    return 0;
  }
  cases();
  bad_input();
  return test_exit("test_bf16_conv_transpose", checked,
                   actx_dnnl_native_bf16()
                       ? "outputs within the bound (oneDNN computes in bfloat16 hardware)"
                       : "outputs within the bound (oneDNN computes in float32: no bfloat16 "
                         "hardware here)");
}
