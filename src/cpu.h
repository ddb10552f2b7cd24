#ifndef ACTX_CPU_H
#define ACTX_CPU_H

/* 1 if the CPU and OS can run the AVX2 path (AVX2 + FMA3 + F16C, YMM state saved). */
int actx_cpu_has_avx2_fma_f16c(void);

#endif /* ACTX_CPU_H */
