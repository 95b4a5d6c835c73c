#include "codec/model/index_info.h"

#include "codec/model/json_fields.h"

namespace sluice::model {
namespace {

using internal::ObjectReader;

Status DecodeIndexColumn(const JsonValue& value, std::string_view path, IndexColumn* out) {
  ObjectReader reader(value, std::string(path));
  reader.Name("name", &out->name, internal::kRequired)
      .Int("offset", &out->offset, internal::kRequired)
      .Int("length", &out->length);
  return reader.status();
}

JsonValue EncodeIndexColumn(const IndexColumn& column) {
  JsonValue out = JsonValue::object();
  out["name"] = internal::NameJson(column.name);
  out["offset"] = column.offset;
  out["length"] = column.length;
  return out;
}

}  // namespace

Status DecodeIndexInfo(const JsonValue& value, std::string_view path, IndexInfo* out) {
  ObjectReader reader(value, std::string(path));
  reader.Int("id", &out->id, internal::kRequired)
      .Name("idx_name", &out->name, internal::kRequired)
      .Name("tbl_name", &out->table)
      .List("idx_cols", &out->columns, DecodeIndexColumn)
      .Int("state", &out->state)
      .Int("backfill_state", &out->backfill_state)
      .Str("comment", &out->comment)
      .Int("index_type", &out->tp)
      .Bool("is_unique", &out->unique)
      .Bool("is_primary", &out->primary)
      .Bool("is_invisible", &out->invisible)
      .Bool("is_global", &out->global)
      .Bool("mv_index", &out->mv_index)
      .Raw("vector_index", &out->vector_index)
      .Raw("inverted_index", &out->inverted_index);
  return reader.status();
}

JsonValue EncodeIndexInfo(const IndexInfo& index) {
  JsonValue out = JsonValue::object();
  out["id"] = index.id;
  out["idx_name"] = internal::NameJson(index.name);
  out["tbl_name"] = internal::NameJson(index.table);
  out["idx_cols"] = internal::ListJson(index.columns, EncodeIndexColumn);
  out["state"] = internal::Num(index.state);
  out["backfill_state"] = internal::Num(index.backfill_state);
  out["comment"] = index.comment;
  out["index_type"] = internal::Num(index.tp);
  out["is_unique"] = index.unique;
  out["is_primary"] = index.primary;
  out["is_invisible"] = index.invisible;
  out["is_global"] = index.global;
  out["mv_index"] = index.mv_index;
  out["vector_index"] = index.vector_index;
  out["inverted_index"] = index.inverted_index;
  return out;
}

}  // namespace sluice::model
