/* Every kernel of the op list (ops.h) for the portable ISA: the family bodies over vec_portable.h. */
#include "vec_portable.h"

#include "erf.h"
#include "logistic.h"
#include "tanh.h"

ACTX_OPS(ACTX_KERNELS_OF_OP)
