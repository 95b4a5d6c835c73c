#include "filter/go_regex.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <exception>
#include <vector>

#include "filter/text.h"

namespace sluice::filter {
namespace {

// Go's limit on one repetition count; we also apply it to nested counts so
// that `(a{1000}){1000}` cannot expand into a million-state automaton.
constexpr int kMaxRepeat = 1000;
constexpr size_t kMaxNesting = 200;
constexpr size_t kMaxPatternBytes = 64 * 1024;

constexpr std::array<std::string_view, 14> kPosixClasses = {
    "alnum", "alpha", "blank", "cntrl", "digit",  "graph", "lower",
    "print", "punct", "space", "upper", "xdigit", "ascii", "word",
};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
uint32_t HexValue(char c) {
  if (IsDigit(c)) return static_cast<uint32_t>(c - '0');
  return static_cast<uint32_t>((c | 0x20) - 'a' + 10);
}

// One pass over a Go pattern, writing its ECMAScript form.
class Translator {
 public:
  explicit Translator(std::string_view in) : in_(in) {}

  Status Run();

  std::string out;
  bool icase = false;

 private:
  Status Fail(std::string_view what) const {
    return InvalidArgument(fmt::format("{} (at offset {})", what, pos_));
  }
  bool At(std::string_view prefix) const { return in_.substr(pos_).starts_with(prefix); }
  void LeadingFlags();
  Status Escape(bool in_class);
  Status Hex(bool in_class);
  void Quoted();
  Status Class();
  Status OpenGroup();
  Status CloseGroup();
  Status Brace();
  void Rune();
  void SetAtom(int factor) { last_atom_ = factor; }

  std::string_view in_;
  size_t pos_ = 0;
  bool dotall_ = false;
  // Largest repetition factor inside each open group; [0] is the top level.
  std::vector<int> factors_{1};
  // Repetition factor of the atom just emitted, 0 if a quantifier may not
  // take it into account (nothing emitted, or already quantified).
  int last_atom_ = 0;
};

void Translator::LeadingFlags() {
  while (At("(?")) {
    size_t j = pos_ + 2;
    bool i_flag = false;
    bool s_flag = false;
    while (j < in_.size() && (in_[j] == 'i' || in_[j] == 's')) {
      (in_[j] == 'i' ? i_flag : s_flag) = true;
      ++j;
    }
    if (j == pos_ + 2 || j >= in_.size() || in_[j] != ')') return;
    icase = icase || i_flag;
    dotall_ = dotall_ || s_flag;
    pos_ = j + 1;
  }
}

Status Translator::Run() {
  if (in_.size() > kMaxPatternBytes) return Fail("pattern longer than 64 KiB");
  if (!text::IsValidUtf8(in_)) return InvalidArgument("invalid UTF-8");
  LeadingFlags();
  while (pos_ < in_.size()) {
    const char c = in_[pos_];
    switch (c) {
      case '\\':
        RETURN_IF_ERROR(Escape(false));
        break;
      case '[':
        RETURN_IF_ERROR(Class());
        SetAtom(1);
        break;
      case '(':
        RETURN_IF_ERROR(OpenGroup());
        break;
      case ')':
        RETURN_IF_ERROR(CloseGroup());
        break;
      case '{':
        RETURN_IF_ERROR(Brace());
        break;
      case '.':
        out += dotall_ ? "[\\s\\S]" : "[^\\n]";
        ++pos_;
        SetAtom(1);
        break;
      case ']':
      case '}':
        out += '\\';
        out += c;
        ++pos_;
        SetAtom(1);
        break;
      case '*':
      case '+':
      case '?':
      case '|':
      case '^':
      case '$':
        out += c;
        ++pos_;
        SetAtom(0);
        break;
      default:
        Rune();
        SetAtom(1);
        break;
    }
  }
  if (factors_.size() > 1) return Fail("missing closing )");
  return Status::Ok();
}

// Copies one rune; a multi-byte rune is grouped so that a quantifier after it
// repeats the whole rune, as in Go.
void Translator::Rune() {
  size_t next = pos_;
  text::DecodeRune(in_, &next);
  if (next - pos_ == 1) {
    out += in_[pos_];
  } else {
    out += "(?:";
    out.append(in_.substr(pos_, next - pos_));
    out += ')';
  }
  pos_ = next;
}

Status Translator::Escape(bool in_class) {
  if (pos_ + 1 >= in_.size()) return Fail("trailing backslash");
  const char d = in_[pos_ + 1];
  if (static_cast<unsigned char>(d) >= 0x80) return Fail("invalid escape of a non-ASCII character");
  if (IsDigit(d)) return Fail("back-references and octal escapes are not supported");
  SetAtom(1);
  switch (d) {
    case 'd':
    case 'D':
    case 'w':
    case 'W':
    case 'f':
    case 'n':
    case 'r':
    case 't':
    case 'v':
      out += '\\';
      out += d;
      break;
    case 's':
      out += in_class ? "\\t\\n\\f\\r " : "[\\t\\n\\f\\r ]";
      break;
    case 'S':
      if (in_class) return Fail("\\S inside [...] is not supported");
      out += "[^\\t\\n\\f\\r ]";
      break;
    case 'a':
      out += "\\x07";
      break;
    case 'b':
    case 'B':
    case 'A':
    case 'z':
      if (in_class) return Fail(fmt::format("\\{} inside [...] is invalid", d));
      if (d == 'A') {
        out += '^';
      } else if (d == 'z') {
        out += '$';
      } else {
        out += '\\';
        out += d;
      }
      SetAtom(0);
      break;
    case 'x':
      return Hex(in_class);
    case 'Q':
      if (in_class) return Fail("\\Q inside [...] is not supported");
      Quoted();
      return Status::Ok();
    case 'p':
    case 'P':
      return Fail("Unicode classes (\\p, \\P) are not supported");
    default:
      if (text::IsAsciiAlnum(d)) return Fail(fmt::format("invalid escape \\{}", d));
      out += '\\';
      out += d;
      break;
  }
  pos_ += 2;
  return Status::Ok();
}

Status Translator::Hex(bool in_class) {
  size_t j = pos_ + 2;
  uint32_t value = 0;
  if (j < in_.size() && in_[j] == '{') {
    const size_t close = in_.find('}', j);
    if (close == std::string_view::npos || close == j + 1 || close - j > 9) {
      return Fail("invalid \\x{...} escape");
    }
    for (size_t k = j + 1; k < close; ++k) {
      if (!IsHex(in_[k])) return Fail("invalid \\x{...} escape");
      value = value * 16 + HexValue(in_[k]);
    }
    j = close + 1;
  } else {
    if (j + 2 > in_.size() || !IsHex(in_[j]) || !IsHex(in_[j + 1])) {
      return Fail("invalid \\x escape");
    }
    value = HexValue(in_[j]) * 16 + HexValue(in_[j + 1]);
    j += 2;
  }
  if (value > 0x10FFFF) return Fail("\\x escape out of range");
  if (value < 0x80) {
    out += fmt::format("\\x{:02X}", value);
  } else {
    if (in_class) return Fail("non-ASCII runes inside [...] are not supported");
    std::string bytes;
    text::AppendRune(value, &bytes);
    out += "(?:" + bytes + ")";
  }
  pos_ = j;
  return Status::Ok();
}

// \Q...\E: everything up to \E (or the end) is literal.
void Translator::Quoted() {
  pos_ += 2;
  const size_t end = in_.find("\\E", pos_);
  const size_t stop = end == std::string_view::npos ? in_.size() : end;
  while (pos_ < stop) {
    const char c = in_[pos_];
    if (static_cast<unsigned char>(c) < 0x80 && !text::IsAsciiAlnum(c) && c != '_') {
      out += '\\';
      out += c;
      ++pos_;
    } else {
      Rune();
    }
  }
  pos_ = end == std::string_view::npos ? in_.size() : end + 2;
  SetAtom(1);
}

Status Translator::Class() {
  out += '[';
  ++pos_;
  if (At("^")) {
    out += '^';
    ++pos_;
  }
  if (At("]")) {  // A leading ']' is literal in Go.
    out += "\\]";
    ++pos_;
  }
  while (true) {
    if (pos_ >= in_.size()) return Fail("missing closing ]");
    const char c = in_[pos_];
    if (c == ']') {
      out += ']';
      ++pos_;
      return Status::Ok();
    }
    if (At("[:")) {
      const size_t end = in_.find(":]", pos_ + 2);
      const std::string_view name =
          end == std::string_view::npos ? "" : in_.substr(pos_ + 2, end - pos_ - 2);
      if (name.starts_with("^")) return Fail("negated POSIX classes are not supported");
      if (std::find(kPosixClasses.begin(), kPosixClasses.end(), name) != kPosixClasses.end()) {
        if (name == "word") {
          out += "\\w";
        } else if (name == "ascii") {
          out += "\\x00-\\x7F";
        } else {
          out += fmt::format("[:{}:]", name);
        }
        pos_ = end + 2;
        continue;
      }
    }
    if (c == '[') {
      out += "\\[";
      ++pos_;
    } else if (c == '\\') {
      RETURN_IF_ERROR(Escape(true));
    } else if (static_cast<unsigned char>(c) >= 0x80) {
      return Fail("non-ASCII characters inside [...] are not supported");
    } else {
      out += c;
      ++pos_;
    }
  }
}

Status Translator::OpenGroup() {
  if (factors_.size() > kMaxNesting) return Fail("groups nested too deeply");
  if (!At("(?")) {
    out += '(';
    ++pos_;
  } else if (At("(?:")) {
    out += "(?:";
    pos_ += 3;
  } else if (At("(?=") || At("(?!") || At("(?<=") || At("(?<!")) {
    return Fail("look-around assertions are not supported (Go's RE2 has none)");
  } else if (At("(?P<") || At("(?<")) {
    const size_t start = in_.find('<', pos_) + 1;
    size_t j = start;
    while (j < in_.size() && (text::IsAsciiAlnum(in_[j]) || in_[j] == '_')) ++j;
    if (j == start || j >= in_.size() || in_[j] != '>') return Fail("invalid named capture");
    out += '(';
    pos_ = j + 1;
  } else {
    return Fail("inline flags are supported only at the start of the pattern: (?i), (?s)");
  }
  factors_.push_back(1);
  SetAtom(0);
  return Status::Ok();
}

Status Translator::CloseGroup() {
  if (factors_.size() == 1) return Fail("unexpected )");
  const int inner = factors_.back();
  factors_.pop_back();
  factors_.back() = std::max(factors_.back(), inner);
  out += ')';
  ++pos_;
  SetAtom(inner);
  return Status::Ok();
}

// `{n}`, `{n,}`, `{n,m}` repeat the previous atom; any other `{` is literal.
Status Translator::Brace() {
  size_t j = pos_ + 1;
  auto number = [&](int* value) {
    const size_t start = j;
    int64_t v = 0;
    while (j < in_.size() && IsDigit(in_[j])) {
      v = std::min<int64_t>(v * 10 + (in_[j] - '0'), 1'000'000);
      ++j;
    }
    *value = static_cast<int>(v);
    return j > start;
  };
  int min = 0;
  int max = -1;
  bool valid = number(&min);
  if (valid && j < in_.size() && in_[j] == ',') {
    ++j;
    if (!number(&max)) max = -2;  // {n,}: unbounded
  } else {
    max = min;
  }
  valid = valid && j < in_.size() && in_[j] == '}';
  if (!valid) {
    out += "\\{";
    ++pos_;
    SetAtom(1);
    return Status::Ok();
  }
  if (min > kMaxRepeat || max > kMaxRepeat) return Fail("repeat count larger than 1000");
  if (max >= 0 && max < min) return Fail("invalid repeat count");
  const int count = std::max(min, max);
  if (last_atom_ > 0) {
    const int64_t factor = static_cast<int64_t>(last_atom_) * std::max(count, 1);
    if (factor > kMaxRepeat) return Fail("nested repetition counts multiply to more than 1000");
    factors_.back() = std::max(factors_.back(), static_cast<int>(factor));
  }
  out.append(in_.substr(pos_, j + 1 - pos_));
  pos_ = j + 1;
  SetAtom(0);
  return Status::Ok();
}

}  // namespace

Result<std::string> TranslateGoRegex(std::string_view pattern, bool* icase) {
  Translator t(pattern);
  RETURN_IF_ERROR(t.Run());
  *icase = t.icase;
  return std::move(t.out);
}

Result<GoRegex> GoRegex::Compile(std::string_view pattern, bool icase) {
  auto fail = [&](std::string_view why) {
    return InvalidArgument(fmt::format("invalid regular expression \"{}\": {}", pattern, why));
  };
  bool flag_icase = false;
  Result<std::string> translated = TranslateGoRegex(pattern, &flag_icase);
  if (!translated.ok()) return fail(translated.status().message());
  auto flags = std::regex::ECMAScript | std::regex::nosubs;
  if (icase || flag_icase) flags |= std::regex::icase;
#ifdef __GLIBCXX__
  // libstdc++'s breadth-first executor: time linear in the text and a stack
  // bounded by the pattern, so long DDL text cannot exhaust the stack.
  flags |= std::regex_constants::__polynomial;
#endif
  GoRegex re;
  re.pattern_ = std::string(pattern);
  re.translated_ = std::move(translated).value();
  try {
    // regex_search retries from every start position (quadratic); a lazy
    // any-prefix matched from the start only tries all of them in one pass.
    re.re_ = std::make_shared<const std::regex>("[\\s\\S]*?(?:" + re.translated_ + ")", flags);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  return re;
}

bool GoRegex::Search(std::string_view text) const {
  try {
    return std::regex_search(text.begin(), text.end(), *re_,
                             std::regex_constants::match_continuous);
  } catch (const std::exception&) {
    // std::regex reports resource limits by throwing; no match is the
    // conservative answer for a filter (the event is kept).
    return false;
  }
}

}  // namespace sluice::filter
