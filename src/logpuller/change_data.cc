#include "logpuller/change_data.h"

#include <utility>

#include "google/protobuf/io/coded_stream.h"

namespace sluice::logpuller {
namespace {

enum WireType : uint32_t {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5,
};

// Protobuf's default recursion limit: messages and groups may nest this many
// levels below the top-level message.
constexpr int kMaxDepth = 100;
// The nesting level of each message read here (ChangeDataEvent is 0).
constexpr int kEventDepth = 1;
constexpr int kEntriesDepth = 2;
constexpr int kErrorDepth = 2;
constexpr int kRowDepth = 3;

// A cursor over protobuf wire bytes, accepting what protobuf's parser (3.21)
// accepts: tags and sizes of at most five bytes, sizes below 2 GiB (protobuf
// stops a little short of that; messages here are at most 256 MiB), varints
// of at most ten bytes (high bits beyond the type dropped).
// Every read checks the bounds and returns false on malformed input.
class WireReader {
 public:
  explicit WireReader(std::string_view bytes) : data_(bytes) {}

  bool done() const { return pos_ == data_.size(); }

  bool ReadVarint(uint64_t* value) { return ReadVarintOf(10, value); }

  bool ReadTag(uint32_t* field, uint32_t* wire_type) {
    uint64_t tag = 0;
    if (!ReadVarintOf(5, &tag)) return false;
    const auto tag32 = static_cast<uint32_t>(tag);  // Protobuf keeps 32 bits.
    *field = tag32 >> 3;
    *wire_type = tag32 & 7;
    return *field != 0;
  }

  bool ReadBytes(std::string_view* out) {
    uint64_t size = 0;
    if (!ReadVarintOf(5, &size) || size > kMaxSize || size > data_.size() - pos_) return false;
    *out = data_.substr(pos_, size);
    pos_ += size;
    return true;
  }

  bool Skip(size_t size) {
    if (size > data_.size() - pos_) return false;
    pos_ += size;
    return true;
  }

  // Skips the value of a field whose tag was just read, in a message at
  // nesting level `depth`.
  bool SkipField(uint32_t field, uint32_t wire_type, int depth) {
    uint64_t ignored = 0;
    std::string_view bytes;
    switch (wire_type) {
      case kVarint:
        return ReadVarint(&ignored);
      case kFixed64:
        return Skip(8);
      case kLengthDelimited:
        return ReadBytes(&bytes);
      case kFixed32:
        return Skip(4);
      case kStartGroup:
        return SkipGroup(field, depth + 1);
      default:
        return false;  // An end-group without its start, or wire types 6 and 7.
    }
  }

 private:
  static constexpr uint64_t kMaxSize = (uint64_t{1} << 31) - 1;

  bool ReadVarintOf(int max_bytes, uint64_t* value) {
    uint64_t result = 0;
    for (int i = 0; i < max_bytes; ++i) {
      if (pos_ == data_.size()) return false;
      uint8_t byte = static_cast<uint8_t>(data_[pos_++]);
      result |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
      if ((byte & 0x80) == 0) {
        *value = result;
        return true;
      }
    }
    return false;
  }

  bool SkipGroup(uint32_t group_field, int depth) {
    if (depth > kMaxDepth) return false;
    while (true) {
      uint32_t field = 0;
      uint32_t wire_type = 0;
      if (!ReadTag(&field, &wire_type)) return false;
      if (wire_type == kEndGroup) return field == group_field;
      if (!SkipField(field, wire_type, depth)) return false;
    }
  }

  std::string_view data_;
  size_t pos_ = 0;
};

// Merges a sub-message found at nesting level `depth` into *message with
// protobuf, with the recursion budget it would have inside the whole message
// and failing where the whole message's parse would (an end-group or zero
// tag ends it early).
bool MergeAt(std::string_view bytes, int depth, google::protobuf::Message* message) {
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  in.SetRecursionLimit(kMaxDepth - depth);
  return message->MergeFromCodedStream(&in) && in.ConsumedEntireMessage();
}

bool ParseAt(std::string_view bytes, int depth, google::protobuf::Message* message) {
  message->Clear();
  return MergeAt(bytes, depth, message);
}

// The Event header: fields of cdcpb.Event (proto/cdcpb.proto).
bool ReadEvent(std::string_view body, RegionEventRef* ref) {
  ref->body = body;
  WireReader in(body);
  int oneof_sets = 0;
  auto set = [&](RegionEventRef::Kind kind, std::string_view payload) {
    ref->kind = kind;
    ref->payload = payload;
    ++oneof_sets;
  };
  while (!in.done()) {
    uint32_t field = 0;
    uint32_t wire_type = 0;
    if (!in.ReadTag(&field, &wire_type)) return false;
    std::string_view payload;
    if (wire_type == kVarint && (field == 1 || field == 7 || field == 6)) {
      uint64_t value = 0;
      if (!in.ReadVarint(&value)) return false;
      if (field == 1) ref->region_id = value;
      if (field == 7) ref->request_id = value;
      if (field == 6) {
        set(RegionEventRef::Kind::kResolvedTs, {});
        ref->resolved_ts = value;
      }
      continue;
    }
    if (wire_type == kLengthDelimited && field >= 3 && field <= 8 && field != 6 && field != 7) {
      if (!in.ReadBytes(&payload)) return false;
      static constexpr RegionEventRef::Kind kKinds[] = {
          RegionEventRef::Kind::kEntries, RegionEventRef::Kind::kAdmin,
          RegionEventRef::Kind::kError,   RegionEventRef::Kind::kNone,
          RegionEventRef::Kind::kNone,    RegionEventRef::Kind::kLongTxn};
      set(kKinds[field - 3], payload);
      continue;
    }
    if (!in.SkipField(field, wire_type, kEventDepth)) return false;
  }
  ref->reparse = oneof_sets > 1;
  return true;
}

// The fields of cdcpb.Event.Row. A field with an unexpected wire type is
// an unknown field to protobuf, and skipped here too.
bool ReadRow(std::string_view bytes, RowView* row) {
  *row = RowView{};
  WireReader in(bytes);
  while (!in.done()) {
    uint32_t field = 0;
    uint32_t wire_type = 0;
    if (!in.ReadTag(&field, &wire_type)) return false;
    if (wire_type == kVarint && field != 5 && field != 6 && field != 7) {
      uint64_t value = 0;
      if (!in.ReadVarint(&value)) return false;
      switch (field) {
        case 1:
          row->start_ts = value;
          break;
        case 2:
          row->commit_ts = value;
          break;
        case 3:
          row->type = static_cast<int32_t>(value);
          break;
        case 4:
          row->op_type = static_cast<int32_t>(value);
          break;
        case 10:
          row->generation = value;
          break;
        default:
          break;  // expire_ts_unix_secs, txn_source, unknown fields.
      }
      continue;
    }
    if (wire_type == kLengthDelimited && field >= 5 && field <= 7) {
      std::string_view* target = field == 5   ? &row->key
                                 : field == 6 ? &row->value
                                              : &row->old_value;
      if (!in.ReadBytes(target)) return false;
      continue;
    }
    if (!in.SkipField(field, wire_type, kRowDepth)) return false;
  }
  return true;
}

}  // namespace

Status SplitChangeData(std::string_view bytes, ChangeDataFrame* out) {
  out->events.clear();
  out->resolved_ts.reset();
  WireReader in(bytes);
  while (!in.done()) {
    uint32_t field = 0;
    uint32_t wire_type = 0;
    if (!in.ReadTag(&field, &wire_type)) return Corruption("ChangeDataEvent: bad field tag");
    std::string_view payload;
    if (wire_type == kLengthDelimited && field == 1) {
      if (!in.ReadBytes(&payload)) return Corruption("ChangeDataEvent: truncated event");
      if (!ReadEvent(payload, &out->events.emplace_back())) {
        return Corruption("ChangeDataEvent: event " + std::to_string(out->events.size() - 1) +
                          " does not decode");
      }
      continue;
    }
    if (wire_type == kLengthDelimited && field == 2) {
      if (!in.ReadBytes(&payload)) return Corruption("ChangeDataEvent: truncated resolved ts");
      if (!out->resolved_ts.has_value()) out->resolved_ts.emplace();
      // A repeated singular message field is merged, as protobuf does.
      if (!MergeAt(payload, kEventDepth, &*out->resolved_ts)) {
        return Corruption("ChangeDataEvent: resolved ts does not decode");
      }
      continue;
    }
    if (!in.SkipField(field, wire_type, 0)) return Corruption("ChangeDataEvent: malformed field");
  }
  return Status::Ok();
}

RowView ViewOf(const cdcpb::Event_Row& row) {
  RowView view;
  view.start_ts = row.start_ts();
  view.commit_ts = row.commit_ts();
  view.type = static_cast<int32_t>(row.type());
  view.op_type = static_cast<int32_t>(row.op_type());
  view.key = row.key();
  view.value = row.value();
  view.old_value = row.old_value();
  view.generation = row.generation();
  return view;
}

Status RegionEventDecoder::Decode(const RegionEventRef& ref, DecodedRegionEvent* out) {
  out->kind = RegionEventRef::Kind::kNone;
  out->rows = nullptr;
  out->resolved_ts = 0;
  if (ref.reparse) return DecodeWhole(ref, out);
  out->resolved_ts = ref.resolved_ts;
  switch (ref.kind) {
    case RegionEventRef::Kind::kEntries:
      RETURN_IF_ERROR(DecodeRows(ref.payload));
      out->kind = ref.kind;
      out->rows = &rows_;
      return Status::Ok();
    case RegionEventRef::Kind::kError:
      if (!ParseAt(ref.payload, kErrorDepth, &out->error)) {
        return Corruption("region event error does not decode");
      }
      out->kind = ref.kind;
      return Status::Ok();
    case RegionEventRef::Kind::kAdmin:
    case RegionEventRef::Kind::kLongTxn: {
      // Not used, but checked like any other bytes from the wire.
      cdcpb::Event event;
      if (!ParseAt(ref.body, kEventDepth, &event)) {
        return Corruption("region event does not decode");
      }
      out->kind = ref.kind;
      return Status::Ok();
    }
    case RegionEventRef::Kind::kNone:
    case RegionEventRef::Kind::kResolvedTs:
      out->kind = ref.kind;
      return Status::Ok();
  }
  return Status::Ok();
}

Status RegionEventDecoder::DecodeRows(std::string_view entries) {
  if (rows_.capacity() > kMaxReusedRows) std::vector<RowView>().swap(rows_);
  rows_.clear();
  WireReader in(entries);
  while (!in.done()) {
    uint32_t field = 0;
    uint32_t wire_type = 0;
    if (!in.ReadTag(&field, &wire_type)) return Corruption("entries: bad field tag");
    std::string_view bytes;
    if (field != 1 || wire_type != kLengthDelimited) {
      if (!in.SkipField(field, wire_type, kEntriesDepth)) {
        return Corruption("entries: malformed field");
      }
      continue;
    }
    if (!in.ReadBytes(&bytes) || !ReadRow(bytes, &rows_.emplace_back())) {
      return Corruption("entries: row " + std::to_string(rows_.size() - 1) + " does not decode");
    }
  }
  return Status::Ok();
}

Status RegionEventDecoder::DecodeWhole(const RegionEventRef& ref, DecodedRegionEvent* out) {
  cdcpb::Event event;
  if (!ParseAt(ref.body, kEventDepth, &event)) {
    return Corruption("region event does not decode");
  }
  switch (event.event_case()) {
    case cdcpb::Event::kEntries:
      // Protobuf merged the repeated members; decode the merged rows. A
      // large buffer is not kept for the next such (rare) event.
      if (merged_.capacity() > kMaxReusedBytes) std::string().swap(merged_);
      merged_ = event.entries().SerializeAsString();
      RETURN_IF_ERROR(DecodeRows(merged_));
      out->kind = RegionEventRef::Kind::kEntries;
      out->rows = &rows_;
      break;
    case cdcpb::Event::kError:
      out->kind = RegionEventRef::Kind::kError;
      out->error = std::move(*event.mutable_error());
      break;
    case cdcpb::Event::kResolvedTs:
      out->kind = RegionEventRef::Kind::kResolvedTs;
      out->resolved_ts = event.resolved_ts();
      break;
    case cdcpb::Event::kAdmin:
      out->kind = RegionEventRef::Kind::kAdmin;
      break;
    case cdcpb::Event::kLongTxn:
      out->kind = RegionEventRef::Kind::kLongTxn;
      break;
    case cdcpb::Event::EVENT_NOT_SET:
      out->kind = RegionEventRef::Kind::kNone;
      break;
  }
  return Status::Ok();
}

}  // namespace sluice::logpuller
