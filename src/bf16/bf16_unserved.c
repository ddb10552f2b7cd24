/* Families not yet written: their kernels refuse to be made, so the EP leaves those nodes to
 * ORT (whose error then names them). Each family's own file replaces its line here. */
#include "bf16_family.h"

static actx_status unserved(const actx_bf16_node *node, void **state, const char **why) {
  (void)node;
  *state = NULL;
  return actx_bf16_fail(why, "operator family not yet served in bfloat16");
}

#define UNSERVED(fam) const actx_bf16_family actx_bf16_family_##fam = {.create = unserved};

UNSERVED(reduce)

UNSERVED(softmax)

UNSERVED(norm)
UNSERVED(unary)

UNSERVED(binary)

UNSERVED(compare)

UNSERVED(pool)

UNSERVED(resize)
UNSERVED(layout)

