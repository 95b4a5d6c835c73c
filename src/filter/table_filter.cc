#include "filter/table_filter.h"

#include <fmt/format.h>

#include <utility>

#include "filter/text.h"

namespace sluice::filter {

bool CharClass::Matches(char32_t rune, bool fold) const {
  auto contains = [this](char32_t r) {
    for (const auto& [lo, hi] : ranges) {
      if (r >= lo && r <= hi) return true;
    }
    return false;
  };
  bool in = contains(rune);
  if (!in && fold) {
    const char32_t upper = text::ToUpperRune(rune);
    const char32_t extra = text::ExtraFoldRune(rune);
    in = (upper != rune && contains(upper)) || (extra != 0 && contains(extra));
  }
  return in != negated;
}

bool NamePattern::Matches(std::string_view name) const {
  switch (kind_) {
    case Kind::kAny:
      return true;
    case Kind::kLiteral:
      return name == literal_;
    case Kind::kWildcard:
      return MatchWildcard(name);
    case Kind::kRegex:
      return regex_.front().Search(name);
  }
  return false;
}

// Glob matching with backtracking to the last `*` only: every other token
// consumes exactly one rune, so this is exact and O(len(name) * tokens).
bool NamePattern::MatchWildcard(std::string_view name) const {
  const size_t n_tokens = tokens_.size();
  size_t ti = 0;
  size_t ni = 0;
  size_t star_ti = std::string_view::npos;
  size_t star_ni = 0;
  while (ni < name.size()) {
    if (ti < n_tokens) {
      const Token& tok = tokens_[ti];
      if (tok.kind == Token::kStar) {
        star_ti = ti++;
        star_ni = ni;
        continue;
      }
      size_t next = ni;
      const char32_t rune = text::DecodeRune(name, &next);
      const bool ok = tok.kind == Token::kAnyRune ||
                      (tok.kind == Token::kRune && tok.rune == rune) ||
                      (tok.kind == Token::kClass && classes_[tok.cls].Matches(rune, fold_));
      if (ok) {
        ++ti;
        ni = next;
        continue;
      }
    }
    if (star_ti == std::string_view::npos) return false;
    ti = star_ti + 1;
    text::DecodeRune(name, &star_ni);
    ni = star_ni;
  }
  while (ti < n_tokens && tokens_[ti].kind == Token::kStar) ++ti;
  return ti == n_tokens;
}

// Parses one rule's patterns; mirrors TiDB's matcherParser, including its
// error wording.
class PatternParser {
 public:
  explicit PatternParser(bool case_sensitive) : fold_(!case_sensitive) {}

  // Parses a pattern at the start of `*line` and leaves the rest in `*line`.
  Result<NamePattern> Parse(std::string_view* line) const;

 private:
  Result<NamePattern> Regex(std::string_view* line) const;
  Result<NamePattern> Quoted(std::string_view* line) const;
  Result<NamePattern> Wildcard(std::string_view* line) const;
  Status Class(std::string_view line, size_t* i, NamePattern* p) const;
  NamePattern Literal(std::string_view name) const;

  bool fold_;
};

NamePattern PatternParser::Literal(std::string_view name) const {
  NamePattern p;
  p.kind_ = NamePattern::Kind::kLiteral;
  p.literal_ = fold_ ? text::ToLower(name) : std::string(name);
  return p;
}

Result<NamePattern> PatternParser::Parse(std::string_view* line) const {
  if (line->empty()) return InvalidArgument("syntax error: missing pattern");
  switch (line->front()) {
    case '/':
      return Regex(line);
    case '"':
    case '`':
      return Quoted(line);
    default:
      return Wildcard(line);
  }
}

// `/re/`: a backslash escapes the next character (but not a newline).
Result<NamePattern> PatternParser::Regex(std::string_view* line) const {
  const std::string_view s = *line;
  size_t i = 1;
  while (i < s.size() && s[i] != '/') {
    i += (s[i] == '\\' && i + 1 < s.size() && s[i + 1] != '\n') ? 2 : 1;
  }
  if (i >= s.size() || i == 1) return InvalidArgument("syntax error: incomplete regexp");
  const std::string_view body = s.substr(1, i - 1);
  *line = s.substr(i + 1);
  NamePattern p;
  if (body == "(?s)^.*$") return p;  // TiDB treats this exact regex as `*`.
  Result<GoRegex> re = GoRegex::Compile(body, fold_);
  if (!re.ok()) return InvalidArgument(fmt::format("invalid pattern: {}", re.status().message()));
  p.kind_ = NamePattern::Kind::kRegex;
  p.fold_ = fold_;
  p.regex_.push_back(std::move(re).value());
  return p;
}

// "name" or `name`; the quote is escaped by doubling it. Never empty.
Result<NamePattern> PatternParser::Quoted(std::string_view* line) const {
  const std::string_view s = *line;
  const char quote = s.front();
  std::string name;
  size_t i = 1;
  while (i < s.size()) {
    if (s[i] == quote) {
      if (i + 1 < s.size() && s[i + 1] == quote) {
        name.push_back(quote);
        i += 2;
        continue;
      }
      break;
    }
    name.push_back(s[i++]);
  }
  if (i >= s.size() || i == 1) return InvalidArgument("syntax error: incomplete quoted identifier");
  *line = s.substr(i + 1);
  return Literal(name);
}

Result<NamePattern> PatternParser::Wildcard(std::string_view* line) const {
  const std::string_view s = *line;
  NamePattern p;
  std::string literal;
  bool is_literal = true;
  size_t i = 0;
  auto add_rune = [&p](char32_t rune) {
    p.tokens_.push_back({NamePattern::Token::kRune, rune, 0});
  };
  while (i < s.size() && s[i] != '.') {
    const char c = s[i];
    if (c == '\\') {
      if (i + 1 >= s.size()) return InvalidArgument("syntax error: cannot place \\ at end of line");
      if (text::IsAsciiAlnum(s[i + 1])) {
        return InvalidArgument(fmt::format(
            "cannot escape a letter or number (\\{}), it is reserved for future extension",
            s[i + 1]));
      }
      size_t next = i + 1;
      const char32_t rune = text::DecodeRune(s, &next);
      literal.append(s.substr(i + 1, next - i - 1));
      add_rune(rune);
      i = next;
    } else if (c == '*' || c == '?') {
      is_literal = false;
      p.tokens_.push_back(
          {c == '*' ? NamePattern::Token::kStar : NamePattern::Token::kAnyRune, 0, 0});
      ++i;
    } else if (c == '[') {
      is_literal = false;
      RETURN_IF_ERROR(Class(s, &i, &p));
    } else if (c == '$' || c == '_' || text::IsAsciiAlnum(c) ||
               static_cast<unsigned char>(c) >= 0x80) {
      size_t next = i;
      const char32_t rune = text::DecodeRune(s, &next);
      literal.append(s.substr(i, next - i));
      add_rune(rune);
      i = next;
    } else {
      return InvalidArgument(fmt::format("unexpected special character '{}'", c));
    }
  }
  *line = s.substr(i);
  if (is_literal) return Literal(literal);
  if (p.tokens_.size() == 1 && p.tokens_[0].kind == NamePattern::Token::kStar) return NamePattern{};
  if (!text::IsValidUtf8(s.substr(0, i))) return InvalidArgument("invalid pattern: invalid UTF-8");
  p.kind_ = NamePattern::Kind::kWildcard;
  p.fold_ = fold_;
  if (fold_) {
    for (auto& tok : p.tokens_) {
      if (tok.kind == NamePattern::Token::kRune) tok.rune = text::ToLowerRune(tok.rune);
    }
  }
  return p;
}

// `[...]` as TiDB accepts it: `!` negates, `^` is literal, one or more
// elements each either a rune other than `\` and `]` or `\` plus a
// non-alphanumeric rune; `a-z` is a range.
Status PatternParser::Class(std::string_view s, size_t* pos, NamePattern* p) const {
  const Status bad = InvalidArgument("syntax error: failed to parse character class");
  CharClass cls;
  size_t i = *pos + 1;
  if (i < s.size() && s[i] == '!') {
    cls.negated = true;
    ++i;
  }
  // Each element as its rune; the end is the first unescaped ']'.
  const size_t content_start = i;
  std::vector<std::pair<char32_t, bool>> elems;  // (rune, escaped)
  while (i < s.size() && s[i] != ']') {
    if (s[i] == '\\') {
      if (i + 1 >= s.size() || text::IsAsciiAlnum(s[i + 1])) return bad;
      if (static_cast<unsigned char>(s[i + 1]) >= 0x80) {
        return InvalidArgument("invalid pattern: invalid escape in character class");
      }
      elems.emplace_back(static_cast<unsigned char>(s[i + 1]), true);
      i += 2;
      continue;
    }
    size_t next = i;
    elems.emplace_back(text::DecodeRune(s, &next), false);
    i = next;
  }
  if (i >= s.size() || elems.empty()) return bad;
  // Go would read `[:name:` plus our closing ']' as a POSIX class and then
  // miss the end of the class: an error there, so an error here.
  const std::string_view content = s.substr(content_start, i - content_start);
  const size_t posix = content.find("[:");
  if (posix != std::string_view::npos && content.size() >= posix + 3 && content.back() == ':') {
    return InvalidArgument("invalid pattern: POSIX classes ([:name:]) are not supported");
  }
  for (size_t k = 0; k < elems.size(); ++k) {
    const char32_t lo = elems[k].first;
    char32_t hi = lo;
    // An unescaped '-' between two elements makes a range.
    if (k + 2 < elems.size() && elems[k + 1].first == '-' && !elems[k + 1].second) {
      hi = elems[k + 2].first;
      if (hi < lo) return InvalidArgument("invalid pattern: invalid character class range");
      k += 2;
    }
    cls.ranges.emplace_back(lo, hi);
  }
  p->tokens_.push_back({NamePattern::Token::kClass, 0, static_cast<uint32_t>(p->classes_.size())});
  p->classes_.push_back(std::move(cls));
  *pos = i + 1;
  return Status::Ok();
}

Result<TableFilter> TableFilter::Parse(const std::vector<std::string>& rules, bool case_sensitive) {
  TableFilter filter;
  filter.case_sensitive_ = case_sensitive;
  const PatternParser parser(case_sensitive);
  for (const std::string& rule : rules) {
    auto fail = [&rule](std::string_view why) {
      return InvalidArgument(fmt::format("invalid table filter rule \"{}\": {}", rule, why));
    };
    std::string_view line = rule;
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    Rule r;
    if (line.front() == '!') {
      r.positive = false;
      line.remove_prefix(1);
    } else if (line.front() == '@') {
      return NotSupported(fmt::format(
          "table filter rule \"{}\": importing rules from a file (@path) is not supported", rule));
    }
    Result<NamePattern> schema = parser.Parse(&line);
    if (!schema.ok()) return fail(schema.status().message());
    if (line.empty()) return fail("wrong table pattern");
    if (line.front() != '.')
      return fail("syntax error: missing '.' between schema and table patterns");
    line.remove_prefix(1);
    Result<NamePattern> table = parser.Parse(&line);
    if (!table.ok()) return fail(table.status().message());
    if (!line.empty()) return fail("syntax error: stray characters after table pattern");
    r.schema = std::move(schema).value();
    r.table = std::move(table).value();
    filter.rules_.push_back(std::move(r));
  }
  return filter;
}

bool TableFilter::MatchTable(std::string_view schema, std::string_view table) const {
  std::string schema_buf;
  std::string table_buf;
  if (!case_sensitive_) {
    schema = text::FoldCase(schema, &schema_buf);
    table = text::FoldCase(table, &table_buf);
  }
  for (auto it = rules_.rbegin(); it != rules_.rend(); ++it) {
    if (it->schema.Matches(schema) && it->table.Matches(table)) return it->positive;
  }
  return false;
}

bool TableFilter::MatchSchema(std::string_view schema) const {
  std::string schema_buf;
  if (!case_sensitive_) schema = text::FoldCase(schema, &schema_buf);
  for (auto it = rules_.rbegin(); it != rules_.rend(); ++it) {
    if (it->schema.Matches(schema) && (it->positive || it->table.MatchesEverything())) {
      return it->positive;
    }
  }
  return false;
}

}  // namespace sluice::filter
