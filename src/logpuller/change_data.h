// Region events cut from one received cdcpb.ChangeDataEvent without parsing
// their rows. The stream reader keeps the message as bytes and reads only
// each Event's header fields (region id, request id, which oneof member is
// set) to route it; the region worker that owns the region then decodes
// that event's rows, on its own thread, as views into the bytes.
//
// The result is what protobuf's parser would give for the same bytes, for
// any field order, unknown fields and repeated singular fields (an Event
// whose oneof is set more than once is re-parsed whole). Bytes that do not
// decode give a Corruption status; nothing aborts. The check is per event
// and lazy: the top level and the event headers when the message arrives,
// an event's member only when a worker handles it, so an event for no known
// region is never looked into, and a bad event fails only its own run.
//
// Pure functions; a RegionEventDecoder is for one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cdcpb.pb.h"
#include "common/status.h"

namespace sluice::logpuller {

// The bytes of one received ChangeDataEvent, shared by the region events
// cut from it until the last of them has been handled.
using MessageBytes = std::shared_ptr<const std::string>;

// One `ChangeDataEvent.events` element, located in the message's bytes.
struct RegionEventRef {
  // The member of the Event's `event` oneof that is set (the last one on the
  // wire, as protobuf keeps it).
  enum class Kind : uint8_t { kNone, kEntries, kAdmin, kError, kResolvedTs, kLongTxn };

  uint64_t region_id = 0;
  uint64_t request_id = 0;
  Kind kind = Kind::kNone;
  // The oneof was set more than once: protobuf merges or replaces, so the
  // decoder parses `body` whole instead of `payload`.
  bool reparse = false;
  uint64_t resolved_ts = 0;  // kResolvedTs.
  std::string_view payload;  // The bytes of the set member (kEntries, kError, ...).
  std::string_view body;     // The whole Event.
};

// The top level of one ChangeDataEvent.
struct ChangeDataFrame {
  std::vector<RegionEventRef> events;
  std::optional<cdcpb::ResolvedTs> resolved_ts;  // Set when the field is present.
};

// Reads the top level of a serialized ChangeDataEvent and the header of each
// of its events. `out`'s views point into `bytes`, which must outlive them.
Status SplitChangeData(std::string_view bytes, ChangeDataFrame* out);

// One cdcpb.Event.Row, its bytes fields pointing into the message. The
// enums are kept as the integers on the wire (proto3 enums are open).
struct RowView {
  uint64_t start_ts = 0;
  uint64_t commit_ts = 0;
  int32_t type = 0;     // cdcpb::Event_LogType.
  int32_t op_type = 0;  // cdcpb::Event_Row_OpType.
  std::string_view key;
  std::string_view value;
  std::string_view old_value;
  uint64_t generation = 0;
};

// A view of a parsed row (for tests and tools that build rows as messages).
RowView ViewOf(const cdcpb::Event_Row& row);

// A region event with its rows decoded.
struct DecodedRegionEvent {
  RegionEventRef::Kind kind = RegionEventRef::Kind::kNone;
  // kEntries: owned by the decoder, valid until its next Decode() and while
  // the message's bytes live.
  const std::vector<RowView>* rows = nullptr;
  cdcpb::Error error;        // kError.
  uint64_t resolved_ts = 0;  // kResolvedTs.
};

// Decodes the member of region events that the worker needs. Rows are
// decoded straight from the bytes into views (no Row message, no copy), all
// of an event's rows before any is used, so a malformed event yields nothing.
class RegionEventDecoder {
 public:
  // Corruption if the member's bytes do not decode; *out then holds no rows
  // (kind kNone).
  Status Decode(const RegionEventRef& ref, DecodedRegionEvent* out);

 private:
  // Buffers that grew past these sizes are not kept for reuse.
  static constexpr size_t kMaxReusedRows = 4096;
  static constexpr size_t kMaxReusedBytes = 1 << 20;

  Status DecodeRows(std::string_view entries);
  Status DecodeWhole(const RegionEventRef& ref, DecodedRegionEvent* out);

  std::vector<RowView> rows_;
  std::string merged_;  // The rows of a re-parsed event, serialized again.
};

}  // namespace sluice::logpuller
