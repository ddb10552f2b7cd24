/* Dispatch: one table {isa, op, dtype} -> kernel, generated from the op and ISA lists
 * (kernels.h), and the choice of ISA, made once. */
#include "dispatch.h"

#include <pthread.h>
#include <stdio.h>

#include "cpu.h"
#include "env.h"

#define ACTX_ROW_(op, isa) {actx_f32_##op##__##isa, actx_f16_##op##__##isa, actx_bf16_##op##__##isa},
#define ACTX_PORTABLE_ROW_(op, ...) ACTX_ROW_(op, portable)
#define ACTX_AVX2_ROW_(op, ...) ACTX_ROW_(op, avx2_u32)
#define ACTX_AVX512_ROW_(op, ...) ACTX_ROW_(op, avx512_u64)
#define ACTX_NEON_ROW_(op, ...) ACTX_ROW_(op, neon_u16)

static const actx_kernel_fn kernel_table[ACTX_ISA_COUNT][ACTX_OP_COUNT][ACTX_DTYPE_COUNT] = {
    [ACTX_ISA_PORTABLE] = {ACTX_OPS(ACTX_PORTABLE_ROW_)},
#if ACTX_HAVE_X86_KERNELS
    [ACTX_ISA_AVX2] = {ACTX_OPS(ACTX_AVX2_ROW_)},
    [ACTX_ISA_AVX512] = {ACTX_OPS(ACTX_AVX512_ROW_)},
#endif
#if ACTX_HAVE_NEON_KERNELS
    [ACTX_ISA_NEON] = {ACTX_OPS(ACTX_NEON_ROW_)},
#endif
};

static const char *const isa_names[ACTX_ISA_COUNT] = {
    [ACTX_ISA_PORTABLE] = "portable", [ACTX_ISA_AVX2] = "avx2", [ACTX_ISA_AVX512] = "avx512",
    [ACTX_ISA_NEON] = "neon"};

static pthread_once_t isa_once = PTHREAD_ONCE_INIT;
static actx_isa active_isa = ACTX_ISA_PORTABLE;

static void choose_isa(void) {
  for (int isa = ACTX_ISA_COUNT - 1; isa >= 0; isa--) {
    if (actx_isa_supported((actx_isa)isa)) {
      active_isa = (actx_isa)isa;
      break;
    }
  }
  const int chosen = actx_env_choice("ACTX_ISA", isa_names, ACTX_ISA_COUNT, active_isa);
  if (actx_isa_supported((actx_isa)chosen))
    active_isa = (actx_isa)chosen;
  else
    fprintf(stderr, "actx: ACTX_ISA=%s is not supported by this CPU; using %s\n",
            isa_names[chosen], isa_names[active_isa]);
}

actx_isa actx_get_isa(void) {
  pthread_once(&isa_once, choose_isa);
  return active_isa;
}

const char *actx_isa_name(actx_isa isa) {
  return (unsigned)isa < ACTX_ISA_COUNT ? isa_names[isa] : "unknown";
}

/* What the CPU supports, read once (cpuid + xgetbv are slow in a virtual machine). */
static pthread_once_t support_once = PTHREAD_ONCE_INIT;
static int isa_support[ACTX_ISA_COUNT];

static void read_support(void) {
  isa_support[ACTX_ISA_PORTABLE] = 1;
#if ACTX_HAVE_X86_KERNELS
  isa_support[ACTX_ISA_AVX2] = actx_cpu_has_avx2_fma_f16c();
  isa_support[ACTX_ISA_AVX512] = isa_support[ACTX_ISA_AVX2] && actx_cpu_has_avx512bw();
#endif
#if ACTX_HAVE_NEON_KERNELS
  isa_support[ACTX_ISA_NEON] = 1; /* Advanced SIMD is part of every AArch64 core */
#endif
}

int actx_isa_supported(actx_isa isa) {
  if ((unsigned)isa >= ACTX_ISA_COUNT) return 0;
  pthread_once(&support_once, read_support);
  return isa_support[isa];
}

actx_status actx_set_isa(actx_isa isa) {
  if ((unsigned)isa >= ACTX_ISA_COUNT) return ACTX_ERROR_INVALID_ARGUMENT;
  if (!actx_isa_supported(isa)) return ACTX_ERROR_UNSUPPORTED;
  pthread_once(&isa_once, choose_isa);
  active_isa = isa;
  return ACTX_OK;
}

actx_kernel_fn actx_kernel_lookup(actx_op op, actx_dtype dtype) {
  return kernel_table[actx_get_isa()][op][dtype];
}

actx_kernel_fn actx_kernel_for_isa(actx_isa isa, actx_op op, actx_dtype dtype) {
  return kernel_table[isa][op][dtype];
}
