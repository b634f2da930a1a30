// adi._core.HeatSolver: an AdiSolver on a uniform grid with constant coefficients, constant
// boundary data per face, a scheme by name, and the solution field it steps. u is exchanged
// with Python as an (nx, ny, nz) array (copies: the field's rows are padded).
#include <pybind11/numpy.h>

#include <array>
#include <memory>
#include <variant>

#include "adi/scheme.hpp"
#include "common.hpp"

namespace adi::python {
namespace {

Boundary boundary_from(const std::string& kind, double value) {
  if (kind == "dirichlet") return Boundary::dirichlet(value);
  if (kind == "neumann") return Boundary::neumann(value);
  if (kind == "periodic") return Boundary::periodic(value);
  if (kind == "linear") return Boundary::linear();
  throw InvalidArgument("boundary kind '" + kind + "' is not one of dirichlet, neumann, periodic, linear");
}

template <class T>
struct Heat {
  Grid grid;
  AdiSolver<T> solver;
  Field<T> u;
  Heat(const Grid& g, const Pde& pde, const BoundaryConditions& bc, const Scheme& s, const Executor& exec)
      : grid(g), solver(g, pde, bc, s, exec), u(g, exec) {}

  py::array_t<double> get() const {
    const Field<T> h = u.to_host();
    py::array_t<double> out({h.nx(), h.ny(), h.nz()});
    auto o = out.template mutable_unchecked<3>();
    for (index_t k = 0; k < h.nz(); ++k)
      for (index_t j = 0; j < h.ny(); ++j)
        for (index_t i = 0; i < h.nx(); ++i) o(i, j, k) = h(i, j, k);
    return out;
  }
  void set(py::array_t<double, py::array::forcecast> v) {
    detail::require(v.ndim() == 3 && v.shape(0) == u.nx() && v.shape(1) == u.ny() && v.shape(2) == u.nz(),
                    "HeatSolver.u: the array must have shape (" + std::to_string(u.nx()) + ", " +
                        std::to_string(u.ny()) + ", " + std::to_string(u.nz()) + ")");
    Field<T> h(u.nx(), u.ny(), u.nz());
    auto r = v.template unchecked<3>();
    for (index_t k = 0; k < h.nz(); ++k)
      for (index_t j = 0; j < h.ny(); ++j)
        for (index_t i = 0; i < h.nx(); ++i) h(i, j, k) = static_cast<T>(r(i, j, k));
    u.copy_from(h);
  }
};

class HeatSolver {
 public:
  HeatSolver(std::array<index_t, 3> shape, std::array<double, 3> lo, std::array<double, 3> hi,
             std::array<double, 3> diffusion, std::array<double, 3> convection, double reaction,
             std::vector<std::pair<std::string, double>> faces, const std::string& scheme, double theta, int damping,
             const std::string& dtype, int device, std::uintptr_t stream) {
    const Grid grid = Grid::uniform(shape, lo, hi);
    Pde pde;
    for (int a = 0; a < 3; ++a) {
      pde.diffusion[a] = diffusion[a];
      pde.convection[a] = convection[a];
    }
    pde.reaction = reaction;
    detail::require(faces.size() == 6, "boundary: " + std::to_string(faces.size()) +
                                           " faces given; pass six (x-, x+, y-, y+, z-, z+) or one for all");
    BoundaryConditions bc;
    for (int f = 0; f < 6; ++f) bc.set(static_cast<Face>(f), boundary_from(faces[f].first, faces[f].second));
    Scheme s = Scheme::from_name(scheme);
    if (theta > 0) s.theta = theta;
    s.damping_steps = damping;
    const Executor exec = make_executor(device, stream);
    if (precision_from(dtype) == Precision::f32)
      v_ = std::make_unique<Heat<float>>(grid, pde, bc, s, exec);
    else
      v_ = std::make_unique<Heat<double>>(grid, pde, bc, s, exec);
  }
  template <class F>
  auto with(F&& f) {
    return std::visit([&](auto& p) { return f(*p); }, v_);
  }

 private:
  std::variant<std::unique_ptr<Heat<float>>, std::unique_ptr<Heat<double>>> v_;
};

}  // namespace

void bind_heat(py::module_& m) {
  py::class_<HeatSolver>(m, "HeatSolver", "adi::AdiSolver of a constant-coefficient PDE and its solution field.")
      .def(py::init<std::array<index_t, 3>, std::array<double, 3>, std::array<double, 3>, std::array<double, 3>,
                    std::array<double, 3>, double, std::vector<std::pair<std::string, double>>, const std::string&,
                    double, int, const std::string&, int, std::uintptr_t>(),
           py::arg("shape"), py::arg("lo"), py::arg("hi"), py::arg("diffusion"), py::arg("convection"),
           py::arg("reaction"), py::arg("faces"), py::arg("scheme"), py::arg("theta"), py::arg("damping"),
           py::arg("dtype"), py::arg("device") = -1, py::arg("stream") = 0)
      .def(
          "step",
          [](HeatSolver& h, double t, double dt) {
            py::gil_scoped_release release;
            h.with([&](auto& x) { x.solver.step(x.u, t, dt); });
          },
          py::arg("t"), py::arg("dt"))
      .def(
          "advance",
          [](HeatSolver& h, double t0, double t1, long steps) {
            py::gil_scoped_release release;
            h.with([&](auto& x) { x.solver.advance(x.u, t0, t1, steps); });
          },
          py::arg("t0"), py::arg("t1"), py::arg("steps"))
      .def("restart", [](HeatSolver& h) { h.with([](auto& x) { x.solver.restart(); }); })
      .def("get_u", [](HeatSolver& h) { return h.with([](auto& x) { return x.get(); }); })
      .def("set_u",
           [](HeatSolver& h, py::array_t<double, py::array::forcecast> v) { h.with([&](auto& x) { x.set(v); }); })
      .def("nodes",
           [](HeatSolver& h, int axis) {
             detail::require(axis >= 0 && axis < 3, "axis = " + std::to_string(axis) + " must be 0, 1 or 2");
             const auto& n =
                 h.with([&](auto& x) -> const std::vector<double>& { return x.grid.axis(Axis(axis)).nodes(); });
             return py::array_t<double>(static_cast<py::ssize_t>(n.size()), n.data());
           })
      .def("scheme",
           [](HeatSolver& h) { return std::string(h.with([](auto& x) { return x.solver.scheme().name(); })); })
      .def("timings", [](HeatSolver& h) {
        return h.with([](auto& x) {
          const StepTimings& t = x.solver.timings();
          py::dict d;
          d["implicit"] = py::make_tuple(t.implicit[0], t.implicit[1], t.implicit[2]);
          d["explicit"] = t.explicit_part;
          d["boundary"] = t.boundary;
          d["steps"] = t.steps;
          d["total"] = t.total();
          return d;
        });
      });
}

}  // namespace adi::python
