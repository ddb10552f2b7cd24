# The AVX2-class oracle on any x86-64 host: tests run under qemu-x86_64 with a Haswell CPU
# (AVX2 + FMA3 + F16C, no AVX-512; qemu 7.2's TCG runs AVX2), ORT and libactx in the same
# emulated process, so actx's AVX2 path, the avx2 ORT rule and the AVX2 `auto` table meet ORT's
# own FMA3 kernels even where the host has AVX-512. Without qemu the tests say they skipped.
#
# emu_x86_test(NAME TARGET [TIMEOUT s] [WORKING_DIRECTORY dir] [ARGS ...]): the ctest
# emu_x86_NAME, running TARGET's program with ARGS under the emulated CPU.
# Included by each directory that adds such tests (its variables are that directory's).
find_program(ACTX_QEMU_X86_64 qemu-x86_64)
# Haswell without what qemu's TCG cannot emulate and warns about (TSX, PCID, INVPCID, x2APIC,
# TSC deadline): system features a user-mode program never uses.
set(ACTX_EMU_X86_CPU "Haswell-noTSX,-pcid,-x2apic,-tsc-deadline,-invpcid")
set(ACTX_EMU_X86_RUNNER ${CMAKE_CURRENT_LIST_DIR}/run-x86.sh)

function(emu_x86_test name target)
  cmake_parse_arguments(T "" "TIMEOUT;WORKING_DIRECTORY" "ARGS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 1500)
  endif()
  # Sanitizer and coverage builds are not emulated: ASan's shadow memory and gcov's counters
  # under qemu-user add nothing to what the native runs of the same tests check.
  if(ACTX_SANITIZE OR ACTX_COVERAGE OR NOT TARGET actx_cli)
    return()
  endif()
  if(NOT T_WORKING_DIRECTORY)
    set(T_WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  endif()
  add_test(NAME emu_x86_${name} WORKING_DIRECTORY ${T_WORKING_DIRECTORY}
           COMMAND ${ACTX_EMU_X86_RUNNER} "${ACTX_QEMU_X86_64}" ${ACTX_EMU_X86_CPU}
                   $<TARGET_FILE:actx_cli> $<TARGET_FILE:${target}> ${T_ARGS})
  set_tests_properties(emu_x86_${name} PROPERTIES LABELS emulated TIMEOUT ${T_TIMEOUT})
endfunction()
