// TiDB's table filter (`pkg/util/table-filter`): a list of `schema.table`
// rules with wildcards, character classes, quoted names, /regex/ patterns and
// `!` negation, where the last matching rule decides. It is the syntax of a
// changefeed's `filter.rules` and of each event filter's `matcher`.
//
// A TableFilter is immutable after Parse; it may be copied, and all methods
// may be called from any number of threads at once.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "filter/go_regex.h"

namespace sluice::filter {

// A character class of a wildcard pattern: `[a-z_]` or `[!0-9]`.
struct CharClass {
  bool negated = false;
  std::vector<std::pair<char32_t, char32_t>> ranges;  // inclusive

  // `fold`: also accept the upper case (and other fold) forms of `rune`,
  // which is already lower-cased.
  bool Matches(char32_t rune, bool fold) const;
};

// One side (schema or table) of a rule.
class NamePattern {
 public:
  enum class Kind {
    kAny,       // `*`: every name.
    kLiteral,   // a plain or quoted name: equality.
    kWildcard,  // `*`, `?` and `[...]` mixed with literal runes.
    kRegex,     // `/re/`: Go regex, unanchored search.
  };

  // `name` is already case-folded when the filter is case-insensitive.
  bool Matches(std::string_view name) const;
  // True only for the plain `*` pattern (TiDB's matchAllStrings).
  bool MatchesEverything() const { return kind_ == Kind::kAny; }
  Kind kind() const { return kind_; }

 private:
  friend class PatternParser;

  struct Token {
    enum Kind : uint8_t { kRune, kAnyRune, kStar, kClass };
    Kind kind;
    char32_t rune;  // kRune
    uint32_t cls;   // kClass: index into classes_
  };

  bool MatchWildcard(std::string_view name) const;

  Kind kind_ = Kind::kAny;
  bool fold_ = false;
  std::string literal_;
  std::vector<Token> tokens_;
  std::vector<CharClass> classes_;
  std::vector<GoRegex> regex_;  // zero or one
};

class TableFilter {
 public:
  // Parses rules in order. Blank rules and rules starting with `#` are
  // skipped, as in TiDB. `case_sensitive = false` compares lower-cased names
  // with lower-cased patterns (TiDB's CaseInsensitive). A bad rule gives
  // InvalidArgument naming it; `@file` imports give NotSupported.
  static Result<TableFilter> Parse(const std::vector<std::string>& rules, bool case_sensitive);

  // Whether `schema`.`table` is accepted: the last rule matching both names
  // decides (`!` rules reject); no matching rule rejects.
  bool MatchTable(std::string_view schema, std::string_view table) const;

  // Whether some table of `schema` may be accepted: the last rule whose schema
  // pattern matches and that is either positive or `!schema.*` decides.
  bool MatchSchema(std::string_view schema) const;

  size_t rule_count() const { return rules_.size(); }
  bool case_sensitive() const { return case_sensitive_; }

 private:
  struct Rule {
    NamePattern schema;
    NamePattern table;
    bool positive = true;
  };

  std::vector<Rule> rules_;  // in the order given
  bool case_sensitive_ = false;
};

}  // namespace sluice::filter
