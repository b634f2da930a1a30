// The device path of the distributed Euler step (euler_mpi.hpp): cuda_each of
// euler_mpi_ops.hpp, one thread per index on the executor's stream, instantiated for the
// operators DistributedEuler runs (fp32 / fp64, 2D / 3D).
#include <cuda_runtime.h>

#include <string>

#include "euler_mpi_ops.hpp"

namespace cfd {

namespace {
template <class Op>
__global__ void each_index_kernel(Op op, index_t count) {
  const index_t i = index_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) op(i);
}
}  // namespace

template <class Op>
void cuda_each(const Op& op, index_t count, void* stream) {
  if (count <= 0) return;
  constexpr int threads = 128;
  each_index_kernel<<<unsigned((count + threads - 1) / threads), threads, 0, static_cast<cudaStream_t>(stream)>>>(
      op, count);
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    throw adi::DeviceError(std::string("distributed CFD kernel launch failed: ") + cudaGetErrorString(e));
}

#define CFD_MPI_CUDA_INSTANCES(T, D)                                                                 \
  template void cuda_each<OnInterior<RhsOp<T, D>>>(const OnInterior<RhsOp<T, D>>&, index_t, void*);       \
  template void cuda_each<OnInterior<BlocksOp<T, D>>>(const OnInterior<BlocksOp<T, D>>&, index_t, void*); \
  template void cuda_each<OnInterior<UpdateOp<T, D>>>(const OnInterior<UpdateOp<T, D>>&, index_t, void*); \
  template void cuda_each<GatherPoints<T, D + 2>>(const GatherPoints<T, D + 2>&, index_t, void*);         \
  template void cuda_each<ScatterPoints<T, D + 2>>(const ScatterPoints<T, D + 2>&, index_t, void*);
CFD_MPI_CUDA_INSTANCES(float, 2)
CFD_MPI_CUDA_INSTANCES(float, 3)
CFD_MPI_CUDA_INSTANCES(double, 2)
CFD_MPI_CUDA_INSTANCES(double, 3)
#undef CFD_MPI_CUDA_INSTANCES

}  // namespace cfd
