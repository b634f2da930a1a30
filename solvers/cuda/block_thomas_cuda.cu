// Block-tridiagonal CUDA entry points (solvers/cuda/backend.hpp), both precisions: the
// dispatch on the block size; the kernels are in generated units (block_thomas_launch.cuh).
#include "solvers/cuda/block_thomas_launch.cuh"
#include "solvers/cuda/comparison_forms.hpp"

namespace adi::cuda_backend {

namespace block {
std::atomic<std::size_t>& thread_form_count() {
  static std::atomic<std::size_t> launches{0};
  return launches;
}
std::atomic<std::size_t>& thread_vec_count() {
  static std::atomic<std::size_t> launches{0};
  return launches;
}
std::atomic<std::size_t>& thread_pair_count() {
  static std::atomic<std::size_t> launches{0};
  return launches;
}
}  // namespace block

namespace {
// BlockKernel::cuda_block_thomas_shared (kept for comparison) is compiled only with
// ADI_CUDA_UNROLL_ALL (block_thomas_instance.cuh): other builds run the shuffles and say so here.
void note_if_not_compiled([[maybe_unused]] BlockKernel kernel) {
#if !defined(ADI_CUDA_UNROLL_ALL)
  if (kernel == BlockKernel::cuda_block_thomas_shared) {
    static std::once_flag once;
    note_form_not_compiled(once, "cuda_block_thomas_shared (the shared-memory exchange, kept for comparison)",
                           "cuda_block_thomas_shuffle (the default; the same algorithm)");
  }
#endif
}
}  // namespace

std::size_t block_thomas_thread_launches() { return block::thread_form_count(); }
std::size_t block_thomas_thread_vec_launches() { return block::thread_vec_count(); }
std::size_t block_thomas_pair_launches() { return block::thread_pair_count(); }

std::size_t block_tridiagonal_workspace_bytes(BlockKernel, const BlockLineSet& l, bool periodic,
                                              std::size_t value_size) {
  // C*_i (and Z*_i when periodic) and d*_i for every system and every row but the last.
  const index_t rows = l.n > 1 ? l.n - 1 : 0;
  return static_cast<std::size_t>(l.count0 * l.count1) * static_cast<std::size_t>(rows) *
         static_cast<std::size_t>(l.m * l.m * (periodic ? 2 : 1) + l.m) * value_size;
}

template <>
void block_tridiagonal_solve<float>(BlockKernel kernel, const BlockLineSet& l, const float* a, const float* b,
                                    const float* c, const float* d, float* u, double tol, bool periodic,
                                    void* workspace, unsigned long long* singular, void* stream) {
  note_if_not_compiled(kernel);
  block::solve<float>(kernel, l, a, b, c, d, u, tol, periodic, workspace, singular, stream);
}

template <>
void block_tridiagonal_solve<double>(BlockKernel kernel, const BlockLineSet& l, const double* a, const double* b,
                                     const double* c, const double* d, double* u, double tol, bool periodic,
                                     void* workspace, unsigned long long* singular, void* stream) {
  note_if_not_compiled(kernel);
  block::solve<double>(kernel, l, a, b, c, d, u, tol, periodic, workspace, singular, stream);
}

}  // namespace adi::cuda_backend
