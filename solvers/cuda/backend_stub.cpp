// The CUDA backend of a build without CUDA: no devices, every device call throws.
#include "adi/error.hpp"
#include "solvers/cuda/backend.hpp"

namespace adi::cuda_backend {
namespace {
[[noreturn]] void no_cuda() {
  throw Unsupported("adi was built without CUDA; rebuild with -DADI_WITH_CUDA=ON or use Executor::host()");
}
}  // namespace

bool compiled() { return false; }
int device_count() { return 0; }
void set_device(int) { no_cuda(); }
void* allocate(std::size_t, int) { no_cuda(); }
void deallocate(void*) noexcept {}
void copy(void*, const void*, std::size_t, Copy) { no_cuda(); }
void memset_zero(void*, std::size_t) { no_cuda(); }
void synchronize(void*) {}
bool is_device_pointer(const void*) { return false; }
DeviceInfo device_info(int) { no_cuda(); }
std::size_t tridiagonal_workspace_bytes(Kernel, const LineSet&, bool, std::size_t) { no_cuda(); }
std::size_t tridiagonal_min_shared_bytes(Kernel, const LineSet&, bool, std::size_t) { return 0; }
template <class T>
void tridiagonal_solve(Kernel, const LineSet&, BandView<T>, const T*, T*, bool, void*, int*, void*) {
  no_cuda();
}
template <class T>
void tridiagonal_solve_tuned(Kernel, const LineSet&, BandView<T>, const T*, T*, bool, void*, int*, void*,
                             const Tuning&) {
  no_cuda();
}
template void tridiagonal_solve_tuned<float>(Kernel, const LineSet&, BandView<float>, const float*, float*,
                                             bool, void*, int*, void*, const Tuning&);
template void tridiagonal_solve_tuned<double>(Kernel, const LineSet&, BandView<double>, const double*,
                                              double*, bool, void*, int*, void*, const Tuning&);
template void tridiagonal_solve<float>(Kernel, const LineSet&, BandView<float>, const float*, float*, bool,
                                       void*, int*, void*);
template void tridiagonal_solve<double>(Kernel, const LineSet&, BandView<double>, const double*, double*,
                                        bool, void*, int*, void*);
}  // namespace adi::cuda_backend
