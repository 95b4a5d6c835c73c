// Column types and columns as TiDB builds them for CREATE TABLE and ADD
// COLUMN: the FieldType defaults of pkg/parser/types (display widths,
// charsets, flags) and ColumnInfo at its current layout version. Used by the
// workload to write TableInfo documents a TiDB reader would accept as its own.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "codec/model/column_info.h"
#include "codec/model/field_type.h"

namespace sluice::simkv::tidb {

// ColumnInfoVersion2 and TableInfoVersion5 (the current TiDB layouts).
inline constexpr uint64_t kColumnInfoVersion = 2;
inline constexpr uint16_t kTableInfoVersion = 5;

inline constexpr std::string_view kUtf8mb4 = "utf8mb4";
inline constexpr std::string_view kUtf8mb4Bin = "utf8mb4_bin";
inline constexpr std::string_view kBinary = "binary";

// TINYINT .. BIGINT (tp one of the integer codes), signed or unsigned.
model::FieldType IntType(uint8_t tp, bool is_unsigned = false);
model::FieldType FloatType();
model::FieldType DoubleType();
model::FieldType DecimalType(int precision, int frac);
// CHAR(n) / VARCHAR(n) in utf8mb4_bin.
model::FieldType CharType(int64_t length);
model::FieldType VarcharType(int64_t length);
// BINARY(n) / VARBINARY(n): binary charset and the binary flag.
model::FieldType BinaryType(int64_t length);
model::FieldType VarbinaryType(int64_t length);
// TINYTEXT .. LONGTEXT and TINYBLOB .. LONGBLOB; `blob_tp` is one of the four
// blob type codes, which sets the length.
model::FieldType TextType(uint8_t blob_tp);
model::FieldType BlobType(uint8_t blob_tp);
model::FieldType DateType();
model::FieldType DatetimeType(int fsp);
model::FieldType TimestampType(int fsp);
model::FieldType TimeType(int fsp);
model::FieldType YearType();
model::FieldType BitType(int bits);
model::FieldType EnumType(std::vector<std::string> elems);
model::FieldType SetType(std::vector<std::string> elems);
model::FieldType JsonType();

// A public column at the current ColumnInfo version, nullable, no default.
model::ColumnInfo MakeColumn(int64_t id, std::string_view name, int64_t offset,
                             model::FieldType type);

// NOT NULL; without a default TiDB also sets the no-default-value flag.
void SetNotNull(model::ColumnInfo* column, bool has_default);
// DEFAULT `value` (its text, as TiDB stores it), which is also the origin
// default that rows written before an ADD COLUMN read back.
void SetDefault(model::ColumnInfo* column, std::string value);

}  // namespace sluice::simkv::tidb
