#include "codec/json_text.h"

#include <charconv>
#include <cmath>

namespace sluice::codec {

namespace {

constexpr char kHex[] = "0123456789abcdef";
constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Decodes one UTF-8 sequence like Go's utf8.DecodeRune; returns its length
// and sets *rune, or returns 0 for an invalid or truncated sequence.
size_t DecodeUtf8(std::string_view s, size_t i, uint32_t* rune) {
  auto byte = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  uint8_t b0 = byte(i);
  size_t n = b0 >= 0xF0 ? 4 : b0 >= 0xE0 ? 3 : b0 >= 0xC0 ? 2 : 0;
  if (n == 0 || b0 > 0xF4 || i + n > s.size()) return 0;
  uint32_t r = b0 & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    r = (r << 6) | (byte(i + k) & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (r < kMin[n] || r > 0x10FFFF || (r >= 0xD800 && r <= 0xDFFF)) return 0;
  *rune = r;
  return n;
}

// Escape for an ASCII byte, or nullptr when it is written as is.
const char* ShortEscape(uint8_t b) {
  switch (b) {
    case '"':
      return "\\\"";
    case '\\':
      return "\\\\";
    case '\n':
      return "\\n";
    case '\r':
      return "\\r";
    case '\t':
      return "\\t";
    case '\b':
      return "\\b";
    case '\f':
      return "\\f";
    default:
      return nullptr;
  }
}

void AppendAscii(uint8_t b, std::string* out) {
  if (const char* esc = ShortEscape(b)) {
    out->append(esc);
  } else if (b < 0x20) {
    out->append("\\u00");
    out->push_back(kHex[b >> 4]);
    out->push_back(kHex[b & 0xF]);
  } else {
    out->push_back(static_cast<char>(b));
  }
}

void AppendBase64(std::string_view data, std::string* out) {
  size_t i = 0;
  for (; i + 3 <= data.size(); i += 3) {
    uint32_t v = (static_cast<uint8_t>(data[i]) << 16) | (static_cast<uint8_t>(data[i + 1]) << 8) |
                 static_cast<uint8_t>(data[i + 2]);
    for (int k = 18; k >= 0; k -= 6) out->push_back(kBase64[(v >> k) & 63]);
  }
  size_t rest = data.size() - i;
  if (rest == 0) return;
  uint32_t v = static_cast<uint32_t>(static_cast<uint8_t>(data[i])) << 16;
  if (rest == 2) v |= static_cast<uint32_t>(static_cast<uint8_t>(data[i + 1])) << 8;
  out->push_back(kBase64[(v >> 18) & 63]);
  out->push_back(kBase64[(v >> 12) & 63]);
  out->push_back(rest == 2 ? kBase64[(v >> 6) & 63] : '=');
  out->push_back('=');
}

}  // namespace

Status AppendJsonLiteral(uint8_t literal, std::string* out) {
  switch (literal) {
    case 0x00:
      out->append("null");
      return Status::Ok();
    case 0x01:
      out->append("true");
      return Status::Ok();
    case 0x02:
      out->append("false");
      return Status::Ok();
    default:
      return Corruption("json: invalid literal " + std::to_string(literal));
  }
}

Status AppendJsonFloat(double v, std::string* out) {
  if (!std::isfinite(v)) return Corruption("json: float is NaN or infinite");
  double abs = std::fabs(v);
  bool scientific = abs != 0 && (abs < 1e-15 || abs >= 1e15);
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v,
                           scientific ? std::chars_format::scientific : std::chars_format::fixed);
  std::string_view text(buf, static_cast<size_t>(res.ptr - buf));
  if (scientific) {
    size_t plus = text.find('+');
    out->append(text.substr(0, plus));
    if (plus != std::string_view::npos) out->append(text.substr(plus + 1));
    return Status::Ok();
  }
  out->append(text);
  if (text.find('.') == std::string_view::npos) out->append(".0");
  return Status::Ok();
}

void AppendJsonQuoted(std::string_view s, std::string* out) {
  out->push_back('"');
  for (size_t i = 0; i < s.size();) {
    uint8_t b = static_cast<uint8_t>(s[i]);
    if (b < 0x80) {
      AppendAscii(b, out);
      ++i;
      continue;
    }
    uint32_t rune = 0;
    size_t n = DecodeUtf8(s, i, &rune);
    if (n == 0) {
      out->append("\\ufffd");
      ++i;
    } else if (rune == 0x2028 || rune == 0x2029) {
      out->append(rune == 0x2028 ? "\\u2028" : "\\u2029");
      i += n;
    } else {
      out->append(s.substr(i, n));
      i += n;
    }
  }
  out->push_back('"');
}

void AppendJsonOpaque(uint8_t mysql_type_code, std::string_view data, std::string* out) {
  out->append("\"base64:type");
  out->append(std::to_string(mysql_type_code));
  out->push_back(':');
  AppendBase64(data, out);
  out->push_back('"');
}

}  // namespace sluice::codec
