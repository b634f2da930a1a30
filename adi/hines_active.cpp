// Active neurons in time: NEURON's fixed step with pas, hh (hh.mod's rates table and cnexp
// update), IClamp, ExpSyn, events and spike detection; the Hines solve through HinesPlan.
#include "adi/hines_active.hpp"

#include <algorithm>
#include <cmath>
#include <queue>
#include <string>
#include <utility>

#include "adi/detail/hines_geometry.hpp"
#include "adi/error.hpp"

namespace adi {

namespace {

using detail::require;
using detail::hines::num;

// hh.mod's vtrap: x / (exp(x / y) - 1), with its limit near x = 0.
double vtrap(double x, double y) { return std::fabs(x / y) < 1e-6 ? y * (1 - x / y / 2) : x / (std::exp(x / y) - 1); }

// hh.mod's TABLE minf, mtau, hinf, htau, ninf, ntau FROM -100 TO 100 WITH 200 (usetable_hh = 1).
template <class T>
struct HHTable {
  static constexpr int kPoints = 201;
  T minf[kPoints], mtau[kPoints], hinf[kPoints], htau[kPoints], ninf[kPoints], ntau[kPoints];
  explicit HHTable(double celsius) {
    const double q10 = std::pow(3.0, (celsius - 6.3) / 10);
    double v = -100;
    for (int i = 0; i < kPoints; ++i, v += 1.0) {
      double alpha = .1 * vtrap(-(v + 40), 10), beta = 4 * std::exp(-(v + 65) / 18), sum = alpha + beta;
      mtau[i] = static_cast<T>(1 / (q10 * sum));
      minf[i] = static_cast<T>(alpha / sum);
      alpha = .07 * std::exp(-(v + 65) / 20);
      beta = 1 / (std::exp(-(v + 35) / 10) + 1);
      sum = alpha + beta;
      htau[i] = static_cast<T>(1 / (q10 * sum));
      hinf[i] = static_cast<T>(alpha / sum);
      alpha = .01 * vtrap(-(v + 55), 10);
      beta = .125 * std::exp(-(v + 65) / 80);
      sum = alpha + beta;
      ntau[i] = static_cast<T>(1 / (q10 * sum));
      ninf[i] = static_cast<T>(alpha / sum);
    }
  }
  // The interpolated rates at v (clamped to the table's ends, as NEURON does).
  void rates(T v, T out[6]) const {
    const T xi = v + T(100);
    int i = 0;
    T theta = 0;
    if (xi >= T(200)) {
      i = kPoints - 1;
    } else if (xi > T(0)) {
      i = static_cast<int>(xi);
      theta = xi - static_cast<T>(i);
    }
    const int j = std::min(i + 1, kPoints - 1);
    const T* tabs[6] = {minf, mtau, hinf, htau, ninf, ntau};
    for (int k = 0; k < 6; ++k) out[k] = tabs[k][i] + theta * (tabs[k][j] - tabs[k][i]);
  }
};

}  // namespace

template <class T>
struct ActiveNeurons<T>::Impl {
  Executor exec = Executor::host();
  double dt = 0, t = 0;
  std::vector<ActiveCell> cells;
  std::vector<int> cell_of;
  std::unique_ptr<HinesPlan<T>> plan;
  index_t span = 0, real = 0;  // positions in the layout; compartments
  std::vector<T> offdiag, d0, cdt, gpas, gepas, v, diag, rhs;
  // hh nodes (positions in the plan's layout) and their state.
  std::vector<index_t> hh_pos;
  std::vector<int> hh_table;
  std::vector<T> gna, gk, gl, gel, ena, ek, m, h, n;
  std::vector<HHTable<T>> tables;
  struct Clamp {
    index_t pos;
    double amp, del, dur;
  };
  std::vector<Clamp> clamps;
  struct Synapse {
    index_t pos;
    double tau, e, g, decay;
  };
  std::vector<Synapse> synapses;
  struct Event {
    double time;
    int synapse;
    double weight;
    bool operator>(const Event& o) const { return time > o.time; }
  };
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
  struct Detector {
    index_t neuron, pos;
    double threshold;
    bool above;
  };
  std::vector<Detector> detectors;
  struct Connection {
    int synapse;
    double weight, delay;
  };
  std::vector<std::vector<Connection>> out;  // per neuron
  std::vector<Spike> spikes;

  index_t position(index_t neuron, int node, const char* who) const {
    require(neuron >= 0 && neuron < static_cast<index_t>(cell_of.size()),
            std::string(who) + ": neuron " + std::to_string(neuron) + " out of range [0, " +
                std::to_string(cell_of.size()) + ")");
    const int size = cells[static_cast<std::size_t>(cell_of[static_cast<std::size_t>(neuron)])].compartments.size();
    require(node >= 0 && node < size, std::string(who) + ": node " + std::to_string(node) + " out of range [0, " +
                                          std::to_string(size) + ") of neuron " + std::to_string(neuron));
    return plan->index(neuron, node);
  }
};

template <class T>
ActiveNeurons<T>::ActiveNeurons(const Executor& exec, std::vector<ActiveCell> cells, std::vector<int> cell_of, double dt,
                                HinesOptions options)
    : impl_(std::make_unique<Impl>()) {
  Impl& p = *impl_;
  const char* who = "ActiveNeurons";
  require(std::isfinite(dt) && dt > 0, std::string(who) + ": dt = " + num(dt) + " ms must be > 0");
  require(!cells.empty(), std::string(who) + ": no cells");
  if (!exec.is_host())
    throw Unsupported(std::string(who) + ": active membranes run on a host executor only (GPU kernels not written "
                                         "yet); use Executor::host(), or PassiveNeurons on the GPU");
  p.exec = exec;
  p.dt = dt;
  p.cells = std::move(cells);
  p.cell_of = std::move(cell_of);
  HinesBatch batch;
  for (std::size_t c = 0; c < p.cells.size(); ++c) {
    ActiveCell& cell = p.cells[c];
    const std::size_t nsec = cell.compartments.nseg.size();
    if (cell.membrane.empty()) cell.membrane.assign(nsec, Membrane::pas);
    require(cell.membrane.size() == nsec, std::string(who) + ": cell " + std::to_string(c) + " has " +
                                              std::to_string(cell.membrane.size()) + " membranes for " +
                                              std::to_string(nsec) + " sections");
    batch.topologies.emplace_back(cell.compartments.parent);
    p.tables.emplace_back(cell.hh.celsius);
  }
  batch.topology_of = p.cell_of;  // HinesPlan validates the indices
  const bool compact = options.kernel == HinesKernel::cpu_scalar || options.kernel == HinesKernel::reference ||
                       (options.kernel == HinesKernel::automatic && batch.count() < detail::hines::kHostCompactBelow);
  if (compact)
    p.plan = std::make_unique<HinesPlan<T>>(exec, batch, CompactBatch{}, options);
  else
    p.plan = std::make_unique<HinesPlan<T>>(exec, batch, SortedInterleaved{}, options);
  p.span = p.plan->span();
  const std::size_t span = static_cast<std::size_t>(p.span);
  for (auto* a : {&p.offdiag, &p.cdt, &p.gpas, &p.gepas, &p.v, &p.diag, &p.rhs}) a->assign(span, T(0));
  p.d0.assign(span, T(1));  // padding: a harmless unit diagonal
  std::vector<HinesMatrix> mats;
  for (const ActiveCell& cell : p.cells) mats.push_back(implicit_euler_matrix(cell.compartments, dt));
  for (index_t s = 0; s < batch.count(); ++s) {
    const int ci = p.cell_of[static_cast<std::size_t>(s)];
    const ActiveCell& cell = p.cells[static_cast<std::size_t>(ci)];
    const Compartments& c = cell.compartments;
    const HinesMatrix& mat = mats[static_cast<std::size_t>(ci)];
    p.real += c.size();
    for (int k = 0; k < c.size(); ++k) {
      const std::size_t kk = static_cast<std::size_t>(k);
      const index_t i = p.plan->index(s, k);
      const std::size_t ii = static_cast<std::size_t>(i);
      const bool hh = c.area[kk] > 0 && cell.membrane[static_cast<std::size_t>(c.section[kk])] == Membrane::hh;
      p.offdiag[ii] = static_cast<T>(mat.offdiag[kk]);
      p.d0[ii] = static_cast<T>(mat.diag[kk] - c.leak[kk]);  // C/dt + axial; membranes added per step
      p.cdt[ii] = static_cast<T>(c.capacitance[kk] / dt);
      if (hh) {
        const double a = c.area[kk] * 1e-2;  // S/cm2 -> uS
        p.hh_pos.push_back(i);
        p.hh_table.push_back(ci);
        p.gna.push_back(static_cast<T>(cell.hh.gnabar * a));
        p.gk.push_back(static_cast<T>(cell.hh.gkbar * a));
        p.gl.push_back(static_cast<T>(cell.hh.gl * a));
        p.gel.push_back(static_cast<T>(cell.hh.gl * a * cell.hh.el));
        p.ena.push_back(static_cast<T>(cell.hh.ena));
        p.ek.push_back(static_cast<T>(cell.hh.ek));
      } else {
        p.gpas[ii] = static_cast<T>(c.leak[kk]);
        p.gepas[ii] = static_cast<T>(c.leak[kk] * c.e_leak);
      }
    }
  }
  const std::size_t nh = p.hh_pos.size();
  p.m.assign(nh, T(0));
  p.h.assign(nh, T(0));
  p.n.assign(nh, T(0));
  p.out.resize(static_cast<std::size_t>(batch.count()));
  initialize(-65);
}

template <class T>
ActiveNeurons<T>::~ActiveNeurons() = default;
template <class T>
ActiveNeurons<T>::ActiveNeurons(ActiveNeurons&&) noexcept = default;
template <class T>
ActiveNeurons<T>& ActiveNeurons<T>::operator=(ActiveNeurons&&) noexcept = default;

template <class T>
void ActiveNeurons<T>::initialize(double v0) {
  Impl& p = *impl_;
  require(std::isfinite(v0), "ActiveNeurons::initialize: v = " + num(v0) + " must be finite");
  std::fill(p.v.begin(), p.v.end(), static_cast<T>(v0));
  for (std::size_t k = 0; k < p.hh_pos.size(); ++k) {
    T r[6];
    p.tables[static_cast<std::size_t>(p.hh_table[k])].rates(static_cast<T>(v0), r);
    p.m[k] = r[0], p.h[k] = r[2], p.n[k] = r[4];
  }
  for (auto& s : p.synapses) s.g = 0;
  p.events = {};
  p.spikes.clear();
  for (auto& d : p.detectors) d.above = v0 > d.threshold;
  p.t = 0;
}

template <class T>
void ActiveNeurons<T>::add_current_clamp(index_t neuron, int node, double amp, double delay, double duration) {
  Impl& p = *impl_;
  require(std::isfinite(amp) && std::isfinite(delay) && duration >= 0,
          "ActiveNeurons::add_current_clamp: amp, delay must be finite and duration >= 0");
  p.clamps.push_back({p.position(neuron, node, "ActiveNeurons::add_current_clamp"), amp, delay, duration});
}

template <class T>
int ActiveNeurons<T>::add_synapse(index_t neuron, int node, double tau, double e) {
  Impl& p = *impl_;
  require(std::isfinite(tau) && tau > 0, "ActiveNeurons::add_synapse: tau = " + num(tau) + " ms must be > 0");
  require(std::isfinite(e), "ActiveNeurons::add_synapse: e = " + num(e) + " mV must be finite");
  p.synapses.push_back({p.position(neuron, node, "ActiveNeurons::add_synapse"), tau, e, 0.0, std::exp(-p.dt / tau)});
  return static_cast<int>(p.synapses.size()) - 1;
}

template <class T>
void ActiveNeurons<T>::deliver(int synapse, double time, double weight) {
  Impl& p = *impl_;
  require(synapse >= 0 && synapse < static_cast<int>(p.synapses.size()),
          "ActiveNeurons::deliver: synapse " + std::to_string(synapse) + " out of range [0, " +
              std::to_string(p.synapses.size()) + ")");
  require(std::isfinite(time) && std::isfinite(weight), "ActiveNeurons::deliver: time and weight must be finite");
  p.events.push({time, synapse, weight});
}

template <class T>
void ActiveNeurons<T>::detect_spikes(index_t neuron, int node, double threshold) {
  Impl& p = *impl_;
  const index_t pos = p.position(neuron, node, "ActiveNeurons::detect_spikes");
  p.detectors.push_back({neuron, pos, threshold, static_cast<double>(p.v[static_cast<std::size_t>(pos)]) > threshold});
}

template <class T>
void ActiveNeurons<T>::connect(index_t source, int synapse, double weight, double delay) {
  Impl& p = *impl_;
  require(source >= 0 && source < count(), "ActiveNeurons::connect: source " + std::to_string(source) + " out of range");
  require(synapse >= 0 && synapse < static_cast<int>(p.synapses.size()),
          "ActiveNeurons::connect: synapse " + std::to_string(synapse) + " out of range");
  require(std::isfinite(delay) && delay >= 0, "ActiveNeurons::connect: delay = " + num(delay) + " ms must be >= 0");
  p.out[static_cast<std::size_t>(source)].push_back({synapse, weight, delay});
}

template <class T>
void ActiveNeurons<T>::step(int steps) {
  Impl& p = *impl_;
  require(steps >= 0, "ActiveNeurons::step: steps = " + std::to_string(steps) + " must be >= 0");
  const index_t span = p.span;
  const index_t nh = static_cast<index_t>(p.hh_pos.size());
  const int threads = p.exec.threads();
  const T dt = static_cast<T>(p.dt);
  T* v = p.v.data();
  T* diag = p.diag.data();
  T* rhs = p.rhs.data();
  const T *d0 = p.d0.data(), *cdt = p.cdt.data(), *gpas = p.gpas.data(), *gepas = p.gepas.data();
  const index_t* hh_pos = p.hh_pos.data();
  const T *gna = p.gna.data(), *gk = p.gk.data(), *gl = p.gl.data(), *gel = p.gel.data(), *ena = p.ena.data(),
          *ek = p.ek.data();
  T *m = p.m.data(), *h = p.h.data(), *n = p.n.data();
  const bool one_table = p.tables.size() == 1;
  for (int k = 0; k < steps; ++k) {
    const double tm = p.t + 0.5 * p.dt;  // NEURON: t += dt/2 before the currents
    while (!p.events.empty() && p.events.top().time <= tm) {
      const auto e = p.events.top();
      p.events.pop();
      p.synapses[static_cast<std::size_t>(e.synapse)].g += e.weight;
    }
#pragma omp parallel num_threads(threads) if (p.real > 32768)
    {
#pragma omp for simd schedule(static)
      for (index_t i = 0; i < span; ++i) {
        diag[i] = d0[i] + gpas[i];
        rhs[i] = cdt[i] * v[i] + gepas[i];
      }
#pragma omp for simd schedule(static)
      for (index_t q = 0; q < nh; ++q) {
        const index_t i = hh_pos[q];
        const T g_na = gna[q] * m[q] * m[q] * m[q] * h[q];
        const T n2 = n[q] * n[q];
        const T g_k = gk[q] * n2 * n2;
        diag[i] += g_na + g_k + gl[q];
        rhs[i] += g_na * ena[q] + g_k * ek[q] + gel[q];
      }
    }
    for (const auto& c : p.clamps)
      if (tm >= c.del && tm < c.del + c.dur) rhs[c.pos] += static_cast<T>(c.amp);
    for (const auto& s : p.synapses) {
      diag[s.pos] += static_cast<T>(s.g);
      rhs[s.pos] += static_cast<T>(s.g * s.e);
    }
    p.plan->solve(p.offdiag.data(), diag, rhs);
    std::swap(p.v, p.rhs);
    v = p.v.data();
    rhs = p.rhs.data();
    p.t = tm + 0.5 * p.dt;
    // States with v(t + dt): hh gates (cnexp), synapse decay, spike detection.
#pragma omp parallel for num_threads(threads) if (nh > 8192) schedule(static)
    for (index_t q = 0; q < nh; ++q) {
      T r[6];
      p.tables[one_table ? 0 : static_cast<std::size_t>(p.hh_table[static_cast<std::size_t>(q)])].rates(v[hh_pos[q]], r);
      m[q] += (T(1) - std::exp(-dt / r[1])) * (r[0] - m[q]);
      h[q] += (T(1) - std::exp(-dt / r[3])) * (r[2] - h[q]);
      n[q] += (T(1) - std::exp(-dt / r[5])) * (r[4] - n[q]);
    }
    for (auto& s : p.synapses) s.g *= s.decay;
    for (auto& d : p.detectors) {
      const double vd = static_cast<double>(v[d.pos]);
      if (vd > d.threshold) {
        if (!d.above) {
          d.above = true;
          p.spikes.push_back({d.neuron, p.t});
          for (const auto& c : p.out[static_cast<std::size_t>(d.neuron)]) p.events.push({p.t + c.delay, c.synapse, c.weight});
        }
      } else {
        d.above = false;
      }
    }
  }
}

template <class T>
double ActiveNeurons<T>::time() const {
  return impl_->t;
}
template <class T>
double ActiveNeurons<T>::dt() const {
  return impl_->dt;
}
template <class T>
index_t ActiveNeurons<T>::count() const {
  return static_cast<index_t>(impl_->cell_of.size());
}
template <class T>
const std::vector<Spike>& ActiveNeurons<T>::spikes() const {
  return impl_->spikes;
}
template <class T>
const HinesPlan<T>& ActiveNeurons<T>::plan() const {
  return *impl_->plan;
}

template <class T>
std::vector<double> ActiveNeurons<T>::voltage(index_t neuron) const {
  const Impl& p = *impl_;
  p.position(neuron, 0, "ActiveNeurons::voltage");
  const int size = p.cells[static_cast<std::size_t>(p.cell_of[static_cast<std::size_t>(neuron)])].compartments.size();
  std::vector<double> out(static_cast<std::size_t>(size));
  for (int k = 0; k < size; ++k) out[static_cast<std::size_t>(k)] = p.v[static_cast<std::size_t>(p.plan->index(neuron, k))];
  return out;
}

template class ActiveNeurons<float>;
template class ActiveNeurons<double>;

}  // namespace adi
