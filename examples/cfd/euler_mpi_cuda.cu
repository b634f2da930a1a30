// The device path of the distributed Euler step (euler_mpi.hpp): cuda_each of
// euler_mpi_ops.hpp, one thread per index on the executor's stream, instantiated for the
// operators DistributedEuler runs (fp32 / fp64, 2D / 3D).
#include "cuda_launch.cuh"
#include "euler_mpi_ops.hpp"

namespace cfd {

template <class Op>
void cuda_each(const Op& op, index_t count, void* stream) {
  launch_each(op, count, static_cast<cudaStream_t>(stream));
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
