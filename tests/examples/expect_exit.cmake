# Runs one command line and checks how it ends (used by tests/examples/cli_tests.cmake):
#   cmake -DEXPECT=<exit code> -DCOMMAND=<prog|arg|arg...> [-DMATCH=<regex>] [-DNOT_MATCH=<regex>]
#         -P expect_exit.cmake
# Passes when the exit code is EXPECT, the output (stdout + stderr) matches MATCH and not
# NOT_MATCH, and no message prints a number with 17 or more digits in a row (numbers go out as %g).
string(REPLACE "|" ";" _cmd "${COMMAND}")
execute_process(COMMAND ${_cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
set(_all "${out}${err}")
message("exit ${rc}\n--- stdout\n${out}--- stderr\n${err}---")
if(NOT rc STREQUAL "${EXPECT}")
  message(FATAL_ERROR "expected exit ${EXPECT}, got ${rc}")
endif()
if(DEFINED MATCH AND NOT MATCH STREQUAL "" AND NOT _all MATCHES "${MATCH}")
  message(FATAL_ERROR "output does not match '${MATCH}'")
endif()
if(DEFINED NOT_MATCH AND NOT NOT_MATCH STREQUAL "" AND _all MATCHES "${NOT_MATCH}")
  message(FATAL_ERROR "output matches '${NOT_MATCH}', which it must not")
endif()
if(_all MATCHES "[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]")
  message(FATAL_ERROR "a number printed with 17 or more digits (use %g)")
endif()
