#include "codec/mytime.h"

#include <algorithm>

#include "codec/mysql_type.h"

namespace sluice::codec {

namespace {

constexpr uint64_t kNanosPerMicro = 1000;
constexpr uint64_t kNanosPerSecond = 1000000000;
constexpr uint64_t kNanosPerMinute = 60 * kNanosPerSecond;
constexpr uint64_t kNanosPerHour = 60 * kNanosPerMinute;

uint64_t Bits(uint64_t v, int offset, int width) { return (v >> offset) & ((1ULL << width) - 1); }

// Appends `v` in decimal with at least `width` digits.
void AppendNumber(uint64_t v, int width, std::string* out) {
  char buf[20];
  int n = 0;
  do {
    buf[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  for (int i = n; i < width; ++i) out->push_back('0');
  while (n > 0) out->push_back(buf[--n]);
}

void AppendFraction(uint64_t micros, int fsp, std::string* out) {
  fsp = std::clamp(fsp, 0, kMaxFsp);
  if (fsp == 0) return;
  std::string six;
  AppendNumber(micros, kMaxFsp, &six);
  out->push_back('.');
  out->append(six, 0, static_cast<size_t>(fsp));
}

// Reads exactly `n` digits at *pos.
bool ReadDigits(std::string_view s, size_t* pos, size_t n, int64_t* v) {
  if (*pos + n > s.size()) return false;
  int64_t r = 0;
  for (size_t i = 0; i < n; ++i) {
    char c = s[*pos + i];
    if (c < '0' || c > '9') return false;
    r = r * 10 + (c - '0');
  }
  *pos += n;
  *v = r;
  return true;
}

bool Expect(std::string_view s, size_t* pos, char c) {
  if (*pos >= s.size() || s[*pos] != c) return false;
  ++*pos;
  return true;
}

// Parses an optional ".f{1,6}" suffix into microseconds; must end the text.
bool ReadFraction(std::string_view s, size_t* pos, int64_t* micros) {
  *micros = 0;
  if (*pos == s.size()) return true;
  if (!Expect(s, pos, '.')) return false;
  size_t n = s.size() - *pos;
  if (n < 1 || n > static_cast<size_t>(kMaxFsp)) return false;
  int64_t v = 0;
  if (!ReadDigits(s, pos, n, &v)) return false;
  for (size_t i = n; i < static_cast<size_t>(kMaxFsp); ++i) v *= 10;
  *micros = v;
  return true;
}

}  // namespace

uint64_t ToPackedUint(const MysqlTime& t) {
  uint64_t ymd = ((static_cast<uint64_t>(t.year) * 13 + static_cast<uint64_t>(t.month)) << 5) |
                 static_cast<uint64_t>(t.day);
  uint64_t hms = (static_cast<uint64_t>(t.hour) << 12) | (static_cast<uint64_t>(t.minute) << 6) |
                 static_cast<uint64_t>(t.second);
  return (((ymd << 17) | hms) << 24) | static_cast<uint64_t>(t.microsecond);
}

MysqlTime FromPackedUint(uint64_t packed) {
  MysqlTime t;
  uint64_t ymdhms = packed >> 24;
  uint64_t ymd = ymdhms >> 17;
  uint64_t ym = ymd >> 5;
  uint64_t hms = ymdhms & ((1ULL << 17) - 1);
  t.year = static_cast<int>(ym / 13);
  t.month = static_cast<int>(ym % 13);
  t.day = static_cast<int>(ymd & 31);
  t.hour = static_cast<int>(hms >> 12);
  t.minute = static_cast<int>((hms >> 6) & 63);
  t.second = static_cast<int>(hms & 63);
  t.microsecond = static_cast<int>(packed & ((1ULL << 24) - 1));
  return t;
}

uint64_t ToCoreTime(const MysqlTime& t) {
  return (static_cast<uint64_t>(t.year) << 50) | (static_cast<uint64_t>(t.month) << 46) |
         (static_cast<uint64_t>(t.day) << 41) | (static_cast<uint64_t>(t.hour) << 36) |
         (static_cast<uint64_t>(t.minute) << 30) | (static_cast<uint64_t>(t.second) << 24) |
         (static_cast<uint64_t>(t.microsecond) << 4);
}

MysqlTime FromCoreTime(uint64_t core) {
  MysqlTime t;
  t.year = static_cast<int>(Bits(core, 50, 14));
  t.month = static_cast<int>(Bits(core, 46, 4));
  t.day = static_cast<int>(Bits(core, 41, 5));
  t.hour = static_cast<int>(Bits(core, 36, 5));
  t.minute = static_cast<int>(Bits(core, 30, 6));
  t.second = static_cast<int>(Bits(core, 24, 6));
  t.microsecond = static_cast<int>(Bits(core, 4, 20));
  return t;
}

Status ValidateTime(const MysqlTime& t) {
  bool ok = t.year >= 0 && t.year <= 9999 && t.month >= 0 && t.month <= 12 && t.day >= 0 &&
            t.day <= 31 && t.hour >= 0 && t.hour <= 23 && t.minute >= 0 && t.minute <= 59 &&
            t.second >= 0 && t.second <= 59 && t.microsecond >= 0 && t.microsecond <= 999999;
  return ok ? Status::Ok() : InvalidArgument("time: field out of range");
}

void AppendTime(const MysqlTime& t, uint8_t time_type, int fsp, std::string* out) {
  AppendNumber(static_cast<uint64_t>(t.year), 4, out);
  out->push_back('-');
  AppendNumber(static_cast<uint64_t>(t.month), 2, out);
  out->push_back('-');
  AppendNumber(static_cast<uint64_t>(t.day), 2, out);
  if (time_type == mysql_type::kDate || time_type == mysql_type::kNewDate) return;
  out->push_back(' ');
  AppendNumber(static_cast<uint64_t>(t.hour), 2, out);
  out->push_back(':');
  AppendNumber(static_cast<uint64_t>(t.minute), 2, out);
  out->push_back(':');
  AppendNumber(static_cast<uint64_t>(t.second), 2, out);
  AppendFraction(static_cast<uint64_t>(t.microsecond), fsp, out);
}

std::string FormatTime(const MysqlTime& t, uint8_t time_type, int fsp) {
  std::string out;
  AppendTime(t, time_type, fsp, &out);
  return out;
}

void AppendDuration(int64_t nanos, int fsp, std::string* out) {
  uint64_t abs = static_cast<uint64_t>(nanos);
  if (nanos < 0) {
    out->push_back('-');
    abs = 0 - abs;
  }
  AppendNumber(abs / kNanosPerHour, 2, out);
  out->push_back(':');
  AppendNumber(abs / kNanosPerMinute % 60, 2, out);
  out->push_back(':');
  AppendNumber(abs / kNanosPerSecond % 60, 2, out);
  AppendFraction(abs / kNanosPerMicro % 1000000, fsp, out);
}

std::string FormatDuration(int64_t nanos, int fsp) {
  std::string out;
  AppendDuration(nanos, fsp, &out);
  return out;
}

Result<MysqlTime> ParseTime(std::string_view text) {
  size_t pos = 0;
  int64_t y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0, us = 0;
  bool ok = ReadDigits(text, &pos, 4, &y) && Expect(text, &pos, '-') &&
            ReadDigits(text, &pos, 2, &mo) && Expect(text, &pos, '-') &&
            ReadDigits(text, &pos, 2, &d);
  if (ok && pos != text.size()) {
    ok = Expect(text, &pos, ' ') && ReadDigits(text, &pos, 2, &h) && Expect(text, &pos, ':') &&
         ReadDigits(text, &pos, 2, &mi) && Expect(text, &pos, ':') &&
         ReadDigits(text, &pos, 2, &s) && ReadFraction(text, &pos, &us);
  }
  if (!ok) return InvalidArgument("time: malformed '" + std::string(text) + "'");
  MysqlTime t{static_cast<int>(y),  static_cast<int>(mo), static_cast<int>(d), static_cast<int>(h),
              static_cast<int>(mi), static_cast<int>(s),  static_cast<int>(us)};
  RETURN_IF_ERROR(ValidateTime(t));
  return t;
}

Result<int64_t> ParseDuration(std::string_view text) {
  size_t pos = 0;
  bool negative = Expect(text, &pos, '-');
  size_t colon = text.find(':', pos);
  size_t hour_digits = colon == std::string_view::npos ? 0 : colon - pos;
  int64_t h = 0, mi = 0, s = 0, us = 0;
  bool ok = hour_digits >= 1 && hour_digits <= 4 && ReadDigits(text, &pos, hour_digits, &h) &&
            Expect(text, &pos, ':') && ReadDigits(text, &pos, 2, &mi) && Expect(text, &pos, ':') &&
            ReadDigits(text, &pos, 2, &s) && ReadFraction(text, &pos, &us) && mi <= 59 && s <= 59;
  if (!ok) return InvalidArgument("duration: malformed '" + std::string(text) + "'");
  int64_t nanos =
      h * static_cast<int64_t>(kNanosPerHour) + mi * static_cast<int64_t>(kNanosPerMinute) +
      s * static_cast<int64_t>(kNanosPerSecond) + us * static_cast<int64_t>(kNanosPerMicro);
  return negative ? -nanos : nanos;
}

}  // namespace sluice::codec
