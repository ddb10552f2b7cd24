/* Whether this CPU's add of two NaNs gives the first operand's NaN, made quiet, as x86's SSE /
 * AVX adds do. qemu 7.2's TCG does not: it picks the NaN with the larger payload (the x87
 * rule), so under it ORT's NaN x + NaN bias is the emulator's choice, not x86's; the emulated
 * runs leave that one case to the native ones. */
#ifndef ACTX_TESTS_FIRST_NAN_H
#define ACTX_TESTS_FIRST_NAN_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static inline bool cpu_keeps_first_nan(void) {
#if defined(__x86_64__) || defined(__i386__)
  const uint32_t first_bits = 0x7fc00001u, second_bits = 0xffd3c6efu;
  float first, second;
  memcpy(&first, &first_bits, 4);
  memcpy(&second, &second_bits, 4);
  /* in assembly, so that the compiler cannot swap the operands */
  __asm__("addss %1, %0" : "+x"(first) : "x"(second));
  uint32_t sum;
  memcpy(&sum, &first, 4);
  return sum == first_bits;
#else
  return true;
#endif
}

#endif
