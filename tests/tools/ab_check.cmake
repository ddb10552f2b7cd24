# `actx ab` end to end on a tiny configuration: ab.csv's columns and a row against the table, arm A
# options and their errors. libactx_ep.so serves again as a peer under the
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

# ab.csv's columns, in order: scripts/bench-compare.sh and these tests read them by name.
set(own_columns case dtype elements threads policy auto_declined ort_median_ns ort_p10_ns
    ort_p90_ns ort_batch actx_median_ns actx_p10_ns actx_p90_ns actx_batch ratio ratio_p10
    ratio_p90 null_median_ns null_ratio null_ratio_p10 null_ratio_p90 reps reference differing
    max_ulp nan_mismatch ep_assignment ort_error actx_error)
set(expected_columns ${own_columns})
foreach(column ep median_ns p10_ns p90_ns batch ratio ratio_p10 ratio_p90 reference differing
        max_ulp nan_mismatch ep_assignment error)
  list(APPEND expected_columns self_${column})
endforeach()
string(REPLACE ";" "," expected_header "${expected_columns}")
file(STRINGS ${OUT}/ab.csv csv_lines)
list(GET csv_lines 0 header)
if(NOT header STREQUAL expected_header)
  fail("ab.csv's header is\n${header}\nnot\n${expected_header}")
endif()

# text x 10^digits as a whole number ("7.259", 3: 7259), and the number of decimals text has.
function(scaled text digits result decimals)
  if(NOT text MATCHES "^([0-9]+)(\\.([0-9]*))?")
    fail("'${text}' is not a number")
  endif()
  set(int "${CMAKE_MATCH_1}")
  set(frac "${CMAKE_MATCH_3}")
  string(LENGTH "${frac}" n)
  string(SUBSTRING "${frac}0000000000" 0 ${digits} frac)
  # without its leading zeros (a REGEX REPLACE anchored at ^ would go on matching after them)
  string(REGEX MATCH "[1-9][0-9]*" v "${int}${frac}")
  if(v STREQUAL "")
    set(v 0)
  endif()
  set(${result} ${v} PARENT_SCOPE)
  set(${decimals} ${n} PARENT_SCOPE)
endfunction()

# The table's value (rounded for print) is the CSV's within one unit of the table's last digit;
# both are scaled to whole numbers first (x 10^table_shift, x 10^csv_shift).
function(expect_near table_text table_shift csv_text csv_shift what)
  scaled("${table_text}" ${table_shift} t table_decimals)
  scaled("${csv_text}" ${csv_shift} c unused)
  set(tolerance 1)
  if(table_decimals LESS table_shift)
    math(EXPR steps "${table_shift} - ${table_decimals}")
    foreach(k RANGE 1 ${steps})
      math(EXPR tolerance "${tolerance} * 10")
    endforeach()
  endif()
  math(EXPR diff "${t} - ${c}")
  if(diff LESS 0)
    math(EXPR diff "-(${diff})")
  endif()
  if(diff GREATER tolerance)
    fail("${what}: the table says ${table_text}, ab.csv ${csv_text}")
  endif()
endfunction()

# Row 1 of ab.csv against its row of the table (ab.txt): the same cell, the same numbers.
file(STRINGS ${OUT}/ab.txt table_lines REGEX "^Tanh +f32 +16384 ")
list(LENGTH table_lines n)
if(NOT n EQUAL 1)
  fail("ab.txt has ${n} rows for Tanh f32 16384, not 1")
endif()
string(REGEX REPLACE " +" ";" cells "${table_lines}")
list(GET cells 0 t_case)
list(GET cells 1 t_dtype)
list(GET cells 2 t_n)
list(GET cells 3 t_threads)
list(GET cells 4 t_ort_us)
list(GET cells 6 t_actx_us)
list(GET cells 8 t_ratio)
list(GET cells 9 t_ratio_spread)
list(GET cells 10 t_check)
list(GET cells 11 t_ep)
foreach(column case dtype elements threads ort_median_ns actx_median_ns ratio ratio_p10
        ratio_p90 differing ep_assignment reference)
  csv_cell(${OUT}/ab.csv ${column} 1 c_${column})
endforeach()
if(NOT "${t_case};${t_dtype};${t_n};${t_threads}" STREQUAL
   "${c_case};${c_dtype};${c_elements};${c_threads}")
  fail("table row ${t_case} ${t_dtype} ${t_n} ${t_threads} is not CSV row ${c_case} "
       "${c_dtype} ${c_elements} ${c_threads}")
endif()
if(NOT t_check STREQUAL "identical" OR NOT c_differing STREQUAL "0" OR
   NOT c_reference STREQUAL "ORT" OR NOT t_ep STREQUAL c_ep_assignment)
  fail("check '${t_check}' / EP '${t_ep}' in the table; differing '${c_differing}', reference "
       "'${c_reference}', EP '${c_ep_assignment}' in ab.csv")
endif()
expect_near("${t_ort_us}" 3 "${c_ort_median_ns}" 0 "ORT us")
expect_near("${t_actx_us}" 3 "${c_actx_median_ns}" 0 "actx us")
string(REPLACE "x" "" t_ratio "${t_ratio}")
string(REPLACE "-" ";" spread "${t_ratio_spread}")
list(GET spread 0 t_ratio_p10)
list(GET spread 1 t_ratio_p90)
expect_near("${t_ratio}" 4 "${c_ratio}" 4 "ORT/actx")
expect_near("${t_ratio_p10}" 4 "${c_ratio_p10}" 4 "ORT/actx p10")
expect_near("${t_ratio_p90}" 4 "${c_ratio_p90}" 4 "ORT/actx p90")

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

# Arm A as --baseline, --threads-a and --dtype-a make it, and --profile: the header says what
# arm A is, the ratio and the null control are there, and the check still compares with ORT
# alone (float32) or libactx (bfloat16 against float16).
foreach(case "Tanh;f32;--baseline;none;--threads-a;1;--null;--profile;2|ORT|ORT + actx (policy none) on 1 thread"
        "Tanh;bf16;--dtype-a;f16;--baseline;all|libactx|ORT + actx (policy all) in f16")
  string(REPLACE "|" ";" case "${case}")
  list(POP_BACK case arm_a)
  list(POP_BACK case reference)
  list(POP_FRONT case op dtype)
  execute_process(
    COMMAND ${ACTX} ab --ops ${op} --dtypes ${dtype} --sizes 4096 --threads 1 --reps 3
            --warmup 1 --batch-ms 0.2 --policy all ${case} --no-creation --no-models --no-chart
            --strict --out ${OUT}/arm_a
    RESULT_VARIABLE rc OUTPUT_VARIABLE output ERROR_VARIABLE errors)
  set(output "${output}${errors}")
  if(NOT rc EQUAL 0)
    fail("${case}: exit ${rc}")
  endif()
  expect_in("${output}" "Arm A (the ORT columns and ratios): ${arm_a};" "the header")
  csv_cell(${OUT}/arm_a/ab.csv reference 1 c_reference)
  csv_cell(${OUT}/arm_a/ab.csv differing 1 c_differing)
  csv_cell(${OUT}/arm_a/ab.csv ratio 1 c_ratio)
  csv_cell(${OUT}/arm_a/ab.csv null_ratio 1 c_null)
  if(NOT c_reference STREQUAL reference OR NOT c_differing STREQUAL "0" OR c_ratio STREQUAL "")
    fail("${case}: reference '${c_reference}', differing '${c_differing}', ratio '${c_ratio}'")
  endif()
  if(";${case};" MATCHES ";--null;" AND c_null STREQUAL "")
    fail("${case}: no null ratio")
  endif()
  if(";${case};" MATCHES ";--profile;")
    expect_in("${output}" "==== GELU part (ORT's profiler) ====" "the report")
    string(REGEX MATCH "\nTanh +f32 +4096 +1 +[0-9.]+ +[0-9.]+ +[0-9.]+% +[0-9.]+ +[0-9.]+ +[0-9.]+% +2\n"
           profile_row "${output}")
    if(profile_row STREQUAL "")
      fail("${case}: no profile row of 2 runs per arm")
    endif()
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
# The real-model section's options: exclusive ones, and a model the manifest does not list; bad
# arm A options.
foreach(case "--no-models;--models-only|exclude" "--models-only;--creation-only|--models-only"
        "--models-check;--models;no-such-model|not in"
        "--baseline;fast|expected ort, none, auto or all" "--dtype-a;f64|unknown dtype"
        "--dtype-a;f16;model.onnx|not with MODEL files" "--threads-a;0|--threads-a")
  string(REPLACE "|" ";" case "${case}")
  list(POP_BACK case message)
  execute_process(COMMAND ${ACTX} ab ${case} --out ${OUT}/bad
                  RESULT_VARIABLE rc OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT rc EQUAL 2)
    fail("${case}: exit ${rc}, not 2")
  endif()
  expect_in("${output}" "${message}" "the error for ${case}")
endforeach()
message(STATUS "actx ab: report, CSV columns and row, arm A options, creation section, peer, "
               "model and arm A option errors as expected")
