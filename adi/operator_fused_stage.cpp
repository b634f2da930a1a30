// adi::Operator: the CUDA stage along a shared-band axis, one fused kernel (solvers/cuda/thomas_pcr_fused_stage.cuh).
#include "adi/detail/operator_impl.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace adi {


// The CUDA stage along a shared-band axis: one fused kernel (solvers/cuda/
// thomas_pcr_fused_stage.cuh) forms the same right-hand side as the general path below
// (base/s - A_a V_old + Neumann and source terms; Dirichlet ends from the face arrays,
// so V_old's boundary need not be written) and solves it. Pivots depend on s only: they
// are checked (one synchronisation) when s changes, not on every stage.
template <class T>
void Operator<T>::Impl::solve_fused(int a, T s, double t_new, const Field<T>& base, Field<T>& Y, double t_old,
                                    Field<T>* V_old, const std::array<bool, 3>& later, Field<T>* result) {
  AxisData& A = ax[a];
  const index_t o = A.sweep_offset;
  const bool cancel = V_old && t_old == t_new;  // g_a(t_new) - g_a(t_old) = 0
  cuda_backend::FusedStage<T> st;
  st.lines = A.plan->lines();
  st.periodic = A.periodic;
  st.base = base.data() + o;
  st.v = V_old ? V_old->data() + o : nullptr;
  st.inv_s = T(1) / s;
  st.a = A.a.data();
  st.d = A.d.data();
  st.c = A.c.data();
  const auto oth = others(a);
  st.face_n1 = N[oth[0]];
  st.face_base = lo[oth[0]] + lo[oth[1]] * st.face_n1;
  for (int side = 0; side < 2; ++side) {
    const int f = 2 * a + side;
    const BoundaryKind kind = face(a, side == 1).kind();
    if (kind == BoundaryKind::dirichlet) {
      st.end[side] = stage_face_values(f, s, t_new, t_old, V_old != nullptr, later);
      st.v_end[side] = V_old ? face_values(f, t_old) : nullptr;
    } else if (kind == BoundaryKind::neumann && !cancel) {
      st.neu_add[side] = face_values(f, t_new);
      if (V_old) st.neu_sub[side] = face_values(f, t_old);
    }
  }
  if (source && !cancel) {
    st.src[0] = source_at(t_new) + o;
    st.src_scale[0] = T(1) / T(k);
    if (V_old) {
      st.src[1] = source_at(t_old) + o;
      st.src_scale[1] = T(-1) / T(k);
      st.src[0] = source_at(t_new) + o;
    }
  }
  st.u = (result ? result->data() : Y.data()) + o;
  const bool check = A.s_formed != s;
  int* flag = check ? static_cast<int*>(pivot_flag.get()) : nullptr;
  if (check) {
    const int zero = 0;
    cuda_backend::copy_on_stream(flag, &zero, sizeof(int), cuda_backend::Copy::host_to_device, exec.stream());
  }
  cuda_backend::fused_stage_run<T>(st, A.fused, flag, exec.stream());
  if (check) {
    int bad = 0;
    cuda_backend::copy_on_stream(&bad, flag, sizeof(int), cuda_backend::Copy::device_to_host, exec.stream());
    if (bad != 0)
      throw SingularSystem(std::string("Operator::solve: the implicit stage along ") + axis_name(static_cast<Axis>(a)) +
                           " has a zero or non-finite pivot for s = " + detail::number(double(s)) +
                           "; I/s - A is not diagonally dominant enough (take a smaller time step)");
    A.s_formed = s;
  }
}

template struct Operator<float>::Impl;
template struct Operator<double>::Impl;

}  // namespace adi
