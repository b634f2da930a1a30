#pragma once
// Internal: the dispatch table of the tridiagonal family (tridiagonal_dispatch.cpp).
#include <cstddef>

#include "adi/executor.hpp"
#include "adi/layout.hpp"
#include "adi/tridiagonal.hpp"

namespace adi::detail {

// What the table looks at: layout, precision, periodicity, whether bands are shared,
// and (for CUDA) the device.
struct DispatchQuery {
  LineSet lines;
  std::size_t value_size = 8;
  bool periodic = false;
  bool shared_bands = false;
  Pivoting pivoting = Pivoting::none;  // partial: a pivoting kernel (automatic checks Thomas)
};

// The kernel `automatic` resolves to.
Kernel choose_kernel(const Executor& exec, const DispatchQuery& q);
// Whether `k` can run q on exec at all (forced kernels are checked with this).
bool kernel_supports(Kernel k, const Executor& exec, const DispatchQuery& q);

}  // namespace adi::detail
