#ifndef ACTX_DISPATCH_H
#define ACTX_DISPATCH_H

#include "actx.h"
#include "kernels.h"

/* The kernel for op and dtype on the active ISA (op and dtype must be valid). */
actx_kernel_fn actx_kernel_lookup(actx_op op, actx_dtype dtype);
/* The kernel of a given ISA, NULL where this build has none (tests compare ISAs directly). */
actx_kernel_fn actx_kernel_for_isa(actx_isa isa, actx_op op, actx_dtype dtype);

#endif /* ACTX_DISPATCH_H */
