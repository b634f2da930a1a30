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
                 OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
                 OMPI_MCA_mpi_yield_when_idle=1)
# Every test that starts Open MPI holds the lock openmpi_session (also the one-rank CLI tests of
# tests/examples/cli_tests.cmake): Open MPI 4 fails in orte_init ("mkdir /tmp/ompi.<host>.<uid>:
# File exists") when two jobs create their session folder at the same moment.

add_library(adi_mpi_gtest_main OBJECT ${CMAKE_CURRENT_LIST_DIR}/mpi_main.cpp)
target_link_libraries(adi_mpi_gtest_main PRIVATE GTest::gtest MPI::MPI_CXX)

foreach(src ${ADI_MPI_TEST_SOURCES})
  get_filename_component(name ${src} NAME_WE)
  add_executable(${name} ${src} $<TARGET_OBJECTS:adi_mpi_gtest_main>)
  # examples/cfd: the distributed Euler step (euler_mpi.hpp) is tested here.
  target_include_directories(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_LIST_DIR}
                                             ${PROJECT_SOURCE_DIR}/examples/cfd)
  target_link_libraries(${name} PRIVATE adi::mpi adi::adi GTest::gtest MPI::MPI_CXX)
  if(ADI_WITH_CUDA AND name STREQUAL "test_distributed_euler")  # the CFD example's device kernels
    include(${PROJECT_SOURCE_DIR}/examples/cfd/cfd_mpi_cuda.cmake)
    target_sources(${name} PRIVATE $<TARGET_OBJECTS:adi_cfd_mpi_cuda>)
    target_link_libraries(${name} PRIVATE adi::cuda)
  endif()
  if(ADI_WITH_VTK AND name MATCHES "vtk")
    target_link_libraries(${name} PRIVATE VTK::CommonCore VTK::CommonDataModel VTK::IOXML)
  endif()
  foreach(np 1 2 3 4)
    add_test(NAME mpi_${name}_np${np}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${_adi_mpi_flags} ${MPIEXEC_PREFLAGS}
                     $<TARGET_FILE:${name}> ${MPIEXEC_POSTFLAGS})
    set_tests_properties(mpi_${name}_np${np} PROPERTIES TIMEOUT 180 ENVIRONMENT "${_adi_mpi_env}"
                                                      PROCESSORS ${np} LABELS mpi RESOURCE_LOCK openmpi_session)
  endforeach()
endforeach()

# Fields with 64-byte rows (ADI_FIELD_ROW_ALIGN=64: the padding before stop 39, which made
# 128-byte rows the default): the distributed AdiSolver's tests on 2 ranks (x splits among them) again.
if(TARGET test_distributed_adi)
  add_test(NAME mpi_test_distributed_adi_np2_row64
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${_adi_mpi_flags} ${MPIEXEC_PREFLAGS}
                   $<TARGET_FILE:test_distributed_adi> ${MPIEXEC_POSTFLAGS})
  set_tests_properties(mpi_test_distributed_adi_np2_row64 PROPERTIES TIMEOUT 180
                       ENVIRONMENT "${_adi_mpi_env};ADI_FIELD_ROW_ALIGN=64" PROCESSORS 2 LABELS mpi RESOURCE_LOCK openmpi_session)
endif()

# heat3d_mpi under mpiexec: the heat3d accuracy bound on 1..4 ranks and several process
# grids (the errors equal one rank's), every strategy, and bad input failing on every rank.
if(TARGET heat3d_mpi)
  function(adi_heat3d_mpi_test name np)
    add_test(NAME ${name} COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${_adi_mpi_flags}
                                  ${MPIEXEC_PREFLAGS} $<TARGET_FILE:heat3d_mpi> ${ARGN})
    set_tests_properties(${name} PROPERTIES TIMEOUT 120 ENVIRONMENT "${_adi_mpi_env}" PROCESSORS ${np} LABELS mpi RESOURCE_LOCK openmpi_session)
  endfunction()
  adi_heat3d_mpi_test(mpi_heat3d_np1 1 --n 17 --steps 8 --no-output --max-error 1.2e-3)
  adi_heat3d_mpi_test(mpi_heat3d_np2_x 2 --n 17 --steps 8 --procs 2x1x1 --no-output --max-error 1.2e-3)
  adi_heat3d_mpi_test(mpi_heat3d_np3_z 3 --n 17 --steps 8 --procs 1x1x3 --strategy pcr --no-output --max-error 1.2e-3)
  adi_heat3d_mpi_test(mpi_heat3d_np4_2x2 4 --n 17 --steps 8 --procs 2x2x1 --strategy alltoall --no-output
                      --max-error 1.2e-3)
  adi_heat3d_mpi_test(mpi_heat3d_np4_float 4 --n 17 --steps 8 --precision float --no-output --max-error 1.3e-3)
  # Any scheme distributed (one rank: max 1.171e-3 HV, 7.770e-4 MCS; PR 2D 33^2: 1.742e-4).
  adi_heat3d_mpi_test(mpi_heat3d_np2_hv 2 --n 17 --steps 8 --procs 1x2x1 --scheme hundsdorfer-verwer --no-output
                      --max-error 1.2e-3)
  adi_heat3d_mpi_test(mpi_heat3d_np3_mcs 3 --n 17 --steps 8 --procs 1x1x3 --scheme modified-craig-sneyd --no-output
                      --max-error 8e-4)
  adi_heat3d_mpi_test(mpi_heat3d_np2_pr_2d 2 --n 33 --nz 1 --procs 2x1x1 --scheme peaceman-rachford --no-output
                      --max-error 2e-4)
  adi_heat3d_mpi_test(mpi_heat3d_pr_3d 2 --n 9 --scheme peaceman-rachford --no-output)
  adi_heat3d_mpi_test(mpi_heat3d_bad_procs 2 --n 17 --procs 3x1x1 --no-output)
  adi_heat3d_mpi_test(mpi_heat3d_too_few_rows 4 --nx 7 --n 9 --procs 4x1x1 --no-output)
  set_tests_properties(mpi_heat3d_bad_procs mpi_heat3d_too_few_rows mpi_heat3d_pr_3d PROPERTIES WILL_FAIL TRUE)
  if(NOT ADI_WITH_CUDA)  # --memory device in a build without CUDA: every rank exits 2, nothing hangs
    adi_heat3d_mpi_test(mpi_heat3d_device_no_gpu 2 --n 9 --steps 2 --memory device --no-output)
    set_tests_properties(mpi_heat3d_device_no_gpu PROPERTIES WILL_FAIL TRUE)
  endif()
  if(ADI_WITH_VTK)
    adi_heat3d_mpi_test(mpi_heat3d_output 4 --n 13 --steps 4 --every 2 --procs 2x2x1
                        --output ${CMAKE_CURRENT_BINARY_DIR}/heat3d_mpi_test_out)
    set_tests_properties(mpi_heat3d_output PROPERTIES PASS_REGULAR_EXPRESSION "heat3d.pvd \\(3 frames\\)")
  endif()
endif()

# euler_vortex_mpi under mpiexec: the serial example's error bound (2D n = 48, t = 2:
# max density error 3.78e-2 on one rank) on several process grids and strategies, a 3D
# tube split along z, and a process grid that does not fit failing on every rank.
if(TARGET euler_vortex_mpi)
  function(adi_euler_mpi_test name np)
    add_test(NAME ${name} COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${_adi_mpi_flags}
                                  ${MPIEXEC_PREFLAGS} $<TARGET_FILE:euler_vortex_mpi> ${ARGN})
    set_tests_properties(${name} PROPERTIES TIMEOUT 180 ENVIRONMENT "${_adi_mpi_env}" PROCESSORS ${np} LABELS mpi RESOURCE_LOCK openmpi_session)
  endfunction()
  adi_euler_mpi_test(mpi_euler_vortex_np1 1 --n 48 --t-end 2 --threads 1 --max-error 5e-2)
  adi_euler_mpi_test(mpi_euler_vortex_np4_2x2 4 --n 48 --t-end 2 --procs 2x2x1 --threads 1 --max-error 5e-2)
  adi_euler_mpi_test(mpi_euler_vortex_np3_alltoall 3 --n 48 --t-end 2 --procs 1x3x1 --strategy alltoall --threads 1
                     --max-error 5e-2)
  adi_euler_mpi_test(mpi_euler_vortex_np2_3d 2 --dims 3 --n 24 --nz 6 --procs 1x1x2 --u0 0.5 --w0 1 --t-end 1
                     --threads 1 --max-error 0.1)
  adi_euler_mpi_test(mpi_euler_vortex_bad_procs 2 --n 24 --procs 3x1x1)
  set_tests_properties(mpi_euler_vortex_bad_procs PROPERTIES WILL_FAIL TRUE)
  if(ADI_WITH_CUDA)
    # --backend cuda, one GPU per rank (ranks share one where there are fewer): the same bound;
    # exit 77 (skipped) without a GPU.
    adi_euler_mpi_test(mpi_euler_vortex_np2_cuda 2 --n 48 --t-end 2 --procs 2x1x1 --backend cuda --max-error 5e-2)
    set_tests_properties(mpi_euler_vortex_np2_cuda PROPERTIES SKIP_RETURN_CODE 77)
  endif()
endif()
