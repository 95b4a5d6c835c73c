#include "codec/model/table_info.h"

#include "codec/model/json_fields.h"

namespace sluice::model {
namespace {

using internal::ObjectReader;

void DecodeIdentity(ObjectReader* reader, TableInfo* out) {
  reader->Int("id", &out->id, internal::kRequired)
      .Name("name", &out->name, internal::kRequired)
      .Str("charset", &out->charset)
      .Str("collate", &out->collate)
      .List("cols", &out->columns, DecodeColumnInfo)
      .List("index_info", &out->indices, DecodeIndexInfo)
      .List("constraint_info", &out->constraints, DecodeConstraintInfo)
      .List("fk_info", &out->foreign_keys, DecodeFKInfo)
      .Int("state", &out->state)
      .Bool("pk_is_handle", &out->pk_is_handle)
      .Bool("is_common_handle", &out->is_common_handle)
      .Int("common_handle_version", &out->common_handle_version)
      .Str("comment", &out->comment);
}

void DecodeCounters(ObjectReader* reader, TableInfo* out) {
  reader->Int("auto_inc_id", &out->auto_inc_id)
      .Int("auto_inc_id_extra", &out->auto_inc_id_extra)
      .Int("auto_id_cache", &out->auto_id_cache)
      .Int("auto_rand_id", &out->auto_rand_id)
      .Int("max_col_id", &out->max_col_id)
      .Int("max_idx_id", &out->max_idx_id)
      .Int("max_fk_id", &out->max_fk_id)
      .Int("max_cst_id", &out->max_cst_id)
      .Int("update_timestamp", &out->update_timestamp)
      .Int("old_schema_id", &out->auto_id_schema_id)
      .Int("ShardRowIDBits", &out->shard_row_id_bits)
      .Int("max_shard_row_id_bits", &out->max_shard_row_id_bits)
      .Int("auto_random_bits", &out->auto_random_bits)
      .Int("auto_random_range_bits", &out->auto_random_range_bits)
      .Int("pre_split_regions", &out->pre_split_regions);
}

void DecodeExtras(ObjectReader* reader, TableInfo* out) {
  reader->Optional("partition", &out->partition, DecodePartitionInfo)
      .Str("compression", &out->compression)
      .Raw("view", &out->view)
      .Raw("sequence", &out->sequence)
      .Raw("Lock", &out->lock)
      .Int("version", &out->version)
      .Raw("tiflash_replica", &out->tiflash_replica)
      .Bool("is_columnar", &out->is_columnar)
      .Int("temp_table_type", &out->temp_table_type)
      .Int("cache_table_status", &out->cache_table_status)
      .Raw("policy_ref_info", &out->policy_ref_info)
      .Raw("stats_options", &out->stats_options)
      .Raw("exchange_partition_info", &out->exchange_partition_info)
      .Raw("ttl_info", &out->ttl_info)
      .Int("revision", &out->revision);
}

void EncodeIdentity(const TableInfo& table, JsonValue* out) {
  (*out)["id"] = table.id;
  (*out)["name"] = internal::NameJson(table.name);
  (*out)["charset"] = table.charset;
  (*out)["collate"] = table.collate;
  (*out)["cols"] = internal::ListJson(table.columns, EncodeColumnInfo);
  (*out)["index_info"] = internal::ListJson(table.indices, EncodeIndexInfo);
  (*out)["constraint_info"] = internal::ListJson(table.constraints, EncodeConstraintInfo);
  (*out)["fk_info"] = internal::ListJson(table.foreign_keys, EncodeFKInfo);
  (*out)["state"] = internal::Num(table.state);
  (*out)["pk_is_handle"] = table.pk_is_handle;
  (*out)["is_common_handle"] = table.is_common_handle;
  (*out)["common_handle_version"] = table.common_handle_version;
  (*out)["comment"] = table.comment;
}

void EncodeCounters(const TableInfo& table, JsonValue* out) {
  (*out)["auto_inc_id"] = table.auto_inc_id;
  if (table.auto_inc_id_extra != 0) (*out)["auto_inc_id_extra"] = table.auto_inc_id_extra;
  (*out)["auto_id_cache"] = table.auto_id_cache;
  (*out)["auto_rand_id"] = table.auto_rand_id;
  (*out)["max_col_id"] = table.max_col_id;
  (*out)["max_idx_id"] = table.max_idx_id;
  (*out)["max_fk_id"] = table.max_fk_id;
  (*out)["max_cst_id"] = table.max_cst_id;
  (*out)["update_timestamp"] = table.update_timestamp;
  if (table.auto_id_schema_id != 0) (*out)["old_schema_id"] = table.auto_id_schema_id;
  (*out)["ShardRowIDBits"] = table.shard_row_id_bits;
  (*out)["max_shard_row_id_bits"] = table.max_shard_row_id_bits;
  (*out)["auto_random_bits"] = table.auto_random_bits;
  (*out)["auto_random_range_bits"] = table.auto_random_range_bits;
  (*out)["pre_split_regions"] = table.pre_split_regions;
}

void EncodeExtras(const TableInfo& table, JsonValue* out) {
  (*out)["partition"] =
      table.partition.has_value() ? EncodePartitionInfo(*table.partition) : JsonValue();
  (*out)["compression"] = table.compression;
  (*out)["view"] = table.view;
  (*out)["sequence"] = table.sequence;
  (*out)["Lock"] = table.lock;
  (*out)["version"] = table.version;
  (*out)["tiflash_replica"] = table.tiflash_replica;
  (*out)["is_columnar"] = table.is_columnar;
  (*out)["temp_table_type"] = internal::Num(table.temp_table_type);
  (*out)["cache_table_status"] = table.cache_table_status;
  (*out)["policy_ref_info"] = table.policy_ref_info;
  (*out)["stats_options"] = table.stats_options;
  (*out)["exchange_partition_info"] = table.exchange_partition_info;
  (*out)["ttl_info"] = table.ttl_info;
  (*out)["revision"] = table.revision;
}

}  // namespace

const ColumnInfo* TableInfo::GetPkHandleColumn() const {
  if (!pk_is_handle) return nullptr;
  for (const auto& column : columns) {
    if (column.IsPrimaryKey()) return &column;
  }
  return nullptr;
}

const IndexInfo* TableInfo::GetPrimaryIndex() const {
  for (const auto& index : indices) {
    if (index.primary) return &index;
  }
  return nullptr;
}

const ColumnInfo* TableInfo::FindColumnById(int64_t column_id) const {
  for (const auto& column : columns) {
    if (column.id == column_id) return &column;
  }
  return nullptr;
}

const ColumnInfo* TableInfo::FindColumnByName(std::string_view name) const {
  const std::string lower = AsciiLower(name);
  for (const auto& column : columns) {
    if (column.name.lower == lower) return &column;
  }
  return nullptr;
}

const IndexInfo* TableInfo::FindIndexById(int64_t index_id) const {
  for (const auto& index : indices) {
    if (index.id == index_id) return &index;
  }
  return nullptr;
}

const IndexInfo* TableInfo::FindIndexByName(std::string_view name) const {
  const std::string lower = AsciiLower(name);
  for (const auto& index : indices) {
    if (index.name.lower == lower) return &index;
  }
  return nullptr;
}

std::vector<int64_t> TableInfo::PhysicalTableIds() const {
  if (IsPartitioned()) return partition->DefinitionIds();
  return {id};
}

Status DecodeTableInfo(const JsonValue& value, std::string_view path, TableInfo* out) {
  ObjectReader reader(value, std::string(path));
  DecodeIdentity(&reader, out);
  DecodeCounters(&reader, out);
  DecodeExtras(&reader, out);
  return reader.status();
}

JsonValue EncodeTableInfo(const TableInfo& table) {
  JsonValue out = JsonValue::object();
  EncodeIdentity(table, &out);
  EncodeCounters(table, &out);
  EncodeExtras(table, &out);
  return out;
}

Result<TableInfo> ParseTableInfo(std::string_view json) {
  return internal::ParseDocument<TableInfo>(json, "table", DecodeTableInfo);
}

std::string ToJson(const TableInfo& table) { return GoMarshal(EncodeTableInfo(table)); }

}  // namespace sluice::model
