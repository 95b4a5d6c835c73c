#include "sink/storage/schema_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "codec/crc32.h"
#include "codec/mysql_type.h"
#include "sink/codec/column_value.h"
#include "sink/codec/go_format.h"

namespace sluice::sink::storage {

namespace mt = sluice::codec::mysql_type;
namespace mf = sluice::codec::mysql_flag;
using model::JsonValue;

namespace {

// TiDB mysql.GetDefaultFieldLengthAndDecimal.
std::pair<int64_t, int64_t> DefaultFlenAndDecimal(uint8_t tp) {
  switch (tp) {
    case mt::kBit:
      return {1, 0};
    case mt::kTiny:
      return {4, 0};
    case mt::kShort:
      return {6, 0};
    case mt::kInt24:
      return {9, 0};
    case mt::kLong:
      return {11, 0};
    case mt::kLonglong:
      return {20, 0};
    case mt::kDouble:
      return {22, -1};
    case mt::kFloat:
      return {12, -1};
    case mt::kNewDecimal:
      return {10, 0};
    case mt::kDuration:
      return {10, 0};
    case mt::kDate:
      return {10, 0};
    case mt::kTimestamp:
      return {19, 0};
    case mt::kDatetime:
      return {19, 0};
    case mt::kYear:
      return {4, 0};
    case mt::kString:
      return {1, 0};
    case mt::kVarchar:
      return {5, 0};
    case mt::kVarString:
      return {5, 0};
    case mt::kTinyBlob:
      return {255, 0};
    case mt::kBlob:
      return {65535, 0};
    case mt::kMediumBlob:
      return {16777215, 0};
    case mt::kLongBlob:
      return {4294967295, 0};
    case mt::kJson:
      return {4294967295, 0};
    case mt::kNull:
      return {0, 0};
    case mt::kSet:
      return {-1, 0};
    case mt::kEnum:
      return {-1, 0};
    default:
      return {-1, -1};
  }
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// TiCDC TableCol.fromTiColumnInfo.
SchemaColumn FromColumnInfo(const model::ColumnInfo& col, bool output_column_id) {
  const model::FieldType& ft = col.type;
  auto [default_flen, default_decimal] = DefaultFlenAndDecimal(ft.tp);
  const bool decimal_not_default =
      ft.decimal != default_decimal && ft.decimal != 0 && ft.decimal != model::kUnspecifiedLength;
  int64_t flen = ft.flen == model::kUnspecifiedLength ? default_flen : ft.flen;
  int64_t decimal = ft.decimal == model::kUnspecifiedLength ? default_decimal : ft.decimal;
  SchemaColumn c;
  if (output_column_id) c.id = std::to_string(col.id);
  c.name = col.name.original;
  c.type = Upper(codec::TypeToStr(ft.tp, ft.charset));
  if (ft.HasFlag(mf::kUnsigned)) c.type += " UNSIGNED";
  if (ft.HasFlag(mf::kPriKey)) c.is_pk = "true";
  if (ft.HasFlag(mf::kNotNull)) c.nullable = "false";
  if (ft.tp == mt::kBit && col.default_bit.has_value()) {
    c.default_value = *col.default_bit;
  } else {
    c.default_value = col.default_value;
  }
  switch (ft.tp) {
    case mt::kTimestamp:
    case mt::kDatetime:
    case mt::kDuration:
      if (decimal_not_default) c.scale = std::to_string(decimal);
      break;
    case mt::kDouble:
    case mt::kFloat:
      c.precision = std::to_string(flen);
      if (decimal_not_default) c.scale = std::to_string(decimal);
      break;
    case mt::kNewDecimal:
      c.precision = std::to_string(flen);
      c.scale = std::to_string(decimal);
      break;
    case mt::kTiny:
    case mt::kShort:
    case mt::kInt24:
    case mt::kLong:
    case mt::kLonglong:
    case mt::kBit:
    case mt::kVarchar:
    case mt::kString:
    case mt::kVarString:
    case mt::kBlob:
    case mt::kTinyBlob:
    case mt::kMediumBlob:
    case mt::kLongBlob:
    case mt::kYear:
      c.precision = std::to_string(flen);
      break;
    case mt::kEnum:
    case mt::kSet:
      c.elems = ft.elems;
      break;
    default:
      break;
  }
  return c;
}

JsonValue ColumnJson(const SchemaColumn& c) {
  JsonValue j = JsonValue::object();
  if (!c.id.empty()) j["ColumnId"] = c.id;
  j["ColumnName"] = c.name;
  j["ColumnType"] = c.type;
  if (!c.default_value.is_null()) j["ColumnDefault"] = c.default_value;
  if (!c.precision.empty()) j["ColumnPrecision"] = c.precision;
  if (!c.scale.empty()) j["ColumnScale"] = c.scale;
  if (!c.nullable.empty()) j["ColumnNullable"] = c.nullable;
  if (!c.is_pk.empty()) j["ColumnIsPk"] = c.is_pk;
  if (!c.elems.empty()) j["ColumnElems"] = c.elems;
  return j;
}

JsonValue ColumnsJson(const std::vector<SchemaColumn>& columns) {
  if (columns.empty()) return JsonValue();  // A nil slice: null.
  JsonValue arr = JsonValue::array();
  for (const SchemaColumn& c : columns) arr.push_back(ColumnJson(c));
  return arr;
}

std::string StringField(const JsonValue& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Result<SchemaColumn> ParseColumn(const JsonValue& j) {
  if (!j.is_object()) return Corruption("schema file: a column is not an object");
  SchemaColumn c;
  c.id = StringField(j, "ColumnId");
  c.name = StringField(j, "ColumnName");
  c.type = StringField(j, "ColumnType");
  if (c.name.empty() || c.type.empty()) {
    return Corruption("schema file: a column lacks ColumnName or ColumnType");
  }
  auto def = j.find("ColumnDefault");
  if (def != j.end()) c.default_value = *def;
  c.precision = StringField(j, "ColumnPrecision");
  c.scale = StringField(j, "ColumnScale");
  c.nullable = StringField(j, "ColumnNullable");
  c.is_pk = StringField(j, "ColumnIsPk");
  auto elems = j.find("ColumnElems");
  if (elems != j.end() && elems->is_array()) {
    for (const auto& e : *elems) {
      if (!e.is_string()) return Corruption("schema file: ColumnElems holds a non-string");
      c.elems.push_back(e.get<std::string>());
    }
  }
  return c;
}

}  // namespace

bool SchemaColumn::IsBinary() const {
  return type.find("BLOB") != std::string::npos || type.find("BINARY") != std::string::npos;
}

SchemaFile SchemaFile::ForTable(const event::TableSchema& schema, uint64_t table_version,
                                bool output_column_id) {
  SchemaFile f;
  f.table_version = table_version;
  f.schema = schema.schema_name();
  f.table = schema.table_name();
  f.total_columns = static_cast<int>(schema.columns().size());
  for (const auto& col : schema.columns())
    f.columns.push_back(FromColumnInfo(col, output_column_id));
  return f;
}

SchemaFile SchemaFile::ForDdl(const event::DdlEvent& ddl, bool output_column_id) {
  SchemaFile f;
  if (ddl.table_schema != nullptr) {
    f = ForTable(*ddl.table_schema, ddl.finished_ts.value(), output_column_id);
  } else {
    f.schema = ddl.schema_name;
    f.table = ddl.table_name;
    f.table_version = ddl.finished_ts.value();
  }
  f.query = ddl.query;
  f.type = static_cast<uint8_t>(ddl.type);
  return f;
}

std::string SchemaFile::Marshal() const {
  JsonValue j = JsonValue::object();
  j["Table"] = table;
  j["Schema"] = schema;
  j["Version"] = version;
  j["TableVersion"] = table_version;
  j["Query"] = query;
  j["Type"] = type;
  j["TableColumns"] = ColumnsJson(columns);
  j["TableColumnsTotal"] = total_columns;
  return codec::GoIndent(model::GoMarshal(j), "    ");
}

uint32_t SchemaFile::Checksum() const {
  std::vector<SchemaColumn> sorted = columns;
  std::sort(sorted.begin(), sorted.end(),
            [](const SchemaColumn& a, const SchemaColumn& b) { return a.name < b.name; });
  JsonValue j = JsonValue::object();
  j["Table"] = table;
  j["Schema"] = schema;
  j["Version"] = 0;
  // TiCDC sorts a copy made with make(): never nil, so "[]" when empty.
  j["TableColumns"] = sorted.empty() ? JsonValue::array() : ColumnsJson(sorted);
  j["TableColumnsTotal"] = total_columns;
  return sluice::codec::Crc32(codec::GoIndent(model::GoMarshal(j), "    "));
}

std::string SchemaFile::Path() const {
  std::string name = fmt::format("schema_{}_{:010}.json", table_version, Checksum());
  if (total_columns == 0 && table.empty()) return fmt::format("{}/meta/{}", schema, name);
  return fmt::format("{}/{}/meta/{}", schema, table, name);
}

Result<SchemaFile> SchemaFile::Parse(std::string_view json) {
  ASSIGN_OR_RETURN(JsonValue j, model::ParseJsonDocument(json));
  if (!j.is_object()) return Corruption("schema file is not a JSON object");
  SchemaFile f;
  f.table = StringField(j, "Table");
  f.schema = StringField(j, "Schema");
  auto number = [&](const char* key, uint64_t* out) -> Status {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_unsigned()) {
      return Corruption(fmt::format("schema file: {} is missing or not a number", key));
    }
    *out = it->get<uint64_t>();
    return Status::Ok();
  };
  uint64_t type = 0, total = 0;
  RETURN_IF_ERROR(number("Version", &f.version));
  RETURN_IF_ERROR(number("TableVersion", &f.table_version));
  RETURN_IF_ERROR(number("Type", &type));
  RETURN_IF_ERROR(number("TableColumnsTotal", &total));
  if (type > 255 || total > (1u << 20)) return Corruption("schema file: Type or total too large");
  f.type = static_cast<uint8_t>(type);
  f.total_columns = static_cast<int>(total);
  f.query = StringField(j, "Query");
  auto cols = j.find("TableColumns");
  if (cols != j.end() && cols->is_array()) {
    for (const auto& c : *cols) {
      ASSIGN_OR_RETURN(SchemaColumn col, ParseColumn(c));
      f.columns.push_back(std::move(col));
    }
  }
  if (f.schema.empty()) return Corruption("schema file: empty Schema");
  return f;
}

std::optional<std::pair<uint64_t, uint32_t>> ParseSchemaFileName(std::string_view name) {
  if (!name.starts_with("schema_") || !name.ends_with(".json")) return std::nullopt;
  std::string_view body = name.substr(7, name.size() - 7 - 5);
  size_t sep = body.find('_');
  if (sep == std::string_view::npos) return std::nullopt;
  std::string_view v = body.substr(0, sep), c = body.substr(sep + 1);
  if (v.empty() || c.size() != 10) return std::nullopt;
  uint64_t version = 0, checksum = 0;
  auto r1 = std::from_chars(v.data(), v.data() + v.size(), version);
  auto r2 = std::from_chars(c.data(), c.data() + c.size(), checksum);
  if (r1.ec != std::errc() || r1.ptr != v.data() + v.size() || r2.ec != std::errc() ||
      r2.ptr != c.data() + c.size() || checksum > 0xFFFFFFFFu) {
    return std::nullopt;
  }
  return std::make_pair(version, static_cast<uint32_t>(checksum));
}

}  // namespace sluice::sink::storage
