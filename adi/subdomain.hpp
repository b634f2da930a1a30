#pragma once
// The hook through which adi::Operator / adi::AdiSolver run on one piece of a grid that is
// decomposed over several processes (MPI ranks), without adi itself knowing MPI: the core
// library declares what a distributed step needs, the adi::mpi library implements it
// (adi::mpi::subdomain in adi/mpi/subdomain.hpp).
//
//   adi::mpi::ProcessGrid procs(MPI_COMM_WORLD, {2, 2, 1});
//   adi::mpi::Decomposition dec(procs, {grid.nx(), grid.ny(), grid.nz()});
//   adi::AdiSolver<double> solver(grid, pde, bc, adi::Scheme::douglas(), exec, adi::mpi::subdomain(procs, dec));
//   adi::Field<double> u = solver.op().make_field();   // this rank's piece, with ghost layers
//
// What a piece looks like to the Operator: along an axis that is split over several ranks,
// the rank's own nodes plus one ghost layer on each side that has a neighbouring rank (a
// periodic split axis has both); an axis that is not split is whole on every rank. The
// Operator keeps its discretisation, stages and boundary handling; the subdomain fills the
// ghost layers (halo exchange) before the stencil reads them, and solves the lines of a
// split axis (the partition method); lines of an axis that is not split use the
// single-domain TridiagonalPlan as before.
#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "adi/base/tridiagonal_types.hpp"
#include "adi/executor.hpp"
#include "adi/field.hpp"
#include "adi/layout.hpp"

namespace adi {
namespace detail {
template <class T>
struct TridiagonalStage;  // adi/detail/tridiagonal_stage.hpp
}  // namespace detail

// The solver of the lines along one split axis of a box (collective over the ranks of
// that axis): the same contract as TridiagonalPlan::solve over this rank's segments.
template <class T>
class LineSolver {
 public:
  virtual ~LineSolver() = default;
  virtual void solve(const SharedBands<T>& bands, const T* d, T* u) = 0;
  virtual void solve(const Bands<T>& bands, const T* d, T* u) = 0;
  // An ADI stage with shared bands whose right-hand side the solver forms itself from
  // `stage` (its base, v, inv_s, A's line coefficients a, d, c, end / neu_add / neu_sub, src;
  // fold and v_end unused) instead of reading it from d; u: the solution. Returns false,
  // having done nothing, where it cannot (the caller then forms d and calls solve).
  virtual bool solve_stage(const SharedBands<T>& /*bands*/, const detail::TridiagonalStage<T>& /*stage*/,
                           T* /*u*/) {
    return false;
  }
  // Seconds of the last solve spent exchanging between ranks (0 if not measured).
  virtual double last_exchange_seconds() const { return 0.0; }
  // Deferred ends (adi::mpi: DistributedTridiagonalPlan::defer_settle; the Operator inside an
  // AdiSolver step, unless ADI_SPLIT_DEFER=0): with `on`, a device solve may return once its work is
  // queued; unsettled() then says its end (its error check, last_exchange_seconds) is due, and
  // settle() completes it, throwing the solve's error (collective over the axis, like solve).
  virtual void defer_settle(bool /*on*/) {}
  virtual bool unsettled() const { return false; }
  virtual void settle() {}
  // The caller's promise (adi::mpi: DistributedTridiagonalPlan::bands_key; the Operator unless
  // ADI_SPLIT_LEAN=0): bands at the same addresses keep their values while `key` (non-zero) stays.
  virtual void bands_key(std::uint64_t /*key*/) {}
  // A short name of how the lines are solved ("allgather", "pcr", ...).
  virtual const char* name() const = 0;
};

class Subdomain {
 public:
  virtual ~Subdomain() = default;
  // The global grid's extents, this rank's first global node and its node count per axis.
  virtual std::array<index_t, 3> global() const = 0;
  virtual std::array<index_t, 3> lo() const = 0;
  virtual std::array<index_t, 3> extent() const = 0;
  // Ranks along axis a (> 1: the axis is split), and whether this rank has a neighbouring
  // rank below / above along a (a periodic process grid wraps).
  virtual int ranks(Axis a) const = 0;
  virtual bool neighbour(Axis a, bool hi) const = 0;

  // Collective: fills the ghost layers of f, a field of the Operator's local shape with
  // ghosts[a][side] ghost planes (0 or 1) on each side of axis a, from the neighbouring ranks;
  // device work on exec's stream (the operator's).
  virtual void exchange(Field<float>& f, const std::array<std::array<int, 2>, 3>& ghosts, const Executor& exec) = 0;
  virtual void exchange(Field<double>& f, const std::array<std::array<int, 2>, 3>& ghosts,
                        const Executor& exec) = 0;
  // Collective over the ranks of axis a: the solver of the lines along a split axis a of
  // `lines` (this rank's segments, in exec's memory). periodic: the global lines are cyclic.
  virtual std::unique_ptr<LineSolver<float>> line_solver_f(Axis a, const Executor& exec, const Box3& lines,
                                                           bool periodic) = 0;
  virtual std::unique_ptr<LineSolver<double>> line_solver_d(Axis a, const Executor& exec, const Box3& lines,
                                                            bool periodic) = 0;

  // Collective agreement on a check made by every rank: when any rank's `invalid` is not
  // empty every rank throws the same InvalidArgument, else when any rank's `unsupported`
  // is not empty every rank throws the same Unsupported (the lowest such rank's message).
  virtual void agree(const std::string& invalid, const std::string& unsupported) const = 0;
  // Collective: the lowest rank's non-empty `message` on every rank, its first character
  // kept first and "rank R: " put after it when there are several ranks; empty on every rank
  // when every rank's is empty.
  virtual std::string first_error(const std::string& message) const = 0;
};

}  // namespace adi
