#include "codec/model/partition_info.h"

#include "codec/model/json_fields.h"

namespace sluice::model {
namespace {

using internal::ObjectReader;

Status ReadStringList(const JsonValue& value, std::string_view path,
                      std::vector<std::string>* out) {
  return internal::ReadList(value, path, out, internal::ReadString);
}

Status DecodeDefinition(const JsonValue& value, std::string_view path, PartitionDefinition* out) {
  ObjectReader reader(value, std::string(path));
  reader.Int("id", &out->id, internal::kRequired)
      .Name("name", &out->name, internal::kRequired)
      .List("less_than", &out->less_than, internal::ReadString)
      .List("in_values", &out->in_values, ReadStringList)
      .Raw("policy_ref_info", &out->policy_ref_info)
      .Str("comment", &out->comment);
  return reader.status();
}

JsonValue EncodeDefinition(const PartitionDefinition& definition) {
  JsonValue out = JsonValue::object();
  out["id"] = definition.id;
  out["name"] = internal::NameJson(definition.name);
  out["less_than"] = internal::StringListJson(definition.less_than);
  out["in_values"] = internal::ListJson(definition.in_values, internal::StringListJson);
  out["policy_ref_info"] = definition.policy_ref_info;
  if (!definition.comment.empty()) out["comment"] = definition.comment;  // Go: omitempty.
  return out;
}

Status DecodeState(const JsonValue& value, std::string_view path, PartitionState* out) {
  ObjectReader reader(value, std::string(path));
  reader.Int("id", &out->id).Int("state", &out->state);
  return reader.status();
}

JsonValue EncodeState(const PartitionState& state) {
  JsonValue out = JsonValue::object();
  out["id"] = state.id;
  out["state"] = internal::Num(state.state);
  return out;
}

Status DecodeUpdateIndex(const JsonValue& value, std::string_view path, UpdateIndexInfo* out) {
  ObjectReader reader(value, std::string(path));
  reader.Str("index_name", &out->index_name).Bool("global", &out->global);
  return reader.status();
}

JsonValue EncodeUpdateIndex(const UpdateIndexInfo& info) {
  JsonValue out = JsonValue::object();
  out["index_name"] = info.index_name;
  out["global"] = info.global;
  return out;
}

}  // namespace

std::vector<int64_t> PartitionInfo::DefinitionIds() const {
  std::vector<int64_t> ids;
  ids.reserve(definitions.size());
  for (const auto& definition : definitions) ids.push_back(definition.id);
  return ids;
}

const PartitionDefinition* PartitionInfo::FindDefinition(int64_t id) const {
  for (const auto& definition : definitions) {
    if (definition.id == id) return &definition;
  }
  return nullptr;
}

Status DecodePartitionInfo(const JsonValue& value, std::string_view path, PartitionInfo* out) {
  ObjectReader reader(value, std::string(path));
  reader.Int("type", &out->type, internal::kRequired)
      .Str("expr", &out->expr)
      .List("columns", &out->columns, internal::ReadCIStr)
      .Bool("enable", &out->enable)
      .Bool("is_empty_columns", &out->is_empty_columns)
      .List("definitions", &out->definitions, DecodeDefinition)
      .List("adding_definitions", &out->adding_definitions, DecodeDefinition)
      .List("dropping_definitions", &out->dropping_definitions, DecodeDefinition)
      .List("NewPartitionIDs", &out->new_partition_ids, internal::ReadInt64Element)
      .List("states", &out->states, DecodeState)
      .Int("num", &out->num)
      .Int("ddl_state", &out->ddl_state)
      .Int("new_table_id", &out->new_table_id)
      .Int("ddl_type", &out->ddl_type)
      .Str("ddl_expr", &out->ddl_expr)
      .List("ddl_columns", &out->ddl_columns, internal::ReadCIStr)
      .List("ddl_update_indexes", &out->ddl_update_indexes, DecodeUpdateIndex);
  return reader.status();
}

JsonValue EncodePartitionInfo(const PartitionInfo& partition) {
  JsonValue out = JsonValue::object();
  out["type"] = internal::Num(partition.type);
  out["expr"] = partition.expr;
  out["columns"] = internal::NameListJson(partition.columns);
  out["enable"] = partition.enable;
  out["is_empty_columns"] = partition.is_empty_columns;
  out["definitions"] = internal::ListJson(partition.definitions, EncodeDefinition);
  out["adding_definitions"] = internal::ListJson(partition.adding_definitions, EncodeDefinition);
  out["dropping_definitions"] =
      internal::ListJson(partition.dropping_definitions, EncodeDefinition);
  out["NewPartitionIDs"] = internal::IntListJson(partition.new_partition_ids);
  out["states"] = internal::ListJson(partition.states, EncodeState);
  out["num"] = partition.num;
  out["ddl_state"] = internal::Num(partition.ddl_state);
  out["new_table_id"] = partition.new_table_id;
  out["ddl_type"] = internal::Num(partition.ddl_type);
  out["ddl_expr"] = partition.ddl_expr;
  out["ddl_columns"] = internal::NameListJson(partition.ddl_columns);
  out["ddl_update_indexes"] = internal::ListJson(partition.ddl_update_indexes, EncodeUpdateIndex);
  return out;
}

}  // namespace sluice::model
