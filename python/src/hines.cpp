// adi._core: neurons (Morphology from SWC, discretisation, the implicit Euler matrix), the
// batched Hines solver over neurons stored back to back, and PassiveNeurons in time.
#include "adi/hines.hpp"

#include <pybind11/numpy.h>

#include <memory>
#include <variant>

#include "common.hpp"

namespace adi::python {
namespace {

template <class V>
py::array_t<typename V::value_type> to_numpy(const V& v) {
  return py::array_t<typename V::value_type>(static_cast<py::ssize_t>(v.size()), v.data());
}

HinesOptions hines_options(const std::string& kernel, bool check_pivots) {
  HinesOptions o;
  o.kernel = hines_kernel_from_name(kernel);
  o.check_pivots = check_pivots;
  return o;
}

// `count` neurons of one tree, neuron after neuron (CompactBatch without offsets).
class AnyHinesPlan {
 public:
  AnyHinesPlan(std::vector<int> parent, index_t count, const std::string& dtype, int device, std::uintptr_t stream,
               const std::string& kernel, bool check_pivots) {
    const Executor exec = make_executor(device, stream);
    const HinesBatch batch = HinesBatch::uniform(HinesTopology(std::move(parent)), count);
    const HinesOptions o = hines_options(kernel, check_pivots);
    if (precision_from(dtype) == Precision::f32)
      plan_ = std::make_unique<HinesPlan<float>>(exec, batch, CompactBatch{}, o);
    else
      plan_ = std::make_unique<HinesPlan<double>>(exec, batch, CompactBatch{}, o);
  }
  void solve(std::uintptr_t offdiag, std::uintptr_t diag, std::uintptr_t rhs) {
    py::gil_scoped_release release;
    std::visit(
        [&](auto& p) {
          using T = elem_t<decltype(*p)>;
          p->solve(ptr<const T>(offdiag), ptr<T>(diag), ptr<T>(rhs));
        },
        plan_);
  }
  std::string kernel() const {
    return std::visit([](const auto& p) { return std::string(hines_kernel_name(p->kernel())); }, plan_);
  }
  index_t span() const {
    return std::visit([](const auto& p) { return p->span(); }, plan_);
  }

 private:
  std::variant<std::unique_ptr<HinesPlan<float>>, std::unique_ptr<HinesPlan<double>>> plan_;
};

class AnyNeurons {
 public:
  AnyNeurons(std::vector<Compartments> cells, std::vector<int> cell_of, double dt, const std::string& dtype, int device,
             std::uintptr_t stream, const std::string& kernel) {
    if (precision_from(dtype) == Precision::f32)
      v_ = std::make_unique<PassiveNeurons<float>>(make_executor(device, stream), std::move(cells), std::move(cell_of),
                                                   dt, hines_options(kernel, true));
    else
      v_ = std::make_unique<PassiveNeurons<double>>(make_executor(device, stream), std::move(cells), std::move(cell_of),
                                                    dt, hines_options(kernel, true));
  }
  template <class F>
  auto with(F&& f) {
    return std::visit([&](auto& p) { return f(*p); }, v_);
  }
  template <class F>
  auto with(F&& f) const {
    return std::visit([&](const auto& p) { return f(*p); }, v_);
  }

 private:
  std::variant<std::unique_ptr<PassiveNeurons<float>>, std::unique_ptr<PassiveNeurons<double>>> v_;
};

}  // namespace

void bind_hines(py::module_& m) {
  py::enum_<SwcSections>(m, "SwcSections")
      .value("import3d", SwcSections::import3d)
      .value("branch_points", SwcSections::branch_points);
  py::enum_<NsegRule>(m, "NsegRule")
      .value("fixed", NsegRule::fixed)
      .value("max_length", NsegRule::max_length)
      .value("d_lambda", NsegRule::d_lambda)
      .value("per_point", NsegRule::per_point);
  py::enum_<Geometry>(m, "Geometry")
      .value("frustums", Geometry::frustums)
      .value("mean_cylinder", Geometry::mean_cylinder);

  py::class_<Morphology>(m, "Morphology", "A neuron's shape as sections (NEURON's view of an SWC file).")
      .def_static("read_swc", &Morphology::read_swc, py::arg("path"), py::arg("sections") = SwcSections::import3d)
      .def_property_readonly("name", &Morphology::name)
      .def_property_readonly("samples", &Morphology::samples)
      .def_property_readonly("section_count", [](const Morphology& x) { return x.sections().size(); })
      .def("section_names",
           [](const Morphology& x) {
             std::vector<std::string> names;
             for (const auto& s : x.sections()) names.push_back(s.name);
             return names;
           })
      .def("soma", &Morphology::soma)
      .def("find", &Morphology::find, py::arg("name"))
      .def("__repr__", [](const Morphology& x) {
        return "<adi.Morphology '" + x.name() + "': " + std::to_string(x.sections().size()) + " sections>";
      });

  py::class_<CableParameters>(m, "CableParameters", "Membrane and axial properties (NEURON names and units).")
      .def(py::init<>())
      .def_readwrite("cm", &CableParameters::cm)
      .def_readwrite("ra", &CableParameters::ra)
      .def_readwrite("g_leak", &CableParameters::g_leak)
      .def_readwrite("e_leak", &CableParameters::e_leak)
      .def_readwrite("rule", &CableParameters::rule)
      .def_readwrite("geometry", &CableParameters::geometry)
      .def_readwrite("nseg", &CableParameters::nseg)
      .def_readwrite("max_length", &CableParameters::max_length)
      .def_readwrite("d_lambda", &CableParameters::d_lambda)
      .def_readwrite("frequency", &CableParameters::frequency)
      .def_readwrite("nseg_per_section", &CableParameters::nseg_per_section);

  py::class_<Compartments>(m, "Compartments", "One neuron's compartments in NEURON's node layout.")
      .def_property_readonly("size", &Compartments::size)
      .def_property_readonly("parent", [](const Compartments& c) { return to_numpy(c.parent); })
      .def_property_readonly("area", [](const Compartments& c) { return to_numpy(c.area); })
      .def_property_readonly("capacitance", [](const Compartments& c) { return to_numpy(c.capacitance); })
      .def_property_readonly("leak", [](const Compartments& c) { return to_numpy(c.leak); })
      .def_property_readonly("axial", [](const Compartments& c) { return to_numpy(c.axial); })
      .def_readonly("e_leak", &Compartments::e_leak)
      .def_property_readonly("nseg", [](const Compartments& c) { return to_numpy(c.nseg); })
      .def("at", &Compartments::at, py::arg("section"), py::arg("x"),
           "The node NEURON's sec(x) refers to (x = 0: the attachment node, 1: the end node).");

  m.def("discretise", &discretise, py::arg("morphology"), py::arg("parameters") = CableParameters{});
  m.def(
      "implicit_euler_matrix",
      [](const Compartments& c, double dt) {
        HinesMatrix h = implicit_euler_matrix(c, dt);
        return py::make_tuple(to_numpy(h.offdiag), to_numpy(h.diag));
      },
      py::arg("compartments"), py::arg("dt"));
  m.def(
      "synthetic_neuron",
      [](const std::string& cls, unsigned long long seed) {
        SyntheticSpec spec = paper_class(cls);
        spec.seed = seed;
        SyntheticNeuron s = generate_morphology(spec);
        return py::make_tuple(s.morphology, s.parameters());
      },
      py::arg("name"), py::arg("seed") = 1,
      "A random neuron of one of the cuHinesBatch paper's classes ('small-low' ... 'big-high'): "
      "(Morphology, CableParameters giving it exactly that many compartments).");

  py::class_<AnyHinesPlan>(m, "HinesPlan", "adi::HinesPlan: `count` neurons of one tree, back to back.")
      .def(py::init<std::vector<int>, index_t, const std::string&, int, std::uintptr_t, const std::string&, bool>(),
           py::arg("parent"), py::arg("count"), py::arg("dtype"), py::arg("device") = -1, py::arg("stream") = 0,
           py::arg("kernel") = "automatic", py::arg("check_pivots") = true)
      .def("solve", &AnyHinesPlan::solve, py::arg("offdiag"), py::arg("diag"), py::arg("rhs"))
      .def_property_readonly("kernel", &AnyHinesPlan::kernel)
      .def_property_readonly("span", &AnyHinesPlan::span);

  py::class_<AnyNeurons>(m, "PassiveNeurons", "adi::PassiveNeurons: passive neurons stepped by implicit Euler.")
      .def(py::init<std::vector<Compartments>, std::vector<int>, double, const std::string&, int, std::uintptr_t,
                    const std::string&>(),
           py::arg("cells"), py::arg("cell_of"), py::arg("dt"), py::arg("dtype") = "float64", py::arg("device") = -1,
           py::arg("stream") = 0, py::arg("kernel") = "automatic")
      .def(
          "set_voltage", [](AnyNeurons& n, double v) { n.with([&](auto& p) { p.set_voltage(v); }); }, py::arg("v"))
      .def(
          "set_current",
          [](AnyNeurons& n, index_t neuron, int compartment, double nA) {
            n.with([&](auto& p) { p.set_current(neuron, compartment, nA); });
          },
          py::arg("neuron"), py::arg("compartment"), py::arg("nA"))
      .def("clear_currents", [](AnyNeurons& n) { n.with([](auto& p) { p.clear_currents(); }); })
      .def(
          "step",
          [](AnyNeurons& n, int steps) {
            py::gil_scoped_release release;
            n.with([&](auto& p) { p.step(steps); });
          },
          py::arg("steps") = 1)
      .def_property_readonly("time", [](const AnyNeurons& n) { return n.with([](const auto& p) { return p.time(); }); })
      .def_property_readonly("dt", [](const AnyNeurons& n) { return n.with([](const auto& p) { return p.dt(); }); })
      .def_property_readonly("count",
                             [](const AnyNeurons& n) { return n.with([](const auto& p) { return p.count(); }); })
      .def(
          "voltage",
          [](const AnyNeurons& n, index_t neuron) {
            return to_numpy(n.with([&](const auto& p) { return p.voltage(neuron); }));
          },
          py::arg("neuron"))
      .def("kernel", [](const AnyNeurons& n) {
        return std::string(n.with([](const auto& p) { return hines_kernel_name(p.plan().kernel()); }));
      });
}

}  // namespace adi::python
