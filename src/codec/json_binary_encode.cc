// nlohmann::json -> binary JSON.
#include <bit>
#include <cmath>
#include <nlohmann/json.hpp>

#include "codec/endian.h"
#include "codec/json_binary.h"
#include "codec/number.h"

namespace sluice::codec {

namespace {

constexpr size_t kEncHeaderSize = 8;
constexpr size_t kEncKeyEntrySize = 6;
constexpr size_t kEncValueEntrySize = 5;
constexpr size_t kMaxKeyLength = 0xFFFF;

class BinaryWriter {
 public:
  explicit BinaryWriter(std::string* buf) : buf_(buf) {}

  // Appends the body of `v` and returns its type code.
  Result<uint8_t> Body(const nlohmann::json& v, int depth);

 private:
  Result<uint8_t> Number(const nlohmann::json& v);
  Status Array(const nlohmann::json& v, int depth);
  Status Object(const nlohmann::json& v, int depth);
  // Starts a container: count, size placeholder and zeroed entries.
  size_t BeginContainer(size_t count, size_t entry_bytes);
  void EndContainer(size_t doc_off);
  Status Element(const nlohmann::json& v, size_t doc_off, size_t entry_off, int depth);

  std::string* buf_;
};

Result<uint8_t> BinaryWriter::Body(const nlohmann::json& v, int depth) {
  using Type = nlohmann::json::value_t;
  switch (v.type()) {
    case Type::null:
      buf_->push_back(static_cast<char>(json_literal::kNull));
      return json_type::kLiteral;
    case Type::boolean:
      buf_->push_back(
          static_cast<char>(v.get<bool>() ? json_literal::kTrue : json_literal::kFalse));
      return json_type::kLiteral;
    case Type::number_integer:
    case Type::number_unsigned:
    case Type::number_float:
      return Number(v);
    case Type::string: {
      const auto& s = v.get_ref<const std::string&>();
      EncodeUvarint(s.size(), buf_);
      buf_->append(s);
      return json_type::kString;
    }
    case Type::array:
      RETURN_IF_ERROR(Array(v, depth + 1));
      return json_type::kArray;
    case Type::object:
      RETURN_IF_ERROR(Object(v, depth + 1));
      return json_type::kObject;
    default:
      return InvalidArgument("json: value type has no binary JSON form");
  }
}

Result<uint8_t> BinaryWriter::Number(const nlohmann::json& v) {
  if (v.is_number_integer() && !v.is_number_unsigned()) {
    internal::AppendLe64(static_cast<uint64_t>(v.get<int64_t>()), buf_);
    return json_type::kInt64;
  }
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    internal::AppendLe64(u, buf_);
    return u <= static_cast<uint64_t>(INT64_MAX) ? json_type::kInt64 : json_type::kUint64;
  }
  double d = v.get<double>();
  if (!std::isfinite(d)) return InvalidArgument("json: NaN or infinite number");
  internal::AppendLe64(std::bit_cast<uint64_t>(d), buf_);
  return json_type::kFloat64;
}

size_t BinaryWriter::BeginContainer(size_t count, size_t entry_bytes) {
  size_t doc_off = buf_->size();
  internal::AppendLe32(static_cast<uint32_t>(count), buf_);
  internal::AppendLe32(0, buf_);
  buf_->append(count * entry_bytes, '\0');
  return doc_off;
}

void BinaryWriter::EndContainer(size_t doc_off) {
  internal::StoreLe32(static_cast<uint32_t>(buf_->size() - doc_off), buf_->data() + doc_off + 4);
}

Status BinaryWriter::Element(const nlohmann::json& v, size_t doc_off, size_t entry_off, int depth) {
  size_t elem_off = buf_->size();
  ASSIGN_OR_RETURN(uint8_t type, Body(v, depth));
  (*buf_)[entry_off] = static_cast<char>(type);
  if (type == json_type::kLiteral) {  // literals are inlined in the entry
    (*buf_)[entry_off + 1] = (*buf_)[elem_off];
    buf_->resize(elem_off);
    return Status::Ok();
  }
  internal::StoreLe32(static_cast<uint32_t>(elem_off - doc_off), buf_->data() + entry_off + 1);
  return Status::Ok();
}

Status BinaryWriter::Array(const nlohmann::json& v, int depth) {
  if (depth > kMaxJsonDepth) return InvalidArgument("json: nesting too deep");
  size_t doc_off = BeginContainer(v.size(), kEncValueEntrySize);
  size_t i = 0;
  for (const auto& elem : v) {
    RETURN_IF_ERROR(
        Element(elem, doc_off, doc_off + kEncHeaderSize + i++ * kEncValueEntrySize, depth));
  }
  EndContainer(doc_off);
  return Status::Ok();
}

Status BinaryWriter::Object(const nlohmann::json& v, int depth) {
  if (depth > kMaxJsonDepth) return InvalidArgument("json: nesting too deep");
  // nlohmann::json keeps object members in a std::map, i.e. sorted bytewise.
  size_t n = v.size();
  size_t doc_off = BeginContainer(n, kEncKeyEntrySize + kEncValueEntrySize);
  size_t i = 0;
  for (const auto& [key, unused] : v.items()) {
    if (key.size() > kMaxKeyLength) return InvalidArgument("json: object key longer than 65535");
    char* entry = buf_->data() + doc_off + kEncHeaderSize + i++ * kEncKeyEntrySize;
    internal::StoreLe32(static_cast<uint32_t>(buf_->size() - doc_off), entry);
    internal::StoreLe16(static_cast<uint16_t>(key.size()), entry + 4);
    buf_->append(key);
  }
  size_t value_entries = doc_off + kEncHeaderSize + n * kEncKeyEntrySize;
  i = 0;
  for (const auto& elem : v) {
    RETURN_IF_ERROR(Element(elem, doc_off, value_entries + i++ * kEncValueEntrySize, depth));
  }
  EndContainer(doc_off);
  return Status::Ok();
}

}  // namespace

Status EncodeJsonBinary(const nlohmann::json& value, std::string* out) {
  size_t type_pos = out->size();
  out->push_back('\0');
  BinaryWriter writer(out);
  Result<uint8_t> type = writer.Body(value, 0);
  if (!type.ok()) {
    out->resize(type_pos);
    return type.status();
  }
  (*out)[type_pos] = static_cast<char>(*type);
  return Status::Ok();
}

Result<std::string> JsonTextToBinary(std::string_view text) {
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return InvalidArgument("json: malformed text");
  std::string out;
  RETURN_IF_ERROR(EncodeJsonBinary(parsed, &out));
  return out;
}

}  // namespace sluice::codec
