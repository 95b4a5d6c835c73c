#include "codec/model/column_info.h"

#include <algorithm>

#include "codec/model/json_fields.h"

namespace sluice::model {
namespace {

using internal::ObjectReader;

// Go map[string]struct{}: {"a":{},"b":{}}; the values carry nothing.
Status ReadNameSet(const JsonValue& value, std::string_view path, std::vector<std::string>* out) {
  out->clear();
  if (value.is_null()) return Status::Ok();
  if (!value.is_object()) return internal::TypeError(path, "object", value);
  for (const auto& [key, member] : value.items()) out->push_back(key);
  std::sort(out->begin(), out->end());
  out->erase(std::unique(out->begin(), out->end()), out->end());
  return Status::Ok();
}

JsonValue NameSetJson(const std::vector<std::string>& names) {
  if (names.empty()) return JsonValue();
  std::vector<std::string> sorted = names;  // Go writes map keys sorted.
  std::sort(sorted.begin(), sorted.end());
  JsonValue out = JsonValue::object();
  for (const auto& name : sorted) out[name] = JsonValue::object();
  return out;
}

Status ReadChangeState(const JsonValue& value, std::string_view path, std::optional<int64_t>* out) {
  int64_t offset = 0;
  ObjectReader reader(value, std::string(path));
  reader.Int("relative_col_offset", &offset);
  if (reader.status().ok()) *out = offset;
  return reader.status();
}

}  // namespace

std::optional<std::string> ColumnInfo::OriginDefaultBytes() const {
  if (type.EffectiveType() == mysql_type::kBit && origin_default_bit.has_value()) {
    return origin_default_bit;
  }
  if (origin_default.is_null()) return std::nullopt;
  if (origin_default.is_string()) return origin_default.get<std::string>();
  return GoMarshal(origin_default);
}

Status DecodeColumnInfo(const JsonValue& value, std::string_view path, ColumnInfo* out) {
  ObjectReader reader(value, std::string(path));
  reader.Int("id", &out->id, internal::kRequired)
      .Name("name", &out->name, internal::kRequired)
      .Int("offset", &out->offset)
      .Raw("origin_default", &out->origin_default)
      .Bytes("origin_default_bit", &out->origin_default_bit)
      .Raw("default", &out->default_value)
      .Bytes("default_bit", &out->default_bit)
      .Bool("default_is_expr", &out->default_is_expr)
      .Str("generated_expr_string", &out->generated_expr_string)
      .Bool("generated_stored", &out->generated_stored)
      .Field("dependences", &out->dependences, ReadNameSet)
      .Field("type", &out->type, DecodeFieldType, internal::kRequired)
      .Optional("changing_type", &out->changing_type, DecodeFieldType)
      .Int("state", &out->state)
      .Str("comment", &out->comment)
      .Bool("hidden", &out->hidden)
      .Field("change_state_info", &out->relative_col_offset, ReadChangeState)
      .Int("version", &out->version);
  return reader.status();
}

JsonValue EncodeColumnInfo(const ColumnInfo& column) {
  JsonValue out = JsonValue::object();
  out["id"] = column.id;
  out["name"] = internal::NameJson(column.name);
  out["offset"] = column.offset;
  out["origin_default"] = column.origin_default;
  out["origin_default_bit"] = internal::BytesJson(column.origin_default_bit);
  out["default"] = column.default_value;
  out["default_bit"] = internal::BytesJson(column.default_bit);
  out["default_is_expr"] = column.default_is_expr;
  out["generated_expr_string"] = column.generated_expr_string;
  out["generated_stored"] = column.generated_stored;
  out["dependences"] = NameSetJson(column.dependences);
  out["type"] = EncodeFieldType(column.type);
  if (column.changing_type.has_value()) {  // Go: omitempty.
    out["changing_type"] = EncodeFieldType(*column.changing_type);
  }
  out["state"] = internal::Num(column.state);
  out["comment"] = column.comment;
  out["hidden"] = column.hidden;
  if (column.relative_col_offset.has_value()) {
    out["change_state_info"] =
        JsonValue::object({{"relative_col_offset", *column.relative_col_offset}});
  } else {
    out["change_state_info"] = nullptr;
  }
  out["version"] = column.version;
  return out;
}

}  // namespace sluice::model
