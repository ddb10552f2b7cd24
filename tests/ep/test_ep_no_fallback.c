/* Sessions with session.disable_cpu_ep_fallback=1, where a node the EP leaves has nowhere to run.
 *
 * usage: test_ep_no_fallback <absolute path of libactx_ep.so>
 *
 * Under `auto` the EP declines float32 Erf everywhere, and Tanh, Sigmoid and the GELUs at small
 * sizes, for speed; with the CPU EP's fallback disabled that decline fails the session. So there
 * `auto` must take every node it can run, and every subgraph whose one node gives ORT's bits: the
 * session is created, the nodes run on actx, and the outputs are ORT alone's (a session without
 * the option: ORT alone refuses any session with it). A subgraph that one node cannot compute as
 * ORT's nodes do is still declined (and the session fails, as ORT reports). `none` claims nothing
 * either way, and the option is on only for "1", as in ORT. */
#include <stdlib.h>
#include <string.h>

#include "ep_test.h"
#include "pattern_models.h"

static const char *const no_fallback_key[] = {"session.disable_cpu_ep_fallback"};

/* ORT alone without the option against the EP with it set to value; *on_actx: nodes on actx,
 * -1 if the EP session was not created. Returns whether the outputs agree (false on any other
 * failure, after a CHECK). */
static bool compare(const uint8_t *model, size_t size, const char *policy, const char *value,
                    int32_t elem_type, size_t rank, const int64_t *dims, const char *label,
                    long *on_actx) {
  *on_actx = -1;
  const size_t n = ep_shape_count(rank, dims), es = actx_elem_size(elem_type);
  void *x = malloc(n * es);
  ep_fill_inputs(elem_type, x, n, 42);
  const ep_session_spec alone_spec = {.threads = 1};
  const char *values[1] = {value};
  const ep_session_spec ep_spec = {.policy = policy,
                                   .threads = 1,
                                   .n_config = 1,
                                   .config_keys = no_fallback_key,
                                   .config_values = values};
  actx_ort_session *alone = NULL, *with = NULL;
  actx_ort_error err;
  bool ok = false;
  void *want = NULL, *got = NULL;
  size_t want_bytes = 0, got_bytes = 0;
  if (ep_session_create(model, size, &alone_spec, &alone, &err) != 0) {
    CHECK(false, "%s: ORT alone: %s", label, err.message);
    goto done;
  }
  want = ep_run(alone, elem_type, x, rank, dims, NULL, 0, NULL, &want_bytes);
  if (ep_session_create(model, size, &ep_spec, &with, &err) != 0) {
    ok = true; /* the caller decides whether that was right */
    goto done;
  }
  *on_actx = actx_ort_count_nodes_on(with, "actx", &err);
  got = ep_run(with, elem_type, x, rank, dims, NULL, 0, NULL, &got_bytes);
  const long at = want != NULL && got != NULL && want_bytes == got_bytes
                      ? ep_first_difference(want, got, want_bytes)
                      : 0;
  CHECK(at < 0, "%s, policy %s, fallback %s: output differs from ORT alone's at byte %ld", label,
        policy, value, at);
  ok = at < 0;
done:
  actx_ort_session_free(alone);
  actx_ort_session_free(with);
  free(want);
  free(got);
  free(x);
  return ok;
}

typedef struct one_node {
  const char *label;
  const char *op_type, *domain;
  int32_t elem_type;
  int64_t elements;
} one_node;

/* Nodes `auto` declines when ORT's CPU EP may take them, on both host classes' tables. */
static const one_node nodes[] = {
    {"Erf float32, 512", "Erf", "", ACTX_ELEM_FLOAT, 512},
    {"Erf float32, 64 Ki", "Erf", "", ACTX_ELEM_FLOAT, 65536},
    {"Tanh float32, 512", "Tanh", "", ACTX_ELEM_FLOAT, 512},
    {"Sigmoid float32, 4 Ki", "Sigmoid", "", ACTX_ELEM_FLOAT, 4096},
    {"Sigmoid float32, 512", "Sigmoid", "", ACTX_ELEM_FLOAT, 512},
    {"Gelu float32, 512", "Gelu", "", ACTX_ELEM_FLOAT, 512},
    {"ms.Gelu float32, 1024", "Gelu", ACTX_MODEL_MS_DOMAIN, ACTX_ELEM_FLOAT, 1024},
    {"ms.FastGelu float32, 1024", "FastGelu", ACTX_MODEL_MS_DOMAIN, ACTX_ELEM_FLOAT, 1024},
    {"ms.QuickGelu float32, 1024", "QuickGelu", ACTX_MODEL_MS_DOMAIN, ACTX_ELEM_FLOAT, 1024},
};

static void test_one_node(void) {
  for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
    const one_node *c = &nodes[i];
    const ep_model_spec spec = {.op_type = c->op_type,
                                .domain = c->domain,
                                .elem_type = c->elem_type,
                                .rank = 2,
                                .dims = {c->elements / 512, 512}};
    uint8_t *bytes = NULL;
    size_t size = 0;
    if (ep_build_model(&spec, &bytes, &size) != 0) {
      CHECK(false, "%s: model", c->label);
      continue;
    }
    long on_actx = 0;
    /* disabled: the node is ours, with ORT's bits */
    compare(bytes, size, "auto", "1", c->elem_type, spec.rank, spec.dims, c->label, &on_actx);
    CHECK(on_actx == 1, "%s, auto, fallback disabled: %ld nodes on actx", c->label, on_actx);
    compare(bytes, size, "", "1", c->elem_type, spec.rank, spec.dims, c->label, &on_actx);
    CHECK(on_actx == 1, "%s, default policy, fallback disabled: %ld nodes on actx", c->label,
          on_actx);
    /* not disabled ("0", or a value ORT does not read as on): auto declines it as before */
    static const char *const off[] = {"0", "true", ""};
    for (int v = 0; v < 3; v++) {
      compare(bytes, size, "auto", off[v], c->elem_type, spec.rank, spec.dims, c->label,
              &on_actx);
      CHECK(on_actx == 0, "%s, auto, fallback '%s': %ld nodes on actx", c->label, off[v],
            on_actx);
    }
    /* none takes nothing, so such a session cannot be created */
    compare(bytes, size, "none", "1", c->elem_type, spec.rank, spec.dims, c->label, &on_actx);
    CHECK(on_actx < 0, "%s, none, fallback disabled: the session was created", c->label);
    free(bytes);
  }
}

/* An exported GELU below the table's threshold: ORT fuses it, so one node of ours is ORT's result
 * and auto takes it when it must. A spelling ORT runs unfused stays declined. */
static void test_subgraphs(void) {
  static const struct {
    const char *label;
    ep_pattern_spec spec;
    bool fused;
  } cases[] = {
      {"erf GELU (ORT fuses it), 1024", {.family = EP_PATTERN_ERF_GELU}, true},
      {"QuickGelu (ORT fuses it), 1024", {.family = EP_PATTERN_QUICK_GELU}, true},
      {"erf GELU, Mul 1/sqrt2 (ORT does not fuse it), 1024",
       {.family = EP_PATTERN_ERF_GELU, .erf_scale = EP_ERF_MUL_RSQRT2},
       false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ep_pattern_spec spec = cases[i].spec;
    spec.rank = 2;
    spec.dims[0] = 2;
    spec.dims[1] = 512;
    ep_pattern_model pm;
    if (ep_pattern_build(&spec, 9, &pm) != 0) {
      CHECK(false, "%s: model", cases[i].label);
      continue;
    }
    long on_actx = 0;
    compare(pm.bytes, pm.size, "auto", "1", ACTX_ELEM_FLOAT, 2, spec.dims, cases[i].label,
            &on_actx);
    if (cases[i].fused)
      CHECK(on_actx == (long)pm.n_nodes, "%s: %ld of %zu nodes on actx", cases[i].label,
            on_actx, pm.n_nodes);
    else
      CHECK(on_actx < 0, "%s: the session was created (%ld nodes on actx)", cases[i].label,
            on_actx);
    ep_pattern_model_free(&pm);
  }
}

int main(int argc, char **argv) {
  if (ep_test_init(argc, argv) != 0) return 2;
  test_one_node();
  test_subgraphs();
  actx_ort_shutdown();
  printf("%d failures\n", g_failures);
  return g_failures ? 1 : 0;
}
