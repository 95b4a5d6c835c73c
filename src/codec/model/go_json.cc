#include "codec/model/go_json.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

namespace sluice::model {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";
constexpr char kBase64Alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr uint32_t kInvalidRune = 0xFFFFFFFF;

// Returns the deepest array/object nesting of `text`, stopping early once it
// passes `limit`. Brackets inside strings do not count.
int MaxNesting(std::string_view text, int limit) {
  int depth = 0;
  int max_depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      max_depth = std::max(max_depth, ++depth);
      if (max_depth > limit) return max_depth;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return max_depth;
}

bool IsContinuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// Decodes one UTF-8 sequence at the start of `s` with Go's validity rules
// (no overlongs, no surrogates, nothing above U+10FFFF). Returns the rune and
// its length, or kInvalidRune and 1.
std::pair<uint32_t, size_t> DecodeRune(std::string_view s) {
  const auto b0 = static_cast<unsigned char>(s[0]);
  size_t size = 0;
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    size = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    size = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    size = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return {kInvalidRune, 1};
  }
  if (s.size() < size) return {kInvalidRune, 1};
  const auto b1 = static_cast<unsigned char>(s[1]);
  if (b1 < lo || b1 > hi) return {kInvalidRune, 1};
  uint32_t rune = b0 & (0xFF >> (size + 1));
  for (size_t i = 1; i < size; ++i) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (!IsContinuation(b)) return {kInvalidRune, 1};
    rune = (rune << 6) | (b & 0x3F);
  }
  return {rune, size};
}

void AppendUnicodeEscape(uint32_t code, std::string* out) {
  out->append("\\u");
  for (int shift = 12; shift >= 0; shift -= 4) out->push_back(kHexDigits[(code >> shift) & 0xF]);
}

// Escapes one ASCII byte that Go does not write as itself.
void AppendAsciiEscape(unsigned char c, std::string* out) {
  switch (c) {
    case '"':
      out->append("\\\"");
      return;
    case '\\':
      out->append("\\\\");
      return;
    case '\b':
      out->append("\\b");
      return;
    case '\f':
      out->append("\\f");
      return;
    case '\n':
      out->append("\\n");
      return;
    case '\r':
      out->append("\\r");
      return;
    case '\t':
      out->append("\\t");
      return;
    default:
      AppendUnicodeEscape(c, out);
  }
}

bool IsGoSafeAscii(unsigned char c) {
  return c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&';
}

void AppendString(std::string_view s, std::string* out) {
  out->push_back('"');
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (IsGoSafeAscii(c)) {
        out->push_back(static_cast<char>(c));
      } else {
        AppendAsciiEscape(c, out);
      }
      ++i;
      continue;
    }
    const auto [rune, size] = DecodeRune(s.substr(i));
    if (rune == kInvalidRune) {
      out->append("\\ufffd");
    } else if (rune == 0x2028 || rune == 0x2029) {
      AppendUnicodeEscape(rune, out);
    } else {
      out->append(s.substr(i, size));
    }
    i += size;
  }
  out->push_back('"');
}

// Go writes float64 with 'f' formatting between 1e-6 and 1e21 and 'e'
// formatting outside, both shortest round-trip, and trims "e-07" to "e-7".
void AppendFloat(double value, std::string* out) {
  std::array<char, 64> buf;
  const double magnitude = std::fabs(value);
  const bool exponent_form = magnitude != 0 && (magnitude < 1e-6 || magnitude >= 1e21);
  const auto format = exponent_form ? std::chars_format::scientific : std::chars_format::fixed;
  auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), value, format);
  std::string text(buf.data(), ec == std::errc() ? end : buf.data());
  const size_t n = text.size();
  if (exponent_form && n >= 4 && text[n - 4] == 'e' && text[n - 3] == '-' && text[n - 2] == '0') {
    text.erase(n - 2, 1);
  }
  out->append(text);
}

void AppendValue(const JsonValue& value, std::string* out);

void AppendObject(const JsonValue& value, std::string* out) {
  out->push_back('{');
  bool first = true;
  for (const auto& [key, member] : value.items()) {
    if (!first) out->push_back(',');
    first = false;
    AppendString(key, out);
    out->push_back(':');
    AppendValue(member, out);
  }
  out->push_back('}');
}

void AppendArray(const JsonValue& value, std::string* out) {
  out->push_back('[');
  bool first = true;
  for (const auto& element : value) {
    if (!first) out->push_back(',');
    first = false;
    AppendValue(element, out);
  }
  out->push_back(']');
}

void AppendValue(const JsonValue& value, std::string* out) {
  switch (value.type()) {
    case JsonValue::value_t::object:
      AppendObject(value, out);
      return;
    case JsonValue::value_t::array:
      AppendArray(value, out);
      return;
    case JsonValue::value_t::string:
      AppendString(value.get_ref<const std::string&>(), out);
      return;
    case JsonValue::value_t::boolean:
      out->append(value.get<bool>() ? "true" : "false");
      return;
    case JsonValue::value_t::number_integer:
      out->append(std::to_string(value.get<int64_t>()));
      return;
    case JsonValue::value_t::number_unsigned:
      out->append(std::to_string(value.get<uint64_t>()));
      return;
    case JsonValue::value_t::number_float:
      AppendFloat(value.get<double>(), out);
      return;
    default:  // null, binary, discarded: Go has no other shapes.
      out->append("null");
      return;
  }
}

int Base64Index(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

Result<JsonValue> ParseJsonDocument(std::string_view text) {
  if (MaxNesting(text, kMaxJsonDepth) > kMaxJsonDepth) {
    return Corruption("json nesting deeper than " + std::to_string(kMaxJsonDepth));
  }
  try {
    return JsonValue::parse(text.begin(), text.end());
  } catch (const JsonValue::exception& e) {
    return Corruption(std::string("malformed json: ") + e.what());
  }
}

std::string GoMarshal(const JsonValue& value) {
  std::string out;
  AppendValue(value, &out);
  return out;
}

std::string Base64Encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t n = (static_cast<unsigned char>(bytes[i]) << 16) |
                       (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                       static_cast<unsigned char>(bytes[i + 2]);
    for (int shift = 18; shift >= 0; shift -= 6) out.push_back(kBase64Alphabet[(n >> shift) & 63]);
  }
  const size_t rest = bytes.size() - i;
  if (rest == 0) return out;
  uint32_t n = static_cast<unsigned char>(bytes[i]) << 16;
  if (rest == 2) n |= static_cast<unsigned char>(bytes[i + 1]) << 8;
  out.push_back(kBase64Alphabet[(n >> 18) & 63]);
  out.push_back(kBase64Alphabet[(n >> 12) & 63]);
  out.push_back(rest == 2 ? kBase64Alphabet[(n >> 6) & 63] : '=');
  out.push_back('=');
  return out;
}

std::optional<std::string> Base64Decode(std::string_view text) {
  std::string clean;
  clean.reserve(text.size());
  for (char c : text) {
    if (c != '\r' && c != '\n') clean.push_back(c);
  }
  if (clean.size() % 4 != 0) return std::nullopt;
  size_t padding = 0;
  while (padding < 2 && padding < clean.size() && clean[clean.size() - 1 - padding] == '=') {
    ++padding;
  }
  std::string out;
  out.reserve(clean.size() / 4 * 3);
  uint32_t acc = 0;
  for (size_t i = 0; i < clean.size() - padding; ++i) {
    const int index = Base64Index(clean[i]);
    if (index < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(index);
    if (i % 4 == 3) {
      out.push_back(static_cast<char>((acc >> 16) & 0xFF));
      out.push_back(static_cast<char>((acc >> 8) & 0xFF));
      out.push_back(static_cast<char>(acc & 0xFF));
      acc = 0;
    }
  }
  if (padding == 2) out.push_back(static_cast<char>((acc >> 4) & 0xFF));
  if (padding == 1) {
    out.push_back(static_cast<char>((acc >> 10) & 0xFF));
    out.push_back(static_cast<char>((acc >> 2) & 0xFF));
  }
  return out;
}

}  // namespace sluice::model
