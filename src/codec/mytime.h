// MySQL DATE/DATETIME/TIMESTAMP and TIME values as TiDB encodes them
// (pkg/types/time.go, core_time.go): the packed uint64
// used in keys and rows, the in-memory CoreTime layout used inside binary
// JSON, and MySQL text formatting. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace sluice::codec {

inline constexpr int kMaxFsp = 6;

// Broken-down time. Fields are not range-checked here; use ParseTime or
// ValidateTime for external input.
struct MysqlTime {
  int year = 0;
  int month = 0;
  int day = 0;
  int hour = 0;
  int minute = 0;
  int second = 0;
  int microsecond = 0;

  friend bool operator==(const MysqlTime&, const MysqlTime&) = default;
};

// Packed form: ((((year*13+month)<<5 | day) << 17 | hour<<12 | minute<<6 |
// second) << 24) | microsecond. The zero time packs to 0.
uint64_t ToPackedUint(const MysqlTime& t);
MysqlTime FromPackedUint(uint64_t packed);

// CoreTime bit layout (year@50, month@46, day@41, hour@36, minute@30,
// second@24, microsecond@4); the low four bits (fsp/type) are left zero on
// encode and ignored on decode.
uint64_t ToCoreTime(const MysqlTime& t);
MysqlTime FromCoreTime(uint64_t core);

// InvalidArgument unless month 0..12, day 0..31, hour 0..23, minute and
// second 0..59, microsecond 0..999999 and year 0..9999.
Status ValidateTime(const MysqlTime& t);

// "YYYY-MM-DD" for DATE (mysql_type::kDate / kNewDate); otherwise
// "YYYY-MM-DD HH:MM:SS" followed by "." and the first `fsp` digits of the
// six-digit microseconds when fsp > 0. fsp is clamped to 0..6.
void AppendTime(const MysqlTime& t, uint8_t time_type, int fsp, std::string* out);
std::string FormatTime(const MysqlTime& t, uint8_t time_type, int fsp);

// "[-]HH:MM:SS" (hours may exceed two digits) followed by "." and the first
// `fsp` digits of the six-digit microseconds when fsp > 0.
void AppendDuration(int64_t nanos, int fsp, std::string* out);
std::string FormatDuration(int64_t nanos, int fsp);

// Parses "YYYY-MM-DD" or "YYYY-MM-DD HH:MM:SS[.f{1,6}]" (validated).
Result<MysqlTime> ParseTime(std::string_view text);
// Parses "[-]H+:MM:SS[.f{1,6}]" into nanoseconds.
Result<int64_t> ParseDuration(std::string_view text);

}  // namespace sluice::codec
