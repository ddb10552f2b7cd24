# Runs a test program under valgrind memcheck and fails if any error or leak involves the EP
# library: a stack with a frame in libactx_ep. ONNX Runtime 1.30 itself reports a few
# uninitialised-value uses and two small one-time leaks (its env and a thread-local); those
# stacks never pass through our code and are not ours to fix, so they are counted, not failed.
# --keep-debuginfo: the library is unloaded (dlclose) before the leak check; without it its
# frames would be anonymous.
#
# cmake -DVALGRIND=<valgrind> -DPROGRAM=<test> -DARGS=<a;b;...> -DXML=<report.xml> -P valgrind_check.cmake

cmake_minimum_required(VERSION 3.20)

execute_process(
  COMMAND ${VALGRIND} --tool=memcheck --leak-check=full --keep-debuginfo=yes
          --show-leak-kinds=definite,indirect,possible --num-callers=64
          --xml=yes --xml-file=${XML} ${PROGRAM} ${ARGS}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} failed under valgrind (exit ${rc})")
endif()

file(READ ${XML} report)
set(ours 0)
set(theirs 0)
set(rest "${report}")
while(TRUE)
  string(FIND "${rest}" "<error>" start)
  if(start EQUAL -1)
    break()
  endif()
  string(SUBSTRING "${rest}" ${start} -1 rest)
  string(FIND "${rest}" "</error>" end)
  if(end EQUAL -1)
    message(FATAL_ERROR "truncated valgrind report ${XML}")
  endif()
  string(SUBSTRING "${rest}" 0 ${end} block)
  string(SUBSTRING "${rest}" ${end} -1 rest)
  string(REGEX MATCH "<kind>([^<]*)</kind>" _ "${block}")
  set(kind "${CMAKE_MATCH_1}")
  if(block MATCHES "libactx_ep")
    math(EXPR ours "${ours} + 1")
    string(REGEX MATCHALL "<fn>[^<]*</fn>" fns "${block}")
    message("valgrind: ${kind} involving libactx_ep: ${fns}")
  else()
    math(EXPR theirs "${theirs} + 1")
  endif()
endwhile()
message("valgrind: ${ours} report(s) involving libactx_ep, ${theirs} inside ONNX Runtime only")
if(ours GREATER 0)
  message(FATAL_ERROR "memory errors or leaks in libactx_ep (see ${XML})")
endif()
