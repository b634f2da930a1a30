#include "adi/mpi/subdomain.hpp"

#include <optional>
#include <string>
#include <tuple>

#include "adi/detail/tridiagonal_stage.hpp"
#include "adi/mpi/halo.hpp"
#include "solvers/cuda/partition_local_passes.hpp"

namespace adi::mpi {

namespace {

template <class T>
class PartitionLines final : public LineSolver<T> {
 public:
  PartitionLines(const ProcessGrid& procs, Axis a, const Executor& exec, const Box3& lines,
                 const DistributedOptions& o)
      : plan_(procs, a, exec, lines, o), stage_in_passes_(o.stage_in_passes) {}
  void solve(const SharedBands<T>& b, const T* d, T* u) override { plan_.solve(b, d, u); }
  void solve(const Bands<T>& b, const T* d, T* u) override { plan_.solve(b, d, u); }
  bool solve_stage(const SharedBands<T>& b, const adi::detail::TridiagonalStage<T>& st, T* u) override {
    if (!stage_in_passes_ || st.fold.count > 0) return false;
    if (plan_.solve_stage(b, st, u)) return true;  // the SPIKE form's stage (DistributedOptions::device_spike)
    if (!plan_.takes_stage(st.v == u)) return false;
    cuda_backend::partition::StageRhs<T> r;
    r.base = st.base;
    r.v = st.v;
    r.inv_s = st.inv_s;
    r.a = st.a;
    r.d = st.d;
    r.c = st.c;
    for (int k = 0; k < 2; ++k) {
      r.end[k] = st.end[std::size_t(k)];
      r.nadd[k] = st.neu_add[std::size_t(k)];
      r.nsub[k] = st.neu_sub[std::size_t(k)];
      r.src[k] = st.src[std::size_t(k)];
      r.src_scale[k] = st.src_scale[std::size_t(k)];
    }
    r.face_base = st.face_base;
    r.face_n1 = st.face_n1;
    return plan_.solve_stage(b, r, u);
  }
  double last_exchange_seconds() const override { return plan_.last_exchange_seconds(); }
  void defer_settle(bool on) override { plan_.defer_settle(on); }
  bool unsettled() const override { return plan_.unsettled(); }
  void settle() override { plan_.settle(); }
  void bands_key(std::uint64_t key) override { plan_.bands_key(key); }
  const char* name() const override { return strategy_name(plan_.strategy()); }

 private:
  DistributedTridiagonalPlan<T> plan_;
  bool stage_in_passes_ = true;
};

// One halo exchange per field shape and memory (an operator's fields share one).
template <class T>
struct Halo {
  std::optional<HaloExchange<T>> x;
  Box3 box{};
  std::array<std::array<int, 2>, 3> ghosts{};
  Executor exec = Executor::host();
  bool fits(const Field<T>& f, const std::array<std::array<int, 2>, 3>& g, const Executor& e) const {
    const Box3& b = f.box();
    return x && b.nx == box.nx && b.ny == box.ny && b.nz == box.nz && b.sy == box.sy && b.sz == box.sz &&
           g == ghosts && e == exec;
  }
};

class MpiSubdomain final : public adi::Subdomain {
 public:
  MpiSubdomain(const ProcessGrid& procs, const Decomposition& dec, DistributedOptions o)
      : procs_(procs), dec_(dec), options_(o) {}

  std::array<index_t, 3> global() const override { return dec_.global(); }
  std::array<index_t, 3> lo() const override { return dec_.lo(); }
  std::array<index_t, 3> extent() const override { return dec_.extents(); }
  int ranks(Axis a) const override { return procs_.dims(a); }
  bool neighbour(Axis a, bool hi) const override { return procs_.neighbor(a, hi) != MPI_PROC_NULL; }

  void exchange(Field<float>& f, const std::array<std::array<int, 2>, 3>& g, const Executor& e) override {
    run(hf_, f, g, e);
  }
  void exchange(Field<double>& f, const std::array<std::array<int, 2>, 3>& g, const Executor& e) override {
    run(hd_, f, g, e);
  }

  std::unique_ptr<LineSolver<float>> line_solver_f(Axis a, const Executor& exec, const Box3& lines,
                                                   bool periodic) override {
    return std::make_unique<PartitionLines<float>>(procs_, a, exec, lines, with(periodic));
  }
  std::unique_ptr<LineSolver<double>> line_solver_d(Axis a, const Executor& exec, const Box3& lines,
                                                    bool periodic) override {
    return std::make_unique<PartitionLines<double>>(procs_, a, exec, lines, with(periodic));
  }

  void agree(const std::string& invalid, const std::string& unsupported) const override {
    mpi::agree(procs_.comm(), invalid.empty(), invalid);
    agree_supported(procs_.comm(), unsupported.empty(), unsupported);
  }
  std::string first_error(const std::string& message) const override {
    const std::string t = agreed_message(procs_.comm(), message.empty(), message);
    const std::size_t colon = t.find(": ");  // "rank R: " + message
    if (t.empty() || procs_.size() == 1 || colon == std::string::npos || t.size() < colon + 3) return t;
    return t.substr(colon + 2, 1) + t.substr(0, colon + 2) + t.substr(colon + 3);
  }

 private:
  DistributedOptions with(bool periodic) const {
    DistributedOptions o = options_;
    o.periodic = periodic;
    return o;
  }
  template <class T>
  void run(Halo<T>& h, Field<T>& f, const std::array<std::array<int, 2>, 3>& g, const Executor& e) {
    if (!h.fits(f, g, e)) {
      h.x.reset();
      h.x.emplace(procs_, f.box(), g, e, options_.transport);  // NCCL where the line plans use it
      h.box = f.box();
      h.ghosts = g;
      h.exec = e;
    }
    h.x->exchange(f.data());
  }

  const ProcessGrid& procs_;
  Decomposition dec_;
  DistributedOptions options_;
  Halo<float> hf_;
  Halo<double> hd_;
};

}  // namespace

std::shared_ptr<adi::Subdomain> subdomain(const ProcessGrid& procs, const Decomposition& dec,
                                          DistributedOptions options) {
  return std::make_shared<MpiSubdomain>(procs, dec, options);
}

}  // namespace adi::mpi
