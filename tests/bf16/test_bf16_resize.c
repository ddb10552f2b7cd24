/* Resize in bfloat16 (src/bf16/bf16_resize.c) against a plain reference from the ONNX spec:
 * output sizes from scales (floor of the float32 product) or sizes; each output coordinate
 * mapped with the spec's formula in float32 (as ORT evaluates it: which input a nearest output
 * takes must agree); nearest exactly; linear in double from the spec's weights (1 - t, t),
 * within (2m + 2^m + 2) · 2^-24 · Σ|w · x| (m interpolated dims) and the one rounding. Known
 * values from ONNX's own test cases; every mode refused is refused by name. */
#include "bf16_test_run.h"

static const double U = 1.0 / 16777216.0;
static int outputs_checked;

static const char *coords[6] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                                "align_corners", "asymmetric", "tf_half_pixel_for_nn"};
static const char *nearests[4] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};

/* the spec's coordinate transforms, float32 */
static float ref_coord(int cm, float x, float s, int64_t lo, int64_t li) {
  switch (cm) {
  case 0: return (x + 0.5f) / s - 0.5f;
  case 1: {
    const float adj = (float)lo / (s * (float)li), center = (float)li / 2.0f;
    return center * (1.0f - adj) + (x + 0.5f) / s - 0.5f;
  }
  case 2: return lo > 1 ? (x + 0.5f) / s - 0.5f : 0.0f;
  case 3: return lo == 1 ? 0.0f : x * (float)(li - 1) / (float)(lo - 1);
  case 4: return x / s;
  default: return (x + 0.5f) / s;
  }
}

static int64_t ref_nearest(int nm, float c, int64_t li) {
  double r;
  const double f = floor(c), frac = c - f;
  switch (nm) {
  case 0: r = frac > 0.5 ? f + 1 : f; break;  /* half goes down */
  case 1: r = frac >= 0.5 ? f + 1 : f; break; /* half goes up (negatives clamp to 0 anyway) */
  case 2: r = f; break;
  default: r = ceil(c); break;
  }
  return r < 0 ? 0 : r > (double)(li - 1) ? li - 1 : (int64_t)r;
}

typedef struct rs_cfg {
  int version, coord, nearest; /* coord / nearest: -1 unset (defaults) */
  bool linear, use_sizes;
  size_t n_axes; /* 0: no axes attribute */
  int64_t axes[4];
} rs_cfg;

/* Runs Resize on x with scales (or sizes) per axis and compares with the reference. */
static void check_resize(const rs_cfg *c, const actx_shape *xs, const uint16_t *x,
                         const float *scales, const int64_t *sizes, size_t n_vals) {
  const actx_elem e[4] = {ACTX_ELEM_BF16, ACTX_ELEM_F32, ACTX_ELEM_F32, ACTX_ELEM_I64};
  actx_bf16_node node = node_make(ACTX_BF16_OP_RESIZE, c->version, c->use_sizes ? 4 : 3, e, 1);
  node.input_present[1] = rng_u32() & 1; /* an roi or none: ignored either way */
  if (c->use_sizes) node.input_present[2] = false;
  actx_bf16_attrs *a = &node.attrs;
  if (c->linear) {
    a->has_mode = true;
    strcpy(a->mode, "linear");
  }
  if (c->coord >= 0) {
    a->has_coordinate_mode = true;
    strcpy(a->coordinate_mode, coords[c->coord]);
  }
  if (c->nearest >= 0) {
    a->has_nearest_mode = true;
    strcpy(a->nearest_mode, nearests[c->nearest]);
  }
  if (c->n_axes) {
    a->has_axes = true;
    a->n_axes = c->n_axes;
    memcpy(a->axes, c->axes, c->n_axes * sizeof(int64_t));
  }
  float roi_v[8] = {0};
  actx_tensor in[4] = {tensor_bf16(*xs, (uint16_t *)x),
                       node.input_present[1] ? (actx_tensor){ACTX_ELEM_F32, {1, {0}}, roi_v}
                                             : ACTX_TENSOR_ABSENT,
                       {ACTX_ELEM_F32, {1, {(int64_t)n_vals}}, (void *)scales}, ACTX_TENSOR_ABSENT};
  if (c->use_sizes) {
    /* opset 13's way to leave scales out: an empty tensor */
    in[2] = (actx_tensor){ACTX_ELEM_F32, {1, {0}}, NULL};
    in[3] = (actx_tensor){ACTX_ELEM_I64, {1, {(int64_t)n_vals}}, (void *)sizes};
  }
  actx_tensor out[1];
  const char *why = "";
  const actx_status st = run_node(&node, in, c->use_sizes ? 4 : 3, out, 1, &test_par, &why);
  CHECK(st == ACTX_OK);
  if (st != ACTX_OK) {
    fprintf(stderr, "  refused: %s\n", why);
    return;
  }
  /* the reference's sizes and scales */
  const size_t r = xs->rank;
  int64_t od[8];
  float sc[8];
  for (size_t d = 0; d < r; d++) {
    od[d] = xs->dims[d];
    sc[d] = 1.0f;
  }
  for (size_t i = 0; i < n_vals; i++) {
    const size_t d = c->n_axes ? (size_t)(c->axes[i] < 0 ? c->axes[i] + (int64_t)r : c->axes[i])
                               : i;
    if (c->use_sizes) {
      od[d] = sizes[i];
      sc[d] = (float)sizes[i] / (float)xs->dims[d];
    } else {
      od[d] = (int64_t)floorf(scales[i] * (float)xs->dims[d]);
      sc[d] = scales[i];
    }
  }
  bool shape_ok = out[0].shape.rank == r;
  for (size_t d = 0; d < r; d++) shape_ok &= out[0].shape.dims[d] == od[d];
  CHECK(shape_ok);
  if (!shape_ok) {
    outputs_free(out, 1);
    return;
  }
  const int cm = c->coord < 0 ? 0 : c->coord, nm = c->nearest < 0 ? 0 : c->nearest;
  const int64_t n = actx_shape_elements(&out[0].shape);
  const uint16_t *y = out[0].data;
  /* the dims linear mode interpolates: those whose map is not the identity (the kernel's rule:
   * their corners are all read, so a NaN or inf there shows even at weight 0) */
  bool interp[8];
  for (size_t d = 0; d < r; d++) {
    interp[d] = c->linear && od[d] != xs->dims[d];
    for (int64_t i = 0; c->linear && i < od[d]; i++) {
      float cf = ref_coord(cm, (float)i, sc[d], od[d], xs->dims[d]);
      cf = cf < 0 ? 0 : cf > (float)(xs->dims[d] - 1) ? (float)(xs->dims[d] - 1) : cf;
      interp[d] |= cf != (float)i;
    }
  }
  int bad = 0;
  for (int64_t o = 0; o < n; o++) {
    int64_t rem = o, lo[8], hi[8];
    double wlo[8], whi[8];
    for (size_t d = r; d-- > 0;) {
      const int64_t i = rem % od[d];
      rem /= od[d];
      const int64_t li = xs->dims[d];
      float cf = ref_coord(cm, (float)i, sc[d], od[d], li);
      if (!c->linear) {
        lo[d] = hi[d] = ref_nearest(nm, cf, li);
        wlo[d] = 1;
        whi[d] = 0;
        continue;
      }
      if (cf < 0) cf = 0;
      if (cf > (float)(li - 1)) cf = (float)(li - 1);
      lo[d] = (int64_t)floor(cf);
      hi[d] = lo[d] + 1 < li ? lo[d] + 1 : li - 1;
      if (!interp[d]) { /* the identity: the input's own index */
        wlo[d] = 1;
        whi[d] = 0;
      } else if (lo[d] == hi[d]) { /* at the last index: the one neighbour twice, as ORT */
        wlo[d] = whi[d] = 0.5;
      } else {
        whi[d] = (double)cf - (double)lo[d];
        wlo[d] = 1 - whi[d];
      }
    }
    double sum = 0, sum_abs = 0;
    size_t m = 0;
    for (size_t d = 0; d < r; d++) m += interp[d];
    for (unsigned corner = 0; corner < (1u << r); corner++) {
      double w = 1;
      int64_t off = 0;
      bool skip = false;
      for (size_t d = 0; d < r; d++) {
        const bool h = corner & (1u << d);
        skip |= h && !interp[d];
        w *= h ? whi[d] : wlo[d];
        off = off * xs->dims[d] + (h ? hi[d] : lo[d]);
      }
      if (skip) continue;
      const double v = fb(x[off]);
      sum += w * v; /* 0 · inf is NaN here as in float32 */
      sum_abs += fabs(w * v);
    }
    bool ok;
    if (!c->linear) {
      int64_t off = 0;
      for (size_t d = 0; d < r; d++) off = off * xs->dims[d] + lo[d];
      ok = y[o] == x[off];
    } else if (sum != sum) {
      ok = bf_is_nan(y[o]);
    } else if (isinf(sum)) {
      ok = y[o] == bf((float)sum);
    } else {
      ok = bf16_within(y[o], sum, sum_abs * (double)(2 * m + (1u << m) + 2) * U);
    }
    outputs_checked++;
    if (!ok && bad++ < 3)
      fprintf(stderr, "  resize-%d %s %s/%s rank %zu out[%lld]: got %a want %a\n", c->version,
              c->linear ? "linear" : "nearest", coords[cm], nearests[nm], r, (long long)o,
              fb(y[o]), sum);
  }
  CHECK(bad == 0);
  outputs_free(out, 1);
}

static void test_modes(void) {
  static const float svals[7] = {0.5f, 0.6f, 1.0f, 1.5f, 2.0f, 3.0f, 0.75f};
  for (int rep = 0; rep < 600; rep++) {
    rs_cfg c = {.version = rep % 3 == 0 ? 13 : rep % 3 == 1 ? 18 : 19};
    c.linear = rep & 1;
    c.coord = (int)(rng_u32() % 7) - 1;
    if (c.coord == 1 && c.version < 19) c.coord = 0;
    if (c.coord == 5 && (c.version >= 18 || c.linear)) c.coord = 4;
    c.nearest = c.linear ? -1 : (int)(rng_u32() % 5) - 1;
    const size_t r = 1 + (size_t)(rep / 2) % 4;
    int64_t dims[4];
    for (size_t d = 0; d < r; d++) dims[d] = 1 + rng_u32() % (r <= 2 ? 9 : 5);
    const actx_shape xs = shape_of(r, dims);
    const int64_t n = actx_shape_elements(&xs);
    uint16_t *x = malloc((size_t)n * 2);
    fill_uniform(x, (size_t)n, -10.0f, 10.0f);
    float scales[4];
    int64_t sizes[4];
    size_t n_vals = r;
    c.use_sizes = rng_u32() % 3 == 0;
    if (c.version >= 18 && r >= 2 && rng_u32() % 3 == 0) { /* axes: the last two, maybe < 0 */
      c.n_axes = 2;
      c.axes[0] = rng_u32() & 1 ? (int64_t)r - 2 : -2;
      c.axes[1] = rng_u32() & 1 ? (int64_t)r - 1 : -1;
      n_vals = 2;
    }
    for (size_t i = 0; i < n_vals; i++) {
      const size_t d = c.n_axes ? r - 2 + i : i;
      /* outer dims of a 4-D input kept at 1, as models do; the rest anything */
      scales[i] = r == 4 && d < 2 && !c.n_axes ? 1.0f : svals[rng_u32() % 7];
      sizes[i] = (int64_t)(rng_u32() % 12);
      if (r == 4 && d < 2 && !c.n_axes) sizes[i] = dims[d];
    }
    check_resize(&c, &xs, x, scales, sizes, n_vals);
    free(x);
  }
}

static void test_known(void) {
  /* ONNX's resize_upsample_scales_nearest: [[1,2],[3,4]], scales [1,1,2,3] */
  const uint16_t x[4] = {bf(1), bf(2), bf(3), bf(4)};
  const int64_t d4[4] = {1, 1, 2, 2};
  const float s_near[4] = {1, 1, 2, 3}, s_lin[4] = {1, 1, 2, 2};
  const actx_elem e[3] = {ACTX_ELEM_BF16, ACTX_ELEM_COUNT, ACTX_ELEM_F32};
  actx_bf16_node node = node_make(ACTX_BF16_OP_RESIZE, 13, 3, e, 1);
  actx_tensor in[3] = {tensor_bf16(shape_of(4, d4), (uint16_t *)x), ACTX_TENSOR_ABSENT,
                       {ACTX_ELEM_F32, {1, {4}}, (void *)s_near}};
  actx_tensor out[1];
  const char *why = "";
  CHECK(run_node(&node, in, 3, out, 1, NULL, &why) == ACTX_OK);
  if (out[0].data) {
    const float want[24] = {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4};
    CHECK(out[0].shape.dims[2] == 4 && out[0].shape.dims[3] == 6);
    for (int i = 0; i < 24; i++) CHECK(((uint16_t *)out[0].data)[i] == bf(want[i]));
    outputs_free(out, 1);
  }
  /* ONNX's resize_upsample_scales_linear: half_pixel, scales [1,1,2,2] */
  node.attrs.has_mode = true;
  strcpy(node.attrs.mode, "linear");
  in[2].data = (void *)s_lin;
  CHECK(run_node(&node, in, 3, out, 1, NULL, &why) == ACTX_OK);
  if (out[0].data) {
    const float want[16] = {1,   1.25, 1.75, 2,   1.5, 1.75, 2.25, 2.5,
                            2.5, 2.75, 3.25, 3.5, 3,   3.25, 3.75, 4};
    for (int i = 0; i < 16; i++) CHECK(((uint16_t *)out[0].data)[i] == bf(want[i]));
    outputs_free(out, 1);
  }
  /* ONNX's resize_downsample_scales_nearest: [[1,2,3,4],[5,6,7,8]], scales [1,1,0.6,0.6] ->
   * [[1, 3]] */
  const uint16_t x8[8] = {bf(1), bf(2), bf(3), bf(4), bf(5), bf(6), bf(7), bf(8)};
  const int64_t d24[4] = {1, 1, 2, 4};
  const float s_down[4] = {1, 1, 0.6f, 0.6f};
  node.attrs.has_mode = false;
  in[0] = tensor_bf16(shape_of(4, d24), (uint16_t *)x8);
  in[2].data = (void *)s_down;
  CHECK(run_node(&node, in, 3, out, 1, NULL, &why) == ACTX_OK);
  if (out[0].data) {
    CHECK(out[0].shape.dims[2] == 1 && out[0].shape.dims[3] == 2);
    CHECK(((uint16_t *)out[0].data)[0] == bf(1) && ((uint16_t *)out[0].data)[1] == bf(3));
    outputs_free(out, 1);
  }
}

static void test_edges(void) {
  /* NaN / inf at a corner: NaN out where it is a neighbour; nearest copies bits */
  const uint16_t x[4] = {bf(1), 0x7FC1, 0x7F80, bf(4)};
  const int64_t d2[2] = {2, 2};
  const float s[2] = {2, 2};
  rs_cfg lin = {.version = 19, .coord = -1, .nearest = -1, .linear = true};
  check_resize(&lin, &(actx_shape){2, {2, 2}}, x, s, NULL, 2);
  rs_cfg near = {.version = 19, .coord = 4, .nearest = 2};
  check_resize(&near, &(actx_shape){2, {d2[0], d2[1]}}, x, s, NULL, 2);
  /* scale 1: the input, bit for bit, even -0 and subnormals */
  const uint16_t z[4] = {0x8000, 0x0001, 0x8001, bf(-2)};
  const float one[2] = {1, 1};
  for (int linear = 0; linear < 2; linear++) {
    const actx_elem e[3] = {ACTX_ELEM_BF16, ACTX_ELEM_COUNT, ACTX_ELEM_F32};
    actx_bf16_node node = node_make(ACTX_BF16_OP_RESIZE, 18, 3, e, 1);
    node.attrs.has_mode = linear;
    strcpy(node.attrs.mode, "linear");
    actx_tensor in[3] = {tensor_bf16(shape_of(2, d2), (uint16_t *)z), ACTX_TENSOR_ABSENT,
                         {ACTX_ELEM_F32, {1, {2}}, (void *)one}};
    actx_tensor out[1];
    const char *why = "";
    CHECK(run_node(&node, in, 3, out, 1, NULL, &why) == ACTX_OK);
    if (out[0].data) {
      CHECK(memcmp(out[0].data, z, 8) == 0);
      outputs_free(out, 1);
    }
  }
  /* down to nothing, and from nothing to nothing */
  const float tiny[2] = {1, 0.1f};
  check_resize(&lin, &(actx_shape){2, {2, 2}}, x, tiny, NULL, 2);
  rs_cfg sz = {.version = 13, .coord = -1, .nearest = -1, .use_sizes = true};
  const int64_t zero_sizes[2] = {0, 3};
  check_resize(&sz, &(actx_shape){2, {0, 2}}, NULL, NULL, zero_sizes, 2);
  /* one element up to many: every output is that element */
  const uint16_t v[1] = {bf(-3.5f)};
  const float big[3] = {4, 1, 5};
  check_resize(&lin, &(actx_shape){3, {1, 1, 1}}, v, big, NULL, 3);
}

static void test_bad(void) {
  uint16_t buf[16] = {0};
  const int64_t d4[4] = {1, 1, 2, 2};
  float scales[4] = {1, 1, 2, 2};
  int64_t sizes[4] = {1, 1, 4, 4};
  const actx_elem e[4] = {ACTX_ELEM_BF16, ACTX_ELEM_F32, ACTX_ELEM_F32, ACTX_ELEM_I64};
  actx_tensor in[4] = {tensor_bf16(shape_of(4, d4), buf), ACTX_TENSOR_ABSENT,
                       {ACTX_ELEM_F32, {1, {4}}, scales}, {ACTX_ELEM_I64, {1, {4}}, sizes}};
  actx_bf16_node n = node_make(ACTX_BF16_OP_RESIZE, 19, 4, e, 1);
  CHECK_FAILS(&n, in, 4, 1, "exactly one of scales and sizes");
  actx_tensor none[2] = {in[0], ACTX_TENSOR_ABSENT};
  n = node_make(ACTX_BF16_OP_RESIZE, 19, 2, e, 1);
  CHECK_FAILS(&n, none, 2, 1, "exactly one of scales and sizes");
  n = node_make(ACTX_BF16_OP_RESIZE, 19, 3, e, 1);
  const struct {
    const char *attr, *value, *want;
    int version;
  } bad_strings[] = {
      {"mode", "cubic", "cubic is not served", 19},
      {"mode", "bicubic", "mode must be", 19},
      {"coordinate", "tf_crop_and_resize", "tf_crop_and_resize is not served", 19},
      {"coordinate", "half_pixel_symmetric", "coordinate_transformation_mode", 18},
      {"coordinate", "tf_half_pixel_for_nn", "coordinate_transformation_mode", 18},
      {"coordinate", "pixel", "coordinate_transformation_mode", 13},
      {"nearest", "round", "nearest_mode must be", 19},
      {"keep", "not_larger", "keep_aspect_ratio_policy", 18},
  };
  for (size_t i = 0; i < sizeof bad_strings / sizeof bad_strings[0]; i++) {
    n = node_make(ACTX_BF16_OP_RESIZE, bad_strings[i].version, 3, e, 1);
    char *dst = bad_strings[i].attr[0] == 'm'   ? (n.attrs.has_mode = true, n.attrs.mode)
                : bad_strings[i].attr[0] == 'c' ? (n.attrs.has_coordinate_mode = true,
                                                   n.attrs.coordinate_mode)
                : bad_strings[i].attr[0] == 'n' ? (n.attrs.has_nearest_mode = true,
                                                   n.attrs.nearest_mode)
                                                : (n.attrs.has_keep_aspect_ratio_policy = true,
                                                   n.attrs.keep_aspect_ratio_policy);
    strcpy(dst, bad_strings[i].value);
    CHECK_FAILS(&n, in, 3, 1, bad_strings[i].want);
  }
  n = node_make(ACTX_BF16_OP_RESIZE, 18, 3, e, 1);
  n.attrs.has_antialias = true;
  n.attrs.antialias = 1;
  CHECK_FAILS(&n, in, 3, 1, "antialias");
  n = node_make(ACTX_BF16_OP_RESIZE, 13, 3, e, 1);
  n.attrs.has_axes = true;
  n.attrs.n_axes = 1;
  CHECK_FAILS(&n, in, 3, 1, "no axes before 18");
  n = node_make(ACTX_BF16_OP_RESIZE, 18, 3, e, 1);
  n.attrs.has_axes = true;
  n.attrs.n_axes = 2;
  n.attrs.axes[0] = 4;
  CHECK_FAILS(&n, in, 3, 1, "axis out of range");
  n.attrs.axes[0] = -1;
  n.attrs.axes[1] = 3;
  CHECK_FAILS(&n, in, 3, 1, "axis repeated");
  n = node_make(ACTX_BF16_OP_RESIZE, 18, 3, e, 1);
  in[2].shape.dims[0] = 3;
  CHECK_FAILS(&n, in, 3, 1, "one value per axis");
  in[2].shape.dims[0] = 4;
  scales[2] = 0;
  CHECK_FAILS(&n, in, 3, 1, "scales must be finite and > 0");
  scales[2] = -INFINITY;
  CHECK_FAILS(&n, in, 3, 1, "scales must be finite and > 0");
  scales[2] = NAN;
  CHECK_FAILS(&n, in, 3, 1, "scales must be finite and > 0");
  scales[2] = 2;
  in[2].elem = ACTX_ELEM_I64;
  CHECK_FAILS(&n, in, 3, 1, "scales must be float32");
  in[2].elem = ACTX_ELEM_F32;
  const actx_elem eb[3] = {ACTX_ELEM_BF16, ACTX_ELEM_F32, ACTX_ELEM_BF16};
  n = node_make(ACTX_BF16_OP_RESIZE, 18, 3, eb, 1);
  CHECK_FAILS(&n, in, 3, 1, "scales must be float32");
  const actx_elem ef[3] = {ACTX_ELEM_F32, ACTX_ELEM_F32, ACTX_ELEM_F32};
  n = node_make(ACTX_BF16_OP_RESIZE, 18, 3, ef, 1);
  CHECK_FAILS(&n, in, 3, 1, "bfloat16");
  /* sizes: negative; an empty dim cannot be filled */
  actx_tensor sz[4] = {in[0], ACTX_TENSOR_ABSENT, ACTX_TENSOR_ABSENT, in[3]};
  n = node_make(ACTX_BF16_OP_RESIZE, 18, 4, e, 1);
  n.input_present[2] = false;
  sizes[3] = -1;
  CHECK_FAILS(&n, sz, 4, 1, "sizes must be >= 0");
  sizes[3] = 4;
  const int64_t d0[4] = {1, 1, 0, 2};
  sz[0] = tensor_bf16(shape_of(4, d0), NULL);
  CHECK_FAILS(&n, sz, 4, 1, "empty one");
  n = node_make(ACTX_BF16_OP_RESIZE, 11, 3, e, 1);
  CHECK_FAILS(&n, in, 3, 1, "version");
}

/* big enough to split over threads: the split changes nothing */
static void test_split(void) {
  const int64_t d4[4] = {1, 4, 64, 64};
  uint16_t *x = malloc(4 * 64 * 64 * 2);
  fill_uniform(x, 4 * 64 * 64, -5.0f, 5.0f);
  const float scales[4] = {1, 1, 2, 1.5f};
  const actx_elem e[3] = {ACTX_ELEM_BF16, ACTX_ELEM_COUNT, ACTX_ELEM_F32};
  actx_tensor in[3] = {tensor_bf16(shape_of(4, d4), x), ACTX_TENSOR_ABSENT,
                       {ACTX_ELEM_F32, {1, {4}}, (void *)scales}};
  for (int linear = 0; linear < 2; linear++) {
    actx_bf16_node n = node_make(ACTX_BF16_OP_RESIZE, 19, 3, e, 1);
    n.attrs.has_mode = linear;
    strcpy(n.attrs.mode, "linear");
    CHECK_SPLIT_SAME(&n, in, 3, 1);
  }
  free(x);
}

int main(void) {
  test_split();
  test_modes();
  test_known();
  test_edges();
  test_bad();
  return test_exit("test_bf16_resize", outputs_checked,
                   "outputs checked against the reference, edges and refusals");
}
