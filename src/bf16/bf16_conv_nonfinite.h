/* bf16_conv_nonfinite.h — ONNX's Conv where X holds a NaN or an infinity.
 *
 * oneDNN's convolution kernels compute taps that lie outside an output's window: the channel
 * and width tails their register and tile blocks round up to, with zero weights, reading the
 * neighbouring inputs. Exact for finite inputs (x · 0 = 0); but a NaN or an infinity there
 * makes NaN of outputs whose windows do not hold it. Measured with oneDNN 3.2 (random shapes,
 * two specials in X): jit:avx512_core_amx, jit_bf16 (AVX512_BF16 and AVX-512), brgconv and
 * brgconv_1x1 with groups of one or a few channels; not in its float32 kernels, nor in its
 * native bfloat16 matmuls (its emulated ones on AVX-512 without AVX512_BF16 did: bf16_dnnl.c
 * computes in float32 there).
 *
 * So a run whose results hold a NaN or an infinity (its rounding pass says so) and whose X holds
 * one runs again (bf16_conv.c) on a copy of X with those values as +0, which gives
 * every output whose window holds none its value, then recomputes the others itself: NaN
 * (quiet) where the window holds a NaN, else the float32 sum of the window's products and the
 * bias, rounded once. An output's window is the taps of its group's channels that fall inside
 * the image (padding is not data); in a transposed convolution, the input positions that reach
 * it. */
#ifndef ACTX_BF16_CONV_NONFINITE_H
#define ACTX_BF16_CONV_NONFINITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bf16_dnnl.h"

/* Whether x[0 .. n) holds a NaN or an infinity (a bfloat16 of all-ones exponent). */
bool actx_conv_has_nonfinite(const uint16_t *x, size_t n);

/* x with its NaNs and infinities as +0 (malloc'ed, n elements; NULL when out of memory). */
uint16_t *actx_conv_finite_copy(const uint16_t *x, size_t n);

/* Recomputes the outputs of y (dense [N, M, out...], bfloat16) whose windows in x (dense
 * [N, C, in...], bfloat16, the original) hold a NaN or an infinity, as above: w dense
 * [M, C / group, kernel...] in float32 (a transposed convolution's too), bias [M] or NULL.
 * Returns false when out of memory. */
bool actx_conv_repair(const actx_dnnl_conv_shape *cs, const uint16_t *x, const float *w,
                      const float *bias, uint16_t *y);

#endif /* ACTX_BF16_CONV_NONFINITE_H */
