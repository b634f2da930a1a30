// Partial pivoting of variable-size batches, fp32 and fp64 (the kernel: pivoting_variable.cuh).
#include "solvers/cuda/pivoting_variable.cuh"

namespace adi::cuda_backend {

std::size_t variable_pivoting_workspace_bytes(const VariableBatchView& v, std::size_t value_size) {
  return static_cast<std::size_t>(v.total) * 2 * value_size;  // u1', u2' per row, packed
}

template <class T>
void variable_pivoting_solve(VariableKernel kernel, const VariableBatchView& v, const VariableDeviceArrays<T>& x,
                             void* workspace, int* bad_system, void* stream) {
  variable_pivoting_launch<T>(kernel, v, x, workspace, bad_system, stream);
}
template void variable_pivoting_solve<float>(VariableKernel, const VariableBatchView&,
                                             const VariableDeviceArrays<float>&, void*, int*, void*);
template void variable_pivoting_solve<double>(VariableKernel, const VariableBatchView&,
                                              const VariableDeviceArrays<double>&, void*, int*, void*);

}  // namespace adi::cuda_backend
