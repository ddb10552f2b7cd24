/* test_half_rounding's checks of the AVX-512 vocabulary (built with -mavx512f -mavx512bw and
 * the AVX2 path's flags, as src/kernels/kernels_avx512.c is). */
#include "../../src/kernels/vec_avx512.h"

#define HR_VOCAB hr_avx512
#define HR_ISA_NAME "avx512"
#include "test_half_rounding_vec.h"
