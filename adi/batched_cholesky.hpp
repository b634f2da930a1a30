#pragma once
// Variable-size batched Cholesky factor (potrf) and solve (potrs) of small SPD matrices,
// sizes 0 to 512, fp32 and fp64, on the host or a CUDA device: a replacement for MAGMA's
// vbatched routines (Abdelfattah et al.) and for padding a batch for cuSOLVER.
//
//   adi::VariableBatchPlan batch(exec, adi::BatchSizes{n, count});     // sizes, sorted once
//   adi::BatchedCholeskyPlan<double> chol(batch, adi::PointerBatch{ld});
//   chol.factor(A_ptrs, info);                    // A_s = L_s L_s^T, L in the lower triangle
//   chol.solve(A_ptrs, B_ptrs, nrhs, ldb);        // B_s <- A_s^{-1} B_s
//
// Matrices are column-major (PointerBatch: leading dimension ld[s]; CompactBatch: n_s,
// matrix s at offsets[s] or back to back). The strict upper triangle is never written.
// A matrix that is not positive definite (or holds a NaN or infinity that reaches a
// pivot) gets info[s] = j + 1 for the first failing column j (LAPACK's convention); its
// columns < j hold L, columns >= j keep their input; every other matrix is factored.
// No NaN is produced into a matrix whose info is 0.
//
// GPU (solvers/cuda/cholesky_vbatched*.cu): matrices are processed in the batch plan's
// size order (largest first: implicit sorting) and in its size classes (bins), one launch
// per class: a fused warp kernel (a matrix per warp, in registers) up to 32, and a blocked
// left-looking kernel (a matrix per block, one panel in shared memory, register-tiled
// update) above; blocks of empty matrices and threads past a matrix's size stop at once
// (early termination). Host (solvers/cpu/cholesky_vbatched.cpp): a matrix per thread,
// small matrices vectorised across the matrices of a SIMD group.
#include <memory>

#include "adi/variable_batch.hpp"

namespace adi {

enum class CholeskyKernel {
  automatic,
  reference,     // plain Cholesky per matrix in double (host; the test oracle)
  cpu_scalar,    // a matrix per thread, blocked left-looking
  cpu_vector,    // SIMD lanes on the matrices of a group of similar sizes
  cuda_fused,    // warp per matrix, matrix in registers (sizes <= 32)
  cuda_blocked,  // block per matrix, left-looking panels (any size <= 512)
};
const char* cholesky_kernel_name(CholeskyKernel k);

struct CholeskyOptions {
  CholeskyKernel kernel = CholeskyKernel::automatic;
  // Check the pivots (a matrix that is not positive definite has a pivot <= 0 or non-finite)
  // and throw SingularSystem with system() = the first failing matrix and row() = its column,
  // after the whole batch is factored (on CUDA: synchronises and reads info back). Off by
  // default, unlike the other families: info is LAPACK's per-matrix report (formerly
  // throw_on_failure).
  bool check_pivots = false;
  // Largest size handled by the small-size path (cpu_vector on the host, cuda_fused on
  // the GPU, where it is at most 32); 0: the measured default. Larger sizes take the
  // blocked / scalar path.
  int crossover = 0;
  // PointerBatch: copy the matrix pointer array to the host on each call and reject null
  // pointers of non-empty matrices (one device-to-host copy and a wait on CUDA).
  bool check_pointers = true;
  // CUDA, blocked kernel: force a launch shape (0..3: panel width x threads (16, 64),
  // (32, 128), (32, 256), (16, 256)); -1: the dispatch table's choice per size class.
  // (The algorithm is chosen by `kernel`; formerly blocked_variant.)
  int blocked_shape = -1;
};

template <class T>
class BatchedCholeskyPlan {
 public:
  static constexpr int kMaxSize = 512;

  // Throws InvalidArgument when a size exceeds kMaxSize or a leading dimension is smaller
  // than its matrix (the message names the matrix).
  BatchedCholeskyPlan(const VariableBatchPlan& batch, const PointerBatch& layout, CholeskyOptions options = {});
  BatchedCholeskyPlan(const VariableBatchPlan& batch, const CompactBatch& layout, CholeskyOptions options = {});
  ~BatchedCholeskyPlan();
  BatchedCholeskyPlan(BatchedCholeskyPlan&&) noexcept;
  BatchedCholeskyPlan& operator=(BatchedCholeskyPlan&&) noexcept;

  // potrf in place. `info`: count ints in the executor's memory (may be null only with
  // check_pivots). PointerBatch: A is an array of count matrix pointers (null allowed
  // for size 0) in the executor's memory.
  void factor(T* const* A, int* info);
  void factor(T* A, int* info);  // CompactBatch

  // potrs with the factors of factor(): B_s (n_s x nrhs, column-major, leading dimension
  // ldb[s] or n_s when ldb is null) is overwritten by A_s^{-1} B_s. Matrices whose
  // info[s] != 0 are skipped (info may be null: none skipped).
  void solve(const T* const* L, T* const* B, int nrhs, const int* ldb, const int* info);
  // CompactBatch: B holds the right-hand sides back to back (n_s * nrhs values each).
  void solve(const T* L, T* B, int nrhs, const int* info);

  CholeskyKernel small_kernel() const;  // the kernel of the sizes <= crossover()
  CholeskyKernel large_kernel() const;
  int crossover() const;
  const VariableBatchPlan& batch() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Useful flops of potrf on the batch (sum of n^3/3, the count the vbatched paper and the
// issue quote), for reporting rates.
double cholesky_flops(const VariableBatchPlan& batch);

extern template class BatchedCholeskyPlan<float>;
extern template class BatchedCholeskyPlan<double>;

}  // namespace adi
