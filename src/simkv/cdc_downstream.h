// DownstreamSpec: one region subscription on one EventFeed stream, as the
// client asked for it (TiKV's Downstream). It is immutable once built and
// shared between the stream's reader, the CdcHub and the incremental scan.
// RawRange / ObservedRange: the raw keys a subscription observes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/strong_id.h"
#include "simkv/cdc_stream_sink.h"
#include "simkv/region_map.h"

namespace sluice::simkv {

struct DownstreamSpec {
  uint64_t id = 0;       // Unique within the store.
  uint64_t conn_id = 0;  // The stream it arrived on.
  uint64_t request_id = 0;
  RegionId region_id;
  RegionEpoch epoch;          // What the client believes is current.
  Ts checkpoint_ts;           // Changes with commit_ts > checkpoint_ts are sent.
  bool old_value = false;     // extra_op == ReadOldValue.
  bool multiplexing = false;  // The stream asked for stream-multiplexing.
  std::string start_key;      // Requested range, memcomparable as sent.
  std::string end_key;        // Empty = +inf.
  std::shared_ptr<StreamSink> sink;
};

// [start, end) over raw keys; an empty end is +inf.
struct RawRange {
  std::string start;
  std::string end;

  bool Contains(std::string_view raw_key) const {
    return raw_key >= start && (end.empty() || raw_key < end);
  }
  bool IsEmpty() const { return !end.empty() && start >= end; }
};

// The region's boundaries decoded to raw keys.
RawRange RegionRawRange(const RegionInfo& region);

// What a subscription observes: the requested range decoded to raw keys,
// intersected with the region. As in TiKV, a requested bound that does not
// decode makes the request observe the whole region (with a warning), and
// bytes after a decodable prefix are ignored.
RawRange ObservedRange(const DownstreamSpec& spec, const RegionInfo& region);

}  // namespace sluice::simkv
