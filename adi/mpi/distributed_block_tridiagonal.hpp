#pragma once
// Block-tridiagonal lines (block size M = 2..8) that cross ranks: the partition method
// with block interface unknowns, so a code decomposed over ranks (implicit CFD) can run
// the block solver along a split axis.
//
// Every rank of the axis holds m >= 2 block rows of every system. Its interior rows
// 1..m-2 are eliminated by a block version of the modified Thomas of the Thomas-PCR
// hybrid (paper "Manycore algorithms for batch scalar and block tridiagonal solvers",
// section 2.3 and the block part), keeping the first and last block unknowns u_0, u_{m-1}
// as parameters; rows 0 and m-1 then form the rank's two block rows of a 2P-row reduced
// block system per line (block-cyclic when periodic). The reduced systems are exchanged
// (all-gather or all-to-all), solved by BlockTridiagonalPlan, and every rank
// back-substitutes its interior rows. Along an axis that is not split the plan is the
// single-device BlockTridiagonalPlan, unchanged.
//
//   adi::mpi::ProcessGrid procs(MPI_COMM_WORLD, {4, 1, 1});
//   adi::mpi::Decomposition dec(procs, {nx, ny, nz});
//   const auto e = dec.extents();
//   adi::BlockGridLines lines{5, e[0], e[1], e[2], adi::Axis::x,
//                             adi::PointArray::aos(5, e[0], e[1], e[2]), adi::PointArray::aos(25, e[0], e[1], e[2])};
//   adi::mpi::DistributedBlockTridiagonalPlan<double> plan(procs, adi::Axis::x, adi::Executor::host(),
//                                                          adi::to_block_lines(lines));
//   plan.solve(adi::BlockBands<double>{A, B, C}, d, u);   // this rank's pieces
//
// Block row i of the local layout is global block row lo + i along the axis. An unsplit
// axis runs BlockTridiagonalPlan on whatever executor is given. On a split axis with a
// CUDA executor (DistributedBlockOptions::device_passes, on by default) the block reduction and the back-substitution run on the GPU
// (solvers/cuda/block_partition_local_passes.cu, one thread per line and sub-segment), and the two
// reduced block rows per line (2 x (3 M^2 + M) values) travel by the plan's Transport: with
// NCCL (the default where it is built and every rank of the axis has a GPU of its own) they
// stay on the device end to end, exchanged on the executor's stream through the axis's NCCL
// communicator (the one DistributedTridiagonalPlan uses) and solved there by the device
// BlockTridiagonalPlan; with host_staging they go to page-locked host memory for MPI and the
// host's reduced solve, and the two interface block unknowns per line (2M values) come back.
// device_passes = false copies the arrays whole through host mirrors and runs the passes
// on the host.
#include <memory>

#include "adi/block_tridiagonal.hpp"
#include "adi/executor.hpp"
#include "adi/mpi/distributed_tridiagonal.hpp"
#include "adi/mpi/process_grid.hpp"

namespace adi::mpi {

struct DistributedBlockOptions {
  bool periodic = false;  // block-cyclic global lines
  // allgather or alltoall (pcr is not offered for blocks: it throws Unsupported);
  // automatic compares the two with the axis's measured network model.
  ReducedStrategy strategy = ReducedStrategy::automatic;
  // As BlockTridiagonalOptions (formerly the nested `local` options): the kernel of the
  // single-device plan of an unsplit axis (the reduced systems always take the automatic one),
  // pivot checking, and the relative pivot tolerance of adi/base/pivot.hpp (also the local
  // passes' and the reduced solve's; 0: 16 machine epsilons of T).
  BlockKernel kernel = BlockKernel::automatic;
  bool check_pivots = true;
  double pivot_tolerance = 0;
  // Device executor, split axis: the local passes on the GPU (true, the default since their
  // tests passed on 2 x H100, stop 28) or, false, A, B, C, d and u copied whole through host
  // mirrors and the passes run on the host (every solve pays the full PCIe round trip:
  // 2549 ms against 3.95 ms for M = 5, 64x64x2048 on 2 x H100).
  bool device_passes = true;
  // Device passes: sub-segments per line segment, one GPU thread each (see
  // solvers/cuda/block_partition_local_passes.hpp). 0: enough for ~64K threads; 1: one thread per
  // line. Capped at m/2 (>= 2 block rows per sub-segment).
  int device_subsegments = 0;
  // Device passes: how the reduced rows travel. automatic: nccl when adi::mpi is built with
  // NCCL and every rank of the axis has a GPU of its own, else host_staging. nccl: on the
  // device end to end (allgather: one all-gather; alltoall: grouped sends and receives, the
  // reduced solve of each rank's share of the lines on its device); host_staging: the host's
  // exchange and reduced solve. cuda_aware_mpi is not offered for blocks, nor a device
  // transport for a host plan or without device_passes: every rank throws the same Unsupported.
  Transport transport = Transport::automatic;
};

template <class T>
class DistributedBlockTridiagonalPlan {
 public:
  // Collective over procs.axis_comm(axis). `local` is this rank's part of the systems:
  // every rank of the axis must have the same block size and number of systems and, when
  // the axis is split, >= 2 block rows; otherwise every rank throws the same
  // InvalidArgument (Unsupported for pcr).
  DistributedBlockTridiagonalPlan(const ProcessGrid& procs, Axis axis, const Executor& exec,
                                  const BlockLineSet& local, DistributedBlockOptions options = {});
  ~DistributedBlockTridiagonalPlan();
  DistributedBlockTridiagonalPlan(DistributedBlockTridiagonalPlan&&) noexcept;
  DistributedBlockTridiagonalPlan& operator=(DistributedBlockTridiagonalPlan&&) noexcept;

  // Collective over the axis. Solves every system; u may equal d; A, B, C (and d unless
  // u == d) are left intact. Allocates nothing. A singular pivot block on any rank throws
  // SingularSystem on every rank of the axis (u then holds no solution).
  void solve(const BlockBands<T>& bands, const T* d, T* u);

  bool split() const;
  ReducedStrategy strategy() const;  // allgather or alltoall (meaningful when split())
  // Seconds of the last solve: local passes, and the reduced exchange + solve.
  double last_local_seconds() const;
  double last_exchange_seconds() const;
  // Device plans of a split axis: seconds of the copies between device and host (the
  // reduced rows and their solution; with device_passes = false the whole arrays).
  double last_staging_seconds() const;
  double exchanged_bytes() const;  // this rank's bytes sent + received in the last solve
  // The transport of the reduced rows: nccl or host_staging (host plans, unsplit axes, the
  // host-mirror path: host_staging, nothing on a device to stage).
  Transport transport() const;
  // Device passes of a split axis: the sub-segments per line segment in use (1 otherwise).
  int device_subsegments() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

extern template class DistributedBlockTridiagonalPlan<float>;
extern template class DistributedBlockTridiagonalPlan<double>;

}  // namespace adi::mpi
