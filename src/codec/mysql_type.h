// MySQL column type codes and column flags as TiDB uses them
// (parser/mysql/type.go, const.go). Plain constants.
#pragma once

#include <cstdint>

namespace sluice::codec {

namespace mysql_type {
inline constexpr uint8_t kUnspecified = 0;  // also the old DECIMAL, never stored by TiDB
inline constexpr uint8_t kDecimal = 0;
inline constexpr uint8_t kTiny = 1;
inline constexpr uint8_t kShort = 2;
inline constexpr uint8_t kLong = 3;
inline constexpr uint8_t kFloat = 4;
inline constexpr uint8_t kDouble = 5;
inline constexpr uint8_t kNull = 6;
inline constexpr uint8_t kTimestamp = 7;
inline constexpr uint8_t kLonglong = 8;
inline constexpr uint8_t kInt24 = 9;
inline constexpr uint8_t kDate = 10;
inline constexpr uint8_t kDuration = 11;
inline constexpr uint8_t kDatetime = 12;
inline constexpr uint8_t kYear = 13;
inline constexpr uint8_t kNewDate = 14;
inline constexpr uint8_t kVarchar = 15;
inline constexpr uint8_t kBit = 16;
inline constexpr uint8_t kVectorFloat32 = 225;
inline constexpr uint8_t kJson = 245;
inline constexpr uint8_t kNewDecimal = 246;
inline constexpr uint8_t kEnum = 247;
inline constexpr uint8_t kSet = 248;
inline constexpr uint8_t kTinyBlob = 249;
inline constexpr uint8_t kMediumBlob = 250;
inline constexpr uint8_t kLongBlob = 251;
inline constexpr uint8_t kBlob = 252;
inline constexpr uint8_t kVarString = 253;
inline constexpr uint8_t kString = 254;
inline constexpr uint8_t kGeometry = 255;
}  // namespace mysql_type

namespace mysql_flag {
inline constexpr uint32_t kNotNull = 1 << 0;
inline constexpr uint32_t kPriKey = 1 << 1;
inline constexpr uint32_t kUniqueKey = 1 << 2;
inline constexpr uint32_t kMultipleKey = 1 << 3;
inline constexpr uint32_t kBlob = 1 << 4;
inline constexpr uint32_t kUnsigned = 1 << 5;
inline constexpr uint32_t kZerofill = 1 << 6;
inline constexpr uint32_t kBinary = 1 << 7;
inline constexpr uint32_t kEnum = 1 << 8;
inline constexpr uint32_t kAutoIncrement = 1 << 9;
inline constexpr uint32_t kTimestamp = 1 << 10;
inline constexpr uint32_t kSet = 1 << 11;
inline constexpr uint32_t kNoDefaultValue = 1 << 12;
inline constexpr uint32_t kOnUpdateNow = 1 << 13;
inline constexpr uint32_t kPartKey = 1 << 14;
inline constexpr uint32_t kNum = 1 << 15;
inline constexpr uint32_t kGeneratedColumn = 1 << 23;
}  // namespace mysql_flag

// Whether `type` is one of the integer types (not YEAR).
constexpr bool IsIntegerType(uint8_t type) {
  return type == mysql_type::kTiny || type == mysql_type::kShort || type == mysql_type::kLong ||
         type == mysql_type::kLonglong || type == mysql_type::kInt24;
}

// Whether `type` is stored as raw bytes (CHAR/VARCHAR/TEXT/BLOB/BINARY).
constexpr bool IsStringType(uint8_t type) {
  return type == mysql_type::kVarchar || type == mysql_type::kVarString ||
         type == mysql_type::kString || type == mysql_type::kTinyBlob ||
         type == mysql_type::kMediumBlob || type == mysql_type::kLongBlob ||
         type == mysql_type::kBlob;
}

// Whether `type` is DATE, DATETIME or TIMESTAMP (packed time values).
constexpr bool IsTimeType(uint8_t type) {
  return type == mysql_type::kDate || type == mysql_type::kDatetime ||
         type == mysql_type::kTimestamp || type == mysql_type::kNewDate;
}

}  // namespace sluice::codec
