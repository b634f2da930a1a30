// adi._core: the compiled part of the adi Python package (python/adi/__init__.py is the
// public face). Errors are translated to the classes of adi/_errors.py with the C++ message
// unchanged; SingularSystem carries .system and .row.
#include <cstdint>

#include "adi/block_tridiagonal.hpp"
#include "common.hpp"

namespace adi::python {

// cudaStreamSynchronize(stream) on `device` from C++, the GIL released: the same wait as the
// C++ side of TridiagonalPlan.time(each=True), so that a benchmark timing one Python call
// between two waits charges every library the same wait (not CuPy's or PyTorch's own
// synchronize wrappers, whose Python costs differ by microseconds).
class StreamWait {
 public:
  StreamWait(int device, std::uintptr_t stream) : exec_(make_executor(device, stream)) {}
  void operator()() const {
    py::gil_scoped_release release;
    exec_.synchronize();
  }

 private:
  Executor exec_;
};

namespace {
[[noreturn]] void raise_as(const char* cls_name, const char* what, py::tuple extra = py::tuple()) {
  py::object cls = py::module_::import("adi._errors").attr(cls_name);
  py::list args;
  args.append(py::str(what));
  for (auto x : extra) args.append(x);
  py::object exc = cls(*py::tuple(args));
  PyErr_SetObject(cls.ptr(), exc.ptr());
  throw py::error_already_set();
}
}  // namespace

void bind_errors(py::module_&) {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const SingularBlock& e) {
      raise_as("SingularBlockError", e.what(), py::make_tuple(e.system(), e.row()));
    } catch (const SingularSystem& e) {
      raise_as("SingularSystemError", e.what(), py::make_tuple(e.system(), e.row()));
    } catch (const InvalidArgument& e) {
      raise_as("InvalidArgumentError", e.what());
    } catch (const Unsupported& e) {
      raise_as("UnsupportedError", e.what());
    } catch (const DeviceError& e) {
      raise_as("DeviceError", e.what());
    } catch (const Error& e) {
      raise_as("Error", e.what());
    }
  });
}

// --- DLPack (https://dmlc.github.io/dlpack/latest/c_api.html), the stable C ABI ----------
namespace {
struct DLDevice {
  std::int32_t device_type;
  std::int32_t device_id;
};
struct DLDataType {
  std::uint8_t code;
  std::uint8_t bits;
  std::uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  std::int32_t ndim;
  DLDataType dtype;
  std::int64_t* shape;
  std::int64_t* strides;
  std::uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor*);
};
struct DLPackVersion {
  std::uint32_t major, minor;
};
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned*);
  std::uint64_t flags;
  DLTensor dl_tensor;
};
constexpr std::uint64_t kDLFlagReadOnly = 1;

// (address, shape, strides in elements or None, dtype name, device type, device id, read-only)
// of a DLPack capsule, left unconsumed: the producer's capsule destructor frees the view.
py::tuple dlpack_view(py::capsule capsule) {
  const char* name = capsule.name();
  const DLTensor* t = nullptr;
  bool readonly = false;
  if (name && std::string(name) == "dltensor") {
    t = &static_cast<DLManagedTensor*>(capsule.get_pointer())->dl_tensor;
  } else if (name && std::string(name) == "dltensor_versioned") {
    auto* v = static_cast<DLManagedTensorVersioned*>(capsule.get_pointer());
    t = &v->dl_tensor;
    readonly = (v->flags & kDLFlagReadOnly) != 0;
  } else {
    throw InvalidArgument(std::string("DLPack: a capsule named '") + (name ? name : "") +
                          "' is not an unconsumed DLPack tensor ('dltensor')");
  }
  std::string dtype;
  if (t->dtype.lanes == 1 && t->dtype.code == 2 && t->dtype.bits == 32)
    dtype = "float32";
  else if (t->dtype.lanes == 1 && t->dtype.code == 2 && t->dtype.bits == 64)
    dtype = "float64";
  else if (t->dtype.lanes == 1 && t->dtype.code == 0 && t->dtype.bits == 32)
    dtype = "int32";
  else
    dtype = "code" + std::to_string(t->dtype.code) + "bits" + std::to_string(t->dtype.bits);
  py::list shape, strides;
  for (int i = 0; i < t->ndim; ++i) {
    shape.append(t->shape[i]);
    if (t->strides) strides.append(t->strides[i]);
  }
  const auto address = reinterpret_cast<std::uintptr_t>(t->data) + t->byte_offset;
  return py::make_tuple(address, py::tuple(shape), t->strides ? py::object(py::tuple(strides)) : py::none(), dtype,
                        t->device.device_type, t->device.device_id, readonly);
}
}  // namespace

void bind_arrays(py::module_& m) {
  m.def("dlpack_view", &dlpack_view, py::arg("capsule"),
        "(address, shape, strides in elements or None, dtype, device type, device id, read-only) of an "
        "unconsumed DLPack capsule.");
  m.def("cuda_available", &Executor::cuda_available, "True when adi was built with CUDA and a device answers.");
  m.def(
      "cuda_compiled",
      [] {
#if defined(ADI_HAVE_CUDA)
        return true;
#else
        return false;
#endif
      },
      "True when adi was built with CUDA.");
  py::class_<StreamWait>(m, "StreamWait", "Waits for a CUDA stream from C++ (benchmarks).")
      .def(py::init<int, std::uintptr_t>(), py::arg("device"), py::arg("stream"))
      .def("__call__", &StreamWait::operator());
  m.def(
      "synchronize", [](int device, std::uintptr_t stream) { StreamWait(device, stream)(); }, py::arg("device"),
      py::arg("stream"), "Waits for the work queued on a CUDA stream (no-op for device < 0).");
}

}  // namespace adi::python

PYBIND11_MODULE(_core, m) {
  m.doc() = "Compiled core of the adi package (use the adi module).";
  using namespace adi::python;
  bind_errors(m);
  bind_arrays(m);
  bind_tridiagonal(m);
  bind_batches(m);
  bind_hines(m);
  bind_heat(m);
  bind_finance(m);
  bind_fast(m);
}
