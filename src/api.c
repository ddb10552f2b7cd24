/* The public API's facts: status messages, op and dtype names, element sizes, the version. */
#include "actx.h"
#include "ops.h"

const char *actx_status_string(actx_status status) {
  switch (status) {
    case ACTX_OK: return "ok";
    case ACTX_ERROR_NULL_POINTER: return "a required pointer (x, y, bias or desc) is NULL";
    case ACTX_ERROR_INVALID_BIAS: return "invalid bias: length 0, or n not a multiple of it";
    case ACTX_ERROR_INVALID_ARGUMENT: return "invalid argument (op, dtype, isa or a field the op does not take)";
    case ACTX_ERROR_OVERLAP: return "x and y overlap without being the same buffer";
    case ACTX_ERROR_UNSUPPORTED: return "the instruction set is not supported by this CPU";
    case ACTX_ERROR_OUT_OF_MEMORY: return "out of memory (thread pool or table)";
  }
  return "unknown actx_status";
}

const char *actx_op_name(actx_op op) {
  return (unsigned)op < ACTX_OP_COUNT ? actx_op_names[op] : "unknown";
}

const char *actx_dtype_name(actx_dtype dtype) {
  static const char *const names[ACTX_DTYPE_COUNT] = {"f32", "f16", "bf16"};
  return (unsigned)dtype < ACTX_DTYPE_COUNT ? names[dtype] : "unknown";
}

size_t actx_dtype_size(actx_dtype dtype) {
  static const size_t sizes[ACTX_DTYPE_COUNT] = {4, 2, 2};
  return (unsigned)dtype < ACTX_DTYPE_COUNT ? sizes[dtype] : 0;
}

const char *actx_version_string(void) { return "0.1.0"; }
