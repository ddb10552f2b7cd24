/* Every numeric constant of actx's arithmetic, defined once.
 *
 * The polynomial and range constants are MLAS's (ONNX Runtime's CPU math library), transcribed
 * digit for digit from its constant tables (erf.cpp: MlasErfConstants, tanh.cpp:
 * MlasTanhConstants, logistic.cpp: MlasLogisticConstants), so that the compiler rounds each
 * decimal to the same float MLAS gets. The GELU constants are those of ORT's op code
 * (core/providers/cpu/tensor/gelu.cc, contrib_ops/cpu/bert/bias_gelu.cc, fast_gelu.cc). */
#ifndef ACTX_CONSTS_H
#define ACTX_CONSTS_H

#include <stdint.h>

/* float32's exponent bias: 2^r has the exponent field r + 127 */
#define ACTX_F32_EXPONENT_BIAS 127

/* ---- erf: two branches split at |x| = 0.921875 (MlasErfConstants) ---- */
#define ACTX_ERF_UPPER_ABS_RANGE 3.925f /* |x| is clamped here: erf is exactly 1 past it */
#define ACTX_ERF_SPLIT_BOUNDARY 0.921875f
/* small branch: x + x * P(x^2) */
#define ACTX_ERF_SMALL_P0 (-5.99104969e-4f)
#define ACTX_ERF_SMALL_P1 4.99339588e-3f
#define ACTX_ERF_SMALL_P2 (-2.67667342e-2f)
#define ACTX_ERF_SMALL_P3 1.12818025e-1f
#define ACTX_ERF_SMALL_P4 (-3.76124859e-1f)
#define ACTX_ERF_SMALL_P5_MINUS_ONE 1.28379151e-1f
/* big branch: 1 - exp(-(|x| + |x| * Q(|x|))) */
#define ACTX_ERF_BIG_P0 1.72948930e-5f
#define ACTX_ERF_BIG_P1 (-3.83208680e-4f)
#define ACTX_ERF_BIG_P2 3.88393435e-3f
#define ACTX_ERF_BIG_P3 (-2.42545605e-2f)
#define ACTX_ERF_BIG_P4 1.06777847e-1f
#define ACTX_ERF_BIG_P5 6.34846687e-1f
#define ACTX_ERF_BIG_P6_MINUS_ONE 1.28717512e-1f
#define ACTX_ERF_ONE 1.0f
/* the big branch's own exp (MlasErfConstants' Exp_* members, not MlasExpConstants) */
#define ACTX_ERF_EXP_LOWER_RANGE (-88.3762626647949f)
#define ACTX_ERF_EXP_LOG2_RECIPROCAL 1.44269504088896341f
#define ACTX_ERF_EXP_LOG2_HI (-6.93145752e-1f)
#define ACTX_ERF_EXP_LOG2_LO (-1.42860677e-6f)
#define ACTX_ERF_EXP_P0 1.38319808e-3f
#define ACTX_ERF_EXP_P1 8.37550033e-3f
#define ACTX_ERF_EXP_P2 4.16689515e-2f
#define ACTX_ERF_EXP_P3 1.66664466e-1f
#define ACTX_ERF_EXP_P4 4.99999851e-1f
#define ACTX_ERF_EXP_P5 1.00000000e+0f
#define ACTX_ERF_EXP_P6 1.00000000e+0f
#define ACTX_ERF_EXP_C 1.25829120e+7f /* 1.5 * 2^23: adding it rounds to an integer */

/* ---- tanh: odd rational p(x)/q(x) on x clamped to [-9, 9] (MlasTanhConstants) ---- */
#define ACTX_TANH_LOWER_RANGE (-9.0f)
#define ACTX_TANH_UPPER_RANGE 9.0f
#define ACTX_TANH_ALPHA_13 (-2.76076847742355e-16f)
#define ACTX_TANH_ALPHA_11 2.00018790482477e-13f
#define ACTX_TANH_ALPHA_9 (-8.60467152213735e-11f)
#define ACTX_TANH_ALPHA_7 5.12229709037114e-08f
#define ACTX_TANH_ALPHA_5 1.48572235717979e-05f
#define ACTX_TANH_ALPHA_3 6.37261928875436e-04f
#define ACTX_TANH_ALPHA_1 4.89352455891786e-03f
#define ACTX_TANH_BETA_6 1.19825839466702e-06f
#define ACTX_TANH_BETA_4 1.18534705686654e-04f
#define ACTX_TANH_BETA_2 2.26843463243900e-03f
#define ACTX_TANH_BETA_0 4.89352518554385e-03f

/* ---- logistic: 0.5 + p(x)/q(x) on x clamped to [-18, 18] (MlasLogisticConstants) ---- */
#define ACTX_LOGISTIC_LOWER_RANGE (-18.0f)
#define ACTX_LOGISTIC_UPPER_RANGE 18.0f
#define ACTX_LOGISTIC_ALPHA_9 4.37031012579801e-11f
#define ACTX_LOGISTIC_ALPHA_7 1.15627324459942e-07f
#define ACTX_LOGISTIC_ALPHA_5 6.08574864600143e-05f
#define ACTX_LOGISTIC_ALPHA_3 8.51377133304701e-03f
#define ACTX_LOGISTIC_ALPHA_1 2.48287947061529e-01f
#define ACTX_LOGISTIC_BETA_10 6.10247389755681e-13f
#define ACTX_LOGISTIC_BETA_8 5.76102136993427e-09f
#define ACTX_LOGISTIC_BETA_6 6.29106785017040e-06f
#define ACTX_LOGISTIC_BETA_4 1.70198817374094e-03f
#define ACTX_LOGISTIC_BETA_2 1.16817656904453e-01f
#define ACTX_LOGISTIC_BETA_0 9.93151921023180e-01f
#define ACTX_LOGISTIC_ONE_HALF 0.5f
#define ACTX_LOGISTIC_ONE 1.0f /* the AVX-512F SiLU's upper clamp */

/* ---- GELU, as ORT's op code computes it ---- */
/* exact: y = (0.5 * v) * (erf(v * 1/sqrt(2)) + 1); MLAS's kInvSqrt2, equal in float to
 * BiasGelu's 1 / sqrt2_v<float> (tests/kernels check that). */
#define ACTX_GELU_INV_SQRT2 0.70710678118654752440f
#define ACTX_GELU_HALF 0.5f
#define ACTX_GELU_ONE 1.0f
/* tanh form: y = (0.5 * v) * (tanh(v * ((C * v) * v + B)) + 1), FastGelu's B and C */
#define ACTX_GELU_TANH_B 0.7978845608028654f   /* sqrt(2 / pi) */
#define ACTX_GELU_TANH_C 0.035677408136300125f /* 0.044715 * sqrt(2 / pi) */

#endif /* ACTX_CONSTS_H */
