#pragma once
// The device side of the halo exchanges of adi/mpi (HaloExchange of a LocalField, the
// exchange of an Operator's piece in adi/mpi/subdomain.cpp), seen from plain C++ (no CUDA
// header): copies between planes of a field and a packed buffer, and page-locked host
// memory for the staged slabs. Implemented in solvers/cuda/halo_planes.cu when adi is built
// with CUDA; without CUDA the same list (ADI_CUDA_KERNEL) throws Unsupported (a build
// without CUDA cannot create a device executor, so it is never reached).
//
// A slab: the g planes along `axis` starting at plane p, over the whole allocation of the
// other two axes (their ghosts included, so edges and corners travel when the axes are
// exchanged one after the other). Packing order: q = (t * n2 + k) * n1 + j, (o1, o2) the
// other axes in order; plane_count(all, axis, g) values. Every call is enqueued on `stream`
// (a cudaStream_t; null: the default stream) and returns without waiting.
#include <cstddef>
#include <new>

#include "adi/base/layout.hpp"
#include "solvers/cuda/kernel_list.hpp"

namespace adi::cuda_backend::halo {

inline index_t slab_count(const Box3& all, int axis, int g) {
  return all.size() / all.extent(Axis(axis)) * index_t(g);
}

ADI_CUDA_KERNELS_BEGIN

template <class T>
ADI_CUDA_KERNEL(void pack_slab(const T* f, const Box3& all, int axis, index_t p, int g, T* buf, void* stream))
template <class T>
ADI_CUDA_KERNEL(void unpack_slab(T* f, const Box3& all, int axis, index_t p, int g, const T* buf, void* stream))

// Page-locked host memory (cudaMallocHost). pinned_free(nullptr) does nothing.
ADI_CUDA_KERNEL_OR(return bytes ? ::operator new(bytes) : nullptr;, void* pinned_alloc(std::size_t bytes))
ADI_CUDA_KERNEL_OR(::operator delete(p);, void pinned_free(void* p) noexcept)

ADI_CUDA_KERNELS_END
}  // namespace adi::cuda_backend::halo
