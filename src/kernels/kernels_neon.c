/* Every kernel of the op list (ops.h) for the neon ISA: the family bodies over vec_neon.h. */
#include "vec_neon.h"

#include "erf.h"
#include "logistic.h"
#include "tanh.h"

ACTX_OPS(ACTX_KERNELS_OF_OP)
