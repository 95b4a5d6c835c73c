// Check() for libFuzzer targets: a broken invariant traps, so the fuzzer
// records the input as a crash.
#pragma once

inline void Check(bool cond) {
  if (!cond) __builtin_trap();
}
