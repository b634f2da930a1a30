#!/usr/bin/env bash
# Stop 40 (h-envstrict): every environment switch of the library through one strict reader
# (adi/base/env_switch.hpp; docs/design.md "Environment switches"). ONE call, ~4-5 min on a fresh
# H100 / H200 (one GPU; the MPI test's 2 ranks share it), build included:
#   OUT=$OUT/envstrict scripts/gpu_envstrict_check.sh          (BUILD=build-envstrict by default)
# 1. builds (CUDA sm_90, MPI, no VTK) the suites whose kernels read a switch that the change made
#    strict, and runs them on the GPU: each sets its switches' accepted values itself
#    (ScopedEnv), so they check that every accepted value still selects its form:
#    test_fused_x_ring (ADI_FOLD_X_RING 1 / 2, _SLOTS, _WAVES), test_thomas_pcr_hybrid (ADI_PCR_X_LEAN),
#    test_thomas_pcr_strided (ADI_PCR_STRIDED_*), test_thomas_pcr_fused_stage (ADI_FUSED_YZ_LEAN;
#    then again under ADI_FOLD_X_RING=2 for the whole process), test_pivoting_cuda
#    (ADI_PIVOTING_ROUTE, _PARTITION_FORM, _PARTITION_DOMINANCE, _REFINE_GATE, _GATE_STRICT,
#    _GRAPH_IF, ADI_PIVOTING_FALLBACK=device), test_partition_large_cuda (ADI_LARGE_CHECK_FORM 0 /
#    1 / 2, ADI_LARGE_FALLBACK_TRACE), test_pivoting_regpart_cuda (ADI_PIVOTING_REGPART_LINES),
#    test_scheme_cuda (every scheme's GPU step; ADI_STENCIL_LEAN, ADI_FUSED_STAGE_STREAM defaults),
#    test_env_switch and test_field (host; here with CUDA built);
# 2. the behaviour change on the GPU paths: a stray value must now stop the run with an
#    InvalidArgument naming the variable (before stop 40: silently the default). Each such step
#    is expected to FAIL (rc != 0) and its log to hold "environment variable ADI_... = '...'";
# 3. on 2 ranks (sharing the GPU): DistributedTridiagonal.SpikeHalfExchangeGuards{Host,Device}
#    (review L7: the half exchange taken / declined by its guards) and SpikeCompact{Host,Device}.
# No A/B timing: the change only parses (the per-launch switches compare a few short strings
# where they compared one or two characters, against kernels of 10 us and more); the kernels are
# the same code. Tables at the end: every step's verdict, then the negative steps' messages.
#   ONLY=negative OUT=... scripts/gpu_envstrict_check.sh   builds test_scheme_cuda, test_pivoting_cuda and
#   test_partition_large_cuda and runs step 2 alone (~2 min)
set -u
OUT=${OUT:-$PWD/out/envstrict}
BUILD=${BUILD:-build-envstrict}
. "$(dirname "$0")/../tests/mpi/check_common.sh"
summary_header
T="$BUILD/tests"
TARGETS="test_env_switch test_field test_fused_x_ring test_thomas_pcr_hybrid test_thomas_pcr_strided
  test_thomas_pcr_fused_stage test_pivoting_cuda test_partition_large_cuda test_pivoting_regpart_cuda
  test_scheme_cuda test_distributed_tridiagonal"
configure_check -DADI_BUILD_TESTS=ON -DADI_BUILD_BENCHMARKS=OFF -DADI_BUILD_EXAMPLES=OFF -DADI_WITH_PYTHON=OFF
[ "${ONLY:-}" = negative ] && TARGETS="test_scheme_cuda test_pivoting_cuda test_partition_large_cuda"
# shellcheck disable=SC2086
build_check $TARGETS
if [ "${ONLY:-}" != negative ]; then

# 1. The suites (two streams at once on the one GPU: correctness, not timing).
(
  step "test_pivoting_cuda (all)" 200 "$OUT/test_pivoting_cuda.log" "$T/test_pivoting_cuda"
  step "test_partition_large_cuda (all)" 120 "$OUT/test_partition_large_cuda.log" "$T/test_partition_large_cuda"
  step "test_pivoting_regpart_cuda (all)" 60 "$OUT/test_pivoting_regpart_cuda.log" "$T/test_pivoting_regpart_cuda"
) &
stream=$!
step "test_env_switch (host, CUDA built)" 30 "$OUT/test_env_switch.log" "$T/test_env_switch"
step "test_field (host)" 30 "$OUT/test_field.log" "$T/test_field"
step "test_field, ADI_FIELD_ROW_ALIGN=64" 30 "$OUT/test_field.log" env ADI_FIELD_ROW_ALIGN=64 "$T/test_field"
step "test_fused_x_ring (all)" 90 "$OUT/test_fused_x_ring.log" "$T/test_fused_x_ring"
step "test_thomas_pcr_hybrid (all)" 90 "$OUT/test_thomas_pcr_hybrid.log" "$T/test_thomas_pcr_hybrid"
step "test_thomas_pcr_strided (all)" 120 "$OUT/test_thomas_pcr_strided.log" "$T/test_thomas_pcr_strided"
step "test_thomas_pcr_fused_stage (all)" 200 "$OUT/test_thomas_pcr_fused_stage.log" "$T/test_thomas_pcr_fused_stage"
step "test_thomas_pcr_fused_stage, ADI_FOLD_X_RING=2" 120 "$OUT/test_fused_stage_ring.log" \
  env ADI_FOLD_X_RING=2 "$T/test_thomas_pcr_fused_stage"
step "test_scheme_cuda (all)" 150 "$OUT/test_scheme_cuda.log" "$T/test_scheme_cuda"
wait $stream
fi

# 2. Stray values: expected to fail, naming the variable.
negative() {  # negative NAME VAR=VALUE cmd...: rc must be != 0 and the log must name VAR
  local name=$1 setting=$2 log="$OUT/negative_${1}.log"
  shift 2
  timeout 60 env "$setting" "$@" >"$log" 2>&1
  local rc=$? var=${setting%%=*}
  local msg
  msg=$(grep -m1 -o "environment variable $var = '[^']*': use [^\"]*" "$log" | cut -c1-160)
  if [ $rc != 0 ] && [ -n "$msg" ]; then
    echo "negative $name ($setting) rc=$rc ($(el)) ok, refused: $msg" >>"$S"
  else
    echo "negative $name ($setting) rc=$rc ($(el)) UNEXPECTED: $([ $rc = 0 ] && echo 'ran' || echo 'failed without the message')" >>"$S"
  fi
}
negative fold_x_ring ADI_FOLD_X_RING=3 "$T/test_scheme_cuda" --gtest_filter='CudaScheme.FoldedStepsMatchHostAtOddSizes'
negative stencil_lean ADI_STENCIL_LEAN=yes "$T/test_scheme_cuda" --gtest_filter='*CudaSchemeMatchesHost*'
negative stencil_pairs ADI_STENCIL_PAIRS=yes "$T/test_scheme_cuda" --gtest_filter='*CudaSchemeMatchesHost*'
negative fused_stage_stream ADI_FUSED_STAGE_STREAM=Thread "$T/test_scheme_cuda" --gtest_filter='*CudaSchemeMatchesHost*'
negative pivoting_route ADI_PIVOTING_ROUTE=Partition "$T/test_pivoting_cuda" --gtest_filter='PivotingCuda.EveryRouteSmall'
negative pivoting_fallback ADI_PIVOTING_FALLBACK=gpu "$T/test_pivoting_cuda" --gtest_filter='PivotingCuda.AutomaticWithinTenTimesLapackOnDominantLines'
negative large_check_form ADI_LARGE_CHECK_FORM=3 "$T/test_partition_large_cuda"

# 3. The half exchange's guards, 2 ranks on the one GPU.
[ "${ONLY:-}" != negative ] && step "np2 SpikeHalfExchangeGuards*, SpikeCompact*" 120 "$OUT/test_distributed_tridiagonal.log" \
  $MPI -n 2 "$T/test_distributed_tridiagonal" --gtest_filter='*SpikeHalfExchangeGuards*:*SpikeCompact*'

echo
echo "== adi envstrict GPU check =="
cat "$S"
echo
echo "-- failing checks (first lines) --"
grep -h -A3 "Failure" "$OUT"/test_*.log 2>/dev/null | head -30 || true
grep -hE "^\[  SKIPPED \] [A-Z]" "$OUT/test_distributed_tridiagonal.log" 2>/dev/null | head -4
verdicts_footer
