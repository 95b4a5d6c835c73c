// UTF-8 and case helpers for matching schema and table names the way TiDB's
// table filter (Go) does: names are sequences of runes, an invalid byte is one
// U+FFFD rune, and case-insensitive matching lower-cases rune by rune. Pure
// functions, safe from any thread.
#pragma once

#include <string>
#include <string_view>

namespace sluice::filter::text {

inline constexpr char32_t kReplacementRune = 0xFFFD;

// Decodes the rune at `*pos` and advances `*pos` past it. An invalid or
// truncated sequence decodes as U+FFFD and advances by one byte (Go's rule).
// Requires *pos < s.size().
char32_t DecodeRune(std::string_view s, size_t* pos);

// Appends the UTF-8 encoding of `rune` (U+FFFD if it is not a scalar value).
void AppendRune(char32_t rune, std::string* out);

bool IsValidUtf8(std::string_view s);

// Simple (one rune to one rune) case mappings. Covered: ASCII, Latin-1,
// Latin Extended-A and Additional, Greek, Cyrillic, Armenian, the Kelvin,
// Angstrom and Ohm signs, Roman numerals, circled and fullwidth Latin letters.
// Other runes map to themselves.
char32_t ToLowerRune(char32_t rune);
char32_t ToUpperRune(char32_t rune);

// The runes that case-insensitive matching treats as equal to a lower-case
// rune besides itself and its upper case (e.g. U+212A KELVIN SIGN for 'k'),
// or 0 if there is none.
char32_t ExtraFoldRune(char32_t lower);

// Lower-cases `s` rune by rune, as Go's strings.ToLower: ASCII-only input is
// lower-cased bytewise; otherwise invalid bytes become U+FFFD. Returns `s`
// itself when nothing changes (no allocation), else a view of `*buf`.
std::string_view FoldCase(std::string_view s, std::string* buf);

// FoldCase into a new string.
std::string ToLower(std::string_view s);

inline bool IsAsciiAlnum(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

}  // namespace sluice::filter::text
