#include "codec/model/job.h"

#include "codec/model/json_fields.h"

namespace sluice::model {
namespace {

using internal::ObjectReader;

Status DecodeBinlog(const JsonValue& value, std::string_view path, JobBinlogInfo* out) {
  ObjectReader reader(value, std::string(path));
  reader.Int("SchemaVersion", &out->schema_version)
      .Optional("DBInfo", &out->db_info, DecodeDBInfo)
      .Optional("TableInfo", &out->table_info, DecodeTableInfo)
      .Int("FinishedTS", &out->finished_ts)
      .List("MultipleTableInfos", &out->multiple_table_infos, DecodeTableInfo);
  return reader.status();
}

JsonValue EncodeBinlog(const JobBinlogInfo& binlog) {
  JsonValue out = JsonValue::object();
  out["SchemaVersion"] = binlog.schema_version;
  out["DBInfo"] = binlog.db_info.has_value() ? EncodeDBInfo(*binlog.db_info) : JsonValue();
  out["TableInfo"] =
      binlog.table_info.has_value() ? EncodeTableInfo(*binlog.table_info) : JsonValue();
  out["FinishedTS"] = binlog.finished_ts;
  out["MultipleTableInfos"] = internal::ListJson(binlog.multiple_table_infos, EncodeTableInfo);
  return out;
}

Status DecodeInvolving(const JsonValue& value, std::string_view path, InvolvingSchemaInfo* out) {
  ObjectReader reader(value, std::string(path));
  reader.Str("database", &out->database)
      .Str("table", &out->table)
      .Str("policy", &out->policy)
      .Str("resource_group", &out->resource_group)
      .Int("mode", &out->mode);
  return reader.status();
}

// Every member is omitempty in TiDB.
JsonValue EncodeInvolving(const InvolvingSchemaInfo& info) {
  JsonValue out = JsonValue::object();
  if (!info.database.empty()) out["database"] = info.database;
  if (!info.table.empty()) out["table"] = info.table;
  if (!info.policy.empty()) out["policy"] = info.policy;
  if (!info.resource_group.empty()) out["resource_group"] = info.resource_group;
  if (info.mode != 0) out["mode"] = info.mode;
  return out;
}

Status ReadStringMap(const JsonValue& value, std::string_view path,
                     std::map<std::string, std::string>* out) {
  out->clear();
  if (!value.is_object()) return internal::TypeError(path, "object", value);
  for (const auto& [key, member] : value.items()) {
    RETURN_IF_ERROR(internal::ReadString(member, std::string(path) + "." + key, &(*out)[key]));
  }
  return Status::Ok();
}

void DecodeHeader(ObjectReader* reader, Job* out) {
  reader->Int("id", &out->id, internal::kRequired)
      .Int("type", &out->type, internal::kRequired)
      .Int("schema_id", &out->schema_id, internal::kRequired)
      .Int("table_id", &out->table_id, internal::kRequired)
      .Str("schema_name", &out->schema_name)
      .Str("table_name", &out->table_name)
      .Int("state", &out->state, internal::kRequired)
      .Raw("warning", &out->warning)
      .Raw("err", &out->error)
      .Int("err_count", &out->error_count)
      .Int("row_count", &out->row_count)
      .Raw("raw_args", &out->raw_args)
      .Int("schema_state", &out->schema_state)
      .Int("snapshot_ver", &out->snapshot_ver)
      .Int("real_start_ts", &out->real_start_ts)
      .Int("start_ts", &out->start_ts)
      .Int("dependency_id", &out->dependency_id)
      .Str("query", &out->query)
      .Optional("binlog", &out->binlog, DecodeBinlog)
      .Int("version", &out->version);
}

void DecodeTrailer(ObjectReader* reader, Job* out) {
  reader->Raw("reorg_meta", &out->reorg_meta)
      .Raw("multi_schema_info", &out->multi_schema_info)
      .Int("priority", &out->priority)
      .Int("seq_num", &out->seq_num)
      .Str("charset", &out->charset)
      .Str("collate", &out->collate)
      .List("involving_schema_info", &out->involving_schema_info, DecodeInvolving)
      .Int("admin_operator", &out->admin_operator)
      .Raw("trace_info", &out->trace_info)
      .Str("bdr_role", &out->bdr_role)
      .Int("cdc_write_source", &out->cdc_write_source)
      .Bool("local_mode", &out->local_mode)
      .Int("sql_mode", &out->sql_mode)
      .Field("session_vars", &out->session_vars, ReadStringMap)
      .Int("last_schema_version", &out->last_schema_version);
}

void EncodeHeader(const Job& job, JsonValue* out) {
  JsonValue& o = *out;
  o["id"] = job.id;
  o["type"] = internal::Num(job.type);
  o["schema_id"] = job.schema_id;
  o["table_id"] = job.table_id;
  o["schema_name"] = job.schema_name;
  o["table_name"] = job.table_name;
  o["state"] = internal::Num(job.state);
  o["warning"] = job.warning;
  o["err"] = job.error;
  o["err_count"] = job.error_count;
  o["row_count"] = job.row_count;
  o["raw_args"] = job.raw_args;
  o["schema_state"] = internal::Num(job.schema_state);
  o["snapshot_ver"] = job.snapshot_ver;
  o["real_start_ts"] = job.real_start_ts;
  o["start_ts"] = job.start_ts;
  o["dependency_id"] = job.dependency_id;
  o["query"] = job.query;
  o["binlog"] = job.binlog.has_value() ? EncodeBinlog(*job.binlog) : JsonValue();
  o["version"] = job.version;
}

void EncodeTrailer(const Job& job, JsonValue* out) {
  JsonValue& o = *out;
  o["reorg_meta"] = job.reorg_meta;
  o["multi_schema_info"] = job.multi_schema_info;
  o["priority"] = job.priority;
  o["seq_num"] = job.seq_num;
  o["charset"] = job.charset;
  o["collate"] = job.collate;
  if (!job.involving_schema_info.empty()) {
    o["involving_schema_info"] = internal::ListJson(job.involving_schema_info, EncodeInvolving);
  }
  o["admin_operator"] = job.admin_operator;
  o["trace_info"] = job.trace_info;
  o["bdr_role"] = job.bdr_role;
  o["cdc_write_source"] = job.cdc_write_source;
  o["local_mode"] = job.local_mode;
  o["sql_mode"] = job.sql_mode;
  if (!job.session_vars.empty()) {
    JsonValue vars = JsonValue::object();
    for (const auto& [name, value] : job.session_vars) vars[name] = value;  // Sorted, as Go.
    o["session_vars"] = std::move(vars);
  }
  o["last_schema_version"] = job.last_schema_version;
}

}  // namespace

const TableInfo* Job::FinishedTableInfo() const {
  return binlog.has_value() && binlog->table_info.has_value() ? &*binlog->table_info : nullptr;
}

const DBInfo* Job::FinishedDBInfo() const {
  return binlog.has_value() && binlog->db_info.has_value() ? &*binlog->db_info : nullptr;
}

Status DecodeJob(const JsonValue& value, std::string_view path, Job* out) {
  ObjectReader reader(value, std::string(path));
  DecodeHeader(&reader, out);
  DecodeTrailer(&reader, out);
  return reader.status();
}

JsonValue EncodeJob(const Job& job) {
  JsonValue out = JsonValue::object();
  EncodeHeader(job, &out);
  EncodeTrailer(job, &out);
  return out;
}

Result<Job> ParseJob(std::string_view json) {
  return internal::ParseDocument<Job>(json, "job", DecodeJob);
}

std::string ToJson(const Job& job) { return GoMarshal(EncodeJob(job)); }

}  // namespace sluice::model
