/* Helpers shared by the EP tests (see ep_test.h). */
#include "ep_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../emu/first_nan.h"

int g_failures;
const char *g_ep_library;

int ep_test_init(int argc, char **argv) {
  if (argc < 2 || argv[1][0] != '/') {
    printf("usage: %s <absolute path of libactx_ep.so> [...]\n", argc > 0 ? argv[0] : "test");
    return -1;
  }
  g_ep_library = argv[1];
  return 0;
}

size_t ep_shape_count(size_t rank, const int64_t *dims) {
  size_t n = 1;
  for (size_t i = 0; i < rank; i++) n *= (size_t)(dims[i] < 0 ? 0 : dims[i]);
  return n;
}

long ep_first_difference(const void *a, const void *b, size_t bytes) {
  const unsigned char *pa = a, *pb = b;
  for (size_t i = 0; i < bytes; i++)
    if (pa[i] != pb[i]) return (long)i;
  return -1;
}

int ep_build_model(const ep_model_spec *spec, uint8_t **bytes, size_t *size) {
  const bool ms = spec->domain != NULL && strcmp(spec->domain, ACTX_MODEL_MS_DOMAIN) == 0;
  actx_model *m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION,
                                    spec->onnx_opset ? spec->onnx_opset : 20, ms ? 1 : 0);
  if (m == NULL) return -1;
  char names[ACTX_MODEL_MAX_RANK][24];
  const char *params[ACTX_MODEL_MAX_RANK];
  for (size_t i = 0; i < spec->rank; i++) {
    snprintf(names[i], sizeof names[i], "d%zu", i);
    params[i] = names[i];
  }
  const int32_t y_type = spec->y_elem_type ? spec->y_elem_type : spec->elem_type;
  actx_model_add_input(m, "x", spec->elem_type, spec->rank, spec->dims, params);
  const char *inputs[2] = {"x", "bias"};
  if (spec->bias) {
    const char *bias_params[ACTX_MODEL_MAX_RANK];
    for (size_t i = 0; i < spec->bias_rank; i++)
      bias_params[i] =
          spec->bias_dim_param ? spec->bias_dim_param : (spec->rank ? names[spec->rank - 1] : "b");
    actx_model_add_input(m, "bias", spec->elem_type, spec->bias_rank, spec->bias_dims, bias_params);
  }
  actx_model_add_output(m, "y", y_type, spec->rank, spec->dims, params);
  const char *outputs[1] = {"y"};
  actx_model_node *node = actx_model_add_named_node(m, EP_TEST_NODE, spec->op_type, spec->domain,
                                                    spec->bias ? 2 : 1, inputs, 1, outputs);
  if (spec->approximate != NULL)
    actx_model_node_attr_string(node, "approximate", spec->approximate);
  if (spec->has_alpha) actx_model_node_attr_float(node, "alpha", spec->alpha);
  int rc = actx_model_serialize(m, bytes, size);
  if (rc != 0) printf("model %s: %s\n", spec->op_type, actx_model_error(m));
  actx_model_free(m);
  return rc;
}

int ep_session_create(const uint8_t *model, size_t size, const ep_session_spec *spec,
                      actx_ort_session **out, actx_ort_error *err) {
  actx_ort_session_options o = {0};
  o.intra_op_threads = spec->threads;
  o.optimization = spec->optimization;
  o.record_assignments = true;
  o.n_config = spec->n_config;
  o.config_keys = spec->config_keys;
  o.config_values = spec->config_values;
  o.optimized_model_path = spec->optimized_model_path;
  o.profile_prefix = spec->profile_prefix;
  const char *keys[8], *values[8];
  size_t n = 0;
  if (spec->policy != NULL) {
    o.ep_library_path = g_ep_library;
    o.ep_name = "actx";
    if (spec->policy[0] != '\0') {
      keys[n] = "policy";
      values[n++] = spec->policy;
    }
    for (size_t i = 0; i < spec->n_ep_options && n < 8; i++) {
      keys[n] = spec->ep_option_keys[i];
      values[n++] = spec->ep_option_values[i];
    }
    o.n_ep_options = n;
    o.ep_option_keys = keys;
    o.ep_option_values = values;
  }
  return actx_ort_session_create(model, size, &o, out, err);
}

void ep_node_place_of(const actx_ort_session *s, const char *node_name, ep_node_place *out) {
  actx_ort_assignment *list = NULL;
  size_t n = 0;
  actx_ort_error err;
  *out = (ep_node_place){.subgraph = SIZE_MAX};
  if (actx_ort_session_assignments(s, &list, &n, &err) != 0) {
    printf("assignments: %s\n", err.message);
    snprintf(out->ep, sizeof out->ep, "%s", "?");
    return;
  }
  for (size_t i = 0; i < n; i++)
    if (strcmp(list[i].node_name, node_name) == 0) {
      snprintf(out->ep, sizeof out->ep, "%s", list[i].ep_name);
      out->subgraph = list[i].subgraph;
    }
  for (size_t i = 0; i < n && out->subgraph != SIZE_MAX; i++)
    out->members += list[i].subgraph == out->subgraph;
  free(list);
}

void ep_node_ep(const actx_ort_session *s, const char *node_name, char *ep, size_t ep_size) {
  ep_node_place place;
  ep_node_place_of(s, node_name, &place);
  snprintf(ep, ep_size, "%s", place.ep);
}

void *ep_run(actx_ort_session *s, int32_t elem_type, const void *x, size_t rank,
             const int64_t *dims, const void *bias, size_t bias_rank, const int64_t *bias_dims,
             size_t *y_bytes) {
  static const uint32_t dummy[1];
  actx_ort_tensor in[2];
  memset(in, 0, sizeof in);
  in[0].elem_type = elem_type;
  in[0].rank = rank;
  memcpy(in[0].dims, dims, rank * sizeof *dims);
  in[0].data = (void *)(x ? x : dummy); /* ORT wants a pointer even for no elements */
  if (bias != NULL || bias_rank > 0) {
    in[1].elem_type = elem_type;
    in[1].rank = bias_rank;
    memcpy(in[1].dims, bias_dims, bias_rank * sizeof *bias_dims);
    in[1].data = (void *)(bias ? bias : dummy);
  }
  actx_ort_tensor *out = NULL;
  size_t n_out = 0;
  actx_ort_error err;
  if (actx_ort_run(s, (bias != NULL || bias_rank > 0) ? 2 : 1, in, &out, &n_out, &err) != 0) {
    printf("run: %s\n", err.message);
    return NULL;
  }
  void *y = out[0].data;
  *y_bytes = out[0].bytes;
  out[0].data = NULL;
  actx_ort_tensors_free(out, n_out);
  return y ? y : malloc(1);
}

/* splitmix64 */
static uint64_t next_random(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint16_t ep_float_to_half(float f) { /* round to nearest even, enough for test inputs */
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  const uint32_t sign = (x >> 16) & 0x8000;
  const int32_t exp = (int32_t)((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffff;
  if (((x >> 23) & 0xff) == 0xff) return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 : 0));
  if (exp >= 31) return (uint16_t)(sign | 0x7c00);
  if (exp <= 0) {
    if (exp < -10) return (uint16_t)sign;
    mant |= 0x800000;
    const uint32_t shift = (uint32_t)(14 - exp);
    uint32_t h = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) h++;
    return (uint16_t)(sign | h);
  }
  uint32_t h = ((uint32_t)exp << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;
  return (uint16_t)(sign | h);
}

uint16_t ep_float_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  if ((x & 0x7fffffff) > 0x7f800000) return (uint16_t)((x >> 16) | 0x40);
  x += 0x7fff + ((x >> 16) & 1);
  return (uint16_t)(x >> 16);
}

void ep_fill_inputs(int32_t elem_type, void *data, size_t n, uint64_t seed) {
  static const float specials[] = {
      0.0f,    -0.0f,  INFINITY,      -INFINITY,      NAN,    -NAN,  1e-45f, -1e-45f, 1e-40f,
      -1e-40f, 1e-38f, 3.4028235e38f, -3.4028235e38f, 1.0f,   -1.0f, 0.5f,   -0.5f,   3.925f,
      -3.925f, 9.0f,   -9.0f,         10.0f,          -10.0f, 88.7f, -88.7f, 100.0f,  -100.0f,
      1e-7f,   -1e-7f, 5.0f,          -5.0f};
  const size_t n_specials = sizeof specials / sizeof specials[0];
  uint64_t state = seed;
  for (size_t i = 0; i < n; i++) {
    float v;
    if (i < n_specials && n >= 2 * n_specials) {
      v = specials[i];
    } else {
      const uint64_t r = next_random(&state);
      switch (r & 3) {
        case 0: /* uniform in [-8, 8]: the interesting range of every op */
          v = (float)((double)(r >> 11) / 9007199254740992.0 * 16.0 - 8.0);
          break;
        case 1: { /* any finite magnitude */
          uint32_t bits = (uint32_t)(r >> 32);
          memcpy(&v, &bits, sizeof v);
          if (!isfinite(v)) v = 1.0f;
          break;
        }
        case 2: /* small */
          v = (float)((double)(r >> 11) / 9007199254740992.0 * 1e-3 - 5e-4);
          break;
        default: v = specials[(r >> 8) % n_specials]; break;
      }
    }
    switch (elem_type) {
      case ACTX_ELEM_FLOAT: ((float *)data)[i] = v; break;
      case ACTX_ELEM_FLOAT16: ((uint16_t *)data)[i] = ep_float_to_half(v); break;
      case ACTX_ELEM_BFLOAT16: ((uint16_t *)data)[i] = ep_float_to_bf16(v); break;
      default: break;
    }
  }
}

void ep_plant_rule_inputs(float *x, size_t n) {
  static const uint32_t rule_inputs[] = {
      0x7fa00000, 0xffa00001, 0x7f800001, 0xffbfffff, /* signalling NaNs */
      /* SiLU: AVX-512F clamps to 1 where FMA3's logistic rounds to 1 + 2^-23 (17.48 .. 17.99) */
      0x418bdb45, 0x418d0c5a, 0x418d90bf, 0x418e1c52, 0x418e768e, 0x418e8b20, 0x418ea6a2,
      0x418ec083, 0x418edbfb, 0x418ef38e, 0x418efbc8, 0x418f22bc, 0x418f2cba, 0x418f7a0d,
      0x418f8a40, 0x418f9d39, 0x418fa72f, 0x418fab3d, 0x418fad44, 0x418ff2cc};
  const size_t count = sizeof rule_inputs / sizeof rule_inputs[0];
  if (n < 64) return;
  /* spread over the tensor, so that split runs and vector tails see them too */
  for (size_t i = 0; i < count; i++)
    memcpy(&x[(n - 1) - i * ((n - 1) / count)], &rule_inputs[i], sizeof rule_inputs[i]);
}

void ep_fill_bias(int32_t elem_type, void *data, size_t n, uint64_t seed) {
  ep_fill_inputs(elem_type, data, n, seed);
  static int keeps = -1;
  if (keeps < 0) {
    keeps = cpu_keeps_first_nan();
    if (!keeps)
      printf("note: this CPU's add of two NaNs is not x86's (an emulator): biases hold no NaN\n");
  }
  if (keeps || elem_type != ACTX_ELEM_FLOAT) return;
  for (size_t i = 0; i < n; i++)
    if (isnan(((float *)data)[i])) ((float *)data)[i] = 1.0f;
}

int ep_optimized_node_count(const uint8_t *model, size_t size, const char *policy, const char *path,
                            size_t *n_nodes, actx_ort_error *err) {
  const ep_session_spec spec = {.policy = policy, .threads = 1, .optimized_model_path = path};
  actx_ort_session *session = NULL;
  if (ep_session_create(model, size, &spec, &session, err) != 0) return -1;
  actx_ort_session_free(session);

  uint8_t *bytes = NULL;
  size_t n_bytes = 0;
  char msg[256];
  actx_model_info info;
  if (actx_read_file(path, &bytes, &n_bytes, msg, sizeof msg) != 0 ||
      actx_model_info_parse(bytes, n_bytes, &info, msg, sizeof msg) != 0) {
    snprintf(err->message, sizeof err->message, "optimized model %s: %s", path, msg);
    free(bytes);
    return -1;
  }
  *n_nodes = info.n_nodes;
  actx_model_info_free(&info);
  free(bytes);
  return 0;
}

/* Runs one session; 0 with its outputs, or -1 with the creation or run error in err. */
static int run_all_outputs(const uint8_t *model, size_t size, const ep_session_spec *spec,
                           size_t n_inputs, const actx_ort_tensor *inputs, actx_ort_tensor **out,
                           size_t *n_out, long *on_actx, actx_ort_error *err) {
  actx_ort_session *s = NULL;
  *out = NULL;
  *n_out = 0;
  *on_actx = 0;
  if (ep_session_create(model, size, spec, &s, err) != 0) return -1;
  int rc = actx_ort_run(s, n_inputs, inputs, out, n_out, err);
  if (rc == 0 && spec->policy != NULL) *on_actx = actx_ort_count_nodes_on(s, "actx", err);
  actx_ort_session_free(s);
  return rc;
}

long ep_check_against_ort(const uint8_t *model, size_t size, const ep_session_spec *with_ep,
                          size_t n_inputs, const actx_ort_tensor *inputs, const char *label) {
  ep_session_spec alone = *with_ep;
  alone.policy = NULL;
  actx_ort_tensor *want = NULL, *got = NULL;
  size_t n_want = 0, n_got = 0;
  long ignored = 0, on_actx = 0;
  actx_ort_error ort_err, ep_err;
  const int ort_rc =
      run_all_outputs(model, size, &alone, n_inputs, inputs, &want, &n_want, &ignored, &ort_err);
  const int ep_rc =
      run_all_outputs(model, size, with_ep, n_inputs, inputs, &got, &n_got, &on_actx, &ep_err);
  long result = on_actx;
  if (ort_rc != 0 || ep_rc != 0) {
    CHECK(ort_rc != 0 && ep_rc != 0, "%s: ORT alone %s, with actx (policy %s) %s", label,
          ort_rc ? ort_err.message : "runs it", with_ep->policy,
          ep_rc ? ep_err.message : "runs it");
    result = ort_rc != 0 && ep_rc != 0 ? 0 : -1;
  } else if (n_want != n_got) {
    CHECK(false, "%s: %zu outputs, ORT alone %zu", label, n_got, n_want);
    result = -1;
  } else {
    for (size_t i = 0; i < n_want; i++) {
      const bool same_shape =
          want[i].elem_type == got[i].elem_type && want[i].rank == got[i].rank &&
          memcmp(want[i].dims, got[i].dims, want[i].rank * sizeof want[i].dims[0]) == 0 &&
          want[i].bytes == got[i].bytes;
      const long at = same_shape ? ep_first_difference(want[i].data, got[i].data, want[i].bytes)
                                 : 0;
      CHECK(same_shape && at < 0, "%s, policy %s: output %zu differs from ORT alone's at byte %ld",
            label, with_ep->policy, i, at);
      if (!same_shape || at >= 0) result = -1;
    }
  }
  actx_ort_tensors_free(want, n_want);
  actx_ort_tensors_free(got, n_got);
  return result;
}
