// Without CUDA the device kernels of the distributed heat step do not exist: these stand
// in for solvers/cuda/heat_subdomain.cu so that adi::mpi links, and say so if reached
// (DistributedHeat and HaloExchange only call them for device fields, which a build
// without CUDA cannot create).
#ifndef ADI_MPI_HAVE_CUDA
#include <new>

#include "adi/error.hpp"
#include "solvers/cuda/heat_subdomain.hpp"

namespace adi::cuda_backend::heat_subdomain {

namespace {
[[noreturn]] void no_cuda() { throw Unsupported("adi was built without CUDA: no device heat kernels"); }
}  // namespace

index_t halo_count(const Box3&, int, int) { no_cuda(); }
template <class T>
void pack_halo(const T*, const Box3&, int, int, T*, void*) {
  no_cuda();
}
template <class T>
void unpack_halo(T*, const Box3&, int, int, const T*, const T*, void*) {
  no_cuda();
}
template <class T>
void heat_combine(const T*, T*, const Box3&, index_t, const index_t[3], const index_t[3], const T[3], bool, void*) {
  no_cuda();
}
template <class T>
void write_faces(T*, const Box3&, index_t, const FaceWrite*, int, const double*, const double*, bool, void*) {
  no_cuda();
}
// Plain memory: without CUDA nothing is staged (no device field exists).
void* pinned_alloc(std::size_t bytes) { return bytes ? ::operator new(bytes) : nullptr; }
void pinned_free(void* p) noexcept { ::operator delete(p); }

#define ADI_HEAT_MPI_STUB(T)                                                                                   \
  template void pack_halo<T>(const T*, const Box3&, int, int, T*, void*);                                      \
  template void unpack_halo<T>(T*, const Box3&, int, int, const T*, const T*, void*);                          \
  template void heat_combine<T>(const T*, T*, const Box3&, index_t, const index_t[3], const index_t[3],        \
                                const T[3], bool, void*);                                                      \
  template void write_faces<T>(T*, const Box3&, index_t, const FaceWrite*, int, const double*, const double*, \
                               bool, void*);
ADI_HEAT_MPI_STUB(float)
ADI_HEAT_MPI_STUB(double)
#undef ADI_HEAT_MPI_STUB

}  // namespace adi::cuda_backend::heat_subdomain
#endif
