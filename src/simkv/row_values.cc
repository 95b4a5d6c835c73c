// RandomValue and HandleColumnValue (row_writer.h): column values as TiDB
// stores them.
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "codec/json_binary.h"
#include "codec/mysql_type.h"
#include "codec/mytime.h"
#include "simkv/row_writer.h"

namespace sluice::simkv {

namespace mt = codec::mysql_type;
namespace mf = codec::mysql_flag;

namespace {

struct IntRange {
  int64_t min;
  uint64_t max;
};

IntRange RangeOf(uint8_t tp, bool is_unsigned) {
  int bits = tp == mt::kTiny    ? 8
             : tp == mt::kShort ? 16
             : tp == mt::kInt24 ? 24
             : tp == mt::kLong  ? 32
                                : 64;
  if (is_unsigned) {
    return {0, bits == 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t{1} << bits) - 1};
  }
  if (bits == 64) {
    return {std::numeric_limits<int64_t>::min(),
            static_cast<uint64_t>(std::numeric_limits<int64_t>::max())};
  }
  return {-(int64_t{1} << (bits - 1)), (uint64_t{1} << (bits - 1)) - 1};
}

codec::Datum IntegerValue(const model::FieldType& type, WorkloadRng* rng) {
  bool is_unsigned = type.HasFlag(mf::kUnsigned);
  IntRange r = RangeOf(type.tp, is_unsigned);
  uint64_t pick = rng->Uniform(10);
  if (is_unsigned) {
    bool full = r.max == std::numeric_limits<uint64_t>::max();
    uint64_t v = pick == 0 ? r.max : pick == 1 ? 0 : full ? rng->Next() : rng->Uniform(r.max + 1);
    return codec::Datum::Uint64(v);
  }
  int64_t max = static_cast<int64_t>(r.max);
  int64_t v = pick == 0 ? max : pick == 1 ? r.min : rng->Range(r.min, max);
  return codec::Datum::Int64(v);
}

std::string Digits(WorkloadRng* rng, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += static_cast<char>('0' + rng->Uniform(10));
  return out;
}

// Text with exactly `frac` fraction digits and no leading zeros, as the row
// decoder prints it back.
codec::Datum DecimalValue(const model::FieldType& type, WorkloadRng* rng) {
  int frac = static_cast<int>(type.decimal);
  int int_digits = static_cast<int>(type.flen) - frac;
  std::string int_part = Digits(rng, static_cast<int>(rng->Uniform(int_digits + 1)));
  size_t nz = int_part.find_first_not_of('0');
  int_part = nz == std::string::npos ? "0" : int_part.substr(nz);
  std::string frac_part = Digits(rng, frac);
  bool zero = int_part == "0" && frac_part.find_first_not_of('0') == std::string::npos;
  std::string text = (!zero && rng->Chance(0.3)) ? "-" : "";
  text += int_part;
  if (frac > 0) text += "." + frac_part;
  return codec::Datum::Decimal(std::move(text), static_cast<int>(type.flen), frac);
}

int64_t TruncateMicros(int64_t micros, int64_t fsp) {
  int64_t unit = 1;
  for (int64_t i = fsp; i < 6; ++i) unit *= 10;
  return micros - micros % unit;
}

codec::Datum TimeValue(const model::FieldType& type, WorkloadRng* rng) {
  codec::MysqlTime t;
  t.year = static_cast<int>(rng->Range(1971, 2037));
  t.month = static_cast<int>(rng->Range(1, 12));
  t.day = static_cast<int>(rng->Range(1, 28));
  int fsp = 0;
  if (type.tp != mt::kDate) {
    fsp = static_cast<int>(type.decimal);
    t.hour = static_cast<int>(rng->Range(0, 23));
    t.minute = static_cast<int>(rng->Range(0, 59));
    t.second = static_cast<int>(rng->Range(0, 59));
    t.microsecond = static_cast<int>(TruncateMicros(rng->Range(0, 999999), fsp));
  }
  return codec::Datum::Time(codec::ToPackedUint(t), type.tp, fsp);
}

codec::Datum DurationValue(const model::FieldType& type, WorkloadRng* rng) {
  int64_t seconds = rng->Range(0, 838) * 3600 + rng->Range(0, 59) * 60 + rng->Range(0, 59);
  int64_t micros = TruncateMicros(rng->Range(0, 999999), type.decimal);
  if (seconds == 838 * 3600 + 59 * 60 + 59) micros = 0;  // The maximum TIME.
  int64_t nanos = seconds * 1000000000 + micros * 1000;
  if (rng->Chance(0.3)) nanos = -nanos;
  return codec::Datum::Duration(nanos, static_cast<int>(type.decimal));
}

codec::Datum RandomJson(WorkloadRng* rng) {
  nlohmann::json doc = {
      {"id", rng->Range(-1000000, 1000000)},
      {"name", rng->Text(rng->Uniform(12))},
      {"ok", rng->Chance(0.5)},
      {"score", static_cast<double>(rng->Range(-100000, 100000)) / 8.0},
      {"tags", nlohmann::json::array({rng->Text(3), rng->Range(0, 9), nullptr})},
      {"nested", {{"depth", 2}, {"u", rng->Next() | (uint64_t{1} << 63)}}},
  };
  std::string binary;
  if (!codec::EncodeJsonBinary(doc, &binary).ok()) return codec::Datum::Null();
  return codec::Datum::Json(std::move(binary));
}

size_t StringLength(const model::FieldType& type, WorkloadRng* rng, size_t cap) {
  size_t max = type.flen > 0 ? static_cast<size_t>(type.flen) : cap;
  return rng->Uniform(std::min(max, cap) + 1);
}

codec::Datum StringValue(const model::ColumnInfo& column, const ValueOptions& options,
                         WorkloadRng* rng) {
  const model::FieldType& type = column.type;
  bool binary = type.charset == "binary";
  if (column.name.lower == "pad") {
    size_t n = static_cast<size_t>(std::max<int64_t>(options.pad_width, 0));
    if (type.flen > 0) n = std::min(n, static_cast<size_t>(type.flen));
    return codec::Datum::Bytes(rng->Text(n));
  }
  if (type.tp == mt::kString && binary) {  // BINARY(n) is padded to n bytes.
    std::string v = rng->Bytes(StringLength(type, rng, 255));
    v.resize(static_cast<size_t>(type.flen), '\0');
    return codec::Datum::Bytes(std::move(v));
  }
  size_t n = StringLength(type, rng, type.tp == mt::kVarchar || type.tp == mt::kString ? 64 : 128);
  return codec::Datum::Bytes(binary ? rng->Bytes(n) : rng->Text(n));
}

uint64_t LowBits(uint64_t v, int64_t bits) {
  return bits >= 64 ? v : v & ((uint64_t{1} << bits) - 1);
}

}  // namespace

codec::Datum RandomValue(const model::ColumnInfo& column, const ValueOptions& options,
                         WorkloadRng* rng) {
  const model::FieldType& type = column.type;
  bool nullable = !type.HasFlag(mf::kNotNull) && column.name.lower != "pad";
  if (nullable && rng->Chance(options.null_fraction)) return codec::Datum::Null();
  switch (type.tp) {
    case mt::kFloat:
      return codec::Datum::Float32(static_cast<float>(rng->Range(-4000000, 4000000)) / 4.0f);
    case mt::kDouble:
      return codec::Datum::Float64(
          static_cast<double>(rng->Range(-(int64_t{1} << 50), int64_t{1} << 50)) / 1024.0);
    case mt::kNewDecimal:
      return DecimalValue(type, rng);
    case mt::kDate:
    case mt::kDatetime:
    case mt::kTimestamp:
      return TimeValue(type, rng);
    case mt::kDuration:
      return DurationValue(type, rng);
    case mt::kYear:
      return codec::Datum::Int64(rng->Range(1901, 2155));
    case mt::kBit:
      return codec::Datum::Bit(LowBits(rng->Next(), type.flen));
    case mt::kEnum:
      return codec::Datum::Enum(1 + rng->Uniform(std::max<size_t>(type.elems.size(), 1)));
    case mt::kSet:
      return codec::Datum::Set(LowBits(rng->Next(), static_cast<int64_t>(type.elems.size())));
    case mt::kJson:
      return RandomJson(rng);
    default:
      if (codec::IsStringType(type.tp)) return StringValue(column, options, rng);
      return IntegerValue(type, rng);
  }
}

codec::Datum HandleColumnValue(const model::ColumnInfo& column, int64_t handle) {
  if (codec::IsStringType(column.type.tp)) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "k%010lld", static_cast<long long>(handle));
    return codec::Datum::Bytes(buf);
  }
  if (column.type.HasFlag(mf::kUnsigned))
    return codec::Datum::Uint64(static_cast<uint64_t>(handle));
  return codec::Datum::Int64(handle);
}

}  // namespace sluice::simkv
