// The full 3D heat ADI step on one GPU, per part, against its minimum-traffic time.
//
//   bench_cuda_heat_step [--steps N] [--quick] [--scheme NAME|all] [--grids LIST] [--folds LIST]
//                        [--types fp32,fp64] [--tune]
//
// --folds (default separate,stencil,kernel): the ways of doing the explicit part to run; the
// Douglas back-to-back rows come with stencil. --types: the precisions (default both). The
// fused stage's Y/Z copy stream follows ADI_FUSED_STAGE_STREAM (thread|warp;
// scripts/gpu_stage_check.sh runs both for its A/B), its form ADI_FUSED_YZ_LEAN=0 (the general
// one; the lean form is the default since stop 37; scripts/gpu_heat_ab.sh runs both), the explicit
// stencil pass's form ADI_STENCIL_LEAN=0 (the column kernel; the lean column form is the default
// since stop 38; scripts/gpu_heat_ab.sh --x runs both), the folded first stage's x ring kernel
// ADI_FOLD_X_RING=1, its lean form =2 (default off: the stencil fold then forms Douglas' first
// stage in the ring kernel, 2 transfers instead of 4; scripts/gpu_heat_ab.sh --ring runs both; with
// the switch the rows "stage x folded, x ring S=3/4/5" time it at each ring depth,
// ADI_FOLD_X_RING_SLOTS, and "... 2 waves" with z chunks of half the length, ADI_FOLD_X_RING_WAVES=2);
// the header line says which. ADI_STAGE_ORDER (e.g. zyx: AdiSolver's order of the implicit stages)
// moves the first stage, and with it the folded explicit part, to another axis; there
// ADI_FOLD_STRIDED=1 (general rows) or 2 (lean rows) folds it into the fused Y/Z kernel (a build with ADI_FOLD_STRIDED_KERNELS;
// scripts/gpu_heat_ab.sh --zfirst runs the z-first order both ways against the default order).
//
// 1. Copy bandwidth, as bench_cuda_tridiagonal: cudaMemcpy device-to-device and a
//    16-byte-vector copy kernel over 1 GiB (read + write); the faster is the 100%.
// 2. For each grid (--grids, default 256,240,512: 256^3, 240x256x256, 512^3), fp32 and fp64,
//    each scheme (--scheme, default all four 3D schemes) and each way of doing the explicit
//    part (Operator::ExplicitFold): u_t = u_xx + u_yy + u_zz on the unit box, Dirichlet data
//    0, through the public AdiSolver on Executor::cuda(). The coefficients are constant, so
//    every axis has shared bands and each plain implicit stage is one fused kernel (right-hand
//    side, generated bands, Thomas-PCR solve). Per part, the median over N steps of the
//    solver's own timings (events around each part, so launch gaps count). Field transfers
//    per part (k = 3 implicit axes; part_fields below):
//      separate  explicit W = U + dt F(U): 2 (MCS/HV + two correction passes of 3); stages 3
//      stencil   first stage of a chain: one stencil pass from U (2) + the line solve (2);
//                MCS/HV's first correction stage: passes over U (2), Y_k (3), solve (2)
//      kernel    the fused kernel forms the explicit part: first stage 2 (correction: 3)
//    The step's minimum (heat: no mixed terms, so Craig-Sneyd is Douglas):
//      Douglas, CS   separate 11, stencil 10, kernel 8;   MCS, HV   26, 23, 17
//    min ms = min bytes / copy bandwidth; targets (issue 16): Douglas <= 1.2x, every other
//    scheme <= 1.25x of the kernel fold's minimum (8 / 17).
// 3. Douglas only: each part queued 10 times back to back (the device's time alone), and
//    the same stage unfused (the right-hand-side stencil pass, cuda_backend::stencil_apply:
//    read base and V, write Y; then the public TridiagonalPlan solve with SharedBands: read
//    Y, write u), timed with CUDA events.
// 4. Summary, last: per grid, precision and scheme the step per direction and in total
//    against its minimum (folded and, for comparison with earlier logs, unfolded).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <array>
#include <string>
#include <vector>

#include "adi/adi.hpp"
#include "benchmarks/cuda_bench_util.cuh"
#include "solvers/cuda/backend.hpp"

namespace {

int g_steps = 20;
double g_copy_gbs = 0;
std::string g_scheme = "all";
std::string g_grids = "256,240,512";
bool g_tune = false;
std::string g_folds = "separate,stencil,kernel";
std::string g_types = "fp32,fp64";

using Fold = adi::Operator<double>::ExplicitFold;
const char* fold_name(Fold f) { return f == Fold::separate ? "separate" : f == Fold::stencil ? "stencil" : "kernel"; }
bool corrected_kind(adi::SchemeKind kind) {
  return kind == adi::SchemeKind::modified_craig_sneyd || kind == adi::SchemeKind::hundsdorfer_verwer;
}
// Field transfers of the parts of a step with k implicit axes and no mixed terms, by how the
// explicit part is done: [0..2] all stages of the step along x, y, z, [3] explicit passes.
//   separate: explicit W = U + dt F(U) (2; corrected schemes + 2 passes of 3), stages 3
//   stencil:  the chain's first stage = a stencil pass from U (2) + the line solve (2); the
//             corrected schemes' first correction stage = passes over U (2) and Y_k (3) + solve (2)
//   kernel:   the chain's first stage reads U, writes Y_1 (2); the correction's reads U, Y_k (3)
// ADI_FOLD_X_RING=1: the stencil fold's first stage of a chain is the x ring kernel (reads U,
// writes Y_1: 2 transfers, as the kernel fold), the corrected schemes' correction stage stays.
// ADI_FOLD_X_RING=2: its lean form for lines of 256 (the ring kernel for other lengths). Where the
// ring cannot run (lines longer than 256) the switch keeps the default path (4 transfers).
int x_ring_mode() {
  const char* e = std::getenv("ADI_FOLD_X_RING");
  if (e == nullptr) return 0;
  return std::string(e) == "1" ? 1 : std::string(e) == "2" ? 2 : 0;
}
bool x_ring_on() { return x_ring_mode() != 0; }
long long g_nx = 0;  // the grid being measured (the ring takes lines of at most 256)
bool x_ring_runs() { return x_ring_on() && g_nx <= 256; }
// ADI_STAGE_ORDER (issue 16, stop 39: AdiSolver's stage order, e.g. zyx): the first stage's axis
// (0 x, 1 y, 2 z), which carries the folded explicit part. ADI_FOLD_STRIDED=1 (in a build with
// ADI_FOLD_STRIDED_KERNELS): a first stage along y or z folds it inside the fused Y/Z kernel (reads
// U, writes Y_1: 2 transfers) instead of the stencil pass + the line solve (4); the corrected
// schemes' two-term correction stage keeps the stencil fold.
int first_axis() {
  const char* e = std::getenv("ADI_STAGE_ORDER");
  return e && (e[0] == 'y' || e[0] == 'z') ? e[0] - 'x' : 0;
}
int strided_fold_env() {
  const char* e = std::getenv("ADI_FOLD_STRIDED");
  return e == nullptr ? 0 : std::string(e) == "1" ? 1 : std::string(e) == "2" ? 2 : 0;
}
bool strided_fold_runs() {
  return first_axis() != 0 && strided_fold_env() != 0 && adi::cuda_backend::fused_strided_fold_available();
}
std::array<double, 4> part_fields(adi::SchemeKind kind, int k, Fold f) {
  const bool corrected = corrected_kind(kind);
  const int f0 = k == 3 ? first_axis() : 0;
  std::array<double, 4> p{};
  for (int a = 0; a < k; ++a) p[a] = corrected ? 6 : 3;
  if (f == Fold::separate) {
    p[3] = corrected ? 2 + 3 + 3 : 2;
  } else if (f == Fold::stencil) {
    const double first = (f0 == 0 && x_ring_runs()) || strided_fold_runs() ? 2 : 4;
    p[f0] = corrected ? first + 7 : first;
  } else {
    p[f0] = corrected ? 2 + 3 : 2;
  }
  return p;
}
int min_fields(adi::SchemeKind kind, int k, Fold f) {
  const auto p = part_fields(kind, k, f);
  return static_cast<int>(p[0] + p[1] + p[2] + p[3]);
}

const char* short_name(adi::SchemeKind kind) {
  switch (kind) {
    case adi::SchemeKind::douglas: return "Do";
    case adi::SchemeKind::craig_sneyd: return "CS";
    case adi::SchemeKind::modified_craig_sneyd: return "MCS";
    case adi::SchemeKind::hundsdorfer_verwer: return "HV";
    default: return "PR";
  }
}
double target_for(adi::SchemeKind kind) { return kind == adi::SchemeKind::douglas ? 1.2 : 1.25; }

// One summary row per (grid, precision, scheme, fold): medians of the parts, the step and its minimum.
struct StepResult {
  std::string grid, type, scheme;
  adi::SchemeKind kind = adi::SchemeKind::douglas;
  Fold fold = Fold::stencil;
  double explicit_ms = 0, stage[3] = {0, 0, 0}, boundary = 0, step = 0, field_ms = 0;
  std::array<double, 4> fields{};
  int stages = 0, min = 0, min_kernel = 0;
  bool folded = false;
};
std::vector<StepResult> g_steps_done;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double event_ms(const std::function<void()>& run, int reps) { return adi::bench::median_ms(run, reps, {}, 3); }

void measure_copy() {
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const adi::bench::CopyBandwidth bw = adi::bench::measure_copy(20, 3, sms * 8, 512);
  const double g_memcpy = bw.memcpy_gbs, g_kernel = bw.kernel_gbs;
  g_copy_gbs = bw.best();
  std::printf(
      "copy bandwidth (read+write, 1 GiB): cudaMemcpyDtoD %.0f GB/s, copy kernel %.0f GB/s -> 100%% = %.0f "
      "GB/s\n\n",
      g_memcpy, g_kernel, g_copy_gbs);
}

void row(const char* grid, const char* type, const char* part, double ms, double fields, double bytes_per_field,
         const char* note = "") {
  const double min_ms = fields * bytes_per_field / (g_copy_gbs * 1e6);
  if (fields > 0)
    std::printf("%-12s %-4s %-32s %9.4f %7.1f %9.4f %7.2f  %s\n", grid, type, part, ms, fields, min_ms, ms / min_ms,
                note);
  else
    std::printf("%-12s %-4s %-32s %9.4f %7.1f %9s %7s  %s\n", grid, type, part, ms, fields, "-", "-", note);
  std::fflush(stdout);
}

// The unfused stage along `axis` for the heat operator (D = 1, uniform h, Dirichlet
// ends): the explicit right-hand side through the stencil kernel, then the public plan.
template <class T>
struct Unfused {
  adi::Grid grid;
  adi::Executor exec = adi::Executor::cuda();
  std::array<adi::Array<T>, 3> a, d, c, b;
  std::array<adi::Array<adi::index_t>, 3> prev, next;
  adi::detail::StencilView<T> view;

  Unfused(const adi::Grid& g, T s) : grid(g) {
    const adi::index_t sy = adi::Field<T>::padded_row(g.nx());
    view.box = adi::Box3{g.nx(), g.ny(), g.nz(), sy, sy * g.ny()};
    for (int ax = 0; ax < 3; ++ax) {
      const adi::index_t n = g.extent(static_cast<adi::Axis>(ax));
      const double h = g.axis(static_cast<adi::Axis>(ax)).spacing(0);
      std::vector<T> ha(n, T(-1 / (h * h))), hd(n, T(-2 / (h * h))), hc(n, T(-1 / (h * h))), hb(n);
      ha[0] = hd[0] = hc[0] = ha[n - 1] = hd[n - 1] = hc[n - 1] = T(0);
      for (adi::index_t i = 0; i < n; ++i) hb[i] = T(1) / s - hd[i];
      std::vector<adi::index_t> hp(n), hn(n);
      for (adi::index_t i = 0; i < n; ++i) {
        hp[i] = i > 0 ? i - 1 : i;
        hn[i] = i < n - 1 ? i + 1 : i;
      }
      auto up = [&](adi::Array<T>& dst, const std::vector<T>& src) {
        dst = adi::Array<T>(n, exec);
        dst.copy_from_host(src.data());
      };
      up(a[ax], ha);
      up(d[ax], hd);
      up(c[ax], hc);
      up(b[ax], hb);
      prev[ax] = adi::Array<adi::index_t>(n, exec);
      next[ax] = adi::Array<adi::index_t>(n, exec);
      prev[ax].copy_from_host(hp.data());
      next[ax].copy_from_host(hn.data());
      auto& S = view.axis[ax];
      S.active = true;
      S.shared = true;
      S.n = n;
      S.a = a[ax].data();
      S.d = d[ax].data();
      S.c = c[ax].data();
      S.prev = prev[ax].data();
      S.next = next[ax].data();
      view.lo[ax] = 1;
      view.hi[ax] = n - 2;
    }
  }

  // ms of the fused stage along ax with a launch-shape override (Dirichlet data 0).
  double fused(int ax, T s, const adi::Field<T>& U, adi::Field<T>& W, const adi::cuda_backend::FusedTuning& t) {
    std::array<adi::index_t, 3> org{1, 1, 1}, ext{};
    for (int k = 0; k < 3; ++k) ext[k] = grid.extent(static_cast<adi::Axis>(k)) - 2;
    org[ax] = 0;
    ext[ax] = grid.extent(static_cast<adi::Axis>(ax));
    const adi::Box3& fb = view.box;
    const adi::index_t off = org[0] + org[1] * fb.sy + org[2] * fb.sz;
    const int o1 = ax == 0 ? 1 : 0, o2 = ax == 2 ? 1 : 2;
    const adi::index_t n1 = grid.extent(static_cast<adi::Axis>(o1)), n2 = grid.extent(static_cast<adi::Axis>(o2));
    adi::Array<T> zeros(n1 * n2, exec);  // zero-filled: the Dirichlet data
    adi::cuda_backend::FusedStage<T> st;
    st.lines = adi::to_lines(adi::BoxLines{adi::Box3{ext[0], ext[1], ext[2], fb.sy, fb.sz}, static_cast<adi::Axis>(ax)});
    st.base = W.data() + off;
    st.v = U.data() + off;
    st.inv_s = T(1) / s;
    st.a = a[ax].data();
    st.d = d[ax].data();
    st.c = c[ax].data();
    st.end = {zeros.data(), zeros.data()};
    st.v_end = {zeros.data(), zeros.data()};
    st.face_base = 1 + n1;
    st.face_n1 = n1;
    st.u = W.data() + off;
    const auto launch = adi::cuda_backend::fused_stage_prepare<T>(st.lines, t);  // once, as the Operator does
    return event_ms([&] { adi::cuda_backend::fused_stage_run<T>(st, launch, nullptr, nullptr); }, g_steps);
  }

  // ms of the first Douglas stage along x with the explicit operator folded in (reads U,
  // writes Y; Dirichlet data 0), with a launch-shape override.
  double folded(T s, T dt, const adi::Field<T>& U, adi::Field<T>& Y, const adi::cuda_backend::FusedTuning& t) {
    std::array<adi::index_t, 3> org{0, 1, 1}, ext{grid.nx(), grid.ny() - 2, grid.nz() - 2};
    const adi::Box3& fb = view.box;
    const adi::index_t off = org[0] + org[1] * fb.sy + org[2] * fb.sz;
    const adi::index_t n1 = grid.ny(), n2 = grid.nz();
    adi::Array<T> zeros(n1 * n2, exec);
    adi::cuda_backend::FusedStage<T> st;
    st.lines = adi::to_lines(adi::BoxLines{adi::Box3{ext[0], ext[1], ext[2], fb.sy, fb.sz}, adi::Axis::x});
    st.v = U.data() + off;
    st.inv_s = T(1) / s;
    st.a = a[0].data();
    st.d = d[0].data();
    st.c = c[0].data();
    st.end = {zeros.data(), zeros.data()};
    st.v_end = {zeros.data(), zeros.data()};
    st.face_base = 1 + n1;
    st.face_n1 = n1;
    st.u = Y.data() + off;
    st.fold.count = 1;
    st.fold.p[0] = U.data() + off;
    st.fold.alpha[0] = T(1);
    st.fold.w[0] = {dt, dt, dt};
    st.fold.view = view;
    st.fold.org = {0, 1, 1};
    st.fold.axis = 0;
    const auto launch = adi::cuda_backend::fused_stage_prepare<T>(st.lines, t);
    return event_ms([&] { adi::cuda_backend::fused_stage_run<T>(st, launch, nullptr, nullptr); }, g_steps);
  }

  // ms of one stage along ax: Y = W/s - A_ax U (unknowns), then W = (I/s - A_ax)^-1 Y.
  double time(int ax, T s, const adi::Field<T>& U, adi::Field<T>& W, adi::Field<T>& Y) {
    adi::detail::ApplyArgs<T> args;
    args.v = U.data();
    args.base = W.data();
    args.alpha = T(1) / s;
    args.w[ax + 1] = T(-1);
    args.out = Y.data();
    std::array<adi::index_t, 3> org{1, 1, 1}, ext{};
    for (int k = 0; k < 3; ++k) ext[k] = grid.extent(static_cast<adi::Axis>(k)) - 2;
    org[ax] = 0;
    ext[ax] = grid.extent(static_cast<adi::Axis>(ax));
    const adi::Box3& fb = view.box;
    const adi::index_t off = org[0] + org[1] * fb.sy + org[2] * fb.sz;
    adi::TridiagonalOptions opt;
    opt.check_pivots = false;
    adi::TridiagonalPlan<T> plan(exec, adi::BoxLines{adi::Box3{ext[0], ext[1], ext[2], fb.sy, fb.sz},
                                                     static_cast<adi::Axis>(ax)},
                                 opt);
    return event_ms(
        [&] {
          adi::cuda_backend::stencil_apply<T>(view, args, nullptr);
          plan.solve(adi::SharedBands<T>{a[ax].data(), b[ax].data(), c[ax].data()}, Y.data() + off,
                     W.data() + off);
        },
        g_steps);
  }
};

template <class T>
void bench_heat(long long nx, long long ny, long long nz, const std::string& scheme_name, Fold fold) {
  g_nx = nx;
  const char* type = sizeof(T) == 4 ? "fp32" : "fp64";
  char grid_name[32];
  std::snprintf(grid_name, sizeof grid_name, "%lldx%lldx%lld", nx, ny, nz);
  const adi::Grid grid = adi::Grid::uniform({nx, ny, nz}, {0, 0, 0}, {1, 1, 1});
  const adi::Executor gpu = adi::Executor::cuda();
  const double dt = 1e-4;
  adi::Scheme scheme = adi::Scheme::from_name(scheme_name);
  const bool douglas = scheme.kind == adi::SchemeKind::douglas;
  adi::AdiSolver<T> solver(grid, adi::Pde::heat(1, 1, 1), adi::BoundaryConditions::all(adi::Boundary::dirichlet(0.0)),
                           scheme, gpu);
  solver.op().set_explicit_fold(static_cast<typename adi::Operator<T>::ExplicitFold>(fold));
  adi::Field<T> h(grid), u(grid, gpu);
  {
    std::array<std::vector<double>, 3> s1;
    for (int a = 0; a < 3; ++a) {
      const adi::AxisGrid& ag = grid.axis(static_cast<adi::Axis>(a));
      for (adi::index_t i = 0; i < ag.size(); ++i) s1[a].push_back(std::sin(M_PI * ag[i]));
    }
    for (adi::index_t k = 0; k < nz; ++k)
      for (adi::index_t j = 0; j < ny; ++j)
        for (adi::index_t i = 0; i < nx; ++i) h(i, j, k) = T(s1[0][i] * s1[1][j] * s1[2][k]);
  }
  u.copy_from(h);
  for (int w = 0; w < 3; ++w) solver.step(u, w * dt, dt);
  std::vector<double> part[5], total;
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  const std::size_t allocations = adi::cuda_backend::allocation_count();
  for (int s = 0; s < g_steps; ++s) {
    solver.reset_timings();
    CK(cudaEventRecord(e0));
    solver.step(u, (3 + s) * dt, dt);
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    total.push_back(ms);
    const adi::StepTimings& t = solver.timings();
    for (int a = 0; a < 3; ++a) part[a].push_back(1e3 * t.implicit[a]);
    part[3].push_back(1e3 * t.explicit_part);
    part[4].push_back(1e3 * t.boundary);
  }
  const bool no_alloc = adi::cuda_backend::allocation_count() == allocations;
  const double field = double(nx) * double(ny) * double(nz) * sizeof(T);
  const int stages = static_cast<int>(solver.op().implicit_axes());
  // The kernel fold where the operator can (else solve_folded falls back to separate passes).
  const bool folded = fold != Fold::kernel || solver.op().folds(adi::Axis::x);
  const Fold f = folded ? fold : Fold::separate;
  const std::array<double, 4> pf = part_fields(scheme.kind, stages, f);
  const int min = min_fields(scheme.kind, stages, f);
  char name[64];
  std::snprintf(name, sizeof name, "%s %s explicit", short_name(scheme.kind), fold_name(fold));
  row(grid_name, type, name, median(part[3]), pf[3], field);
  const char* axes = "xyz";
  double sum = median(part[3]);
  for (int a = 0; a < stages; ++a) {
    std::snprintf(name, sizeof name, "%s %s stage%s %c", short_name(scheme.kind), fold_name(fold),
                  douglas ? "" : "s", axes[a]);
    row(grid_name, type, name, median(part[a]), pf[a], field);
    sum += median(part[a]);
  }
  row(grid_name, type, "boundary write (faces)", median(part[4]), 0.0, field, "(O(n^2))");
  sum += median(part[4]);
  std::snprintf(name, sizeof name, "%s %s step: sum of parts", short_name(scheme.kind), fold_name(fold));
  row(grid_name, type, name, sum, min, field);
  std::snprintf(name, sizeof name, "%s %s step: CUDA events", short_name(scheme.kind), fold_name(fold));
  row(grid_name, type, name, median(total), min, field,
      no_alloc ? "no device allocation in the step loop" : "DEVICE ALLOCATIONS IN THE STEP LOOP");
  {
    StepResult& r = g_steps_done.emplace_back();
    r.grid = grid_name;
    r.type = type;
    r.scheme = scheme.name();
    r.kind = scheme.kind;
    r.explicit_ms = median(part[3]);
    for (int a = 0; a < stages; ++a) r.stage[a] = median(part[a]);
    r.boundary = median(part[4]);
    r.step = median(total);
    r.stages = stages;
    r.fields = pf;
    r.field_ms = field / (g_copy_gbs * 1e6);
    r.min = min;
    r.min_kernel = min_fields(scheme.kind, stages, Fold::kernel);
    r.folded = folded;
    r.fold = fold;
  }
  if (!douglas || fold != Fold::stencil) {
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return;
  }
  // Variable time steps: dt changes at every step, so every stage checks its pivots (the
  // fused stages' flags read once at the end of the step, the stencil fold's checked plan
  // solve); against the constant-dt step above, the cost of those checks.
  {
    std::vector<double> varied;
    double t = (3 + g_steps) * dt;
    for (int s = 0; s < g_steps; ++s) {
      const double h = dt * (s % 2 == 0 ? 1.01 : 0.99);
      CK(cudaEventRecord(e0));
      solver.step(u, t, h);
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      varied.push_back(ms);
      t += h;
    }
    row(grid_name, type, "D stencil step, dt varied (pivot checks)", median(varied), min, field,
        "(every step checks pivots)");
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  // Back to back: each part queued 10 times without synchronisation (the host runs
  // ahead), so the time per call is the device's alone.
  {
    adi::Operator<T>& op = solver.op();
    adi::Field<T> W(grid, gpu);
    W.copy_from(u);
    const double t0 = 3 * dt, t1 = 4 * dt;
    const T s = T(scheme.theta * dt);
    const T dtt = T(dt);
    const double ex = event_ms([&] {
      for (int r = 0; r < 10; ++r) op.apply(t0, u, {dtt, dtt, dtt, dtt}, T(1), &u, W);
    }, 5) / 10;
    row(grid_name, type, "explicit, back to back", ex, 2, field);
    for (int a = 0; a < stages; ++a) {
      std::array<bool, 3> later{};
      for (int i = a + 1; i < 3; ++i) later[i] = true;
      const double ms = event_ms([&] {
        for (int r = 0; r < 10; ++r) op.solve(static_cast<adi::Axis>(a), s, t1, W, W, t0, &u, later);
      }, 5) / 10;
      std::snprintf(name, sizeof name, "stage %c fused, back to back", axes[a]);
      row(grid_name, type, name, ms, 3, field);
    }
    {  // the first Douglas stage with the explicit part, each fold (along the order's first axis)
      adi::Field<T> Y(grid, gpu);
      const typename adi::Operator<T>::ExplicitTerm term{t0, &u, {dtt, dtt, dtt, dtt}};
      const int f0 = first_axis();
      std::array<bool, 3> later_f0{true, true, true};
      later_f0[f0] = false;
      for (Fold fm : {Fold::separate, Fold::stencil, Fold::kernel}) {
        op.set_explicit_fold(static_cast<typename adi::Operator<T>::ExplicitFold>(fm));
        const double ms = event_ms([&] {
          for (int r = 0; r < 10; ++r)
            op.solve_folded(static_cast<adi::Axis>(f0), s, t1, T(1), {term, {}}, Y, t0, &u, later_f0);
        }, 5) / 10;
        std::snprintf(name, sizeof name, "stage %c +explicit %s, b2b", axes[f0], fold_name(fm));
        row(grid_name, type, name, ms, part_fields(scheme.kind, 1, fm)[0] + part_fields(scheme.kind, 1, fm)[3],
            field);
      }
      op.set_explicit_fold(static_cast<typename adi::Operator<T>::ExplicitFold>(fold));
    }
  }
  // Unfused stages for comparison (same operator, same data).
  {
    const T s = T(0.5 * dt);
    Unfused<T> uf(grid, s);
    adi::Field<T> W(grid, gpu), Y(grid, gpu);
    W.copy_from(u);
    for (int a = 0; a < 3; ++a) {
      std::snprintf(name, sizeof name, "stage %c unfused (rhs+solve)", axes[a]);
      row(grid_name, type, name, uf.time(a, s, u, W, Y), 5, field);
    }
    {  // the folded first stage's shared-memory carveout: fitted (the default) or all shared
      adi::cuda_backend::FusedTuning t;
      row(grid_name, type, "stage x folded, carveout fitted", uf.folded(s, T(dt), u, Y, t), 2, field, "(default)");
      t.fold_max_shared = true;
      row(grid_name, type, "stage x folded, all shared", uf.folded(s, T(dt), u, Y, t), 2, field);
      t.fold_max_shared = false;
      row(grid_name, type, "stage x folded, fitted again", uf.folded(s, T(dt), u, Y, t), 2, field);
      // The same stage in the x ring kernel, per ring depth (with ADI_FOLD_X_RING=1 only: the A/B's
      // other form never launches it; under the switch the three rows above run the ring too, at
      // its default depth: fused_stage_run takes it).
      const char* was = std::getenv("ADI_FOLD_X_RING_SLOTS");
      const std::string before = was ? was : "";
      // ADI_FOLD_X_RING=2 at 256: the lean form's rows ("x lean S=..."; its depth, the same variable).
      const bool lean_rows = x_ring_mode() == 2 && nx == 256;
      for (const char* slots : {"3", "4", "5"}) {
        if (!x_ring_runs()) break;
        const std::size_t launches = adi::cuda_backend::fused_x_ring_launches();
        setenv("ADI_FOLD_X_RING_SLOTS", slots, 1);
        std::snprintf(name, sizeof name, "stage x folded, x %s S=%s", lean_rows ? "lean" : "ring", slots);
        const double ms = uf.folded(s, T(dt), u, Y, t);
        row(grid_name, type, name, ms, 2, field,
            adi::cuda_backend::fused_x_ring_launches() > launches ? "" : "(THE RING DID NOT RUN)");
      }
      if (was)
        setenv("ADI_FOLD_X_RING_SLOTS", before.c_str(), 1);
      else
        unsetenv("ADI_FOLD_X_RING_SLOTS");
      if (x_ring_runs() && !std::getenv("ADI_FOLD_X_RING_WAVES")) {  // two waves of half the chunk
        setenv("ADI_FOLD_X_RING_WAVES", "2", 1);
        row(grid_name, type, lean_rows ? "stage x folded, x lean 2 waves" : "stage x folded, x ring 2 waves",
            uf.folded(s, T(dt), u, Y, t), 2, field);
        unsetenv("ADI_FOLD_X_RING_WAVES");
      }
    }
    if (g_tune && nx == 256) {  // launch shapes of the fused kernels
      for (int w : {4, 8})
        for (int mb : {2, 3, 4}) {
          adi::cuda_backend::FusedTuning t;
          t.warps = w;
          t.min_blocks = mb;
          std::snprintf(name, sizeof name, "tune x warps=%d minblocks=%d", w, mb);
          row(grid_name, type, name, uf.fused(0, s, u, W, t), 3, field);
        }
      for (int rows : {8, 16})
        for (int lines : {8, 16, 32})
          for (int mb : {1, 2}) {
            adi::cuda_backend::FusedTuning t;
            t.rows = rows;
            t.lines = lines;
            t.min_blocks = mb;
            std::snprintf(name, sizeof name, "tune y rows=%d lines=%d mb=%d", rows, lines, mb);
            row(grid_name, type, name, uf.fused(1, s, u, W, t), 3, field);
          }
    }
  }
}

// Last, so that it ends the output (scripts/gpu_stage_check.sh prints this log's tail).
void print_summary() {
  std::printf(
      "\n== Summary: heat step (generated coefficients) at %.0f GB/s copy; targets (issue 16): Douglas <= 1.2x, "
      "other schemes <= 1.25x of the folded minimum (8 / 17 fields)\n",
      g_copy_gbs);
  std::printf("(fold: how the explicit part is done (stencil = CUDA's default); part (r) = ms / (its fields x one "
              "field); min = this fold's minimum fields; 'r min' its ratio; 'r 8/17' the ratio to the kernel fold's)\n");
  std::printf("%-12s %-4s %-20s %-8s %13s %14s %13s %13s %7s %8s %4s %6s %6s  %s\n", "grid", "type", "scheme", "fold",
              "explicit (r)", "stage x (r)", "stage y (r)", "stage z (r)", "faces", "step ms", "min", "r min",
              "r 8/17", "target");
  for (const StepResult& r : g_steps_done) {
    char ex[32], st[3][32];
    auto cell = [&](char* out, std::size_t n, double ms, double fields) {
      if (fields > 0)
        std::snprintf(out, n, "%.4f (%.2f)", ms, ms / (fields * r.field_ms));
      else
        std::snprintf(out, n, "%.4f (-)", ms);
    };
    cell(ex, sizeof ex, r.explicit_ms, r.fields[3]);
    for (int a = 0; a < 3; ++a)
      if (a < r.stages)
        cell(st[a], sizeof st[a], r.stage[a], r.fields[a]);
      else
        std::snprintf(st[a], sizeof st[a], "-");
    const double min_ms = r.min * r.field_ms, kmin_ms = r.min_kernel * r.field_ms;
    const double ratio = r.step / kmin_ms, target = target_for(r.kind);
    char verdict[80];
    if (ratio <= target)
      std::snprintf(verdict, sizeof verdict, "%.2fx met", target);
    else
      std::snprintf(verdict, sizeof verdict, "%.2fx missed by %.2fx", target, ratio / target);
    std::printf("%-12s %-4s %-20s %-8s %13s %14s %13s %13s %7.4f %8.4f %4d %6.2f %6.2f  %s%s\n", r.grid.c_str(),
                r.type.c_str(), r.scheme.c_str(), fold_name(r.fold), ex, st[0], st[1], st[2], r.boundary, r.step,
                r.min, r.step / min_ms, ratio, verdict, r.folded ? "" : " (kernel fold not possible: separate)");
  }
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    if (s == "--steps" && i + 1 < argc)
      g_steps = std::max(1, std::atoi(argv[++i]));
    else if (s == "--quick")
      g_steps = 5;
    else if (s == "--tune")
      g_tune = true;
    else if (s == "--scheme" && i + 1 < argc)
      g_scheme = argv[++i];
    else if (s == "--grids" && i + 1 < argc)
      g_grids = argv[++i];
    else if (s == "--folds" && i + 1 < argc)
      g_folds = argv[++i];
    else if (s == "--types" && i + 1 < argc)
      g_types = argv[++i];
    else {
      std::fprintf(stderr,
                   "usage: %s [--steps N] [--quick] [--scheme NAME|all] [--grids 256,240,512] "
                   "[--folds separate,stencil,kernel] [--types fp32,fp64] [--tune]\n",
                   argv[0]);
      return 2;
    }
  }
  if (!adi::Executor::cuda_available()) {
    std::printf("bench_cuda_heat_step: no CUDA device, nothing measured\n");
    return 0;
  }
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  const char* stream = std::getenv("ADI_FUSED_STAGE_STREAM");
  const char* lean = std::getenv("ADI_FUSED_YZ_LEAN");
  const char* stencil = std::getenv("ADI_STENCIL_LEAN");
  const char* order = std::getenv("ADI_STAGE_ORDER");
  std::printf("device: %s, %d SMs; heat step medians of %d steps after 3 warm-up steps; stage order %s; first stage "
              "along y/z %s; fused Y/Z copy stream %s; Y/Z form %s; stencil form %s; first stage along x %s\n",
              prop.name, prop.multiProcessorCount, g_steps,
              order && *order ? order : "xyz (the default)",
              !strided_fold_runs()      ? "stencil pass + solve"
              : strided_fold_env() == 2 ? "folded in the Y/Z kernel, lean rows (ADI_FOLD_STRIDED=2)"
                                        : "folded in the Y/Z kernel, general rows (ADI_FOLD_STRIDED=1)",
              stream ? stream : "default (warp)",
              !(lean && std::string(lean) == "0") ? "lean (the default)"
              : adi::cuda_backend::timing_forms_compiled()
                  ? "general (ADI_FUSED_YZ_LEAN=0)"
                  : "lean (ADI_FUSED_YZ_LEAN=0's general form is compiled only with -DADI_CUDA_UNROLL_ALL=ON)",
              stencil && std::string(stencil) == "0" ? "column kernel (ADI_STENCIL_LEAN=0)" : "lean columns (the default)",
              x_ring_mode() == 2   ? "x ring lean form at 256 (ADI_FOLD_X_RING=2; lines > 256: the default)"
              : x_ring_mode() == 1 ? "x ring (ADI_FOLD_X_RING=1; lines > 256: the default)"
                                   : "stencil pass + X solve (the default)");
  measure_copy();
  std::printf("== Full heat ADI step per part (fields = minimum field transfers; ratio = ms / min ms)\n");
  std::printf("%-12s %-4s %-32s %9s %7s %9s %7s\n", "grid", "type", "part", "ms", "fields", "min ms", "ratio");
  std::vector<std::string> schemes;
  if (g_scheme == "all")
    schemes = {"douglas", "craig-sneyd", "modified-craig-sneyd", "hundsdorfer-verwer"};
  else
    schemes = {g_scheme};
  try {
    std::size_t at = 0;
    while (at <= g_grids.size()) {
      const std::size_t comma = std::min(g_grids.find(',', at), g_grids.size());
      const long long n = std::atoll(g_grids.substr(at, comma - at).c_str());
      at = comma + 1;
      if (n <= 0) continue;
      // 240: the 240x256x256 grid of earlier logs; otherwise n^3.
      const long long nx = n, ny = n == 240 ? 256 : n, nz = n == 240 ? 256 : n;
      auto run = [&](auto type_tag) {
        using T = decltype(type_tag);
        for (const std::string& sc : schemes)
          for (Fold f : {Fold::separate, Fold::stencil, Fold::kernel})
            if (("," + g_folds + ",").find("," + std::string(fold_name(f)) + ",") != std::string::npos)
              bench_heat<T>(nx, ny, nz, sc, f);
      };
      const std::string types = "," + g_types + ",";
      if (types.find(",fp32,") != std::string::npos) run(float{});
      if (types.find(",fp64,") != std::string::npos) run(double{});
    }
  } catch (const adi::Error& e) {
    std::fprintf(stderr, "bench_cuda_heat_step: %s\n", e.what());
    return 1;
  }
  print_summary();
  return 0;
}
