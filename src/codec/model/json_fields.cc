#include "codec/model/json_fields.h"

namespace sluice::model::internal {
namespace {

bool AsciiEqualFold(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i];
    char y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

Status RangeError(std::string_view path, const JsonValue& value) {
  return Corruption(std::string(path) + ": number " + value.dump() + " out of range");
}

}  // namespace

const JsonValue* FindKey(const JsonValue& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  const auto exact = object.find(key);
  if (exact != object.end()) return &*exact;
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (AsciiEqualFold(it.key(), key)) return &*it;
  }
  return nullptr;
}

std::string_view JsonTypeName(const JsonValue& value) {
  switch (value.type()) {
    case JsonValue::value_t::number_integer:
    case JsonValue::value_t::number_unsigned:
      return "integer";
    case JsonValue::value_t::number_float:
      return "non-integer number";
    default:
      return value.type_name();
  }
}

Status TypeError(std::string_view path, std::string_view expected, const JsonValue& got) {
  return Corruption(std::string(path) + ": expected " + std::string(expected) + ", got " +
                    std::string(JsonTypeName(got)));
}

Status ReadSigned(const JsonValue& value, std::string_view path, int64_t min, int64_t max,
                  int64_t* out) {
  if (value.is_number_unsigned()) {
    const auto v = value.get<uint64_t>();
    if (v > static_cast<uint64_t>(max)) return RangeError(path, value);
    *out = static_cast<int64_t>(v);
    return Status::Ok();
  }
  if (!value.is_number_integer()) return TypeError(path, "integer", value);
  const auto v = value.get<int64_t>();
  if (v < min || v > max) return RangeError(path, value);
  *out = v;
  return Status::Ok();
}

Status ReadUnsigned(const JsonValue& value, std::string_view path, uint64_t max, uint64_t* out) {
  if (!value.is_number_integer()) return TypeError(path, "integer", value);
  if (!value.is_number_unsigned()) return RangeError(path, value);  // Negative.
  const auto v = value.get<uint64_t>();
  if (v > max) return RangeError(path, value);
  *out = v;
  return Status::Ok();
}

Status ReadBool(const JsonValue& value, std::string_view path, bool* out) {
  if (value.is_null()) return Status::Ok();
  if (!value.is_boolean()) return TypeError(path, "boolean", value);
  *out = value.get<bool>();
  return Status::Ok();
}

Status ReadString(const JsonValue& value, std::string_view path, std::string* out) {
  if (value.is_null()) return Status::Ok();
  if (!value.is_string()) return TypeError(path, "string", value);
  *out = value.get<std::string>();
  return Status::Ok();
}

Status ReadCIStr(const JsonValue& value, std::string_view path, CIStr* out) {
  if (value.is_null()) return Status::Ok();
  if (value.is_string()) {
    *out = CIStr::From(value.get_ref<const std::string&>());
    return Status::Ok();
  }
  ObjectReader reader(value, std::string(path));
  reader.Str("O", &out->original).Str("L", &out->lower);
  // TiDB always writes "L"; derive it if a hand-written document left it out.
  if (reader.status().ok() && FindKey(value, "L") == nullptr)
    out->lower = AsciiLower(out->original);
  return reader.status();
}

Status ReadBytes(const JsonValue& value, std::string_view path, std::optional<std::string>* out) {
  if (value.is_null()) {
    out->reset();
    return Status::Ok();
  }
  if (!value.is_string()) return TypeError(path, "base64 string", value);
  *out = Base64Decode(value.get_ref<const std::string&>());
  if (!out->has_value()) return Corruption(std::string(path) + ": malformed base64");
  return Status::Ok();
}

Status ReadInt64Element(const JsonValue& value, std::string_view path, int64_t* out) {
  return ReadInteger(value, path, out);
}

ObjectReader::ObjectReader(const JsonValue& value, std::string path)
    : object_(value), path_(std::move(path)) {
  if (!value.is_object()) status_ = TypeError(path_, "object", value);
}

ObjectReader& ObjectReader::Bytes(std::string_view key, std::optional<std::string>* out) {
  if (!status_.ok()) return *this;
  const JsonValue* member = FindKey(object_, key);
  if (member == nullptr) return *this;
  Record(ReadBytes(*member, Path(key), out));
  return *this;
}

ObjectReader& ObjectReader::Raw(std::string_view key, JsonValue* out) {
  if (!status_.ok()) return *this;
  const JsonValue* member = FindKey(object_, key);
  *out = member == nullptr ? JsonValue() : *member;
  return *this;
}

const JsonValue* ObjectReader::Member(std::string_view key, Presence presence) {
  if (!status_.ok()) return nullptr;
  const JsonValue* member = FindKey(object_, key);
  if (member != nullptr && !member->is_null()) return member;
  if (presence == kRequired) {
    status_ = Corruption(Path(key) + ": required key missing");
  }
  return nullptr;
}

std::string ObjectReader::Path(std::string_view key) const {
  return path_ + "." + std::string(key);
}

void ObjectReader::Record(Status status) {
  if (status_.ok()) status_ = std::move(status);
}

JsonValue NameJson(const CIStr& name) {
  JsonValue out = JsonValue::object();
  out["O"] = name.original;
  out["L"] = name.lower;
  return out;
}

JsonValue BytesJson(const std::optional<std::string>& bytes) {
  return bytes.has_value() ? JsonValue(Base64Encode(*bytes)) : JsonValue();
}

JsonValue StringListJson(const std::vector<std::string>& list) {
  return ListJson(list, [](const std::string& s) { return JsonValue(s); });
}

JsonValue IntListJson(const std::vector<int64_t>& list) {
  return ListJson(list, [](int64_t v) { return JsonValue(v); });
}

JsonValue NameListJson(const std::vector<CIStr>& list) { return ListJson(list, NameJson); }

}  // namespace sluice::model::internal
