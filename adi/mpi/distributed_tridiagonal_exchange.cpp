// DistributedTridiagonalPlan on the host: the reduced system between the ranks of an axis
// (allgather, alltoall or PCR strategy) and its solve.
#include "adi/mpi/detail/distributed_tridiagonal_impl.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace adi::mpi {

// Solves reduced systems of lines [first, first+count): row k of a line at
// rows + (k/2)*rank_stride + line*line_stride + (k%2)*4; writes either the whole
// solution (out + p*out_rank_stride + line*out_line_stride + {0,1}) or only this
// rank's pair (whole == false: out + line*2).
template <class T>
void DistributedTridiagonalPlan<T>::Impl::solve_lines(index_t first, index_t count, int n_rows, const T* rows,
                                                      index_t line_stride, index_t rank_stride, T* out,
                                                      index_t out_rank_stride, index_t out_line_stride,
                                                      bool whole) {
  const bool periodic = opt.periodic;
#pragma omp parallel if (count * n_rows > 65536)
  {
    T* s = scratch.data() + std::size_t(omp_get_thread_num()) * std::size_t(5 * n_rows);
    const T* x = s + n_rows;  // slot 1: the solution
#pragma omp for schedule(static)
    for (index_t l = 0; l < count; ++l) {
      const T* base = rows + l * line_stride;
      auto row = [&](int k) { return base + (k / 2) * rank_stride + (k % 2) * 4; };
      cuda_backend::partition::solve_reduced_rows<T>(n_rows, periodic, row,
                                                     [&](int j, int k) -> T& { return s[j * n_rows + k]; });
      if (whole) {
        for (int p = 0; p < n_rows / 2; ++p) {
          out[p * out_rank_stride + l * out_line_stride] = x[2 * p];
          out[p * out_rank_stride + l * out_line_stride + 1] = x[2 * p + 1];
        }
      } else {
        out[(first + l) * 2] = x[2 * r];
        out[(first + l) * 2 + 1] = x[2 * r + 1];
      }
    }
  }
}

template <class T>
bool DistributedTridiagonalPlan<T>::Impl::exchange_and_solve() {
  const MPI_Datatype type = mpi_type<T>();
  const index_t w = index_t(sizeof(T));
  switch (strategy) {
    case ReducedStrategy::allgather: {
      check_mpi(MPI_Allgather(red.data(), int(L * 8), type, gather.data(), int(L * 8), type, comm), "MPI_Allgather");
      bytes = double((P - 1) * L * 8 * w + L * 8 * w);
      solve_lines(0, L, 2 * P, gather.data(), 8, L * 8, sol.data(), 0, 0, false);
      break;
    }
    case ReducedStrategy::alltoall: {
      check_mpi(MPI_Alltoallv(red.data(), cnt8.data(), dsp8.data(), type, gather.data(), rcnt8.data(),
                              rdsp8.data(), type, comm),
                "MPI_Alltoallv");
      // gather holds, per source rank p, my chunk's lines: rows of rank p at p*chunk_n*8.
      solve_lines(chunk_lo, chunk_n, 2 * P, gather.data(), 8, chunk_n * 8, back.data(), chunk_n * 2, 2, true);
      check_mpi(MPI_Alltoallv(back.data(), rcnt2.data(), rdsp2.data(), type, sol.data(), cnt2.data(), dsp2.data(),
                              type, comm),
                "MPI_Alltoallv");
      bytes = double(2 * (P - 1) * (L / P + 1) * 10 * w);
      break;
    }
    case ReducedStrategy::pcr: {
      // Rows 2r and 2r+1 live here. Step s = 1 needs row 2r-1 (left) and 2r+2 (right);
      // step s = 2t needs both rows of ranks r-t and r+t.
      T* rows = red.data();
      T* nrows = back.data();
      T* left = gather.data();
      T* right = gather.data() + L * 8;
      bytes = 0;
      for (index_t s = 1;; s *= 2) {
        const index_t t = s == 1 ? 1 : s / 2;
        int lp = int(r - t), rp = int(r + t);
        if (opt.periodic) {
          lp = int(((r - t) % P + P) % P);
          rp = int((r + t) % P);
        } else {
          if (lp < 0) lp = MPI_PROC_NULL;
          if (rp >= P) rp = MPI_PROC_NULL;
        }
        MPI_Request req[4];
        if (s == 1) {
          T* s0 = sendbuf.data();
          T* s1 = sendbuf.data() + L * 4;
          for (index_t l = 0; l < L; ++l)
            for (int k = 0; k < 4; ++k) {
              s0[l * 4 + k] = rows[l * 8 + k];
              s1[l * 4 + k] = rows[l * 8 + 4 + k];
            }
          check_mpi(MPI_Irecv(left, int(L * 4), type, lp, 1, comm, &req[0]), "MPI_Irecv");
          check_mpi(MPI_Irecv(right, int(L * 4), type, rp, 0, comm, &req[1]), "MPI_Irecv");
          check_mpi(MPI_Isend(s0, int(L * 4), type, lp, 0, comm, &req[2]), "MPI_Isend");
          check_mpi(MPI_Isend(s1, int(L * 4), type, rp, 1, comm, &req[3]), "MPI_Isend");
          check_mpi(MPI_Waitall(4, req, MPI_STATUSES_IGNORE), "MPI_Waitall");
          bytes += double(((lp != MPI_PROC_NULL) + (rp != MPI_PROC_NULL)) * 2 * L * 4 * w);
          const T* lrow = lp == MPI_PROC_NULL ? ident.data() : left;
          const T* rrow = rp == MPI_PROC_NULL ? ident.data() : right;
          for (index_t l = 0; l < L; ++l) {
            const T* r0 = rows + l * 8;
            pcr_combine(r0, lrow + l * 4, r0 + 4, nrows + l * 8);
            pcr_combine(r0 + 4, r0, rrow + l * 4, nrows + l * 8 + 4);
          }
        } else {
          check_mpi(MPI_Irecv(left, int(L * 8), type, lp, 1, comm, &req[0]), "MPI_Irecv");
          check_mpi(MPI_Irecv(right, int(L * 8), type, rp, 0, comm, &req[1]), "MPI_Irecv");
          check_mpi(MPI_Isend(rows, int(L * 8), type, lp, 0, comm, &req[2]), "MPI_Isend");
          check_mpi(MPI_Isend(rows, int(L * 8), type, rp, 1, comm, &req[3]), "MPI_Isend");
          check_mpi(MPI_Waitall(4, req, MPI_STATUSES_IGNORE), "MPI_Waitall");
          bytes += double(((lp != MPI_PROC_NULL) + (rp != MPI_PROC_NULL)) * 2 * L * 8 * w);
          const T* lrow = lp == MPI_PROC_NULL ? ident.data() : left;
          const T* rrow = rp == MPI_PROC_NULL ? ident.data() : right;
          for (index_t l = 0; l < L; ++l) {
            const T* r0 = rows + l * 8;
            pcr_combine(r0, lrow + l * 8, rrow + l * 8, nrows + l * 8);
            pcr_combine(r0 + 4, lrow + l * 8 + 4, rrow + l * 8 + 4, nrows + l * 8 + 4);
          }
        }
        std::swap(rows, nrows);
        if (s >= P) break;
      }
      // Every row now couples to itself only (periodic: a and c wrapped onto it).
      for (index_t l = 0; l < L; ++l)
        for (int k = 0; k < 2; ++k) {
          const T* q = rows + l * 8 + 4 * k;
          sol[std::size_t(l * 2 + k)] = opt.periodic ? q[3] / (q[0] + q[1] + q[2]) : q[3] / q[1];
        }
      break;
    }
    case ReducedStrategy::automatic: break;
  }
  return true;
}

template struct DistributedTridiagonalPlan<float>::Impl;
template struct DistributedTridiagonalPlan<double>::Impl;

}  // namespace adi::mpi
