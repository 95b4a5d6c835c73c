#include "codec/model/db_info.h"

#include "codec/model/json_fields.h"

namespace sluice::model {

Status DecodeDBInfo(const JsonValue& value, std::string_view path, DBInfo* out) {
  internal::ObjectReader reader(value, std::string(path));
  reader.Int("id", &out->id, internal::kRequired)
      .Name("db_name", &out->name, internal::kRequired)
      .Str("charset", &out->charset)
      .Str("collate", &out->collate)
      .Int("state", &out->state)
      .Raw("policy_ref_info", &out->policy_ref_info)
      .Bool("read_only", &out->read_only)
      .Bool("archived", &out->archived);
  return reader.status();
}

JsonValue EncodeDBInfo(const DBInfo& db) {
  JsonValue out = JsonValue::object();
  out["id"] = db.id;
  out["db_name"] = internal::NameJson(db.name);
  out["charset"] = db.charset;
  out["collate"] = db.collate;
  // TiDB's DBInfo embeds an untagged struct whose only field is hidden from
  // JSON, so Go always writes it as an empty object.
  out["Deprecated"] = JsonValue::object();
  out["state"] = internal::Num(db.state);
  out["policy_ref_info"] = db.policy_ref_info;
  out["read_only"] = db.read_only;
  out["archived"] = db.archived;
  return out;
}

Result<DBInfo> ParseDBInfo(std::string_view json) {
  return internal::ParseDocument<DBInfo>(json, "db", DecodeDBInfo);
}

std::string ToJson(const DBInfo& db) { return GoMarshal(EncodeDBInfo(db)); }

}  // namespace sluice::model
