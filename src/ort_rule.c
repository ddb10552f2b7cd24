/* The ORT rule: which bits "what ORT computes" means on this host.
 *
 * ORT 1.30's MLAS switches three routines to AVX-512F kernels when the CPU has AVX512F and the
 * OS saves opmask and ZMM state (mlas/lib/platform.cpp): Erf (the same bits as FMA3), exact
 * Gelu and SiLU (QuickGelu at alpha 1). Those two copy every NaN input to the output unchanged
 * (FMA3: the first multiply makes a signalling NaN quiet), and the SiLU's logistic also clamps
 * its result to at most 1 (FMA3 clamps only at 0), which changes 20 float32 results. BiasGelu
 * adds its bias first, which already makes a NaN quiet, so it has nothing to copy; every other
 * op keeps its FMA3 kernel.
 *
 * ORT's arm64 library runs MLAS's generic MLAS_FLOAT32X4 kernels, whose multiply-adds are
 * vfmaq_f32: the FMA3 bits (a NaN made quiet) but for two things, found against ORT arm64
 * under qemu (tests/emu): its logistic clamps to at most 1, as the AVX-512F SiLU does, for
 * Sigmoid and every QuickGelu (20 float32 inputs); and tanh GELU's C++ pre-pass
 * v * (C * v * v + B) is compiled with fp-contract on there, so C * v * v + B is one fmla
 * (fma(C * v, v, B)), where x86's build keeps the multiply and the add apart.
 *
 * The rule follows what ORT does on this host, not which actx ISA runs: every actx path
 * computes either rule, so a host without AVX-512 tests both (ACTX_ORT_RULE or
 * actx_set_ort_rule()). */
#include "ort_rule.h"

#include <pthread.h>

#include "cpu.h"
#include "env.h"

static const char *const rule_names[ACTX_ORT_RULE_COUNT] = {[ACTX_ORT_RULE_AVX2] = "avx2",
                                                            [ACTX_ORT_RULE_AVX512] = "avx512",
                                                            [ACTX_ORT_RULE_ARM64] = "arm64"};

static pthread_once_t rule_once = PTHREAD_ONCE_INIT;
static actx_ort_rule active_rule = ACTX_ORT_RULE_AVX2;

static void choose_rule(void) {
#if defined(__aarch64__)
  const int host = ACTX_ORT_RULE_ARM64;
#else
  const int host = actx_isa_supported(ACTX_ISA_AVX2) && actx_cpu_has_avx512f()
                       ? ACTX_ORT_RULE_AVX512
                       : ACTX_ORT_RULE_AVX2;
#endif
  active_rule =
      (actx_ort_rule)actx_env_choice("ACTX_ORT_RULE", rule_names, ACTX_ORT_RULE_COUNT, host);
}

actx_ort_rule actx_get_ort_rule(void) {
  pthread_once(&rule_once, choose_rule);
  return active_rule;
}

const char *actx_ort_rule_name(actx_ort_rule rule) {
  return (unsigned)rule < ACTX_ORT_RULE_COUNT ? rule_names[rule] : "unknown";
}

actx_status actx_set_ort_rule(actx_ort_rule rule) {
  if ((unsigned)rule >= ACTX_ORT_RULE_COUNT) return ACTX_ERROR_INVALID_ARGUMENT;
  pthread_once(&rule_once, choose_rule);
  active_rule = rule;
  return ACTX_OK;
}

int actx_ort_has_fp16_kernels(void) { return actx_cpu_has_fp16_arith(); }

actx_kernel_params actx_ort_rule_params(actx_op op, float alpha, int has_bias) {
  actx_kernel_params p = {.bias = NULL, .alpha = alpha};
  const actx_ort_rule rule = actx_get_ort_rule();
  if (rule == ACTX_ORT_RULE_ARM64) {
    p.fused_tanh_prepass = op == ACTX_OP_GELU_TANH;
    p.clamp_one = op == ACTX_OP_SIGMOID || op == ACTX_OP_QUICK_GELU;
    return p;
  }
  if (rule != ACTX_ORT_RULE_AVX512) return p;
  const int silu = op == ACTX_OP_QUICK_GELU && alpha == 1.0f;
  const int gelu = op == ACTX_OP_GELU && !has_bias;
  p.keep_nan = silu || gelu;
  p.clamp_one = silu;
  return p;
}
