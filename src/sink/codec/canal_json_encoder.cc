#include "sink/codec/canal_json_encoder.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "codec/mysql_type.h"
#include "sink/codec/go_format.h"

namespace sluice::sink::codec {

namespace mf = sluice::codec::mysql_flag;
using event::RowKind;
using event::TableSchema;

namespace {

struct ColumnText {
  const model::ColumnInfo* col = nullptr;
  int offset = 0;
  std::optional<std::string> value;
  int java_type = 0;
};

int64_t CanalTs(Ts commit_ts) { return static_cast<int64_t>(commit_ts.value() >> 18); }

bool IsHandleKey(const TableSchema& schema, int offset) {
  const auto& keys = schema.key_columns();
  return std::find(keys.begin(), keys.end(), offset) != keys.end();
}

// The encodable columns of a row image with their canal text.
Result<std::vector<ColumnText>> RowTexts(const TableSchema& schema,
                                         const std::vector<sluice::codec::Datum>& row) {
  const auto& columns = schema.columns();
  if (row.size() != columns.size()) {
    return Internal(fmt::format("canal-json: row of {} has {} values for {} columns",
                                schema.QuotedName(), row.size(), columns.size()));
  }
  std::vector<ColumnText> out;
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].IsVirtualGenerated()) continue;
    ColumnText t;
    t.col = &columns[i];
    t.offset = static_cast<int>(i);
    Result<std::optional<std::string>> v = CanalValue(row[i], columns[i], &t.java_type);
    if (!v.ok()) {
      return v.status().WithContext(
          fmt::format("canal-json: {} column {}", schema.QuotedName(), columns[i].name.original));
    }
    t.value = std::move(v).value();
    out.push_back(std::move(t));
  }
  return out;
}

void AppendValue(const std::optional<std::string>& v, std::string* out) {
  if (v.has_value()) {
    AppendEasyJsonString(*v, out);
  } else {
    out->append("null");
  }
}

// [{"name":value,...}] over `values`, keeping the columns `keep` accepts.
template <typename Keep>
void AppendImage(const std::vector<ColumnText>& values, Keep keep, std::string* out) {
  out->append("[{");
  bool first = true;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!keep(i)) continue;
    if (!first) out->push_back(',');
    first = false;
    AppendEasyJsonString(values[i].col->name.original, out);
    out->push_back(':');
    AppendValue(values[i].value, out);
  }
  out->append("}]");
}

}  // namespace

int64_t CanalJsonEncoder::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock_->WallNow().time_since_epoch())
      .count();
}

Result<std::string> CanalJsonEncoder::EncodeRow(const TableSchema& schema, Ts commit_ts,
                                                const event::RowChange& row) const {
  const bool is_delete = row.kind == RowKind::kDelete;
  const bool only_handle_key = is_delete && config_.delete_only_handle_key_columns;
  ASSIGN_OR_RETURN(std::vector<ColumnText> values,
                   RowTexts(schema, is_delete ? row.pre_row : row.row));
  if (values.empty()) return Internal("canal-json: no valid columns for the event");

  std::string out = "{\"id\":0,\"database\":";
  AppendEasyJsonString(schema.schema_name(), &out);
  out.append(",\"table\":");
  AppendEasyJsonString(schema.table_name(), &out);
  out.append(",\"pkNames\":[");
  bool first = true;
  for (const auto& col : schema.columns()) {
    if (!col.type.HasFlag(mf::kPriKey)) continue;
    if (!first) out.push_back(',');
    first = false;
    AppendEasyJsonString(col.name.original, &out);
  }
  out.append("],\"isDdl\":false,\"type\":");
  out.append(is_delete ? "\"DELETE\"" : row.kind == RowKind::kInsert ? "\"INSERT\"" : "\"UPDATE\"");
  out.append(fmt::format(",\"es\":{},\"ts\":{},\"sql\":\"\"", CanalTs(commit_ts), NowMs()));

  auto keep = [&](size_t i) { return !only_handle_key || IsHandleKey(schema, values[i].offset); };
  std::string mysql_types;
  out.append(",\"sqlType\":");
  first = true;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!keep(i)) continue;
    out.append(first ? "{" : ",");
    mysql_types.append(first ? "{" : ",");
    first = false;
    AppendEasyJsonString(values[i].col->name.original, &out);
    out.append(fmt::format(":{}", values[i].java_type));
    AppendEasyJsonString(values[i].col->name.original, &mysql_types);
    mysql_types.push_back(':');
    AppendEasyJsonString(CanalMysqlType(*values[i].col), &mysql_types);
  }
  out.append(first ? "null" : "}");
  out.append(",\"mysqlType\":");
  out.append(first ? "null" : mysql_types + "}");

  if (row.kind == RowKind::kUpdate) {
    ASSIGN_OR_RETURN(std::vector<ColumnText> old, RowTexts(schema, row.pre_row));
    out.append(",\"old\":");
    auto keep_old = [&](size_t i) {
      if (config_.only_output_updated_columns && old[i].value == values[i].value) return false;
      return keep(i);
    };
    AppendImage(old, keep_old, &out);
  } else {
    out.append(",\"old\":null");
  }
  out.append(",\"data\":");
  AppendImage(values, keep, &out);
  if (config_.enable_tidb_extension) {
    out.append(fmt::format(",\"_tidb\":{{\"commitTs\":{}}}", commit_ts.value()));
  }
  out.push_back('}');
  return out;
}

Status CanalJsonEncoder::Append(const event::DmlEvent& event, std::string* out) const {
  if (event.schema == nullptr) return Internal("canal-json: DML event without a schema");
  const size_t size_before = out->size();
  for (const event::RowChange& row : event.rows) {
    Result<std::string> message = EncodeRow(*event.schema, event.commit_ts, row);
    if (!message.ok()) {
      out->resize(size_before);
      return message.status();
    }
    out->append(*message).append(config_.terminator);
  }
  return Status::Ok();
}

std::string CanalJsonEncoder::EncodeDdl(const event::DdlEvent& ddl) const {
  std::string out = "{\"id\":0,\"database\":";
  AppendEasyJsonString(ddl.schema_name, &out);
  out.append(",\"table\":");
  AppendEasyJsonString(ddl.table_name, &out);
  out.append(",\"pkNames\":null,\"isDdl\":true,\"type\":");
  AppendEasyJsonString(CanalDdlType(ddl.type), &out);
  out.append(fmt::format(",\"es\":{},\"ts\":{},\"sql\":", CanalTs(ddl.finished_ts), NowMs()));
  AppendEasyJsonString(ddl.query, &out);
  out.append(",\"sqlType\":null,\"mysqlType\":null,\"data\":null,\"old\":null");
  if (config_.enable_tidb_extension) {
    out.append(fmt::format(",\"_tidb\":{{\"commitTs\":{}}}", ddl.finished_ts.value()));
  }
  out.push_back('}');
  return out;
}

std::string CanalJsonEncoder::EncodeWatermark(Ts ts) const {
  return fmt::format(
      "{{\"id\":0,\"database\":\"\",\"table\":\"\",\"pkNames\":null,\"isDdl\":false,"
      "\"type\":\"TIDB_WATERMARK\",\"es\":{},\"ts\":{},\"sql\":\"\",\"sqlType\":null,"
      "\"mysqlType\":null,\"data\":null,\"old\":null,\"_tidb\":{{\"watermarkTs\":{}}}}}",
      CanalTs(ts), NowMs(), ts.value());
}

std::string_view CanalDdlType(model::ActionType type) {
  using A = model::ActionType;
  switch (type) {
    case A::kCreateTable:
      return "CREATE";
    case A::kRenameTable:
    case A::kRenameTables:
      return "RENAME";
    case A::kAddIndex:
    case A::kAddForeignKey:
    case A::kAddPrimaryKey:
      return "CINDEX";
    case A::kDropIndex:
    case A::kDropForeignKey:
    case A::kDropPrimaryKey:
      return "DINDEX";
    case A::kAddColumn:
    case A::kDropColumn:
    case A::kModifyColumn:
    case A::kRebaseAutoId:
    case A::kSetDefaultValue:
    case A::kModifyTableComment:
    case A::kRenameIndex:
    case A::kAddTablePartition:
    case A::kDropTablePartition:
    case A::kModifyTableCharsetAndCollate:
    case A::kTruncateTablePartition:
    case A::kAlterIndexVisibility:
    case A::kMultiSchemaChange:
    case A::kReorganizePartition:
    case A::kAlterTablePartitioning:
    case A::kRemovePartitioning:
    case A::kAddColumns:
    case A::kDropColumns:
      return "ALTER";
    case A::kDropTable:
      return "ERASE";
    case A::kTruncateTable:
      return "TRUNCATE";
    default:
      return "QUERY";
  }
}

}  // namespace sluice::sink::codec
