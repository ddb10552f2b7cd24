# `actx ab` with an EP library whose results have one wrong bit (the test-only actx_ep_wrong_bits
# build): every cell the EP runs must be reported as differing, in the check column, the notes
# and the CSV; --strict must then exit 1, and without it the run exits 0. float32 is checked
# against ORT alone, bfloat16 against libactx.
#
# cmake -DACTX=<actx> -DEP=<libactx_ep_wrong_bits.so> -DOUT=<scratch dir> -P ab_wrong_bits.cmake

cmake_minimum_required(VERSION 3.20)

file(REMOVE_RECURSE ${OUT})

function(fail what)
  message(FATAL_ERROR "actx ab (wrong bits): ${what}\n--- output ---\n${output}")
endfunction()

set(args ab --ep-lib ${EP} --ops Gelu --dtypes f32,bf16 --sizes 4096 --threads 1 --policy all
    --reps 2 --warmup 0 --batch-ms 0.1 --no-creation --no-models --no-chart)

execute_process(COMMAND ${ACTX} ${args} --out ${OUT}/plain
                RESULT_VARIABLE rc OUTPUT_VARIABLE output ERROR_VARIABLE errors)
set(output "${output}${errors}")
if(NOT rc EQUAL 0)
  fail("without --strict: exit ${rc}, not 0")
endif()
foreach(needle "outputs differ from the reference in 2 cells (f32: 1, bf16: 1)"
        "1 differ, max 1 ulp  " "1 differ, max 1 ulp vs libactx")
  string(FIND "${output}" "${needle}" at)
  if(at EQUAL -1)
    fail("'${needle}' missing from the report")
  endif()
endforeach()
file(STRINGS ${OUT}/plain/ab.csv lines)
list(LENGTH lines n)
if(NOT n EQUAL 3)
  fail("ab.csv has ${n} lines, not 1 + 2")
endif()
list(GET lines 1 f32_row)
list(GET lines 2 bf16_row)
if(NOT f32_row MATCHES "^Gelu,f32,.*,ORT,1,1,0,actx,,$" OR
   NOT bf16_row MATCHES "^Gelu,bf16,.*,libactx,1,1,0,actx,")
  fail("ab.csv rows do not say 1 element differs by 1 ulp:\n${f32_row}\n${bf16_row}")
endif()

execute_process(COMMAND ${ACTX} ${args} --strict --out ${OUT}/strict
                RESULT_VARIABLE rc OUTPUT_VARIABLE output ERROR_VARIABLE errors)
set(output "${output}${errors}")
if(NOT rc EQUAL 1)
  fail("with --strict: exit ${rc}, not 1")
endif()
message(STATUS "actx ab: wrong bits reported (ORT and libactx references), --strict exits 1")
