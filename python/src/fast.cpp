// The fast path of adi.solve_tridiagonal: NumPy, CuPy or PyTorch arrays whose layout needs no
// copy (full bands with d's strides, or three contiguous 1-D bands; out with d's strides, or
// out None and d contiguous: the new array is allocated here), resolved in C++ with the plan
// taken from a per-process cache, so that a call costs a few microseconds of Python. Anything
// else returns None and python/adi/_tridiagonal.py takes the general path (copies, other
// libraries, every error message).
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
  bool writable = true;  // NumPy's flag (device arrays: true)
};

// The attribute `name` of x, or a null object (the AttributeError cleared) when it has none.
py::object attr_or_null(py::handle x, const char* name) {
  PyObject* r = PyObject_GetAttrString(x.ptr(), name);
  if (!r) PyErr_Clear();
  return py::reinterpret_steal<py::object>(r);
}

py::object attr_or_null(py::handle x, py::handle name) {
  PyObject* r = PyObject_GetAttr(x.ptr(), name.ptr());
  if (!r) PyErr_Clear();
  return py::reinterpret_steal<py::object>(r);
}

// The attribute names read on every call, interned once (a lookup then compares pointers).
struct Names {
  py::object dtype, data, ptr, shape, strides, device_id, is_cuda, data_ptr, stride, get_device;
  static const Names& get() {
    static const Names* n = [] {
      auto* r = new Names;
      auto in = [](const char* s) { return py::reinterpret_steal<py::object>(PyUnicode_InternFromString(s)); };
      r->dtype = in("dtype");
      r->data = in("data");
      r->ptr = in("ptr");
      r->shape = in("shape");
      r->strides = in("strides");
      r->device_id = in("device_id");
      r->is_cuda = in("is_cuda");
      r->data_ptr = in("data_ptr");
      r->stride = in("stride");
      r->get_device = in("get_device");
      return r;
    }();
    return *n;
  }
};

// A tuple (or tuple subclass: torch.Size) of Python ints into `out`; false if it is not one.
bool ints_of(py::handle t, std::vector<index_t>& out) {
  if (!PyTuple_Check(t.ptr())) return false;
  const Py_ssize_t n = PyTuple_GET_SIZE(t.ptr());
  out.resize(static_cast<std::size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    const long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(t.ptr(), i));
    if (v == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
    out[static_cast<std::size_t>(i)] = static_cast<index_t>(v);
  }
  return true;
}

bool element_strides(const std::vector<index_t>& bytes, int itemsize, std::uintptr_t address,
                     std::vector<index_t>& out) {
  if (itemsize == 0 || address % itemsize) return false;
  out.resize(bytes.size());
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] % itemsize) return false;
    out[i] = bytes[i] / itemsize;
  }
  return true;
}

// Objects looked up once per process: the dtypes compared by identity, the stream getters
// and allocators of CuPy and PyTorch (imported only when an array of theirs is seen). Held
// for the life of the process (never released: the interpreter may be finalising when a
// static destructor would run).
struct Known {
  py::object np_f32, np_f64, ndarray;
  py::object cupy_stream_obj, cupy_empty_like;
  py::object torch_f32, torch_f64, torch_raw_stream, torch_stream, torch_empty_like;
  bool cupy_ready = false, torch_ready = false;
  std::map<PyTypeObject*, std::pair<py::object, Kind>> kinds;  // the type held: its address stays its own

  // CuPy's ndarray and PyTorch's Tensor / Parameter types by module and name, looked up once
  // per type (other subclasses take the general path).
  Kind kind_of(PyTypeObject* type) {
    auto it = kinds.find(type);
    if (it != kinds.end()) return it->second.second;
    const py::handle tp = reinterpret_cast<PyObject*>(type);
    const std::string module = py::str(tp.attr("__module__"));
    const std::string name = py::str(tp.attr("__name__"));
    Kind kind = Kind::none;
    if (module.rfind("cupy", 0) == 0 && name == "ndarray") kind = Kind::cupy;
    if (module.rfind("torch", 0) == 0 && (name == "Tensor" || name == "Parameter")) kind = Kind::torch;
    kinds.emplace(type, std::make_pair(py::reinterpret_borrow<py::object>(tp), kind));
    return kind;
  }

  static Known& get() {
    static Known* k = [] {
      auto* r = new Known;
      py::module_ np = py::module_::import("numpy");
      r->np_f32 = np.attr("dtype")("float32");
      r->np_f64 = np.attr("dtype")("float64");
      r->ndarray = np.attr("ndarray");
      return r;
    }();
    return *k;
  }
  void need_cupy() {
    if (cupy_ready) return;
    py::module_ cp = py::module_::import("cupy");
    cupy_stream_obj = py::module_::import("cupy.cuda").attr("get_current_stream");
    cupy_empty_like = cp.attr("empty_like");
    cupy_ready = true;
  }
  void need_torch() {
    if (torch_ready) return;
    py::module_ t = py::module_::import("torch");
    torch_f32 = t.attr("float32");
    torch_f64 = t.attr("float64");
    torch_raw_stream = attr_or_null(t.attr("_C"), "_cuda_getCurrentRawStream");  // the pointer, no Stream object
    torch_stream = py::module_::import("torch.cuda").attr("current_stream");
    torch_empty_like = t.attr("empty_like");
    torch_ready = true;
  }
};

int numpy_itemsize(py::handle dtype) {
  Known& k = Known::get();
  if (dtype.is(k.np_f32)) return 4;
  if (dtype.is(k.np_f64)) return 8;
  // a non-canonical float dtype object (e.g. from a pickle): by name and byte order
  const std::string name = py::str(dtype.attr("name"));
  const bool native = py::str(dtype.attr("byteorder")).cast<std::string>() != ">";
  if (!native) return 0;
  return name == "float32" ? 4 : name == "float64" ? 8 : 0;
}

// What the fast path needs of one array, or kind none when it is not a plain float array of
// NumPy, CuPy or PyTorch (CUDA tensors).
ArrayInfo inspect(const py::handle& x) {
  ArrayInfo r;
  if (py::isinstance<py::array>(x)) {
    auto a = py::reinterpret_borrow<py::array>(x);
    const char ch = a.dtype().kind();
    if (ch != 'f' || !(a.itemsize() == 4 || a.itemsize() == 8) || a.dtype().byteorder() == '>') return r;
    r.writable = a.writeable();
    r.itemsize = static_cast<int>(a.itemsize());
    r.address = reinterpret_cast<std::uintptr_t>(a.data());
    const auto nd = static_cast<std::size_t>(a.ndim());
    r.shape.assign(a.shape(), a.shape() + nd);
    std::vector<index_t> bytes(a.strides(), a.strides() + nd);
    if (!element_strides(bytes, r.itemsize, r.address, r.strides)) return r;
    r.kind = Kind::numpy;
    return r;
  }
  const Kind kind = Known::get().kind_of(Py_TYPE(x.ptr()));
  const Names& N = Names::get();
  if (kind == Kind::cupy) {
    Known& k = Known::get();
    k.need_cupy();
    r.itemsize = numpy_itemsize(x.attr(N.dtype));
    if (!r.itemsize) return r;
    py::object data = x.attr(N.data);
    r.address = data.attr(N.ptr).cast<std::uintptr_t>();
    std::vector<index_t> bytes;
    if (!ints_of(x.attr(N.shape), r.shape) || !ints_of(x.attr(N.strides), bytes)) return r;
    if (!element_strides(bytes, r.itemsize, r.address, r.strides)) return r;
    py::object id = attr_or_null(data, N.device_id);
    r.device = id ? id.cast<int>() : x.attr("device").attr("id").cast<int>();
    r.kind = Kind::cupy;
    return r;
  }
  if (kind == Kind::torch) {
    Known& k = Known::get();
    k.need_torch();
    // is_cuda first (a property: CPU tensors leave at once), then the methods called without
    // a bound-method object (PyObject_CallMethodNoArgs: vectorcall on Tensor's C methods).
    py::object cuda = attr_or_null(x, N.is_cuda);
    if (!cuda || cuda.ptr() != Py_True) return r;  // CPU (the general path, through NumPy) or another backend
    py::object dt = x.attr(N.dtype);
    r.itemsize = dt.is(k.torch_f32) ? 4 : dt.is(k.torch_f64) ? 8 : 0;
    if (!r.itemsize) return r;
    auto call = [&](const py::object& name) {
      PyObject* v = PyObject_CallMethodNoArgs(x.ptr(), name.ptr());
      if (!v) PyErr_Clear();
      return py::reinterpret_steal<py::object>(v);
    };
    py::object device = call(N.get_device), address = call(N.data_ptr), strides = call(N.stride);
    if (!device || !address || !strides) return r;
    r.device = static_cast<int>(PyLong_AsLong(device.ptr()));
    r.address = static_cast<std::uintptr_t>(PyLong_AsUnsignedLongLong(address.ptr()));
    if (PyErr_Occurred()) {
      PyErr_Clear();
      return r;
    }
    if (!ints_of(x.attr(N.shape), r.shape) || !ints_of(strides, r.strides)) return r;
    r.kind = Kind::torch;
    return r;
  }
  return r;
}

std::uintptr_t current_stream(Kind kind, int device) {
  Known& k = Known::get();
  if (kind == Kind::cupy) {
    return k.cupy_stream_obj().attr(Names::get().ptr).cast<std::uintptr_t>();
  }
  if (kind == Kind::torch) {
    if (k.torch_raw_stream) return k.torch_raw_stream(device).cast<std::uintptr_t>();
    return k.torch_stream(device).attr("cuda_stream").cast<std::uintptr_t>();
  }
  return 0;
}

// Strides equal on every axis of extent > 1 (the others are never stepped along).
bool same_layout(const std::vector<index_t>& shape, const std::vector<index_t>& s1, const std::vector<index_t>& s2) {
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (shape[i] > 1 && s1[i] != s2[i]) return false;
  return true;
}

// A new array for the solution, laid out like d; a null object when d is neither C- nor
// Fortran-contiguous, or a NumPy subclass (np.ma, np.matrix: their own empty_like): the
// general path then allocates.
py::object new_like(const py::handle& d, const ArrayInfo& D) {
  if (D.kind == Kind::numpy) {
    if (!py::handle(reinterpret_cast<PyObject*>(Py_TYPE(d.ptr()))).is(Known::get().ndarray)) return py::object();
    auto a = py::reinterpret_borrow<py::array>(d);
    const bool c = a.flags() & py::array::c_style, f = a.flags() & py::array::f_style;
    if (!c && !f) return py::object();
    std::vector<py::ssize_t> shape(D.shape.begin(), D.shape.end()), strides(D.shape.size());
    py::ssize_t s = D.itemsize;
    const std::size_t nd = shape.size();
    for (std::size_t k = 0; k < nd; ++k) {
      const std::size_t i = c ? nd - 1 - k : k;
      strides[i] = s;
      s *= std::max<py::ssize_t>(shape[i], 1);
    }
    return py::array(a.dtype(), shape, strides);
  }
  Known& k = Known::get();
  if (D.kind == Kind::cupy) return k.cupy_empty_like(d);
  if (D.kind == Kind::torch) return k.torch_empty_like(d);
  return py::object();
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

  // The solution (out, or a new array laid out like d when out is None) when solved; None:
  // not a fast-path case (nothing was done, nothing written).
  py::object solve(py::handle a, py::handle b, py::handle c, py::handle d, py::handle out, int axis, bool periodic,
                   bool check_pivots, const std::string& kernel) {
    const ArrayInfo D = inspect(d);
    if (D.kind == Kind::none) return py::none();
    const int ndim = static_cast<int>(D.shape.size());
    if (ndim == 0 || axis < -ndim || axis >= ndim) return py::none();
    axis = (axis + ndim) % ndim;
    const index_t n = D.shape[axis];
    for (index_t e : D.shape)
      if (e == 0) return py::none();
    ArrayInfo B[3] = {inspect(a), inspect(b), inspect(c)};
    int shared = 0;
    for (const ArrayInfo& x : B) {
      if (x.kind != D.kind || x.itemsize != D.itemsize || x.device != D.device) return py::none();
      if (ndim > 1 && x.shape.size() == 1 && x.shape[0] == n && (x.strides[0] == 1 || n == 1))
        ++shared;
      else if (x.shape != D.shape || !same_layout(D.shape, x.strides, D.strides))
        return py::none();
    }
    if (shared != 0 && shared != 3) return py::none();
    LineSet l;
    std::vector<index_t> offsets;
    if (!line_set(D.shape, D.strides, axis, l, offsets)) return py::none();
    py::object u;
    ArrayInfo U;
    if (out.is_none()) {
      u = new_like(d, D);
      if (!u) return py::none();
      U = inspect(u);
    } else {
      u = py::reinterpret_borrow<py::object>(out);
      U = out.is(d) ? D : inspect(out);
    }
    if (U.kind != D.kind || !U.writable || U.itemsize != D.itemsize || U.device != D.device || U.shape != D.shape ||
        !same_layout(D.shape, U.strides, D.strides))
      return py::none();
    const std::uintptr_t stream = current_stream(D.kind, D.device);
    const Key key{l.n,
                  l.stride,
                  l.count0,
                  l.stride0,
                  l.count1,
                  l.stride1,
                  D.itemsize,
                  D.device,
                  stream,
                  periodic,
                  check_pivots,
                  kernel,
                  std::this_thread::get_id()};
    std::shared_ptr<Entry> e = find_or_build(key, l, D, stream, periodic, check_pivots, kernel);
    {
      py::gil_scoped_release release;
      const bool sh = shared == 3;
      if (e->f32)
        solve_at_offsets(*e->f32, B[0].address, B[1].address, B[2].address, D.address, U.address, sh, offsets);
      else
        solve_at_offsets(*e->f64, B[0].address, B[1].address, B[2].address, D.address, U.address, sh, offsets);
    }
    return u;
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    plans_.clear();
    order_.clear();
  }
  std::size_t size() const { return plans_.size(); }
  // The stream (cudaStream_t as an integer, 0 for the host) each cached plan was built for.
  std::vector<std::uintptr_t> streams() const {
    std::vector<std::uintptr_t> out;
    for (const auto& [key, e] : plans_) out.push_back(std::get<8>(key));
    return out;
  }
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
  std::shared_ptr<Entry> find_or_build(const Key& key, const LineSet& l, const ArrayInfo& D, std::uintptr_t stream,
                                       bool periodic, bool check_pivots, const std::string& kernel) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = plans_.find(key);
      if (it != plans_.end()) return it->second;
    }
    auto made = std::make_shared<Entry>();
    TridiagonalOptions o;
    o.periodic = periodic;
    o.check_pivots = check_pivots;
    o.kernel = kernel_from_name(kernel);
    const Executor exec = make_executor(D.device, stream);
    if (D.itemsize == 4)
      made->f32 = std::make_unique<TridiagonalPlan<float>>(exec, to_lines(l), o);
    else
      made->f64 = std::make_unique<TridiagonalPlan<double>>(exec, to_lines(l), o);
    std::lock_guard<std::mutex> lock(mutex_);
    if (plans_.size() >= limit_ && !order_.empty()) {
      plans_.erase(order_.front());
      order_.erase(order_.begin());
    }
    plans_[key] = made;
    order_.push_back(key);
    return made;
  }

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
      .def("kernels", &FastCache::kernels)
      .def("streams", &FastCache::streams);
}

}  // namespace adi::python
