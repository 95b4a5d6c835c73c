#include "sink/codec/canal_json_decoder.h"

#include <fmt/format.h>

#include "codec/model/go_json.h"
#include "sink/codec/go_format.h"

namespace sluice::sink::codec {

namespace {

using model::JsonValue;

Result<const JsonValue*> Member(const JsonValue& obj, std::string_view key) {
  auto it = obj.find(std::string(key));
  if (it == obj.end()) return Corruption(fmt::format("canal-json: missing \"{}\"", key));
  return &*it;
}

Result<std::string> StringMember(const JsonValue& obj, std::string_view key) {
  ASSIGN_OR_RETURN(const JsonValue* v, Member(obj, key));
  if (!v->is_string()) return Corruption(fmt::format("canal-json: \"{}\" is not a string", key));
  return v->get<std::string>();
}

uint64_t TidbField(const JsonValue& obj, std::string_view key) {
  auto ext = obj.find("_tidb");
  if (ext == obj.end() || !ext->is_object()) return 0;
  auto it = ext->find(std::string(key));
  if (it == ext->end() || !it->is_number_unsigned()) return 0;
  return it->get<uint64_t>();
}

bool IsBinaryMysqlType(std::string_view t) {
  return t.find("blob") != std::string_view::npos || t.find("binary") != std::string_view::npos;
}

// [{"col": "text" | null, ...}] -> columns, or empty for null.
Result<std::vector<DecodedColumn>> Image(const JsonValue& v, const JsonValue& mysql_types) {
  std::vector<DecodedColumn> out;
  if (v.is_null()) return out;
  if (!v.is_array() || v.size() != 1 || !v[0].is_object()) {
    return Corruption("canal-json: row image is not [{...}]");
  }
  for (const auto& [name, value] : v[0].items()) {
    DecodedColumn col{name, std::nullopt};
    if (value.is_string()) {
      col.value = value.get<std::string>();
      auto t = mysql_types.is_object() ? mysql_types.find(name) : mysql_types.end();
      if (t != mysql_types.end() && t->is_string() && IsBinaryMysqlType(t->get<std::string>())) {
        col.value = Utf8ToLatin1(*col.value);
        if (!col.value.has_value()) {
          return Corruption(
              fmt::format("canal-json: binary column {} has a code point > 255", name));
        }
      }
    } else if (!value.is_null()) {
      return Corruption(fmt::format("canal-json: value of {} is not a string", name));
    }
    out.push_back(std::move(col));
  }
  return out;
}

Status DecodeRow(const JsonValue& msg, const std::string& type, CanalJsonMessage* out) {
  DecodedRow& row = out->row;
  if (type == "INSERT") {
    row.op = RowOp::kInsert;
  } else if (type == "UPDATE") {
    row.op = RowOp::kUpdate;
  } else if (type == "DELETE") {
    row.op = RowOp::kDelete;
  } else {
    return Corruption(fmt::format("canal-json: unknown row type '{}'", type));
  }
  ASSIGN_OR_RETURN(row.schema, StringMember(msg, "database"));
  ASSIGN_OR_RETURN(row.table, StringMember(msg, "table"));
  row.commit_ts = TidbField(msg, "commitTs");
  ASSIGN_OR_RETURN(const JsonValue* pk, Member(msg, "pkNames"));
  if (pk->is_array()) {
    for (const auto& name : *pk) {
      if (!name.is_string()) return Corruption("canal-json: pkNames holds a non-string");
      row.pk_names.push_back(name.get<std::string>());
    }
  }
  ASSIGN_OR_RETURN(const JsonValue* types, Member(msg, "mysqlType"));
  ASSIGN_OR_RETURN(const JsonValue* data, Member(msg, "data"));
  ASSIGN_OR_RETURN(row.columns, Image(*data, *types));
  ASSIGN_OR_RETURN(const JsonValue* old, Member(msg, "old"));
  ASSIGN_OR_RETURN(row.old_columns, Image(*old, *types));
  if (row.columns.empty()) return Corruption("canal-json: row message without data");
  return Status::Ok();
}

}  // namespace

Result<CanalJsonMessage> DecodeCanalJsonMessage(std::string_view text) {
  ASSIGN_OR_RETURN(JsonValue msg, model::ParseJsonDocument(text));
  if (!msg.is_object()) return Corruption("canal-json: message is not an object");
  CanalJsonMessage out;
  ASSIGN_OR_RETURN(std::string type, StringMember(msg, "type"));
  ASSIGN_OR_RETURN(const JsonValue* is_ddl, Member(msg, "isDdl"));
  ASSIGN_OR_RETURN(const JsonValue* es, Member(msg, "es"));
  if (!is_ddl->is_boolean() || !es->is_number_integer()) {
    return Corruption("canal-json: isDdl or es has the wrong type");
  }
  out.es = es->get<int64_t>();
  if (is_ddl->get<bool>()) {
    out.kind = CanalJsonMessage::Kind::kDdl;
    out.ddl_type = type;
    ASSIGN_OR_RETURN(out.schema, StringMember(msg, "database"));
    ASSIGN_OR_RETURN(out.table, StringMember(msg, "table"));
    ASSIGN_OR_RETURN(out.query, StringMember(msg, "sql"));
    out.commit_ts = TidbField(msg, "commitTs");
    return out;
  }
  if (type == "TIDB_WATERMARK") {
    out.kind = CanalJsonMessage::Kind::kWatermark;
    out.watermark_ts = TidbField(msg, "watermarkTs");
    return out;
  }
  RETURN_IF_ERROR(DecodeRow(msg, type, &out));
  return out;
}

Result<std::vector<CanalJsonMessage>> DecodeCanalJsonMessages(std::string_view data,
                                                              std::string_view terminator) {
  if (terminator.empty()) return InvalidArgument("canal-json: empty terminator");
  std::vector<CanalJsonMessage> out;
  size_t line = 0;
  while (!data.empty()) {
    size_t end = data.find(terminator);
    std::string_view text = data.substr(0, end);
    data =
        end == std::string_view::npos ? std::string_view() : data.substr(end + terminator.size());
    ++line;
    if (text.empty()) continue;
    Result<CanalJsonMessage> msg = DecodeCanalJsonMessage(text);
    if (!msg.ok()) return msg.status().WithContext(fmt::format("message {}", line));
    out.push_back(std::move(msg).value());
  }
  return out;
}

Result<std::vector<DecodedRow>> DecodeCanalJsonRows(std::string_view data,
                                                    std::string_view terminator) {
  ASSIGN_OR_RETURN(std::vector<CanalJsonMessage> messages,
                   DecodeCanalJsonMessages(data, terminator));
  std::vector<DecodedRow> rows;
  rows.reserve(messages.size());
  for (CanalJsonMessage& m : messages) {
    if (m.kind != CanalJsonMessage::Kind::kRow) {
      return Corruption("canal-json: a data file holds a DDL or watermark message");
    }
    rows.push_back(std::move(m.row));
  }
  return rows;
}

}  // namespace sluice::sink::codec
