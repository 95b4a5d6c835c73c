// Hex encoding of byte strings (for logs with redaction off, file formats and
// tests). Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sluice {

enum class HexCase { kLower, kUpper };

// Two hex digits per byte.
std::string HexEncode(std::string_view bytes, HexCase letter_case = HexCase::kLower);

// The bytes of an even-length string of hex digits (either case); nullopt on
// an odd length or a non-hex character.
std::optional<std::string> HexDecode(std::string_view hex);

}  // namespace sluice
