#pragma once
// The node-wise half of the Ikonen-Toivanen operator splitting (American exercise inside an
// ADI step; adi/finance/pricer.cpp, solve_american), written once for the host loops
// (adi/finance/pricer.cpp) and the GPU kernels (solvers/cuda/early_exercise.cu).
//
// With the Lagrange multiplier lambda (>= 0, zero where the option is held) and the exercise
// value g, one ADI step is
//   1. the explicit predictor carries the multiplier:    Y0 = U + dt F(t0, U) + dt lambda
//      (exercise_predict adds dt lambda to the predictor),
//   2. the scheme's stages give U~,
//   3. node by node (exercise_project):
//        U      = max(U~ - dt lambda, g)
//        lambda = max(0, lambda + (g - U~) / dt)
// after which U >= g, lambda >= 0 and (U - g) lambda = 0 hold at every node.
//
// max is spelled as std::max spells it, (a < b) ? b : a, on both backends (not fmax): a NaN
// U~ stays NaN in U (it is not replaced by g), so a broken step shows in the price instead of
// vanishing into the exercise value.
#if defined(__CUDACC__)
#define ADI_EXERCISE_HD __host__ __device__ __forceinline__
#else
#define ADI_EXERCISE_HD inline
#endif

namespace adi::common {

// The predictor's multiplier term: w += dt * lambda.
template <class T>
ADI_EXERCISE_HD void exercise_predict(T& w, T lambda, T dt) {
  w += dt * lambda;
}

// The projection of one node: from the stages' result u_bar, the exercise value g and the
// multiplier (updated in place) to the new value u.
template <class T>
ADI_EXERCISE_HD void exercise_project(T u_bar, T g, T dt, T& u, T& lambda) {
  const T held = u_bar - dt * lambda;
  u = held < g ? g : held;
  const T next = lambda + (g - u_bar) / dt;
  lambda = T(0) < next ? next : T(0);
}

}  // namespace adi::common
