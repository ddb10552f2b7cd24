/* ep_test.h — what the EP tests share: one-node models, sessions with and without the actx EP,
 * which EP ran the node, bit comparison. Every test takes the EP library's absolute path as its
 * first argument (CMake passes $<TARGET_FILE:actx_ep>). */
#ifndef ACTX_TESTS_EP_TEST_H
#define ACTX_TESTS_EP_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "host.h"
#include "model.h"

extern int g_failures;

#define CHECK(cond, ...)                                     \
  do {                                                       \
    if (!(cond)) {                                           \
      g_failures++;                                          \
      printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      printf(__VA_ARGS__);                                   \
      printf("\n");                                          \
    }                                                        \
  } while (0)

/* The node every one-node model names, so its assignment can be looked up. */
#define EP_TEST_NODE "node"

/* A one-node model: y = op(x [, bias]). */
typedef struct ep_model_spec {
  const char *op_type;
  const char *domain;  /* "" for ai.onnx, or "com.microsoft" */
  int64_t onnx_opset;  /* default-domain opset the model imports (0: 20) */
  int32_t elem_type;   /* of x, y (and bias) */
  int32_t y_elem_type; /* 0: elem_type */
  size_t rank;
  int64_t dims[ACTX_MODEL_MAX_RANK]; /* -1: symbolic, named "d<i>" */
  /* bias: a second input, fed at run time */
  bool bias;
  size_t bias_rank;
  int64_t bias_dims[ACTX_MODEL_MAX_RANK];
  const char *bias_dim_param; /* name of a symbolic bias dim (NULL: "d<rank-1>") */
  /* attributes (NULL / false: not set) */
  const char *approximate;
  bool has_alpha;
  float alpha;
} ep_model_spec;

/* Serializes the model; 0 on success (message printed on failure). */
int ep_build_model(const ep_model_spec *spec, uint8_t **bytes, size_t *size);

/* Sessions. policy NULL: ORT alone (CPU EP); else the actx EP with provider option
 * policy=<policy> ("" adds no option). threads 0: ORT's default. */
typedef struct ep_session_spec {
  const char *policy;
  int threads;
  actx_ort_optimization optimization;
  /* extra provider options / session config entries */
  size_t n_ep_options;
  const char *const *ep_option_keys, *const *ep_option_values;
  size_t n_config;
  const char *const *config_keys, *const *config_values;
  const char *optimized_model_path; /* see actx_ort_session_options */
  const char *profile_prefix;
} ep_session_spec;

int ep_session_create(const uint8_t *model, size_t size, const ep_session_spec *spec,
                      actx_ort_session **out, actx_ort_error *err);

/* The EP that runs the node called node_name ("" if no such node; "?" on error). */
void ep_node_ep(const actx_ort_session *s, const char *node_name, char *ep, size_t ep_size);

/* Where ORT put the node called node_name: its EP (as ep_node_ep gives it), which of ORT's
 * assigned subgraphs holds it (SIZE_MAX: no such node) and how many nodes that subgraph holds
 * (an EP's compiled node: all it fused). */
typedef struct ep_node_place {
  char ep[64];
  size_t subgraph;
  size_t members;
} ep_node_place;
void ep_node_place_of(const actx_ort_session *s, const char *node_name, ep_node_place *out);

/* Runs with x (and bias if not NULL), both count elements of elem_type, shaped as given.
 * Returns the output (malloc'ed, *y_bytes bytes) or NULL after printing the error. */
void *ep_run(actx_ort_session *s, int32_t elem_type, const void *x, size_t rank,
             const int64_t *dims, const void *bias, size_t bias_rank, const int64_t *bias_dims,
             size_t *y_bytes);

/* Elements of a shape. */
size_t ep_shape_count(size_t rank, const int64_t *dims);

/* First byte offset where a and b differ, or -1. */
long ep_first_difference(const void *a, const void *b, size_t bytes);

/* Fills n elements of elem_type (float, float16, bfloat16) with a mix of random values over
 * many magnitudes and the special values (±0, ±inf, NaN, denormals, ±max, values around the
 * kernels' clamp points), reproducibly from seed. */
void ep_fill_inputs(int32_t elem_type, void *data, size_t n, uint64_t seed);

/* Writes over x (float32, n elements; nothing when n < 64) the inputs on which ORT's FMA3 and
 * AVX-512F kernels differ (src/ort_rule.c): signalling NaNs (AVX-512F Gelu / SiLU return them
 * as they are, FMA3 makes them quiet) and the 20 inputs where AVX-512F's SiLU clamps its
 * logistic at 1, so that a test's float32 session meets the host's ORT rule. */
void ep_plant_rule_inputs(float *x, size_t n);

/* A bias for x: ep_fill_inputs' values, but with no NaN on a CPU whose add of two NaNs does not
 * give the first operand's NaN as x86 does (qemu 7.2's TCG picks the larger payload, the x87
 * rule): ORT's NaN x + NaN bias is the emulator's choice there, not x86's (the native runs check
 * it). Says so once on stdout. */
void ep_fill_bias(int32_t elem_type, void *data, size_t n, uint64_t seed);

/* float → float16 / bfloat16 bits, rounding to nearest even. */
uint16_t ep_float_to_half(float f);
uint16_t ep_float_to_bf16(float f);

/* Creates a session (policy NULL: ORT alone) that saves its optimised graph to path, and
 * counts that graph's nodes: how far ORT's own fusions got. A graph with nodes compiled by an
 * EP cannot be saved (an error). */
int ep_optimized_node_count(const uint8_t *model, size_t size, const char *policy, const char *path,
                            size_t *n_nodes, actx_ort_error *err);

/* ORT alone against ORT with the EP (with_ep->policy must not be NULL), on the same model and
 * inputs. CHECKs that both sessions are created or both refused, and that every output of the
 * two runs is the same, bit for bit (NaNs too). Returns how many nodes the EP ran, 0 when ORT
 * alone refused the model as well, -1 after a failed CHECK. */
long ep_check_against_ort(const uint8_t *model, size_t size, const ep_session_spec *with_ep,
                          size_t n_inputs, const actx_ort_tensor *inputs, const char *label);

/* Reads argv[1] (the EP library); prints usage and returns -1 if absent. */
int ep_test_init(int argc, char **argv);
extern const char *g_ep_library;

#endif /* ACTX_TESTS_EP_TEST_H */
