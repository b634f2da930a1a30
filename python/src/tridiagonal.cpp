// adi._core.TridiagonalPlan: adi::TridiagonalPlan<float|double> over a LineSet, solving on raw
// addresses (host or device) that python/adi/_tridiagonal.py works out from NumPy, CuPy,
// PyTorch or JAX arrays. Offsets (in elements) solve the same LineSet at several base
// addresses: arrays with more than two batch dimensions that do not merge, without a copy.
#include "adi/tridiagonal.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <variant>
#include <vector>

#include "common.hpp"
#include "solve_lines.hpp"

namespace adi::python {
namespace {

class AnyTridiagonalPlan {
 public:
  AnyTridiagonalPlan(const LineSet& lines, const std::string& dtype, int device, std::uintptr_t stream, bool periodic,
                     const std::string& kernel, bool check_pivots, int threads)
      : precision_(precision_from(dtype)), exec_(make_executor(device, stream, threads)) {
    TridiagonalOptions o;
    o.periodic = periodic;
    o.kernel = kernel_from_name(kernel);
    o.check_pivots = check_pivots;
    if (precision_ == Precision::f32)
      plan_ = std::make_unique<TridiagonalPlan<float>>(exec_, lines, o);
    else
      plan_ = std::make_unique<TridiagonalPlan<double>>(exec_, lines, o);
  }

  void solve(std::uintptr_t a, std::uintptr_t b, std::uintptr_t c, std::uintptr_t d, std::uintptr_t u, bool shared,
             const std::vector<index_t>& offsets) {
    py::gil_scoped_release release;
    run(a, b, c, d, u, shared, offsets);
  }

  // Seconds per solve over `repeats` solves, after one untimed one (device synchronised):
  // the C++ call without Python in the loop, for benchmarks. each: the median of single
  // solves, each between two synchronisations (the latency one call has).
  double time(std::uintptr_t a, std::uintptr_t b, std::uintptr_t c, std::uintptr_t d, std::uintptr_t u, bool shared,
              const std::vector<index_t>& offsets, int repeats, bool each) {
    detail::require(repeats >= 1, "TridiagonalPlan.time: repeats = " + std::to_string(repeats) + " must be >= 1");
    py::gil_scoped_release release;
    run(a, b, c, d, u, shared, offsets);
    exec_.synchronize();
    if (each) {
      std::vector<double> t(static_cast<std::size_t>(repeats));
      for (double& x : t) {
        const auto t0 = std::chrono::steady_clock::now();
        run(a, b, c, d, u, shared, offsets);
        exec_.synchronize();
        x = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      }
      std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
      return t[t.size() / 2];
    }
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < repeats; ++r) run(a, b, c, d, u, shared, offsets);
    exec_.synchronize();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / repeats;
  }

  std::string kernel() const {
    return std::visit([](const auto& p) { return std::string(kernel_name(p->kernel())); }, plan_);
  }
  std::string dtype() const { return precision_name(precision_); }
  py::tuple lines() const {
    const LineSet& l = std::visit([](const auto& p) -> const LineSet& { return p->lines(); }, plan_);
    return py::make_tuple(l.n, l.stride, l.count0, l.stride0, l.count1, l.stride1);
  }
  std::string executor() const { return exec_.name(); }

 private:
  void run(std::uintptr_t a, std::uintptr_t b, std::uintptr_t c, std::uintptr_t d, std::uintptr_t u, bool shared,
           const std::vector<index_t>& offsets) {
    std::visit([&](auto& p) { solve_at_offsets(*p, a, b, c, d, u, shared, offsets); }, plan_);
  }

  Precision precision_;
  Executor exec_;
  std::variant<std::unique_ptr<TridiagonalPlan<float>>, std::unique_ptr<TridiagonalPlan<double>>> plan_;
};

}  // namespace

void bind_tridiagonal(py::module_& m) {
  py::class_<AnyTridiagonalPlan>(m, "TridiagonalPlan",
                                 "adi::TridiagonalPlan over LineSet(n, stride, count0, stride0, count1, stride1).")
      .def(py::init([](py::tuple l, const std::string& dtype, int device, std::uintptr_t stream, bool periodic,
                       const std::string& kernel, bool check_pivots, int threads) {
             const LineSet lines{l[0].cast<index_t>(), l[1].cast<index_t>(), l[2].cast<index_t>(),
                                 l[3].cast<index_t>(), l[4].cast<index_t>(), l[5].cast<index_t>()};
             return std::make_unique<AnyTridiagonalPlan>(to_lines(lines), dtype, device, stream, periodic, kernel,
                                                         check_pivots, threads);
           }),
           py::arg("lines"), py::arg("dtype"), py::arg("device") = -1, py::arg("stream") = 0,
           py::arg("periodic") = false, py::arg("kernel") = "automatic", py::arg("check_pivots") = true,
           py::arg("threads") = 0)
      .def("solve", &AnyTridiagonalPlan::solve, py::arg("a"), py::arg("b"), py::arg("c"), py::arg("d"), py::arg("u"),
           py::arg("shared"), py::arg("offsets") = std::vector<index_t>{})
      .def("time", &AnyTridiagonalPlan::time, py::arg("a"), py::arg("b"), py::arg("c"), py::arg("d"), py::arg("u"),
           py::arg("shared"), py::arg("offsets"), py::arg("repeats"), py::arg("each") = false)
      .def_property_readonly("kernel", &AnyTridiagonalPlan::kernel)
      .def_property_readonly("dtype", &AnyTridiagonalPlan::dtype)
      .def_property_readonly("lines", &AnyTridiagonalPlan::lines)
      .def_property_readonly("executor", &AnyTridiagonalPlan::executor);
  m.def("kernel_names", [] {
    std::vector<std::string> names;
    for (int k = 0; k <= static_cast<int>(Kernel::large_partition); ++k) names.push_back(kernel_name(Kernel(k)));
    return names;
  });
}

}  // namespace adi::python
