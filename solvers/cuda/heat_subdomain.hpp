#pragma once
// The device kernels of the distributed heat step (adi/mpi/heat.cpp) and of the device
// halo exchange (adi/mpi/halo.cpp), seen from plain C++ (no CUDA header). Implemented in
// solvers/cuda/heat_subdomain.cu when adi is built with CUDA; without CUDA the same list
// (ADI_CUDA_KERNEL) throws Unsupported (a build without CUDA cannot create a device
// executor, so it is never reached).
//
// Fields are a rank's dense allocation (Box3 `all`, ghosts included, x fastest). Every
// call is enqueued on `stream` (a cudaStream_t; null: the default stream) and returns
// without waiting.
#include <cstddef>

#include "adi/base/layout.hpp"
#include "solvers/cuda/kernel_list.hpp"
#include <new>

namespace adi::cuda_backend::heat_subdomain {
ADI_CUDA_KERNELS_BEGIN


// The halo slabs of axis `axis` (ghost width g): the g planes starting at plane p, over the
// whole allocation of the other two axes (their ghosts included, so edges and corners
// travel). Packing order: q = (t * n2 + k) * n1 + j, (o1, o2) the other axes in order.
// pack_halo writes the first owned slab (p = g) to send[0, count) and the last (p = n - 2g)
// to send[count, 2 count); unpack_halo writes from_lo into the low ghosts (p = 0) and
// from_hi into the high ghosts (p = n - g); a null source leaves those ghosts as they are.
ADI_CUDA_KERNEL(index_t halo_count(const Box3& all, int axis, int g))
template <class T>
ADI_CUDA_KERNEL(void pack_halo(const T* f, const Box3& all, int axis, int g, T* send, void* stream))
template <class T>
ADI_CUDA_KERNEL(void unpack_halo(T* f, const Box3& all, int axis, int g, const T* from_lo, const T* from_hi, void* stream))

// The explicit part of a Douglas stage over the unknown nodes (local indices lo..hi per
// axis, `origin` the storage index of local node (0, 0, 0)):
//   w = (accumulate ? w : u) + sum_a coef[a] * (u[-s_a] - 2 u + u[+s_a])
// (coef[a] = 0 skips axis a; it reads one ghost layer of u along every axis it uses).
template <class T>
ADI_CUDA_KERNEL(void heat_combine(const T* u, T* w, const Box3& all, index_t origin, const index_t lo[3], const index_t hi[3],
                  const T coef[3], bool accumulate, void* stream))

// Dirichlet data on one face of this rank's box, evaluated on the host as a plane of
// doubles over the local in-plane indices plo[i] .. plo[i] + pn[i] - 1 of the two other
// axes (o1 < o2): the face's nodes plus one node on either side (the neighbours the stage
// correction's second differences read).
struct FacePlane {
  int axis = 0;           // the face's normal axis
  bool hi = false;        // the face at the axis's last node
  index_t plane = 0;      // the face's local index along `axis` (0 or extent - 1)
  index_t plo[3]{}, pn[3]{};  // per axis (entries of `axis` unused)
  index_t offset = 0;     // of the plane's first value in the buffer of planes
};

// Writes face planes into the field at its nodes of local in-plane indices from[i] ..
// to[i] (inclusive): value g_new (stage == false), or the stage value
//   g_new - sum_i weight[i] * (D2_i g_new - D2_i g_old)        (stage == true)
// with D2_i the second difference along in-plane axis i on the plane. `skip_lo/hi[i]`:
// leave the nodes at from[i] / to[i] to a later face (shared edges: the later face wins).
struct FaceWrite {
  FacePlane p;
  index_t from[3]{}, to[3]{};
  bool skip_lo[3]{}, skip_hi[3]{};
  double weight[3]{};
};
template <class T>
ADI_CUDA_KERNEL(void write_faces(T* f, const Box3& all, index_t origin, const FaceWrite* faces, int count, const double* g_new,
                 const double* g_old, bool stage, void* stream))

// Page-locked host memory (cudaMallocHost) for the staged halo slabs and face planes.
// pinned_free(nullptr) does nothing.
ADI_CUDA_KERNEL_OR(return bytes ? ::operator new(bytes) : nullptr;, void* pinned_alloc(std::size_t bytes))
ADI_CUDA_KERNEL_OR(::operator delete(p);, void pinned_free(void* p) noexcept)

ADI_CUDA_KERNELS_END
}  // namespace adi::cuda_backend::heat_subdomain
