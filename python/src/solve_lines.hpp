#pragma once
// One LineSet solved at several base offsets (elements): arrays whose batch axes do not fold
// into the LineSet's two (count, stride) pairs, without a copy. Used by the TridiagonalPlan
// binding and the fast path.
#include <vector>

#include "adi/tridiagonal.hpp"
#include "common.hpp"

namespace adi::python {

template <class T>
void solve_at_offsets(TridiagonalPlan<T>& p, std::uintptr_t a, std::uintptr_t b, std::uintptr_t c, std::uintptr_t d,
                      std::uintptr_t u, bool shared, const std::vector<index_t>& offsets) {
  const index_t zero = 0;
  const index_t* off = offsets.empty() ? &zero : offsets.data();
  const std::size_t count = offsets.empty() ? 1 : offsets.size();
  for (std::size_t k = 0; k < count; ++k) {
    const index_t o = off[k];
    if (shared)
      p.solve(SharedBands<T>{ptr<const T>(a), ptr<const T>(b), ptr<const T>(c)}, ptr<const T>(d) + o, ptr<T>(u) + o);
    else
      p.solve(Bands<T>{ptr<const T>(a) + o, ptr<const T>(b) + o, ptr<const T>(c) + o}, ptr<const T>(d) + o,
              ptr<T>(u) + o);
  }
}

}  // namespace adi::python
