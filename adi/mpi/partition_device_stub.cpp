// Without CUDA the device passes of the partition method do not exist: these stand in
// for solvers/cuda/partition_local_passes.cu so that adi::mpi links, and say so if reached
// (DistributedTridiagonalPlan only calls them for a CUDA executor, which a build without
// CUDA cannot create).
#ifndef ADI_MPI_HAVE_CUDA
#include <new>

#include "adi/error.hpp"
#include "solvers/cuda/partition_local_passes.hpp"

namespace adi::cuda_backend::partition {

namespace {
[[noreturn]] void no_cuda() { throw Unsupported("adi was built without CUDA: no device partition passes"); }
}  // namespace

template <class T>
void reduce(const LineSet&, const T*, const T*, const T*, bool, const T*, T*, const Workspace<T>&, T*, bool, bool,
            void*) {
  no_cuda();
}
template <class T>
void back_substitute(const LineSet&, const Workspace<T>&, const T*, T*, int*, void*) {
  no_cuda();
}
template <class T>
void solve_reduced(index_t, int, bool, const T*, index_t, index_t, T*, int, T*, index_t, index_t, void*) {
  no_cuda();
}
void copy_async(void*, const void*, std::size_t, void*) { no_cuda(); }
void clear_flag_async(int*, void*) { no_cuda(); }
void* event_create() { no_cuda(); }
void event_destroy(void*) noexcept {}
void event_record(void*, void*) { no_cuda(); }
double event_seconds(void*, void*) { return 0.0; }
std::string pci_bus_id(int) { return {}; }
// Plain memory: without CUDA nothing is staged (no device executor exists).
void* pinned_alloc(std::size_t bytes) { return ::operator new(bytes); }
void pinned_free(void* p) noexcept { ::operator delete(p); }

template void reduce<float>(const LineSet&, const float*, const float*, const float*, bool, const float*, float*,
                            const Workspace<float>&, float*, bool, bool, void*);
template void reduce<double>(const LineSet&, const double*, const double*, const double*, bool, const double*,
                             double*, const Workspace<double>&, double*, bool, bool, void*);
template void back_substitute<float>(const LineSet&, const Workspace<float>&, const float*, float*, int*, void*);
template void back_substitute<double>(const LineSet&, const Workspace<double>&, const double*, double*, int*, void*);
template void solve_reduced<float>(index_t, int, bool, const float*, index_t, index_t, float*, int, float*, index_t,
                                   index_t, void*);
template void solve_reduced<double>(index_t, int, bool, const double*, index_t, index_t, double*, int, double*,
                                    index_t, index_t, void*);

}  // namespace adi::cuda_backend::partition
#endif
