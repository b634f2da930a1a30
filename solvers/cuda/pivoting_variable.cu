// Partial pivoting of variable-size batches, fp32 and fp64 (the kernel: pivoting_variable.cuh).
#include "solvers/cuda/pivoting_variable.cuh"

namespace adi::cuda_backend {

std::size_t variable_pivoting_workspace_bytes(const VariableBatchView& v, bool periodic, std::size_t value_size) {
  // u1', u2' per row, packed (periodic: and U's columns n-2, n-1)
  return static_cast<std::size_t>(v.total) * (periodic ? 4 : 2) * value_size;
}

template <class T>
void variable_pivoting_solve(VariableKernel kernel, const VariableBatchView& v, const VariableDeviceArrays<T>& x,
                             bool periodic, void* workspace, int* bad_system, void* stream) {
  variable_pivoting_launch<T>(kernel, v, x, periodic, workspace, bad_system, stream);
}
template void variable_pivoting_solve<float>(VariableKernel, const VariableBatchView&,
                                             const VariableDeviceArrays<float>&, bool, void*, int*,
                                             void*);
template void variable_pivoting_solve<double>(VariableKernel, const VariableBatchView&,
                                              const VariableDeviceArrays<double>&, bool, void*, int*,
                                              void*);

}  // namespace adi::cuda_backend
