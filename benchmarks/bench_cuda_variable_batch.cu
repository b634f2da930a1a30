// Variable-size batches on the GPU, against cuSPARSE / cuSOLVER on the batch padded to its
// largest size, in one run (CUDA events, median of --reps runs after warm-up):
//
// Tridiagonal: 256,000 systems of sizes U[256,512], U[1,512] and fixed 384 and 512, fp32
//   and fp64: ours CP and NCP (padded interleaved), sorted (SortedInterleaved), compact,
//   the truncated sweeps on both interleaved layouts and what automatic takes (stop 45);
//   the project's fixed-size solver (TridiagonalPlan on the padded InterleavedBatch);
//   cuSPARSE gtsvInterleavedBatch and gtsv2StridedBatch on the padded batch. Useful
//   bandwidth counts 5 arrays of the real sizes (a, b, c, d read, u written); %copy is of
//   cudaMemcpy device-to-device measured here (read + write).
// Cholesky: batches of 800 and 3000, sizes uniform and Gaussian in [1, Nmax], Nmax 32..512,
//   fp32 and fp64: useful GFLOP/s (sum n^3/3) of ours, cuSOLVER potrfBatched on the batch
//   padded to Nmax (identity padding), and a loop of single-matrix potrf calls. A sweep of
//   fixed-size batches over the kernels sets the crossover (the dispatch table quotes it).
//
//   bench_cuda_variable_batch [--part=all|tri|chol|sweep] [--reps=7] [--systems=256000]
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <cusparse.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "adi/batched_cholesky.hpp"
#include "adi/field.hpp"
#include "adi/tridiagonal.hpp"
#include "adi/variable_tridiagonal.hpp"
#include "benchmarks/cuda_bench_util.cuh"

namespace {

using adi::index_t;

#define CKS(call) CK_STATUS(call, CUSPARSE_STATUS_SUCCESS)
#define CKD(call) CK_STATUS(call, CUSOLVER_STATUS_SUCCESS)

using adi::bench::dalloc;

int g_reps = 7;
double g_copy = 0;  // GB/s, read + write

// Median of `reps` (default --reps) timed runs of f after `warm` untimed ones; `prep` runs
// before each, outside the timed interval (restoring inputs a solver overwrites).
double median_ms(const std::function<void()>& f, const std::function<void()>& prep = {}, int warm = 2, int reps = -1) {
  return adi::bench::median_ms(f, reps < 0 ? g_reps : reps, prep, warm);
}

__device__ __host__ inline double hash01(unsigned long long i, unsigned long long salt) {
  unsigned long long x = (i + 1) * 0x9E3779B97F4A7C15ull ^ salt * 0xBF58476D1CE4E5B9ull;
  x ^= x >> 31;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 29;
  return double(x >> 11) * (1.0 / 9007199254740992.0);
}

// ---------------------------------------------------------------- tridiagonal

// Row k of system s (n rows): diagonally dominant, a[0] = c[n-1] = 0; identity past n.
template <class T>
__device__ void row_values(index_t s, int k, int n, T& a, T& b, T& c, T& d) {
  if (k >= n) {
    a = c = d = T(0);
    b = T(1);
    return;
  }
  const unsigned long long i = static_cast<unsigned long long>(s) * 1024 + k;
  a = k == 0 ? T(0) : T(hash01(i, 1) * 2 - 1);
  c = k == n - 1 ? T(0) : T(hash01(i, 2) * 2 - 1);
  b = T(std::fabs(double(a)) + std::fabs(double(c)) + 1 + hash01(i, 3));
  d = T(hash01(i, 4) * 2 - 1);
}

// Element (k, s) at k*es + s*ss for k < rows.
template <class T>
__global__ void fill_tri(const int* sizes, index_t count, int rows, index_t es, index_t ss, T* a, T* b, T* c, T* d) {
  const index_t s = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  if (s >= count) return;
  const int n = sizes[s];
  for (int k = 0; k < rows; ++k) {
    const index_t at = k * es + s * ss;
    row_values<T>(s, k, n, a[at], b[at], c[at], d[at]);
  }
}

// Largest |A u - d| of each system (u in the same layout as the values regenerated here).
template <class T>
__global__ void residual_tri(const int* sizes, index_t count, index_t es, index_t ss, const T* u, double* res) {
  const index_t s = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  if (s >= count) return;
  const int n = sizes[s];
  double r = 0;
  for (int k = 0; k < n; ++k) {
    T a, b, c, d;
    row_values<T>(s, k, n, a, b, c, d);
    double x = double(b) * double(u[k * es + s * ss]) - double(d);
    if (k > 0) x += double(a) * double(u[(k - 1) * es + s * ss]);
    if (k + 1 < n) x += double(c) * double(u[(k + 1) * es + s * ss]);
    r = fmax(r, fabs(x));
  }
  res[s] = r;
}

template <class T>
double max_residual(const int* dsizes, index_t count, index_t es, index_t ss, const T* u) {
  double* dres = dalloc<double>(count);
  residual_tri<T><<<(count + 255) / 256, 256>>>(dsizes, count, es, ss, u, dres);
  std::vector<double> h(count);
  CK(cudaMemcpy(h.data(), dres, count * sizeof(double), cudaMemcpyDeviceToHost));
  CK(cudaFree(dres));
  return count ? *std::max_element(h.begin(), h.end()) : 0.0;
}

cusparseStatus_t gtsvi_buffer(cusparseHandle_t h, int m, const float* dl, const float* d, const float* du,
                              const float* x, int batch, size_t* bytes) {
  return cusparseSgtsvInterleavedBatch_bufferSizeExt(h, 0, m, dl, d, du, x, batch, bytes);
}
cusparseStatus_t gtsvi_buffer(cusparseHandle_t h, int m, const double* dl, const double* d, const double* du,
                              const double* x, int batch, size_t* bytes) {
  return cusparseDgtsvInterleavedBatch_bufferSizeExt(h, 0, m, dl, d, du, x, batch, bytes);
}
cusparseStatus_t gtsvi(cusparseHandle_t h, int m, float* dl, float* d, float* du, float* x, int batch, void* buf) {
  return cusparseSgtsvInterleavedBatch(h, 0, m, dl, d, du, x, batch, buf);
}
cusparseStatus_t gtsvi(cusparseHandle_t h, int m, double* dl, double* d, double* du, double* x, int batch, void* buf) {
  return cusparseDgtsvInterleavedBatch(h, 0, m, dl, d, du, x, batch, buf);
}
cusparseStatus_t gtsv2_buffer(cusparseHandle_t h, int m, const float* dl, const float* d, const float* du,
                              const float* x, int count, int stride, size_t* bytes) {
  return cusparseSgtsv2StridedBatch_bufferSizeExt(h, m, dl, d, du, x, count, stride, bytes);
}
cusparseStatus_t gtsv2_buffer(cusparseHandle_t h, int m, const double* dl, const double* d, const double* du,
                              const double* x, int count, int stride, size_t* bytes) {
  return cusparseDgtsv2StridedBatch_bufferSizeExt(h, m, dl, d, du, x, count, stride, bytes);
}
cusparseStatus_t gtsv2(cusparseHandle_t h, int m, const float* dl, const float* d, const float* du, float* x,
                       int count, int stride, void* buf) {
  return cusparseSgtsv2StridedBatch(h, m, dl, d, du, x, count, stride, buf);
}
cusparseStatus_t gtsv2(cusparseHandle_t h, int m, const double* dl, const double* d, const double* du, double* x,
                       int count, int stride, void* buf) {
  return cusparseDgtsv2StridedBatch(h, m, dl, d, du, x, count, stride, buf);
}

struct TriRow {
  std::string prec, dist, method;
  double ms, gbs, resid;
};
std::vector<TriRow> g_tri;

template <class T>
void bench_tri(cusparseHandle_t sp, const char* dist, const std::vector<int>& sizes) {
  const char* prec = sizeof(T) == 4 ? "fp32" : "fp64";
  const index_t count = static_cast<index_t>(sizes.size());
  const adi::Executor gpu = adi::Executor::cuda();
  adi::VariableBatchPlan batch(gpu, adi::BatchSizes{sizes.data(), count});
  const int rows = batch.max_size();
  const double useful = 5.0 * double(batch.total_size()) * sizeof(T);
  std::printf("tridiagonal %s %s: %lld systems, %lld unknowns, max %d, plan build %.2f ms\n", prec, dist,
              (long long)count, (long long)batch.total_size(), rows, 1e3 * batch.build_seconds());
  auto add = [&](const std::string& m, double ms, double resid) {
    const double gbs = useful / (ms * 1e-3) / 1e9;
    g_tri.push_back({prec, dist, m, ms, gbs, resid});
    std::printf("  %-34s %9.3f ms %8.0f GB/s %6.1f%% copy  resid %.1e\n", m.c_str(), ms, gbs, 100 * gbs / g_copy,
                resid);
    std::fflush(stdout);
  };
  const int* dsizes = batch.view().sizes;
  // Padded interleaved (k*count + s), identity padding: CP, NCP, fixed-size, cuSPARSE.
  const std::size_t pspan = static_cast<std::size_t>(rows) * count;
  T *a = dalloc<T>(pspan), *b = dalloc<T>(pspan), *c = dalloc<T>(pspan), *d = dalloc<T>(pspan),
    *u = dalloc<T>(pspan);
  const unsigned blocks = static_cast<unsigned>((count + 255) / 256);
  fill_tri<T><<<blocks, 256>>>(dsizes, count, rows, count, 1, a, b, c, d);
  CK(cudaDeviceSynchronize());
  adi::VariableTridiagonalOptions o;
  o.check_pivots = false;
  for (auto m : {adi::VariableKernel::padded, adi::VariableKernel::stop_at_size, adi::VariableKernel::truncated}) {
    o.kernel = m;
    adi::VariableTridiagonalPlan<T> plan(batch, adi::PaddedInterleaved{}, o);
    CK(cudaMemset(u, 0, pspan * sizeof(T)));
    const double ms = median_ms([&] { plan.solve(adi::Bands<T>{a, b, c}, d, u); });
    add(std::string("ours ") + adi::variable_kernel_name(m) + (m == adi::VariableKernel::truncated ? " (padded)" : ""),
        ms, max_residual<T>(dsizes, count, count, 1, u));
  }
  {
    adi::TridiagonalOptions fo;
    fo.check_pivots = false;
    adi::TridiagonalPlan<T> fixed(gpu, adi::InterleavedBatch{rows, count}, fo);
    const double ms = median_ms([&] { fixed.solve(adi::Bands<T>{a, b, c}, d, u); });
    add(std::string("fixed-size ") + adi::kernel_name(fixed.kernel()) + " (padded)", ms,
        max_residual<T>(dsizes, count, count, 1, u));
  }
  {
    // cuSPARSE overwrites d (the solution) and may overwrite the bands: restore all four.
    T *a2 = dalloc<T>(pspan), *b2 = dalloc<T>(pspan), *c2 = dalloc<T>(pspan);
    std::size_t bytes = 0;
    CKS(gtsvi_buffer(sp, rows, a, b, c, u, static_cast<int>(count), &bytes));
    void* buf = dalloc<char>(bytes);
    auto prep = [&] {
      CK(cudaMemcpy(a2, a, pspan * sizeof(T), cudaMemcpyDeviceToDevice));
      CK(cudaMemcpy(b2, b, pspan * sizeof(T), cudaMemcpyDeviceToDevice));
      CK(cudaMemcpy(c2, c, pspan * sizeof(T), cudaMemcpyDeviceToDevice));
      CK(cudaMemcpy(u, d, pspan * sizeof(T), cudaMemcpyDeviceToDevice));
    };
    const double ms = median_ms([&] { CKS(gtsvi(sp, rows, a2, b2, c2, u, static_cast<int>(count), buf)); }, prep, 1,
                                std::min(g_reps, 5));
    add("cuSPARSE gtsvInterleavedBatch (padded)", ms, max_residual<T>(dsizes, count, count, 1, u));
    CK(cudaFree(buf));
    CK(cudaFree(a2));
    CK(cudaFree(b2));
    CK(cudaFree(c2));
  }
  {
    // Sorted layout packed from the padded arrays (once, outside the timing), and compact.
    const index_t sspan = batch.span(adi::SortedInterleaved{});
    T *sa = dalloc<T>(sspan), *sb = dalloc<T>(sspan), *sc = dalloc<T>(sspan), *sd = dalloc<T>(sspan),
      *su = dalloc<T>(sspan);
    const adi::PaddedInterleaved pl{};
    batch.pack(a, pl, sa);
    batch.pack(b, pl, sb);
    batch.pack(c, pl, sc);
    batch.pack(d, pl, sd);
    o.kernel = adi::VariableKernel::sorted;
    adi::VariableTridiagonalPlan<T> sorted(batch, adi::SortedInterleaved{}, o);
    const double ms = median_ms([&] { sorted.solve(adi::Bands<T>{sa, sb, sc}, sd, su); });
    CK(cudaMemset(u, 0, pspan * sizeof(T)));
    batch.unpack(su, u, pl);
    add("ours sorted", ms, max_residual<T>(dsizes, count, count, 1, u));
    {  // stop 45: the truncated sweeps on the sorted layout, and what automatic takes there
      for (auto m : {adi::VariableKernel::truncated, adi::VariableKernel::automatic}) {
        o.kernel = m;
        adi::VariableTridiagonalPlan<T> tp(batch, adi::SortedInterleaved{}, o);
        CK(cudaMemset(su, 0, sspan * sizeof(T)));
        const double tms = median_ms([&] { tp.solve(adi::Bands<T>{sa, sb, sc}, sd, su); });
        CK(cudaMemset(u, 0, pspan * sizeof(T)));
        batch.unpack(su, u, pl);
        add(std::string("ours ") + (m == adi::VariableKernel::automatic ? "automatic -> " : "") +
                adi::variable_kernel_name(tp.kernel()) + " (sorted)",
            tms, max_residual<T>(dsizes, count, count, 1, u));
      }
    }
    const index_t tot = batch.total_size();
    T *ca = dalloc<T>(tot), *cb = dalloc<T>(tot), *cc = dalloc<T>(tot), *cd = dalloc<T>(tot), *cu = dalloc<T>(tot);
    batch.unpack(sa, ca, adi::CompactBatch{});
    batch.unpack(sb, cb, adi::CompactBatch{});
    batch.unpack(sc, cc, adi::CompactBatch{});
    batch.unpack(sd, cd, adi::CompactBatch{});
    o.kernel = adi::VariableKernel::stop_at_size;
    adi::VariableTridiagonalPlan<T> compact(batch, adi::CompactBatch{}, o);
    const double cms = median_ms([&] { compact.solve(adi::Bands<T>{ca, cb, cc}, cd, cu); }, {}, 1, 3);
    batch.pack(cu, adi::CompactBatch{}, su);
    CK(cudaMemset(u, 0, pspan * sizeof(T)));
    batch.unpack(su, u, pl);
    add("ours compact (thread/system)", cms, max_residual<T>(dsizes, count, count, 1, u));
    {  // stop 45: the compact layout by truncated sweeps (the warp's loads and stores)
      o.kernel = adi::VariableKernel::truncated;
      adi::VariableTridiagonalPlan<T> tc(batch, adi::CompactBatch{}, o);
      CK(cudaMemset(cu, 0, tot * sizeof(T)));
      const double tms = median_ms([&] { tc.solve(adi::Bands<T>{ca, cb, cc}, cd, cu); });
      batch.pack(cu, adi::CompactBatch{}, su);
      CK(cudaMemset(u, 0, pspan * sizeof(T)));
      batch.unpack(su, u, pl);
      add("ours truncated (compact)", tms, max_residual<T>(dsizes, count, count, 1, u));
    }
    for (T* p : {sa, sb, sc, sd, su, ca, cb, cc, cd, cu}) CK(cudaFree(p));
  }
  for (T* p : {a, b, c, d, u}) CK(cudaFree(p));
  {
    // gtsv2StridedBatch: systems back to back, each padded to `rows`.
    T *a1 = dalloc<T>(pspan), *b1 = dalloc<T>(pspan), *c1 = dalloc<T>(pspan), *d1 = dalloc<T>(pspan),
      *x = dalloc<T>(pspan);
    fill_tri<T><<<blocks, 256>>>(dsizes, count, rows, 1, rows, a1, b1, c1, d1);
    std::size_t bytes = 0;
    CKS(gtsv2_buffer(sp, rows, a1, b1, c1, x, static_cast<int>(count), rows, &bytes));
    void* buf = dalloc<char>(bytes);
    auto prep = [&] { CK(cudaMemcpy(x, d1, pspan * sizeof(T), cudaMemcpyDeviceToDevice)); };
    const double ms = median_ms([&] { CKS(gtsv2(sp, rows, a1, b1, c1, x, static_cast<int>(count), rows, buf)); },
                                prep, 1, std::min(g_reps, 5));
    add("cuSPARSE gtsv2StridedBatch (padded)", ms, max_residual<T>(dsizes, count, 1, rows, x));
    CK(cudaFree(buf));
    for (T* p : {a1, b1, c1, d1, x}) CK(cudaFree(p));
  }
}

// ---------------------------------------------------------------- Cholesky

// A(i, j) of matrix s of size n (symmetric, diagonally dominant); identity past n when
// padded to m.
template <class T>
__global__ void fill_spd(const int* sizes, const index_t* offsets, index_t count, int m, T* A) {
  const index_t s = blockIdx.y + static_cast<index_t>(blockIdx.z) * 65535;
  if (s >= count) return;
  const int n = sizes[s];
  const int dim = m > 0 ? m : n;
  const index_t base = m > 0 ? s * static_cast<index_t>(m) * m : offsets[s];
  for (index_t e = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; e < static_cast<index_t>(dim) * dim;
       e += static_cast<index_t>(gridDim.x) * blockDim.x) {
    const int i = static_cast<int>(e % dim), j = static_cast<int>(e / dim);
    T v;
    if (i >= n || j >= n) {
      v = i == j ? T(1) : T(0);
    } else if (i == j) {
      v = T(2 + hash01(s * 1031 + i, 7));
    } else {
      const int lo = i < j ? i : j, hi = i < j ? j : i;
      v = T((hash01((s * 1031 + lo) * 1031 + hi, 8) * 2 - 1) / n);
    }
    A[base + e] = v;
  }
}

template <class T>
void launch_fill_spd(const int* sizes, const index_t* offsets, index_t count, int m, T* A) {
  const unsigned gy = static_cast<unsigned>(std::min<index_t>(count, 65535));
  const unsigned gz = static_cast<unsigned>((count + 65534) / 65535);
  fill_spd<T><<<dim3(64, gy, gz), 256>>>(sizes, offsets, count, m, A);
  CK(cudaGetLastError());
}

cusolverStatus_t potrf_batched(cusolverDnHandle_t h, int n, float** A, int lda, int* info, int batch) {
  return cusolverDnSpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, A, lda, info, batch);
}
cusolverStatus_t potrf_batched(cusolverDnHandle_t h, int n, double** A, int lda, int* info, int batch) {
  return cusolverDnDpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, A, lda, info, batch);
}
cusolverStatus_t potrf_lwork(cusolverDnHandle_t h, int n, float* A, int lda, int* lwork) {
  return cusolverDnSpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, A, lda, lwork);
}
cusolverStatus_t potrf_lwork(cusolverDnHandle_t h, int n, double* A, int lda, int* lwork) {
  return cusolverDnDpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, A, lda, lwork);
}
cusolverStatus_t potrf(cusolverDnHandle_t h, int n, float* A, int lda, float* w, int lwork, int* info) {
  return cusolverDnSpotrf(h, CUBLAS_FILL_MODE_LOWER, n, A, lda, w, lwork, info);
}
cusolverStatus_t potrf(cusolverDnHandle_t h, int n, double* A, int lda, double* w, int lwork, int* info) {
  return cusolverDnDpotrf(h, CUBLAS_FILL_MODE_LOWER, n, A, lda, w, lwork, info);
}

// Largest |L L^T - A| over the lower triangle of a few matrices (host check).
template <class T>
double chol_check(const std::vector<int>& sizes, const std::vector<index_t>& off, const T* dL, const T* dA,
                  const std::vector<index_t>& which) {
  double worst = 0;
  for (index_t s : which) {
    const int n = sizes[s];
    std::vector<T> L(static_cast<std::size_t>(n) * n), A(L.size());
    CK(cudaMemcpy(L.data(), dL + off[s], L.size() * sizeof(T), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(A.data(), dA + off[s], A.size() * sizeof(T), cudaMemcpyDeviceToHost));
    for (int j = 0; j < n; ++j)
      for (int i = j; i < n; ++i) {
        double x = 0;
        for (int k = 0; k <= j; ++k) x += double(L[i + k * n]) * double(L[j + k * n]);
        worst = std::max(worst, std::abs(x - double(A[i + j * n])));
      }
  }
  return worst;
}

struct CholRow {
  std::string prec, dist;
  int count, nmax;
  double ours, padded, loop;  // GFLOP/s
};
std::vector<CholRow> g_chol;

std::vector<int> chol_sizes(bool gaussian, int nmax, int count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> u(1, nmax);
  std::normal_distribution<double> g(nmax / 2.0, nmax / 6.0);
  std::vector<int> n(count);
  for (int& x : n) x = gaussian ? std::clamp(static_cast<int>(std::lround(g(rng))), 1, nmax) : u(rng);
  return n;
}

template <class T>
double ours_gflops(const adi::VariableBatchPlan& batch, T* dA, T* dA0, std::size_t total, T* const* ptrs,
                   const int* ld, int* info, const adi::CholeskyOptions& o, double flops) {
  adi::BatchedCholeskyPlan<T> plan(batch, adi::PointerBatch{ld}, o);
  auto prep = [&] { CK(cudaMemcpy(dA, dA0, total * sizeof(T), cudaMemcpyDeviceToDevice)); };
  const double ms = median_ms([&] { plan.factor(ptrs, info); }, prep, 1, std::min(g_reps, 3));
  return flops / (ms * 1e-3) / 1e9;
}

template <class T>
void bench_chol(cusolverDnHandle_t sol, bool gaussian, int nmax, int count) {
  const char* prec = sizeof(T) == 4 ? "fp32" : "fp64";
  const char* dist = gaussian ? "gaussian" : "uniform";
  const auto sizes = chol_sizes(gaussian, nmax, count, 100u + nmax + count);
  const adi::Executor gpu = adi::Executor::cuda();
  adi::VariableBatchPlan batch(gpu, adi::BatchSizes{sizes.data(), count});
  const double flops = adi::cholesky_flops(batch);
  std::vector<index_t> off(count + 1, 0);
  for (int s = 0; s < count; ++s) off[s + 1] = off[s] + static_cast<index_t>(sizes[s]) * sizes[s];
  const std::size_t total = off[count];
  index_t* doff = dalloc<index_t>(count);
  CK(cudaMemcpy(doff, off.data(), count * sizeof(index_t), cudaMemcpyHostToDevice));
  T *dA = dalloc<T>(total), *dA0 = dalloc<T>(total);
  launch_fill_spd<T>(batch.view().sizes, doff, count, 0, dA0);
  std::vector<T*> ptr(count);
  std::vector<int> ld(count);
  for (int s = 0; s < count; ++s) {
    ptr[s] = dA + off[s];
    ld[s] = std::max(1, sizes[s]);
  }
  T** dptr = dalloc<T*>(count);
  int *dld = dalloc<int>(count), *dinfo = dalloc<int>(count);
  CK(cudaMemcpy(dptr, ptr.data(), count * sizeof(T*), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dld, ld.data(), count * sizeof(int), cudaMemcpyHostToDevice));
  adi::CholeskyOptions o;
  o.check_pointers = false;
  const double ours = ours_gflops<T>(batch, dA, dA0, total, dptr, dld, dinfo, o, flops);
  std::vector<int> info(count);
  CK(cudaMemcpy(info.data(), dinfo, count * sizeof(int), cudaMemcpyDeviceToHost));
  const int bad = static_cast<int>(std::count_if(info.begin(), info.end(), [](int x) { return x != 0; }));
  const index_t largest = batch.host_view().order[0];
  const double err = chol_check<T>(sizes, off, dA, dA0, {largest, batch.host_view().order[count / 2], count - 1});

  // cuSOLVER potrfBatched on the batch padded to nmax (identity padding).
  const std::size_t ptotal = static_cast<std::size_t>(count) * nmax * nmax;
  T *pA = dalloc<T>(ptotal), *pA0 = dalloc<T>(ptotal);
  launch_fill_spd<T>(batch.view().sizes, nullptr, count, nmax, pA0);
  std::vector<T*> pp(count);
  for (int s = 0; s < count; ++s) pp[s] = pA + static_cast<std::size_t>(s) * nmax * nmax;
  T** dpp = dalloc<T*>(count);
  CK(cudaMemcpy(dpp, pp.data(), count * sizeof(T*), cudaMemcpyHostToDevice));
  auto prep_p = [&] { CK(cudaMemcpy(pA, pA0, ptotal * sizeof(T), cudaMemcpyDeviceToDevice)); };
  const double pms =
      median_ms([&] { CKD(potrf_batched(sol, nmax, dpp, nmax, dinfo, count)); }, prep_p, 1, std::min(g_reps, 3));
  const double padded = flops / (pms * 1e-3) / 1e9;
  // A loop of single-matrix potrf on each matrix's own size (one timed run).
  int lwork = 0;
  CKD(potrf_lwork(sol, nmax, pA, nmax, &lwork));
  T* work = dalloc<T>(static_cast<std::size_t>(lwork) + 1);
  auto prep_l = [&] { CK(cudaMemcpy(dA, dA0, total * sizeof(T), cudaMemcpyDeviceToDevice)); };
  const double lms = median_ms(
      [&] {
        for (int s = 0; s < count; ++s)
          if (sizes[s] > 0) CKD(potrf(sol, sizes[s], ptr[s], ld[s], work, lwork, dinfo + s));
      },
      prep_l, 0, 1);
  const double loop = flops / (lms * 1e-3) / 1e9;
  g_chol.push_back({prec, dist, count, nmax, ours, padded, loop});
  std::printf("cholesky %s %-8s count %4d nmax %3d: ours %8.1f GFLOP/s (build %.2f ms, %d failed, |LL'-A| %.1e), "
              "potrfBatched padded %8.1f, loop of potrf %7.1f -> x%.2f, x%.1f\n",
              prec, dist, count, nmax, ours, 1e3 * batch.build_seconds(), bad, err, padded, loop, ours / padded,
              ours / loop);
  std::fflush(stdout);
  for (void* p : {(void*)doff, (void*)dA, (void*)dA0, (void*)dptr, (void*)dld, (void*)dinfo, (void*)pA, (void*)pA0,
                  (void*)dpp, (void*)work})
    CK(cudaFree(p));
}

// Fixed-size batches through every kernel: the measurement behind the crossover.
template <class T>
void sweep_chol(int count) {
  const char* prec = sizeof(T) == 4 ? "fp32" : "fp64";
  std::printf("\nCholesky kernel sweep, %s, %d matrices of one size (GFLOP/s, useful):\n", prec, count);
  std::printf("%5s %10s %10s %10s %10s %10s\n", "n", "fused", "blk16x64", "blk32x128", "blk32x256", "blk16x256");
  for (int n : {8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512}) {
    std::vector<int> sizes(count, n);
    adi::VariableBatchPlan batch(adi::Executor::cuda(), adi::BatchSizes{sizes.data(), count});
    const double flops = adi::cholesky_flops(batch);
    const std::size_t total = static_cast<std::size_t>(count) * n * n;
    std::vector<index_t> off(count);
    for (int s = 0; s < count; ++s) off[s] = static_cast<index_t>(s) * n * n;
    index_t* doff = dalloc<index_t>(count);
    CK(cudaMemcpy(doff, off.data(), count * sizeof(index_t), cudaMemcpyHostToDevice));
    T *dA = dalloc<T>(total), *dA0 = dalloc<T>(total);
    launch_fill_spd<T>(batch.view().sizes, doff, count, 0, dA0);
    std::vector<T*> ptr(count);
    for (int s = 0; s < count; ++s) ptr[s] = dA + off[s];
    std::vector<int> ld(count, n);
    T** dptr = dalloc<T*>(count);
    int *dld = dalloc<int>(count), *dinfo = dalloc<int>(count);
    CK(cudaMemcpy(dptr, ptr.data(), count * sizeof(T*), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dld, ld.data(), count * sizeof(int), cudaMemcpyHostToDevice));
    std::printf("%5d", n);
    adi::CholeskyOptions o;
    o.check_pointers = false;
    if (n <= 32) {
      o.kernel = adi::CholeskyKernel::cuda_fused;
      std::printf(" %10.1f", ours_gflops<T>(batch, dA, dA0, total, dptr, dld, dinfo, o, flops));
    } else {
      std::printf(" %10s", "-");
    }
    o.kernel = adi::CholeskyKernel::cuda_blocked;
    for (int v = 0; v < 4; ++v) {
      o.blocked_shape = v;
      std::printf(" %10.1f", ours_gflops<T>(batch, dA, dA0, total, dptr, dld, dinfo, o, flops));
    }
    std::printf("\n");
    std::fflush(stdout);
    for (void* p : {(void*)doff, (void*)dA, (void*)dA0, (void*)dptr, (void*)dld, (void*)dinfo}) CK(cudaFree(p));
  }
}

std::string flag(int argc, char** argv, const char* name, const char* def) {
  const std::string key = std::string("--") + name + "=";
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]).rfind(key, 0) == 0) return argv[i] + key.size();
  return def;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--help")) {
      std::printf("bench_cuda_variable_batch [--part=all|tri|chol|sweep] [--reps=7] [--systems=256000]\n");
      return 0;
    }
  const std::string part = flag(argc, argv, "part", "all");
  g_reps = std::max(1, std::atoi(flag(argc, argv, "reps", "7").c_str()));
  const int systems = std::atoi(flag(argc, argv, "systems", "256000").c_str());
  if (!adi::Executor::cuda_available()) {
    std::fprintf(stderr, "bench_cuda_variable_batch: no CUDA device\n");
    return 1;
  }
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  g_copy = adi::bench::measure_copy(5).memcpy_gbs;
  std::printf("device %s, copy bandwidth (cudaMemcpy DtoD, read+write, 1 GiB) %.0f GB/s, median of %d runs\n\n",
              prop.name, g_copy, g_reps);
  if (part == "all" || part == "tri") {
    cusparseHandle_t sp;
    CKS(cusparseCreate(&sp));
    std::mt19937 rng(7);
    struct Dist {
      const char* name;
      int lo, hi;
    };
    for (const Dist& dd : {Dist{"U[256,512]", 256, 512}, Dist{"U[1,512]", 1, 512}, Dist{"fixed 384", 384, 384},
                           Dist{"fixed 512", 512, 512}}) {
      std::uniform_int_distribution<int> u(dd.lo, dd.hi);
      std::vector<int> sizes(systems);
      for (int& x : sizes) x = u(rng);
      bench_tri<float>(sp, dd.name, sizes);
      bench_tri<double>(sp, dd.name, sizes);
    }
    cusparseDestroy(sp);
  }
  if (part == "all" || part == "sweep") {
    sweep_chol<float>(1000);
    sweep_chol<double>(1000);
  }
  if (part == "all" || part == "chol") {
    cusolverDnHandle_t sol;
    CKD(cusolverDnCreate(&sol));
    for (int count : {800, 3000})
      for (bool gaussian : {false, true})
        for (int nmax : {32, 64, 128, 256, 512}) {
          bench_chol<float>(sol, gaussian, nmax, count);
          bench_chol<double>(sol, gaussian, nmax, count);
        }
    cusolverDnDestroy(sol);
  }

  // Summary tables.
  if (!g_tri.empty()) {
    std::printf("\nTridiagonal summary (useful GB/s = 5 arrays of the real sizes; copy %.0f GB/s)\n", g_copy);
    std::printf("%-5s %-11s %-40s %9s %8s %7s %9s %9s\n", "prec", "sizes", "method", "ms", "GB/s", "%copy", "x_cuSP_i",
                "x_cuSP_s");
    for (const TriRow& r : g_tri) {
      double ci = 0, cs = 0;
      for (const TriRow& q : g_tri)
        if (q.prec == r.prec && q.dist == r.dist) {
          if (q.method.find("Interleaved") != std::string::npos) ci = q.ms;
          if (q.method.find("gtsv2") != std::string::npos) cs = q.ms;
        }
      std::printf("%-5s %-11s %-40s %9.3f %8.0f %6.1f%% %9.2f %9.2f\n", r.prec.c_str(), r.dist.c_str(),
                  r.method.c_str(), r.ms, r.gbs, 100 * r.gbs / g_copy, ci / r.ms, cs / r.ms);
    }
  }
  if (!g_chol.empty()) {
    std::printf("\nCholesky summary (useful GFLOP/s, sum n^3/3)\n");
    std::printf("%-5s %-9s %5s %5s %10s %12s %10s %9s %9s\n", "prec", "sizes", "count", "nmax", "ours", "potrfBatched",
                "loop", "x_padded", "x_loop");
    for (const CholRow& r : g_chol)
      std::printf("%-5s %-9s %5d %5d %10.1f %12.1f %10.1f %9.2f %9.1f%s\n", r.prec.c_str(), r.dist.c_str(), r.count,
                  r.nmax, r.ours, r.padded, r.loop, r.ours / r.padded, r.ours / r.loop,
                  r.nmax == 32 ? "  (fixed-size call at 32)" : "");
  }
  return 0;
}
