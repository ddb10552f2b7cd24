/* Dispatch: one table {isa, op, dtype} -> kernel, and the choice of ISA, made once. */
#include "dispatch.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

#define ACTX_ROW(op, isa_suffix)                                                     \
  {actx_f32_##op##__##isa_suffix, actx_f16_##op##__##isa_suffix,                     \
   actx_bf16_##op##__##isa_suffix},
#define ACTX_PORTABLE_ROW(op) ACTX_ROW(op, portable)
#define ACTX_AVX2_ROW(op) ACTX_ROW(op, avx2_u32)

static const actx_kernel_fn kernel_table[ACTX_ISA_COUNT][ACTX_OP_COUNT][ACTX_DTYPE_COUNT] = {
    [ACTX_ISA_PORTABLE] = {ACTX_FOREACH_OP(ACTX_PORTABLE_ROW)},
    [ACTX_ISA_AVX2] = {ACTX_FOREACH_OP(ACTX_AVX2_ROW)},
};

static const char *const isa_names[ACTX_ISA_COUNT] = {"portable", "avx2"};

static pthread_once_t isa_once = PTHREAD_ONCE_INIT;
static actx_isa active_isa = ACTX_ISA_PORTABLE;

static void choose_isa(void) {
  active_isa = actx_isa_supported(ACTX_ISA_AVX2) ? ACTX_ISA_AVX2 : ACTX_ISA_PORTABLE;
  const char *env = getenv("ACTX_ISA");
  if (env == NULL || env[0] == '\0') return;
  for (int isa = 0; isa < ACTX_ISA_COUNT; isa++) {
    if (strcmp(env, isa_names[isa]) != 0) continue;
    if (actx_isa_supported((actx_isa)isa))
      active_isa = (actx_isa)isa;
    else
      fprintf(stderr, "actx: ACTX_ISA=%s is not supported by this CPU; using %s\n", env,
              isa_names[active_isa]);
    return;
  }
  fprintf(stderr, "actx: ACTX_ISA=%s is not one of portable, avx2; using %s\n", env,
          isa_names[active_isa]);
}

actx_isa actx_get_isa(void) {
  pthread_once(&isa_once, choose_isa);
  return active_isa;
}

const char *actx_isa_name(actx_isa isa) {
  return (unsigned)isa < ACTX_ISA_COUNT ? isa_names[isa] : "unknown";
}

int actx_isa_supported(actx_isa isa) {
  switch (isa) {
    case ACTX_ISA_PORTABLE: return 1;
    case ACTX_ISA_AVX2: return actx_cpu_has_avx2_fma_f16c();
    default: return 0;
  }
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
