// Which allocator the running binary uses, and jemalloc's statistics when it
// is the one. Binaries built by `sluice_binary` link jemalloc (except the
// sanitizer and fuzzing builds) with the options of `jemalloc_conf.cc`;
// tests and libraries use the system allocator. Any thread may call these.
#ifndef SLUICE_COMMON_ALLOCATOR_H_
#define SLUICE_COMMON_ALLOCATOR_H_

#include <cstdint>
#include <optional>
#include <string>

namespace sluice {

// True when jemalloc serves malloc in this process.
bool UsingJemalloc();

// One line for `sluice version` and benchmark headers, e.g.
// "jemalloc 5.3.0-0-g54eaed1d8b56b1aa528be3bdd1877e59c56fa90c (thp: never)"
// or "system malloc".
std::string AllocatorDescription();

// jemalloc's `stats.allocated` (bytes the application holds), refreshed;
// nullopt without jemalloc.
std::optional<int64_t> JemallocAllocatedBytes();

}  // namespace sluice

#endif  // SLUICE_COMMON_ALLOCATOR_H_
