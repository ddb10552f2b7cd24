/* ab_cases.h — the models `actx ab` measures: a table of builders.
 *
 * Each case builds, for one dtype and element count, a serialized model plus its inputs. The
 * single-node activation cases share one builder parameterised by the row; a case made of
 * several nodes (an exported GELU subgraph, a transformer MLP block) adds a row with its own
 * builder function. Names are what the table prints and what `--ops` selects. */
#ifndef ACTX_TOOLS_AB_CASES_H
#define ACTX_TOOLS_AB_CASES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "actx.h"
#include "host.h"

/* Most graph inputs a case may have. */
#define ACTX_AB_MAX_INPUTS 8
/* Innermost dimension of every single-node case's tensor, and its bias length: tensors are
 * [N / ACTX_AB_ROW, ACTX_AB_ROW] (or [1, N] when N is not a multiple). */
#define ACTX_AB_ROW 512
/* Activation inputs are drawn uniformly from this range: both tails of every op's curve. */
#define ACTX_AB_INPUT_LO (-6.0)
#define ACTX_AB_INPUT_HI 6.0

/* A built case: model bytes, inputs (data owned here), and what libactx computes for it (a
 * check of the actx arm when ORT alone cannot run the model, as for bfloat16). */
typedef struct actx_ab_model {
  uint8_t *bytes;
  size_t size;
  size_t n_inputs;
  actx_ort_tensor inputs[ACTX_AB_MAX_INPUTS];
  size_t elements; /* of the first input: the N the tables show */
  bool has_reference;
  actx_op_desc reference; /* bias, when set, points at reference_bias */
  void *reference_bias;
} actx_ab_model;

void actx_ab_model_free(actx_ab_model *m);

typedef struct actx_ab_case actx_ab_case;

/* Builds c for dtype with n elements, inputs drawn from a generator seeded with seed. 0, or -1
 * with a message in err. */
typedef int (*actx_ab_build_fn)(const actx_ab_case *c, actx_dtype dtype, size_t n,
                                uint64_t seed, actx_ab_model *out, char *err, size_t err_size);

struct actx_ab_case {
  const char *name;
  actx_ab_build_fn build;
  int model; /* which model the multi-node builders make (see ab_cases.c); 0 otherwise */
  /* The single-node builder's parameters. */
  const char *op_type;
  const char *domain;      /* "" is ai.onnx */
  const char *approximate; /* ai.onnx Gelu's attribute; NULL: not set */
  bool has_bias;           /* a bias initializer of length ACTX_AB_ROW */
  bool has_alpha;
  float alpha;
  actx_op op; /* what libactx computes for it */
  /* The element counts measured when the user gives no --sizes (NULL: the tool's own), and
   * whether bfloat16 is measured at all (not where ORT lacks kernels for the rest of the
   * model, so that neither arm can run it). */
  const long *default_sizes;
  size_t n_default_sizes;
  bool no_bf16;
};

/* The case table, in the order the tables print. */
const actx_ab_case *actx_ab_cases(size_t *n);

/* ---- BERT-base blocks ---------------------------------------------------------------------- */

#define ACTX_AB_BERT_HIDDEN 768
#define ACTX_AB_BERT_FFN 3072
#define ACTX_AB_BERT_HEADS 12
#define ACTX_AB_BERT_MAX_SEQ 512
/* Every node of the blocks' GELU (its bias Add included) has a name starting with this. */
#define ACTX_AB_GELU_PREFIX "gelu_"

typedef enum actx_ab_block {
  ACTX_AB_BERT_MLP = 1, /* X → MatMul 768×3072 → Add b1 → exported exact GELU → MatMul → Add b2 */
  ACTX_AB_BERT_ENCODER, /* self-attention (12 heads), Add + LayerNorm, the MLP, Add + LayerNorm */
} actx_ab_block;

typedef struct actx_ab_block_spec {
  actx_ab_block block;
  size_t seq;       /* S */
  actx_dtype dtype;
  bool static_2d;   /* X [S, 768] with fixed sizes, instead of [batch, sequence, 768] symbolic as
                       exporters write it (ORT then folds MatMul + Add into Gemm, bias and all) */
} actx_ab_block_spec;

/* Builds the block at opset 17 with random weights from seed, and its input X (uniform, variance
 * 1). 0, or -1 with a message. */
int actx_ab_build_block(const actx_ab_block_spec *spec, uint64_t seed, actx_ab_model *out,
                        char *err, size_t err_size);

/* ---- Chains, for the time session creation takes ------------------------------------------ */

/* Rows and columns of every tensor of a chain: 16 Ki float32 elements, a size at which `auto`
 * claims Tanh and Sigmoid on both host classes' tables (docs/ep-policy.md). */
#define ACTX_AB_CHAIN_ROWS 32
#define ACTX_AB_CHAIN_COLS ACTX_AB_ROW

typedef enum actx_ab_chain {
  ACTX_AB_CHAIN_ACTIVATIONS, /* x → Tanh → Sigmoid → Gelu → Tanh → ... → y, opset 20 */
  ACTX_AB_CHAIN_EXPORTED_GELU, /* x → (0.5·x)·(1 + erf(x/√2)) (5 nodes, opset 17) → ... → y */
  ACTX_AB_N_CHAINS
} actx_ab_chain;

/* "activations", "exported-gelu". */
const char *actx_ab_chain_name(actx_ab_chain chain);

/* A chain of about `nodes` nodes, every one of which actx can run (policy all); the exported
 * GELU chain rounds up to whole subgraphs. *n_nodes is the count built. The model's bytes are
 * malloc'ed (free()). 0, or -1 with a message. */
int actx_ab_build_chain(actx_ab_chain chain, size_t nodes, uint8_t **bytes, size_t *size,
                        size_t *n_nodes, char *err, size_t err_size);

/* Runs libactx on the model's first input as m->reference says, into y (m->elements elements
 * of the case's dtype). 0, or -1 with a message. */
int actx_ab_reference(const actx_ab_model *m, void *y, char *err, size_t err_size);

#endif /* ACTX_TOOLS_AB_CASES_H */
