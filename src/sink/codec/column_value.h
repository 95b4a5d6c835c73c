// How TiCDC renders one column value and its type in the csv and canal-json
// protocols (pkg/sink/codec/csv/csv_message.go fromColValToCsvVal,
// pkg/sink/codec/canal/helper.go formatColumnValue, mysqlType2JavaType),
// and the TiDB type names they print (types.TypeToStr). Pure functions;
// thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "codec/datum.h"
#include "codec/model/column_info.h"
#include "common/status.h"

namespace sluice::sink::codec {

enum class BinaryEncoding : uint8_t { kBase64, kHex };

// Java SQL type codes canal-json reports in "sqlType" (java.sql.Types).
namespace java_type {
inline constexpr int kBit = -7;
inline constexpr int kTinyint = -6;
inline constexpr int kSmallint = 5;
inline constexpr int kInteger = 4;
inline constexpr int kBigint = -5;
inline constexpr int kReal = 7;
inline constexpr int kDouble = 8;
inline constexpr int kDecimal = 3;
inline constexpr int kChar = 1;
inline constexpr int kVarchar = 12;
inline constexpr int kDate = 91;
inline constexpr int kTime = 92;
inline constexpr int kTimestamp = 93;
inline constexpr int kBlob = 2004;
inline constexpr int kClob = 2005;
}  // namespace java_type

// One CSV field: nullopt for NULL (written as the null string). `quoted` is
// true for values TiCDC formats as Go strings (quoted or escaped); numbers
// are written bare.
struct CsvField {
  std::optional<std::string> text;
  bool quoted = false;
};

// True for a string column holding binary bytes (binary flag or charset).
bool IsBinaryString(const model::ColumnInfo& col);

// TiDB types.TypeToStr: "int", "varchar", "varbinary", "blob", "text", ...
std::string TypeToStr(uint8_t tp, std::string_view charset);

// canal-json "mysqlType": TypeToStr plus " unsigned" (not for bit/year)
// and " zerofill" (not for year).
std::string CanalMysqlType(const model::ColumnInfo& col);

// The value of `d` in column `col` as TiCDC's csv encoder writes it.
// Corruption when the datum does not fit the column.
Result<CsvField> CsvValue(const sluice::codec::Datum& d, const model::ColumnInfo& col,
                          BinaryEncoding binary);

// The value of `d` as canal-json text (nullopt for NULL) and, in
// *java_type_out, its "sqlType" code (which for unsigned integers depends
// on the value).
Result<std::optional<std::string>> CanalValue(const sluice::codec::Datum& d,
                                              const model::ColumnInfo& col, int* java_type_out);

// The "sqlType" code of a column, ignoring the value (mysqlType2JavaType).
int CanalJavaType(const model::ColumnInfo& col);

}  // namespace sluice::sink::codec
