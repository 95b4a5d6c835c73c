// libFuzzer target: arbitrary bytes parsed as cdcpb.ChangeDataEvent and fed,
// row by row, to a region matcher, as the log puller does with what a store
// sends. The matcher must answer with a status, never crash; every change it
// emits has a commit ts above the subscription start ts, at or above its
// start ts, and a put or delete op.
#include <cstddef>
#include <cstdint>

#include "cdcpb.pb.h"
#include "fuzz_check.h"
#include "logpuller/matcher.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sluice;
  cdcpb::ChangeDataEvent event;
  if (!event.ParseFromArray(data, static_cast<int>(size))) return 0;
  const Ts start_ts(100);
  logpuller::RegionMatcher matcher(RegionId(1), start_ts);
  KvBatch out;
  for (cdcpb::Event& ev : *event.mutable_events()) {
    if (ev.has_resolved_ts()) matcher.AdvanceResolvedTs(Ts(ev.resolved_ts()));
    if (!ev.has_entries()) continue;
    for (cdcpb::Event_Row& row : *ev.mutable_entries()->mutable_entries()) {
      if (!matcher.Handle(row, &out).ok()) return 0;
    }
  }
  if (event.has_resolved_ts()) matcher.AdvanceResolvedTs(Ts(event.resolved_ts().ts()));
  for (const RawKvEntry& e : out) {
    Check(e.commit_ts > start_ts);
    Check(e.commit_ts >= e.start_ts);
    Check(e.op == KvOp::kPut || e.op == KvOp::kDelete);
  }
  return 0;
}
