#pragma once
// Host backend of the large-system solvers (adi/large_tridiagonal.hpp). Called after
// validation; these functions assume valid input. One system at a time:
//   pcr_thomas_large.cpp   thomas (one core), P+T, P+TO, SP+T (the paper's variants)
//   partition_large.cpp    the two-pass partition method, one chunk per SIMD lane
#include <cstddef>

#include "adi/base/large_types.hpp"
#include "adi/base/layout.hpp"

namespace adi::cpu::large {

struct Settings {
  LargeKernel variant = LargeKernel::partition;  // never automatic here
  int k = 1;                                       // PCR levels (pcr_* variants)
  bool periodic = false;
  double tolerance = 0;  // relative pivot tolerance (thomas, partition)
  int chunk = 512;       // partition: rows per chunk (a multiple of the SIMD width)
  int lanes = 8;         // partition: 1 or a multiple of the SIMD width (<= 4 vectors)
  int threads = 0;       // 0: all
};

// One system: a, b, c, d, u of n values (a, b, c never written; u may equal d).
template <class T>
struct System {
  const T* a;
  const T* b;
  const T* c;
  const T* d;
  T* u;
  index_t n;
};

// Where a solve met a bad pivot: row of the system (or of the reduced system when
// `reduced` > 0, then `row` is the nearest row of the original system), -1 if none.
struct Failure {
  index_t row = -1;
  const char* stage = "";
  int level = 0;
  bool failed() const { return row >= 0; }
};

// SIMD lanes of one vector for T on this build (the width the partition's lanes count in).
int simd_width(std::size_t value_size);
// Defaults measured on the development machine (docs/large_tridiagonal.md).
int default_chunk(std::size_t value_size);
int default_lanes(std::size_t value_size);

std::size_t workspace_bytes(const Settings& s, index_t n, std::size_t value_size);

template <class T>
Failure solve(const Settings& s, const System<T>& sys, void* workspace);

namespace detail {
// The variants, one file each (workspace: workspace_bytes for the same settings).
std::size_t pcr_workspace_bytes(const Settings& s, index_t n, std::size_t value_size);
template <class T>
Failure pcr_solve(const Settings& s, const System<T>& sys, void* workspace);
std::size_t partition_workspace_bytes(const Settings& s, index_t n, std::size_t value_size);
template <class T>
Failure partition_solve(const Settings& s, const System<T>& sys, void* workspace);
}  // namespace detail

}  // namespace adi::cpu::large
