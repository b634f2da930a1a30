# Readable CTest names (issue 15, item 9): no "# GetParam() = ..." or hex dump of a
# parameter's bytes, and no value-parameterised test named only by its index (".../3").
# Value-parameterised suites take a name generator (tests/param_name.hpp), and tests/
# CMakeLists.txt discovers them with NO_PRETTY_VALUES. Typed suites read Suite.Test<float>.
#   cmake -DBIN=<build dir> -P check_test_names.cmake
execute_process(COMMAND ${CMAKE_CTEST_COMMAND} -N WORKING_DIRECTORY ${BIN} OUTPUT_VARIABLE listing
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "check_test_names: ctest -N failed in ${BIN}")
endif()
string(REPLACE "\n" ";" lines "${listing}")
set(bad "")
set(count 0)
foreach(line IN LISTS lines)
  if(line MATCHES "Test +#[0-9]+: (.*)$")
    set(name "${CMAKE_MATCH_1}")
    math(EXPR count "${count} + 1")
    if(name MATCHES "GetParam\\(\\)|TypeParam =|-byte object|/[0-9]+$|/[0-9]+ ")
      string(APPEND bad "\n  ${name}")
    endif()
  endif()
endforeach()
if(bad)
  message(FATAL_ERROR "check_test_names: tests named by an index or a hex dump (give the suite a name "
                      "generator, tests/param_name.hpp):${bad}")
endif()
message(STATUS "check_test_names: ${count} test names, all readable")
