#pragma once
// The early-exercise kernels (solvers/cuda/early_exercise.cu) seen from plain C++: the
// node-wise half of the Ikonen-Toivanen splitting (solvers/common/early_exercise_core.hpp) on
// device fields, for American exercise under Heston and on 2-3 assets (adi/finance/pricer.cpp
// validates; these assume valid input). Every node (i, j, k) of `box` (i < nx, j < ny,
// k < nz) at i + j sy + k sz; the rows' padding is not touched. Enqueued on `stream` (the
// executor's; null: the legacy default stream). A kernel list entry
// (solvers/cuda/kernel_list.hpp): without CUDA it throws Unsupported.
#include "adi/base/layout.hpp"
#include "solvers/cuda/kernel_list.hpp"

namespace adi::cuda_backend {
ADI_CUDA_KERNELS_BEGIN

// w += dt * lambda at every node.
template <class T>
ADI_CUDA_KERNEL(void early_exercise_predict(T* w, const T* lambda, T dt, const Box3& box, void* stream))
// u = max(u_bar - dt lambda, g), lambda = max(0, lambda + (g - u_bar) / dt) at every node.
template <class T>
ADI_CUDA_KERNEL(void early_exercise_project(const T* u_bar, const T* g, T dt, T* u, T* lambda, const Box3& box,
                                            void* stream))

ADI_CUDA_KERNELS_END
}  // namespace adi::cuda_backend
