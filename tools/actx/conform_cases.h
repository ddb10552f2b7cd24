/* conform_cases.h — conformance tests ONNX's test data does not have, generated in its layout.
 *
 * Debian's libonnx-testdata (ONNX 1.12) predates ai.onnx Gelu (opset 20) and has no
 * com.microsoft ops and no float16 / bfloat16 activations. These are written as ONNX's node
 * tests are: <dir>/test_<name>/model.onnx and test_data_set_0/{input_K,output_0}.pb, the
 * expected outputs computed in double precision and rounded once to the output type. */
#ifndef ACTX_TOOLS_CONFORM_CASES_H
#define ACTX_TOOLS_CONFORM_CASES_H

#include <stdbool.h>
#include <stddef.h>

/* Writes every generated test under dir (created if needed). 0, or -1 with a message. */
int actx_conform_generate(const char *dir, size_t *n_written, char *err, size_t err_size);

/* Whether a test, by its directory name (test_erf, test_Sigmoid, test_gelu_tanh_2_fp16, ...),
 * is one of an operator actx serves: such a test must run in actx and pass. */
bool actx_conform_served(const char *test_name);

#endif /* ACTX_TOOLS_CONFORM_CASES_H */
