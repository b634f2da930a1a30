# Installs the already-built adi into a scratch prefix, then configures, builds and
# runs tests/install/consumer against it with find_package(adi).
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${ADI_BINARY} --prefix ${WORK}/prefix
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
# Only public headers are installed: no kernels (solvers/), no internal detail headers.
file(GLOB_RECURSE internal ${WORK}/prefix/include/solvers/* ${WORK}/prefix/include/adi/detail/*
     ${WORK}/prefix/include/adi/*_detail.hpp)
if(internal)
  message(FATAL_ERROR "internal headers were installed: ${internal}")
endif()
file(GLOB_RECURSE configs ${WORK}/prefix/*adiConfig.cmake ${WORK}/prefix/*adiTargets.cmake)
foreach(f ${configs})
  file(READ "${f}" config)
  if(config MATCHES "find_dependency\\(Eigen|Eigen3::")
    message(FATAL_ERROR "${f} asks for Eigen, a private dependency of adi")
  endif()
endforeach()
# Configures, builds and runs one consumer project (folder tests/install/<name>) against the prefix.
function(run_consumer name exe what)
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${ADI_SOURCE}/tests/install/${name} -B ${WORK}/build_${name}
                          -DCMAKE_PREFIX_PATH=${WORK}/prefix -DCMAKE_BUILD_TYPE=Release RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "configuring ${what} with find_package(adi) failed (${rc})")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK}/build_${name} RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "building ${what} failed (${rc})")
  endif()
  execute_process(COMMAND ${WORK}/build_${name}/${exe} RESULT_VARIABLE rc OUTPUT_VARIABLE out)
  message(STATUS "${out}")
  if(rc)
    message(FATAL_ERROR "${what} failed (${rc})")
  endif()
endfunction()

run_consumer(consumer consumer "the consumer")
# The C API from a C-only project (project LANGUAGES C; when adi was built with the C API).
if(EXISTS ${WORK}/prefix/include/adi/adi_c.h)
  run_consumer(consumer_c c_consumer "the C consumer")
endif()
