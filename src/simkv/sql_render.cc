#include "simkv/sql_render.h"

#include <string>

#include "codec/mysql_type.h"

namespace sluice::simkv {

namespace mt = codec::mysql_type;
namespace mf = codec::mysql_flag;

namespace {

std::string WithLength(std::string_view name, int64_t n) {
  return std::string(name) + "(" + std::to_string(n) + ")";
}

std::string WithFsp(std::string_view name, int64_t fsp) {
  return fsp > 0 ? WithLength(name, fsp) : std::string(name);
}

std::string IntegerName(uint8_t tp) {
  switch (tp) {
    case mt::kTiny:
      return "TINYINT";
    case mt::kShort:
      return "SMALLINT";
    case mt::kInt24:
      return "MEDIUMINT";
    case mt::kLong:
      return "INT";
    default:
      return "BIGINT";
  }
}

std::string BlobName(uint8_t tp, bool binary) {
  const char* size = tp == mt::kTinyBlob     ? "TINY"
                     : tp == mt::kMediumBlob ? "MEDIUM"
                     : tp == mt::kLongBlob   ? "LONG"
                                             : "";
  return std::string(size) + (binary ? "BLOB" : "TEXT");
}

std::string Elements(std::string_view name, const model::FieldType& type) {
  std::string out(name);
  out += "(";
  for (size_t i = 0; i < type.elems.size(); ++i) {
    if (i > 0) out += ",";
    out += QuoteString(type.elems[i]);
  }
  return out + ")";
}

std::string PartitionSql(const model::PartitionInfo& p) {
  if (p.type == model::PartitionType::kHash) {
    return " PARTITION BY HASH (" + p.expr + ") PARTITIONS " + std::to_string(p.definitions.size());
  }
  std::string out = " PARTITION BY RANGE (" + p.expr + ") (";
  for (size_t i = 0; i < p.definitions.size(); ++i) {
    const model::PartitionDefinition& d = p.definitions[i];
    if (i > 0) out += ", ";
    out += "PARTITION " + QuoteName(d.name.original) + " VALUES LESS THAN (";
    out += d.less_than.empty() ? "MAXVALUE" : d.less_than[0];
    out += ")";
  }
  return out + ")";
}

std::string PrimaryKeySql(const model::TableInfo& table) {
  if (table.pk_is_handle) {
    const model::ColumnInfo* pk = table.GetPkHandleColumn();
    return pk == nullptr ? "" : ",\n  PRIMARY KEY (" + QuoteName(pk->name.original) + ")";
  }
  const model::IndexInfo* pk = table.GetPrimaryIndex();
  if (pk == nullptr) return "";
  std::string out = ",\n  PRIMARY KEY (";
  for (size_t i = 0; i < pk->columns.size(); ++i) {
    if (i > 0) out += ", ";
    out += QuoteName(pk->columns[i].name.original);
  }
  out += ")";
  if (table.is_common_handle) out += " /*T![clustered_index] CLUSTERED */";
  return out;
}

}  // namespace

std::string QuoteName(std::string_view name) {
  std::string out = "`";
  for (char c : name) {
    if (c == '`') out += '`';
    out += c;
  }
  return out + "`";
}

std::string QuoteString(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

std::string SqlType(const model::FieldType& t) {
  bool is_binary = t.HasFlag(mf::kBinary) && t.charset == "binary";
  std::string out;
  switch (t.tp) {
    case mt::kFloat:
      return "FLOAT";
    case mt::kDouble:
      return "DOUBLE";
    case mt::kNewDecimal:
      return "DECIMAL(" + std::to_string(t.flen) + "," + std::to_string(t.decimal) + ")";
    case mt::kString:
      return WithLength(is_binary ? "BINARY" : "CHAR", t.flen);
    case mt::kVarchar:
    case mt::kVarString:
      return WithLength(is_binary ? "VARBINARY" : "VARCHAR", t.flen);
    case mt::kTinyBlob:
    case mt::kBlob:
    case mt::kMediumBlob:
    case mt::kLongBlob:
      return BlobName(t.tp, is_binary);
    case mt::kDate:
      return "DATE";
    case mt::kDatetime:
      return WithFsp("DATETIME", t.decimal);
    case mt::kTimestamp:
      return WithFsp("TIMESTAMP", t.decimal);
    case mt::kDuration:
      return WithFsp("TIME", t.decimal);
    case mt::kYear:
      return "YEAR";
    case mt::kBit:
      return WithLength("BIT", t.flen);
    case mt::kEnum:
      return Elements("ENUM", t);
    case mt::kSet:
      return Elements("SET", t);
    case mt::kJson:
      return "JSON";
    default:
      out = IntegerName(t.tp);
      if (t.HasFlag(mf::kUnsigned)) out += " UNSIGNED";
      return out;
  }
}

std::string ColumnDefinitionSql(const model::ColumnInfo& column) {
  std::string out = QuoteName(column.name.original) + " " + SqlType(column.type);
  if (column.type.HasFlag(mf::kNotNull)) out += " NOT NULL";
  if (column.default_value.is_string()) {
    out += " DEFAULT " + QuoteString(column.default_value.get<std::string>());
  }
  return out;
}

std::string CreateTableSql(const model::TableInfo& table) {
  std::string out = "CREATE TABLE " + QuoteName(table.name.original) + " (";
  for (size_t i = 0; i < table.columns.size(); ++i) {
    out += i == 0 ? "\n  " : ",\n  ";
    out += ColumnDefinitionSql(table.columns[i]);
  }
  out += PrimaryKeySql(table);
  for (const model::IndexInfo& index : table.indices) {
    if (index.primary) continue;
    out += ",\n  " + std::string(index.unique ? "UNIQUE KEY " : "KEY ") +
           QuoteName(index.name.original) + " (";
    for (size_t i = 0; i < index.columns.size(); ++i) {
      if (i > 0) out += ", ";
      out += QuoteName(index.columns[i].name.original);
    }
    out += ")";
  }
  out += "\n) ENGINE=InnoDB DEFAULT CHARSET=" + table.charset + " COLLATE=" + table.collate;
  if (table.IsPartitioned()) out += PartitionSql(*table.partition);
  return out;
}

}  // namespace sluice::simkv
