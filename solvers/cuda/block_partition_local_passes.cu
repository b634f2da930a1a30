// Device block partition passes: the dispatch on the runtime block size, both precisions
// (the kernels: generated units, see block_partition_launch.cuh).
#include "solvers/cuda/block_partition_launch.cuh"

namespace adi::cuda_backend::block_partition {

template void reduce<float>(const BlockLineSet&, const float*, const float*, const float*, const float*, float*,
                             const Workspace<float>&, float*, float, bool, bool, void*);
template void back_substitute<float>(const BlockLineSet&, const Workspace<float>&, const float*, float*, void*);
template void reduce<double>(const BlockLineSet&, const double*, const double*, const double*, const double*,
                             double*, const Workspace<double>&, double*, double, bool, bool, void*);
template void back_substitute<double>(const BlockLineSet&, const Workspace<double>&, const double*, double*, void*);

void copy_rows(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
               std::size_t rows, void* stream) {
  if (rows == 0 || width == 0) return;
  ADI_CUDA_CHECK(cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, rows, cudaMemcpyDeviceToDevice,
                                   static_cast<cudaStream_t>(stream)));
}

}  // namespace adi::cuda_backend::block_partition
