/* Scalar float16 / bfloat16 <-> float32 conversions with exactly the bits of the AVX2 path
 * (F16C vcvtph2ps / vcvtps2ph with round-to-nearest-even; bfloat16 by shifts with
 * round-to-nearest-even). NaNs: widening quiets a signalling NaN and keeps the payload;
 * narrowing keeps the sign and the top payload bits and sets the quiet bit, as F16C does. */
#ifndef ACTX_HALF_H
#define ACTX_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t actx_f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static inline float actx_f32_from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static inline float actx_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t mant = h & 0x3FFu;
  if (exp == 0x1F) /* Inf, or NaN made quiet */
    return actx_f32_from_bits(sign | 0x7F800000u | (mant << 13) | (mant ? 0x00400000u : 0));
  if (exp == 0) {
    if (mant == 0) return actx_f32_from_bits(sign);
    /* subnormal: mant * 2^-24, exact in float32 */
    float f = (float)mant * 0x1p-24f;
    return actx_f32_from_bits(sign | actx_f32_bits(f));
  }
  return actx_f32_from_bits(sign | ((exp + 112u) << 23) | (mant << 13));
}

static inline uint16_t actx_f32_to_f16(float f) {
  uint32_t u = actx_f32_bits(f);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  uint32_t abs = u & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) /* NaN: quiet, top payload bits */
    return (uint16_t)(sign | 0x7E00u | ((abs >> 13) & 0x3FFu));
  if (abs >= 0x477FF000u) /* rounds to >= 65520: Inf */
    return (uint16_t)(sign | 0x7C00u);
  if (abs < 0x38800000u) { /* below the smallest normal half (2^-14): subnormal or zero */
    /* abs * 2^24 rounded to nearest-even integer is the subnormal mantissa; the float32
     * addition of 0.5 * 2^... is avoided: do it in integers. */
    uint32_t exp = abs >> 23;
    if (exp < 102) return sign; /* < 2^-25: rounds to 0 (2^-25 itself ties to even 0) */
    uint32_t mant = (abs & 0x7FFFFFu) | 0x800000u;
    uint32_t shift = 126u - exp; /* value = mant * 2^(exp-150); half units 2^-24 */
    uint32_t q = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u))) q++;
    return (uint16_t)(sign | q);
  }
  /* normal: rebias the exponent, round the mantissa to 10 bits, nearest-even */
  uint32_t r = abs - 0x38000000u; /* exponent 127 -> 15 */
  r = r + 0x0FFFu + ((r >> 13) & 1u);
  return (uint16_t)(sign | (r >> 13));
}

static inline float actx_bf16_to_f32(uint16_t h) { return actx_f32_from_bits((uint32_t)h << 16); }

static inline uint16_t actx_f32_to_bf16(float f) {
  uint32_t u = actx_f32_bits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((u | 0x00400000u) >> 16);
  return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

#endif /* ACTX_HALF_H */
