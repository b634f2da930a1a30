#pragma once
// Host kernel: explicit evaluation of the ADI operator's parts on a 3D box,
// out = alpha*base + sum_p w[p] A_p v + sources (adi/base/stencil.hpp).
// Called by adi::Operator after validation; assumes valid input.
#include "adi/base/stencil.hpp"

namespace adi::cpu {

template <class T>
void stencil_apply(const detail::StencilView<T>& view, const detail::ApplyArgs<T>& args, int threads);

}  // namespace adi::cpu
