# Included from tests/CMakeLists.txt when ADI_WITH_MPI. One executable per
# tests/mpi/test_*.cpp with the MPI-aware main in mpi_main.cpp, registered as
# mpi_<name>_np<K> for K = 1..4 ranks.
find_package(MPI REQUIRED COMPONENTS CXX)
file(GLOB ADI_MPI_TEST_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/test_*.cpp)
if(NOT ADI_WITH_VTK)
  list(FILTER ADI_MPI_TEST_SOURCES EXCLUDE REGEX ".*vtk.*")
endif()

# Open MPI refuses root without --allow-run-as-root and, with 2 cores, 4 ranks without
# --oversubscribe; the same settings also go in as environment variables (they cover
# an mpiexec that is not Open MPI's: the flags are then left out).
execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _adi_mpiexec_version
                ERROR_QUIET RESULT_VARIABLE _adi_mpiexec_rc)
set(_adi_mpi_flags)
if(_adi_mpiexec_version MATCHES "Open MPI|OpenRTE")
  list(APPEND _adi_mpi_flags --oversubscribe)
  execute_process(COMMAND id -u OUTPUT_VARIABLE _adi_uid OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(_adi_uid STREQUAL "0")
    list(APPEND _adi_mpi_flags --allow-run-as-root)
  endif()
endif()
set(_adi_mpi_env OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
                 OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none)

add_library(adi_mpi_gtest_main OBJECT ${CMAKE_CURRENT_LIST_DIR}/mpi_main.cpp)
target_link_libraries(adi_mpi_gtest_main PRIVATE GTest::gtest MPI::MPI_CXX)

foreach(src ${ADI_MPI_TEST_SOURCES})
  get_filename_component(name ${src} NAME_WE)
  add_executable(${name} ${src} $<TARGET_OBJECTS:adi_mpi_gtest_main>)
  target_include_directories(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(${name} PRIVATE adi::mpi adi::adi GTest::gtest MPI::MPI_CXX)
  if(ADI_WITH_VTK AND name MATCHES "vtk")
    target_link_libraries(${name} PRIVATE VTK::CommonCore VTK::CommonDataModel VTK::IOXML)
  endif()
  foreach(np 1 2 3 4)
    add_test(NAME mpi_${name}_np${np}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${_adi_mpi_flags} ${MPIEXEC_PREFLAGS}
                     $<TARGET_FILE:${name}> ${MPIEXEC_POSTFLAGS})
    set_tests_properties(mpi_${name}_np${np} PROPERTIES TIMEOUT 180 ENVIRONMENT "${_adi_mpi_env}"
                                                      PROCESSORS ${np} LABELS mpi)
  endforeach()
endforeach()
