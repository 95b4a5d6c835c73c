#include "codec/model/field_type.h"

#include "codec/model/json_fields.h"

namespace sluice::model {
namespace {

using internal::ObjectReader;

// []bool does not fit ReadList (std::vector<bool> has no element pointers).
Status ReadBoolList(const JsonValue& value, std::string_view path, std::vector<bool>* out) {
  std::vector<char> flags;
  RETURN_IF_ERROR(internal::ReadList(value, path, &flags,
                                     [](const JsonValue& v, std::string_view p, char* flag) {
                                       bool b = false;
                                       RETURN_IF_ERROR(internal::ReadBool(v, p, &b));
                                       *flag = b ? 1 : 0;
                                       return Status::Ok();
                                     }));
  out->assign(flags.begin(), flags.end());
  return Status::Ok();
}

}  // namespace

Status DecodeFieldType(const JsonValue& value, std::string_view path, FieldType* out) {
  ObjectReader reader(value, std::string(path));
  reader.Int("Tp", &out->tp, internal::kRequired)
      .Int("Flag", &out->flag)
      .Int("Flen", &out->flen)
      .Int("Decimal", &out->decimal)
      .Str("Charset", &out->charset)
      .Str("Collate", &out->collate)
      .List("Elems", &out->elems, internal::ReadString)
      .Field("ElemsIsBinaryLit", &out->elems_is_binary_lit, ReadBoolList)
      .Bool("Array", &out->array);
  return reader.status();
}

JsonValue EncodeFieldType(const FieldType& type) {
  JsonValue out = JsonValue::object();
  out["Tp"] = internal::Num(type.tp);
  out["Flag"] = internal::Num(type.flag);
  out["Flen"] = internal::Num(type.flen);
  out["Decimal"] = internal::Num(type.decimal);
  out["Charset"] = type.charset;
  out["Collate"] = type.collate;
  out["Elems"] = internal::StringListJson(type.elems);
  out["ElemsIsBinaryLit"] =
      internal::ListJson(type.elems_is_binary_lit, [](bool b) { return JsonValue(b); });
  out["Array"] = type.array;
  return out;
}

}  // namespace sluice::model
