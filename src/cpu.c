/* CPU feature detection: what the AVX2 path needs (AVX2, FMA3, F16C) and whether the OS saves
 * the YMM registers (XCR0), read once with cpuid + xgetbv. */
#include "cpu.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

static unsigned long long read_xcr0(void) {
  unsigned int lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((unsigned long long)hi << 32) | lo;
}

int actx_cpu_has_avx2_fma_f16c(void) {
  unsigned int eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
  const int fma = (ecx >> 12) & 1, osxsave = (ecx >> 27) & 1, avx = (ecx >> 28) & 1,
            f16c = (ecx >> 29) & 1;
  if (!(fma && osxsave && avx && f16c)) return 0;
  if ((read_xcr0() & 0x6) != 0x6) return 0; /* XMM and YMM state enabled by the OS */
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return 0;
  return (ebx >> 5) & 1; /* AVX2 */
}
#else
int actx_cpu_has_avx2_fma_f16c(void) { return 0; }
#endif
