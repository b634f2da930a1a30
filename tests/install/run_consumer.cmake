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
execute_process(COMMAND ${CMAKE_COMMAND} -S ${ADI_SOURCE}/tests/install/consumer -B ${WORK}/build
                        -DCMAKE_PREFIX_PATH=${WORK}/prefix -DCMAKE_BUILD_TYPE=Release
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "configuring the consumer with find_package(adi) failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK}/build RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "building the consumer failed (${rc})")
endif()
execute_process(COMMAND ${WORK}/build/consumer RESULT_VARIABLE rc OUTPUT_VARIABLE out)
message(STATUS "${out}")
if(rc)
  message(FATAL_ERROR "the consumer failed (${rc})")
endif()
