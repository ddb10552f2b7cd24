/* Special values, on every ISA under both ORT rules: erf saturates to exactly +-1 past its clamp and is exactly
 * odd; +-0 keep their sign; NaN stays NaN (ORT 1.30 returns NaN for erf, not 1); +-Inf give
 * MLAS's limits (GELU(-Inf) is NaN in ORT: -Inf * (erf + 1) = -Inf * 0). Also pins the GELU
 * constants to ORT's spellings of them. */
#include "../../src/consts.h"
#include "test_util.h"

static float run1(actx_op op, float x, float alpha) {
  const actx_op_desc d = {.op = op, .dtype = ACTX_F32, .alpha = alpha};
  float y = 0;
  EXPECT(actx_compute(&d, &x, &y, 1, NULL) == ACTX_OK, "compute");
  return y;
}

static void check_path(void) {
  char isa[64]; /* what the messages call the path */
  snprintf(isa, sizeof isa, "%s (%s rule)", actx_isa_name(actx_get_isa()),
           actx_ort_rule_name(actx_get_ort_rule()));
  /* erf: exactly +-1 from the clamp on, checked densely just above it and at big values */
  for (float x = 3.925f; x < 4.5f; x = nextafterf(x, INFINITY)) {
    const float y[2] = {run1(ACTX_OP_ERF, x, 0), run1(ACTX_OP_ERF, -x, 0)};
    if (y[0] != 1.0f || y[1] != -1.0f) {
      EXPECT(0, "%s erf(+-%a) = %a, %a; want +-1", isa, x, y[0], y[1]);
      break;
    }
  }
  const float big[] = {10.0f, 1e10f, 3.4028235e38f, INFINITY};
  for (size_t i = 0; i < 4; i++) {
    EXPECT(bits_of(run1(ACTX_OP_ERF, big[i], 0)) == bits_of(1.0f), "%s erf(%a)", isa, big[i]);
    EXPECT(bits_of(run1(ACTX_OP_ERF, -big[i], 0)) == bits_of(-1.0f), "%s erf(-%a)", isa, big[i]);
  }
  /* erf is exactly odd: the sign is or-ed in after the polynomial */
  uint64_t s = 3;
  for (int i = 0; i < 100000; i++) {
    const float x = rng_uniform(&s, 0, 5);
    EXPECT(bits_of(run1(ACTX_OP_ERF, -x, 0)) == (bits_of(run1(ACTX_OP_ERF, x, 0)) ^ 0x80000000u),
           "%s erf not odd at %a", isa, x);
  }
  /* signed zeros */
  const actx_op zero_keepers[] = {ACTX_OP_ERF, ACTX_OP_TANH, ACTX_OP_GELU, ACTX_OP_GELU_TANH};
  for (size_t i = 0; i < 4; i++) {
    EXPECT(bits_of(run1(zero_keepers[i], 0.0f, 0)) == 0x00000000u, "%s %s(+0)", isa,
           actx_op_name(zero_keepers[i]));
    EXPECT(bits_of(run1(zero_keepers[i], -0.0f, 0)) == 0x80000000u, "%s %s(-0)", isa,
           actx_op_name(zero_keepers[i]));
  }
  EXPECT(run1(ACTX_OP_SIGMOID, 0.0f, 0) == 0.5f && run1(ACTX_OP_SIGMOID, -0.0f, 0) == 0.5f,
         "%s sigmoid(+-0)", isa);
  /* NaN in, NaN out, sign and payload kept (made quiet) */
  for (int op = 0; op < ACTX_OP_COUNT; op++) {
    const float alpha = op == ACTX_OP_QUICK_GELU ? 1.702f : 0.0f;
    EXPECT(isnan(run1((actx_op)op, float_of(0x7FC12345u), alpha)), "%s %s(NaN)", isa,
           actx_op_name((actx_op)op));
    EXPECT(isnan(run1((actx_op)op, float_of(0xFF800001u), alpha)), "%s %s(-sNaN)", isa,
           actx_op_name((actx_op)op));
  }
  EXPECT(bits_of(run1(ACTX_OP_ERF, float_of(0xFFC54321u), 0)) == 0xFFC54321u, "%s erf NaN payload", isa);
  EXPECT(bits_of(run1(ACTX_OP_TANH, float_of(0x7FA00001u), 0)) == 0x7FE00001u, "%s tanh sNaN quieted", isa);
  /* infinities: MLAS's clamped limits */
  EXPECT(run1(ACTX_OP_TANH, INFINITY, 0) == run1(ACTX_OP_TANH, 9.0f, 0), "%s tanh(inf)", isa);
  EXPECT(run1(ACTX_OP_TANH, -INFINITY, 0) == run1(ACTX_OP_TANH, -9.0f, 0), "%s tanh(-inf)", isa);
  EXPECT(run1(ACTX_OP_SIGMOID, -INFINITY, 0) == run1(ACTX_OP_SIGMOID, -18.0f, 0), "%s sigmoid(-inf)", isa);
  EXPECT(run1(ACTX_OP_SIGMOID, INFINITY, 0) == run1(ACTX_OP_SIGMOID, 18.0f, 0), "%s sigmoid(inf)", isa);
  EXPECT(run1(ACTX_OP_GELU, INFINITY, 0) == INFINITY, "%s gelu(inf)", isa);
  EXPECT(isnan(run1(ACTX_OP_GELU, -INFINITY, 0)), "%s gelu(-inf) is NaN, as in ORT", isa);
  EXPECT(isnan(run1(ACTX_OP_GELU_TANH, -INFINITY, 0)), "%s gelu_tanh(-inf) is NaN, as in ORT", isa);
  /* subnormals are not flushed */
  EXPECT(run1(ACTX_OP_ERF, float_of(1), 0) != 0.0f, "%s erf(min subnormal) flushed", isa);
  EXPECT(run1(ACTX_OP_TANH, float_of(0x00400000u), 0) != 0.0f, "%s tanh(subnormal) flushed", isa);
}

int main(void) {
  /* the GELU constants equal ORT's spellings: BiasGelu's 1 / sqrt2_v<float>, M_SQRT1_2 */
  const float sqrt2 = 1.41421356237309504880f;
  EXPECT(ACTX_GELU_INV_SQRT2 == 1.0f / sqrt2, "1/sqrt(2) differs from BiasGelu's");
  EXPECT(ACTX_GELU_INV_SQRT2 == (float)0.70710678118654752440, "1/sqrt(2) differs from M_SQRT1_2");
  EXPECT(bits_of(ACTX_ERF_EXP_LOWER_RANGE) == 0xC2B0C0A5u, "erf exp lower range bits");
  test_expect_vector_isa();
  for (size_t i = 0; i < TEST_ISA_COUNT; i++) {
    if (!test_isa_usable(test_isas[i])) continue;
    EXPECT(actx_set_isa(test_isas[i]) == ACTX_OK, "set %s", actx_isa_name(test_isas[i]));
    for (int r = 0; r < ACTX_ORT_RULE_COUNT; r++) {
      actx_set_ort_rule((actx_ort_rule)r);
      check_path();
    }
  }
  return test_finish("test_specials");
}
