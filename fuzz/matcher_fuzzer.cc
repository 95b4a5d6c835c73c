// libFuzzer target: arbitrary bytes read as a received cdcpb.ChangeDataEvent
// the way the log puller reads them (SplitChangeData, then each event's rows
// decoded by a RegionEventDecoder) and fed, row by row, to a region matcher.
// The decoder must accept exactly the bytes protobuf's parser accepts, and
// the matcher must answer with a status, never crash; every change it emits
// has a commit ts above the subscription start ts, at or above its start ts,
// and a put or delete op.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cdcpb.pb.h"
#include "fuzz_check.h"
#include "logpuller/change_data.h"
#include "logpuller/matcher.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sluice;
  using namespace sluice::logpuller;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  cdcpb::ChangeDataEvent parsed;
  const bool protobuf_ok = parsed.ParseFromArray(data, static_cast<int>(size));
  ChangeDataFrame frame;
  bool ok = SplitChangeData(bytes, &frame).ok();
  RegionEventDecoder decoder;
  DecodedRegionEvent event;
  const Ts start_ts(100);
  RegionMatcher matcher(RegionId(1), start_ts);
  KvBatch out;
  bool matching = true;
  for (size_t i = 0; ok && i < frame.events.size(); ++i) {
    ok = decoder.Decode(frame.events[i], &event).ok();
    if (!ok) break;
    if (event.kind == RegionEventRef::Kind::kResolvedTs) {
      matcher.AdvanceResolvedTs(Ts(event.resolved_ts));
    }
    if (!matching || event.rows == nullptr) continue;
    const int index = static_cast<int>(i);
    if (protobuf_ok && index < parsed.events_size()) {
      Check(static_cast<int>(event.rows->size()) == parsed.events(index).entries().entries_size());
    }
    for (const RowView& row : *event.rows) {
      if (!matcher.Handle(row, &out).ok()) {
        matching = false;
        break;
      }
    }
  }
  Check(ok == protobuf_ok);
  if (ok) Check(static_cast<int>(frame.events.size()) == parsed.events_size());
  for (const RawKvEntry& e : out) {
    Check(e.commit_ts > start_ts);
    Check(e.commit_ts >= e.start_ts);
    Check(e.op == KvOp::kPut || e.op == KvOp::kDelete);
  }
  return 0;
}
