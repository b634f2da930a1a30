// Douglas ADI for the heat equation on a decomposed grid. The stages are those of
// adi/scheme.cpp (douglas_chain) and the boundary values of intermediate stages those of
// Operator::solve (stage_face_correction): see the comments there for why.
#include "adi/mpi/heat.hpp"

#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/heat_subdomain.hpp"

namespace adi::mpi {

namespace dev = cuda_backend::heat_subdomain;

namespace {
double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

class Timer {
 public:
  explicit Timer(double& acc) : acc_(acc), t0_(now()) {}
  ~Timer() { acc_ += now() - t0_; }

 private:
  double& acc_;
  double t0_;
};
}  // namespace

template <class T>
struct DistributedHeat<T>::Impl {
  const ProcessGrid* procs;
  Grid grid;
  std::array<double, 3> k{};
  BoundaryConditions bc;
  Scheme scheme;
  std::array<bool, 3> active{}, periodic{}, dir_lo{}, dir_hi{}, touch_lo{}, touch_hi{};
  std::array<index_t, 3> lo{}, e{}, n{}, ulo{}, uhi{};
  std::array<double, 3> rate{};  // k / h^2
  LocalField<T> U, W;
  std::optional<HaloExchange<T>> halo;
  struct AxisPlan {
    std::optional<DistributedTridiagonalPlan<T>> plan;
    std::vector<T> a, b, c;
    T s_formed = T(0);
    index_t sweep = 0;  // offset of the sweep box's first node in the field's storage
  };
  std::array<AxisPlan, 3> ax;
  std::vector<int> order;  // active axes
  DistributedTimings tm;
  long taken = 0;

  // Device heat (exec.is_cuda()): U, W and the bands live on exec's GPU.
  Executor exec = Executor::host();
  bool dev = false;
  std::array<std::array<Array<T>, 3>, 3> dbands;  // [axis][a, b, c]
  // Dirichlet data of the faces this rank owns, as planes of doubles (heat_subdomain.hpp's
  // FacePlane: the face's nodes and one more on each side), evaluated on the host into
  // page-locked memory and kept on the device for the last two times asked for.
  std::array<int, 6> plane_of{-1, -1, -1, -1, -1, -1};
  std::vector<dev::FacePlane> planes;
  index_t plane_values = 0;
  bool static_planes = false;  // every Dirichlet face constant: evaluated once
  std::shared_ptr<double> hplanes;
  std::array<Array<double>, 2> gslot;
  std::array<double, 2> slot_t{};
  std::array<bool, 2> slot_valid{};

  void fence() const {
    if (dev) exec.synchronize();
  }
  void* stream() const { return exec.stream(); }

  bool owns_face(int a, int side) const { return side ? dir_hi[a] && touch_hi[a] : dir_lo[a] && touch_lo[a]; }

  void setup_planes() {
    for (int a = 0; a < 3; ++a)
      for (int side = 0; side < 2; ++side) {
        if (!owns_face(a, side)) continue;
        dev::FacePlane fp;
        fp.axis = a;
        fp.hi = side == 1;
        fp.plane = side ? e[a] - 1 : 0;
        index_t count = 1;
        for (int i = 0; i < 3; ++i) {
          if (i == a) continue;
          fp.plo[i] = active[i] ? ulo[i] - 1 : 0;
          fp.pn[i] = active[i] ? uhi[i] - ulo[i] + 3 : 1;
          count *= fp.pn[i];
        }
        fp.offset = plane_values;
        plane_values += count;
        plane_of[std::size_t(2 * a + side)] = int(planes.size());
        planes.push_back(fp);
      }
    if (planes.empty()) return;
    static_planes = true;
    for (const dev::FacePlane& fp : planes)
      static_planes = static_planes && bc[face_of(Axis(fp.axis), fp.hi)].is_constant();
    hplanes = std::shared_ptr<double>(static_cast<double*>(dev::pinned_alloc(std::size_t(plane_values) * sizeof(double))),
                                      [](double* q) { dev::pinned_free(q); });
    for (auto& g : gslot) g = Array<double>(plane_values, exec);
  }

  // g(t) on every owned face plane, on the device; evaluates (host, then one copy) into
  // a slot that does not hold time `keep` unless t is already there. The boundary
  // functions are called from several OpenMP threads: they must be pure.
  const double* planes_at(double t, double keep) {
    int slot = -1;
    if (static_planes) {
      if (slot_valid[0]) return gslot[0].data();
      slot = 0;
    } else {
      for (int q = 0; q < 2; ++q)
        if (slot_valid[std::size_t(q)] && slot_t[std::size_t(q)] == t) return gslot[std::size_t(q)].data();
      slot = !slot_valid[0] ? 0 : !slot_valid[1] ? 1 : (slot_t[0] == keep ? 1 : 0);
    }
    double* h = hplanes.get();
    for (const dev::FacePlane& fp : planes) {
      const int a = fp.axis, o1 = a == 0 ? 1 : 0, o2 = a == 2 ? 1 : 2;
      const Boundary& g = bc[face_of(Axis(a), fp.hi)];
      const double xa = coord(a, fp.plane);
      const index_t n1 = fp.pn[o1], n2 = fp.pn[o2];
#pragma omp parallel for schedule(static) if (n1 * n2 >= 16384)
      for (index_t c2 = 0; c2 < n2; ++c2) {
        double x[3];
        x[a] = xa;
        x[o2] = wrapped_coord(o2, fp.plo[o2] + c2);
        for (index_t c1 = 0; c1 < n1; ++c1) {
          x[o1] = wrapped_coord(o1, fp.plo[o1] + c1);
          h[fp.offset + c1 + c2 * n1] = g.value(t, x[0], x[1], x[2]);
        }
      }
    }
    gslot[std::size_t(slot)].copy_from_host(h);
    slot_valid[std::size_t(slot)] = true;
    slot_t[std::size_t(slot)] = t;
    return gslot[std::size_t(slot)].data();
  }
  // The coordinate of local index `local` along a, wrapping around the global axis (the
  // planes' outer nodes of a periodic axis).
  double wrapped_coord(int a, index_t local) const {
    return grid.axis(Axis(a))[(lo[a] + local + n[a]) % n[a]];
  }

  void set_boundary_device(double t, LocalField<T>& V) {
    Timer timer(tm.boundary);
    if (planes.empty()) return;
    cuda_backend::set_device(exec.device());
    const double* g = planes_at(t, std::numeric_limits<double>::quiet_NaN());
    std::array<dev::FaceWrite, 6> w{};
    int count = 0;
    for (const dev::FacePlane& fp : planes) {
      dev::FaceWrite& f = w[std::size_t(count++)];
      f.p = fp;
      for (int i = 0; i < 3; ++i) {
        if (i == fp.axis) continue;
        f.from[i] = 0;
        f.to[i] = e[i] - 1;
        // A later face (higher axis) writes the shared edge, as the host loop does.
        f.skip_lo[i] = i > fp.axis && owns_face(i, 0);
        f.skip_hi[i] = i > fp.axis && owns_face(i, 1);
      }
    }
    dev::write_faces<T>(V.data(), V.allocated(), V.offset(), w.data(), count, g, g, false, stream());
    fence();
  }

  // The stage along a's Dirichlet end rows on the device (stage_value's formula from the
  // face planes at t0 and t1).
  void stage_faces_device(int a, double s, double t0, double t1, const std::vector<int>& later) {
    std::array<dev::FaceWrite, 2> w{};
    int count = 0;
    for (int side = 0; side < 2; ++side) {
      const int pi = plane_of[std::size_t(2 * a + side)];
      if (pi < 0) continue;
      dev::FaceWrite& f = w[std::size_t(count++)];
      f.p = planes[std::size_t(pi)];
      for (int i = 0; i < 3; ++i) {
        if (i == a) continue;
        f.from[i] = ulo[i];
        f.to[i] = uhi[i];
      }
      for (int i : later)
        if (i != a) f.weight[i] = s * rate[i];
    }
    if (count == 0) return;
    const double* gn = planes_at(t1, t0);
    const double* go = planes_at(t0, t1);
    dev::write_faces<T>(W.data(), W.allocated(), W.offset(), w.data(), count, gn, go, true, stream());
  }

  void douglas_device(double t0, double t1, double theta) {
    const double dt = t1 - t0, s = theta * dt;
    cuda_backend::set_device(exec.device());
    set_boundary_device(t0, U);
    {
      Timer timer(tm.halo);
      halo->exchange(U);
      fence();
    }
    {
      // W = U + dt F(U) - s F_a(U) for the first axis a: the explicit part and the first
      // stage's right-hand side in one pass.
      Timer timer(tm.explicit_part);
      T coef[3] = {T(0), T(0), T(0)};
      for (int a : order) coef[a] = T(dt * rate[a] - (a == order[0] ? s * rate[a] : 0.0));
      dev::heat_combine<T>(U.data(), W.data(), U.allocated(), U.offset(), ulo.data(), uhi.data(), coef, false,
                           stream());
      fence();
    }
    for (std::size_t j = 0; j < order.size(); ++j) {
      const int a = order[j];
      const bool last = j + 1 == order.size();
      const std::vector<int> later(order.begin() + std::ptrdiff_t(j) + 1, order.end());
      Timer timer(tm.implicit[a]);
      if (j > 0) {
        T coef[3] = {T(0), T(0), T(0)};
        coef[a] = T(-s * rate[a]);
        dev::heat_combine<T>(U.data(), W.data(), U.allocated(), U.offset(), ulo.data(), uhi.data(), coef, true,
                             stream());
      }
      stage_faces_device(a, s, t0, t1, later);
      form_bands(a, T(s));
      AxisPlan& A = ax[a];
      T* out = last ? U.data() + A.sweep : W.data() + A.sweep;
      A.plan->solve(SharedBands<T>{dbands[a][0].data(), dbands[a][1].data(), dbands[a][2].data()},
                    W.data() + A.sweep, out);
      fence();
      tm.solve_exchange[a] += A.plan->last_exchange_seconds();
    }
    set_boundary_device(t1, U);
  }

  double coord(int a, index_t local) const { return grid.axis(Axis(a))[lo[a] + local]; }
  bool is_dirichlet_row(int a, index_t local) const {
    const index_t g = lo[a] + local;
    return (g == 0 && dir_lo[a]) || (g == n[a] - 1 && dir_hi[a]);
  }
  // Second difference along a at storage index q, times k/h^2.
  T lap(const LocalField<T>& f, int a, index_t q) const {
    const index_t st = f.allocated().stride(Axis(a));
    const T* p = f.data() + q;
    return T(rate[a]) * (p[-st] - T(2) * p[0] + p[st]);
  }

  template <class F>
  void for_unknowns(F&& f) {
    for (index_t kk = ulo[2]; kk <= uhi[2]; ++kk)
      for (index_t jj = ulo[1]; jj <= uhi[1]; ++jj)
        for (index_t ii = ulo[0]; ii <= uhi[0]; ++ii) f(U.index(ii, jj, kk));
  }

  void set_boundary(double t, LocalField<T>& V) {
    Timer timer(tm.boundary);
    for (int a = 0; a < 3; ++a)
      for (int side = 0; side < 2; ++side) {
        if (!(side ? dir_hi[a] && touch_hi[a] : dir_lo[a] && touch_lo[a])) continue;
        const Boundary& g = bc[face_of(Axis(a), side == 1)];
        std::array<index_t, 3> b{0, 0, 0}, end = e;
        b[a] = side ? e[a] - 1 : 0;
        end[a] = b[a] + 1;
        for (index_t kk = b[2]; kk < end[2]; ++kk)
          for (index_t jj = b[1]; jj < end[1]; ++jj)
            for (index_t ii = b[0]; ii < end[0]; ++ii)
              V(ii, jj, kk) = T(g.value(t, coord(0, ii), coord(1, jj), coord(2, kk)));
      }
  }

  // The boundary value of the stage along a at a Dirichlet node: g(t1) minus s times
  // the later axes' parts of g's change (Operator::Impl::stage_face_correction).
  double stage_value(const Boundary& g, int a, const std::array<index_t, 3>& local, double s, double t0,
                     double t1, const std::vector<int>& later) const {
    double x[3] = {coord(0, local[0]), coord(1, local[1]), coord(2, local[2])};
    double v = g.value(t1, x[0], x[1], x[2]);
    for (int i : later) {
      if (i == a) continue;
      double xm[3] = {x[0], x[1], x[2]}, xp[3] = {x[0], x[1], x[2]};
      const index_t gi = lo[i] + local[i];
      const AxisGrid& axis = grid.axis(Axis(i));
      xm[i] = axis[(gi - 1 + n[i]) % n[i]];
      xp[i] = axis[(gi + 1) % n[i]];
      auto second = [&](double t) {
        return g.value(t, xm[0], xm[1], xm[2]) - 2 * g.value(t, x[0], x[1], x[2]) + g.value(t, xp[0], xp[1], xp[2]);
      };
      v -= s * rate[i] * (second(t1) - second(t0));
    }
    return v;
  }

  void form_bands(int a, T s) {
    AxisPlan& A = ax[a];
    if (A.s_formed == s) return;
    const T off = -s * T(rate[a]), diag = T(1) + T(2) * s * T(rate[a]);
    for (index_t i = 0; i < e[a]; ++i) {
      const bool d = is_dirichlet_row(a, i);
      A.a[std::size_t(i)] = d ? T(0) : off;
      A.b[std::size_t(i)] = d ? T(1) : diag;
      A.c[std::size_t(i)] = d ? T(0) : off;
    }
    if (dev) {
      dbands[a][0].copy_from_host(A.a.data());
      dbands[a][1].copy_from_host(A.b.data());
      dbands[a][2].copy_from_host(A.c.data());
    }
    A.s_formed = s;
  }

  void douglas(double t0, double t1, double theta) {
    if (dev) {
      douglas_device(t0, t1, theta);
      return;
    }
    const double dt = t1 - t0, s = theta * dt;
    set_boundary(t0, U);
    {
      Timer timer(tm.halo);
      halo->exchange(U);
    }
    {
      Timer timer(tm.explicit_part);
      const T tdt = T(dt);
      for_unknowns([&](index_t q) {
        T f = T(0);
        for (int a : order) f += lap(U, a, q);
        W.data()[q] = U.data()[q] + tdt * f;
      });
    }
    for (std::size_t j = 0; j < order.size(); ++j) {
      const int a = order[j];
      const bool last = j + 1 == order.size();
      const std::vector<int> later(order.begin() + std::ptrdiff_t(j) + 1, order.end());
      Timer timer(tm.implicit[a]);
      const T ts = T(s);
      for_unknowns([&](index_t q) { W.data()[q] -= ts * lap(U, a, q); });
      // Dirichlet end rows of the lines: the stage's boundary value.
      for (int side = 0; side < 2; ++side) {
        if (!(side ? dir_hi[a] && touch_hi[a] : dir_lo[a] && touch_lo[a])) continue;
        const Boundary& g = bc[face_of(Axis(a), side == 1)];
        std::array<index_t, 3> b = ulo, end{uhi[0] + 1, uhi[1] + 1, uhi[2] + 1};
        b[a] = side ? e[a] - 1 : 0;
        end[a] = b[a] + 1;
        for (index_t kk = b[2]; kk < end[2]; ++kk)
          for (index_t jj = b[1]; jj < end[1]; ++jj)
            for (index_t ii = b[0]; ii < end[0]; ++ii)
              W(ii, jj, kk) = T(stage_value(g, a, {ii, jj, kk}, s, t0, t1, later));
      }
      form_bands(a, ts);
      AxisPlan& A = ax[a];
      T* out = last ? U.data() + A.sweep : W.data() + A.sweep;
      A.plan->solve(SharedBands<T>{A.a.data(), A.b.data(), A.c.data()}, W.data() + A.sweep, out);
      tm.solve_exchange[a] += A.plan->last_exchange_seconds();
    }
    set_boundary(t1, U);
  }
};

template <class T>
DistributedHeat<T>::DistributedHeat(const ProcessGrid& procs, const Decomposition& dec, const Grid& grid,
                                    std::array<double, 3> k, const BoundaryConditions& bc, Scheme scheme,
                                    ReducedStrategy strategy, const Executor& exec)
    : impl_(std::make_unique<Impl>()) {
  Impl& p = *impl_;
  p.procs = &procs;
  p.exec = exec;
  p.dev = exec.is_cuda();
  p.grid = grid;
  p.k = k;
  p.bc = bc;
  p.scheme = scheme;
  MPI_Comm comm = procs.comm();
  // Checks that need no exchange; every rank computes the same verdict from the same
  // (agreed) global description, and agree() makes sure of it.
  std::string err, unsupported;
  try {
    bc.validate(grid);
  } catch (const Error& ex) {
    err = ex.what();
  }
  for (int a = 0; a < 3 && err.empty(); ++a) {
    p.n[a] = grid.extent(Axis(a));
    if (p.n[a] != dec.global()[a])
      err = std::string("DistributedHeat: the grid has ") + detail::number(p.n[a]) + " nodes along " +
            axis_name(Axis(a)) + " but the decomposition " + detail::number(dec.global()[a]);
    p.active[a] = p.n[a] > 1;
    if (!p.active[a]) continue;
    if (!(k[a] > 0) || !std::isfinite(k[a]))
      err = std::string("DistributedHeat: k along ") + axis_name(Axis(a)) + " must be finite and > 0";
    const AxisGrid& axg = grid.axis(Axis(a));
    if (!axg.is_uniform()) unsupported = "DistributedHeat: stretched axes are not supported (uniform grids only)";
    p.periodic[a] = bc.periodic(Axis(a));
    for (int side = 0; side < 2; ++side)
      if (bc[face_of(Axis(a), side == 1)].kind() == BoundaryKind::neumann)
        unsupported = "DistributedHeat: Neumann faces are not supported (Dirichlet or periodic)";
    const double h = axg.spacing(0);
    if (p.periodic[a]) {
      const double period = bc[face_of(Axis(a), false)].period();
      const double wrap = period > 0 ? period - (axg.hi() - axg.lo()) : h;
      if (std::abs(wrap - h) > 1e-9 * h)
        unsupported = "DistributedHeat: a periodic axis must wrap with its own spacing (use periodic_axis)";
    }
    p.rate[a] = k[a] / (h * h);
    p.dir_lo[a] = !p.periodic[a];
    p.dir_hi[a] = !p.periodic[a];
    if (procs.periodic(Axis(a)) != p.periodic[a])
      err = std::string("DistributedHeat: the process grid must be periodic exactly along the periodic axes (") +
            axis_name(Axis(a)) + " differs)";
  }
  if (scheme.kind == SchemeKind::modified_craig_sneyd || scheme.kind == SchemeKind::hundsdorfer_verwer ||
      scheme.kind == SchemeKind::peaceman_rachford)
    unsupported = std::string("DistributedHeat: scheme ") + scheme.name() +
                  " is not distributed yet; use douglas or craig-sneyd";
  if (!(scheme.theta > 0 && scheme.theta <= 1) || scheme.damping_steps < 0)
    err = "DistributedHeat: theta must be in (0, 1] and damping >= 0";
  agree(comm, err.empty(), err);
  {
    int mine = unsupported.empty() ? 0 : 1, any = 0;
    check_mpi(MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm), "MPI_Allreduce");
    if (any) {
      // Same text everywhere: the first rank's (all ranks see the same global setup).
      try {
        agree(comm, unsupported.empty(), unsupported);
      } catch (const InvalidArgument& ex) {
        throw Unsupported(ex.what());
      }
    }
  }

  std::array<int, 3> ghosts{};
  for (int a = 0; a < 3; ++a) {
    p.lo[a] = dec.lo(Axis(a));
    p.e[a] = dec.extent(Axis(a));
    p.touch_lo[a] = p.lo[a] == 0;
    p.touch_hi[a] = p.lo[a] + p.e[a] == p.n[a];
    p.ulo[a] = p.touch_lo[a] && p.dir_lo[a] ? 1 : 0;
    p.uhi[a] = p.touch_hi[a] && p.dir_hi[a] ? p.e[a] - 2 : p.e[a] - 1;
    ghosts[a] = p.active[a] ? 1 : 0;
    if (p.active[a]) p.order.push_back(a);
  }
  {
    // Device memory can run out on one rank: agree before the collectives below.
    std::string alloc_err;
    try {
      if (p.dev) cuda_backend::set_device(exec.device());
      p.U = LocalField<T>(dec, ghosts, exec);
      p.W = LocalField<T>(dec, ghosts, exec);
      if (p.dev) {
        for (int a : p.order)
          for (auto& band : p.dbands[a]) band = Array<T>(p.e[a], exec);
        p.setup_planes();
      }
    } catch (const Error& ex) {
      alloc_err = std::string("DistributedHeat: ") + ex.what();
    }
    agree(comm, alloc_err.empty(), alloc_err);
  }
  p.halo.emplace(procs, p.U);
  const Box3& all = p.U.allocated();
  for (int a : p.order) {
    typename Impl::AxisPlan& A = p.ax[a];
    std::array<index_t, 3> org = p.ulo, ext{};
    for (int d = 0; d < 3; ++d) ext[d] = p.uhi[d] - p.ulo[d] + 1;
    org[a] = 0;
    ext[a] = p.e[a];
    A.sweep = p.U.index(org[0], org[1], org[2]);
    A.a.assign(std::size_t(p.e[a]), T(0));
    A.b = A.a;
    A.c = A.a;
    DistributedOptions o;
    o.periodic = p.periodic[a];
    o.strategy = strategy;
    A.plan.emplace(procs, Axis(a), exec, Box3{ext[0], ext[1], ext[2], all.sy, all.sz}, o);
  }
}

template <class T>
DistributedHeat<T>::~DistributedHeat() = default;
template <class T>
DistributedHeat<T>::DistributedHeat(DistributedHeat&&) noexcept = default;
template <class T>
DistributedHeat<T>& DistributedHeat<T>::operator=(DistributedHeat&&) noexcept = default;

template <class T>
LocalField<T>& DistributedHeat<T>::u() { return impl_->U; }
template <class T>
const LocalField<T>& DistributedHeat<T>::u() const { return impl_->U; }

template <class T>
void DistributedHeat<T>::step(double t, double dt) {
  Impl& p = *impl_;
  detail::require(std::isfinite(t) && std::isfinite(dt) && dt > 0, "DistributedHeat::step: dt must be finite and > 0");
  if (p.taken < p.scheme.damping_steps) {
    const double tm = t + 0.5 * dt;
    p.douglas(t, tm, 1.0);
    p.douglas(tm, t + dt, 1.0);
  } else {
    p.douglas(t, t + dt, p.scheme.theta);
  }
  ++p.taken;
  ++p.tm.steps;
}

template <class T>
void DistributedHeat<T>::set_boundary(double t) {
  if (impl_->dev)
    impl_->set_boundary_device(t, impl_->U);
  else
    impl_->set_boundary(t, impl_->U);
}

template <class T>
void DistributedHeat<T>::exchange() {
  Timer timer(impl_->tm.halo);
  if (impl_->dev) cuda_backend::set_device(impl_->exec.device());
  impl_->halo->exchange(impl_->U);
  impl_->fence();
}

template <class T>
const Executor& DistributedHeat<T>::executor() const { return impl_->exec; }

template <class T>
const DistributedTimings& DistributedHeat<T>::timings() const { return impl_->tm; }

template <class T>
const char* DistributedHeat<T>::strategy(Axis a) const {
  const auto& A = impl_->ax[int(a)];
  if (!A.plan || !A.plan->split()) return "local";
  return strategy_name(A.plan->strategy());
}

template class DistributedHeat<float>;
template class DistributedHeat<double>;

}  // namespace adi::mpi
