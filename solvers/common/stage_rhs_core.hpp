#pragma once
// The right-hand side of one row of an ADI stage solve (I/s - A_axis) u = rhs, written once
// for the fused GPU stage (solvers/cuda/thomas_pcr_fused_stage.cuh) and the host path of
// TridiagonalPlan::solve_stage (adi/tridiagonal.cpp, Impl::stage_host). The terms and their
// order are the host stencil_apply's in Operator::solve.
//
// G holds the stage's data with these members (the kernel's StageArgs, the host's
// StageRhsArgs below): inv_s (1/s), src[2] and src_scale[2] (field-shaped sources, null:
// none), v (null: no explicit part), and per end of a line (0: row 0, 1: row n-1) face
// arrays end[2] (Dirichlet: the stage's value), nadd[2] and nsub[2] (Neumann terms), read
// at the line's face index fi. The caller loads the row's scalars its own way: its bands
// a, d, c, its explicit base and v at the row and its two neighbours (vm, vc, vp).
// (G is read member by member where needed: a kernel's arguments passed on by address
// would be copied out of the parameter space.)
#if defined(__CUDACC__)
#define ADI_STAGE_HD __host__ __device__ __forceinline__
#else
#define ADI_STAGE_HD inline
#endif

namespace adi::common {

// A row that is not the end row of a non-periodic line.
template <class G, class T, class I>
ADI_STAGE_HD T stage_rhs_inner(const G& g, T a, T d, T c, T base_r, T vm, T vc, T vp, I node) {
  T x = g.inv_s * base_r;
  if (g.src[0]) x += g.src_scale[0] * g.src[0][node];
  if (g.src[1]) x += g.src_scale[1] * g.src[1][node];
  if (g.v) x -= d * vc - a * vm - c * vp;
  return x;
}

// End row `side` of a non-periodic line: the stage's Dirichlet value, or the inner formula
// (no neighbour beyond the end) plus the Neumann terms.
template <class G, class T, class I>
ADI_STAGE_HD T stage_rhs_end(const G& g, int side, T a, T d, T c, T base_r, T vm, T vc, T vp, I fi, I node) {
  if (g.end[side]) return g.end[side][fi] * g.inv_s;
  T x = stage_rhs_inner(g, a, d, c, base_r, side == 0 ? T(0) : vm, vc, side == 1 ? T(0) : vp, node);
  if (g.nadd[side]) x += g.nadd[side][fi];
  if (g.nsub[side]) x -= g.nsub[side][fi];
  return x;
}

// The host's G, from a stage's pointers (the kernel's StageArgs has the same members).
template <class T>
struct StageRhsArgs {
  T inv_s;
  const T* src[2];
  T src_scale[2];
  const T* v;
  const T* end[2];
  const T* nadd[2];
  const T* nsub[2];
};

}  // namespace adi::common
