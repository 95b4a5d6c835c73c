// Byte helpers for the codec tests: hex rendering and parsing.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::codec::testing {

// "74 80 00" style upper-case hex.
inline std::string Hex(std::string_view s) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (!out.empty()) out.push_back(' ');
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

// Parses hex digits, ignoring spaces and '|' separators: "80 00 | 01".
inline std::string Unhex(std::string_view hex) {
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return c - 'A' + 10;
  };
  std::string out;
  int pending = -1;
  for (char c : hex) {
    if (c == ' ' || c == '|' || c == '\n') continue;
    if (pending < 0) {
      pending = nibble(c);
    } else {
      out.push_back(static_cast<char>(pending * 16 + nibble(c)));
      pending = -1;
    }
  }
  return out;
}

}  // namespace sluice::codec::testing
