/* CPU feature predicates (cpuid + xgetbv, read on each call: callers keep the answers), each
 * whether the CPU has the feature and the OS saves the registers it needs. */
#ifndef ACTX_CPU_H
#define ACTX_CPU_H

/* AVX2 + FMA3 + F16C, YMM state saved: the AVX2 path, and ORT's FMA3 kernels */
int actx_cpu_has_avx2_fma_f16c(void);
/* AVX512F, opmask and ZMM state saved (XCR0 bits 5-7): the test ORT 1.30's MLAS makes before it
 * switches Erf, Gelu and SiLU to its AVX-512F kernels */
int actx_cpu_has_avx512f(void);
/* AVX512BW: the 16-bit masked loads and stores of the AVX-512 path's tail */
int actx_cpu_has_avx512bw(void);
/* AVX512_BF16 (with AVX512BW and DQ): vcvtne2ps2bf16, the bfloat16 service's rounding of oneDNN's
 * results (src/bf16/bf16_round.c) */
int actx_cpu_has_avx512_bf16(void);

/* AArch64 FP16 arithmetic (HWCAP FPHP and ASIMDHP): ORT's arm64 library then runs float16
 * activations with float16 kernels of its own instead of through float32 */
int actx_cpu_has_fp16_arith(void);

#endif /* ACTX_CPU_H */
