// Field-level JSON helpers shared by the schema-object codecs.
//
// Reading follows Go's encoding/json as TiDB relies on it: a key matches its
// field exactly or, failing that, ASCII case-insensitively; a null value
// leaves the field at its zero value; unknown keys are skipped. Where Go
// would fail (a string for an integer field, a fraction or an out-of-range
// number, a non-array for a list), the reader returns Corruption naming the
// path of the offending value. The model adds one rule of its own: keys a
// struct cannot do without are required, and absent or null is an error.
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "codec/model/go_json.h"
#include "codec/model/types.h"
#include "common/status.h"

namespace sluice::model::internal {

enum class Presence { kOptional, kRequired };
inline constexpr Presence kRequired = Presence::kRequired;
inline constexpr Presence kOptional = Presence::kOptional;

// The member `key` of `object`, exact match first, then ASCII
// case-insensitive. nullptr when absent.
const JsonValue* FindKey(const JsonValue& object, std::string_view key);

// JSON type of `value` for error messages ("string", "number", ...).
std::string_view JsonTypeName(const JsonValue& value);

Status TypeError(std::string_view path, std::string_view expected, const JsonValue& got);

Status ReadSigned(const JsonValue& value, std::string_view path, int64_t min, int64_t max,
                  int64_t* out);
Status ReadUnsigned(const JsonValue& value, std::string_view path, uint64_t max, uint64_t* out);

// Reads an integer or an enum with an integer underlying type, range-checked
// against that type. Null leaves *out unchanged.
template <typename T>
Status ReadInteger(const JsonValue& value, std::string_view path, T* out) {
  if (value.is_null()) return Status::Ok();
  using Int = typename std::conditional_t<std::is_enum_v<T>, std::underlying_type<T>,
                                          std::type_identity<T>>::type;
  if constexpr (std::is_signed_v<Int>) {
    int64_t v = 0;
    RETURN_IF_ERROR(ReadSigned(value, path, std::numeric_limits<Int>::min(),
                               std::numeric_limits<Int>::max(), &v));
    *out = static_cast<T>(v);
  } else {
    uint64_t v = 0;
    RETURN_IF_ERROR(ReadUnsigned(value, path, std::numeric_limits<Int>::max(), &v));
    *out = static_cast<T>(v);
  }
  return Status::Ok();
}

Status ReadBool(const JsonValue& value, std::string_view path, bool* out);
Status ReadString(const JsonValue& value, std::string_view path, std::string* out);
// {"O": ..., "L": ...}, or a bare string as older TiDB wrote partition names.
// A missing "L" is derived from "O" (ASCII lower-case).
Status ReadCIStr(const JsonValue& value, std::string_view path, CIStr* out);
// A Go []byte: base64 text, or null for a nil slice (nullopt).
Status ReadBytes(const JsonValue& value, std::string_view path, std::optional<std::string>* out);

// Reads an array element by element with `read(value, path, T*)`. Null gives
// an empty list; any other non-array is Corruption.
template <typename T, typename ReadFn>
Status ReadList(const JsonValue& value, std::string_view path, std::vector<T>* out, ReadFn read) {
  out->clear();
  if (value.is_null()) return Status::Ok();
  if (!value.is_array()) return TypeError(path, "array", value);
  out->resize(value.size());
  for (size_t i = 0; i < value.size(); ++i) {
    RETURN_IF_ERROR(read(value[i], std::string(path) + "[" + std::to_string(i) + "]", &(*out)[i]));
  }
  return Status::Ok();
}

// Reads the members of one JSON object into a struct. Calls chain; after the
// first error the rest are skipped and status() reports it.
class ObjectReader {
 public:
  // If `value` is not an object, status() is Corruption from the start.
  ObjectReader(const JsonValue& value, std::string path);

  const Status& status() const { return status_; }

  template <typename T>
  ObjectReader& Int(std::string_view key, T* out, Presence presence = kOptional) {
    return Field(key, out, ReadInteger<T>, presence);
  }
  ObjectReader& Bool(std::string_view key, bool* out) { return Field(key, out, ReadBool); }
  ObjectReader& Str(std::string_view key, std::string* out) { return Field(key, out, ReadString); }
  ObjectReader& Name(std::string_view key, CIStr* out, Presence presence = kOptional) {
    return Field(key, out, ReadCIStr, presence);
  }
  ObjectReader& Bytes(std::string_view key, std::optional<std::string>* out);
  // Keeps the member verbatim (null when absent).
  ObjectReader& Raw(std::string_view key, JsonValue* out);

  // Reads a member with `read(value, path, T*)`; absent or null leaves *out.
  template <typename T, typename ReadFn>
  ObjectReader& Field(std::string_view key, T* out, ReadFn read, Presence presence = kOptional) {
    if (const JsonValue* member = Member(key, presence)) Record(read(*member, Path(key), out));
    return *this;
  }

  // Reads a member that may be null (nullopt) into an optional struct.
  template <typename T, typename ReadFn>
  ObjectReader& Optional(std::string_view key, std::optional<T>* out, ReadFn read) {
    const JsonValue* member = Member(key, kOptional);
    if (member == nullptr) return *this;
    out->emplace();
    Record(read(*member, Path(key), &**out));
    return *this;
  }

  template <typename T, typename ReadFn>
  ObjectReader& List(std::string_view key, std::vector<T>* out, ReadFn read) {
    if (const JsonValue* member = Member(key, kOptional)) {
      Record(ReadList(*member, Path(key), out, read));
    }
    return *this;
  }

 private:
  // The non-null member to read, or nullptr. Records an error when a
  // required member is absent or null, or when an earlier call failed.
  const JsonValue* Member(std::string_view key, Presence presence);
  std::string Path(std::string_view key) const;
  void Record(Status status);

  const JsonValue& object_;
  std::string path_;
  Status status_;
};

// Writers. Each returns the JSON shape Go's encoder gives the same field.
template <typename T>
JsonValue Num(T value) {
  if constexpr (std::is_enum_v<T>) {
    return Num(static_cast<std::underlying_type_t<T>>(value));
  } else if constexpr (std::is_signed_v<T>) {
    return JsonValue(static_cast<int64_t>(value));
  } else {
    return JsonValue(static_cast<uint64_t>(value));
  }
}
JsonValue NameJson(const CIStr& name);
JsonValue BytesJson(const std::optional<std::string>& bytes);

// A Go slice: null when empty (TiDB leaves unused slices nil), else an array
// of `write(element)`.
template <typename T, typename WriteFn>
JsonValue ListJson(const std::vector<T>& list, WriteFn write) {
  if (list.empty()) return JsonValue();
  JsonValue array = JsonValue::array();
  for (const T& element : list) array.push_back(write(element));
  return array;
}
JsonValue StringListJson(const std::vector<std::string>& list);
JsonValue IntListJson(const std::vector<int64_t>& list);
JsonValue NameListJson(const std::vector<CIStr>& list);

Status ReadInt64Element(const JsonValue& value, std::string_view path, int64_t* out);

// Parses `json` and decodes the root with `decode(value, path, T*)`. The
// decoders check types before reading, so nothing should throw; the catch is
// a last guard that keeps library exceptions from crossing this edge.
template <typename T, typename DecodeFn>
Result<T> ParseDocument(std::string_view json, std::string_view root, DecodeFn decode) {
  ASSIGN_OR_RETURN(JsonValue document, ParseJsonDocument(json));
  T out;
  try {
    RETURN_IF_ERROR(decode(document, root, &out));
  } catch (const JsonValue::exception& e) {
    return Corruption(std::string(root) + ": " + e.what());
  }
  return out;
}

}  // namespace sluice::model::internal
