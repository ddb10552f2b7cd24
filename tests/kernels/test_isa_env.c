/* ACTX_ISA chooses the path (run by ctest with ACTX_ISA set; argv[1] is the expected ISA). */
#include "test_util.h"

int main(int argc, char **argv) {
  EXPECT(argc == 2, "usage: test_isa_env EXPECTED_ISA");
  if (argc == 2)
    EXPECT(strcmp(actx_isa_name(actx_get_isa()), argv[1]) == 0, "ACTX_ISA=%s gave %s",
           getenv("ACTX_ISA") ? getenv("ACTX_ISA") : "(unset)", actx_isa_name(actx_get_isa()));
  return test_finish("test_isa_env");
}
