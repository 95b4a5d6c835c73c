#include "apps/demo/row_formatter.h"

#include "codec/json_binary.h"
#include "codec/mysql_type.h"
#include "codec/mytime.h"
#include "codec/tablecodec.h"
#include "common/tso.h"

namespace sluice::demo {

namespace t = codec::mysql_type;

namespace {

std::string MysqlTypeName(const model::FieldType& ft) {
  switch (ft.tp) {
    case t::kTiny:
      return "tinyint";
    case t::kShort:
      return "smallint";
    case t::kInt24:
      return "mediumint";
    case t::kLong:
      return "int";
    case t::kLonglong:
      return "bigint";
    case t::kFloat:
      return "float";
    case t::kDouble:
      return "double";
    case t::kNewDecimal:
      return "decimal";
    case t::kDate:
      return "date";
    case t::kDatetime:
      return "datetime";
    case t::kTimestamp:
      return "timestamp";
    case t::kDuration:
      return "time";
    case t::kYear:
      return "year";
    case t::kBit:
      return "bit";
    case t::kEnum:
      return "enum";
    case t::kSet:
      return "set";
    case t::kJson:
      return "json";
    case t::kVarchar:
    case t::kVarString:
      return "varchar";
    case t::kString:
      return "char";
    default:
      return "blob";
  }
}

codec::ColumnSpec SpecOf(const model::TableInfo& table, const model::ColumnInfo& col) {
  codec::ColumnSpec spec;
  spec.id = col.id;
  spec.type = col.type.tp;
  spec.is_unsigned = col.type.HasFlag(codec::mysql_flag::kUnsigned);
  spec.fsp = static_cast<int>(col.type.decimal < 0 ? 0 : col.type.decimal);
  spec.flen = static_cast<int>(col.type.flen);
  spec.is_handle = table.pk_is_handle && col.IsPrimaryKey();
  return spec;
}

}  // namespace

RowFormatter::RowFormatter(std::string schema_name, const model::TableInfo& table)
    : schema_name_(std::move(schema_name)), table_(table) {
  mysql_types_ = nlohmann::json::object();
  pk_names_ = nlohmann::json::array();
  for (const model::ColumnInfo& col : table_.columns) {
    specs_.push_back(SpecOf(table_, col));
    mysql_types_[col.name.original] = MysqlTypeName(col.type);
    if (col.IsPrimaryKey()) pk_names_.push_back(col.name.original);
  }
}

nlohmann::json RowFormatter::TextOf(const codec::Datum& d, const model::ColumnInfo& col) const {
  using codec::DatumKind;
  switch (d.kind()) {
    case DatumKind::kNull:
      return nullptr;
    case DatumKind::kInt64:
      return std::to_string(d.int64());
    case DatumKind::kUint64:
      return std::to_string(d.uint64());
    case DatumKind::kFloat32:
    case DatumKind::kFloat64: {
      nlohmann::json j = d.float64();
      return j.dump();
    }
    case DatumKind::kBytes:
      return std::string(d.bytes());
    case DatumKind::kDecimal:
      return std::string(d.bytes());
    case DatumKind::kTime:
      return codec::FormatTime(codec::FromPackedUint(d.uint64()), d.time_type(), d.fsp());
    case DatumKind::kDuration:
      return codec::FormatDuration(d.int64(), d.fsp());
    case DatumKind::kEnum: {
      uint64_t i = d.uint64();
      return (i >= 1 && i <= col.type.elems.size()) ? col.type.elems[i - 1] : std::string();
    }
    case DatumKind::kSet: {
      std::string out;
      for (size_t i = 0; i < col.type.elems.size() && i < 64; ++i) {
        if ((d.uint64() >> i) & 1) out += (out.empty() ? "" : ",") + col.type.elems[i];
      }
      return out;
    }
    case DatumKind::kBit:
      return std::to_string(d.uint64());
    case DatumKind::kJson: {
      auto text = codec::JsonBinaryToText(d.bytes());
      return text.ok() ? nlohmann::json(*text) : nlohmann::json(nullptr);
    }
    default:
      return d.DebugString();
  }
}

Result<nlohmann::json> RowFormatter::RowImage(std::string_view key, std::string_view value) const {
  ASSIGN_OR_RETURN(codec::DecodedRowKey decoded, codec::DecodeRowKey(key));
  if (decoded.table_id.value() != table_.id) return Corruption("row key of another table");
  std::vector<codec::Datum> datums;
  RETURN_IF_ERROR(codec::DecodeRow(value, specs_, decoded.handle, &datums));
  nlohmann::json row = nlohmann::json::object();
  for (size_t i = 0; i < datums.size(); ++i) {
    row[table_.columns[i].name.original] = TextOf(datums[i], table_.columns[i]);
  }
  return row;
}

Result<nlohmann::json> RowFormatter::Format(const RawKvEntry& c) const {
  nlohmann::json msg = {{"id", 0},
                        {"database", schema_name_},
                        {"table", table_.name.original},
                        {"pkNames", pk_names_},
                        {"isDdl", false},
                        {"es", tso::Physical(c.commit_ts)},
                        {"sql", ""},
                        {"mysqlType", mysql_types_},
                        {"old", nullptr},
                        {"_tidb", {{"commitTs", c.commit_ts.value()}}}};
  if (c.op == KvOp::kDelete) {
    if (c.old_value.empty()) return Corruption("delete without old value");
    ASSIGN_OR_RETURN(nlohmann::json old_row, RowImage(c.key, c.old_value));
    msg["type"] = "DELETE";
    msg["data"] = nlohmann::json::array({old_row});
    return msg;
  }
  ASSIGN_OR_RETURN(nlohmann::json row, RowImage(c.key, c.value));
  msg["data"] = nlohmann::json::array({row});
  if (c.old_value.empty()) {
    msg["type"] = "INSERT";
    return msg;
  }
  ASSIGN_OR_RETURN(nlohmann::json old_row, RowImage(c.key, c.old_value));
  nlohmann::json changed = nlohmann::json::object();
  for (auto& [name, v] : old_row.items()) {
    if (row[name] != v) changed[name] = v;  // canal-json lists changed columns only
  }
  msg["type"] = "UPDATE";
  msg["old"] = nlohmann::json::array({changed});
  return msg;
}

}  // namespace sluice::demo
