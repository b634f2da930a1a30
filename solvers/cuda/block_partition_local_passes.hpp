#pragma once
// The local passes of the distributed block partition method
// (adi/mpi/distributed_block_tridiagonal.cpp) on a CUDA device, seen from plain C++ (no
// CUDA header). Implemented in solvers/cuda/block_partition_local_passes{,_fp64}.cu when adi is
// built with CUDA; without CUDA the same list (ADI_CUDA_KERNEL, kernel_list.hpp) throws
// Unsupported (DistributedBlockTridiagonalPlan only calls them for a CUDA executor).
//
// One thread per line (system): the M x M blocks of its recurrence live in the thread's
// registers (compile-time M = 2..8; for large M the compiler keeps part of them in
// local memory, which L1 caches). The workspace is interleaved over lines,
// alpha[(i*M*M + v)*L + l], so that neighbouring lines' threads touch neighbouring words.
// The same maths as the host passes. Reduced rows and interface values, by default in the
// host passes' layout:
//   red[l*2R + j*R + {A: 0..MM-1, B: MM.., C: 2MM.., d: 3MM..3MM+M-1}], R = 3MM + M,
//   j = 0 (local block row 0) and 1 (row m-1); sol[l*2M + {u_0: 0..M-1, u_{m-1}: M..2M-1}];
// Workspace's red_line / red_row / sol_line / sol_row (values between lines and between
// the two rows) give any other (the NCCL exchange: rows j of all lines together).
#include <cstddef>

#include "adi/base/block_layout.hpp"
#include "solvers/cuda/kernel_list.hpp"

namespace adi::cuda_backend::block_partition {

// Device workspace of a plan (segments of m block rows, L lines, S sub-segments each):
// alpha, gamma m*M*M*L values each; with S > 1 also red1 2R*S*L, alpha2 and gamma2
// 2S*M*M*L each, x2 2S*M*L.
//
// Parallelism: one thread per line leaves a GPU mostly idle when a rank holds few, long
// segments. With S > 1 every segment is cut into S sub-segments of >= 2 rows, one thread
// each (level 1: the same reduction to two block rows), and one thread per line reduces
// the 2S-row chain of their rows to the segment's two (level 2); the back-substitution
// runs the levels in reverse (the scalar plan's scheme, partition_local_passes.hpp).
template <class T>
struct Workspace {
  T* alpha = nullptr;
  T* gamma = nullptr;
  int S = 1;
  T* red1 = nullptr;
  T* alpha2 = nullptr;
  T* gamma2 = nullptr;
  T* x2 = nullptr;
  // Layout of red and sol (see above); 0: the default 2R, R, 2M, M.
  index_t red_line = 0, red_row = 0, sol_line = 0, sol_row = 0;
};

// Phase 1: rows eliminated (delta into u, the rest into the workspace) and every line's
// two reduced block rows into red. A pivot block that fails the relative threshold tol
// (LU with partial pivoting inside the block, like the host) writes NaN into the whole of
// the line's two reduced rows (at level 2 too: the NaN of a level-1 row reaches a pivot).
// Enqueued on stream.
ADI_CUDA_KERNELS_BEGIN
template <class T>
ADI_CUDA_KERNEL(void reduce(const BlockLineSet& lines, const T* a, const T* b, const T* c, const T* d, T* u,
                            const Workspace<T>& w, T* red, T tol, bool first_open, bool last_open, void* stream))

// Phase 3: u_0 and u_{m-1} of every line from sol, then u_i = delta_i - alpha_i u_0 -
// gamma_i u_{i+1} for i = m-2..1 (per level). Enqueued on stream.
template <class T>
ADI_CUDA_KERNEL(void back_substitute(const BlockLineSet& lines, const Workspace<T>& w, const T* sol, T* u,
                                     void* stream))

// `rows` rows of `width` bytes from src (rows `src_pitch` bytes apart) to dst (`dst_pitch`
// apart), enqueued on stream (cudaMemcpy2DAsync, device to device).
ADI_CUDA_KERNEL(void copy_rows(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
                               std::size_t width, std::size_t rows, void* stream))
ADI_CUDA_KERNELS_END

}  // namespace adi::cuda_backend::block_partition
