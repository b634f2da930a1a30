// The ADI schemes as sequences of the operator's two primitives: an explicit
// evaluation (Operator::apply) and an implicit stage along one axis
// (Operator::solve). Stage fields are updated in place where the scheme allows,
// so every scheme needs at most two of them. Formulas: in 't Hout & Welfert,
// Appl. Numer. Math. 59 (2009); in 't Hout & Foulon, IJNAM 7 (2010), section 3.
#include "adi/scheme.hpp"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "adi/base/env_switch.hpp"
#include "adi/error.hpp"
#include "solvers/cuda/backend.hpp"

namespace adi {

namespace {
struct SchemeName {
  SchemeKind kind;
  const char* name;
};
constexpr SchemeName kSchemeNames[] = {
    {SchemeKind::douglas, "douglas"},
    {SchemeKind::craig_sneyd, "craig-sneyd"},
    {SchemeKind::modified_craig_sneyd, "modified-craig-sneyd"},
    {SchemeKind::hundsdorfer_verwer, "hundsdorfer-verwer"},
    {SchemeKind::peaceman_rachford, "peaceman-rachford"},
};

// Adds the wall time of its scope to a counter.
class Timer {
 public:
  explicit Timer(double& acc) : acc_(acc), t0_(std::chrono::steady_clock::now()) {}
  ~Timer() { acc_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(); }

 private:
  double& acc_;
  std::chrono::steady_clock::time_point t0_;
};

// "(z, y, x)"
std::string describe_order(const std::vector<Axis>& order) {
  std::string s = "(";
  for (std::size_t i = 0; i < order.size(); ++i) {
    const int a = static_cast<int>(order[i]);
    s += std::string(i ? ", " : "") + (a >= 0 && a < 3 ? axis_name(order[i]) : "Axis(" + detail::number(a) + ")");
  }
  return s + ")";
}

// Throws InvalidArgument unless `order` is a permutation of the operator's active axes.
template <class T>
void check_stage_order(const Operator<T>& op, const std::vector<Axis>& order, const std::string& what) {
  std::vector<Axis> active;
  for (Axis a : {Axis::x, Axis::y, Axis::z})
    if (op.active(a)) active.push_back(a);
  bool ok = order.size() == active.size();
  std::array<int, 3> seen{};
  for (Axis a : order) {
    const int i = static_cast<int>(a);
    ok = ok && i >= 0 && i < 3 && op.active(a) && ++seen[i] == 1;
  }
  if (!ok)
    throw InvalidArgument(what + " = " + describe_order(order) + " must be a permutation of the active axes " +
                          describe_order(active) + " (the axes with more than one node) of the grid " +
                          op.grid().describe() + ", each once");
}

// ADI_STAGE_ORDER ("zyx", "yx", ...: axis letters, those of inactive axes skipped) or the
// default x, y, z, restricted to the active axes.
template <class T>
std::vector<Axis> initial_stage_order(const Operator<T>& op) {
  std::vector<Axis> order;
  const char* env = detail::env_value("ADI_STAGE_ORDER");
  const std::string letters = env && *env ? env : "xyz";
  for (char c : letters) {
    if (c != 'x' && c != 'y' && c != 'z')
      throw InvalidArgument("ADI_STAGE_ORDER = '" + letters +
                            "': expected the letters x, y, z in the order of the implicit stages, e.g. zyx");
    const Axis a = static_cast<Axis>(c - 'x');
    if (op.active(a)) order.push_back(a);
  }
  check_stage_order(op, order, "ADI_STAGE_ORDER '" + letters + "' on the active axes");
  return order;
}
}  // namespace

const char* scheme_name(SchemeKind k) {
  for (const auto& e : kSchemeNames)
    if (e.kind == k) return e.name;
  return "unknown";
}

const char* Scheme::name() const { return scheme_name(kind); }

Scheme Scheme::douglas(double theta) { return Scheme{SchemeKind::douglas, theta, 0.5, 0}; }
Scheme Scheme::craig_sneyd(double theta, double sigma) { return Scheme{SchemeKind::craig_sneyd, theta, sigma, 0}; }
Scheme Scheme::modified_craig_sneyd(double theta) { return Scheme{SchemeKind::modified_craig_sneyd, theta, 0.5, 0}; }
Scheme Scheme::hundsdorfer_verwer(double theta) { return Scheme{SchemeKind::hundsdorfer_verwer, theta, 0.5, 0}; }
Scheme Scheme::peaceman_rachford() { return Scheme{SchemeKind::peaceman_rachford, 0.5, 0.5, 0}; }

Scheme Scheme::from_name(const std::string& name) {
  std::string all;
  for (const auto& e : kSchemeNames) {
    if (name == e.name) {
      switch (e.kind) {
        case SchemeKind::douglas: return douglas();
        case SchemeKind::craig_sneyd: return craig_sneyd();
        case SchemeKind::modified_craig_sneyd: return modified_craig_sneyd();
        case SchemeKind::hundsdorfer_verwer: return hundsdorfer_verwer();
        case SchemeKind::peaceman_rachford: return peaceman_rachford();
      }
    }
    all += all.empty() ? "" : ", ";
    all += e.name;
  }
  throw InvalidArgument("unknown ADI scheme '" + name + "'; expected one of: " + all);
}

template <class T>
struct AdiSolver<T>::Impl {
  Operator<T> op;
  Scheme scheme;
  Field<T> W, Y;  // stage fields, allocated once
  StepTimings timings;
  double halo0 = 0;                   // the operator's halo / line exchange seconds at the last reset
  std::array<double, 3> exchange0{};
  long taken = 0;
  std::vector<Axis> axes;  // the implicit axes in the order of the stages (set_stage_order)
  // The explicit steps ride on the first stage of each chain (Operator::solve_folded), unless
  // the operator keeps them separate (ExplicitFold::separate: the host's default).
  bool fold() const { return op.explicit_fold() != Operator<T>::ExplicitFold::separate; }

  Impl(Operator<T> o, Scheme s) : op(std::move(o)), scheme(s) {}

  using W4 = std::array<T, 4>;
  static W4 all(T v) { return {v, v, v, v}; }

  // Per-part times. Host: a clock around the part. CUDA: two events on the executor's
  // stream around it, read once they have passed, so that the device is not
  // synchronised around every part and the host queues the next part's kernels while
  // the device runs this one (a synchronisation per part measured as a launch gap of
  // the order of a 256^3 stage's own time).
  struct Mark {
    void* start;
    void* stop;
    double* acc;
  };
  std::vector<void*> events;  // recorded and read: free for reuse
  std::vector<Mark> pending;
  static constexpr std::size_t kMaxPending = 64;  // then wait for the oldest (bounds the events)

  ~Impl() {
    for (void* e : events) cuda_backend::event_destroy(e);
    for (const Mark& m : pending) {
      cuda_backend::event_destroy(m.start);
      cuda_backend::event_destroy(m.stop);
    }
  }
  void* take_event() {
    if (events.empty()) return cuda_backend::event_create();
    void* e = events.back();
    events.pop_back();
    return e;
  }
  // Adds the marks that have passed (all of them with wait) to their counters.
  void resolve(bool wait) {
    std::size_t k = 0;
    for (; k < pending.size(); ++k) {
      const Mark& m = pending[k];
      if (!wait && !cuda_backend::event_done(m.stop)) break;
      *m.acc += 1e-3 * cuda_backend::event_elapsed_ms(m.start, m.stop);
      events.push_back(m.start);
      events.push_back(m.stop);
    }
    pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(k));
  }
  template <class F>
  void timed(double& acc, F&& part) {
    const Executor& e = op.executor();
    if (!e.is_cuda()) {
      Timer tm(acc);
      part();
      return;
    }
    resolve(pending.size() >= kMaxPending);
    void* start = take_event();
    cuda_backend::event_record(start, e.stream());
    try {
      part();
    } catch (...) {
      events.push_back(start);
      throw;
    }
    void* stop = take_event();
    cuda_backend::event_record(stop, e.stream());
    pending.push_back({start, stop, &acc});
  }
  void explicit_step(double t, Field<T>& V, const W4& w, T alpha, const Field<T>* base, Field<T>& out) {
    timed(timings.explicit_part, [&] { op.apply(t, V, w, alpha, base, out); });
  }
  void implicit_stage(Axis a, T s, double t_new, const Field<T>& base, Field<T>& out, double t_old,
                      Field<T>* V_old, std::array<bool, 3> later = {}, Field<T>* result = nullptr) {
    timed(timings.implicit[static_cast<int>(a)],
          [&] { op.solve(a, s, t_new, base, out, t_old, V_old, later, result); });
  }
  void folded_stage(Axis a, T s, double t_new, T alpha, const std::array<typename Operator<T>::ExplicitTerm, 2>& terms,
                    Field<T>& out, double t_old, Field<T>* V_old, std::array<bool, 3> later, Field<T>* result) {
    timed(timings.implicit[static_cast<int>(a)],
          [&] { op.solve_folded(a, s, t_new, alpha, terms, out, t_old, V_old, later, result); });
  }
  // The axes after axes[j] in a chain of implicit stages.
  std::array<bool, 3> later(std::size_t j) const {
    std::array<bool, 3> l{};
    for (std::size_t i = j + 1; i < axes.size(); ++i) l[static_cast<int>(axes[i])] = true;
    return l;
  }
  // The last stage (or PR's last explicit half) wrote U's unknowns directly; only
  // Dirichlet nodes outside the last sweep still hold older data.
  void finish_in_place(Field<T>& U, double t1) {
    timed(timings.boundary, [&] { op.set_boundary(t1, U); });
  }
  Field<T>& second() {
    if (Y.empty()) Y = op.make_field();
    return Y;
  }

  // Y_0 = U + dt F(t0, U) into W; Y_j = Y_{j-1} + s (F_j(t1, Y_j) - F_j(t0, U)) into `out`
  // (in place when out is W).
  // With `into_u` the last stage writes its solution straight into U (the new U_{n+1}).
  //
  // Folded (the operator's ExplicitFold is not `separate`; CUDA's default): the explicit
  // step rides on the first stage, Y_0 is never stored: one stencil pass writes the stage's
  // right-hand side from U (3k + 1 fields, 10 in 3D, instead of 3k + 2) or, with
  // ExplicitFold::kernel, the fused kernel forms it (3k - 1 = 8).
  void douglas_chain(Field<T>& U, double t0, double t1, double h, T s, Field<T>& out, bool into_u) {
    const T dt = T(h);
    std::size_t first = 0;
    if (fold()) {
      const bool last = axes.size() == 1;
      folded_stage(axes[0], s, t1, T(1), {{{t0, &U, all(dt)}, {}}}, out, t0, &U, later(0),
                   last && into_u ? &U : nullptr);
      first = 1;
    } else {
      explicit_step(t0, U, all(dt), T(1), &U, W);
    }
    for (std::size_t j = first; j < axes.size(); ++j) {
      const bool last = j + 1 == axes.size();
      implicit_stage(axes[j], s, t1, j == 0 ? W : out, out, t0, &U, later(j), last && into_u ? &U : nullptr);
    }
  }

  void douglas(Field<T>& U, double t0, double t1, double h, double theta) {
    const T s = T(theta * h);
    douglas_chain(U, t0, t1, h, s, W, true);
    finish_in_place(U, t1);
  }

  // The correction stages common to CS, MCS and HV: W holds Y_0 on entry; the
  // explicit correction (weights on F(t1, Y_k) and F(t0, U)) then implicit stages
  // against F_j(t_ref, V_ref).
  //
  // Folded: Y~0 = Y0 + (w_new . F(t1, Yk)) + (w_old . F(t0, U)) = U + ((dt + w_old) . F(t0, U))
  // + (w_new . F(t1, Yk)) depends on U and Yk only, so it is formed inside the first
  // correction stage as well (Y_0 is never stored): 2 (3k - 1) + 1 fields (17 in 3D).
  void corrected(Field<T>& U, double t0, double t1, double h, const W4& w_new, const W4& w_old, bool hv) {
    const T s = T(scheme.theta * h);
    Field<T>& Yk = second();
    douglas_chain(U, t0, t1, h, s, Yk, false);  // unfolded: Y_0 stays in W
    std::size_t first = 0;
    if (fold()) {
      const T dt = T(h);
      W4 w0;
      for (int p = 0; p < 4; ++p) w0[p] = dt + w_old[p];
      folded_stage(axes[0], s, t1, T(1), {{{t0, &U, w0}, {t1, &Yk, w_new}}}, W, hv ? t1 : t0, hv ? &Yk : &U,
                   later(0), axes.size() == 1 ? &U : nullptr);
      first = 1;
    } else {
      explicit_step(t1, Yk, w_new, T(1), &W, W);
      explicit_step(t0, U, w_old, T(1), &W, W);
    }
    for (std::size_t j = first; j < axes.size(); ++j) {
      Field<T>* result = j + 1 == axes.size() ? &U : nullptr;
      if (hv)
        implicit_stage(axes[j], s, t1, W, W, t1, &Yk, later(j), result);
      else
        implicit_stage(axes[j], s, t1, W, W, t0, &U, later(j), result);
    }
    finish_in_place(U, t1);
  }
  void peaceman_rachford(Field<T>& U, double t0, double t1, double h) {
    const T s = T(0.5 * h);
    const double th = t0 + 0.5 * (t1 - t0);
    const Axis a1 = axes[0];
    Field<T>& Z = second();
    if (axes.size() == 1) {
      // Implicit half step, explicit half step: the implicit midpoint rule.
      implicit_stage(a1, s, th, U, W, 0.0, nullptr);
      W4 w{};
      w[static_cast<int>(a1) + 1] = s;
      explicit_step(th, W, w, T(1), &W, U);
      finish_in_place(U, t1);
      return;
    }
    const Axis a2 = axes[1];
    W4 w{};
    w[static_cast<int>(a2) + 1] = s;
    explicit_step(t0, U, w, T(1), &U, W);
    implicit_stage(a1, s, th, W, W, 0.0, nullptr);
    W4 v{};
    v[static_cast<int>(a1) + 1] = s;
    explicit_step(th, W, v, T(1), &W, Z);
    implicit_stage(a2, s, t1, Z, Z, 0.0, nullptr, {}, &U);
    finish_in_place(U, t1);
  }

  // Halo exchanges: within a step a field exchanged once and not written since keeps its ghosts.
  struct GhostReuse {
    Operator<T>& op;
    explicit GhostReuse(Operator<T>& o) : op(o) { op.reuse_ghosts(true); }
    ~GhostReuse() { op.reuse_ghosts(false); }
  };

  // h: the step's nominal length (the caller's dt), from which every scheme forms its weights,
  // s = theta h and the explicit dt; t0, t1 only place the step in time (boundaries, sources).
  // t1 - t0 differs from h in its last bits from one step to the next (t0 + n dt rounded), so
  // weights taken from it changed every step, and with them the implicit bands: every stage's
  // pivot check and a split axis's SPIKE spikes ran again each step (stop 38, h-splitstage's
  // finding; 84 us a split z stage on 2 x H200).
  void step(Field<T>& U, double t0, double t1, double h) {
    GhostReuse reuse(op);
    if (taken < scheme.damping_steps) {
      // Rannacher: two Douglas theta = 1 half steps damp the high frequencies of
      // non-smooth data that the theta = 1/2 schemes would keep.
      const double tm = t0 + 0.5 * (t1 - t0);
      douglas(U, t0, tm, 0.5 * h, 1.0);
      douglas(U, tm, t1, 0.5 * h, 1.0);
    } else {
      const double dt = h;
      switch (scheme.kind) {
        case SchemeKind::douglas: douglas(U, t0, t1, h, scheme.theta); break;
        case SchemeKind::craig_sneyd:
          if (!op.has_mixed()) {
            douglas(U, t0, t1, h, scheme.theta);  // F0 = 0: CS reduces to Douglas exactly
          } else {
            W4 wn{}, wo{};
            wn[0] = T(scheme.sigma * dt);
            wo[0] = T(-scheme.sigma * dt);
            corrected(U, t0, t1, h, wn, wo, false);
          }
          break;
        case SchemeKind::modified_craig_sneyd: {
          // Y~0 = Y0 + theta dt (F0(Yk) - F0(U)) + (1/2 - theta) dt (F(Yk) - F(U))
          const T c = T((0.5 - scheme.theta) * dt);
          const T c0 = T(0.5 * dt);
          corrected(U, t0, t1, h, W4{c0, c, c, c}, W4{-c0, -c, -c, -c}, false);
          break;
        }
        case SchemeKind::hundsdorfer_verwer: {
          const T w = T(0.5 * dt);
          corrected(U, t0, t1, h, all(w), all(-w), true);
          break;
        }
        case SchemeKind::peaceman_rachford: peaceman_rachford(U, t0, t1, h); break;
      }
    }
    op.settle();  // with a subdomain: errors met on some ranks only, thrown on every rank
    ++taken;
    ++timings.steps;
  }
};

template <class T>
AdiSolver<T>::AdiSolver(Operator<T> op, Scheme scheme) {
  detail::require(std::isfinite(scheme.theta) && scheme.theta > 0.0 && scheme.theta <= 1.0,
                  std::string("AdiSolver: theta = ") + detail::number(scheme.theta) + " of scheme " +
                      scheme.name() + " must lie in (0, 1]");
  detail::require(std::isfinite(scheme.sigma) && scheme.sigma >= 0.0,
                  "AdiSolver: sigma = " + detail::number(scheme.sigma) + " must be finite and >= 0");
  detail::require(scheme.damping_steps >= 0, "AdiSolver: damping_steps = " +
                                                 detail::number(scheme.damping_steps) +
                                                 " must be >= 0 (0: no Rannacher damping)");
  if (scheme.kind == SchemeKind::peaceman_rachford && op.implicit_axes() > 2)
    throw InvalidArgument("AdiSolver: peaceman-rachford is defined for 1D and 2D grids, this grid is " +
                          op.grid().describe() +
                          " (3D); use douglas, craig-sneyd, modified-craig-sneyd or hundsdorfer-verwer");
  if (scheme.kind == SchemeKind::peaceman_rachford && op.has_mixed())
    throw Unsupported("AdiSolver: peaceman-rachford has no stage for mixed derivative terms (explicit in both "
                      "halves it is unstable); use craig-sneyd, modified-craig-sneyd or hundsdorfer-verwer");
  impl_ = std::make_unique<Impl>(std::move(op), scheme);
  impl_->axes = initial_stage_order(impl_->op);
  impl_->W = impl_->op.make_field();
}

template <class T>
AdiSolver<T>::~AdiSolver() = default;
template <class T>
AdiSolver<T>::AdiSolver(AdiSolver&&) noexcept = default;
template <class T>
AdiSolver<T>& AdiSolver<T>::operator=(AdiSolver&&) noexcept = default;

template <class T>
void AdiSolver<T>::step(Field<T>& u, double t, double dt) {
  detail::require(std::isfinite(t), "AdiSolver::step: t = " + detail::number(t) + " must be finite");
  detail::require(std::isfinite(dt) && dt > 0.0,
                  "AdiSolver::step: dt = " + detail::number(dt) + " must be finite and > 0");
  impl_->op.check_field(u, "u");
  impl_->step(u, t, t + dt, dt);
}

template <class T>
void AdiSolver<T>::step(Field<T>& u, double t0, double t1, double dt) {
  detail::require(std::isfinite(t0) && std::isfinite(t1) && t1 > t0,
                  "AdiSolver::step: need finite t0 < t1, got t0 = " + detail::number(t0) +
                      ", t1 = " + detail::number(t1));
  detail::require(std::isfinite(dt) && dt > 0.0 && std::abs((t1 - t0) - dt) <= 1e-6 * dt,
                  "AdiSolver::step: dt = " + detail::number(dt) + " must be t1 - t0 = " +
                      detail::number(t1 - t0) + " to within 1e-6 relative (the step's nominal length)");
  impl_->op.check_field(u, "u");
  impl_->step(u, t0, t1, dt);
}

template <class T>
void AdiSolver<T>::advance(Field<T>& u, double t0, double t1, long steps, const ProgressCallback<T>& progress) {
  detail::require(steps > 0, "AdiSolver::advance: steps = " + detail::number(steps) + " must be > 0");
  detail::require(std::isfinite(t0) && std::isfinite(t1) && t1 > t0,
                  "AdiSolver::advance: need finite t0 < t1, got t0 = " + detail::number(t0) +
                      ", t1 = " + detail::number(t1));
  Operator<T>& op = impl_->op;
  op.check_field(u, "u");
  // The first node of this rank's own nodes whose value is not finite ("" where none), agreed
  // over the subdomain's ranks (one copy to the host for device fields).
  auto first_non_finite = [&](const std::string& who) {
    const Field<T> h = u.memory_space() == MemorySpace::host ? Field<T>() : u.to_host();
    const Field<T>& hv = h.empty() ? u : h;
    const auto lo = op.owned_lo(), hi = op.owned_hi(), org = op.origin();
    std::string bad;
    for (index_t k = lo[2]; k <= hi[2] && bad.empty(); ++k)
      for (index_t j = lo[1]; j <= hi[1] && bad.empty(); ++j)
        for (index_t i = lo[0]; i <= hi[0] && bad.empty(); ++i)
          if (!std::isfinite(double(hv(i, j, k))))
            bad = who + "u(" + detail::number(org[0] + i) + ", " + detail::number(org[1] + j) + ", " +
                  detail::number(org[2] + k) + ") = " + detail::number(double(hv(i, j, k))) + " is not finite";
    if (op.subdomain()) op.subdomain()->agree(bad, "");
    return bad;
  };
  const std::string bad_before = first_non_finite("AdiSolver::advance: ");
  if (!bad_before.empty()) throw InvalidArgument(bad_before + "; initialise every node");
  const double dt = (t1 - t0) / double(steps);
  for (long n = 0; n < steps; ++n) {
    const double ta = t0 + double(n) * dt;
    const double tb = n + 1 == steps ? t1 : t0 + double(n + 1) * dt;
    impl_->step(u, ta, tb, dt);
    if (progress) progress(n + 1, tb, u);
  }
  // Finite u in, non-finite u out: the steps overflowed (an explicit part of dt A u beyond the
  // largest value, an unstable scheme), which no pivot check sees. One read of u per call.
  const std::string bad_after =
      first_non_finite("AdiSolver::advance: after the steps from t = " + detail::number(t0) + " to " +
                       detail::number(t1) + " (" + detail::number(steps) + " of dt = " + detail::number(dt) + "), ");
  if (!bad_after.empty())
    throw UnstableSystem(bad_after + ": the steps overflowed; take a smaller time step (more steps) or check the "
                                     "PDE's coefficients and the boundary data");
}

template <class T>
void AdiSolver<T>::restart() {
  impl_->taken = 0;
}
template <class T>
void AdiSolver<T>::set_stage_order(const std::vector<Axis>& order) {
  check_stage_order(impl_->op, order, "AdiSolver::set_stage_order: order");
  impl_->axes = order;
}
template <class T>
const std::vector<Axis>& AdiSolver<T>::stage_order() const {
  return impl_->axes;
}
template <class T>
const Scheme& AdiSolver<T>::scheme() const {
  return impl_->scheme;
}
template <class T>
Operator<T>& AdiSolver<T>::op() {
  return impl_->op;
}
template <class T>
const StepTimings& AdiSolver<T>::timings() const {
  Impl& p = *impl_;
  p.resolve(true);  // CUDA: waits for the parts still in flight
  p.timings.halo = p.op.halo_seconds() - p.halo0;
  const auto ex = p.op.line_exchange_seconds();
  for (int a = 0; a < 3; ++a) p.timings.line_exchange[a] = ex[a] - p.exchange0[a];
  return p.timings;
}
template <class T>
void AdiSolver<T>::reset_timings() {
  Impl& p = *impl_;
  p.resolve(true);
  p.timings = StepTimings{};
  p.halo0 = p.op.halo_seconds();
  p.exchange0 = p.op.line_exchange_seconds();
}

template class AdiSolver<float>;
template class AdiSolver<double>;

}  // namespace adi
