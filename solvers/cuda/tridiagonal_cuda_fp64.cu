// CUDA tridiagonal kernels, double precision (see tridiagonal_cuda.cu).
#include "solvers/cuda/tridiagonal_launch.cuh"

ADI_CUDA_TRIDIAGONAL_INSTANTIATE(double)
