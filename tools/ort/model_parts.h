/* model_parts.h — pieces of models that the EP tests and the EP fuzzer both build: the
 * activations actx serves, as single nodes and as the subgraphs exporters write (which ORT fuses),
 * and Loop bodies / If branches with the value names exporters give every such graph.
 *
 * Exporters name every Loop body's carried value v_in -> v_out and every If branch's output
 * v_out, and give the intermediates and initializers of each graph the same names too, so the
 * graphs of one model (side by side or nested) hold different nodes under the same names. The
 * parts here do the same on purpose: every name an activation adds is `prefix` + a fixed suffix.
 *
 *   actx_model *body = actx_part_loop_body(NULL, ACTX_ELEM_FLOAT, 2, dims, NULL);
 *   actx_part_add_activation(body, ACTX_ACT_SILU, ACTX_ELEM_FLOAT, ACTX_PART_IN, ACTX_PART_OUT,
 *                            "", 0, NULL, 0);
 *   actx_model_node_attr_graph(loop, "body", body);
 *
 * ONNX's checker, which ORT runs over each graph in its own topological order, lets a graph reuse
 * a sibling's names freely, and an enclosing graph's input and initializer names, but not a node
 * output name an enclosing graph defines before the node holding the graph: graphs nested in one
 * another need names of their own for their intermediates (a prefix per depth, say) and for a
 * Loop body's c_out (whose Identity comes first in that order), while v_in and v_out can stay.
 */
#ifndef ACTX_TOOLS_ORT_MODEL_PARTS_H
#define ACTX_TOOLS_ORT_MODEL_PARTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The names every body and branch uses. */
#define ACTX_PART_IN "v_in"   /* a Loop body's carried value, in */
#define ACTX_PART_OUT "v_out" /* a Loop body's carried value out; an If branch's output */

typedef enum actx_act_kind {
  ACTX_ACT_QUICK_GELU, /* x·Sigmoid(1.702·x): a subgraph ORT fuses into QuickGelu */
  ACTX_ACT_QUICK_GELU_OTHER_ALPHA, /* the same with α -0.625 */
  ACTX_ACT_SILU,                   /* x·Sigmoid(x): QuickGelu with α 1 */
  ACTX_ACT_ERF_GELU,               /* (x·(1 + erf(x/√2)))·0.5: ms.Gelu */
  ACTX_ACT_BIAS_ERF_GELU,          /* the same after Add(x, b): one BiasGelu */
  ACTX_ACT_TANH,                   /* single nodes from here on, up to ACTX_ACT_MS_BIAS_GELU */
  ACTX_ACT_SIGMOID,
  ACTX_ACT_MS_GELU,
  ACTX_ACT_MS_FAST_GELU,
  ACTX_ACT_MS_QUICK_GELU, /* alpha 1.702 */
  ACTX_ACT_MS_QUICK_GELU_OTHER_ALPHA, /* alpha -0.625 */
  ACTX_ACT_MS_BIAS_GELU,              /* bias b */
  ACTX_ACT_TANH_GELU,     /* (0.5·x)·(1 + tanh(√(2/π)·(x + 0.044715·Pow(x, 3)))), GPT-2's:
                             FastGelu, except where its result is a graph's output */
  ACTX_ACT_BIAS_MS_GELU,  /* Add(x, b) -> ms.Gelu: what BiasGeluFusion rewrites */
  ACTX_ACT_MS_FAST_GELU_BIAS, /* ms.FastGelu(x, b) */
  ACTX_ACT_ERF,               /* single nodes again */
  ACTX_ACT_GELU,              /* ai.onnx Gelu: opset 20 */
  ACTX_ACT_GELU_TANH,         /* ai.onnx Gelu, approximate "tanh": opset 20 */
  ACTX_ACT_RELU,              /* no activation of actx's: ORT's node between actx's */
  ACTX_ACT_COUNT
} actx_act_kind;

/* "SiLU subgraph", "ms.Gelu", ..., for messages. */
const char *actx_act_name(actx_act_kind kind);
/* Whether the kind is several nodes that ORT's level-2 optimisations fuse into one. */
bool actx_act_is_subgraph(actx_act_kind kind);
/* Whether it reads a bias (an initializer `prefix`b of bias_len elements). */
bool actx_act_has_bias(actx_act_kind kind);
/* The lowest default-domain opset that has all its ops. */
int64_t actx_act_min_opset(actx_act_kind kind);

/* Adds the kind's nodes to g, reading `in` and writing `out`; every other name it adds is prefix
 * + "t", "s", "alpha", "b", ... (the same in every graph). Its initializers are of elem_type
 * (float, float16, bfloat16 or double; float for any other, which makes a model ORT refuses).
 * alpha is QuickGelu's, 0 for the kind's own; bias holds bias_len values for the kinds that take
 * one. Errors are the model's (see actx_model_error). */
void actx_part_add_activation(actx_model *g, actx_act_kind kind, int32_t elem_type,
                              const char *in, const char *out, const char *prefix, float alpha,
                              const float *bias, size_t bias_len);

/* A Loop body without the nodes that compute v_out: inputs i (int64), c_in (bool) and v_in,
 * outputs cond_out (= Identity(c_in); NULL: "c_out", as exporters name it) and v_out, v_in /
 * v_out of elem_type and the shape given (as actx_model_add_input takes it). Add the nodes, then
 * hand it to actx_model_node_attr_graph. */
actx_model *actx_part_loop_body(const char *cond_out, int32_t elem_type, size_t rank,
                                const int64_t *dims, const char *const *dim_params);
/* An If branch without its nodes: output v_out of elem_type and the shape given. */
actx_model *actx_part_if_branch(int32_t elem_type, size_t rank, const int64_t *dims,
                                const char *const *dim_params);

#ifdef __cplusplus
}
#endif

#endif /* ACTX_TOOLS_ORT_MODEL_PARTS_H */
