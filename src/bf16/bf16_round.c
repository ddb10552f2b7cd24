/* bf16_round.c — the rounding of float32 results to bfloat16 (bf16_round.h), in two forms with
 * the same bits, chosen once per process:
 *
 * - integer arithmetic (u + 0x7FFF + lsb) >> 16, NaNs made quiet, in a loop the compiler
 *   vectorises (ACTX_BF16_VECTORISED: the same bits in every clone);
 * - on a CPU with AVX512_BF16, vcvtne2ps2bf16, 32 results an instruction: Intel defines it as
 *   that same integer rounding for normal numbers, infinities and zeros, and as the input's top
 *   half with the quiet bit set for a NaN (our NaN rule), but it flushes subnormal inputs to
 *   zero. So 32 results holding a subnormal take the integer form, found by vfpclassps (as are
 *   the NaNs and infinities the caller asks about). On a Xeon with AMX (2 cores, KVM): 0.18 ns
 *   a result for the integer loop, about a third of that for this one. */
#include "bf16_round.h"

#include <string.h>

#include "bf16_family.h"
#include "cpu.h"

/* actx_f32_to_bf16 (src/half.h) without its branch. */
static inline uint16_t round_one(const float *f) {
  uint32_t u;
  memcpy(&u, f, sizeof u);
  const uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
  const uint32_t quiet = (u | 0x00400000u) >> 16;
  const uint32_t nan = 0u - (uint32_t)((u & 0x7FFFFFFFu) > 0x7F800000u); /* all ones: NaN */
  return (uint16_t)((rounded & ~nan) | (quiet & nan));
}

/* A form: y = round(acc) over n, returning the NaN / infinity flag. */
typedef uint32_t (*round_fn)(const float *, uint16_t *, size_t);

/* Integer arithmetic only: every clone gives the same bits. A NaN or an infinity (an all-ones
 * exponent) carries into bit 31 of the returned flag. */
ACTX_BF16_VECTORISED static uint32_t round_span_integer(const float *restrict acc,
                                                        uint16_t *restrict y, size_t n) {
  uint32_t nonfinite = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t u;
    memcpy(&u, &acc[i], sizeof u);
    nonfinite |= ((u & 0x7F800000u) + 0x00800000u) & 0x80000000u;
    y[i] = round_one(&acc[i]);
  }
  return nonfinite;
}

#if defined(__x86_64__) && !defined(ACTX_BF16_NO_MULTIVERSION)
#include <immintrin.h>

#define ROUND_TARGET __attribute__((target("avx512f,avx512bw,avx512dq,avx512bf16")))
/* vfpclassps categories: subnormal; and QNaN, SNaN, +inf, -inf */
#define CLASS_SUBNORMAL 0x20
#define CLASS_NONFINITE 0x99

ROUND_TARGET static uint32_t round_span_avx512bf16(const float *acc, uint16_t *y, size_t n) {
  __mmask16 nonfinite = 0;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 lo = _mm512_loadu_ps(acc + i), hi = _mm512_loadu_ps(acc + i + 16);
    if (_mm512_fpclass_ps_mask(lo, CLASS_SUBNORMAL) | _mm512_fpclass_ps_mask(hi, CLASS_SUBNORMAL)) {
      nonfinite |= (__mmask16)(round_span_integer(acc + i, y + i, 32) != 0);
      continue;
    }
    nonfinite |= _mm512_fpclass_ps_mask(lo, CLASS_NONFINITE) |
                 _mm512_fpclass_ps_mask(hi, CLASS_NONFINITE);
    /* the second operand fills the low half */
    _mm512_storeu_si512((void *)(y + i), (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
  }
  const uint32_t tail = i < n ? round_span_integer(acc + i, y + i, n - i) : 0;
  return (nonfinite != 0 ? 0x80000000u : 0u) | tail;
}

static round_fn resolve_round_span(void) {
  return actx_cpu_has_avx512_bf16() ? round_span_avx512bf16 : round_span_integer;
}
#else
static round_fn resolve_round_span(void) {
  return round_span_integer;
}
#endif

static round_fn chosen_form(void) {
  /* chosen on first use; racing threads store the same pointer */
  static _Atomic(round_fn) chosen;
  round_fn f = chosen;
  if (f == NULL) chosen = f = resolve_round_span();
  return f;
}

uint32_t actx_bf16_round_span(const float *acc, uint16_t *y, size_t n) {
  return chosen_form()(acc, y, n);
}

const char *actx_bf16_round_form(void) {
  return chosen_form() == round_span_integer ? "integer" : "vcvtne2ps2bf16";
}
