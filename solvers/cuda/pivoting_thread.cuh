#pragma once
// Kernel::cuda_pivoting, partial (row) pivoting on a CUDA device: the family's entry, the
// two names the CUDA launcher calls (tridiagonal_launch.cuh, tridiagonal_cuda.cu). The
// route is chosen from the layout, so the plan keeps one kernel name:
//   - few long lines, not periodic (one system of 2^24, the large plan's pivoting route):
//     the partition method, pivoting inside each partition (pivoting_partition.cuh);
//   - (forced only) lines of 2 .. 575 rows (fp32; fp64 2 .. 287), not periodic, any layout:
//     one thread per line with its line staged in shared memory by coalesced cp.async
//     copies, U's rows kept there (pivoting_staged.cuh): a copy's bytes, and the thread
//     route's elimination bit for bit. Measured on an H100 at 256^3 (stop 29) it reached
//     24-26% of copy, behind the thread route on Y/Z (34-41%) and level with the tile
//     route on X: only 16 (fp32) / 8 (fp64) lines of a block compute, so an SM runs its
//     sequential eliminations on 1.5 warps' worth of lanes;
//   - (forced only) lines of 34 .. 272 rows, not periodic: the same partition method inside
//     one thread block, nothing but u leaving the chip (pivoting_block.cuh). Measured on an
//     H100 at 256^3 it is slower than the thread route on Y/Z (fp64 0.69 against 0.55 ms),
//     ahead of the tile route on X by 10%, and its pivoting within partitions is weaker than
//     a line's partial pivoting (one fp32 random-sign line of 257 rows: 13.9x LAPACK's
//     error, 1.5 eps cond(A, x)), so automatic never takes it;
//   - (forced only, stop 38) lines of 1 .. 272 rows, not periodic, meant for Y/Z sweeps: the
//     register partition route (pivoting_regpart.cuh), a 17-row partition per thread in
//     registers, only the reduced rows in shared memory, non-dominant lines re-solved exactly;
//   - other contiguous lines (X sweeps, StridedLines with element stride 1), not periodic
//     (automatic's since stop 40, on a GPU granting a block 84 KB of shared memory): one thread
//     per line, a warp's 32 lines staged through shared memory by asynchronous coalesced copies,
//     two chunks in flight, U recomputed from checkpoints instead of stored, the elimination
//     common::pivot_line, bit for bit the thread route's (pivoting_xtile.cuh; 256^3 X on an
//     H100: 22% / 13% faster than the tile route in fp32 / fp64);
//   - the same lines on a GPU without that shared memory (or forced, ADI_PIVOTING_ROUTE=tile):
//     one thread per line with the rows staged through [32][K+1] shared tiles, so every load
//     and store of a warp is coalesced (pivoting_tile.cuh; automatic's on X stops 27 to 39);
//   - lines adjacent in memory (Y/Z sweeps, interleaved batches), not periodic, where three or
//     four warps of the route fit an SM (automatic's since stop 53; lines up to ~300 rows fp64,
//     ~450 fp32 on an H200): two threads per line from both ends, U's rows in shared memory, the
//     rows read straight from global memory a chunk ahead (pivoting_pair.cuh): a copy's bytes
//     (y' through u where only that fits: 7), 1.2-2.9x the thread route at 64^3-256^3; and X
//     lines of 64 rows or more whose chunks fall on 16-byte vectors, where two warps of its
//     shared form fit an SM (stop 54: 1.25-1.94x the xtile route at 64^3-256^3, H200);
//   - everything else (Y/Z sweeps, interleaved batches, periodic lines): one thread per line,
//     coalesced where neighbouring lines are adjacent (pivoting_thread_line.cuh).
// Every route eliminates with solvers/common/pivoting_core.hpp. docs/pivoting.md has what
// each costs.
#include <cstdlib>
#include <mutex>
#include <string>

#include "adi/base/env_switch.hpp"
#include "solvers/cuda/comparison_forms.hpp"
#include "solvers/cuda/pivoting_block.cuh"
#include "solvers/cuda/pivoting_pair.cuh"
#include "solvers/cuda/pivoting_partition.cuh"
#include "solvers/cuda/pivoting_regpart.cuh"
#include "solvers/cuda/pivoting_staged.cuh"
#include "solvers/cuda/pivoting_thread_line.cuh"
#include "solvers/cuda/pivoting_tile.cuh"
#include "solvers/cuda/pivoting_xtile.cuh"

namespace adi::cuda_backend::kernels {

enum class PivotingRoute { thread, tile, block, partition, staged, regpart, xtile, pair };

// For measurement only (bench_cuda_pivoting compares the routes on the same layout): the
// environment variable ADI_PIVOTING_ROUTE = thread | tile | block | partition | staged | regpart | xtile | pair
// forces a route where it can take the layout (elsewhere the automatic choice below); read when
// the plan is made (workspace) and at each solve, so set it before making the plan and keep it
// while solving with it. Unset or empty: automatic; any other value an InvalidArgument (before
// stop 40: automatic).
// Issue 15 item 8: the routes only this switch reaches (staged, block, regpart) are compiled only
// with -DADI_CUDA_UNROLL_ALL=ON; forced in a build without them, said once on stderr, and the
// layout's own route runs.
inline PivotingRoute pivoting_route(const LineSet& l, bool periodic, std::size_t value_size) {
  const int forced = ::adi::detail::env_choice(
      "ADI_PIVOTING_ROUTE", {"thread", "tile", "block", "partition", "staged", "regpart", "xtile", "pair"}, -1);
  if (forced >= 0) {
    const auto f = static_cast<PivotingRoute>(forced);  // (the names in the enum's order)
#if !defined(ADI_CUDA_UNROLL_ALL)
    if (f == PivotingRoute::staged || f == PivotingRoute::block || f == PivotingRoute::regpart) {
      static std::once_flag once;
      const char* name = f == PivotingRoute::staged ? "staged" : f == PivotingRoute::block ? "block" : "regpart";
      note_form_not_compiled(
          once, (std::string("ADI_PIVOTING_ROUTE=") + name + " (a route forced for measurement)").c_str(),
          "the layout's own route");
    }
#endif
    if (f == PivotingRoute::thread) return PivotingRoute::thread;
#if defined(ADI_CUDA_UNROLL_ALL)
    if (f == PivotingRoute::staged && pivoting_staged_fits(l, periodic, value_size)) return PivotingRoute::staged;
    if (f == PivotingRoute::block && pivoting_block_fits(l, periodic)) return PivotingRoute::block;
    if (f == PivotingRoute::regpart && pivoting_regpart_fits(l, periodic)) return PivotingRoute::regpart;
#endif
    if (f == PivotingRoute::xtile && pivoting_xtile_fits(l, periodic)) return PivotingRoute::xtile;
    if (f == PivotingRoute::pair && pivoting_pair_fits(l, periodic, value_size)) return PivotingRoute::pair;
    if (f == PivotingRoute::tile && pivoting_tile_fits(l, periodic)) return PivotingRoute::tile;
    if (f == PivotingRoute::partition && !periodic && l.n >= 4 * kPivotPartitionRows) return PivotingRoute::partition;
  }
  if (pivoting_partition_fits(l, periodic)) return PivotingRoute::partition;
  if (pivoting_pair_takes(l, periodic, value_size)) return PivotingRoute::pair;  // (before xtile / tile on X)
  if (pivoting_xtile_fits(l, periodic) && pivoting_xtile_device_fits()) return PivotingRoute::xtile;
  if (pivoting_tile_fits(l, periodic)) return PivotingRoute::tile;
  return PivotingRoute::thread;
}

inline std::size_t pivoting_thread_per_line_workspace(const LineSet& l, bool periodic, std::size_t value_size) {
  switch (pivoting_route(l, periodic, value_size)) {
    case PivotingRoute::staged:
    case PivotingRoute::pair: return 0;
    case PivotingRoute::partition: return pivoting_partition_workspace(l, value_size);
    case PivotingRoute::block: return pivoting_block_workspace(l, value_size);
    case PivotingRoute::regpart: return pivoting_regpart_workspace(l, value_size);
    case PivotingRoute::tile: return pivoting_tile_workspace(l, value_size);
    case PivotingRoute::xtile: return pivoting_xtile_workspace(l, value_size);
    default: return pivoting_thread_workspace(l, periodic, value_size);
  }
}

template <class T, int Chunk>
void launch_pivoting_thread_per_line(const LineSet& ls, BandView<T> bands, const T* d, T* u, bool periodic,
                                     void* workspace, int* flag, cudaStream_t stream) {
  switch (pivoting_route(ls, periodic, sizeof(T))) {
#if defined(ADI_CUDA_UNROLL_ALL)  // (else pivoting_route never returns them)
    case PivotingRoute::staged: return launch_pivoting_staged<T>(ls, bands, d, u, flag, stream);
    case PivotingRoute::block: return launch_pivoting_block<T, Chunk>(ls, bands, d, u, workspace, flag, stream);
    case PivotingRoute::regpart: return launch_pivoting_regpart<T>(ls, bands, d, u, workspace, flag, stream);
#endif
    case PivotingRoute::partition:
      return launch_pivoting_partition<T, Chunk>(ls, bands, d, u, workspace, flag, stream);
    case PivotingRoute::tile: return launch_pivoting_tile<T>(ls, bands, d, u, workspace, flag, stream);
    case PivotingRoute::xtile: return launch_pivoting_xtile<T>(ls, bands, d, u, workspace, flag, stream);
    case PivotingRoute::pair: return launch_pivoting_pair<T>(ls, bands, d, u, flag, stream);
    default: return launch_pivoting_thread<T, Chunk>(ls, bands, d, u, periodic, workspace, flag, stream);
  }
}

// automatic's device-side fall-back: the route partial would take, its blocks returning at
// once while *gate == 0 (pivot_gate_closed). Only the routes automatic can reach on a
// batch without reading anything back (xtile, tile, pair, thread); false, and nothing enqueued, for the
// others (the partition route reads its weak flag back anyway; staged and block are
// forced for measurement), where the plan falls back through the host as before.
template <class T, int Chunk>
bool launch_pivoting_gated(const LineSet& ls, BandView<T> bands, const T* d, T* u, bool periodic, void* workspace,
                           const int* gate, int* flag, cudaStream_t stream) {
  switch (pivoting_route(ls, periodic, sizeof(T))) {
    case PivotingRoute::tile: launch_pivoting_tile<T>(ls, bands, d, u, workspace, flag, stream, gate); return true;
    case PivotingRoute::xtile: launch_pivoting_xtile<T>(ls, bands, d, u, workspace, flag, stream, gate); return true;
    case PivotingRoute::pair: launch_pivoting_pair<T>(ls, bands, d, u, flag, stream, gate); return true;
    case PivotingRoute::thread:
      launch_pivoting_thread<T, Chunk>(ls, bands, d, u, periodic, workspace, flag, stream, gate);
      return true;
    default: return false;
  }
}

}  // namespace adi::cuda_backend::kernels
