# Report writer checks that need Erlang: the fprof reports must read back with
# file:consult/1, and every marked row must be the sum of its caller rows.
#
# Included by tests/CMakeLists.txt, this file registers the test; run with
# "cmake -P" (by that test), it does the checking:
#   1. check_report --write-samples DIR writes the fprof variants (tests/unit/check_report.c)
#   2. erlc compiles consult_check.erl and verify_native.erl from ../shared/docs/format-samples/tools
#   3. consult_check must accept every file, verify_native every file.
# A missing erl/erlc or shared directory fails the test with a message; it never skips.

if(NOT CMAKE_SCRIPT_MODE_FILE)
  find_program(CT_ERL erl)
  find_program(CT_ERLC erlc)
  set(CT_ERL_TOOLS ${PROJECT_SOURCE_DIR}/../shared/docs/format-samples/tools)
  if(NOT CT_ERL OR NOT CT_ERLC)
    message(WARNING "erl/erlc not found: test unit/report_erlang will fail "
                    "(apt-get install erlang-base)")
  endif()
  if(TARGET check_report)
    add_test(NAME unit/report_erlang
      COMMAND ${CMAKE_COMMAND}
        -DCHECK_REPORT=$<TARGET_FILE:check_report>
        -DERL=${CT_ERL} -DERLC=${CT_ERLC} -DTOOLS=${CT_ERL_TOOLS}
        -DOUT=${CMAKE_CURRENT_BINARY_DIR}/report-erlang
        -P ${CMAKE_CURRENT_LIST_FILE})
    set_tests_properties(unit/report_erlang PROPERTIES LABELS unit TIMEOUT 120)
  endif()
  return()
endif()

# ---- script mode: the test itself
foreach(var CHECK_REPORT TOOLS OUT)
  if(NOT ${var})
    message(FATAL_ERROR "report.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT ERL OR NOT EXISTS "${ERL}" OR NOT ERLC OR NOT EXISTS "${ERLC}")
  message(FATAL_ERROR "erl/erlc not found (erl='${ERL}', erlc='${ERLC}'): the fprof "
                      "consult check needs Erlang; install it with 'apt-get install erlang-base'")
endif()
foreach(src consult_check.erl verify_native.erl)
  if(NOT EXISTS "${TOOLS}/${src}")
    message(FATAL_ERROR "${TOOLS}/${src} not found: the shared docs directory "
                        "(../shared next to the repository) is missing")
  endif()
endforeach()

file(REMOVE_RECURSE "${OUT}")
file(MAKE_DIRECTORY "${OUT}/ebin")

execute_process(COMMAND "${CHECK_REPORT}" --write-samples "${OUT}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "check_report --write-samples ${OUT} failed (${rc})")
endif()
file(GLOB reports "${OUT}/*.txt")
list(LENGTH reports nr)
if(nr LESS 5)
  message(FATAL_ERROR "check_report wrote only ${nr} reports to ${OUT}")
endif()

execute_process(COMMAND "${ERLC}" -o "${OUT}/ebin" "${TOOLS}/consult_check.erl"
                        "${TOOLS}/verify_native.erl" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "erlc failed (${rc})")
endif()

execute_process(COMMAND "${ERL}" -noshell -pa "${OUT}/ebin" -run consult_check main ${reports}
                RESULT_VARIABLE rc OUTPUT_VARIABLE log ERROR_VARIABLE log)
message("${log}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "file:consult rejected a report (see above)")
endif()

foreach(f ${reports})
  execute_process(COMMAND "${ERL}" -noshell -pa "${OUT}/ebin" -run verify_native main "${f}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE log ERROR_VARIABLE log)
  message("${log}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "verify_native: ${f}: a marked row is not the sum of its callers")
  endif()
endforeach()
message("all ${nr} fprof reports consult and add up")
