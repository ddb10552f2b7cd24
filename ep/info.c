/* actx_ep_info: what this copy of the library computes with, for tools that load it without
 * ONNX Runtime (the Python package's `python -m actx_ep` reads it through ctypes).
 *
 * One "key=value" line per fact; a reader takes the keys it knows and ignores the rest, so a
 * key can be added without breaking an older reader. nan_rule is the ORT rule libactx follows
 * (actx_get_ort_rule(): which of ORT's kernels the bits are those of). */
#include <stdio.h>

#include "actx.h"

__attribute__((visibility("default"))) const char *actx_ep_info(void);

const char *actx_ep_info(void) {
  /* Per thread: the ISA and the rule can be changed (ACTX_ISA, actx_set_isa, ...), so the text
   * is built on each call, and no caller's copy is overwritten by another thread. */
  static _Thread_local char text[256];
  snprintf(text, sizeof text, "version=%s\nisa=%s\nnan_rule=%s\n", actx_version_string(),
           actx_isa_name(actx_get_isa()), actx_ort_rule_name(actx_get_ort_rule()));
  return text;
}
