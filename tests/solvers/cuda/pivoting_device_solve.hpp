#pragma once
// Shared by the CUDA pivoting tests (test_pivoting_cuda.cpp, test_pivoting_regpart_cuda.cpp):
// one case of tests/solvers/pivoting_cases.hpp solved on the device.
#include <vector>

#include "adi/field.hpp"
#include "adi/tridiagonal.hpp"
#include "tests/solvers/pivoting_cases.hpp"

namespace adi::test_pivoting {

template <class T>
adi::Array<T> up(const std::vector<T>& h) {
  adi::Array<T> a(static_cast<index_t>(h.size()), adi::Executor::cuda());
  a.copy_from_host(h.data());
  return a;
}

// Copies the case to the device, solves with options o (in place: u = d), copies u back into k.u.
template <class T>
void solve_on_device(Case<T>& k, adi::TridiagonalOptions o, bool in_place) {
  const adi::Executor dev = adi::Executor::cuda();
  adi::Array<T> a = up(k.a), b = up(k.b), c = up(k.c), d = up(k.d), u = up(k.u);
  adi::TridiagonalPlan<T> plan(dev, k.lines, o);
  T* out = in_place ? d.data() : u.data();
  if (k.shared)
    plan.solve(adi::SharedBands<T>{a.data(), b.data(), c.data()}, d.data(), out);
  else
    plan.solve(adi::Bands<T>{a.data(), b.data(), c.data()}, d.data(), out);
  (in_place ? d : u).copy_to_host(k.u.data());
}

}  // namespace adi::test_pivoting
