cmake_minimum_required(VERSION 3.20)
# One core per recurrence (docs/design.md, "Where each algorithm's one core lives"), checked on
# the sources (cmake -DSRC=<root> -P ...): the Thomas elimination spelled out,
#     (d - a * d*) * r      or      1 / (b - a * c*),
# may appear only in its core, solvers/common/thomas_core.hpp, and in the plain fp64 test
# oracle solvers/reference/ (independent on purpose). Every other loop calls the core
# (common::thomas_pivot, thomas_eliminate, ...). The few places listed in `known` carry
# another algorithm whose lines look alike, or belong to a family that has not moved to the
# core yet; a new hit anywhere else fails the test.
set(elimination "\\([^()]* - [^()]*\\*[^()]*\\) \\* [A-Za-z_]+;")
set(pivot "(T\\(1\\)|one|1\\.0) / \\([^()]* - [^()]*\\* ")
set(cores solvers/common/thomas_core.hpp)
set(known
    # The Hines tree elimination (solvers/*/hines*): a different algorithm.
    "solvers/cuda/hines.cuh:"
    # The option chain's Brennan-Schwartz sweeps (owned by the finance family; to move to
    # thomas_core.hpp with it), and its grid weights.
    "solvers/cuda/option_chain.cu:"
    "solvers/cuda/option_chain_warp.hpp:"
    "adi/finance/chain.cpp:")
set(problems "")
file(GLOB_RECURSE files RELATIVE ${SRC} ${SRC}/solvers/*.hpp ${SRC}/solvers/*.cpp ${SRC}/solvers/*.cu
     ${SRC}/solvers/*.cuh ${SRC}/adi/*.hpp ${SRC}/adi/*.cpp)
foreach(f ${files})
  if(f MATCHES "^solvers/reference/" OR f IN_LIST cores)
    continue()
  endif()
  file(STRINGS ${SRC}/${f} lines REGEX "${elimination}|${pivot}")
  foreach(l ${lines})
    if(l MATCHES "^[ \t]*//")
      continue()
    endif()
    set(listed FALSE)
    foreach(k ${known})
      if("${f}:${l}" MATCHES "^${k}")
        set(listed TRUE)
      endif()
    endforeach()
    if(NOT listed)
      string(STRIP "${l}" l)
      string(APPEND problems "\n  ${f}: ${l}")
    endif()
  endforeach()
endforeach()
if(problems)
  message(FATAL_ERROR "The Thomas recurrence spelled out outside its core (call solvers/common/"
                      "thomas_core.hpp instead):${problems}")
endif()
message(STATUS "check_cores: the Thomas recurrence lives only in solvers/common/thomas_core.hpp "
               "(and the reference oracle)")
