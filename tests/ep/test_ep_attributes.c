/* Attribute values the EP must read exactly as ORT does, or leave to ORT.
 *
 * usage: test_ep_attributes <absolute path of libactx_ep.so>
 *
 * An ONNX string attribute is bytes: "tanh\0junk" is not "tanh", and ORT alone refuses a
 * float32 Gelu-20 with it (float16 it inlines into an exact GELU). Each model here is one Gelu-20
 * or QuickGelu node with a malformed, empty, over-long, mistyped or repeated attribute, or a
 * well-formed one, in float32, float16 and bfloat16; ORT alone and ORT + actx (auto and all)
 * must agree bit for bit, or both refuse the model. */
#include <stdlib.h>
#include <string.h>

#include "ep_test.h"

#define N 1048576 /* where both host classes' `auto` tables claim every Gelu kind */

typedef enum attr_form {
  ATTR_BYTES,  /* approximate = the bytes */
  ATTR_INT,    /* approximate = 1, an int */
  ATTR_TWICE,  /* approximate given twice: "none", then the bytes */
  ALPHA_BYTES, /* QuickGelu alpha given as a string */
} attr_form;

typedef struct attr_case {
  const char *label;
  attr_form form;
  const char *bytes;
  size_t len;
  int on_actx; /* 1: a value ORT accepts, which actx runs; -1: either; 0: left to ORT */
} attr_case;

#define BYTES(s) s, sizeof s - 1
static const attr_case cases[] = {
    {"approximate \"tanh\"", ATTR_BYTES, BYTES("tanh"), 1},
    {"approximate \"none\"", ATTR_BYTES, BYTES("none"), 1},
    {"approximate \"tanh\\0junk\"", ATTR_BYTES, BYTES("tanh\0junk"), 0},
    {"approximate \"tanh\\0\"", ATTR_BYTES, BYTES("tanh\0"), 0},
    {"approximate \"none\\0tanh\"", ATTR_BYTES, BYTES("none\0tanh"), 0},
    {"approximate \"\\0tanh\"", ATTR_BYTES, BYTES("\0tanh"), 0},
    {"approximate \"\"", ATTR_BYTES, BYTES(""), 0},
    {"approximate \"\\0\"", ATTR_BYTES, BYTES("\0"), 0},
    {"approximate \"TANH\"", ATTR_BYTES, BYTES("TANH"), 0},
    {"approximate \"tanh \"", ATTR_BYTES, BYTES("tanh "), 0},
    {"approximate \"tan\"", ATTR_BYTES, BYTES("tan"), 0},
    {"approximate \"tanhtanhtanhtanh\" (16 bytes)", ATTR_BYTES, BYTES("tanhtanhtanhtanh"), 0},
    {"approximate over-long (64 bytes)", ATTR_BYTES, NULL, 64, 0},
    {"approximate an int", ATTR_INT, NULL, 0, 0},
    {"approximate twice", ATTR_TWICE, BYTES("tanh"), -1}, /* ORT keeps one: ours is the same */
    {"QuickGelu alpha a string", ALPHA_BYTES, BYTES("1.702"), 0},
};

static int build(const attr_case *c, int32_t elem_type, uint8_t **bytes, size_t *size) {
  const bool quick = c->form == ALPHA_BYTES;
  actx_model *m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, 20, quick ? 1 : 0);
  const int64_t dims[2] = {N / 512, 512};
  actx_model_add_input(m, "x", elem_type, 2, dims, NULL);
  actx_model_add_output(m, "y", elem_type, 2, dims, NULL);
  actx_model_node *n =
      actx_model_add_named_node(m, EP_TEST_NODE, quick ? "QuickGelu" : "Gelu",
                                quick ? ACTX_MODEL_MS_DOMAIN : "", 1, (const char *[]){"x"}, 1,
                                (const char *[]){"y"});
  char *long_value = NULL;
  switch (c->form) {
    case ATTR_BYTES:
      if (c->bytes == NULL) { /* "tanh" followed by a long tail */
        long_value = malloc(c->len);
        if (long_value != NULL) {
          memset(long_value, 'h', c->len);
          memcpy(long_value, "tanh", 4);
        }
        actx_model_node_attr_bytes(n, "approximate", long_value, c->len);
      } else {
        actx_model_node_attr_bytes(n, "approximate", c->bytes, c->len);
      }
      break;
    case ATTR_INT: actx_model_node_attr_int(n, "approximate", 1); break;
    case ATTR_TWICE:
      actx_model_node_attr_string(n, "approximate", "none");
      actx_model_node_attr_bytes(n, "approximate", c->bytes, c->len);
      break;
    case ALPHA_BYTES: actx_model_node_attr_bytes(n, "alpha", c->bytes, c->len); break;
  }
  free(long_value);
  const int rc = actx_model_serialize(m, bytes, size);
  if (rc != 0) printf("%s: %s\n", c->label, actx_model_error(m));
  actx_model_free(m);
  return rc;
}

int main(int argc, char **argv) {
  if (ep_test_init(argc, argv) != 0) return 2;
  static const int32_t types[] = {ACTX_ELEM_FLOAT, ACTX_ELEM_FLOAT16, ACTX_ELEM_BFLOAT16};
  static const char *const policies[] = {"auto", "all"};
  static uint8_t x[N * 4];
  size_t n_checks = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (int t = 0; t < 3; t++) {
      uint8_t *bytes = NULL;
      size_t size = 0;
      char label[160];
      snprintf(label, sizeof label, "%s, %s", cases[i].label, actx_elem_name(types[t]));
      if (build(&cases[i], types[t], &bytes, &size) != 0) {
        CHECK(false, "%s: model", label);
        continue;
      }
      ep_fill_inputs(types[t], x, N, 100 + i);
      const actx_ort_tensor in = {.elem_type = (ONNXTensorElementDataType)types[t],
                                  .rank = 2,
                                  .dims = {N / 512, 512},
                                  .data = x};
      for (int p = 0; p < 2; p++) {
        const ep_session_spec spec = {.policy = policies[p], .threads = 1};
        /* Comparable with ORT alone: float32; float16 under auto, where actx either takes the
         * Gelu (a value ORT accepts: ours is the one float16 rounding, ORT's a float32 island of
         * the function body) or leaves all of it to ORT. `all` takes any node it can run, so
         * also a lone Erf of that island. bfloat16: ORT alone has no kernel, so only a value we
         * decline is (both sessions then refuse the model). */
        const bool comparable = types[t] == ACTX_ELEM_FLOAT
                                    ? true
                                    : cases[i].on_actx == 0 &&
                                          (types[t] == ACTX_ELEM_BFLOAT16 || p == 0);
        if (comparable) {
          const long on_actx = ep_check_against_ort(bytes, size, &spec, 1, &in, label);
          if (on_actx >= 0 && cases[i].on_actx >= 0)
            CHECK((on_actx > 0) == (cases[i].on_actx > 0), "%s, policy %s: %ld nodes on actx",
                  label, policies[p], on_actx);
          n_checks++;
        }
        /* whatever ORT makes of it, the Gelu node itself is ours only with a value ORT accepts */
        actx_ort_session *s = NULL;
        actx_ort_error err;
        if (ep_session_create(bytes, size, &spec, &s, &err) == 0) {
          char ep[64];
          ep_node_ep(s, EP_TEST_NODE, ep, sizeof ep);
          if (cases[i].on_actx >= 0)
            CHECK((strcmp(ep, "actx") == 0) == (cases[i].on_actx > 0),
                  "%s, policy %s: node assigned to '%s'", label, policies[p], ep);
          actx_ort_session_free(s);
          n_checks++;
        }
      }
      free(bytes);
    }
  actx_ort_shutdown();
  printf("%zu checks, %d failures\n", n_checks, g_failures);
  return g_failures ? 1 : 0;
}
