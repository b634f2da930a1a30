#!/usr/bin/env bash
# The verdict on compute-sanitizer memcheck logs of the NCCL path (issue 18). NCCL probes the
# CUDA runtime when it starts (cudaFuncGetAttributes on its kernels, and the like) and memcheck
# reports every failed probe as a CUDA API error. Those reports, and only those, are ignored:
# an API-error report ("Program hit ...") whose host backtrace runs through libnccl. Every
# other report fails: memory errors in our kernels (with their device backtrace), API errors
# raised from our code, leaks. The count of ignored reports is printed, so that the filter is
# seen to do something.
#
#   tests/mpi/sanitizer_verdict.sh LOG...   # one line "sanitizer verdict: ..."; exit 0 when clean
set -u
[ $# -ge 1 ] || { echo "usage: $0 LOG..." >&2; exit 2; }
for f in "$@"; do  # a log without memcheck's summary: the sanitizer did not run or was cut off
  if ! grep -q "ERROR SUMMARY" "$f" 2>/dev/null; then
    echo "sanitizer verdict: FAILED, no memcheck ERROR SUMMARY in $f ($(tail -1 "$f" 2>/dev/null))"
    exit 1
  fi
done
awk '
  function close_record() {
    if (inrec) {
      if (api && nccl) ignored++; else { bad++; if (bad <= 5) first = first "\n  " head }
    }
    inrec = 0; api = 0; nccl = 0
  }
  /^========= +(ERROR SUMMARY|COMPUTE-SANITIZER|LEAK SUMMARY|Target application)/ { close_record(); next }
  /^=========     / { if (inrec && tolower($0) ~ /nccl/) nccl = 1; next }
  /^========= [^ ]/ { close_record(); inrec = 1; head = $0; api = ($0 ~ /Program hit/); if (tolower($0) ~ /nccl/) nccl = 1; next }
  /^=========$/ { close_record(); next }
  END {
    close_record()
    if (bad > 0) {
      printf "sanitizer verdict: FAILED, %d report(s) not from NCCL start-up probing (%d NCCL API-error report(s) ignored); first:%s\n", bad, ignored, first
      exit 1
    }
    printf "sanitizer verdict: clean (no memcheck report on our kernels or API calls; %d NCCL start-up API-error report(s) ignored)\n", ignored
  }' "$@"
