/* Models the EP fuzzer found a session with actx to treat differently from ORT alone, each kept
 * here once fixed.
 *
 * usage: test_ep_found <absolute path of libactx_ep.so>
 *
 *   - A GPT-2 tanh GELU subgraph on a scalar x (float32) in an If branch. ORT fuses it into
 *     FastGelu, which refuses a rank-0 input at run time; a session with actx must refuse the run
 *     as well (and an erf GELU or SiLU subgraph on a scalar, whose ORT kernels take one, must
 *     run).
 *   - A float16 Gelu node after Add(x, c), c a one-element constant. ORT has no float16 kernel
 *     for either node and computes both in one float32 island; taken alone, the Gelu would read
 *     x + c rounded to float16, which overflows to ±inf where the island's sum is finite, and
 *     Gelu(−inf) is NaN where ORT gives −0. The EP must take the Add with the Gelu and add c in
 *     float32: then no element is NaN where ORT's is not, and every other is within one float16
 *     unit of the exact GELU of x + c (ORT's island computes it in float32 nodes of its own).
 *   - An If branch Add(x, b) → com.microsoft Gelu on a scalar x with a [1] bias b (so a [1]
 *     result), then an If on that value with a QuickGelu subgraph in each branch, every output
 *     declared a scalar: ORT pre-allocates the inner If's output as a scalar, so a node of ours
 *     writing [1] there failed the run where ORT alone runs it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ep_test.h"
#include "model_parts.h"

#define MS ACTX_MODEL_MS_DOMAIN
static const char *const g_policies[] = {"auto", "all"};

/* If(c) whose branches both compute Relu(activation(x)), the activation one of model_parts.h's
 * subgraphs, x a scalar float32. */
static int build_scalar_activation(actx_act_kind kind, uint8_t **bytes, size_t *size) {
  actx_model *m = actx_model_create(9, 20, 1);
  actx_model_add_input(m, "x", ACTX_ELEM_FLOAT, 0, NULL, NULL);
  actx_model_add_input(m, "c", ACTX_ELEM_BOOL, 0, NULL, NULL);
  actx_model_add_output(m, "y", ACTX_ELEM_FLOAT, 0, NULL, NULL);
  const char *cond = "c", *y = "y";
  actx_model_node *node = actx_model_add_node(m, "If", "", 1, &cond, 1, &y);
  static const char *const branches[2] = {"then_branch", "else_branch"};
  for (int i = 0; i < 2; i++) {
    actx_model *g = actx_part_if_branch(ACTX_ELEM_FLOAT, 0, NULL, NULL);
    actx_part_add_activation(g, kind, ACTX_ELEM_FLOAT, "x", "a", "k0", 0, NULL, 0);
    /* FastGeluFusion leaves a tanh GELU whose result is a graph output alone */
    actx_part_add_activation(g, ACTX_ACT_RELU, ACTX_ELEM_FLOAT, "a", ACTX_PART_OUT, "k1", 0, NULL,
                             0);
    actx_model_node_attr_graph(node, branches[i], g);
  }
  const int rc = actx_model_serialize(m, bytes, size);
  if (rc != 0) printf("model: %s\n", actx_model_error(m));
  actx_model_free(m);
  return rc;
}

/* Whether ORT alone creates a session for the model and runs it. */
static bool ort_alone_runs(const uint8_t *bytes, size_t size, size_t n_inputs,
                           const actx_ort_tensor *inputs) {
  actx_ort_session *s = NULL;
  actx_ort_error err;
  const ep_session_spec spec = {.threads = 1};
  if (ep_session_create(bytes, size, &spec, &s, &err) != 0) return false;
  actx_ort_tensor *out = NULL;
  size_t n_out = 0;
  const bool ran = actx_ort_run(s, n_inputs, inputs, &out, &n_out, &err) == 0;
  actx_ort_tensors_free(out, n_out);
  actx_ort_session_free(s);
  return ran;
}

static void test_scalar_subgraphs(void) {
  static const struct {
    actx_act_kind kind;
    bool ort_runs; /* ORT alone runs it */
  } cases[] = {
      {ACTX_ACT_TANH_GELU, false},
      {ACTX_ACT_ERF_GELU, true},
      {ACTX_ACT_SILU, true},
  };
  float x = 0.75f;
  const uint8_t c = 1;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint8_t *bytes = NULL;
    size_t size = 0;
    if (build_scalar_activation(cases[i].kind, &bytes, &size) != 0) {
      g_failures++;
      continue;
    }
    const actx_ort_tensor in[2] = {
        {.elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, .data = &x},
        {.elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL, .data = (void *)&c}};
    char label[128];
    snprintf(label, sizeof label, "If: %s on a scalar", actx_act_name(cases[i].kind));
    CHECK(ort_alone_runs(bytes, size, 2, in) == cases[i].ort_runs, "%s: ORT alone %s", label,
          cases[i].ort_runs ? "refuses it" : "runs it");
    for (int p = 0; p < 2; p++) {
      const ep_session_spec spec = {.policy = g_policies[p], .threads = 1};
      /* refused by both, or run by both with the same bits */
      CHECK(ep_check_against_ort(bytes, size, &spec, 2, in, label) >= 0, "%s, policy %s", label,
            g_policies[p]);
    }
    free(bytes);
  }
}

#define HALF_N 64
/* Gelu(x + c) in float16, c = -60000 or +60000: x + c overflows float16 where |x| > ~5500. */
static int build_half_add_gelu(const char *op_type, const char *domain, const char *approximate,
                               uint16_t c, uint8_t **bytes, size_t *size) {
  actx_model *m = actx_model_create(9, 20, 1);
  const int64_t dims[1] = {HALF_N};
  actx_model_add_input(m, "x", ACTX_ELEM_FLOAT16, 1, dims, NULL);
  actx_model_add_output(m, "y", ACTX_ELEM_FLOAT16, 1, dims, NULL);
  actx_model_add_initializer(m, "c", ACTX_ELEM_FLOAT16, 0, NULL, &c);
  const char *add_in[2] = {"x", "c"}, *t = "t", *y = "y";
  actx_model_add_node(m, "Add", "", 2, add_in, 1, &t);
  actx_model_node *gelu = actx_model_add_named_node(m, EP_TEST_NODE, op_type, domain, 1, &t, 1, &y);
  if (approximate != NULL) actx_model_node_attr_string(gelu, "approximate", approximate);
  const int rc = actx_model_serialize(m, bytes, size);
  if (rc != 0) printf("model: %s\n", actx_model_error(m));
  actx_model_free(m);
  return rc;
}

static double half_value(uint16_t h) {
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  const double mag = e == 0    ? ldexp(m, -24)
                     : e == 31 ? (m ? NAN : INFINITY)
                               : ldexp(m | 0x400, e - 25);
  return h & 0x8000 ? -mag : mag;
}

static double gelu_double(double v, bool tanh_form) {
  if (tanh_form)
    return 0.5 * v * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
  return 0.5 * v * (1.0 + erf(v / sqrt(2.0)));
}

static bool half_is_nan(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0; }

/* Distance in float16 units between two non-NaN values (the bit patterns made monotonic). */
static long half_units(uint16_t a, uint16_t b) {
  const long ka = a & 0x8000 ? -(long)(a & 0x7fff) : (long)a;
  const long kb = b & 0x8000 ? -(long)(b & 0x7fff) : (long)b;
  return labs(ka - kb);
}

static void *run_half(const uint8_t *bytes, size_t size, const char *policy, const uint16_t *x,
                      char *ep, size_t ep_size) {
  actx_ort_session *s = NULL;
  actx_ort_error err;
  const ep_session_spec spec = {.policy = policy, .threads = 1};
  if (ep_session_create(bytes, size, &spec, &s, &err) != 0) {
    CHECK(false, "session (policy %s): %s", policy ? policy : "ORT alone", err.message);
    return NULL;
  }
  ep_node_ep(s, EP_TEST_NODE, ep, ep_size);
  const int64_t dims[1] = {HALF_N};
  size_t y_bytes = 0;
  void *y = ep_run(s, ACTX_ELEM_FLOAT16, x, 1, dims, NULL, 0, NULL, &y_bytes);
  actx_ort_session_free(s);
  return y;
}

static void test_half_add_gelu(void) {
  static const struct {
    const char *op_type, *domain, *approximate;
  } ops[] = {{"Gelu", "", NULL}, {"Gelu", "", "tanh"}, {"Gelu", MS, NULL}, {"FastGelu", MS, NULL}};
  const uint16_t constants[] = {ep_float_to_half(-60000.0f), ep_float_to_half(60000.0f),
                                ep_float_to_half(0.5f)};
  uint16_t x[HALF_N];
  ep_fill_inputs(ACTX_ELEM_FLOAT16, x, HALF_N, 7);
  for (int i = 0; i < 8; i++) /* where x + c leaves float16's range for either c */
    x[i] = ep_float_to_half((i & 1 ? 1.0f : -1.0f) * (6000.0f + 2000.0f * (float)i));
  for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
    for (size_t k = 0; k < sizeof constants / sizeof constants[0]; k++) {
      uint8_t *bytes = NULL;
      size_t size = 0;
      if (build_half_add_gelu(ops[o].op_type, ops[o].domain, ops[o].approximate, constants[k],
                              &bytes, &size) != 0) {
        g_failures++;
        continue;
      }
      char ep[64];
      uint16_t *want = run_half(bytes, size, NULL, x, ep, sizeof ep);
      for (int p = 0; p < 2 && want != NULL; p++) {
        uint16_t *got = run_half(bytes, size, g_policies[p], x, ep, sizeof ep);
        const char *label = ops[o].approximate ? "Gelu(tanh)" : ops[o].op_type;
        CHECK(strcmp(ep, "actx") == 0, "float16 Add(x, 0x%04x) -> %s%s, policy %s: ran on %s",
              constants[k], *ops[o].domain ? "ms." : "", label, g_policies[p], ep);
        const bool tanh = ops[o].approximate != NULL || strcmp(ops[o].op_type, "FastGelu") == 0;
        for (size_t i = 0; got != NULL && i < HALF_N; i++) {
          const double v = half_value(x[i]) + half_value(constants[k]);
          const uint16_t exact = ep_float_to_half((float)gelu_double(v, tanh));
          const bool nan_w = half_is_nan(want[i]), nan_g = half_is_nan(got[i]);
          CHECK(nan_w == nan_g && (nan_g || half_units(exact, got[i]) <= 1),
                "float16 Add(x, 0x%04x) -> %s%s, policy %s: x 0x%04x gives 0x%04x, ORT 0x%04x, "
                "exact 0x%04x",
                constants[k], *ops[o].domain ? "ms." : "", label, g_policies[p], x[i], got[i],
                want[i], exact);
        }
        free(got);
      }
      free(want);
      free(bytes);
    }
}

/* If(c): then QuickGelu(x); else h = ms.Gelu(Add(x, b)) with b of shape [1], then If(c) with
 * QuickGelu(h) in both branches; x a scalar, every v_out declared a scalar. ORT merges the
 * inner branches' output shape ([1] by inference) leniently and leaves it unknown to the EP,
 * while the inner If's output keeps the declared scalar shape and is pre-allocated so. */
static int build_if_scalar_bias(uint8_t **bytes, size_t *size) {
  actx_model *m = actx_model_create(9, 20, 1);
  actx_model_add_input(m, "x", ACTX_ELEM_FLOAT, 0, NULL, NULL);
  actx_model_add_input(m, "c", ACTX_ELEM_BOOL, 0, NULL, NULL);
  actx_model_add_output(m, "y", ACTX_ELEM_FLOAT, 0, NULL, NULL);
  const char *cond = "c", *y = "y", *v_out = ACTX_PART_OUT;
  actx_model_node *outer = actx_model_add_node(m, "If", "", 1, &cond, 1, &y);
  actx_model *then_g = actx_part_if_branch(ACTX_ELEM_FLOAT, 0, NULL, NULL);
  actx_part_add_activation(then_g, ACTX_ACT_QUICK_GELU, ACTX_ELEM_FLOAT, "x", ACTX_PART_OUT, "k1",
                           0, NULL, 0);
  actx_model_node_attr_graph(outer, "then_branch", then_g);
  actx_model *else_g = actx_part_if_branch(ACTX_ELEM_FLOAT, 0, NULL, NULL);
  const float bias = 0.5f;
  actx_part_add_activation(else_g, ACTX_ACT_BIAS_MS_GELU, ACTX_ELEM_FLOAT, "x", "h", "k1", 0,
                           &bias, 1);
  actx_model_node *inner = actx_model_add_node(else_g, "If", "", 1, &cond, 1, &v_out);
  static const char *const branches[2] = {"then_branch", "else_branch"};
  for (int i = 0; i < 2; i++) {
    actx_model *g = actx_part_if_branch(ACTX_ELEM_FLOAT, 0, NULL, NULL);
    actx_part_add_activation(g, ACTX_ACT_QUICK_GELU, ACTX_ELEM_FLOAT, "h", ACTX_PART_OUT, "k2", 0,
                             NULL, 0);
    actx_model_node_attr_graph(inner, branches[i], g);
  }
  actx_model_node_attr_graph(outer, "else_branch", else_g);
  const int rc = actx_model_serialize(m, bytes, size);
  if (rc != 0) printf("model: %s\n", actx_model_error(m));
  actx_model_free(m);
  return rc;
}

static void test_if_scalar_bias(void) {
  uint8_t *bytes = NULL;
  size_t size = 0;
  if (build_if_scalar_bias(&bytes, &size) != 0) {
    g_failures++;
    return;
  }
  float x = 1.5f;
  for (int c = 0; c < 2; c++) {
    const uint8_t cond = (uint8_t)c;
    const actx_ort_tensor in[2] = {
        {.elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, .data = &x},
        {.elem_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL, .data = (void *)&cond},
    };
    for (int p = 0; p < 2; p++) {
      const ep_session_spec spec = {.policy = g_policies[p], .threads = 1};
      const long on_actx = ep_check_against_ort(bytes, size, &spec, 2, in,
                                                "If in an If after Add(x, b[1]) -> ms.Gelu");
      CHECK(on_actx >= 0, "If in an If, policy %s", g_policies[p]);
    }
  }
  free(bytes);
}

int main(int argc, char **argv) {
  if (ep_test_init(argc, argv) != 0) return 2;
  test_scalar_subgraphs();
  test_half_add_gelu();
  test_if_scalar_bias();
  actx_ort_shutdown();
  printf("%d failures\n", g_failures);
  return g_failures ? 1 : 0;
}
