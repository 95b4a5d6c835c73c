// Memcomparable byte encoding (TiDB codec.EncodeBytes):
// the form PD uses for region boundaries and CDC requests use for spans.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace sluice::memcomparable {

// Appends the memcomparable encoding of `raw` to `out`.
void EncodeBytes(std::string_view raw, std::string* out);
inline std::string EncodeBytes(std::string_view raw) {
  std::string out;
  EncodeBytes(raw, &out);
  return out;
}

// Decodes one memcomparable group sequence from the front of `*in`, appends
// the raw bytes to `out` and advances `*in` past what was consumed.
// Returns Corruption on truncated input, bad markers or non-zero padding.
Status DecodeBytes(std::string_view* in, std::string* out);

// Decodes a whole key that must be exactly one encoded byte string.
Result<std::string> DecodeWhole(std::string_view encoded);

// Length of EncodeBytes(raw) for a raw length.
constexpr size_t EncodedLength(size_t raw_len) { return (raw_len / 8 + 1) * 9; }

}  // namespace sluice::memcomparable
