#!/usr/bin/env bash
# Fails when a tracked C++ file is not clang-formatted (.clang-format).
#   bash scripts/format-check.sh        # check
#   bash scripts/format-check.sh --fix  # rewrite in place
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cc' '*.h' '*.cpp' '*.hpp')
if [[ "${1:-}" == "--fix" ]]; then
  clang-format -i "${files[@]}"
  exit 0
fi
# Files in parallel batches; clang-format names each unformatted file in
# its diagnostics ("path:line:col: error: code should be clang-formatted").
status=0
out=$(printf '%s\0' "${files[@]}" |
  xargs -0 -P "$(nproc)" -n 40 clang-format --dry-run -Werror 2>&1 >/dev/null) || status=$?
if [[ $status == 0 ]]; then
  echo "format-check: ${#files[@]} files clean"
  exit 0
fi
bad=$(grep -oE '^[^:]+:[0-9]+:[0-9]+: error' <<<"$out" | cut -d: -f1 | sort -u || true)
if [[ -n "$bad" ]]; then
  sed 's/^/not formatted: /' <<<"$bad"
else
  echo "$out" >&2  # clang-format itself failed.
fi
exit 1
