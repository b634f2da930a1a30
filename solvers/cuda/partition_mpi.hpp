#pragma once
// The local passes of the distributed partition method (adi/mpi/distributed_tridiagonal.cpp)
// on a CUDA device, seen from plain C++ (no CUDA header). Implemented in
// solvers/cuda/partition_mpi.cu when adi is built with CUDA; adi/mpi supplies stubs that
// throw Unsupported otherwise. One thread per line; the workspace is row-major over lines
// (alpha[i*lines + l]) so that neighbouring lines' threads touch neighbouring words.
#include <cstddef>

#include "adi/layout.hpp"

namespace adi::cuda_backend::partition {

// Phase 1: rows 1..m-2 eliminated (delta into u, alpha/gamma into the workspace) and the
// two reduced rows of every line into red[l*8 .. l*8+7] (a, b, c, d of rows 0 and m-1).
// shared: a, b, c are length-m arrays. A zero or non-finite pivot writes NaN into the
// line's reduced rows. Enqueued on `stream`.
template <class T>
void reduce(const LineSet& lines, const T* a, const T* b, const T* c, bool shared, const T* d, T* u, T* alpha,
            T* gamma, T* red, bool first_open, bool last_open, void* stream);

// Phase 3: u_0 and u_{m-1} from sol[l*2], sol[l*2+1], then the interior rows.
template <class T>
void back_substitute(const LineSet& lines, const T* alpha, const T* gamma, const T* sol, T* u, void* stream);

// Page-locked host memory for the staged reduced rows (cudaMallocHost): the copies to and
// from the device then run at full PCIe/NVLink-C2C speed instead of through a bounce
// buffer. pinned_free(nullptr) does nothing.
void* pinned_alloc(std::size_t bytes);
void pinned_free(void* p) noexcept;

}  // namespace adi::cuda_backend::partition
