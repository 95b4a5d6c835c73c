// HashBytes: the project's fast hash of a byte string, for in-process hash
// tables and conflict keys. It is seeded per process, so it must never be
// stored or sent. MixU64: a fixed bijective mix of a 64-bit id, for picking a
// shard by id when ids come in strides (TiKV's region ids step by the replica
// count plus one: a region id, then its peers'). Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/hash/hash.h"

namespace sluice {

inline size_t HashBytes(std::string_view bytes) {
  // This absl has its own string_view type; convert explicitly.
  return absl::Hash<absl::string_view>{}(absl::string_view(bytes.data(), bytes.size()));
}

// SplitMix64's finalizer: every input bit affects every output bit.
constexpr uint64_t MixU64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

}  // namespace sluice
