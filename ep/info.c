/* actx_ep_info: what this copy of the library computes with, for tools that load it without
 * ONNX Runtime (the Python package's `python -m actx_ep` reads it through ctypes).
 *
 * One "key=value" line per fact; a reader takes the keys it knows and ignores the rest, so a
 * key can be added without breaking an older reader. */
#include <stdio.h>

#include "actx.h"

/* The NaN rule of the ORT build whose bits libactx reproduces. NULL while libactx does not
 * report one; once it does (actx_get_ort_rule(), "avx2" / "avx512"), this line becomes
 * actx_ort_rule_name(actx_get_ort_rule()) and nothing else changes. */
#define ACTX_EP_INFO_NAN_RULE() ((const char *)NULL)

__attribute__((visibility("default"))) const char *actx_ep_info(void);

const char *actx_ep_info(void) {
  /* Per thread: the ISA can be changed (ACTX_ISA, actx_set_isa), so the text is built on each
   * call, and no caller's copy is overwritten by another thread. */
  static _Thread_local char text[256];
  const char *rule = ACTX_EP_INFO_NAN_RULE();
  int len = snprintf(text, sizeof text, "version=%s\nisa=%s\n", actx_version_string(),
                     actx_isa_name(actx_get_isa()));
  if (rule != NULL && len > 0 && (size_t)len < sizeof text)
    snprintf(text + len, sizeof text - (size_t)len, "nan_rule=%s\n", rule);
  return text;
}
