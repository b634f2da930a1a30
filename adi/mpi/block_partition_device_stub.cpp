// Without CUDA the device block partition passes do not exist: these stand in for
// solvers/cuda/block_partition_local_passes{,_fp64}.cu so that adi::mpi links, and say so if
// reached (DistributedBlockTridiagonalPlan only calls them for a CUDA executor, which a
// build without CUDA cannot create). With ADI_BLOCK_PARTITION_EMULATE (a maths check,
// never a shipped build) they run the kernels' per-line code as host loops instead.
#ifndef ADI_MPI_HAVE_CUDA
#include "adi/error.hpp"
#include "solvers/cuda/block_partition_local_passes.hpp"
#ifdef ADI_BLOCK_PARTITION_EMULATE
#include "solvers/cuda/block_partition_local_passes.cuh"
#endif

namespace adi::cuda_backend::block_partition {

template <class T>
void reduce([[maybe_unused]] const BlockLineSet& lines, [[maybe_unused]] const T* a, [[maybe_unused]] const T* b,
            [[maybe_unused]] const T* c, [[maybe_unused]] const T* d, [[maybe_unused]] T* u,
            [[maybe_unused]] const Workspace<T>& w, [[maybe_unused]] T* red, [[maybe_unused]] T tol,
            [[maybe_unused]] bool first_open, [[maybe_unused]] bool last_open, void*) {
#ifdef ADI_BLOCK_PARTITION_EMULATE
  const Args<T> g{lines, a,   b,          c,         d,   u,      w.alpha,  w.gamma,  red,
                  nullptr, tol, first_open, last_open, w.S, w.red1, w.alpha2, w.gamma2, w.x2};
  with_block_size(lines.m, [&](auto mc) {
    constexpr int M = decltype(mc)::value;
    for (int s = 0; s < w.S; ++s)
      for (index_t l = 0; l < lines.systems(); ++l) reduce_line<T, M>(g, l, s);
    if (w.S > 1)
      for (index_t l = 0; l < lines.systems(); ++l) reduce_chain<T, M>(g, l);
  });
#else
  throw Unsupported("adi was built without CUDA: no device block partition passes");
#endif
}

template <class T>
void back_substitute([[maybe_unused]] const BlockLineSet& lines, [[maybe_unused]] const Workspace<T>& w,
                     [[maybe_unused]] const T* sol, [[maybe_unused]] T* u, void*) {
#ifdef ADI_BLOCK_PARTITION_EMULATE
  const Args<T> g{lines,   nullptr, nullptr, nullptr, nullptr, u,      w.alpha,  w.gamma,  nullptr,
                  sol,     T(0),    false,   false,   w.S,     w.red1, w.alpha2, w.gamma2, w.x2};
  with_block_size(lines.m, [&](auto mc) {
    constexpr int M = decltype(mc)::value;
    if (w.S > 1)
      for (index_t l = 0; l < lines.systems(); ++l) back_chain<T, M>(g, l);
    for (int s = 0; s < w.S; ++s)
      for (index_t l = 0; l < lines.systems(); ++l) back_line<T, M>(g, l, s);
  });
#else
  throw Unsupported("adi was built without CUDA: no device block partition passes");
#endif
}

template void reduce<float>(const BlockLineSet&, const float*, const float*, const float*, const float*, float*,
                            const Workspace<float>&, float*, float, bool, bool, void*);
template void reduce<double>(const BlockLineSet&, const double*, const double*, const double*, const double*,
                             double*, const Workspace<double>&, double*, double, bool, bool, void*);
template void back_substitute<float>(const BlockLineSet&, const Workspace<float>&, const float*, float*, void*);
template void back_substitute<double>(const BlockLineSet&, const Workspace<double>&, const double*, double*, void*);

}  // namespace adi::cuda_backend::block_partition
#endif
