// Variable-size tridiagonal batches, fp32 (the kernels: thomas_variable.cuh).
#include "solvers/cuda/thomas_variable.cuh"

namespace adi::cuda_backend {

std::size_t variable_tridiagonal_workspace_bytes(VariableKernel kernel, const VariableBatchView& v, index_t stride,
                                                 int rows, bool periodic, std::size_t value_size) {
  // One array per kind of scratch value (c*; z when periodic) of the launch's scratch_length; the
  // truncated kinds add their refusal flag past it.
  const auto len = static_cast<std::size_t>(variable_detail::scratch_length(kernel, v, stride, rows));
  const std::size_t bytes = len * (periodic ? 2 : 1) * value_size;
  return exact_variable_kernel(kernel) == kernel ? bytes : variable_detail::truncated_flag_offset(bytes) + sizeof(int);
}

template <class T>
void variable_tridiagonal_solve(VariableKernel kernel, const VariableBatchView& v, const VariableDeviceArrays<T>& x,
                                bool periodic, void* workspace, int* bad_system, void* stream) {
  variable_tridiagonal_launch<T>(kernel, v, x, periodic, workspace, bad_system, stream);
}
template void variable_tridiagonal_solve<float>(VariableKernel, const VariableBatchView&,
                                                const VariableDeviceArrays<float>&, bool, void*, int*, void*);

}  // namespace adi::cuda_backend
