// Standalone device check of solvers/cuda/partition_local_passes.cu (no MPI, no adi library):
// P emulated ranks of one line set split along z, S sub-segments, reduced systems solved
// on the host, against Thomas per line. stage = 1 (shared bands, lines along z and x): the
// right-hand side formed by reduce_stage from base, v and A's coefficients (a Dirichlet
// value at the first row, a Neumann term at the last, a source; u = v along z for odd S)
// against the same formula on the host. pf = 1: rows loaded a chunk ahead (Workspace::prefetch),
// also with N = 7 and 257; pf = 2: and requested into L2 ahead, along x the stage's v read once
// per row (Workspace::l2_prefetch, stop 32; lines of odd length N start at every alignment). nvcc -std=c++17 -arch=sm_90 -DADI_HAVE_CUDA -I. this.cu solvers/cuda/partition_local_passes.cu
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "solvers/cuda/partition_local_passes.hpp"

using adi::index_t;
namespace part = adi::cuda_backend::partition;

std::vector<void*> g_allocated;  // freed after each case

template <class T>
T* dev(const std::vector<T>& h) {
  T* p = nullptr;
  cudaMalloc(&p, std::max<std::size_t>(1, h.size()) * sizeof(T));
  g_allocated.push_back(p);
  if (!h.empty()) cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice);
  return p;
}

int main() {
  int fails = 0, cases = 0;
  // rows = 1: lines with adjacent rows (stride 1, like lines along x: the shared-band kernels
  // stage rows through shared memory); rows = 0: neighbouring lines adjacent (along z).
  // pf: rows loaded a chunk ahead of their stores (Workspace::prefetch; along x: the row tiles
  // filled and stored a batch of lines at a time), with odd line lengths too (pieces and
  // sub-segments shorter than a chunk or a tile, not multiples).
  for (int pf : {0, 1, 2}) for (int stage : {0, 1}) for (int rows : {0, 1}) for (int P : {1, 2, 3}) for (int S : {1, 2, 3, 17}) for (int shared : {0, 1}) for (index_t N : {7, 40, 257, 700}) {
    if (stage && !shared) continue;
    if ((N == 7 || N == 257) && !pf) continue;
    const index_t nx = 37, ny = 5, L = nx * ny;
    std::mt19937 rng(unsigned(P * 100 + S + N));
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> A(N * L), B(N * L), C(N * L), D(N * L), ref(N * L), sa(N), sb(N), sc(N);
    for (index_t i = 0; i < N; ++i) sa[i] = u(rng), sc[i] = u(rng), sb[i] = 3 + u(rng);
    for (index_t i = 0; i < N * L; ++i) A[i] = u(rng), C[i] = u(rng), B[i] = 3 + u(rng), D[i] = u(rng);
    if (shared)
      for (index_t i = 0; i < N; ++i)
        for (index_t l = 0; l < L; ++l) A[i * L + l] = sa[i], B[i * L + l] = sb[i], C[i * L + l] = sc[i];
    // stage: d from base, v, src, A's coefficients oa, od, oc, the ends' face data
    const double inv_s = 1.7;
    std::vector<double> base(N * L), V(N * L), src(N * L), oa(N), od(N), oc(N), end0(L), nadd1(L);
    for (index_t i = 0; i < N * L; ++i) base[i] = u(rng), V[i] = u(rng), src[i] = u(rng);
    for (index_t i = 0; i < N; ++i) oa[i] = u(rng), od[i] = u(rng), oc[i] = u(rng);
    for (index_t l = 0; l < L; ++l) end0[l] = u(rng), nadd1[l] = u(rng);
    if (stage)
      for (index_t i = 0; i < N; ++i)
        for (index_t l = 0; l < L; ++l) {
          const index_t k = i * L + l;
          const double vm = i > 0 ? V[k - L] : 0.0, vp = i < N - 1 ? V[k + L] : 0.0;
          D[k] = i == 0 ? end0[l] * inv_s
                        : inv_s * base[k] + 0.5 * src[k] - (od[i] * V[k] - oa[i] * vm - oc[i] * vp) +
                              (i == N - 1 ? nadd1[l] : 0.0);
        }
    const bool alias = stage && !rows && S % 2 == 1;  // u = v (z lines: v carried in registers)
    for (index_t l = 0; l < L; ++l) {
      std::vector<double> cp(N), dp(N);
      cp[0] = C[l] / B[l], dp[0] = D[l] / B[l];
      for (index_t i = 1; i < N; ++i) {
        const double den = B[i * L + l] - A[i * L + l] * cp[i - 1];
        cp[i] = C[i * L + l] / den, dp[i] = (D[i * L + l] - A[i * L + l] * dp[i - 1]) / den;
      }
      ref[(N - 1) * L + l] = dp[N - 1];
      for (index_t i = N - 2; i >= 0; --i) ref[i * L + l] = dp[i] - cp[i] * ref[(i + 1) * L + l];
    }
    auto lay = [&](const std::vector<double>& v) {  // the device layout: row i of line l at l*N + i when rows
      if (!rows) return v;
      std::vector<double> t(v.size());
      for (index_t i = 0; i < N; ++i)
        for (index_t l = 0; l < L; ++l) t[l * N + i] = v[i * L + l];
      return t;
    };
    double *dA = dev(lay(A)), *dB = dev(lay(B)), *dC = dev(lay(C)), *dD = dev(lay(D)), *dsa = dev(sa), *dsb = dev(sb),
           *dsc = dev(sc);
    double* dU = dev(alias ? V : std::vector<double>(N * L, NAN));
    double *dBase = dev(lay(base)), *dV = alias ? dU : dev(lay(V)), *dSrc = dev(lay(src)), *dOa = dev(oa), *dOd = dev(od),
           *dOc = dev(oc), *dEnd0 = dev(end0), *dNadd1 = dev(nadd1);
    std::vector<index_t> lo(P + 1);
    for (int r = 0; r <= P; ++r) lo[r] = N * r / P;
    std::vector<part::Workspace<double>> w(P);
    std::vector<double*> dred(P), dsol(P);
    std::vector<std::vector<double>> red(P, std::vector<double>(L * 8)), sol(P, std::vector<double>(L * 2));
    for (int r = 0; r < P; ++r) {
      const index_t m = lo[r + 1] - lo[r];
      const int Se = int(std::max<index_t>(1, std::min<index_t>(S, m / 2)));
      w[r].S = Se;
      w[r].prefetch = pf != 0;
      w[r].l2_prefetch = pf == 2;
      w[r].l2_everywhere = pf == 2;  // the X / per-line L2 forms too (off by default)
      w[r].alpha = dev(std::vector<double>(m * L));
      w[r].gamma = dev(std::vector<double>(m * L));
      w[r].red1 = dev(std::vector<double>(8 * Se * L));
      w[r].w2 = dev(std::vector<double>(6 * Se * L));
      w[r].sol1 = dev(std::vector<double>(2 * Se * L));
      dred[r] = dev(red[r]);
      dsol[r] = dev(sol[r]);
      const adi::LineSet ls = rows ? adi::LineSet{m, 1, nx, N, ny, nx * N} : adi::LineSet{m, L, nx, 1, ny, nx};
      const index_t o = rows ? lo[r] : lo[r] * L;
      if (stage) {
        part::StageRhs<double> g;
        g.base = dBase + o;
        g.v = dV + o;
        g.inv_s = inv_s;
        g.a = dOa + lo[r];
        g.d = dOd + lo[r];
        g.c = dOc + lo[r];
        g.end[0] = r == 0 ? dEnd0 : nullptr;  // only the ranks holding the face
        g.nadd[1] = r == P - 1 ? dNadd1 : nullptr;
        g.face_n1 = nx;
        g.src[0] = dSrc + o;
        g.src_scale[0] = 0.5;
        part::reduce_stage<double>(ls, dsa + lo[r], dsb + lo[r], dsc + lo[r], g, dU + o, w[r], dred[r], r == 0,
                                   r == P - 1, nullptr);
      } else {
        part::reduce<double>(ls, shared ? dsa + lo[r] : dA + o, shared ? dsb + lo[r] : dB + o,
                             shared ? dsc + lo[r] : dC + o, shared, dD + o, dU + o, w[r], dred[r], r == 0,
                             r == P - 1, nullptr);
      }
      cudaMemcpy(red[r].data(), dred[r], L * 8 * sizeof(double), cudaMemcpyDeviceToHost);
    }
    for (index_t l = 0; l < L; ++l) {
      const int n = 2 * P;
      std::vector<double> ra(n), rb(n), rc(n), rd(n), x(n), cp(n), dp(n);
      for (int k = 0; k < n; ++k) {
        const double* q = &red[k / 2][l * 8 + (k % 2) * 4];
        ra[k] = q[0], rb[k] = q[1], rc[k] = q[2], rd[k] = q[3];
      }
      cp[0] = rc[0] / rb[0], dp[0] = rd[0] / rb[0];
      for (int k = 1; k < n; ++k) {
        const double den = rb[k] - ra[k] * cp[k - 1];
        cp[k] = rc[k] / den, dp[k] = (rd[k] - ra[k] * dp[k - 1]) / den;
      }
      x[n - 1] = dp[n - 1];
      for (int k = n - 2; k >= 0; --k) x[k] = dp[k] - cp[k] * x[k + 1];
      for (int r = 0; r < P; ++r) sol[r][2 * l] = x[2 * r], sol[r][2 * l + 1] = x[2 * r + 1];
    }
    for (int r = 0; r < P; ++r) {
      const index_t m = lo[r + 1] - lo[r];
      cudaMemcpy(dsol[r], sol[r].data(), L * 2 * sizeof(double), cudaMemcpyHostToDevice);
      const adi::LineSet ls = rows ? adi::LineSet{m, 1, nx, N, ny, nx * N} : adi::LineSet{m, L, nx, 1, ny, nx};
      part::back_substitute<double>(ls, w[r], shared != 0, dsol[r], dU + (rows ? lo[r] : lo[r] * L), nullptr,
                                    nullptr);
    }
    std::vector<double> U(N * L);
    cudaMemcpy(U.data(), dU, U.size() * sizeof(double), cudaMemcpyDeviceToHost);
    if (rows) {
      const std::vector<double> t = U;
      for (index_t i = 0; i < N; ++i)
        for (index_t l = 0; l < L; ++l) U[i * L + l] = t[l * N + i];
    }
    const cudaError_t e = cudaDeviceSynchronize();
    double err = 0;
    for (index_t i = 0; i < N * L; ++i) err = std::max(err, std::isfinite(U[i]) ? std::abs(U[i] - ref[i]) : 1e300);
    ++cases;
    if (err > 1e-12 || e != cudaSuccess) {
      ++fails;
      std::printf("FAIL stage %d rows %d P %d S %d shared %d N %lld prefetch %d err %.3e (%s)\n", stage, rows, P, S,
                  shared, (long long)N, pf, err, cudaGetErrorString(e));
    }
    for (void* p : g_allocated) cudaFree(p);
    g_allocated.clear();
  }
  std::printf("partition_device_selfcheck: %d of %d cases %s\n", cases - fails, cases, fails ? "passed, FAILED" : "passed");
  return fails != 0;
}
