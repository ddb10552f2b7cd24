/* BERT-base blocks with the GELU as exporters write it, ORT alone against ORT + actx (auto).
 *
 * usage: test_ep_bert <absolute path of libactx_ep.so>
 *
 * The models are `actx ab`'s (tools/actx/ab_cases.c), random weights from a fixed seed:
 *   - the MLP block, X [batch, sequence, 768] symbolic as exporters declare it: MatMul
 *     768×3072 → Add b1 → Div √2 → Erf → Add 1 → Mul x → Mul 0.5 → MatMul 3072×768 → Add b2;
 *     the EP must take Add b1 and the five GELU nodes as one node (our BiasGelu);
 *   - the same MLP with X [128, 768] of fixed size: ORT folds MatMul + Add b1 into a Gemm before
 *     the EP sees the graph, and the EP takes the five GELU nodes;
 *   - a whole encoder layer (12-head self-attention, residual Adds, LayerNorms, the MLP).
 * For each, with 1 and 2 intra-op threads and S = 128: every node of the GELU part (named
 * gelu_*) runs on actx, every other node on ORT's CPU EP, and the outputs are within 1e-6 of ORT
 * alone's relative to their largest magnitude (in fact the same bits: ORT fuses the same GELU
 * into a kernel whose arithmetic ours repeats). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ab_cases.h"
#include "actx_ep.h"
#include "ep_test.h"

#define SEQ 128
#define TOLERANCE 1e-6

/* How many nodes of the GELU part run on actx, and how many other nodes do. */
static void count_placement(const actx_ort_session *s, size_t *gelu_on_actx, size_t *gelu_total,
                            size_t *other_on_actx) {
  *gelu_on_actx = *gelu_total = *other_on_actx = 0;
  actx_ort_assignment *list = NULL;
  size_t n = 0;
  actx_ort_error err;
  if (actx_ort_session_assignments(s, &list, &n, &err) != 0) {
    CHECK(false, "assignments: %s", err.message);
    return;
  }
  const size_t prefix = strlen(ACTX_AB_GELU_PREFIX);
  for (size_t i = 0; i < n; i++) {
    const bool gelu = strncmp(list[i].node_name, ACTX_AB_GELU_PREFIX, prefix) == 0;
    const bool ours = strcmp(list[i].ep_name, "actx") == 0;
    *gelu_total += gelu;
    *gelu_on_actx += gelu && ours;
    *other_on_actx += !gelu && ours;
  }
  free(list);
}

static float *run_block(const actx_ab_model *m, const char *policy, int threads, size_t *count,
                        size_t *gelu_on_actx, size_t *gelu_total, size_t *other_on_actx) {
  const ep_session_spec spec = {.policy = policy, .threads = threads};
  actx_ort_session *s = NULL;
  actx_ort_error err;
  if (ep_session_create(m->bytes, m->size, &spec, &s, &err) != 0) {
    CHECK(false, "session (%s): %s", policy ? policy : "ORT alone", err.message);
    return NULL;
  }
  count_placement(s, gelu_on_actx, gelu_total, other_on_actx);
  actx_ort_tensor *out = NULL;
  size_t n_out = 0;
  float *y = NULL;
  if (actx_ort_run(s, m->n_inputs, m->inputs, &out, &n_out, &err) != 0) {
    CHECK(false, "run (%s): %s", policy ? policy : "ORT alone", err.message);
  } else {
    y = out[0].data;
    *count = out[0].count;
    out[0].data = NULL;
    actx_ort_tensors_free(out, n_out);
  }
  actx_ort_session_free(s);
  return y;
}

/* gelu_nodes: the block's GELU nodes; want_on_actx: how many of them `auto` takes */
static void check_block(const char *label, const actx_ab_block_spec *spec, size_t gelu_nodes,
                        size_t want_on_actx) {
  actx_ab_model m;
  char err[256];
  if (actx_ab_build_block(spec, 20240611u, &m, err, sizeof err) != 0) {
    CHECK(false, "%s: %s", label, err);
    return;
  }
  for (int threads = 1; threads <= 2; threads++) {
    size_t n_ort = 0, n_actx = 0, g_ort = 0, g_total = 0, other_ort = 0, g_actx = 0,
           g_total_actx = 0, other_actx = 0;
    float *want = run_block(&m, NULL, threads, &n_ort, &g_ort, &g_total, &other_ort);
    float *got = run_block(&m, "auto", threads, &n_actx, &g_actx, &g_total_actx, &other_actx);
    CHECK(g_actx == want_on_actx && g_total_actx == gelu_nodes,
          "%s, %d threads: %zu of %zu GELU nodes on actx, want %zu of %zu", label, threads, g_actx,
          g_total_actx, want_on_actx, gelu_nodes);
    CHECK(other_actx == 0, "%s, %d threads: %zu other nodes on actx", label, threads, other_actx);
    if (want != NULL && got != NULL) {
      CHECK(n_ort == n_actx && n_ort == m.elements, "%s: %zu and %zu outputs, want %zu", label,
            n_ort, n_actx, m.elements);
      double max_abs = 0, max_diff = 0;
      size_t differing = 0;
      for (size_t i = 0; i < n_ort && i < n_actx; i++) {
        max_abs = fmax(max_abs, fabs(want[i]));
        max_diff = fmax(max_diff, fabs((double)got[i] - want[i]));
        differing += memcmp(&got[i], &want[i], sizeof got[i]) != 0;
      }
      const double relative = max_abs > 0 ? max_diff / max_abs : max_diff;
      CHECK(relative <= TOLERANCE && isfinite(relative),
            "%s, %d threads: outputs differ by %.3g relative to max |y| %.3g", label, threads,
            relative, max_abs);
      printf(
          "  %-48s %d thread%s: %zu GELU nodes on actx, %zu other; %zu of %zu outputs differ "
          "from ORT alone (max %.2g relative)\n",
          label, threads, threads == 1 ? " " : "s", g_actx, other_actx, differing, n_ort, relative);
    }
    free(want);
    free(got);
  }
  actx_ab_model_free(&m);
}

int main(int argc, char **argv) {
  if (ep_test_init(argc, argv) != 0) return 2;
  const actx_ab_block_spec mlp = {.block = ACTX_AB_BERT_MLP, .seq = SEQ, .dtype = ACTX_F32};
  const actx_ab_block_spec mlp_2d = {
      .block = ACTX_AB_BERT_MLP, .seq = SEQ, .dtype = ACTX_F32, .static_2d = true};
  const actx_ab_block_spec encoder = {.block = ACTX_AB_BERT_ENCODER, .seq = SEQ, .dtype = ACTX_F32};
  /* the bias Add and the five GELU nodes; with X of fixed size the Add is inside a Gemm */
  check_block("MLP, X [1, 128, 768] (symbolic dims)", &mlp, 6, 6);
  /* there the GELU is ORT's com.microsoft Gelu on [128, 3072], which `auto` claims where this
   * host class's table says so */
  const int64_t gelu_elements = (int64_t)SEQ * 3072;
  check_block("MLP, X [128, 768] (fixed dims)", &mlp_2d, 5,
              actx_ep_policy_auto_claims(ACTX_EP_MS_GELU, ACTX_F32, gelu_elements, gelu_elements)
                  ? 5
                  : 0);
  check_block("encoder layer, X [1, 128, 768] (symbolic dims)", &encoder, 6, 6);
  actx_ort_shutdown();
  printf("%d failures\n", g_failures);
  return g_failures ? 1 : 0;
}
