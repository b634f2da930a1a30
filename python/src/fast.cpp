// The fast path of adi.solve_tridiagonal: NumPy, CuPy or PyTorch arrays whose layout needs no
// copy (out given; full bands with out's strides, or three contiguous 1-D bands; d with out's
// strides), resolved in C++ so that a call costs a few microseconds of Python. Anything else
// returns false and python/adi/_tridiagonal.py takes the general path (copies, allocation,
// other libraries, every error message).
#include <pybind11/numpy.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

#include "adi/tridiagonal.hpp"
#include "common.hpp"
#include "solve_lines.hpp"

namespace adi::python {
namespace {

enum class Kind { none, numpy, cupy, torch };

struct ArrayInfo {
  Kind kind = Kind::none;
  std::uintptr_t address = 0;
  std::vector<index_t> shape, strides;  // strides in elements
  int itemsize = 0;                     // 4 or 8 (float32 / float64); 0: anything else
  int device = -1;
};

bool element_strides(const std::vector<index_t>& bytes, int itemsize, std::uintptr_t address,
                     std::vector<index_t>& out) {
  if (itemsize == 0 || address % itemsize) return false;
  out.clear();
  for (index_t s : bytes) {
    if (s % itemsize) return false;
    out.push_back(s / itemsize);
  }
  return true;
}

// What the fast path needs of one array, or kind none when it is not a plain float array of
// NumPy, CuPy or PyTorch.
ArrayInfo inspect(const py::handle& x) {
  ArrayInfo r;
  if (py::isinstance<py::array>(x)) {
    auto a = py::reinterpret_borrow<py::array>(x);
    const char ch = a.dtype().kind();
    if (ch != 'f' || !(a.itemsize() == 4 || a.itemsize() == 8) || !a.writeable() || a.dtype().byteorder() == '>')
      return r;
    r.itemsize = static_cast<int>(a.itemsize());
    r.address = reinterpret_cast<std::uintptr_t>(a.data());
    std::vector<index_t> bytes;
    for (py::ssize_t i = 0; i < a.ndim(); ++i) {
      r.shape.push_back(a.shape(i));
      bytes.push_back(a.strides(i));
    }
    if (!element_strides(bytes, r.itemsize, r.address, r.strides)) return r;
    r.kind = Kind::numpy;
    return r;
  }
  const py::handle type = reinterpret_cast<PyObject*>(Py_TYPE(x.ptr()));
  const std::string module = py::str(type.attr("__module__"));
  const std::string name = py::str(type.attr("__name__"));
  if (module.rfind("cupy", 0) == 0 && name == "ndarray") {
    const std::string dt = py::str(x.attr("dtype").attr("name"));
    r.itemsize = dt == "float32" ? 4 : dt == "float64" ? 8 : 0;
    if (!r.itemsize) return r;
    r.address = x.attr("data").attr("ptr").cast<std::uintptr_t>();
    r.shape = x.attr("shape").cast<std::vector<index_t>>();
    if (!element_strides(x.attr("strides").cast<std::vector<index_t>>(), r.itemsize, r.address, r.strides)) return r;
    r.device = x.attr("device").attr("id").cast<int>();
    r.kind = Kind::cupy;
    return r;
  }
  if (module.rfind("torch", 0) == 0 && (name == "Tensor" || name == "Parameter")) {
    if (!x.attr("is_cuda").cast<bool>()) return r;
    const std::string dt = py::str(x.attr("dtype"));
    r.itemsize = dt == "torch.float32" ? 4 : dt == "torch.float64" ? 8 : 0;
    if (!r.itemsize) return r;
    r.address = x.attr("data_ptr")().cast<std::uintptr_t>();
    r.shape = x.attr("shape").cast<std::vector<index_t>>();
    r.strides = x.attr("stride")().cast<std::vector<index_t>>();
    py::object index = x.attr("device").attr("index");
    r.device = index.is_none() ? 0 : index.cast<int>();
    r.kind = Kind::torch;
    return r;
  }
  return r;
}

std::uintptr_t current_stream(Kind kind, int device) {
  if (kind == Kind::cupy)
    return py::module_::import("cupy.cuda").attr("get_current_stream")().attr("ptr").cast<std::uintptr_t>();
  if (kind == Kind::torch)
    return py::module_::import("torch.cuda").attr("current_stream")(device).attr("cuda_stream").cast<std::uintptr_t>();
  return 0;
}

// python/adi/_tridiagonal.py:line_set in C++: false when the layout has no LineSet.
bool line_set(const std::vector<index_t>& shape, const std::vector<index_t>& strides, int axis, LineSet& l,
              std::vector<index_t>& offsets) {
  const index_t n = shape[axis];
  index_t s = strides[axis];
  if (n > 1 && s <= 0) return false;
  if (n <= 1) s = 1;
  index_t base = 0;
  std::vector<std::pair<index_t, index_t>> dims;  // (stride, extent)
  for (std::size_t i = 0; i < shape.size(); ++i) {
    index_t e = shape[i], st = strides[i];
    if (static_cast<int>(i) == axis || e == 1) continue;
    if (e == 0) return false;
    if (st < 0) {
      base += (e - 1) * st;
      st = -st;
    }
    if (st == 0) return false;
    dims.emplace_back(st, e);
  }
  std::stable_sort(dims.begin(), dims.end(), [](auto& x, auto& y) { return x.first < y.first; });
  if (dims.size() > 2) {
    std::vector<std::pair<index_t, index_t>> merged{dims[0]};
    for (std::size_t k = 1; k < dims.size(); ++k) {
      auto& last = merged.back();
      if (dims[k].first == last.first * last.second)
        last.second *= dims[k].second;
      else
        merged.push_back(dims[k]);
    }
    dims = merged;
  }
  while (dims.size() < 2) dims.emplace_back(1, 1);
  l = LineSet{n, s, dims[0].second, dims[0].first, dims[1].second, dims[1].first};
  offsets.assign(1, base);
  for (std::size_t k = 2; k < dims.size(); ++k) {
    std::vector<index_t> next;
    for (index_t o : offsets)
      for (index_t j = 0; j < dims[k].second; ++j) next.push_back(o + j * dims[k].first);
    offsets.swap(next);
  }
  return true;
}

// C++ plans by layout, precision, device, stream, options and thread (a plan is not
// thread-safe), at most `limit` (the oldest built is dropped first).
class FastCache {
 public:
  explicit FastCache(std::size_t limit) : limit_(limit) {}

  // True when solved; false: not a fast-path case (nothing was done).
  bool solve(py::handle a, py::handle b, py::handle c, py::handle d, py::handle out, int axis, bool periodic,
             bool check_pivots, const std::string& kernel) {
    if (out.is_none()) return false;
    const ArrayInfo U = inspect(out);
    if (U.kind == Kind::none) return false;
    const ArrayInfo D = out.is(d) ? U : inspect(d);
    if (D.kind != U.kind || D.itemsize != U.itemsize || D.device != U.device || D.shape != U.shape ||
        D.strides != U.strides)
      return false;
    const int ndim = static_cast<int>(U.shape.size());
    if (ndim == 0 || axis < -ndim || axis >= ndim) return false;
    axis = (axis + ndim) % ndim;
    const index_t n = U.shape[axis];
    ArrayInfo B[3] = {inspect(a), inspect(b), inspect(c)};
    int shared = 0;
    for (const ArrayInfo& x : B) {
      if (x.kind != U.kind || x.itemsize != U.itemsize || x.device != U.device) return false;
      if (ndim > 1 && x.shape.size() == 1 && x.shape[0] == n && (x.strides[0] == 1 || n == 1))
        ++shared;
      else if (x.shape != U.shape || x.strides != U.strides)
        return false;
    }
    if (shared != 0 && shared != 3) return false;
    for (index_t e : U.shape)
      if (e == 0) return false;
    LineSet l;
    std::vector<index_t> offsets;
    if (!line_set(U.shape, U.strides, axis, l, offsets)) return false;
    const std::uintptr_t stream = current_stream(U.kind, U.device);
    const Key key{l.n,
                  l.stride,
                  l.count0,
                  l.stride0,
                  l.count1,
                  l.stride1,
                  U.itemsize,
                  U.device,
                  stream,
                  periodic,
                  check_pivots,
                  kernel,
                  std::this_thread::get_id()};
    std::shared_ptr<Entry> e;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = plans_.find(key);
      if (it != plans_.end()) e = it->second;
    }
    if (!e) {
      auto made = std::make_shared<Entry>();
      TridiagonalOptions o;
      o.periodic = periodic;
      o.check_pivots = check_pivots;
      o.kernel = kernel_from_name(kernel);
      const Executor exec = make_executor(U.device, stream);
      if (U.itemsize == 4)
        made->f32 = std::make_unique<TridiagonalPlan<float>>(exec, to_lines(l), o);
      else
        made->f64 = std::make_unique<TridiagonalPlan<double>>(exec, to_lines(l), o);
      std::lock_guard<std::mutex> lock(mutex_);
      if (plans_.size() >= limit_) {
        plans_.erase(order_.front());
        order_.erase(order_.begin());
      }
      e = made;
      plans_[key] = std::move(made);
      order_.push_back(key);
    }
    py::gil_scoped_release release;
    const bool sh = shared == 3;
    if (e->f32)
      solve_at_offsets(*e->f32, B[0].address, B[1].address, B[2].address, D.address, U.address, sh, offsets);
    else
      solve_at_offsets(*e->f64, B[0].address, B[1].address, B[2].address, D.address, U.address, sh, offsets);
    return true;
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    plans_.clear();
    order_.clear();
  }
  std::size_t size() const { return plans_.size(); }
  std::vector<std::string> kernels() const {
    std::vector<std::string> k;
    for (const auto& [key, e] : plans_) k.push_back(kernel_name(e->f32 ? e->f32->kernel() : e->f64->kernel()));
    return k;
  }

 private:
  using Key = std::tuple<index_t, index_t, index_t, index_t, index_t, index_t, int, int, std::uintptr_t, bool, bool,
                         std::string, std::thread::id>;
  struct Entry {
    std::unique_ptr<TridiagonalPlan<float>> f32;
    std::unique_ptr<TridiagonalPlan<double>> f64;
  };
  std::size_t limit_;
  std::mutex mutex_;
  std::map<Key, std::shared_ptr<Entry>> plans_;
  std::vector<Key> order_;
};

}  // namespace

void bind_fast(py::module_& m) {
  py::class_<FastCache>(m, "FastCache", "Plans of the fast path of solve_tridiagonal (C++ array resolution).")
      .def(py::init<std::size_t>(), py::arg("limit") = 32)
      .def("solve", &FastCache::solve, py::arg("a"), py::arg("b"), py::arg("c"), py::arg("d"), py::arg("out"),
           py::arg("axis"), py::arg("periodic"), py::arg("check_pivots"), py::arg("kernel"))
      .def("clear", &FastCache::clear)
      .def("__len__", &FastCache::size)
      .def("kernels", &FastCache::kernels);
}

}  // namespace adi::python
