// StreamSink: the outgoing side of one EventFeed stream. Producers (the MVCC
// observer fan-out, incremental scans, the resolved-ts ticker, the request
// reader answering errors) queue events and resolved-ts batches; the stream's
// writer thread drains them into ChangeDataEvent messages.
//
// Back-pressure follows TiKV's CDC sink: queued bytes have a budget. A push
// that does not fit fails with kFull instead of waiting, so that the MVCC
// observer (which runs under the store's mutex) never blocks on a slow client;
// the caller then treats the region as congested (see cdc_hub.h). Error
// events are pushed with `force` and always fit. Scans wait for room with
// WaitForSpace() before pushing, like TiKV's bounded scan channel.
//
// Messages follow TiKV's batching: up to 64 events in one message, never
// mixed with a resolved-ts batch, which always travels alone.
//
// Thread-safe: any number of producers, one writer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>

#include "cdcpb.pb.h"
#include "common/cancel.h"
#include "common/thread_annotations.h"
#include "simkv/cdc_rows.h"

namespace sluice::simkv {

struct StreamSinkOptions {
  size_t max_bytes = 64 << 20;         // Budget for queued events.
  size_t max_events_per_message = 64;  // TiKV's CDC_EVENT_MAX_COUNT.
  size_t max_message_bytes = 6 << 20;  // TiKV's CDC_RESP_MAX_BYTES.
};

class StreamSink {
 public:
  enum class PushResult : uint8_t { kOk, kFull, kClosed };

  explicit StreamSink(StreamSinkOptions options = {}) : options_(options) {}
  StreamSink(const StreamSink&) = delete;
  StreamSink& operator=(const StreamSink&) = delete;

  // Queues a whole event. Unless `force`, kFull if it would exceed the budget.
  PushResult PushEvent(cdcpb::Event event, bool force) EXCLUDES(mu_);
  // Queues one row of (region, request, apply index). It joins the last
  // queued event when that one carries rows of the same region, request and
  // index and has room, so one MVCC batch becomes one Event as in TiKV.
  PushResult PushRow(uint64_t region_id, uint64_t request_id, uint64_t index, Row row, bool force)
      EXCLUDES(mu_);
  PushResult PushResolvedTs(cdcpb::ResolvedTs resolved) EXCLUDES(mu_);

  // Blocks until queued bytes are below the budget. False if the sink closed
  // or `token` was cancelled first.
  bool WaitForSpace(const CancelToken& token) EXCLUDES(mu_);

  // Writer side: blocks until a message can be built. nullopt once the sink
  // is closed and drained, or when `token` is cancelled.
  std::optional<cdcpb::ChangeDataEvent> NextMessage(const CancelToken& token) EXCLUDES(mu_);

  // Refuses further pushes (kClosed); NextMessage() drains what is queued.
  void Close() EXCLUDES(mu_);
  bool closed() const EXCLUDES(mu_);
  size_t queued_bytes() const EXCLUDES(mu_);

 private:
  struct Item {
    std::optional<cdcpb::Event> event;  // Set for events, unset for resolved ts.
    cdcpb::ResolvedTs resolved;
    size_t bytes = 0;
  };

  PushResult Admit(size_t bytes, bool force) const REQUIRES(mu_);
  void Enqueue(Item item) REQUIRES(mu_);
  Item PopFront() REQUIRES(mu_);
  cdcpb::ChangeDataEvent BuildMessage() REQUIRES(mu_);

  const StreamSinkOptions options_;
  mutable Mutex mu_;
  CondVar not_empty_;
  CondVar has_space_;
  std::deque<Item> items_ GUARDED_BY(mu_);
  size_t bytes_ GUARDED_BY(mu_) = 0;
  bool closed_ GUARDED_BY(mu_) = false;
};

}  // namespace sluice::simkv
