// One database (TiDB `model.DBInfo`): the value of meta hash field
// "DB:<id>" under "DBs", and the "DBInfo" of a finished CREATE/DROP DATABASE
// job.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "codec/model/go_json.h"
#include "codec/model/types.h"
#include "common/status.h"

namespace sluice::model {

struct DBInfo {
  int64_t id = 0;
  CIStr name;  // "db_name"
  std::string charset;
  std::string collate;
  SchemaState state = SchemaState::kNone;
  JsonValue policy_ref_info;  // Kept verbatim.
  bool read_only = false;
  bool archived = false;

  bool operator==(const DBInfo&) const = default;
};

// Parses DBInfo JSON. Malformed JSON, a wrong type for a known key, or a
// missing "id" or "db_name" give Corruption.
Result<DBInfo> ParseDBInfo(std::string_view json);

// DBInfo JSON as TiDB writes it (including its empty "Deprecated":{}).
std::string ToJson(const DBInfo& db);

Status DecodeDBInfo(const JsonValue& value, std::string_view path, DBInfo* out);
JsonValue EncodeDBInfo(const DBInfo& db);

}  // namespace sluice::model
