// adi::Operator: the CUDA stage along a shared-band axis, one fused kernel (solvers/cuda/thomas_pcr_fused_stage.cuh).
#include "adi/detail/operator_impl.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace adi {


// The CUDA stage along a shared-band axis: one fused kernel (solvers/cuda/
// thomas_pcr_fused_stage.cuh), run by the axis's plan (TridiagonalPlan::solve_stage; its kernel
// and launch were chosen when the plan was built), forms the same right-hand side as the
// general path (base/s - A_a V_old + Neumann and source terms; Dirichlet ends from the face
// arrays, so V_old's boundary need not be written) and solves it. Boundary data reach the
// device without a host synchronisation (face_values: page-locked uploads ordered on the
// stream; stage_face_values: a kernel on the stream). Pivots depend on s only: checked when s
// changes, asynchronously (check_stages).
//
// With a Fold (solve_folded), base is not read: the kernel forms it at each node from the
// terms' fields and their neighbours along every axis (cuda_backend::FusedExplicit), with
// the terms' Neumann data and sources; the sources of every time are merged into the
// stage's two source slots (can_fold checked that at most two times occur).
template <class T>
void Operator<T>::Impl::solve_fused(int a, T s, double t_new, const Field<T>* base, Field<T>& Y, double t_old,
                                    Field<T>* V_old, const std::array<bool, 3>& later, Field<T>* result,
                                    const Fold* fold) {
  AxisData& A = ax[a];
  const index_t o = A.sweep_offset;
  const bool cancel = V_old && t_old == t_new;  // g_a(t_new) - g_a(t_old) = 0
  detail::TridiagonalStage<T> st;
  st.lines = A.plan->lines();
  st.periodic = A.periodic;
  st.base = base ? base->data() + o : nullptr;
  st.v = V_old ? V_old->data() + o : nullptr;
  st.inv_s = T(1) / s;
  st.a = A.a.data();
  st.d = A.d.data();
  st.c = A.c.data();
  stage_ends(a, s, t_new, t_old, V_old, later, st);
  // Sources as (time, scale) pairs: the stage's own, then the folded terms' (times 1/s,
  // as the base they belong to), merged by time.
  std::array<double, 2> src_t{};
  int n_src = 0;
  auto add_source = [&](double t, T scale) {
    for (int i = 0; i < n_src; ++i)
      if (src_t[i] == t) {
        st.src_scale[i] += scale;
        return;
      }
    src_t[n_src] = t;
    st.src_scale[n_src++] = scale;  // can_fold: never a third time
  };
  if (source && !cancel) {
    add_source(t_new, T(1) / T(k));
    if (V_old) add_source(t_old, T(-1) / T(k));
  }
  if (fold) {
    cuda_backend::FusedExplicit<T>& e = st.fold;
    e.view = view;
    e.axis = a;
    for (int d = 0; d < 3; ++d) e.org[d] = d == a ? ghost[a][0] : lo[d];
    for (int q = 0; q < 2; ++q) {
      const auto& term = fold->terms[q];
      if (!term.field) continue;
      e.p[e.count] = term.field->data() + o;
      e.alpha[e.count] = q == 0 ? fold->alpha : T(0);
      T ws = 0;
      for (int b = 0; b < 3; ++b) {
        if (!active[b]) continue;
        e.w[e.count][b] = term.w[b + 1];
        ws += term.w[b + 1];
        for (int side = 0; side < 2; ++side)
          if (term.w[b + 1] != T(0) && neumann(b, side == 1))
            e.neumann[e.count][b][side] = face_values(2 * b + side, term.t);
      }
      if (source && ws != T(0)) add_source(term.t, st.inv_s * (ws / T(k)));
      ++e.count;
    }
  }
  for (int i = 0; i < n_src; ++i) st.src[i] = source_at(src_t[i]) + o;  // both times stay cached (source_at)
  st.u = (result ? result->data() : Y.data()) + o;
  // Pivots depend on s only: checked when s changes, not on every stage. The check is
  // asynchronous: the kernel sets the axis's device flag, read by check_stages() at the end
  // of the step (settle) or, outside a step, at the end of this call.
  int* flag = nullptr;
  if (A.s_formed != s) {
    if (checking[a] != T(0)) check_stages();  // the flag of an earlier s, not read yet
    flag = static_cast<int*>(pivot_flag.get()) + a;
    A.s_formed = s;  // until check_stages() finds the flag set
    checking[a] = s;
  }
  A.plan->solve_stage(st, flag);
  if (flag && !in_step) check_stages();
}

// The end rows of a stage along a (the general path's face writes): Dirichlet values, V_old's
// boundary values and Neumann terms per face this rank holds (a split axis: only the ranks
// at the ends of the lines), indexed face_base + c1 + c2 * face_n1.
template <class T>
void Operator<T>::Impl::stage_ends(int a, T s, double t_new, double t_old, Field<T>* V_old,
                                   const std::array<bool, 3>& later, detail::TridiagonalStage<T>& st) {
  const bool cancel = V_old && t_old == t_new;  // g_a(t_new) - g_a(t_old) = 0
  const auto oth = others(a);
  st.face_n1 = N[oth[0]];
  st.face_base = lo[oth[0]] + lo[oth[1]] * st.face_n1;
  for (int side = 0; side < 2; ++side) {
    const int f = 2 * a + side;
    if (dirichlet(a, side == 1)) {
      st.end[side] = stage_face_values(f, s, t_new, t_old, V_old != nullptr, later);
      st.v_end[side] = V_old ? face_values(f, t_old) : nullptr;
    } else if (neumann(a, side == 1) && !cancel) {
      st.neu_add[side] = face_values(f, t_new);
      if (V_old) st.neu_sub[side] = face_values(f, t_old);
    }
  }
}

template <class T>
bool Operator<T>::Impl::can_fold(int a, double t_new, double t_old, bool has_old, const Fold& f,
                                 const Field<T>* result, bool any_mode, bool strided) const {
  if (!folds(a, any_mode, strided) || !f.terms[0].field) return false;
  // Boundary data and sources are cached for two times: the stage's and the terms' together.
  std::array<double, 4> ts{};
  int n = 0;
  auto add = [&](double t) {
    for (int i = 0; i < n; ++i)
      if (ts[i] == t) return;
    ts[n++] = t;
  };
  add(t_new);
  if (has_old) add(t_old);
  for (const auto& term : f.terms)
    if (term.field) add(term.t);
  if (n > 2) return false;
  // The kernel reads the terms' neighbours on other lines: result must not be a term's field
  // unless the stage's own axis is the only one read.
  bool across = false;
  for (const auto& term : f.terms)
    if (term.field)
      for (int b = 0; b < 3; ++b) across = across || (b != a && active[b] && term.w[b + 1] != T(0));
  if (across && result)
    for (const auto& term : f.terms)
      if (term.field && term.field->data() == result->data()) return false;
  return true;
}

template struct Operator<float>::Impl;
template struct Operator<double>::Impl;

}  // namespace adi
