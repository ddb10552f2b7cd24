/* CPU feature predicates (cpu.h). */
#include "cpu.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

#define XCR0_YMM 0x6u  /* XMM and YMM state */
#define XCR0_ZMM 0xE0u /* opmask, ZMM0-15 upper halves, ZMM16-31 */

static unsigned long long read_xcr0(void) {
  unsigned int lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((unsigned long long)hi << 32) | lo;
}

/* cpuid leaf 1 ecx and leaf 7 ebx, 0 where a leaf is missing */
static unsigned int leaf1_ecx(void) {
  unsigned int eax, ebx, ecx = 0, edx;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) ? ecx : 0;
}
static unsigned int leaf7_ebx(void) {
  unsigned int eax, ebx = 0, ecx, edx;
  return __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) ? ebx : 0;
}
static int os_saves(unsigned int xcr0_bits) {
  if (!((leaf1_ecx() >> 27) & 1)) return 0; /* OSXSAVE: xgetbv is there */
  return (read_xcr0() & xcr0_bits) == xcr0_bits;
}

int actx_cpu_has_avx2_fma_f16c(void) {
  const unsigned int ecx = leaf1_ecx();
  const int fma = (ecx >> 12) & 1, avx = (ecx >> 28) & 1, f16c = (ecx >> 29) & 1;
  if (!(fma && avx && f16c) || !os_saves(XCR0_YMM)) return 0;
  return (leaf7_ebx() >> 5) & 1; /* AVX2 */
}

int actx_cpu_has_avx512f(void) {
  return ((leaf7_ebx() >> 16) & 1) && os_saves(XCR0_YMM | XCR0_ZMM);
}

int actx_cpu_has_avx512bw(void) { return actx_cpu_has_avx512f() && ((leaf7_ebx() >> 30) & 1); }
int actx_cpu_has_avx512_bf16(void) {
  unsigned int eax = 0, ebx, ecx, edx; /* leaf 7 subleaf 1 eax bit 5; DQ: leaf 7 ebx bit 17 */
  if (!__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) return 0;
  return actx_cpu_has_avx512bw() && ((leaf7_ebx() >> 17) & 1) && ((eax >> 5) & 1);
}
#else
int actx_cpu_has_avx2_fma_f16c(void) { return 0; }
int actx_cpu_has_avx512f(void) { return 0; }
int actx_cpu_has_avx512bw(void) { return 0; }
int actx_cpu_has_avx512_bf16(void) { return 0; }
#endif

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#define HWCAP_FPHP_BIT (1ul << 9)
#define HWCAP_ASIMDHP_BIT (1ul << 10)
int actx_cpu_has_fp16_arith(void) {
  const unsigned long hw = getauxval(AT_HWCAP);
  return (hw & HWCAP_FPHP_BIT) && (hw & HWCAP_ASIMDHP_BIT);
}
#else
int actx_cpu_has_fp16_arith(void) { return 0; }
#endif
