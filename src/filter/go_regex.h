// Regular expressions written in Go's RE2 syntax (what TiCDC users write in
// `/regex/` table-filter patterns and in `ignore-sql`), run with std::regex.
//
// The pattern is translated to ECMAScript; constructs whose meaning would
// change silently are rejected with InvalidArgument instead (look-around and
// back-references, which RE2 does not have either; \p{...} classes; inline
// flags other than a leading (?i) / (?s); non-ASCII runes inside [...]).
// Matching is bytewise: `.` and [^...] consume one byte, not one rune.
// A GoRegex is immutable; Search may be called from any number of threads.
#pragma once

#include <memory>
#include <regex>
#include <string>
#include <string_view>

#include "common/status.h"

namespace sluice::filter {

class GoRegex {
 public:
  // Compiles `pattern`. `icase` matches case-insensitively, like Go's "(?i)"
  // prefix. InvalidArgument names the pattern and says what is wrong.
  static Result<GoRegex> Compile(std::string_view pattern, bool icase);

  // Whether the pattern matches anywhere in `text` (Go's MatchString). Runs in
  // time linear in the text and bounded stack; never throws.
  bool Search(std::string_view text) const;

  // The pattern as the user wrote it.
  const std::string& pattern() const { return pattern_; }
  // The ECMAScript translation handed to std::regex.
  const std::string& translated() const { return translated_; }

 private:
  GoRegex() = default;

  std::string pattern_;
  std::string translated_;
  std::shared_ptr<const std::regex> re_;
};

// Translates Go RE2 syntax to std::regex ECMAScript syntax. Sets `*icase` if
// the pattern starts with an (?i) flag group. Exposed for tests.
Result<std::string> TranslateGoRegex(std::string_view pattern, bool* icase);

}  // namespace sluice::filter
