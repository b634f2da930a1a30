#pragma once
// Shared helpers of the adi._core bindings: precision dispatch, executors from a device
// number and a stream handle, and raw pointers passed from Python as integers.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>

#include "adi/error.hpp"
#include "adi/executor.hpp"

namespace adi::python {
namespace py = pybind11;

// The precision of a plan: "float32" or "float64" (what numpy.dtype(...).name prints).
enum class Precision { f32, f64 };
inline Precision precision_from(const std::string& name) {
  if (name == "float32") return Precision::f32;
  if (name == "float64") return Precision::f64;
  throw InvalidArgument("dtype = " + name + " is not supported; pass float32 or float64 arrays");
}
inline const char* precision_name(Precision p) { return p == Precision::f32 ? "float32" : "float64"; }

// device < 0: the host (OpenMP threads); otherwise CUDA device `device` with `stream`
// (a cudaStream_t as an integer; 0: the legacy default stream).
inline Executor make_executor(int device, std::uintptr_t stream, int threads = 0) {
  if (device < 0) return Executor::host(threads);
  return Executor::cuda(device, reinterpret_cast<void*>(stream));
}

template <class T>
T* ptr(std::uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

// The element type of a plan template instance: elem_t<decltype(*p)> is T for a Plan<T>.
template <class P>
struct PlanElem;
template <template <class> class P, class T>
struct PlanElem<P<T>> {
  using type = T;
};
template <class P>
using elem_t = typename PlanElem<std::decay_t<P>>::type;

void bind_errors(py::module_& m);
void bind_arrays(py::module_& m);
void bind_tridiagonal(py::module_& m);
void bind_batches(py::module_& m);
void bind_hines(py::module_& m);
void bind_heat(py::module_& m);
void bind_finance(py::module_& m);
void bind_fast(py::module_& m);

}  // namespace adi::python
