#include "codec/model/constraint_info.h"

#include "codec/model/json_fields.h"

namespace sluice::model {

using internal::ObjectReader;

Status DecodeConstraintInfo(const JsonValue& value, std::string_view path, ConstraintInfo* out) {
  ObjectReader reader(value, std::string(path));
  reader.Int("id", &out->id, internal::kRequired)
      .Name("constraint_name", &out->name)
      .Name("tbl_name", &out->table)
      .List("constraint_cols", &out->constraint_cols, internal::ReadCIStr)
      .Bool("enforced", &out->enforced)
      .Bool("in_column", &out->in_column)
      .Str("expr_string", &out->expr_string)
      .Int("state", &out->state);
  return reader.status();
}

JsonValue EncodeConstraintInfo(const ConstraintInfo& constraint) {
  JsonValue out = JsonValue::object();
  out["id"] = constraint.id;
  out["constraint_name"] = internal::NameJson(constraint.name);
  out["tbl_name"] = internal::NameJson(constraint.table);
  out["constraint_cols"] = internal::NameListJson(constraint.constraint_cols);
  out["enforced"] = constraint.enforced;
  out["in_column"] = constraint.in_column;
  out["expr_string"] = constraint.expr_string;
  out["state"] = internal::Num(constraint.state);
  return out;
}

Status DecodeFKInfo(const JsonValue& value, std::string_view path, FKInfo* out) {
  ObjectReader reader(value, std::string(path));
  reader.Int("id", &out->id, internal::kRequired)
      .Name("fk_name", &out->name)
      .Name("ref_schema", &out->ref_schema)
      .Name("ref_table", &out->ref_table)
      .List("ref_cols", &out->ref_cols, internal::ReadCIStr)
      .List("cols", &out->cols, internal::ReadCIStr)
      .Int("on_delete", &out->on_delete)
      .Int("on_update", &out->on_update)
      .Int("state", &out->state)
      .Int("version", &out->version);
  return reader.status();
}

JsonValue EncodeFKInfo(const FKInfo& fk) {
  JsonValue out = JsonValue::object();
  out["id"] = fk.id;
  out["fk_name"] = internal::NameJson(fk.name);
  out["ref_schema"] = internal::NameJson(fk.ref_schema);
  out["ref_table"] = internal::NameJson(fk.ref_table);
  out["ref_cols"] = internal::NameListJson(fk.ref_cols);
  out["cols"] = internal::NameListJson(fk.cols);
  out["on_delete"] = fk.on_delete;
  out["on_update"] = fk.on_update;
  out["state"] = internal::Num(fk.state);
  out["version"] = fk.version;
  return out;
}

}  // namespace sluice::model
