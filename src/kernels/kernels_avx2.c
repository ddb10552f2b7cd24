/* Every kernel of the op list (ops.h) for the avx2 ISA: the family bodies over vec_avx2.h. */
#include "vec_avx2.h"

#include "erf.h"
#include "logistic.h"
#include "tanh.h"

ACTX_OPS(ACTX_KERNELS_OF_OP)
