#pragma once
// The per-index work of the distributed Euler step (euler_mpi.hpp) beyond euler.hpp's
// operators: an operator over the interior points of the ghosted local mesh, and the
// packing / unpacking of ghost layers. Host and device (CFD_HD); no MPI here, so that the
// device path (euler_mpi_cuda.cu, nvcc) compiles it. cuda_each runs one of them on a
// device, one thread per index, on the given stream; declared once through the kernel list
// (solvers/cuda/kernel_list.hpp): without CUDA its stand-in throws adi::Unsupported.
#include "euler.hpp"
#include "solvers/cuda/kernel_list.hpp"

namespace cfd {

// op(points[i]): euler.hpp's operators over the interior points only.
template <class Op>
struct OnInterior {
  Op op;
  const index_t* points;
  CFD_HD void operator()(index_t i) const { op(points[i]); }
};

// buf[k*M + v] = q[points[k]*M + v]: a ghost layer's send buffer (array of structures).
template <class T, int M>
struct GatherPoints {
  const T* q;
  const index_t* points;
  T* buf;
  CFD_HD void operator()(index_t k) const {
    for (int v = 0; v < M; ++v) buf[k * M + v] = q[points[k] * M + v];
  }
};

// q[points[k]*M + v] = buf[k*M + v]: a received ghost layer.
template <class T, int M>
struct ScatterPoints {
  T* q;
  const index_t* points;
  const T* buf;
  CFD_HD void operator()(index_t k) const {
    for (int v = 0; v < M; ++v) q[points[k] * M + v] = buf[k * M + v];
  }
};

ADI_CUDA_KERNELS_BEGIN
template <class Op>
ADI_CUDA_KERNEL(void cuda_each(const Op& op, index_t count, void* stream))
ADI_CUDA_KERNELS_END

}  // namespace cfd
