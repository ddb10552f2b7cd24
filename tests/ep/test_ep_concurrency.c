/* Concurrent Run() calls on one session: ORT allows them and may call the EP's Compute for the
 * same node from several threads at once.
 *
 * usage: test_ep_concurrency <absolute path of libactx_ep.so>
 *
 * Two sessions (policy all, 2 intra-op threads): BiasGelu on [64, 2048] (large enough to be
 * split over ORT's pool while other threads also use it) and QuickGelu on [3, 1, 5]. 8 threads
 * each run both 200 times on an input of their own; every output must equal the one computed
 * before the threads started. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ep_test.h"

#define N_THREADS 8
#define N_RUNS 200

typedef struct model_case {
  ep_model_spec spec;
  actx_ort_session *session;
  size_t n, bias_n;
  void *x[N_THREADS], *bias[N_THREADS], *want[N_THREADS];
  size_t want_bytes;
} model_case;

static model_case g_cases[2] = {
    {.spec = {.op_type = "BiasGelu",
              .domain = ACTX_MODEL_MS_DOMAIN,
              .elem_type = ACTX_ELEM_FLOAT,
              .rank = 2,
              .dims = {64, 2048},
              .bias = true,
              .bias_rank = 1,
              .bias_dims = {2048}}},
    {.spec = {.op_type = "QuickGelu",
              .domain = ACTX_MODEL_MS_DOMAIN,
              .elem_type = ACTX_ELEM_FLOAT,
              .rank = 3,
              .dims = {3, 1, 5},
              .has_alpha = true,
              .alpha = 0.75f}},
};

static int g_mismatches[N_THREADS], g_errors[N_THREADS];

static void *worker(void *arg) {
  const size_t t = (size_t)(uintptr_t)arg;
  for (int r = 0; r < N_RUNS; r++) {
    for (size_t c = 0; c < 2; c++) {
      model_case *m = &g_cases[c];
      size_t bytes = 0;
      void *y = ep_run(m->session, m->spec.elem_type, m->x[t], m->spec.rank, m->spec.dims,
                       m->bias[t], m->spec.bias_rank, m->spec.bias_dims, &bytes);
      if (y == NULL) {
        g_errors[t]++;
        continue;
      }
      if (bytes != m->want_bytes || memcmp(y, m->want[t], bytes) != 0) g_mismatches[t]++;
      free(y);
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (ep_test_init(argc, argv) != 0) return 2;
  for (size_t c = 0; c < 2; c++) {
    model_case *m = &g_cases[c];
    uint8_t *model = NULL;
    size_t size = 0;
    if (ep_build_model(&m->spec, &model, &size) != 0) return 1;
    const ep_session_spec spec = {.policy = "all", .threads = 2};
    actx_ort_error err;
    if (ep_session_create(model, size, &spec, &m->session, &err) != 0) {
      printf("session: %s\n", err.message);
      return 1;
    }
    free(model);
    char ep[64];
    ep_node_ep(m->session, EP_TEST_NODE, ep, sizeof ep);
    CHECK(strcmp(ep, "actx") == 0, "%s ran on '%s'", m->spec.op_type, ep);
    m->n = ep_shape_count(m->spec.rank, m->spec.dims);
    m->bias_n = m->spec.bias ? (size_t)m->spec.bias_dims[0] : 0;
    for (size_t t = 0; t < N_THREADS; t++) {
      m->x[t] = malloc(m->n * sizeof(float));
      ep_fill_inputs(ACTX_ELEM_FLOAT, m->x[t], m->n, 100 * c + t);
      if (m->bias_n) {
        m->bias[t] = malloc(m->bias_n * sizeof(float));
        ep_fill_inputs(ACTX_ELEM_FLOAT, m->bias[t], m->bias_n, 1000 + 100 * c + t);
      }
      m->want[t] = ep_run(m->session, m->spec.elem_type, m->x[t], m->spec.rank, m->spec.dims,
                          m->bias[t], m->spec.bias_rank, m->spec.bias_dims, &m->want_bytes);
      if (m->want[t] == NULL) return 1;
    }
    /* the inputs differ per thread, so a mixed-up call cannot go unnoticed */
    CHECK(memcmp(m->want[0], m->want[1], m->want_bytes) != 0,
          "%s: outputs of threads 0 and 1 equal", m->spec.op_type);
  }

  pthread_t threads[N_THREADS];
  for (size_t t = 0; t < N_THREADS; t++)
    CHECK(pthread_create(&threads[t], NULL, worker, (void *)(uintptr_t)t) == 0, "pthread_create");
  for (size_t t = 0; t < N_THREADS; t++) pthread_join(threads[t], NULL);
  for (size_t t = 0; t < N_THREADS; t++)
    CHECK(g_mismatches[t] == 0 && g_errors[t] == 0, "thread %zu: %d mismatches, %d failed runs", t,
          g_mismatches[t], g_errors[t]);

  for (size_t c = 0; c < 2; c++) {
    for (size_t t = 0; t < N_THREADS; t++) {
      free(g_cases[c].x[t]);
      free(g_cases[c].bias[t]);
      free(g_cases[c].want[t]);
    }
    actx_ort_session_free(g_cases[c].session);
  }
  actx_ort_shutdown();
  printf("%d threads x %d runs x 2 models: %d failures\n", N_THREADS, N_RUNS, g_failures);
  return g_failures ? 1 : 0;
}
