#include "sink/codec/go_format.h"

#include <charconv>
#include <cstdint>
#include <cstdlib>

namespace sluice::sink::codec {

namespace {

// Shortest decimal digits of a float and the position of the decimal point
// (value = 0.d1d2... * 10^dp), as Go's strconv computes them.
struct Digits {
  bool negative = false;
  std::string digits;
  int dp = 0;
};

Digits ShortestDigits(double v, int bits) {
  char buf[64];
  std::to_chars_result r =
      bits == 32 ? std::to_chars(buf, buf + sizeof(buf), static_cast<float>(v),
                                 std::chars_format::scientific)
                 : std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  std::string_view text(buf, r.ptr - buf);
  Digits d;
  if (!text.empty() && text[0] == '-') {
    d.negative = true;
    text.remove_prefix(1);
  }
  size_t e = text.find('e');
  for (char c : text.substr(0, e)) {
    if (c != '.') d.digits += c;
  }
  int exp = std::atoi(std::string(text.substr(e + 1)).c_str());
  while (d.digits.size() > 1 && d.digits.back() == '0') d.digits.pop_back();
  d.dp = exp + 1;
  return d;
}

// %f with `prec` fraction digits over the shortest digits (strconv fmtF).
std::string FormatF(const Digits& d, int prec) {
  std::string out = d.negative ? "-" : "";
  const int nd = static_cast<int>(d.digits.size());
  if (d.dp > 0) {
    int m = std::min(nd, d.dp);
    out.append(d.digits, 0, m);
    for (; m < d.dp; ++m) out += '0';
  } else {
    out += '0';
  }
  if (prec > 0) {
    out += '.';
    for (int i = 1; i <= prec; ++i) {
      int j = d.dp + i - 1;
      out += (j >= 0 && j < nd) ? d.digits[j] : '0';
    }
  }
  return out;
}

// %e with all shortest digits (strconv fmtE).
std::string FormatE(const Digits& d) {
  std::string out = d.negative ? "-" : "";
  out += d.digits[0];
  if (d.digits.size() > 1) {
    out += '.';
    out.append(d.digits, 1, std::string::npos);
  }
  out += 'e';
  int exp = d.dp - 1;
  if (d.digits == "0") exp = 0;
  out += exp < 0 ? '-' : '+';
  exp = std::abs(exp);
  if (exp < 10) out += '0';
  out += std::to_string(exp);
  return out;
}

// Decodes one UTF-8 sequence at s[i]; returns its length, or 0 if invalid.
int Utf8Length(std::string_view s, size_t i, uint32_t* rune) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  int n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
  if (n == 0 || c > 0xF4 || i + n > s.size()) return 0;
  uint32_t r = c & (0x3F >> (n - 1));
  for (int k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    r = (r << 6) | (byte(i + k) & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (r < kMin[n] || r > 0x10FFFF || (r >= 0xD800 && r <= 0xDFFF)) return 0;
  *rune = r;
  return n;
}

constexpr char kHex[] = "0123456789abcdef";

}  // namespace

std::string GoFormatFloat(double v, char fmt, int bits) {
  Digits d = ShortestDigits(v, bits);
  if (d.digits == "0") d.dp = 0;  // Go keeps no digit for zero.
  const int nd = d.digits == "0" ? 0 : static_cast<int>(d.digits.size());
  if (fmt == 'f') return FormatF(d, std::max(nd - d.dp, 0));
  int exp = d.dp - 1;
  if (nd > 0 && (exp < -4 || exp >= 6)) return FormatE(d);
  return FormatF(d, std::max(nd - d.dp, 0));
}

void AppendEasyJsonString(std::string_view s, std::string* out) {
  out->push_back('"');
  size_t p = 0;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&') {
      ++i;
      continue;
    }
    if (c < 0x80) {
      out->append(s, p, i - p);
      switch (c) {
        case '\t':
          out->append("\\t");
          break;
        case '\r':
          out->append("\\r");
          break;
        case '\n':
          out->append("\\n");
          break;
        case '\\':
          out->append("\\\\");
          break;
        case '"':
          out->append("\\\"");
          break;
        default:
          out->append("\\u00");
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 0xF]);
      }
      p = ++i;
      continue;
    }
    uint32_t rune = 0;
    int n = Utf8Length(s, i, &rune);
    if (n == 0) {
      out->append(s, p, i - p);
      out->append("\\ufffd");
      p = ++i;
      continue;
    }
    if (rune == 0x2028 || rune == 0x2029) {
      out->append(s, p, i - p);
      out->append(rune == 0x2028 ? "\\u2028" : "\\u2029");
      i += n;
      p = i;
      continue;
    }
    i += n;
  }
  out->append(s, p, std::string_view::npos);
  out->push_back('"');
}

std::string GoIndent(std::string_view src, std::string_view indent) {
  std::string out;
  out.reserve(src.size() * 2);
  int depth = 0;
  bool need_indent = false;  // Just opened a container.
  bool in_string = false;
  bool escaped = false;
  auto newline = [&](int level) {
    out.push_back('\n');
    for (int k = 0; k < level; ++k) out.append(indent);
  };
  for (char c : src) {
    if (in_string) {
      out.push_back(c);
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    if (need_indent && c != ']' && c != '}') {
      need_indent = false;
      newline(depth);
    }
    switch (c) {
      case '"':
        in_string = true;
        out.push_back(c);
        break;
      case '{':
      case '[':
        out.push_back(c);
        need_indent = true;
        ++depth;
        break;
      case ',':
        out.push_back(c);
        newline(depth);
        break;
      case ':':
        out.append(": ");
        break;
      case '}':
      case ']':
        --depth;
        if (need_indent) {
          need_indent = false;  // Empty container stays "{}" / "[]".
        } else {
          newline(depth);
        }
        out.push_back(c);
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

std::string HexEncode(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 0xF]);
  }
  return out;
}

std::optional<std::string> HexDecode(std::string_view text) {
  if (text.size() % 2 != 0) return std::nullopt;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(text.size() / 2);
  for (size_t i = 0; i < text.size(); i += 2) {
    int hi = nibble(text[i]), lo = nibble(text[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return out;
}

std::string Latin1ToUtf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back(static_cast<char>(0xC0 | (c >> 6)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
  }
  return out;
}

std::optional<std::string> Utf8ToLatin1(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    uint32_t rune = 0;
    int n = Utf8Length(text, i, &rune);
    if (n == 0 || rune > 0xFF) return std::nullopt;
    out.push_back(static_cast<char>(rune));
    i += n;
  }
  return out;
}

}  // namespace sluice::sink::codec
