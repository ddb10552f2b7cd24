/* test_half_rounding's checks of the AVX2 vocabulary (built with -mavx2 -mfma -mf16c). */
#include "../../src/kernels/vec_avx2.h"

#define HR_VOCAB hr_avx2
#define HR_ISA_NAME "avx2"
#include "test_half_rounding_vec.h"
