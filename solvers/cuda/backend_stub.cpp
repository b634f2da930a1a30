// The CUDA backend of a build without CUDA: no devices, every device call throws.
#include "adi/base/error.hpp"
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
int current_device() { no_cuda(); }
void* allocate(std::size_t, int) { no_cuda(); }
void deallocate(void*) noexcept {}
void copy(void*, const void*, std::size_t, Copy) { no_cuda(); }
void memset_zero(void*, std::size_t) { no_cuda(); }
void memset_zero_async(void*, std::size_t, void*) { no_cuda(); }
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
template <class T>
void variable_pack(const VariableBatchView&, VariableSource, const T*, T*, bool, void*) {
  no_cuda();
}
template void variable_pack<float>(const VariableBatchView&, VariableSource, const float*, float*, bool, void*);
template void variable_pack<double>(const VariableBatchView&, VariableSource, const double*, double*, bool,
                                    void*);
template void variable_pack<int>(const VariableBatchView&, VariableSource, const int*, int*, bool, void*);
template void variable_pack<index_t>(const VariableBatchView&, VariableSource, const index_t*, index_t*, bool,
                                     void*);
std::size_t variable_tridiagonal_workspace_bytes(VariableKernel, const VariableBatchView&, index_t, bool,
                                                 std::size_t) {
  no_cuda();
}
template <class T>
void variable_tridiagonal_solve(VariableKernel, const VariableBatchView&, const VariableDeviceArrays<T>&, bool, void*,
                                int*, void*) {
  no_cuda();
}
template void variable_tridiagonal_solve<float>(VariableKernel, const VariableBatchView&,
                                                const VariableDeviceArrays<float>&, bool, void*, int*, void*);
template void variable_tridiagonal_solve<double>(VariableKernel, const VariableBatchView&,
                                                 const VariableDeviceArrays<double>&, bool, void*, int*, void*);
template <class T>
void cholesky_vbatched_factor(const VariableBatchView&, const CholeskyRange&, T* const*, const int*, int*, void*) {
  no_cuda();
}
template <class T>
void cholesky_vbatched_solve(const VariableBatchView&, const T* const*, const int*, T* const*, const int*, int,
                             const int*, void*) {
  no_cuda();
}
template <class T>
void cholesky_pointers(T*, const index_t*, index_t, T**, void*) {
  no_cuda();
}
template void cholesky_vbatched_factor<float>(const VariableBatchView&, const CholeskyRange&, float* const*,
                                              const int*, int*, void*);
template void cholesky_vbatched_factor<double>(const VariableBatchView&, const CholeskyRange&, double* const*,
                                               const int*, int*, void*);
template void cholesky_vbatched_solve<float>(const VariableBatchView&, const float* const*, const int*,
                                             float* const*, const int*, int, const int*, void*);
template void cholesky_vbatched_solve<double>(const VariableBatchView&, const double* const*, const int*,
                                              double* const*, const int*, int, const int*, void*);
template void cholesky_pointers<float>(float*, const index_t*, index_t, float**, void*);
template void cholesky_pointers<double>(double*, const index_t*, index_t, double**, void*);
void* side_stream_create(int) { no_cuda(); }
void side_stream_destroy(void*) noexcept {}
void* side_event_create(int) { no_cuda(); }
void side_event_destroy(void*) noexcept {}
void side_event_record(void*, void*) { no_cuda(); }
void side_stream_wait(void*, void*) { no_cuda(); }
std::size_t block_tridiagonal_workspace_bytes(BlockKernel, const BlockLineSet&, bool, std::size_t) { no_cuda(); }
template <class T>
void block_tridiagonal_solve(BlockKernel, const BlockLineSet&, const T*, const T*, const T*, const T*, T*, double,
                             bool, void*, unsigned long long*, void*) {
  no_cuda();
}
template void block_tridiagonal_solve<float>(BlockKernel, const BlockLineSet&, const float*, const float*,
                                             const float*, const float*, float*, double, bool, void*,
                                             unsigned long long*, void*);
template void block_tridiagonal_solve<double>(BlockKernel, const BlockLineSet&, const double*, const double*,
                                              const double*, const double*, double*, double, bool, void*,
                                              unsigned long long*, void*);
std::size_t allocation_count() { return 0; }
void* event_create() { no_cuda(); }
void event_destroy(void*) noexcept {}
void event_record(void*, void*) { no_cuda(); }
bool event_done(void*) { no_cuda(); }
double event_elapsed_ms(void*, void*) { no_cuda(); }
void copy_on_stream(void*, const void*, std::size_t, Copy, void*) { no_cuda(); }
bool fused_stage_supported(const LineSet&) { return false; }
template <class T>
void stencil_apply(const adi::detail::StencilView<T>&, const adi::detail::ApplyArgs<T>&, void*) {
  no_cuda();
}
template <class T>
void stencil_face(T*, const Box3&, const adi::detail::FaceRegion&, const T*, T, bool, void*) {
  no_cuda();
}
template <class T>
void stencil_face_apply(const adi::detail::StencilView<T>&, const adi::detail::FaceRegion&, const T*,
                        const std::array<T, 3>&, const std::array<std::array<const T*, 2>, 3>&, const T*, T, T*,
                        bool, void*) {
  no_cuda();
}
template <class T>
void stencil_diagonal(const T*, T, T*, index_t, void*) {
  no_cuda();
}
template <class T>
void stencil_faces(T*, const Box3&, const FaceWrite<T>*, int, void*) {
  no_cuda();
}
template <class T>
void stage_face_values(const adi::detail::StencilView<T>&, const adi::detail::FaceRegion&, const T*, const T*,
                       const std::array<T, 3>&, const std::array<std::array<const T*, 2>, 3>&,
                       const std::array<std::array<const T*, 2>, 3>&, const T*, const T*, T, T*, void*) {
  no_cuda();
}
template <class T>
void fused_stage_solve(const FusedStage<T>&, int*, void*) {
  no_cuda();
}
template <class T>
void fused_stage_solve_tuned(const FusedStage<T>&, int*, void*, const FusedTuning&) {
  no_cuda();
}
#define ADI_CUDA_STUB_STENCILS(T)                                                                           \
  template void stencil_apply<T>(const adi::detail::StencilView<T>&, const adi::detail::ApplyArgs<T>&, void*); \
  template void stencil_face<T>(T*, const Box3&, const adi::detail::FaceRegion&, const T*, T, bool, void*);   \
  template void stencil_face_apply<T>(const adi::detail::StencilView<T>&, const adi::detail::FaceRegion&,     \
                                      const T*, const std::array<T, 3>&,                                      \
                                      const std::array<std::array<const T*, 2>, 3>&, const T*, T, T*, bool,   \
                                      void*);                                                                 \
  template void stencil_diagonal<T>(const T*, T, T*, index_t, void*);                                         \
  template void stencil_faces<T>(T*, const Box3&, const FaceWrite<T>*, int, void*);                           \
  template void stage_face_values<T>(const adi::detail::StencilView<T>&, const adi::detail::FaceRegion&,      \
                                     const T*, const T*, const std::array<T, 3>&,                             \
                                     const std::array<std::array<const T*, 2>, 3>&,                           \
                                     const std::array<std::array<const T*, 2>, 3>&, const T*, const T*, T, T*, \
                                     void*);                                                                  \
  template void fused_stage_solve<T>(const FusedStage<T>&, int*, void*);                                      \
  template void fused_stage_solve_tuned<T>(const FusedStage<T>&, int*, void*, const FusedTuning&);
ADI_CUDA_STUB_STENCILS(float)
ADI_CUDA_STUB_STENCILS(double)
int large_chunk_min() { no_cuda(); }
int large_chunk_max() { no_cuda(); }
int large_default_chunk(std::size_t) { no_cuda(); }
std::size_t large_workspace_bytes(index_t, bool, int, std::size_t) { no_cuda(); }
void large_flag_reset(unsigned long long*, void*) { no_cuda(); }
template <class T>
void large_solve(index_t, const T*, const T*, const T*, const T*, T*, bool, int, double, void*, unsigned long long*,
                 unsigned long long, void*, int) {
  no_cuda();
}
template void large_solve<float>(index_t, const float*, const float*, const float*, const float*, float*, bool, int,
                                 double, void*, unsigned long long*, unsigned long long, void*, int);
template void large_solve<double>(index_t, const double*, const double*, const double*, const double*, double*,
                                  bool, int, double, void*, unsigned long long*, unsigned long long, void*, int);
int hines_stack_threads(int, std::size_t, int) { no_cuda(); }
template <class T>
void hines_solve(HinesKernel, const adi::detail::HinesView&, const T*, T*, T*, const HinesLaunch&, int*, void*) {
  no_cuda();
}
template <class T>
void hines_assemble(index_t, const T*, const T*, const T*, T*, T*, const index_t*, const T*, int, void*) {
  no_cuda();
}
template void hines_solve<float>(HinesKernel, const adi::detail::HinesView&, const float*, float*, float*,
                                 const HinesLaunch&, int*, void*);
template void hines_solve<double>(HinesKernel, const adi::detail::HinesView&, const double*, double*, double*,
                                  const HinesLaunch&, int*, void*);
template void hines_assemble<float>(index_t, const float*, const float*, const float*, float*, float*, const index_t*,
                                    const float*, int, void*);
template void hines_assemble<double>(index_t, const double*, const double*, const double*, double*, double*,
                                     const index_t*, const double*, int, void*);
}  // namespace adi::cuda_backend
