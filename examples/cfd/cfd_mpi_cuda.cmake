# The device kernels of the distributed CFD step (examples/cfd/euler_mpi_cuda.cu) as the
# object library adi_cfd_mpi_cuda, defined once, by whichever of examples/cfd and
# tests/mpi comes first (either may be built without the other). CUDA builds only.
if(ADI_WITH_CUDA AND NOT TARGET adi_cfd_mpi_cuda)
  add_library(adi_cfd_mpi_cuda OBJECT ${CMAKE_CURRENT_LIST_DIR}/euler_mpi_cuda.cu)
  target_link_libraries(adi_cfd_mpi_cuda PRIVATE adi::adi)
  set_target_properties(adi_cfd_mpi_cuda PROPERTIES CUDA_STANDARD 17)  # else CMake asks nvcc for CUDA20
  # CMake 3.25 does not pass CUDA_STANDARD to nvcc 13: say C++17 ourselves.
  target_compile_options(adi_cfd_mpi_cuda PRIVATE -std=c++17 --expt-relaxed-constexpr -lineinfo)
endif()
