/* bf16_transpose.h — 2-D transposes of 16- and 32-bit elements: the layout changes between the
 * caller's channels-first tensors and the channels-last ones oneDNN's convolutions compute on
 * (bf16_dnnl.c), in place of oneDNN's own reorders, which move 0.27 ns an element on an AVX-512
 * host where these take a fraction of that (docs/architecture.md). Exact: bits are moved, never
 * converted. Internal to src/bf16/. */
#ifndef ACTX_BF16_TRANSPOSE_H
#define ACTX_BF16_TRANSPOSE_H

#include <stddef.h>
#include <stdint.h>

/* dst[j * dst_stride + i] = src[i * src_stride + j] for i < rows, j < cols (strides in elements,
 * src_stride >= cols, dst_stride >= rows); src and dst do not overlap. Any alignment. */
void actx_transpose16(const uint16_t *src, size_t rows, size_t cols, size_t src_stride,
                      uint16_t *dst, size_t dst_stride);
void actx_transpose32(const uint32_t *src, size_t rows, size_t cols, size_t src_stride,
                      uint32_t *dst, size_t dst_stride);

#endif /* ACTX_BF16_TRANSPOSE_H */
