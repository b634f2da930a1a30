// Device version of the partition method's local passes (see partition_mpi.hpp and the
// derivation at the top of adi/mpi/distributed_tridiagonal.cpp). One thread per line:
// along Y and Z neighbouring threads own neighbouring lines, so every row access is
// coalesced; the loads of a row do not depend on the recurrence, and __restrict__ lets
// the compiler issue them ahead of it.
#include <cmath>

#include "solvers/cuda/check.cuh"
#include "solvers/cuda/partition_mpi.hpp"

namespace adi::cuda_backend::partition {

namespace {

template <class T>
__device__ __forceinline__ index_t line_offset(const LineSet& ls, index_t l) {
  return (l % ls.count0) * ls.stride0 + (l / ls.count0) * ls.stride1;
}

template <class T, bool Shared>
__global__ void reduce_kernel(LineSet ls, const T* __restrict__ a, const T* __restrict__ b, const T* __restrict__ c,
                              const T* d, T* u, T* __restrict__ alpha,
                              T* __restrict__ gamma, T* __restrict__ red, bool first_open, bool last_open) {
  const index_t L = ls.count0 * ls.count1;
  const index_t l = index_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (l >= L) return;
  const index_t m = ls.n, st = ls.stride, o0 = line_offset<T>(ls, l);
  auto A = [&](index_t i) { return Shared ? a[i] : a[o0 + i * st]; };
  auto B = [&](index_t i) { return Shared ? b[i] : b[o0 + i * st]; };
  auto C = [&](index_t i) { return Shared ? c[i] : c[o0 + i * st]; };
  T* rr = red + l * 8;
  if (m == 2) {
    rr[0] = first_open ? T(0) : A(0);
    rr[1] = B(0);
    rr[2] = C(0);
    rr[3] = d[o0];
    rr[4] = A(1);
    rr[5] = B(1);
    rr[6] = last_open ? T(0) : C(1);
    rr[7] = d[o0 + st];
    return;
  }
  bool bad = false;
  T r = T(1) / B(1);
  bad |= !isfinite(r);
  T ap = A(1) * r, gp = C(1) * r, dp = d[o0 + st] * r;
  alpha[1 * L + l] = ap;
  gamma[1 * L + l] = gp;
  u[o0 + st] = dp;
  T P = dp, Q = ap, pi = -gp;
#pragma unroll 4
  for (index_t i = 2; i <= m - 2; ++i) {
    const index_t o = o0 + i * st;
    const T ai = A(i);
    r = T(1) / (B(i) - ai * gp);
    bad |= !isfinite(r);
    const T an = -ai * ap * r, gn = C(i) * r, dn = (d[o] - ai * dp) * r;
    alpha[i * L + l] = an;
    gamma[i * L + l] = gn;
    u[o] = dn;
    P += pi * dn;
    Q += pi * an;
    pi = -pi * gn;
    ap = an;
    gp = gn;
    dp = dn;
  }
  const index_t ol = o0 + (m - 1) * st;
  const T c0 = C(0), al = A(m - 1);
  rr[0] = first_open ? T(0) : A(0);
  rr[1] = B(0) - c0 * Q;
  rr[2] = c0 * pi;
  rr[3] = d[o0] - c0 * P;
  rr[4] = -al * ap;
  rr[5] = B(m - 1) - al * gp;
  rr[6] = last_open ? T(0) : C(m - 1);
  rr[7] = d[ol] - al * dp;
  if (bad)
    for (int k = 0; k < 8; ++k) rr[k] = T(NAN);
}

template <class T>
__global__ void back_kernel(LineSet ls, const T* __restrict__ alpha, const T* __restrict__ gamma,
                            const T* __restrict__ sol, T* __restrict__ u) {
  const index_t L = ls.count0 * ls.count1;
  const index_t l = index_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (l >= L) return;
  const index_t m = ls.n, st = ls.stride, o0 = line_offset<T>(ls, l);
  const T u0 = sol[2 * l];
  T nx = sol[2 * l + 1];
  u[o0] = u0;
  u[o0 + (m - 1) * st] = nx;
#pragma unroll 4
  for (index_t i = m - 2; i >= 1; --i) {
    const index_t o = o0 + i * st;
    nx = u[o] - alpha[i * L + l] * u0 - gamma[i * L + l] * nx;
    u[o] = nx;
  }
}

}  // namespace

template <class T>
void reduce(const LineSet& ls, const T* a, const T* b, const T* c, bool shared, const T* d, T* u, T* alpha, T* gamma,
            T* red, bool first_open, bool last_open, void* stream) {
  const index_t L = ls.count0 * ls.count1;
  if (L == 0) return;
  const int threads = 128;
  const unsigned blocks = unsigned((L + threads - 1) / threads);
  auto s = static_cast<cudaStream_t>(stream);
  if (shared)
    reduce_kernel<T, true><<<blocks, threads, 0, s>>>(ls, a, b, c, d, u, alpha, gamma, red, first_open, last_open);
  else
    reduce_kernel<T, false><<<blocks, threads, 0, s>>>(ls, a, b, c, d, u, alpha, gamma, red, first_open, last_open);
  ADI_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void back_substitute(const LineSet& ls, const T* alpha, const T* gamma, const T* sol, T* u, void* stream) {
  const index_t L = ls.count0 * ls.count1;
  if (L == 0) return;
  const int threads = 128;
  const unsigned blocks = unsigned((L + threads - 1) / threads);
  back_kernel<T><<<blocks, threads, 0, static_cast<cudaStream_t>(stream)>>>(ls, alpha, gamma, sol, u);
  ADI_CUDA_CHECK(cudaGetLastError());
}

void* pinned_alloc(std::size_t bytes) {
  void* p = nullptr;
  ADI_CUDA_CHECK(cudaMallocHost(&p, bytes));
  return p;
}

void pinned_free(void* p) noexcept {
  if (p) cudaFreeHost(p);
}

template void reduce<float>(const LineSet&, const float*, const float*, const float*, bool, const float*, float*,
                            float*, float*, float*, bool, bool, void*);
template void reduce<double>(const LineSet&, const double*, const double*, const double*, bool, const double*,
                             double*, double*, double*, double*, bool, bool, void*);
template void back_substitute<float>(const LineSet&, const float*, const float*, const float*, float*, void*);
template void back_substitute<double>(const LineSet&, const double*, const double*, const double*, double*, void*);

}  // namespace adi::cuda_backend::partition
