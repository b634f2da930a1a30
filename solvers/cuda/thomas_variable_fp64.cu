// Variable-size tridiagonal batches, fp64 (a file of its own; compiled in a group, CMakeLists.txt).
#include "solvers/cuda/thomas_variable.cuh"

namespace adi::cuda_backend {

template <class T>
void variable_tridiagonal_solve(VariableKernel kernel, const VariableBatchView& v, const VariableDeviceArrays<T>& x,
                                bool periodic, void* workspace, int* bad_system, void* stream);
template <>
void variable_tridiagonal_solve<double>(VariableKernel kernel, const VariableBatchView& v,
                                        const VariableDeviceArrays<double>& x, bool periodic, void* workspace,
                                        int* bad_system, void* stream) {
  variable_tridiagonal_launch<double>(kernel, v, x, periodic, workspace, bad_system, stream);
}

}  // namespace adi::cuda_backend
