#pragma once
// The host launch policy of the CFD example: op(i) for every i in [0, count), spread
// over OpenMP threads (static schedule: the ops cost the same at every point).
#include <omp.h>

#include "adi/layout.hpp"

namespace cfd {

struct HostLaunch {
  int threads = 0;  // 0: OpenMP's default
  template <class Op>
  void operator()(adi::index_t count, const Op& op) const {
    const int t = threads > 0 ? threads : omp_get_max_threads();
#pragma omp parallel for num_threads(t) schedule(static)
    for (adi::index_t i = 0; i < count; ++i) op(i);
  }
};

}  // namespace cfd
