/* The bfloat16 service's op list: every ONNX operator it runs on bfloat16 tensors, in
 * actx_bf16_op order. The enum (bf16.h), the op facts (bf16_ops.c), the family dispatch, the EP's
 * claim and kernel registry (ep/bf16_*.c) and the tests' op loops are all generated from it.
 *
 * X(name, ENUM, domain, family, min_in, max_in, min_out, max_out, since...)
 *   name    the ONNX operator type
 *   domain  "" (ai.onnx) or "com.microsoft"
 *   family  the file that computes it: bf16_<family>.c (actx_bf16_family_<family>)
 *   since   the since-versions whose schema allows tensor(bfloat16) (onnx.defs), at most 4;
 *           a model of an older opset cannot hold a bfloat16 node of that op at all
 *
 * Erf, Tanh, Sigmoid, ai.onnx Gelu and the com.microsoft GELUs are not here: the exact
 * activation service (src/ops.h) already runs them in bfloat16 as round(ORT's float32 op). */
#ifndef ACTX_BF16_OPS_H
#define ACTX_BF16_OPS_H

#define ACTX_BF16_OPS(X)                                                           \
  /* unary: a 65,536-entry table of round(f32 op(x)) built with the kernel */     \
  X(Relu, RELU, "", unary, 1, 1, 1, 1, 13, 14)                                     \
  X(LeakyRelu, LEAKY_RELU, "", unary, 1, 1, 1, 1, 16)                              \
  X(HardSigmoid, HARD_SIGMOID, "", unary, 1, 1, 1, 1, 22)                          \
  X(HardSwish, HARD_SWISH, "", unary, 1, 1, 1, 1, 22)                              \
  X(Sqrt, SQRT, "", unary, 1, 1, 1, 1, 13)                                         \
  X(Reciprocal, RECIPROCAL, "", unary, 1, 1, 1, 1, 13)                             \
  X(Neg, NEG, "", unary, 1, 1, 1, 1, 13)                                           \
  X(Abs, ABS, "", unary, 1, 1, 1, 1, 13)                                           \
  X(Exp, EXP, "", unary, 1, 1, 1, 1, 13)                                           \
  X(Log, LOG, "", unary, 1, 1, 1, 1, 13)                                           \
  X(Floor, FLOOR, "", unary, 1, 1, 1, 1, 13)                                       \
  X(Ceil, CEIL, "", unary, 1, 1, 1, 1, 13)                                         \
  X(Clip, CLIP, "", unary, 1, 3, 1, 1, 13)                                         \
  X(Elu, ELU, "", unary, 1, 1, 1, 1, 22)                                           \
  X(ThresholdedRelu, THRESHOLDED_RELU, "", unary, 1, 1, 1, 1, 22)                  \
  X(Softplus, SOFTPLUS, "", unary, 1, 1, 1, 1, 22)                                 \
  X(Softsign, SOFTSIGN, "", unary, 1, 1, 1, 1, 22)                                 \
  X(Round, ROUND, "", unary, 1, 1, 1, 1, 22)                                       \
  X(Sin, SIN, "", unary, 1, 1, 1, 1, 22)                                           \
  X(Cos, COS, "", unary, 1, 1, 1, 1, 22)                                           \
  X(Tan, TAN, "", unary, 1, 1, 1, 1, 22)                                           \
  X(Atan, ATAN, "", unary, 1, 1, 1, 1, 22)                                         \
  /* binary with numpy broadcasting (Max / Min: 1 to 8 inputs) */                  \
  X(Add, ADD, "", binary, 2, 2, 1, 1, 13, 14)                                      \
  X(Sub, SUB, "", binary, 2, 2, 1, 1, 13, 14)                                      \
  X(Mul, MUL, "", binary, 2, 2, 1, 1, 13, 14)                                      \
  X(Div, DIV, "", binary, 2, 2, 1, 1, 13, 14)                                      \
  X(Pow, POW, "", binary, 2, 2, 1, 1, 13, 15)                                      \
  X(Max, MAX, "", binary, 1, 8, 1, 1, 13)                                          \
  X(Min, MIN, "", binary, 1, 8, 1, 1, 13)                                          \
  X(PRelu, PRELU, "", binary, 2, 2, 1, 1, 16)                                      \
  /* comparisons (bool out) and Where */                                           \
  X(Equal, EQUAL, "", compare, 2, 2, 1, 1, 13, 19)                                 \
  X(Less, LESS, "", compare, 2, 2, 1, 1, 13)                                       \
  X(Greater, GREATER, "", compare, 2, 2, 1, 1, 13)                                 \
  X(LessOrEqual, LESS_OR_EQUAL, "", compare, 2, 2, 1, 1, 16)                       \
  X(GreaterOrEqual, GREATER_OR_EQUAL, "", compare, 2, 2, 1, 1, 16)                 \
  X(Where, WHERE, "", compare, 3, 3, 1, 1, 16)                                     \
  /* reductions */                                                                 \
  X(ReduceMean, REDUCE_MEAN, "", reduce, 1, 2, 1, 1, 13, 18)                       \
  X(ReduceSum, REDUCE_SUM, "", reduce, 1, 2, 1, 1, 13)                             \
  X(ReduceMax, REDUCE_MAX, "", reduce, 1, 2, 1, 1, 13, 18, 20)                     \
  X(ReduceMin, REDUCE_MIN, "", reduce, 1, 2, 1, 1, 13, 18, 20)                     \
  X(Softmax, SOFTMAX, "", softmax, 1, 1, 1, 1, 13)                                 \
  X(LogSoftmax, LOG_SOFTMAX, "", softmax, 1, 1, 1, 1, 13)                          \
  /* normalisations */                                                             \
  X(LayerNormalization, LAYER_NORM, "", norm, 2, 3, 1, 3, 17)                      \
  X(SimplifiedLayerNormalization, SIMPLIFIED_LAYER_NORM, "", norm, 2, 2, 1, 2, 1)  \
  X(SkipLayerNormalization, SKIP_LAYER_NORM, "com.microsoft", norm, 3, 5, 1, 4, 1) \
  X(SkipSimplifiedLayerNormalization, SKIP_SIMPLIFIED_LAYER_NORM, "com.microsoft", \
    norm, 3, 4, 1, 4, 1)                                                           \
  X(BatchNormalization, BATCH_NORM, "", batch_norm, 5, 5, 1, 1, 14, 15)            \
  X(InstanceNormalization, INSTANCE_NORM, "", norm, 3, 3, 1, 1, 22)                \
  /* oneDNN (bf16_dnnl.h) */                                                       \
  X(MatMul, MATMUL, "", matmul, 2, 2, 1, 1, 13)                                    \
  X(Gemm, GEMM, "", matmul, 2, 3, 1, 1, 13)                                        \
  X(Conv, CONV, "", conv, 2, 3, 1, 1, 22)                                          \
  X(ConvTranspose, CONV_TRANSPOSE, "", conv, 2, 3, 1, 1, 22)                       \
  /* pooling */                                                                    \
  X(MaxPool, MAX_POOL, "", pool, 1, 1, 1, 2, 22)                                   \
  X(AveragePool, AVERAGE_POOL, "", pool, 1, 1, 1, 1, 22)                           \
  X(GlobalAveragePool, GLOBAL_AVERAGE_POOL, "", pool, 1, 1, 1, 1, 22)              \
  X(GlobalMaxPool, GLOBAL_MAX_POOL, "", pool, 1, 1, 1, 1, 22)                      \
  /* data movement that ORT's CPU EP has no bfloat16 kernel for */                 \
  X(Expand, EXPAND, "", layout, 2, 2, 1, 1, 13)                                    \
  X(Tile, TILE, "", layout, 2, 2, 1, 1, 13)                                        \
  X(Pad, PAD, "", layout, 1, 4, 1, 1, 13, 18, 19, 21)                              \
  X(Resize, RESIZE, "", resize, 1, 4, 1, 1, 13, 18, 19)                            \
  /* float32 -> bfloat16, which ORT runs too (an element at a time): ORT's bits */  \
  X(Cast, CAST, "", cast, 1, 1, 1, 1, 13, 19, 21, 23)

/* The families, one file each: bf16_<family>.c defines actx_bf16_family_<family>. */
#define ACTX_BF16_FAMILIES(F) \
  F(unary) F(binary) F(compare) F(reduce) F(softmax) F(norm) F(batch_norm) F(matmul) F(conv) \
  F(pool) F(layout) F(resize) F(cast)

#endif /* ACTX_BF16_OPS_H */
