/* half.h — float16 and bfloat16 bit patterns to and from float32 and double.
 *
 * Widening is exact. Narrowing rounds once to nearest-even, as ORT's Cast and actx do; NaNs stay
 * NaNs (quiet), overflow goes to infinity. */
#ifndef ACTX_TOOLS_HALF_H
#define ACTX_TOOLS_HALF_H

#include <stdint.h>

float actx_f16_to_f32(uint16_t h);
float actx_bf16_to_f32(uint16_t b);
uint16_t actx_f32_to_f16(float f);
uint16_t actx_f32_to_bf16(float f);
/* Directly from double, with a single rounding (no double rounding through float32). */
uint16_t actx_f64_to_f16(double d);
uint16_t actx_f64_to_bf16(double d);
/* A double rounded once to the nearest float32. */
float actx_f64_to_f32(double d);

uint32_t actx_f32_bits(float f);
float actx_f32_from_bits(uint32_t u);

#endif /* ACTX_TOOLS_HALF_H */
