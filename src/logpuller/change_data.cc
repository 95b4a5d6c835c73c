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
constexpr int kMemberDepth = 2;  // Entries, Error, Admin, LongTxn.
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

// What a field handler did with the field whose tag was just read.
enum class FieldRead { kRead, kUnknown, kBad };

// Reads every field of the message `bytes`, at nesting level `depth`.
// `handle(in, field, wire_type)` reads the value of a field it knows
// (kRead), leaves it to be skipped as unknown (kUnknown) or finds it bad
// (kBad). Returns false on malformed input.
template <typename Handle>
bool ReadFields(std::string_view bytes, int depth, Handle&& handle) {
  WireReader in(bytes);
  while (!in.done()) {
    uint32_t field = 0;
    uint32_t wire_type = 0;
    if (!in.ReadTag(&field, &wire_type)) return false;
    switch (handle(in, field, wire_type)) {
      case FieldRead::kRead:
        break;
      case FieldRead::kUnknown:
        if (!in.SkipField(field, wire_type, depth)) return false;
        break;
      case FieldRead::kBad:
        return false;
    }
  }
  return true;
}

// The member of cdcpb.Event's `event` oneof that a length-delimited field
// number sets, or kNone.
RegionEventRef::Kind MemberKind(uint32_t field) {
  switch (field) {
    case 3:
      return RegionEventRef::Kind::kEntries;
    case 4:
      return RegionEventRef::Kind::kAdmin;
    case 5:
      return RegionEventRef::Kind::kError;
    case 8:
      return RegionEventRef::Kind::kLongTxn;
    default:
      return RegionEventRef::Kind::kNone;
  }
}

// The Event header: fields of cdcpb.Event (proto/cdcpb.proto).
bool ReadEvent(std::string_view body, RegionEventRef* ref) {
  ref->body = body;
  int oneof_sets = 0;
  bool ok = ReadFields(body, kEventDepth, [&](WireReader& in, uint32_t field, uint32_t wire_type) {
    if (wire_type == kVarint && (field == 1 || field == 6 || field == 7)) {
      uint64_t value = 0;
      if (!in.ReadVarint(&value)) return FieldRead::kBad;
      if (field == 1) ref->region_id = value;
      if (field == 7) ref->request_id = value;
      if (field == 6) {
        ref->kind = RegionEventRef::Kind::kResolvedTs;
        ref->payload = {};
        ref->resolved_ts = value;
        ++oneof_sets;
      }
      return FieldRead::kRead;
    }
    const RegionEventRef::Kind kind = MemberKind(field);
    if (wire_type != kLengthDelimited || kind == RegionEventRef::Kind::kNone) {
      return FieldRead::kUnknown;
    }
    if (!in.ReadBytes(&ref->payload)) return FieldRead::kBad;
    ref->kind = kind;
    ++oneof_sets;
    return FieldRead::kRead;
  });
  ref->reparse = oneof_sets > 1;
  return ok;
}

// The fields of cdcpb.Event.Row. A field with an unexpected wire type is
// an unknown field to protobuf, and skipped here too.
bool ReadRow(std::string_view bytes, RowView* row) {
  *row = RowView{};
  return ReadFields(bytes, kRowDepth, [row](WireReader& in, uint32_t field, uint32_t wire_type) {
    if (wire_type == kLengthDelimited && field >= 5 && field <= 7) {
      std::string_view* target = field == 5   ? &row->key
                                 : field == 6 ? &row->value
                                              : &row->old_value;
      return in.ReadBytes(target) ? FieldRead::kRead : FieldRead::kBad;
    }
    uint64_t* target = nullptr;
    uint64_t enum_value = 0;
    switch (field) {
      case 1:
        target = &row->start_ts;
        break;
      case 2:
        target = &row->commit_ts;
        break;
      case 3:
      case 4:
        target = &enum_value;
        break;
      case 10:
        target = &row->generation;
        break;
      default:
        return FieldRead::kUnknown;  // expire_ts_unix_secs, txn_source, unknown fields.
    }
    if (wire_type != kVarint) return FieldRead::kUnknown;
    if (!in.ReadVarint(target)) return FieldRead::kBad;
    if (field == 3) row->type = static_cast<int32_t>(enum_value);
    if (field == 4) row->op_type = static_cast<int32_t>(enum_value);
    return FieldRead::kRead;
  });
}

}  // namespace

Status SplitChangeData(std::string_view bytes, ChangeDataFrame* out) {
  out->events.clear();
  out->resolved_ts.reset();
  const char* bad = "malformed field";
  bool ok = ReadFields(bytes, 0, [&](WireReader& in, uint32_t field, uint32_t wire_type) {
    if (wire_type != kLengthDelimited || (field != 1 && field != 2)) return FieldRead::kUnknown;
    std::string_view payload;
    if (!in.ReadBytes(&payload)) {
      bad = "truncated field";
      return FieldRead::kBad;
    }
    if (field == 1 && !ReadEvent(payload, &out->events.emplace_back())) {
      bad = "an event does not decode";
      return FieldRead::kBad;
    }
    if (field == 2) {
      if (!out->resolved_ts.has_value()) out->resolved_ts.emplace();
      // A repeated singular message field is merged, as protobuf does.
      if (!MergeAt(payload, kEventDepth, &*out->resolved_ts)) {
        bad = "resolved ts does not decode";
        return FieldRead::kBad;
      }
    }
    return FieldRead::kRead;
  });
  if (!ok) {
    return Corruption("ChangeDataEvent: " + std::string(bad) + " (after " +
                      std::to_string(out->events.size()) + " events)");
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
      if (!ParseAt(ref.payload, kMemberDepth, &out->error)) {
        return Corruption("region event error does not decode");
      }
      out->kind = ref.kind;
      return Status::Ok();
    case RegionEventRef::Kind::kAdmin:
    case RegionEventRef::Kind::kLongTxn: {
      // Not used, but checked like any other bytes from the wire.
      cdcpb::Event_Admin admin;
      cdcpb::Event_LongTxn long_txn;
      google::protobuf::Message* member = ref.kind == RegionEventRef::Kind::kAdmin
                                              ? static_cast<google::protobuf::Message*>(&admin)
                                              : &long_txn;
      if (!ParseAt(ref.payload, kMemberDepth, member)) {
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
  bool ok =
      ReadFields(entries, kMemberDepth, [this](WireReader& in, uint32_t field, uint32_t wire_type) {
        if (field != 1 || wire_type != kLengthDelimited) return FieldRead::kUnknown;
        std::string_view bytes;
        if (!in.ReadBytes(&bytes) || !ReadRow(bytes, &rows_.emplace_back())) return FieldRead::kBad;
        return FieldRead::kRead;
      });
  if (!ok) return Corruption("entries: a row does not decode");
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
