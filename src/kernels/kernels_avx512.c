/* Every kernel of the op list (ops.h) for the avx512 ISA: the family bodies over vec_avx512.h. */
#include "vec_avx512.h"

#include "erf.h"
#include "logistic.h"
#include "tanh.h"

ACTX_OPS(ACTX_KERNELS_OF_OP)
