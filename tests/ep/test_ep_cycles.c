/* The EP library's whole life, many times over, for leak checkers (ctest runs it under valgrind
 * when valgrind is installed):
 *   register the library → create a session with actx → run it → release the session →
 *   unregister the library (and release the env)
 *
 * usage: test_ep_cycles <absolute path of libactx_ep.so> [cycles, default 200]
 *
 * Each cycle also creates a session whose CreateEp fails (a bad option), one with the EP
 * declining everything, and one on an exported Add(bias) → erf GELU subgraph the EP fuses into
 * one node (the path that records fusions at GetCapability for Compile), so the error, empty
 * and fused paths are covered too. The outputs must stay bit-identical across cycles. */
#include <stdlib.h>
#include <string.h>

#include "ep_test.h"
#include "pattern_models.h"

/* The fused subgraph: its output, and whether all six nodes ran as one actx node. */
static void *run_fused(const ep_pattern_model *pm, const float *x, const int64_t *dims, int c,
                       size_t *bytes) {
  actx_ort_session *s = NULL;
  actx_ort_error err;
  const ep_session_spec all = {.policy = "all", .threads = 1};
  if (ep_session_create(pm->bytes, pm->size, &all, &s, &err) != 0) {
    CHECK(false, "cycle %d: fused: %s", c, err.message);
    return NULL;
  }
  const long on_actx = actx_ort_count_nodes_on(s, "actx", &err);
  CHECK(on_actx == (long)pm->n_pattern_nodes, "cycle %d: %ld of %zu nodes fused on actx", c,
        on_actx, pm->n_pattern_nodes);
  void *y = ep_run(s, ACTX_ELEM_FLOAT, x, 2, dims, NULL, 0, NULL, bytes);
  CHECK(y != NULL, "cycle %d: fused run", c);
  actx_ort_session_free(s);
  return y;
}

int main(int argc, char **argv) {
  if (ep_test_init(argc, argv) != 0) return 2;
  const int cycles = argc > 2 ? atoi(argv[2]) : 200;

  ep_model_spec spec = {.op_type = "FastGelu",
                        .domain = ACTX_MODEL_MS_DOMAIN,
                        .elem_type = ACTX_ELEM_FLOAT,
                        .rank = 2,
                        .dims = {4, 96},
                        .bias = true,
                        .bias_rank = 1,
                        .bias_dims = {96}};
  uint8_t *model = NULL;
  size_t size = 0;
  if (ep_build_model(&spec, &model, &size) != 0) return 1;
  float x[4 * 96], bias[96];
  ep_fill_inputs(ACTX_ELEM_FLOAT, x, 4 * 96, 1);
  ep_fill_inputs(ACTX_ELEM_FLOAT, bias, 96, 2);
  const ep_pattern_spec pattern = {
      .family = EP_PATTERN_ERF_GELU, .rank = 2, .dims = {4, 96}, .bias = true};
  ep_pattern_model pm;
  if (ep_pattern_build(&pattern, 3, &pm) != 0) return 1;

  void *first = NULL, *first_fused = NULL;
  size_t first_bytes = 0, first_fused_bytes = 0;
  for (int c = 0; c < cycles; c++) {
    actx_ort_error err;
    actx_ort_session *s = NULL;
    const ep_session_spec all = {.policy = "all", .threads = 1};
    if (ep_session_create(model, size, &all, &s, &err) != 0) {
      CHECK(false, "cycle %d: %s", c, err.message);
      break;
    }
    char ep[64];
    ep_node_ep(s, EP_TEST_NODE, ep, sizeof ep);
    CHECK(strcmp(ep, "actx") == 0, "cycle %d: node on '%s'", c, ep);
    size_t bytes = 0;
    void *y = ep_run(s, ACTX_ELEM_FLOAT, x, 2, spec.dims, bias, 1, spec.bias_dims, &bytes);
    CHECK(y != NULL, "cycle %d: run", c);
    if (first == NULL) {
      first = y;
      first_bytes = bytes;
    } else if (y != NULL) {
      CHECK(bytes == first_bytes && memcmp(y, first, bytes) == 0, "cycle %d: output changed", c);
      free(y);
    }
    actx_ort_session_free(s);

    size_t fused_bytes = 0;
    void *fused = run_fused(&pm, x, spec.dims, c, &fused_bytes);
    if (first_fused == NULL) {
      first_fused = fused;
      first_fused_bytes = fused_bytes;
    } else if (fused != NULL) {
      CHECK(fused_bytes == first_fused_bytes && memcmp(fused, first_fused, fused_bytes) == 0,
            "cycle %d: fused output changed", c);
      free(fused);
    }

    const ep_session_spec bad = {.policy = "sometimes", .threads = 1};
    CHECK(ep_session_create(model, size, &bad, &s, &err) != 0, "cycle %d: bad option accepted", c);
    const ep_session_spec none = {.policy = "none", .threads = 1};
    if (ep_session_create(model, size, &none, &s, &err) == 0)
      actx_ort_session_free(s);
    else
      CHECK(false, "cycle %d: policy none: %s", c, err.message);

    actx_ort_shutdown(); /* unregisters the EP library and releases the env */
    if (g_failures) break;
  }
  free(first);
  free(first_fused);
  ep_pattern_model_free(&pm);
  free(model);
  printf("%d cycles, %d failures\n", cycles, g_failures);
  return g_failures ? 1 : 0;
}
