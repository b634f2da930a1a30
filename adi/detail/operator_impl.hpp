#pragma once
// Internal: the state of adi::Operator<T> (adi/operator.hpp) shared by the files that
// implement it, each holding one concern:
//   operator.cpp              the public member functions, construction, apply and solve
//   operator_discretise.cpp   the per-axis bands and mixed-term stencils (build_axis, build_mixed)
//   operator_boundary.cpp     boundary and source data in time, face writes, the
//                             intermediate stages' boundary values
//   operator_fused_stage.cpp  the CUDA stage along a shared-band axis (one fused kernel)
#include <array>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "adi/base/env_switch.hpp"
#include "adi/base/stencil.hpp"
#include "adi/detail/host_team.hpp"
#include "adi/detail/tridiagonal_stage.hpp"
#include "adi/error.hpp"
#include "adi/operator.hpp"
#include "adi/subdomain.hpp"
#include "adi/tridiagonal.hpp"
#include "solvers/cpu/stencil_apply.hpp"
#include "solvers/cpu/stencil_diagonal.hpp"
#include "solvers/cpu/stencil_face.hpp"
#include "solvers/cuda/backend.hpp"

namespace adi {

namespace detail {

inline std::string where(double x, double y, double z) {
  std::ostringstream s;
  s << "(" << x << ", " << y << ", " << z << ")";
  return s.str();
}

// Data computed on the host for a CUDA executor: a page-locked buffer and an event that
// marks the end of its last upload. The upload is ordered on the stream and returns at
// once, so a stage's boundary data reaches the device without a host synchronisation;
// the host waits only before rewriting a buffer whose previous upload the device has not
// reached yet (a buffer is reused two times later, so in practice never).
template <class T>
class HostUpload {
 public:
  HostUpload() = default;
  HostUpload(const HostUpload&) = delete;
  HostUpload& operator=(const HostUpload&) = delete;
  HostUpload(HostUpload&& o) noexcept { swap(o); }
  HostUpload& operator=(HostUpload&& o) noexcept {
    swap(o);
    return *this;
  }
  ~HostUpload() {
    cuda_backend::pinned_free(host_);
    cuda_backend::event_destroy(event_);
  }
  // A host buffer of n values, free to write.
  T* buffer(index_t n) {
    if (event_) cuda_backend::event_wait(event_);
    if (n > n_) {
      cuda_backend::pinned_free(host_);
      host_ = nullptr;
      host_ = static_cast<T*>(cuda_backend::pinned_allocate(static_cast<std::size_t>(n) * sizeof(T)));
      n_ = n;
    }
    return host_;
  }
  // Enqueues the upload of the buffer's first n values to dst (device) on stream.
  void send(T* dst, index_t n, void* stream) {
    cuda_backend::upload_async(dst, host_, static_cast<std::size_t>(n) * sizeof(T), stream);
    if (!event_) event_ = cuda_backend::event_create();
    cuda_backend::event_record(event_, stream);
  }

 private:
  void swap(HostUpload& o) noexcept {
    std::swap(host_, o.host_);
    std::swap(n_, o.n_);
    std::swap(event_, o.event_);
  }
  T* host_ = nullptr;
  index_t n_ = 0;
  void* event_ = nullptr;
};

// Boundary data of one face at up to two times (a step needs t_n and t_{n+1};
// the next step reuses t_{n+1}). Constant data is evaluated once.
template <class T>
struct FaceCache {
  std::array<double, 2> t{};
  std::array<bool, 2> valid{};
  std::array<Array<T>, 2> vals;
  std::array<HostUpload<T>, 2> upload;  // CUDA executors
  int last = 0;
};

template <class T>
struct SourceSlot {
  double t = 0.0;
  bool valid = false;
  Field<T> f;
  HostUpload<T> upload;  // CUDA executors: the host-evaluated values, uploaded on the stream
};

// The stencil kernels of the executor's backend: the one place that picks them (host:
// solvers/cpu/stencil_*, CUDA: solvers/cuda/stencil_*.cu, same arguments; CUDA work is
// enqueued on the executor's stream).
template <class T>
struct Stencils {
  static void apply(const Executor& e, const detail::StencilView<T>& v, const detail::ApplyArgs<T>& a) {
    if (e.is_cuda())
      cuda_backend::stencil_apply<T>(v, a, e.stream());
    else
      cpu::stencil_apply<T>(v, a, host_threads(e.threads()));
  }
  static void face(const Executor& e, T* f, const Box3& box, const detail::FaceRegion& r, const T* vals, T scale,
                   bool add) {
    if (e.is_cuda())
      cuda_backend::stencil_face<T>(f, box, r, vals, scale, add, e.stream());
    else
      cpu::stencil_face<T>(f, box, r, vals, scale, add, host_threads(e.threads()));
  }
  static void stage_values(const Executor& e, const detail::StencilView<T>& v, const detail::FaceRegion& r,
                           const T* g_new, const T* g_old, const std::array<T, 3>& w,
                           const std::array<std::array<const T*, 2>, 3>& nn,
                           const std::array<std::array<const T*, 2>, 3>& no, const T* src_new, const T* src_old,
                           T src_scale, T* out) {
    if (e.is_cuda())
      cuda_backend::stage_face_values<T>(v, r, g_new, g_old, w, nn, no, src_new, src_old, src_scale, out,
                                         e.stream());
    else
      cpu::stage_face_values<T>(v, r, g_new, g_old, w, nn, no, src_new, src_old, src_scale, out,
                                host_threads(e.threads()));
  }
  static void diagonal(const Executor& e, const T* d, T inv_s, T* b, index_t n) {
    if (e.is_cuda())
      cuda_backend::stencil_diagonal<T>(d, inv_s, b, n, e.stream());
    else
      cpu::stencil_diagonal<T>(d, inv_s, b, n, host_threads(e.threads()));
  }
};

// The other two axes of a face, in order x, y, z.
inline std::array<int, 2> others(int a) { return {a == 0 ? 1 : 0, a == 2 ? 1 : 2}; }

}  // namespace detail

using detail::FaceCache;
using detail::others;
using detail::SourceSlot;
using detail::Stencils;
using detail::where;


template <class T>
struct Operator<T>::Impl {
  Grid grid;
  BoundaryConditions bc;
  Executor exec = Executor::host();
  SourceFunction source;
  int k = 0;
  std::array<bool, 3> active{};
  std::array<index_t, 3> lo{}, hi{};
  // The piece of the grid the fields hold: N[a] nodes, field node i is global node off[a] + i
  // (wrapped on periodic axes). Without a subdomain N = the grid's extents, off = 0.
  // ghost[a][side]: ghost planes (0 or 1) below / above this rank's nodes along a.
  std::shared_ptr<Subdomain> sub;
  std::array<index_t, 3> N{}, off{};
  std::array<std::array<int, 2>, 3> ghost{};
  std::array<bool, 3> split{};  // the lines along a cross ranks (distributed plan)
  index_t n_of(int a) const { return N[a]; }
  index_t global_n(int a) const { return grid.extent(static_cast<Axis>(a)); }
  // The global index of field node i along a (periodic axes wrap).
  index_t global_index(int a, index_t i) const {
    const index_t n = global_n(a);
    return ((off[a] + i) % n + n) % n;
  }
  // Whether this rank holds face (a, hi side) of the global grid.
  bool has_face(int a, bool hi_side) const {
    return active[a] && (hi_side ? off[a] + N[a] == global_n(a) && ghost[a][1] == 0 : off[a] == 0 && ghost[a][0] == 0);
  }
  // Halo exchange of fields whose ghosts are known to be current (an AdiSolver step marks
  // the fields it exchanged; any write through the operator forgets them).
  bool reuse_ghosts = false;
  std::array<const void*, 3> fresh{};
  // With a subdomain, errors that only some ranks can see in the middle of a step (boundary
  // data or sources that are not finite, a zero pivot of a line within this rank) do not
  // throw there (the other ranks would wait in the step's next collective): the first is
  // kept ('I' InvalidArgument / 'S' SingularSystem / 'U' UnstableSystem + message) until settle(), which every
  // rank reaches, agrees on it and throws the same on every rank.
  std::string pending;
  void fail_later(char kind, const std::string& message) {
    if (pending.empty()) pending = kind + message;
  }
  double halo_seconds = 0;
  std::array<double, 3> line_exchange{};
  void exchange(Field<T>& f, bool force);
  void forget(const Field<T>& f) {
    for (auto& q : fresh)
      if (q == f.data()) q = nullptr;
    if (bounded == f.data()) bounded = nullptr;
  }
  // Inside a step (reuse_ghosts on), the field whose Dirichlet faces set_boundary wrote last and
  // their time: by default (stop 38, h-splitstage; the default since stop 39; ADI_BOUNDARY_REUSE=0 off) a
  // second call for the same field and time with no write through the operator between them is
  // skipped (a split stage's set_boundary(t_old, V_old) on the U the step's first stage already
  // bounded: one faces launch of three per Douglas step on a decomposed grid).
  const void* bounded = nullptr;
  double bounded_t = 0;
  const bool boundary_reuse = detail::env_switch("ADI_BOUNDARY_REUSE", true);

  struct AxisData {
    bool shared = true;
    bool periodic = false;
    Array<T> a, d, c, b;      // shared bands, length n
    Field<T> fa, fd, fc, fb;  // per-node bands, shaped like the fields
    Array<index_t> prev, next;
    Array<T> fm, f0, fp;
    T s_formed = T(0);  // the s whose diagonal b currently holds (0: none yet)
    std::uint64_t band_key = 1;  // changes with every write of the bands (write_diagonal): LineSolver::bands_key
    T b_formed = T(0);  // fused axes: the s whose b the plan path formed (solve_stencil_folded)
    std::optional<TridiagonalPlan<T>> plan;     // lines within this rank
    // CUDA, first active axis: the same lines without the pivot check (whose read-back
    // synchronises the host at every solve): the stencil fold's solves while s is unchanged
    // (pivots depend on s only).
    std::optional<TridiagonalPlan<T>> quiet;
    std::unique_ptr<LineSolver<T>> dplan;        // lines across ranks (split axis)
    index_t sweep_offset = 0;
    index_t band_offset = 0;  // of the sweep's first row in the shared bands (ghost rows before it)
  };
  std::array<AxisData, 3> ax;
  // b = 1/s - d of an axis's bands; form_diagonal only where s changed since A.s_formed.
  void write_diagonal(AxisData& A, T inv_s);
  void form_diagonal(AxisData& A, T s);
  // The line solve of a split axis through its distributed plan (collective: it checks and
  // agrees on its pivots), in place or into x; adds the plan's exchange time.
  void split_solve(int a, T* y, T* x);
  // ADI_SPLIT_DEFER (stop 39, h-splitwait; on by default since stop 40, =0 the old form): inside an AdiSolver
  // step a split axis's device solve returns once its work is queued (LineSolver::defer_settle)
  // instead of waiting for the GPU at its end (the stream synchronisation that read the pivot
  // flag: the GPU idled while the host then queued the step's next stage); its end (the flag,
  // its SingularSystem, the exchange time) comes in settle() at the step's end, or before the
  // axis's next solve. settle_split(a): that end for axis a (throws the plan's error,
  // collective over the axis, after adding its exchange time).
  const bool split_defer = detail::env_switch("ADI_SPLIT_DEFER", true);
  void settle_split(int a) {
    LineSolver<T>* d = ax[a].dplan.get();
    if (!d || !d->unsettled()) return;
    struct Add {
      double& acc;
      LineSolver<T>* d;
      ~Add() { acc += d->last_exchange_seconds(); }
    } add{line_exchange[a], d};
    d->settle();
  }
  // After a split axis's solve: its exchange time, unless its end was deferred (settle_split adds it).
  // ADI_SPLIT_LEAN (stop 39, h-splitwait; on by default since stop 40, =0 the old form): the split plans get the
  // axis's band_key before each solve (LineSolver::bands_key): the SPIKE form's spikes are not
  // checked on the device while the bands are unchanged (one launch a split solve fewer), nor the
  // pivot flag cleared while known clear (one more).
  const bool split_lean = detail::env_switch("ADI_SPLIT_LEAN", true);
  void split_key(int a) {
    if (split_lean) ax[a].dplan->bands_key(ax[a].band_key);
  }
  void split_done(int a) {
    const LineSolver<T>* d = ax[a].dplan.get();
    if (!d->unsettled()) line_exchange[a] += d->last_exchange_seconds();
  }
  // The line solve of axis a's lines within this rank through `plan` (its checked or quiet
  // plan), in place or into x. A pivot error throws; with a subdomain it is kept until
  // settle() (the other ranks would wait in the step's next collective): false then.
  bool local_solve(int a, TridiagonalPlan<T>& plan, T* y, T* x);
  std::array<Field<T>, 3> mixed;
  bool any_mixed = false;
  detail::StencilView<T> view;
  std::array<std::vector<double>, 6> neumann_weight;  // per face node, c1 + c2*n1
  std::array<detail::FaceCache<T>, 6> faces;
  std::array<detail::SourceSlot<T>, 2> src;
  int src_last = 0;

  int threads() const { return exec.threads(); }
  // Host threads of each public entry (adi/detail/host_team.hpp), one tuner per kind of
  // call: apply, the stage along x, y, z, set_boundary. Every kernel under the entry
  // (stencils, the plan's sweep) runs on the team it picks.
  enum Entry { apply_entry = 0, solve_entry = 1, boundary_entry = 4, entries = 5 };
  std::array<detail::TeamTuner, entries> team;
  void tune_teams() {
    for (auto& t : team) t.reset(exec.is_host() ? exec.threads() : 1);
  }
  double coord(int a, index_t i) const { return grid.axis(static_cast<Axis>(a))[global_index(a, i)]; }
  const Boundary& face(int a, bool hi_side) const { return bc[face_of(static_cast<Axis>(a), hi_side)]; }
  bool dirichlet(int a, bool hi_side) const {
    return has_face(a, hi_side) && face(a, hi_side).kind() == BoundaryKind::dirichlet;
  }
  bool neumann(int a, bool hi_side) const {
    return has_face(a, hi_side) && face(a, hi_side).kind() == BoundaryKind::neumann;
  }

  void place();
  void build_axis(int a, const Pde& pde);
  void build_plan(int a);
  // Axis a's lines over the sweep box (what its plans solve).
  Box3 sweep_lines(int a) const;
  // CUDA: the plan without the pivot check for the stage that carries the stencil fold, made
  // the first time a stage along a carries it (the first stage of the AdiSolver's order).
  void ensure_quiet(int a);
  void build_mixed(const Pde& pde);
  const T* face_values(int f, double t);
  // The source at time t, from a cache of two times (src). A lookup that misses fills the
  // slot the previous lookup did not return, so the sources at a stage's two times, looked
  // up one after the other, both stay valid: one lookup per time suffices.
  const T* source_at(double t);
  void face_write(Field<T>& F, int f, bool unknown_only, const T* vals, T scale, bool add);
  void set_boundary(double t, Field<T>& V);
  void write_boundary(double t, Field<T>& V);  // (set_boundary's writes)
  // The Dirichlet values of an intermediate stage along a differ from g(t_new) only where
  // axes solved later in the step act along the face and the data changes in time.
  bool stage_correction(int a, const std::array<bool, 3>& later) const {
    if (static_data) return false;  // the correction is exactly 0
    for (int i = 0; i < 3; ++i)
      if (later[i] && i != a && active[i]) return true;
    return false;
  }
  // The Dirichlet values of face f for the stage solved along f / 2: g(t_new), or, where
  // later axes act along the face and the data change from t_old to t_new (explicit part
  // present), the corrected values (into end_scratch[f % 2]) from the face data alone
  // (solvers/common/stencil_face_core.hpp): every backend, and every rank of a
  // decomposition, computes the same values. The general and the fused stage both call it.
  const T* stage_face_values(int f, T s, double t_new, double t_old, bool has_old,
                             const std::array<bool, 3>& later);
  std::array<Array<T>, 2> end_scratch;  // stage values on the two faces of an axis (allocated when built)

  // CUDA: stages along shared-band axes run as one fused kernel (right-hand side,
  // generated bands, solve) through the axis's plan (TridiagonalPlan::solve_stage); see
  // solve_fused. The plan's dispatch chose the kernel and its launch when it was built
  // (build_plan sets TridiagonalOptions::stages); here only whether the axis takes it.
  std::array<bool, 3> fused_axis{};
  bool fused(int a) const { return fused_axis[a]; }
  void decide_fused() {
    for (int a = 0; a < 3; ++a)
      fused_axis[a] = active[a] && !split[a] && exec.is_cuda() && ax[a].shared &&
                      ax[a].plan->stage_kernel() == Kernel::cuda_thomas_pcr_fused_stage;
  }
  // The fused stages' pivot check, asynchronous: a stage with a new s clears its axis's
  // device flag and the kernel sets it on a zero or non-finite pivot or a failed stability
  // check (its factors' growth; check_stages throws UnstableSystem); the flags are read
  // (one synchronisation for every axis) by check_stages(): at settle(), which AdiSolver
  // calls at the end of each step, or at the end of a solve() made outside a step.
  // checking[a]: the s whose check along a has not been read yet (0: none).
  std::array<T, 3> checking{};
  std::array<int, 3> flags_read{};
  void check_stages();
  // Inside an AdiSolver step (Operator::reuse_ghosts on): checks wait for settle().
  bool in_step = false;
  // The explicit part folded into a fused stage (solve_folded), null for a plain stage.
  struct Fold {
    T alpha = T(1);
    std::array<typename Operator<T>::ExplicitTerm, 2> terms{};
  };
  void stage_ends(int a, T s, double t_new, double t_old, Field<T>* V_old, const std::array<bool, 3>& later,
                  detail::TridiagonalStage<T>& st);
  void solve_fused(int a, T s, double t_new, const Field<T>* base, Field<T>& Y, double t_old, Field<T>* V_old,
                   const std::array<bool, 3>& later, Field<T>* result, const Fold* fold = nullptr);
  // Whether the stage along a folds these terms into its kernel (folds(a), no mixed weight
  // on a mixed term, at most two distinct times among the stage's and the terms', result
  // not a term's field where the terms read across lines).
  // any_mode: whatever the fold mode (ADI_FOLD_X_RING=1 takes the kernel fold in the stencil mode).
  // strided: a Y/Z stage may fold too (ADI_FOLD_STRIDED=1: the z-first order's first stage).
  bool can_fold(int a, double t_new, double t_old, bool has_old, const Fold& f, const Field<T>* result,
                bool any_mode = false, bool strided = false) const;
  typename Operator<T>::ExplicitFold fold_mode = Operator<T>::ExplicitFold::separate;
  // The stage with its right-hand side written by stencil passes over the terms' fields
  // (ExplicitFold::stencil), then the plan's line solve (a split axis's through its distributed
  // plan, the terms' ghosts exchanged first); false where it cannot (more than two times,
  // V_old not a term's field): the caller runs the separate path.
  bool solve_stencil_folded(int a, T s, double t_new, const Fold& f, Field<T>& Y, double t_old, Field<T>* V_old,
                            const std::array<bool, 3>& later, Field<T>* result);
  bool folds(int a, bool any_mode = false, bool strided = false) const {
    if (fold_mode != Operator<T>::ExplicitFold::kernel && !any_mode) return false;
    // Along x: the kernel of stride-1 lines (the first stage of every chain in the default
    // order). Along y or z only with `strided` (thomas_pcr_fused_strided_fold.cuh).
    if ((a != 0 && !strided) || !fused(a) || sub || any_mixed) return false;
    if (view.box.sz * N[2] >= (index_t(1) << 31)) return false;  // the kernel's 32-bit offsets
    for (int b = 0; b < 3; ++b)
      if (active[b] && !ax[b].shared) return false;
    return true;
  }
  detail::FaceRegion region(int f, bool unknown_only) const;
  // All boundary data constant and no source: a stage's boundary correction is exactly 0.
  bool static_data = false;
  detail::Storage pivot_flag;           // CUDA: int per axis, set by the fused kernel on a bad pivot
};

}  // namespace adi
