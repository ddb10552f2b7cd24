/* Concurrent Runs of one session: THREADS threads each call Run RUNS times on the same ORT
 * session with the actx EP (policy all; with 2 intra-op threads every node is big enough to be
 * split over ORT's pool from inside each Run), and every output must be bit-identical to ORT
 * alone's.
 *
 * usage: test_stress_threads <absolute path of libactx_ep.so> [THREADS [RUNS [INTRA_OP]]]
 *
 * INTRA_OP is the session's intra-op thread count, 2 by default, 1 under ThreadSanitizer: ORT is
 * not instrumented, so TSan cannot see the hand-offs of ORT's own pool (lock-free queues) and
 * reports every buffer a pool thread touches after another thread as a race. With one intra-op
 * thread each Run computes on its caller's thread, and the races TSan looks for are the ones
 * between concurrent Runs sharing the session and the EP's compiled nodes. (actx's split itself
 * is TSan-checked on its own pool by test_api.)
 *
 * The model chains what the EP serves, each node on the previous one's output, with a constant
 * bias: x -> Gelu(tanh) -> BiasGelu(b) -> Sigmoid -> QuickGelu -> Erf -> y. Each thread feeds
 * its own input (threads share the session, not the data) and checks its own output, so a
 * result that leaked between concurrent Runs shows up too. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ep_test.h"

#define DEFAULT_THREADS 8
#define DEFAULT_RUNS 1000
#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
#ifndef UNDER_TSAN
#define UNDER_TSAN 0
#endif
#define DEFAULT_INTRA_OP (UNDER_TSAN ? 1 : 2)
/* elements per tensor: above the EP's split threshold (65536) */
#define ROWS 2
#define COLS 40000
#define N_ELEMENTS ((size_t)ROWS * COLS)
/* distinct inputs; thread t uses input t % N_INPUTS */
#define N_INPUTS 4

static uint8_t *build_chain_model(size_t *size) {
  actx_model *m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, 20, 1);
  const int64_t dims[2] = {ROWS, COLS}, bias_dims[1] = {COLS};
  float *bias = malloc(COLS * sizeof *bias);
  ep_fill_inputs(ACTX_ELEM_FLOAT, bias, COLS, 99);
  actx_model_add_input(m, "x", ACTX_ELEM_FLOAT, 2, dims, NULL);
  actx_model_add_output(m, "y", ACTX_ELEM_FLOAT, 2, dims, NULL);
  actx_model_add_initializer(m, "b", ACTX_ELEM_FLOAT, 1, bias_dims, bias);
  free(bias);
  const char *x[] = {"x"}, *t1[] = {"t1"}, *t1b[] = {"t1", "b"}, *t2[] = {"t2"}, *t3[] = {"t3"},
             *t4[] = {"t4"}, *y[] = {"y"};
  actx_model_node_attr_string(actx_model_add_node(m, "Gelu", "", 1, x, 1, t1), "approximate",
                              "tanh");
  actx_model_add_node(m, "BiasGelu", ACTX_MODEL_MS_DOMAIN, 2, t1b, 1, t2);
  actx_model_add_node(m, "Sigmoid", "", 1, t2, 1, t3);
  actx_model_node_attr_float(actx_model_add_node(m, "QuickGelu", ACTX_MODEL_MS_DOMAIN, 1, t3, 1, t4),
                             "alpha", 1.5f);
  actx_model_add_node(m, "Erf", "", 1, t4, 1, y);
  uint8_t *bytes = NULL;
  if (actx_model_serialize(m, &bytes, size) != 0) printf("model: %s\n", actx_model_error(m));
  actx_model_free(m);
  return bytes;
}

typedef struct shared {
  actx_ort_session *session;
  const float *inputs[N_INPUTS];
  const void *expected[N_INPUTS]; /* ORT alone's output for each input */
  size_t expected_bytes;
  int runs;
} shared;

typedef struct worker {
  const shared *sh;
  int index;
  int failed_runs, differing_runs;
  char first_error[256];
} worker;

static void *worker_main(void *arg) {
  worker *w = arg;
  const shared *sh = w->sh;
  const int in = w->index % N_INPUTS;
  const int64_t dims[2] = {ROWS, COLS};
  for (int r = 0; r < sh->runs; r++) {
    size_t bytes = 0;
    /* ep_run prints its own error; count it and keep going to see how widespread it is */
    void *y = ep_run(sh->session, ACTX_ELEM_FLOAT, sh->inputs[in], 2, dims, NULL, 0, NULL, &bytes);
    if (y == NULL) {
      if (w->failed_runs++ == 0) snprintf(w->first_error, sizeof w->first_error, "run %d failed", r);
      continue;
    }
    if (bytes != sh->expected_bytes || memcmp(y, sh->expected[in], bytes) != 0) {
      if (w->differing_runs++ == 0) {
        const long at = bytes == sh->expected_bytes ? ep_first_difference(y, sh->expected[in], bytes)
                                                    : -1;
        snprintf(w->first_error, sizeof w->first_error,
                 "run %d: %zu bytes (want %zu), first difference at element %ld", r, bytes,
                 sh->expected_bytes, at / 4);
      }
    }
    free(y);
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (ep_test_init(argc, argv) != 0) return 2;
  const int n_threads = argc > 2 ? atoi(argv[2]) : DEFAULT_THREADS;
  const int runs = argc > 3 ? atoi(argv[3]) : DEFAULT_RUNS;
  const int intra_op = argc > 4 ? atoi(argv[4]) : DEFAULT_INTRA_OP;
  if (n_threads < 1 || n_threads > 64 || runs < 1 || intra_op < 1) {
    printf("usage: %s <libactx_ep.so> [THREADS 1..64 [RUNS >= 1 [INTRA_OP >= 1]]]\n", argv[0]);
    return 2;
  }

  size_t size = 0;
  uint8_t *model = build_chain_model(&size);
  CHECK(model != NULL, "model");
  if (model == NULL) return 1;

  shared sh = {.runs = runs};
  float *inputs[N_INPUTS];
  for (int i = 0; i < N_INPUTS; i++) {
    inputs[i] = malloc(N_ELEMENTS * sizeof(float));
    ep_fill_inputs(ACTX_ELEM_FLOAT, inputs[i], N_ELEMENTS, 1234 + (uint64_t)i);
    sh.inputs[i] = inputs[i];
  }
  const int64_t dims[2] = {ROWS, COLS};

  /* the reference: ORT alone, one Run per input */
  actx_ort_session *alone = NULL;
  actx_ort_error err;
  const ep_session_spec alone_spec = {.policy = NULL, .threads = intra_op};
  if (ep_session_create(model, size, &alone_spec, &alone, &err) != 0) {
    printf("FAIL: session without actx: %s\n", err.message);
    return 1;
  }
  void *expected[N_INPUTS] = {NULL};
  for (int i = 0; i < N_INPUTS; i++) {
    expected[i] = ep_run(alone, ACTX_ELEM_FLOAT, inputs[i], 2, dims, NULL, 0, NULL, &sh.expected_bytes);
    CHECK(expected[i] != NULL, "reference run %d", i);
    sh.expected[i] = expected[i];
  }
  actx_ort_session_free(alone);

  const ep_session_spec spec = {.policy = "all", .threads = intra_op};
  if (ep_session_create(model, size, &spec, &sh.session, &err) != 0) {
    printf("FAIL: session with actx: %s\n", err.message);
    return 1;
  }
  /* every node must be actx's, or the test would only stress ORT */
  actx_ort_error aerr;
  const long on_actx = actx_ort_count_nodes_on(sh.session, "actx", &aerr);
  CHECK(on_actx == 5, "%ld of 5 nodes on actx", on_actx);

  worker workers[64];
  pthread_t tids[64];
  for (int t = 0; t < n_threads; t++) {
    workers[t] = (worker){.sh = &sh, .index = t};
    CHECK(pthread_create(&tids[t], NULL, worker_main, &workers[t]) == 0, "pthread_create %d", t);
  }
  int failed = 0, differing = 0;
  for (int t = 0; t < n_threads; t++) {
    pthread_join(tids[t], NULL);
    failed += workers[t].failed_runs;
    differing += workers[t].differing_runs;
    CHECK(workers[t].failed_runs == 0 && workers[t].differing_runs == 0,
          "thread %d: %d failed, %d differing runs; first: %s", t, workers[t].failed_runs,
          workers[t].differing_runs, workers[t].first_error);
  }
  printf("%d threads x %d runs of %zu elements through 5 nodes, %d intra-op thread(s): %d failed, "
         "%d differing\n",
         n_threads, runs, N_ELEMENTS, intra_op, failed, differing);

  actx_ort_session_free(sh.session);
  for (int i = 0; i < N_INPUTS; i++) free(expected[i]), free(inputs[i]);
  free(model);
  actx_ort_shutdown();
  printf("%s\n", g_failures ? "FAILED" : "ok");
  return g_failures ? 1 : 0;
}
