// cuda_thomas_shared_transpose (solvers/cuda/thomas_shared_transpose.cuh, paper
// 6.1.1) against the fp64 reference: contiguous lines (X axis of a padded box).
#include "cuda_tridiagonal_check.hpp"

using adi::Axis;
using adi::Kernel;
using adi::test_cuda::Family;

ADI_CUDA_TRIDIAGONAL_SUITE(CudaThomasSharedTranspose, Kernel::cuda_thomas_shared_transpose,
                           Family::contiguous, Axis::x)
