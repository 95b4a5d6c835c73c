#include "sink/codec/column_value.h"

#include <cstring>
#include <limits>

#include "codec/model/go_json.h"
#include "codec/mysql_type.h"
#include "event/value_format.h"
#include "sink/codec/go_format.h"

namespace sluice::sink::codec {

namespace mt = sluice::codec::mysql_type;
namespace mf = sluice::codec::mysql_flag;
using sluice::codec::Datum;
using sluice::codec::DatumKind;

namespace {

bool IsBlob(uint8_t tp) {
  return tp == mt::kTinyBlob || tp == mt::kMediumBlob || tp == mt::kLongBlob || tp == mt::kBlob;
}

std::string IntText(const Datum& d) {
  if (d.kind() == DatumKind::kInt64) return std::to_string(d.int64());
  return std::to_string(d.uint64());
}

// TiDB VectorFloat32.String(): "[1,2.5]" with each element in 'f' form.
Result<std::string> VectorText(std::string_view raw) {
  if (raw.size() < 4) return Corruption("vector shorter than its dimension");
  uint32_t dim = 0;
  std::memcpy(&dim, raw.data(), 4);
  if (raw.size() != 4 + size_t{dim} * 4) return Corruption("vector length does not match");
  std::string out = "[";
  for (uint32_t i = 0; i < dim; ++i) {
    float f;
    std::memcpy(&f, raw.data() + 4 + i * 4, 4);
    if (i > 0) out += ',';
    out += GoFormatFloat(f, 'f', 32);
  }
  out += ']';
  return out;
}

Result<std::string> Text(const Datum& d, const model::ColumnInfo& col) {
  ASSIGN_OR_RETURN(std::optional<std::string> text, event::DatumText(d, col));
  return text.value_or(std::string());
}

double FloatOf(const Datum& d) {
  return d.kind() == DatumKind::kFloat32 ? static_cast<double>(d.float32()) : d.float64();
}

}  // namespace

bool IsBinaryString(const model::ColumnInfo& col) {
  return col.type.HasFlag(mf::kBinary) || col.type.charset == "binary";
}

std::string TypeToStr(uint8_t tp, std::string_view charset) {
  std::string ts;
  switch (tp) {
    case mt::kBit:
      ts = "bit";
      break;
    case mt::kBlob:
      ts = "text";
      break;
    case mt::kDate:
      ts = "date";
      break;
    case mt::kDatetime:
      ts = "datetime";
      break;
    case mt::kUnspecified:
      ts = "unspecified";
      break;
    case mt::kNewDecimal:
      ts = "decimal";
      break;
    case mt::kDouble:
      ts = "double";
      break;
    case mt::kEnum:
      ts = "enum";
      break;
    case mt::kFloat:
      ts = "float";
      break;
    case mt::kGeometry:
      ts = "geometry";
      break;
    case mt::kVectorFloat32:
      ts = "vector";
      break;
    case mt::kInt24:
      ts = "mediumint";
      break;
    case mt::kJson:
      ts = "json";
      break;
    case mt::kLong:
      ts = "int";
      break;
    case mt::kLonglong:
      ts = "bigint";
      break;
    case mt::kLongBlob:
      ts = "longtext";
      break;
    case mt::kMediumBlob:
      ts = "mediumtext";
      break;
    case mt::kNull:
      ts = "null";
      break;
    case mt::kSet:
      ts = "set";
      break;
    case mt::kShort:
      ts = "smallint";
      break;
    case mt::kString:
      ts = "char";
      break;
    case mt::kDuration:
      ts = "time";
      break;
    case mt::kTimestamp:
      ts = "timestamp";
      break;
    case mt::kTiny:
      ts = "tinyint";
      break;
    case mt::kTinyBlob:
      ts = "tinytext";
      break;
    case mt::kVarchar:
      ts = "varchar";
      break;
    case mt::kVarString:
      ts = "var_string";
      break;
    case mt::kYear:
      ts = "year";
      break;
    default:
      break;
  }
  if (charset != "binary") return ts;
  auto replace = [&](std::string_view from, std::string_view to) {
    size_t pos = ts.find(from);
    if (pos != std::string::npos) ts.replace(pos, from.size(), to);
  };
  if (IsBlob(tp)) {
    replace("text", "blob");
  } else if (tp == mt::kString || tp == mt::kVarchar) {
    replace("char", "binary");
  } else if (tp == mt::kNull) {
    ts = "binary";
  }
  return ts;
}

std::string CanalMysqlType(const model::ColumnInfo& col) {
  std::string t = TypeToStr(col.type.tp, col.type.charset);
  if (col.type.HasFlag(mf::kUnsigned) && t != "bit" && t != "year") t += " unsigned";
  if (col.type.HasFlag(mf::kZerofill) && !t.starts_with("year")) t += " zerofill";
  return t;
}

int CanalJavaType(const model::ColumnInfo& col) {
  namespace jt = java_type;
  const bool binary = IsBinaryString(col);
  switch (col.type.tp) {
    case mt::kBit:
      return jt::kBit;
    case mt::kTinyBlob:
    case mt::kMediumBlob:
    case mt::kLongBlob:
    case mt::kBlob:
      return binary ? jt::kBlob : jt::kClob;
    case mt::kVarchar:
    case mt::kVarString:
      return binary ? jt::kBlob : jt::kVarchar;
    case mt::kString:
      return binary ? jt::kBlob : jt::kChar;
    case mt::kEnum:
      return jt::kInteger;
    case mt::kSet:
      return jt::kBit;
    case mt::kDate:
    case mt::kNewDate:
      return jt::kDate;
    case mt::kDatetime:
    case mt::kTimestamp:
      return jt::kTimestamp;
    case mt::kDuration:
      return jt::kTime;
    case mt::kNewDecimal:
      return jt::kDecimal;
    case mt::kInt24:
    case mt::kLong:
      return jt::kInteger;
    case mt::kTiny:
      return jt::kTinyint;
    case mt::kShort:
      return jt::kSmallint;
    case mt::kLonglong:
      return jt::kBigint;
    case mt::kFloat:
      return jt::kReal;
    case mt::kDouble:
      return jt::kDouble;
    default:
      return jt::kVarchar;  // JSON, YEAR, vector and the rest.
  }
}

Result<CsvField> CsvValue(const Datum& d, const model::ColumnInfo& col, BinaryEncoding binary) {
  CsvField f;
  if (d.is_null()) return f;
  f.quoted = true;
  switch (col.type.tp) {
    case mt::kVarchar:
    case mt::kString:
    case mt::kVarString:
    case mt::kTinyBlob:
    case mt::kMediumBlob:
    case mt::kLongBlob:
    case mt::kBlob:
      if (IsBinaryString(col)) {
        f.text =
            binary == BinaryEncoding::kHex ? HexEncode(d.bytes()) : model::Base64Encode(d.bytes());
      } else {
        f.text = std::string(d.bytes());
      }
      return f;
    case mt::kVectorFloat32: {
      ASSIGN_OR_RETURN(f.text, VectorText(d.bytes()));
      return f;
    }
    case mt::kBit:
      f.quoted = false;
      f.text = std::to_string(d.uint64());
      return f;
    case mt::kFloat:
    case mt::kDouble:
      f.quoted = false;
      f.text = GoFormatFloat(FloatOf(d), 'g', col.type.tp == mt::kFloat ? 32 : 64);
      return f;
    case mt::kTiny:
    case mt::kShort:
    case mt::kInt24:
    case mt::kLong:
    case mt::kLonglong:
    case mt::kYear:
      f.quoted = false;
      f.text = IntText(d);
      return f;
    default: {
      // Dates, times, enum and set names, decimals, JSON: Go strings.
      ASSIGN_OR_RETURN(f.text, Text(d, col));
      return f;
    }
  }
}

Result<std::optional<std::string>> CanalValue(const Datum& d, const model::ColumnInfo& col,
                                              int* java_type_out) {
  namespace jt = java_type;
  int java = CanalJavaType(col);
  *java_type_out = java;
  if (d.is_null()) return std::optional<std::string>();
  const bool is_unsigned = col.type.HasFlag(mf::kUnsigned);
  std::string value;
  switch (col.type.tp) {
    case mt::kBit:
    case mt::kEnum:
    case mt::kSet:
      value = std::to_string(d.uint64());
      break;
    case mt::kTinyBlob:
    case mt::kMediumBlob:
    case mt::kLongBlob:
    case mt::kBlob:
    case mt::kVarchar:
    case mt::kVarString:
    case mt::kString:
      value = IsBinaryString(col) ? Latin1ToUtf8(d.bytes()) : std::string(d.bytes());
      break;
    case mt::kTiny:
    case mt::kShort:
    case mt::kLong:
    case mt::kLonglong:
    case mt::kInt24:
    case mt::kYear:
      value = IntText(d);
      if (is_unsigned && d.kind() == DatumKind::kUint64) {
        uint64_t u = d.uint64();
        uint8_t tp = col.type.tp;
        if (tp == mt::kTiny && u > 127) *java_type_out = jt::kSmallint;
        if (tp == mt::kShort && u > 32767) *java_type_out = jt::kInteger;
        if (tp == mt::kLong && u > 2147483647u) *java_type_out = jt::kBigint;
        if (tp == mt::kLonglong && u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
          *java_type_out = jt::kDecimal;
        }
      }
      break;
    case mt::kFloat:
      value = GoFormatFloat(FloatOf(d), 'f', 32);
      break;
    case mt::kDouble:
      value = GoFormatFloat(FloatOf(d), 'f', 64);
      break;
    case mt::kVectorFloat32: {
      ASSIGN_OR_RETURN(value, VectorText(d.bytes()));
      break;
    }
    default: {
      ASSIGN_OR_RETURN(value, Text(d, col));
      break;
    }
  }
  return std::optional<std::string>(std::move(value));
}

}  // namespace sluice::sink::codec
