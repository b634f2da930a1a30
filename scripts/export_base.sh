#!/usr/bin/env bash
# Exports revision REV of this repository into .base/ (ignored by git) for
# scripts/gpu_compare.sh, and makes git ignore .base/ in this clone.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rev=${1:?usage: scripts/export_base.sh REV}
rm -rf "$root/.base" && mkdir -p "$root/.base"
git -C "$root" archive "$rev" | tar -x -C "$root/.base"
git -C "$root" rev-parse "$rev" >"$root/.base/REVISION"
exclude=$(git -C "$root" rev-parse --path-format=absolute --git-path info/exclude)  # worktrees too
grep -qx '/.base/' "$exclude" 2>/dev/null || echo '/.base/' >>"$exclude"
echo "export_base.sh: $(cat "$root/.base/REVISION") in .base/ ($(du -sh "$root/.base" | cut -f1))"
