#!/usr/bin/env bash
# Fails when a file includes a header of a folder its targets do not link,
# when the folders' library DEPS form a cycle, or when docs/architecture.md
# does not mention a folder of src/ (scripts/layering-check.py says why).
#   bash scripts/layering-check.sh
#   bash scripts/layering-check.sh --root /path/to/other/tree
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
python3 scripts/layering-check.py "$@" || status=$?
exit "$status"
