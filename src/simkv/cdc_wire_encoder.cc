#include "simkv/cdc_wire_encoder.h"

#include <cstring>

namespace sluice::simkv::wire {

namespace {

// Wire types.
constexpr uint32_t kVarint = 0;
constexpr uint32_t kLen = 2;

constexpr uint8_t Tag(uint32_t field, uint32_t wire_type) {
  return static_cast<uint8_t>(field << 3 | wire_type);
}

size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// Writes `v` at `p`; returns the end.
char* PutVarint(char* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}

size_t VarintFieldSize(uint64_t v) { return v == 0 ? 0 : 1 + VarintSize(v); }
size_t BytesFieldSize(size_t n) { return n == 0 ? 0 : 1 + VarintSize(n) + n; }
size_t MessageFieldSize(size_t n) { return 1 + VarintSize(n) + n; }

char* PutVarintField(char* p, uint8_t tag, uint64_t v) {
  if (v == 0) return p;
  *p++ = static_cast<char>(tag);
  return PutVarint(p, v);
}

char* PutBytesField(char* p, uint8_t tag, std::string_view bytes) {
  if (bytes.empty()) return p;
  *p++ = static_cast<char>(tag);
  p = PutVarint(p, bytes.size());
  std::memcpy(p, bytes.data(), bytes.size());
  return p + bytes.size();
}

char* PutRow(char* p, const RowView& row) {
  p = PutVarintField(p, Tag(1, kVarint), row.start_ts);
  p = PutVarintField(p, Tag(2, kVarint), row.commit_ts);
  p = PutVarintField(p, Tag(3, kVarint), static_cast<uint64_t>(row.type));
  p = PutVarintField(p, Tag(4, kVarint), static_cast<uint64_t>(row.op_type));
  p = PutBytesField(p, Tag(5, kLen), row.key);
  p = PutBytesField(p, Tag(6, kLen), row.value);
  return PutBytesField(p, Tag(7, kLen), row.old_value);
}

// Grows `out` by `n` bytes; returns where they start.
char* Extend(std::string* out, size_t n) {
  size_t at = out->size();
  out->resize(at + n);
  return out->data() + at;
}

}  // namespace

size_t RowSize(const RowView& row) {
  return VarintFieldSize(row.start_ts) + VarintFieldSize(row.commit_ts) +
         VarintFieldSize(static_cast<uint64_t>(row.type)) +
         VarintFieldSize(static_cast<uint64_t>(row.op_type)) + BytesFieldSize(row.key.size()) +
         BytesFieldSize(row.value.size()) + BytesFieldSize(row.old_value.size());
}

void AppendRowsEvent(uint64_t region_id, uint64_t index, uint64_t request_id,
                     std::span<const RowView> rows, std::string* out) {
  size_t entries_size = 0;
  for (const RowView& row : rows) entries_size += MessageFieldSize(RowSize(row));
  const size_t event_size = VarintFieldSize(region_id) + VarintFieldSize(index) +
                            MessageFieldSize(entries_size) + VarintFieldSize(request_id);
  char* p = Extend(out, MessageFieldSize(event_size));
  *p++ = static_cast<char>(Tag(1, kLen));  // ChangeDataEvent.events
  p = PutVarint(p, event_size);
  p = PutVarintField(p, Tag(1, kVarint), region_id);
  p = PutVarintField(p, Tag(2, kVarint), index);
  *p++ = static_cast<char>(Tag(3, kLen));  // Event.entries
  p = PutVarint(p, entries_size);
  for (const RowView& row : rows) {
    *p++ = static_cast<char>(Tag(1, kLen));  // Entries.entries
    p = PutVarint(p, RowSize(row));
    p = PutRow(p, row);
  }
  PutVarintField(p, Tag(7, kVarint), request_id);
}

namespace {

void AppendMessageField(uint8_t tag, const google::protobuf::MessageLite& message,
                        std::string* out) {
  const size_t size = message.ByteSizeLong();
  char* p = Extend(out, MessageFieldSize(size));
  *p++ = static_cast<char>(tag);
  p = PutVarint(p, size);
  message.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(p));
}

}  // namespace

void AppendEvent(const cdcpb::Event& event, std::string* out) {
  AppendMessageField(Tag(1, kLen), event, out);
}

void AppendResolvedTs(const cdcpb::ResolvedTs& resolved, std::string* out) {
  AppendMessageField(Tag(2, kLen), resolved, out);
}

}  // namespace sluice::simkv::wire
