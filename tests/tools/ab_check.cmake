# `actx ab` end to end on a tiny configuration. libactx_ep.so serves again as a peer under the
# name "self" with policy all, so no other EP is needed and the peer's outputs must be ORT's
# bits: the peer columns are checked for presence and for a real comparison, not only a header.
#
# cmake -DACTX=<actx> -DEP=<libactx_ep.so> -DNOT_AN_EP=<a shared library without the EP entry
#       points> -DOUT=<scratch dir> -P ab_check.cmake

cmake_minimum_required(VERSION 3.20)

file(REMOVE_RECURSE ${OUT})

function(fail what)
  message(FATAL_ERROR "actx ab: ${what}\n--- output ---\n${output}")
endfunction()

function(expect_in text needle where)
  string(FIND "${text}" "${needle}" at)
  if(at EQUAL -1)
    fail("'${needle}' missing from ${where}")
  endif()
endfunction()

# The value of column `name` in data row `row` (1-based) of a CSV whose cells hold no commas.
function(csv_cell csv name row result)
  file(STRINGS ${csv} lines)
  list(GET lines 0 header)
  string(REPLACE "," ";" columns "${header}")
  list(FIND columns ${name} index)
  if(index EQUAL -1)
    fail("column ${name} missing from ${csv}")
  endif()
  list(GET lines ${row} line)
  string(REPLACE "," ";" cells "${line};")
  list(GET cells ${index} value)
  set(${result} "${value}" PARENT_SCOPE)
endfunction()

execute_process(
  COMMAND ${ACTX} ab --ops Tanh --dtypes f32 --sizes 16384 --threads 1 --reps 3 --warmup 1
          --batch-ms 0.2 --creation-nodes 10,30 --creation-reps 2 --peer self=${EP}
          --peer-option self:policy=all --no-chart --no-models --out ${OUT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE output ERROR_VARIABLE errors)
set(output "${output}${errors}")
if(NOT rc EQUAL 0)
  fail("exit ${rc}")
endif()

# The report: the Run() table with the peer's column group, then the creation section.
foreach(needle "Peer self: EP actx" "==== Run() time ====" "self us" "ORT/self" "self check"
        "self EP" "ORT/self:" "==== Session creation ====" "actx-all ms" "actx-all/ORT"
        "actx-auto us/node" "self on EP" "Cost per added node")
  expect_in("${output}" "${needle}" "the report")
endforeach()
file(READ ${OUT}/ab.txt txt)
expect_in("${txt}" "==== Session creation ====" "ab.txt")
string(FIND "${output}" "==== Run() time ====" run_at)
string(FIND "${output}" "==== Session creation ====" creation_at)
if(creation_at LESS run_at)
  fail("the creation section comes before the Run() table")
endif()

# ab.csv: the peer's columns, its outputs compared with ORT alone's (0 differing) and its node
# on the peer's EP.
foreach(column case actx_median_ns ratio self_ep self_median_ns self_ratio self_reference
        self_differing self_ep_assignment self_error)
  csv_cell(${OUT}/ab.csv ${column} 1 value)
endforeach()
csv_cell(${OUT}/ab.csv self_reference 1 reference)
csv_cell(${OUT}/ab.csv self_differing 1 differing)
csv_cell(${OUT}/ab.csv self_ep_assignment 1 assignment)
csv_cell(${OUT}/ab.csv self_ratio 1 ratio)
if(NOT reference STREQUAL "ORT" OR NOT differing STREQUAL "0" OR NOT assignment STREQUAL "actx"
   OR ratio STREQUAL "")
  fail("peer cell: reference '${reference}', differing '${differing}', EP '${assignment}', "
       "ratio '${ratio}'")
endif()

# ab-creation.csv: 2 chains x 2 sizes x 4 arms (ORT, actx-all, actx-auto, self), every one timed,
# and with policy all every node of the chain on actx.
file(STRINGS ${OUT}/ab-creation.csv creation_lines)
list(LENGTH creation_lines n)
if(NOT n EQUAL 17)
  fail("ab-creation.csv has ${n} lines, not 1 + 16")
endif()
foreach(row RANGE 1 16)
  csv_cell(${OUT}/ab-creation.csv median_ms ${row} ms)
  csv_cell(${OUT}/ab-creation.csv arm ${row} arm)
  csv_cell(${OUT}/ab-creation.csv nodes ${row} nodes)
  csv_cell(${OUT}/ab-creation.csv nodes_on_ep ${row} on_ep)
  if(ms STREQUAL "")
    fail("ab-creation.csv row ${row} (${arm}) was not timed")
  endif()
  if((arm STREQUAL "actx-all" OR arm STREQUAL "self") AND NOT on_ep STREQUAL nodes)
    fail("ab-creation.csv row ${row}: ${on_ep} of ${nodes} nodes on ${arm}'s EP")
  endif()
endforeach()

# Bad peers: a clear message and the usage exit code, before anything is measured.
foreach(case "self|expected NAME=PATH" "x=${OUT}/missing.so|No such file"
        "x=${NOT_AN_EP}|not a plugin EP library" "actx=${EP}|taken by an arm")
  string(REPLACE "|" ";" case "${case}")
  list(GET case 0 arg)
  list(GET case 1 message)
  execute_process(COMMAND ${ACTX} ab --ops Tanh --no-creation --peer ${arg} --out ${OUT}/bad
                  RESULT_VARIABLE rc OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT rc EQUAL 2)
    fail("--peer ${arg}: exit ${rc}, not 2")
  endif()
  expect_in("${output}" "${message}" "the error for --peer ${arg}")
endforeach()
# The real-model section's options: exclusive ones, and a model the manifest does not list.
foreach(case "--no-models;--models-only|exclude" "--models-only;--creation-only|--models-only"
        "--models-check;--models;no-such-model|not in")
  string(REPLACE "|" ";" case "${case}")
  list(POP_BACK case message)
  execute_process(COMMAND ${ACTX} ab ${case} --out ${OUT}/bad
                  RESULT_VARIABLE rc OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT rc EQUAL 2)
    fail("${case}: exit ${rc}, not 2")
  endif()
  expect_in("${output}" "${message}" "the error for ${case}")
endforeach()
message(STATUS "actx ab: report, CSV columns, creation section, peer and model option errors as "
               "expected")
