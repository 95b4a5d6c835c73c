// HashBytes: the project's fast hash of a byte string, for in-process hash
// tables and conflict keys. It is seeded per process, so it must never be
// stored or sent. Thread-safe.
#pragma once

#include <cstddef>
#include <string_view>

#include "absl/hash/hash.h"

namespace sluice {

inline size_t HashBytes(std::string_view bytes) {
  // This absl has its own string_view type; convert explicitly.
  return absl::Hash<absl::string_view>{}(absl::string_view(bytes.data(), bytes.size()));
}

}  // namespace sluice
