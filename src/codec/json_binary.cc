// Binary JSON -> JSON text.
#include "codec/json_binary.h"

#include <bit>

#include "codec/endian.h"
#include "codec/json_text.h"
#include "codec/mysql_type.h"
#include "codec/mytime.h"
#include "codec/number.h"

namespace sluice::codec {

namespace {

constexpr size_t kHeaderSize = 8;      // element count + total size
constexpr size_t kKeyEntrySize = 6;    // offset u32 + length u16
constexpr size_t kValueEntrySize = 5;  // type u8 + offset-or-inline u32

// Length of a scalar or container body at the front of `data`.
Result<size_t> BodyLength(uint8_t type, std::string_view data) {
  size_t n = 0;
  switch (type) {
    case json_type::kLiteral:
      n = 1;
      break;
    case json_type::kInt64:
    case json_type::kUint64:
    case json_type::kFloat64:
    case json_type::kDate:
    case json_type::kDatetime:
    case json_type::kTimestamp:
      n = 8;
      break;
    case json_type::kDuration:
      n = 12;
      break;
    case json_type::kString:
    case json_type::kOpaque: {
      size_t skip = type == json_type::kOpaque ? 1 : 0;
      if (data.size() < skip) return Corruption("json: truncated opaque");
      std::string_view rest = data.substr(skip);
      ASSIGN_OR_RETURN(uint64_t len, DecodeUvarint(&rest));
      if (len > rest.size()) return Corruption("json: string length out of range");
      n = data.size() - rest.size() + static_cast<size_t>(len);
      break;
    }
    case json_type::kObject:
    case json_type::kArray:
      if (data.size() < kHeaderSize) return Corruption("json: truncated container header");
      n = internal::LoadLe32(data.data() + 4);
      if (n < kHeaderSize) return Corruption("json: container size below header");
      break;
    default:
      return Corruption("json: unknown type code " + std::to_string(type));
  }
  if (n > data.size()) return Corruption("json: value exceeds its container");
  return n;
}

class TextWriter {
 public:
  TextWriter(std::string* out, size_t budget) : out_(out), budget_(budget) {}

  // `data` starts at the value body and ends at the end of its container.
  Status Value(uint8_t type, std::string_view data, int depth) {
    ASSIGN_OR_RETURN(size_t n, BodyLength(type, data));
    std::string_view body = data.substr(0, n);
    bool is_container = type == json_type::kObject || type == json_type::kArray;
    RETURN_IF_ERROR(Charge(is_container ? 1 : 1 + n));
    if (is_container) return Container(type == json_type::kObject, body, depth + 1);
    return Scalar(type, body);
  }

 private:
  // In a well-formed document every entry and every scalar or key byte is
  // distinct, so the charges never exceed the document size. Entries that
  // share bytes (a malicious document) run out of budget instead of
  // producing unbounded output.
  Status Charge(size_t n) {
    if (n > budget_) return Corruption("json: entries overlap (more output than input)");
    budget_ -= n;
    return Status::Ok();
  }

  Status Scalar(uint8_t type, std::string_view body);
  Status Container(bool is_object, std::string_view body, int depth);
  Status Key(std::string_view body, size_t i);
  Status Element(std::string_view body, size_t entry_off, int depth);

  std::string* out_;
  size_t budget_;
};

Status TextWriter::Scalar(uint8_t type, std::string_view body) {
  const char* p = body.data();
  switch (type) {
    case json_type::kLiteral:
      return AppendJsonLiteral(static_cast<uint8_t>(p[0]), out_);
    case json_type::kInt64:
      out_->append(std::to_string(static_cast<int64_t>(internal::LoadLe64(p))));
      return Status::Ok();
    case json_type::kUint64:
      out_->append(std::to_string(internal::LoadLe64(p)));
      return Status::Ok();
    case json_type::kFloat64:
      return AppendJsonFloat(std::bit_cast<double>(internal::LoadLe64(p)), out_);
    case json_type::kString: {
      std::string_view rest = body;
      (void)DecodeUvarint(&rest);  // length already validated by BodyLength
      AppendJsonQuoted(rest, out_);
      return Status::Ok();
    }
    case json_type::kOpaque: {
      std::string_view rest = body.substr(1);
      (void)DecodeUvarint(&rest);
      AppendJsonOpaque(static_cast<uint8_t>(p[0]), rest, out_);
      return Status::Ok();
    }
    case json_type::kDuration:
      out_->push_back('"');
      AppendDuration(static_cast<int64_t>(internal::LoadLe64(p)), kMaxFsp, out_);
      out_->push_back('"');
      return Status::Ok();
    default: {  // date, datetime, timestamp
      uint8_t time_type = type == json_type::kDate ? mysql_type::kDate : mysql_type::kDatetime;
      out_->push_back('"');
      AppendTime(FromCoreTime(internal::LoadLe64(p)), time_type, kMaxFsp, out_);
      out_->push_back('"');
      return Status::Ok();
    }
  }
}

Status TextWriter::Container(bool is_object, std::string_view body, int depth) {
  if (depth > kMaxJsonDepth) return Corruption("json: nesting too deep");
  uint64_t count = internal::LoadLe32(body.data());
  uint64_t per_entry = kValueEntrySize + (is_object ? kKeyEntrySize : 0);
  if (kHeaderSize + count * per_entry > body.size()) {
    return Corruption("json: element count exceeds container size");
  }
  size_t value_entries = kHeaderSize + (is_object ? count * kKeyEntrySize : 0);
  out_->push_back(is_object ? '{' : '[');
  for (size_t i = 0; i < count; ++i) {
    if (i != 0) out_->append(", ");
    if (is_object) {
      RETURN_IF_ERROR(Key(body, i));
      out_->append(": ");
    }
    RETURN_IF_ERROR(Element(body, value_entries + i * kValueEntrySize, depth));
  }
  out_->push_back(is_object ? '}' : ']');
  return Status::Ok();
}

Status TextWriter::Key(std::string_view body, size_t i) {
  const char* entry = body.data() + kHeaderSize + i * kKeyEntrySize;
  uint64_t off = internal::LoadLe32(entry);
  uint64_t len = internal::LoadLe16(entry + 4);
  if (off + len > body.size()) return Corruption("json: key out of range");
  RETURN_IF_ERROR(Charge(len));
  AppendJsonQuoted(body.substr(off, len), out_);
  return Status::Ok();
}

Status TextWriter::Element(std::string_view body, size_t entry_off, int depth) {
  const char* entry = body.data() + entry_off;
  uint8_t type = static_cast<uint8_t>(entry[0]);
  if (type == json_type::kLiteral) {
    RETURN_IF_ERROR(Charge(1));
    return AppendJsonLiteral(static_cast<uint8_t>(entry[1]), out_);
  }
  uint64_t off = internal::LoadLe32(entry + 1);
  if (off >= body.size()) return Corruption("json: value offset out of range");
  return Value(type, body.substr(off), depth);
}

}  // namespace

Result<size_t> JsonBinaryLength(std::string_view typed) {
  if (typed.empty()) return Corruption("json: empty value");
  ASSIGN_OR_RETURN(size_t n, BodyLength(static_cast<uint8_t>(typed[0]), typed.substr(1)));
  return n + 1;
}

Status AppendJsonText(std::string_view typed, std::string* out) {
  ASSIGN_OR_RETURN(size_t n, JsonBinaryLength(typed));
  if (n != typed.size()) return Corruption("json: trailing bytes after value");
  TextWriter writer(out, typed.size());
  return writer.Value(static_cast<uint8_t>(typed[0]), typed.substr(1), 0);
}

Result<std::string> JsonBinaryToText(std::string_view typed) {
  std::string out;
  RETURN_IF_ERROR(AppendJsonText(typed, &out));
  return out;
}

}  // namespace sluice::codec
