# Report writer checks that need external readers:
#   unit/writers_callgrind_annotate: callgrind_annotate (valgrind) must read every
#     Callgrind file check_writers writes without a warning, and for the files that
#     come with a .expected list show exactly the inclusive figures, totals and call
#     counts worked out from the profile by fprof's rules.
#   unit/writers_cprof_consult: Erlang's file:consult/1 must read every cprof report
#     (consult_check.erl from ../shared/docs/format-samples/tools), the terms must
#     have cprof's shape and add up, and awkward names must read back as written.
#
# Included by tests/CMakeLists.txt, this file registers the tests; run with
# "cmake -P" (by those tests, -DCHECK=annotate|consult), it does the checking, on the
# reports of "check_writers --write-samples DIR" (tests/unit/check_writers.c).
# A missing tool fails the test with a message; it never skips.

if(NOT CMAKE_SCRIPT_MODE_FILE)
  find_program(CT_CALLGRIND_ANNOTATE callgrind_annotate)
  find_program(CT_ERL erl)
  find_program(CT_ERLC erlc)
  if(NOT CT_CALLGRIND_ANNOTATE)
    message(WARNING "callgrind_annotate not found: test unit/writers_callgrind_annotate "
                    "will fail (apt-get install valgrind)")
  endif()
  if(TARGET check_writers)
    add_test(NAME unit/writers_callgrind_annotate
      COMMAND ${CMAKE_COMMAND} -DCHECK=annotate
        -DCHECK_WRITERS=$<TARGET_FILE:check_writers>
        -DANNOTATE=${CT_CALLGRIND_ANNOTATE}
        -DOUT=${CMAKE_CURRENT_BINARY_DIR}/writers-annotate
        -P ${CMAKE_CURRENT_LIST_FILE})
    add_test(NAME unit/writers_cprof_consult
      COMMAND ${CMAKE_COMMAND} -DCHECK=consult
        -DCHECK_WRITERS=$<TARGET_FILE:check_writers>
        -DERL=${CT_ERL} -DERLC=${CT_ERLC}
        -DTOOLS=${PROJECT_SOURCE_DIR}/../shared/docs/format-samples/tools
        -DOUT=${CMAKE_CURRENT_BINARY_DIR}/writers-consult
        -P ${CMAKE_CURRENT_LIST_FILE})
    set_tests_properties(unit/writers_callgrind_annotate unit/writers_cprof_consult
      PROPERTIES LABELS unit TIMEOUT 120)
  endif()
  return()
endif()

# ---- script mode: the tests themselves
foreach(var CHECK CHECK_WRITERS OUT)
  if(NOT ${var})
    message(FATAL_ERROR "writers.cmake: -D${var}=... is required")
  endif()
endforeach()

file(REMOVE_RECURSE "${OUT}")
file(MAKE_DIRECTORY "${OUT}")
execute_process(COMMAND "${CHECK_WRITERS}" --write-samples "${OUT}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "check_writers --write-samples ${OUT} failed (${rc})")
endif()

if(CHECK STREQUAL "annotate")
  if(NOT ANNOTATE OR NOT EXISTS "${ANNOTATE}")
    message(FATAL_ERROR "callgrind_annotate not found (ANNOTATE='${ANNOTATE}'): this test "
                        "needs it; install it with 'apt-get install valgrind'")
  endif()
  file(GLOB files "${OUT}/callgrind.out.*")
  list(FILTER files EXCLUDE REGEX "\\.expected$")
  list(LENGTH files nr)
  if(nr LESS 6)
    message(FATAL_ERROR "check_writers wrote only ${nr} Callgrind files to ${OUT}")
  endif()
  set(nr_compared 0)
  foreach(f ${files})
    get_filename_component(base "${f}" NAME)
    execute_process(COMMAND "${ANNOTATE}" --inclusive=yes --threshold=100 --tree=calling
                            --auto=no "${f}"
                    RESULT_VARIABLE rc OUTPUT_FILE "${f}.annotate" ERROR_VARIABLE err)
    if(NOT rc EQUAL 0 OR NOT err STREQUAL "")
      message(FATAL_ERROR "callgrind_annotate rejected ${f} (exit ${rc}):\n${err}")
    endif()
    if(NOT EXISTS "${f}.expected")
      message("${base}: read by callgrind_annotate without a warning")
      continue()
    endif()

    # Turn its output into the lines of the .expected file:
    #   T total / F inclusive file:function [object] / C calls caller > callee
    file(STRINGS "${f}.annotate" lines)
    set(got "")
    set(current "")
    foreach(line IN LISTS lines)
      if(line MATCHES "^ *([0-9,]+) .*PROGRAM TOTALS")
        string(REPLACE "," "" n "${CMAKE_MATCH_1}")
        list(APPEND got "T ${n}")
      elseif(line MATCHES "^ *([0-9,]+)[^*>]*\\*  (.*)$")
        string(REPLACE "," "" n "${CMAKE_MATCH_1}")
        set(current "${CMAKE_MATCH_2}")
        if(NOT n EQUAL 0)
          list(APPEND got "F ${n} ${current}")
        endif()
      elseif(line MATCHES "^ *([0-9,]+)[^*>]*>   (.*) \\(([0-9]+)x\\) (.*)$")
        list(APPEND got "C ${CMAKE_MATCH_3} ${current} > ${CMAKE_MATCH_2} ${CMAKE_MATCH_4}")
      endif()
    endforeach()
    file(STRINGS "${f}.expected" want)
    list(SORT got)
    list(SORT want)
    if(NOT got STREQUAL want)
      string(REPLACE ";" "\n  " got_text "${got}")
      string(REPLACE ";" "\n  " want_text "${want}")
      message(FATAL_ERROR "${base}: callgrind_annotate shows other figures than the "
                          "profile's\n got:\n  ${got_text}\n want:\n  ${want_text}")
    endif()
    list(LENGTH got nr_lines)
    message("${base}: callgrind_annotate shows the expected ${nr_lines} figures")
    math(EXPR nr_compared "${nr_compared} + 1")
  endforeach()
  if(nr_compared LESS 5)
    message(FATAL_ERROR "only ${nr_compared} Callgrind files had expected figures")
  endif()
  message("all ${nr} Callgrind files read by callgrind_annotate, ${nr_compared} with "
          "the expected inclusive figures and call counts")

elseif(CHECK STREQUAL "consult")
  if(NOT ERL OR NOT EXISTS "${ERL}" OR NOT ERLC OR NOT EXISTS "${ERLC}")
    message(FATAL_ERROR "erl/erlc not found (erl='${ERL}', erlc='${ERLC}'): the cprof "
                        "consult check needs Erlang; install it with 'apt-get install erlang-base'")
  endif()
  if(NOT EXISTS "${TOOLS}/consult_check.erl")
    message(FATAL_ERROR "${TOOLS}/consult_check.erl not found: the shared docs directory "
                        "(../shared next to the repository) is missing")
  endif()
  file(MAKE_DIRECTORY "${OUT}/ebin")
  execute_process(COMMAND "${ERLC}" -o "${OUT}/ebin" "${TOOLS}/consult_check.erl"
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "erlc failed (${rc})")
  endif()
  file(GLOB reports "${OUT}/cprof_*.txt")
  list(LENGTH reports nr)
  if(nr LESS 7)
    message(FATAL_ERROR "check_writers wrote only ${nr} cprof reports to ${OUT}")
  endif()
  execute_process(COMMAND "${ERL}" -noshell -pa "${OUT}/ebin" -run consult_check main ${reports}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE log ERROR_VARIABLE log)
  message("${log}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "file:consult rejected a cprof report (see above)")
  endif()

  # Shape and sums of every report: {All, [{M, MCount, [{{M,F,A}, N}]}]} with All the
  # sum of the module counts, each module count at least the sum of its listed
  # functions, descending module counts; names read back as written.
  set(check [=[
Name = fun(X) -> is_atom(X) orelse (is_list(X) andalso length(X) > 255) end,
Check = fun(F) ->
    {ok, [{All, Mods}]} = file:consult(F),
    All = lists:sum([C || {_, C, _} <- Mods]),
    Counts = [C || {_, C, _} <- Mods],
    Counts = lists:reverse(lists:sort(Counts)),
    lists:foreach(fun({M, C, Fs}) ->
        true = Name(M) andalso C > 0,
        true = C >= lists:sum([N || {_, N} <- Fs]),
        lists:foreach(fun({{M2, Fn, A}, N}) ->
            M2 = M, true = Name(Fn), true = is_integer(A) andalso is_integer(N)
        end, Fs)
    end, Mods),
    Fns = [Fn || {_, _, Fs} <- Mods, {{_, Fn, _}, _} <- Fs],
    case filename:basename(F) of
        "cprof_names.txt" ->
            Want = ['new\nline', 'it\'s', 'back\\slash', 'tab\there', 'dq"x', maybe,
                    'Upper', '', 'semi;colon', '(12)paren', lists:duplicate(300, $x)],
            [] = Want -- Fns,
            true = lists:keymember(lists:duplicate(300, $x), 1, Mods);
        "cprof_demo.txt" ->
            {203, [{demo, 199, [{{demo, fib, 1}, 177} | _]}, {'libc.so.6', 4, _}]} = {All, Mods};
        _ -> ok
    end,
    io:format("~s: ~w calls in ~w modules, adds up~n", [filename:basename(F), All, length(Mods)])
end,
lists:foreach(Check, init:get_plain_arguments()),
halt(0).
]=])
  string(REPLACE "\n" " " check "${check}")
  execute_process(COMMAND "${ERL}" -noshell -env ERL_CRASH_DUMP_SECONDS 0 -eval "${check}"
                          -extra ${reports}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE log ERROR_VARIABLE log)
  message("${log}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "a cprof report does not have cprof's shape or does not add up "
                        "(see above)")
  endif()
  message("all ${nr} cprof reports consult and add up")

else()
  message(FATAL_ERROR "writers.cmake: unknown -DCHECK=${CHECK}")
endif()
