/* half.c — float16 / bfloat16 conversions (see half.h). */
#include "half.h"

#include <math.h>
#include <string.h>

/* Format parameters: explicit mantissa bits, smallest normal exponent, largest finite value. */
#define F16_MANTISSA_BITS 10
#define F16_MIN_NORMAL_EXP (-14)
#define F16_MAX 65504.0
#define BF16_MANTISSA_BITS 7
#define BF16_MIN_NORMAL_EXP (-126)
#define BF16_MAX 3.3895313892515355e38

uint32_t actx_f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

float actx_f32_from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

float actx_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f)
    return actx_f32_from_bits(sign | 0x7f800000u | mantissa << 13);
  if (exponent == 0) {
    float magnitude = ldexpf((float)mantissa, -24); /* subnormal or zero: exact */
    return sign ? -magnitude : magnitude;
  }
  return actx_f32_from_bits(sign | (exponent + 112) << 23 | mantissa << 13);
}

float actx_bf16_to_f32(uint16_t b) { return actx_f32_from_bits((uint32_t)b << 16); }

uint16_t actx_f32_to_bf16(float f) {
  uint32_t u = actx_f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t)((u >> 16) | 0x40u); /* NaN: keep the top payload, make it quiet */
  u += 0x7fffu + ((u >> 16) & 1u);         /* round to nearest, ties to even */
  return (uint16_t)(u >> 16);
}

uint16_t actx_f32_to_f16(float f) {
  uint32_t u = actx_f32_bits(f);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u)
    return (uint16_t)(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));
  return actx_f64_to_f16((double)f); /* float32 -> double is exact: one rounding */
}

/* Rounds d once to a binary format with mant_bits explicit mantissa bits and normal exponents
 * from min_exp; returns the rounded value as a double (exact), ±inf past max_finite. */
static double round_to_format(double d, int mant_bits, int min_exp, double max_finite) {
  if (d == 0 || isnan(d) || isinf(d))
    return d;
  int e;
  frexp(d, &e); /* d = m * 2^e, 0.5 <= |m| < 1: the leading bit is 2^(e-1) */
  int exp = e - 1;
  if (exp < min_exp)
    exp = min_exp; /* subnormal: fixed spacing */
  double quantum = ldexp(1.0, exp - mant_bits);
  double r = nearbyint(d / quantum) * quantum; /* default rounding mode: ties to even */
  if (fabs(r) > max_finite)
    return copysign(INFINITY, d);
  return r;
}

uint16_t actx_f64_to_f16(double d) {
  if (isnan(d))
    return signbit(d) ? 0xfe00u : 0x7e00u;
  double r = round_to_format(d, F16_MANTISSA_BITS, F16_MIN_NORMAL_EXP, F16_MAX);
  uint16_t sign = signbit(r) ? 0x8000u : 0;
  double a = fabs(r);
  if (isinf(a))
    return sign | 0x7c00u;
  if (a == 0)
    return sign;
  int e;
  frexp(a, &e);
  int exp = e - 1;
  if (exp < F16_MIN_NORMAL_EXP) /* subnormal: a = m * 2^-24 */
    return sign | (uint16_t)ldexp(a, 24);
  uint16_t mantissa = (uint16_t)(ldexp(a, F16_MANTISSA_BITS - exp) - 1024.0);
  return sign | (uint16_t)((exp + 15) << 10) | mantissa;
}

uint16_t actx_f64_to_bf16(double d) {
  if (isnan(d))
    return signbit(d) ? 0xffc0u : 0x7fc0u;
  double r = round_to_format(d, BF16_MANTISSA_BITS, BF16_MIN_NORMAL_EXP, BF16_MAX);
  /* r has at most 8 significant bits and a float32 exponent: exact in float32 */
  return (uint16_t)(actx_f32_bits((float)r) >> 16);
}

float actx_f64_to_f32(double d) { return (float)d; }
