// adi._core plans of the batch families on raw addresses: block-tridiagonal (any
// BlockLineSet), variable-size tridiagonal and batched Cholesky (CompactBatch: systems back
// to back). python/adi/_batches.py turns arrays into these calls.
#include <pybind11/numpy.h>

#include <memory>
#include <variant>
#include <vector>

#include "adi/batched_cholesky.hpp"
#include "adi/block_tridiagonal.hpp"
#include "adi/variable_tridiagonal.hpp"
#include "common.hpp"

namespace adi::python {
namespace {

template <template <class> class P>
using AnyPlan = std::variant<std::unique_ptr<P<float>>, std::unique_ptr<P<double>>>;

template <template <class> class P, class... Args>
AnyPlan<P> make_plan(Precision p, Args&&... args) {
  if (p == Precision::f32) return std::make_unique<P<float>>(std::forward<Args>(args)...);
  return std::make_unique<P<double>>(std::forward<Args>(args)...);
}

BlockStrides strides_from(py::tuple t) {
  return {t[0].cast<index_t>(), t[1].cast<index_t>(), t[2].cast<index_t>(), t[3].cast<index_t>()};
}

BlockKernel block_kernel_from(const std::string& name) { return block_kernel_from_name(name); }

class AnyBlockPlan {
 public:
  AnyBlockPlan(int m, index_t n, index_t count0, index_t count1, py::tuple vectors, py::tuple blocks,
               const std::string& dtype, int device, std::uintptr_t stream, bool periodic, const std::string& kernel,
               double pivot_tolerance, bool check_pivots)
      : exec_(make_executor(device, stream)) {
    BlockLineSet l;
    l.m = m;
    l.n = n;
    l.count0 = count0;
    l.count1 = count1;
    l.vectors = strides_from(vectors);
    l.blocks = strides_from(blocks);
    BlockTridiagonalOptions o;
    o.kernel = block_kernel_from(kernel);
    o.pivot_tolerance = pivot_tolerance;
    o.periodic = periodic;
    o.check_pivots = check_pivots;
    plan_ = make_plan<BlockTridiagonalPlan>(precision_from(dtype), exec_, to_block_lines(l), o);
  }
  // offsets: (vector offset, block offset) pairs in elements; empty: one solve at 0.
  void solve(std::uintptr_t a, std::uintptr_t b, std::uintptr_t c, std::uintptr_t d, std::uintptr_t u,
             const std::vector<std::pair<index_t, index_t>>& offsets) {
    py::gil_scoped_release release;
    std::visit([&](auto& p) { run(*p, a, b, c, d, u, offsets); }, plan_);
  }
  std::string kernel() const {
    return std::visit([](const auto& p) { return std::string(block_kernel_name(p->kernel())); }, plan_);
  }
  std::size_t workspace_bytes() const {
    return std::visit([](const auto& p) { return p->workspace_bytes(); }, plan_);
  }

 private:
  template <class T>
  static void run(BlockTridiagonalPlan<T>& p, std::uintptr_t a, std::uintptr_t b, std::uintptr_t c, std::uintptr_t d,
                  std::uintptr_t u, const std::vector<std::pair<index_t, index_t>>& offsets) {
    const std::vector<std::pair<index_t, index_t>> one{{0, 0}};
    for (const auto& [ov, ob] : offsets.empty() ? one : offsets)
      p.solve(BlockBands<T>{ptr<const T>(a) + ob, ptr<const T>(b) + ob, ptr<const T>(c) + ob}, ptr<const T>(d) + ov,
              ptr<T>(u) + ov);
  }
  Executor exec_;
  AnyPlan<BlockTridiagonalPlan> plan_;
};

// Sizes from a host int32 array (the batch plan copies them).
VariableBatchPlan batch_from(const Executor& exec, py::array_t<int, py::array::c_style | py::array::forcecast> sizes) {
  return VariableBatchPlan(exec, BatchSizes{sizes.data(), static_cast<index_t>(sizes.size())});
}

// The names of variable_kernel_name, with or without their "(CP)" / "(NCP)" tail.
VariableKernel variable_kernel_from(const std::string& name) {
  for (auto k : {VariableKernel::automatic, VariableKernel::reference, VariableKernel::padded,
                 VariableKernel::stop_at_size, VariableKernel::sorted, VariableKernel::truncated}) {
    const std::string full = variable_kernel_name(k);
    if (name == full || name == full.substr(0, full.find(' '))) return k;
  }
  throw InvalidArgument("kernel = '" + name + "' is not one of automatic, reference, padded, stop_at_size, sorted, truncated");
}

class AnyVariablePlan {
 public:
  // layout "compact" (CompactBatch: systems back to back) or "sorted" (SortedInterleaved: the
  // plan's own size-sorted, chunk-interleaved layout; pack() / unpack() convert).
  AnyVariablePlan(py::array_t<int, py::array::c_style | py::array::forcecast> sizes, const std::string& dtype,
                  int device, std::uintptr_t stream, bool periodic, const std::string& kernel, bool check_pivots,
                  const std::string& layout)
      : batch_(batch_from(make_executor(device, stream), sizes)) {
    VariableTridiagonalOptions o;
    o.periodic = periodic;
    o.kernel = variable_kernel_from(kernel);
    o.check_pivots = check_pivots;
    if (layout == "sorted")
      plan_ = make_plan<VariableTridiagonalPlan>(precision_from(dtype), batch_, SortedInterleaved{}, o);
    else if (layout == "compact")
      plan_ = make_plan<VariableTridiagonalPlan>(precision_from(dtype), batch_, CompactBatch{}, o);
    else
      throw InvalidArgument("layout = '" + layout +
                            "' is not 'compact' (systems back to back) or 'sorted' "
                            "(SortedInterleaved)");
  }
  void solve(std::uintptr_t a, std::uintptr_t b, std::uintptr_t c, std::uintptr_t d, std::uintptr_t u) {
    py::gil_scoped_release release;
    std::visit(
        [&](auto& p) {
          using T = elem_t<decltype(*p)>;
          p->solve(Bands<T>{ptr<const T>(a), ptr<const T>(b), ptr<const T>(c)}, ptr<const T>(d), ptr<T>(u));
        },
        plan_);
  }
  // CompactBatch (total values) -> SortedInterleaved (sorted_span values, padding zeroed), and back.
  void pack(std::uintptr_t src, std::uintptr_t dst) {
    py::gil_scoped_release release;
    std::visit(
        [&](auto& p) {
          batch_.pack(ptr<const elem_t<decltype(*p)>>(src), CompactBatch{}, ptr<elem_t<decltype(*p)>>(dst));
        },
        plan_);
  }
  void unpack(std::uintptr_t src, std::uintptr_t dst) {
    py::gil_scoped_release release;
    std::visit(
        [&](auto& p) {
          batch_.unpack(ptr<const elem_t<decltype(*p)>>(src), ptr<elem_t<decltype(*p)>>(dst), CompactBatch{});
        },
        plan_);
  }
  index_t span() const {
    return std::visit([](const auto& p) { return p->span(); }, plan_);
  }
  index_t total() const { return batch_.total_size(); }
  std::string kernel() const {
    return std::visit([](const auto& p) { return std::string(variable_kernel_name(p->kernel())); }, plan_);
  }

 private:
  VariableBatchPlan batch_;
  AnyPlan<VariableTridiagonalPlan> plan_;
};

class AnyCholeskyPlan {
 public:
  // ld None: CompactBatch (column-major matrices back to back); otherwise PointerBatch with
  // these leading dimensions (host int32 array, copied by the plan).
  AnyCholeskyPlan(py::array_t<int, py::array::c_style | py::array::forcecast> sizes, const std::string& dtype,
                  int device, std::uintptr_t stream, bool check_pivots, py::object ld)
      : batch_(batch_from(make_executor(device, stream), sizes)), pointers_(!ld.is_none()) {
    CholeskyOptions o;
    o.check_pivots = check_pivots;
    if (pointers_) {
      auto l = py::array_t<int, py::array::c_style | py::array::forcecast>::ensure(ld);
      if (!l || l.ndim() != 1 || l.size() != batch_.count())
        throw InvalidArgument("ld: must be " + std::to_string(batch_.count()) +
                              " leading dimensions (one per matrix), or None for max(1, n)");
      plan_ = make_plan<BatchedCholeskyPlan>(precision_from(dtype), batch_, PointerBatch{l.data()}, o);
    } else {
      plan_ = make_plan<BatchedCholeskyPlan>(precision_from(dtype), batch_, CompactBatch{}, o);
    }
  }
  void factor(std::uintptr_t a, std::uintptr_t info) {
    require_layout(false, "factor");
    py::gil_scoped_release release;
    std::visit([&](auto& p) { p->factor(ptr<elem_t<decltype(*p)>>(a), ptr<int>(info)); }, plan_);
  }
  void solve(std::uintptr_t l, std::uintptr_t b, int nrhs, std::uintptr_t info) {
    require_layout(false, "solve");
    py::gil_scoped_release release;
    std::visit(
        [&](auto& p) {
          using T = elem_t<decltype(*p)>;
          p->solve(ptr<const T>(l), ptr<T>(b), nrhs, ptr<const int>(info));
        },
        plan_);
  }
  // PointerBatch: `a` is the address of an array of count matrix pointers (executor memory).
  void factor_pointers(std::uintptr_t a, std::uintptr_t info) {
    require_layout(true, "factor_pointers");
    py::gil_scoped_release release;
    std::visit([&](auto& p) { p->factor(ptr<elem_t<decltype(*p)>* const>(a), ptr<int>(info)); }, plan_);
  }
  void solve_pointers(std::uintptr_t l, std::uintptr_t b, int nrhs, std::uintptr_t ldb, std::uintptr_t info) {
    require_layout(true, "solve_pointers");
    py::gil_scoped_release release;
    std::visit(
        [&](auto& p) {
          using T = elem_t<decltype(*p)>;
          p->solve(ptr<const T* const>(l), ptr<T* const>(b), nrhs, ptr<const int>(ldb), ptr<const int>(info));
        },
        plan_);
  }
  std::string kernels() const {
    return std::visit(
        [](const auto& p) {
          return std::string(cholesky_kernel_name(p->small_kernel())) + " <= " + std::to_string(p->crossover()) +
                 " < " + cholesky_kernel_name(p->large_kernel());
        },
        plan_);
  }
  bool pointers() const { return pointers_; }

 private:
  void require_layout(bool pointers, const char* what) const {
    if (pointers != pointers_)
      throw InvalidArgument(std::string(what) + ": this plan was built for " +
                            (pointers_ ? "a PointerBatch (ld given)" : "a CompactBatch (ld None)"));
  }
  VariableBatchPlan batch_;
  bool pointers_;
  AnyPlan<BatchedCholeskyPlan> plan_;
};

}  // namespace

void bind_batches(py::module_& m) {
  py::class_<AnyBlockPlan>(m, "BlockTridiagonalPlan", "adi::BlockTridiagonalPlan over a BlockLineSet.")
      .def(py::init<int, index_t, index_t, index_t, py::tuple, py::tuple, const std::string&, int, std::uintptr_t, bool,
                    const std::string&, double, bool>(),
           py::arg("m"), py::arg("n"), py::arg("count0"), py::arg("count1"), py::arg("vectors"), py::arg("blocks"),
           py::arg("dtype"), py::arg("device") = -1, py::arg("stream") = 0, py::arg("periodic") = false,
           py::arg("kernel") = "automatic", py::arg("pivot_tolerance") = 0.0, py::arg("check_pivots") = true)
      .def("solve", &AnyBlockPlan::solve, py::arg("a"), py::arg("b"), py::arg("c"), py::arg("d"), py::arg("u"),
           py::arg("offsets") = std::vector<std::pair<index_t, index_t>>{})
      .def_property_readonly("kernel", &AnyBlockPlan::kernel)
      .def_property_readonly("workspace_bytes", &AnyBlockPlan::workspace_bytes);
  py::class_<AnyVariablePlan>(m, "VariableTridiagonalPlan",
                              "adi::VariableTridiagonalPlan, CompactBatch or SortedInterleaved layout.")
      .def(py::init<py::array_t<int, py::array::c_style | py::array::forcecast>, const std::string&, int,
                    std::uintptr_t, bool, const std::string&, bool, const std::string&>(),
           py::arg("sizes"), py::arg("dtype"), py::arg("device") = -1, py::arg("stream") = 0,
           py::arg("periodic") = false, py::arg("kernel") = "automatic", py::arg("check_pivots") = true,
           py::arg("layout") = "compact")
      .def("solve", &AnyVariablePlan::solve, py::arg("a"), py::arg("b"), py::arg("c"), py::arg("d"), py::arg("u"))
      .def("pack", &AnyVariablePlan::pack, py::arg("src"), py::arg("dst"))
      .def("unpack", &AnyVariablePlan::unpack, py::arg("src"), py::arg("dst"))
      .def_property_readonly("span", &AnyVariablePlan::span)
      .def_property_readonly("total", &AnyVariablePlan::total)
      .def_property_readonly("kernel", &AnyVariablePlan::kernel);
  py::class_<AnyCholeskyPlan>(m, "BatchedCholeskyPlan",
                              "adi::BatchedCholeskyPlan, CompactBatch (ld None) or PointerBatch layout.")
      .def(py::init<py::array_t<int, py::array::c_style | py::array::forcecast>, const std::string&, int,
                    std::uintptr_t, bool, py::object>(),
           py::arg("sizes"), py::arg("dtype"), py::arg("device") = -1, py::arg("stream") = 0,
           py::arg("check_pivots") = false, py::arg("ld") = py::none())
      .def("factor", &AnyCholeskyPlan::factor, py::arg("a"), py::arg("info"))
      .def("solve", &AnyCholeskyPlan::solve, py::arg("l"), py::arg("b"), py::arg("nrhs"), py::arg("info"))
      .def("factor_pointers", &AnyCholeskyPlan::factor_pointers, py::arg("a"), py::arg("info"))
      .def("solve_pointers", &AnyCholeskyPlan::solve_pointers, py::arg("l"), py::arg("b"), py::arg("nrhs"),
           py::arg("ldb"), py::arg("info"))
      .def_property_readonly("pointers", &AnyCholeskyPlan::pointers)
      .def_property_readonly("kernels", &AnyCholeskyPlan::kernels);
}

}  // namespace adi::python
