// adi._core finance: models, contracts, the ADI pricer (Black-Scholes 1-3 assets, Heston,
// American on 1-3 assets and under Heston, on the host or a CUDA device), option chains and the
// closed forms.
#include "adi/finance/finance.hpp"

#include <pybind11/numpy.h>

#include "common.hpp"

namespace adi::python {
using namespace adi::finance;

namespace {
py::array_t<double> values_of(const PriceResult& r) {
  const Field<double>& f = r.values;
  py::array_t<double> out({f.nx(), f.ny(), f.nz()});
  auto o = out.mutable_unchecked<3>();
  for (index_t k = 0; k < f.nz(); ++k)
    for (index_t j = 0; j < f.ny(); ++j)
      for (index_t i = 0; i < f.nx(); ++i) o(i, j, k) = f(i, j, k);
  return out;
}
template <class T>
PriceResult price_bs(const BlackScholesModel& m, const Contract& c, const Method& method) {
  py::gil_scoped_release release;
  // One asset: the early-exercise sweep; 2-3 assets: price() (Ikonen-Toivanen in the ADI step).
  if (c.exercise == Exercise::american && m.size() == 1) return price_one_asset<T>(m, c, method, true);
  return price<T>(m, c, method);
}
template <class T>
PriceResult price_h(const HestonModel& m, const Contract& c, const Method& method) {
  py::gil_scoped_release release;
  return price<T>(m, c, method);
}
}  // namespace

void bind_finance(py::module_& root) {
  py::module_ m = root.def_submodule("finance", "Option pricing by ADI (adi/finance).");
  py::enum_<OptionType>(m, "OptionType").value("call", OptionType::call).value("put", OptionType::put);
  py::enum_<Exercise>(m, "Exercise")
      .value("european", Exercise::european)
      .value("american", Exercise::american)
      .value("bermudan", Exercise::bermudan);
  py::enum_<Space>(m, "Space").value("price", Space::price).value("log", Space::log);
  py::enum_<FarField>(m, "FarField").value("linear", FarField::linear).value("dirichlet", FarField::dirichlet);
  py::enum_<Extrapolation>(m, "Extrapolation")
      .value("none", Extrapolation::none)
      .value("richardson", Extrapolation::richardson);

  py::class_<Scheme>(root, "Scheme", "An ADI scheme with its parameters (adi/scheme.hpp).")
      .def_static("from_name", &Scheme::from_name, py::arg("name"))
      .def_readwrite("theta", &Scheme::theta)
      .def_readwrite("sigma", &Scheme::sigma)
      .def_readwrite("damping_steps", &Scheme::damping_steps)
      .def_property_readonly("name", [](const Scheme& s) { return std::string(s.name()); });

  py::class_<Asset>(m, "Asset")
      .def(py::init([](double spot, double volatility, double dividend) {
             return Asset{spot, volatility, dividend};
           }),
           py::arg("spot") = 100.0, py::arg("volatility") = 0.2, py::arg("dividend") = 0.0)
      .def_readwrite("spot", &Asset::spot)
      .def_readwrite("volatility", &Asset::volatility)
      .def_readwrite("dividend", &Asset::dividend);
  py::class_<BlackScholesModel>(m, "BlackScholesModel")
      .def(py::init([](std::vector<Asset> assets, std::vector<double> correlation, double rate) {
             return BlackScholesModel{std::move(assets), std::move(correlation), rate};
           }),
           py::arg("assets"), py::arg("correlation") = std::vector<double>{}, py::arg("rate") = 0.0)
      .def_readwrite("assets", &BlackScholesModel::assets)
      .def_readwrite("correlation", &BlackScholesModel::correlation)
      .def_readwrite("rate", &BlackScholesModel::rate)
      .def("validate", &BlackScholesModel::validate);
  py::class_<HestonModel>(m, "HestonModel")
      .def(py::init([](double spot, double v0, double kappa, double theta, double sigma, double rho, double rate,
                       double dividend) { return HestonModel{spot, v0, kappa, theta, sigma, rho, rate, dividend}; }),
           py::arg("spot") = 100.0, py::arg("v0") = 0.04, py::arg("kappa") = 1.5, py::arg("theta") = 0.04,
           py::arg("sigma") = 0.3, py::arg("rho") = -0.9, py::arg("rate") = 0.025, py::arg("dividend") = 0.0)
      .def_readwrite("spot", &HestonModel::spot)
      .def_readwrite("v0", &HestonModel::v0)
      .def_readwrite("kappa", &HestonModel::kappa)
      .def_readwrite("theta", &HestonModel::theta)
      .def_readwrite("sigma", &HestonModel::sigma)
      .def_readwrite("rho", &HestonModel::rho)
      .def_readwrite("rate", &HestonModel::rate)
      .def_readwrite("dividend", &HestonModel::dividend)
      .def("validate", &HestonModel::validate);
  py::class_<Contract>(m, "Contract")
      .def_static("vanilla", &Contract::vanilla, py::arg("type"), py::arg("strike"), py::arg("maturity"),
                  py::arg("exercise") = Exercise::european)
      .def_static("basket", &Contract::basket, py::arg("type"), py::arg("strike"), py::arg("maturity"),
                  py::arg("weights") = std::vector<double>{})
      .def_static("geometric_basket", &Contract::geometric_basket, py::arg("type"), py::arg("strike"),
                  py::arg("maturity"), py::arg("weights") = std::vector<double>{})
      .def_static("spread", &Contract::spread, py::arg("type"), py::arg("strike"), py::arg("maturity"))
      .def_static("exchange", &Contract::exchange, py::arg("maturity"))
      .def_static("best_of", &Contract::best_of, py::arg("type"), py::arg("strike"), py::arg("maturity"))
      .def_static("worst_of", &Contract::worst_of, py::arg("type"), py::arg("strike"), py::arg("maturity"))
      .def_readwrite("type", &Contract::type)
      .def_readwrite("strike", &Contract::strike)
      .def_readwrite("maturity", &Contract::maturity)
      .def_readwrite("exercise", &Contract::exercise)
      .def("describe", &Contract::describe);
  py::class_<Method>(m, "Method", "The numerical method (0 selects the default of each field).")
      .def(py::init<>())
      .def_readwrite("nodes", &Method::nodes)
      .def_readwrite("variance_nodes", &Method::variance_nodes)
      .def_readwrite("steps", &Method::steps)
      .def_readwrite("scheme", &Method::scheme)
      .def_readwrite("space", &Method::space)
      .def_readwrite("far_field", &Method::far_field)
      .def_readwrite("width", &Method::width)
      .def_readwrite("intensity", &Method::intensity)
      .def_readwrite("cluster", &Method::cluster)
      .def_readwrite("step_grading", &Method::step_grading)
      .def_readwrite("smoothing", &Method::smoothing)
      .def(
          "set_executor",
          [](Method& x, int device, std::uintptr_t stream) { x.executor = make_executor(device, stream); },
          py::arg("device"), py::arg("stream") = 0, "device < 0: the host; otherwise that CUDA device.")
      .def_property_readonly("executor", [](const Method& x) { return x.executor.name(); })
      .def("validate", &Method::validate);
  py::class_<PriceResult>(m, "PriceResult")
      .def_readonly("price", &PriceResult::price)
      .def_readonly("delta", &PriceResult::delta)
      .def_readonly("gamma", &PriceResult::gamma)
      .def_readonly("theta", &PriceResult::theta)
      .def_readonly("vega", &PriceResult::vega)
      .def_readonly("rho", &PriceResult::rho)
      .def_readonly("steps", &PriceResult::steps)
      .def_readonly("seconds", &PriceResult::seconds)
      .def_readonly("setup_seconds", &PriceResult::setup_seconds)
      .def_property_readonly("values", &values_of, "V at the valuation date on the solve's grid, (nx, ny, nz).")
      .def("nodes",
           [](const PriceResult& r, int axis) {
             detail::require(axis >= 0 && axis < 3, "axis = " + std::to_string(axis) + " must be 0, 1 or 2");
             const auto& n = r.grid.axis(Axis(axis)).nodes();
             return py::array_t<double>(static_cast<py::ssize_t>(n.size()), n.data());
           })
      .def("describe", &PriceResult::describe)
      .def("__repr__", [](const PriceResult& r) { return "<adi.finance.PriceResult " + r.describe() + ">"; });

  py::class_<ChainOption>(m, "ChainOption")
      .def(py::init([](OptionType type, Exercise exercise, double spot, double strike, double maturity,
                       double volatility, double rate, double dividend) {
             return ChainOption{type, exercise, spot, strike, maturity, volatility, rate, dividend};
           }),
           py::arg("type") = OptionType::put, py::arg("exercise") = Exercise::american, py::arg("spot") = 100.0,
           py::arg("strike") = 100.0, py::arg("maturity") = 1.0, py::arg("volatility") = 0.2, py::arg("rate") = 0.0,
           py::arg("dividend") = 0.0);
  py::class_<ChainResult>(m, "ChainResult")
      .def_property_readonly("price",
                             [](const ChainResult& r) { return py::array_t<double>(r.price.size(), r.price.data()); })
      .def_property_readonly("delta",
                             [](const ChainResult& r) { return py::array_t<double>(r.delta.size(), r.delta.data()); })
      .def_property_readonly("gamma",
                             [](const ChainResult& r) { return py::array_t<double>(r.gamma.size(), r.gamma.data()); })
      .def_property_readonly("theta",
                             [](const ChainResult& r) { return py::array_t<double>(r.theta.size(), r.theta.data()); })
      .def_readonly("seconds", &ChainResult::seconds)
      .def_readonly("setup_seconds", &ChainResult::setup_seconds)
      .def_readonly("backend", &ChainResult::backend);

  m.def("price_black_scholes_f64", &price_bs<double>, py::arg("model"), py::arg("contract"), py::arg("method"));
  m.def("price_black_scholes_f32", &price_bs<float>, py::arg("model"), py::arg("contract"), py::arg("method"));
  m.def("price_heston_f64", &price_h<double>, py::arg("model"), py::arg("contract"), py::arg("method"));
  m.def("price_heston_f32", &price_h<float>, py::arg("model"), py::arg("contract"), py::arg("method"));
  m.def(
      "price_chain",
      [](const std::vector<ChainOption>& chain, const Method& method, Extrapolation e) {
        py::gil_scoped_release release;
        return price_chain(chain, method, e);
      },
      py::arg("chain"), py::arg("method"), py::arg("extrapolation") = Extrapolation::none);
  m.def(
      "black_scholes_closed_form",
      [](OptionType type, double spot, double strike, double maturity, double rate, double dividend, double vol) {
        const Greeks g = black_scholes(type, spot, strike, maturity, rate, dividend, vol);
        py::dict d;
        d["price"] = g.price;
        d["delta"] = g.delta;
        d["gamma"] = g.gamma;
        d["vega"] = g.vega;
        d["theta"] = g.theta;
        d["rho"] = g.rho;
        return d;
      },
      py::arg("type"), py::arg("spot"), py::arg("strike"), py::arg("maturity"), py::arg("rate"), py::arg("dividend"),
      py::arg("volatility"));
  m.def("heston_closed_form", &heston, py::arg("model"), py::arg("type"), py::arg("strike"), py::arg("maturity"));
}

}  // namespace adi::python
