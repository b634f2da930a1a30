# The A/B table of a same-run benchmark log, for scripts/gpu_heat_ab.sh, gpu_stage_check.sh and
# gpu_x_ab.sh: the log holds blocks "### pass P form F" (passes 1 and 2, forms a and b), each one
# benchmark run's output; per row the table gives each pass's ms of each form, the best (least) ms
# of the two passes, b's change against a, and the % of copy bandwidth.
#
#   awk -f scripts/ab_table.awk -v a=FORM -v b=FORM -v bench=heat|tridiag -v heads=LABEL,... [...] LOG
#
# heads: the header's labels, comma-separated (the row's first).
# bench=heat (bench_cuda_heat_step): rows "grid type part ms fields min-ms ratio ..." (the part in
#   columns 19-50, its figures after it);
#   parts   the parts kept: a regex over the whole name (write '+' as [+]: -v expands backslashes);
#   partw   the part's width in the table;
#   copy    min: % copy = 100 x the part's minimum ms (its last row) / the best ms;
#           ratio: 100 / the least ratio (ms / minimum ms) of the passes;
#           own: each form against its own minimum ms (forms that move different minimum traffic,
#           the x ring's 2 fields against the stencil pass + X solve's 4), step8 against form a's;
#   step8   1: the step rows ("step: CUDA events") also give the best ms against 8/10 of their
#           10-field minimum (the 8-transfer minimum).
# bench=tridiag (bench_cuda_tridiagonal): the "full" thomas_pcr (hybrid) rows (ms, then % copy last);
#   the table gives each form's % copy at its best pass.
/^### pass/ { pass = $3; form = $5; next }
bench == "heat" && /^(256|512)x/ {
  part = substr($0, 19, 32); sub(/ +$/, "", part);
  if (part !~ ("^(" parts ")$")) next;
  split(substr($0, 52), f, " ");
  add(sprintf("%-12s %-4s %-" partw "s", $1, $2, part), f[1], f[3], f[4]);
  next
}
bench == "tridiag" && / \| / && /thomas_pcr \(hybrid\)/ {
  split($0, h, "|"); nf = split(h[1], f, " ");
  if (f[nf - 3] != "full") next;
  add(sprintf("%-12s %s %s", f[1], f[2], f[3]), f[nf - 2], "", f[nf]);
  next
}
# One row's figures for this pass and form; the minimum ms is the row's last.
function add(key, m, mn, c) {
  if (!(key in seen)) { seen[key] = 1; order[++nk] = key }
  ms[key, pass, form] = m; minms[key] = mn; mnf[key, form] = mn; cp[key, pass, form] = c;
}
# The least positive v[key, pass, s] of the passes (0 if none); bp: its pass.
function least(v, key, s,   p, r, x) {
  r = 0; bp = 0;
  for (p = 1; p <= 2; ++p) { x = v[key, p, s] + 0; if (x > 0 && (r == 0 || x < r)) { r = x; bp = p } }
  return r
}
function change(ma, mb) { return ma > 0 ? 100 * (mb / ma - 1) : 0 }
END {
  nh = split(heads, hd, ",");
  if (bench == "tridiag") {
    printf "%-21s %9s %9s %9s %9s | %-14s %-14s %s\n", hd[1], hd[2], hd[3], hd[4], hd[5], hd[6], hd[7], hd[8];
    for (i = 1; i <= nk; ++i) {
      k = order[i];
      ba = least(ms, k, a); ca = bp ? cp[k, bp, a] : 0;
      bb = least(ms, k, b); cb = bp ? cp[k, bp, b] : 0;
      printf "%-21s %9s %9s %9s %9s | %-14s %-14s %+6.1f%%\n", k, ms[k, 1, a], ms[k, 1, b], ms[k, 2, a], ms[k, 2, b],
             ca, cb, change(ba, bb);
    }
    exit
  }
  kw = 12 + 1 + 4 + 1 + partw;
  printf "%-" kw "s %8s %8s | %8s %8s | %8s %8s %7s | %s\n", hd[1], hd[2], hd[3], hd[4], hd[5], hd[6], hd[7], hd[8], hd[9];
  for (i = 1; i <= nk; ++i) {
    k = order[i]; ba = least(ms, k, a); bb = least(ms, k, b); mm = minms[k] + 0;
    if (copy == "own") {
      ma = mnf[k, a] + 0; mb = mnf[k, b] + 0; mm = ma;
      pc = (ma > 0 && mb > 0 && ba > 0 && bb > 0) ? sprintf("%.1f -> %.1f", 100 * ma / ba, 100 * mb / bb) : "-";
    } else if (copy == "ratio") {
      ra = least(cp, k, a); rb = least(cp, k, b);
      pc = (ra > 0 && rb > 0) ? sprintf("%.1f -> %.1f", 100 / ra, 100 / rb) : "-";
    } else {
      pc = (mm > 0 && ba > 0 && bb > 0) ? sprintf("%.1f -> %.1f", 100 * mm / ba, 100 * mm / bb) : "-";
    }
    extra = "";
    if (step8 && k ~ /step: CUDA events/ && mm > 0)
      extra = sprintf("; vs 8-transfer min %.4f ms: %.2fx -> %.2fx", 0.8 * mm, ba / (0.8 * mm), bb / (0.8 * mm));
    printf "%-" kw "s %8s %8s | %8s %8s | %8.4f %8.4f %+6.1f%% | %s%s\n", k, ms[k, 1, a], ms[k, 1, b], ms[k, 2, a],
           ms[k, 2, b], ba, bb, change(ba, bb), pc, extra;
  }
}
