// ParseGoDuration: Go's time.ParseDuration.
#include <cstdint>
#include <string>

#include "config/replica_config.h"

namespace sluice::config {
namespace {

constexpr uint64_t kMaxNanos = uint64_t{1} << 63;

Status BadDuration(std::string_view text, std::string_view why) {
  return InvalidArgument("invalid duration \"" + std::string(text) + "\": " + std::string(why) +
                         " (want e.g. \"500ms\", \"10m\", \"1h30m\")");
}

// Nanoseconds per unit, or 0 for an unknown unit.
uint64_t UnitNanos(std::string_view unit) {
  if (unit == "ns") return 1;
  if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") return 1000;
  if (unit == "ms") return 1000 * 1000;
  if (unit == "s") return 1000ULL * 1000 * 1000;
  if (unit == "m") return 60ULL * 1000 * 1000 * 1000;
  if (unit == "h") return 3600ULL * 1000 * 1000 * 1000;
  return 0;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

Result<std::chrono::nanoseconds> ParseGoDuration(std::string_view text) {
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return std::chrono::nanoseconds(0);
  if (s.empty()) return BadDuration(text, "empty");
  uint64_t total = 0;
  while (!s.empty()) {
    size_t i = 0;
    uint64_t whole = 0;
    bool overflow = false;
    for (; i < s.size() && IsDigit(s[i]); ++i) {
      uint64_t digit = static_cast<uint64_t>(s[i] - '0');
      if (overflow || whole > (kMaxNanos - digit) / 10) {
        overflow = true;
      } else {
        whole = whole * 10 + digit;
      }
    }
    size_t int_digits = i;
    double frac = 0, scale = 1;
    if (i < s.size() && s[i] == '.') {
      for (++i; i < s.size() && IsDigit(s[i]); ++i) {
        scale /= 10;
        frac += (s[i] - '0') * scale;
      }
    }
    if (int_digits == 0 && scale == 1) return BadDuration(text, "missing number");
    size_t unit_end = i;
    while (unit_end < s.size() && !IsDigit(s[unit_end]) && s[unit_end] != '.') ++unit_end;
    uint64_t unit = UnitNanos(s.substr(i, unit_end - i));
    if (unit_end == i) return BadDuration(text, "missing unit");
    if (unit == 0)
      return BadDuration(text, "unknown unit \"" + std::string(s.substr(i, unit_end - i)) + "\"");
    if (overflow || whole > kMaxNanos / unit) return BadDuration(text, "overflows");
    uint64_t part = whole * unit + static_cast<uint64_t>(frac * static_cast<double>(unit));
    if (part > kMaxNanos - total) return BadDuration(text, "overflows");
    total += part;
    s.remove_prefix(unit_end);
  }
  if (total == kMaxNanos && !negative) return BadDuration(text, "overflows");
  int64_t ns = total == kMaxNanos ? INT64_MIN : static_cast<int64_t>(total);
  return std::chrono::nanoseconds(negative && total != kMaxNanos ? -ns : ns);
}

}  // namespace sluice::config
