/* ACTX_ISA chooses the ISA (run by ctest with ACTX_ISA set). argv[1] is the ISA asked for, or
 * "best": the process must run that ISA where the CPU has it, and otherwise (or for "best", or
 * for a value that names no ISA) the best ISA the CPU has, as with ACTX_ISA unset. */
#include "test_util.h"

/* the last ISA of the list the CPU supports (the list goes from portable up) */
static actx_isa best_isa(void) {
  actx_isa best = ACTX_ISA_PORTABLE;
  for (size_t i = 0; i < TEST_ISA_COUNT; i++)
    if (actx_isa_supported(test_isas[i])) best = test_isas[i];
  return best;
}

int main(int argc, char **argv) {
  EXPECT(argc == 2, "usage: test_isa_env ISA|best");
  if (argc != 2) return test_finish("test_isa_env");
  actx_isa want = best_isa();
  if (strcmp(argv[1], "best") != 0) {
    int known = 0;
    for (int isa = 0; isa < ACTX_ISA_COUNT; isa++) {
      if (strcmp(argv[1], actx_isa_name((actx_isa)isa)) != 0) continue;
      known = 1;
      if (actx_isa_supported((actx_isa)isa))
        want = (actx_isa)isa;
      else /* says so, and expects the fallback */
        printf("%s: skipped: no %s on this CPU; expecting the fallback, %s\n", argv[1],
               isa == ACTX_ISA_AVX512 ? "AVX-512F + AVX512BW" : "AVX2 + FMA3 + F16C",
               actx_isa_name(want));
    }
    EXPECT(known, "%s is no ISA", argv[1]);
  }
  const char *env = getenv("ACTX_ISA");
  EXPECT(actx_get_isa() == want, "ACTX_ISA=%s gave %s, want %s", env ? env : "(unset)",
         actx_isa_name(actx_get_isa()), actx_isa_name(want));
  return test_finish("test_isa_env");
}
