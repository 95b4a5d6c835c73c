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
bad=0
for f in "${files[@]}"; do
  if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
    echo "not formatted: $f"
    bad=1
  fi
done
[[ $bad == 0 ]] && echo "format-check: ${#files[@]} files clean"
exit $bad
