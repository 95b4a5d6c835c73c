# Sourced by the test scripts: how sanitizer builds report. A finding stops
# the process with a stack; leaks count. TSan reads scripts/tsan.supp.
_sluice_scripts=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:suppressions=$_sluice_scripts/tsan.supp}
