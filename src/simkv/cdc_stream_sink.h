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
// Order: scan events (scan rows and INITIALIZED, pushed with `scan`) and
// everything else (live rows, errors, resolved ts) wait in two queues, and
// the writer takes whichever front was queued first, except that a request's
// resolved-ts batch goes first when none of that request's scan events is
// queued. TiKV's sink likewise drains its scan channel and its channel of
// live events and resolved ts in turn: a table whose scan is done gets its
// resolved ts while another table of the stream is still scanning. A
// resolved ts never overtakes live rows or errors (it promises that no row
// at or below it follows), nor its own request's scan; one without a request
// id (a V1 stream) overtakes nothing. Queued scan events do not count
// against a resolved ts's admission: scans wait for room on their own.
//
// Live rows are queued as packed bytes (no Row message per row) and encoded
// by the writer, outside the producers' locks, straight into the wire bytes
// of a ChangeDataEvent (cdc_wire_encoder.h).
//
// Thread-safe: any number of producers, one writer (NextMessage).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
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
  // Queues an incremental scan's event (a row batch or INITIALIZED), which a
  // resolved ts may overtake; always fits (scans WaitForSpace() first).
  PushResult PushScanEvent(cdcpb::Event event) EXCLUDES(mu_);
  // As PushScanEvent, for a batch of an incremental scan's rows.
  PushResult PushScanRows(RowBatch batch) EXCLUDES(mu_);
  // Queues one row of (region, request, apply index). It joins the last
  // queued event when that one carries rows of the same region, request and
  // index and has room, so one MVCC batch becomes one Event as in TiKV.
  PushResult PushRow(uint64_t region_id, uint64_t request_id, uint64_t index, const RowView& row,
                     bool force) EXCLUDES(mu_);
  PushResult PushRow(uint64_t region_id, uint64_t request_id, uint64_t index, const Row& row,
                     bool force) EXCLUDES(mu_) {
    return PushRow(region_id, request_id, index, ViewOfRow(row), force);
  }
  // PushRow() of each row in order, under one lock; stops at the first row
  // that does not fit (kFull; the rows before it stay queued).
  PushResult PushRows(uint64_t region_id, uint64_t request_id, uint64_t index,
                      std::span<const RowView> rows, bool force) EXCLUDES(mu_);
  PushResult PushResolvedTs(cdcpb::ResolvedTs resolved) EXCLUDES(mu_);

  // Blocks until queued bytes are below the budget. False if the sink closed
  // or `token` was cancelled first.
  bool WaitForSpace(const CancelToken& token) EXCLUDES(mu_);

  // Writer side: blocks until a message can be built and writes it to
  // `*bytes` (cleared first) as a serialized ChangeDataEvent. False once the
  // sink is closed and drained, or when `token` is cancelled. `*more`
  // (optional) tells whether more is queued.
  bool NextMessage(const CancelToken& token, std::string* bytes, bool* more = nullptr)
      EXCLUDES(mu_);
  // As above, parsed into a message.
  std::optional<cdcpb::ChangeDataEvent> NextMessage(const CancelToken& token) EXCLUDES(mu_);

  // Refuses further pushes (kClosed); NextMessage() drains what is queued.
  void Close() EXCLUDES(mu_);
  bool closed() const EXCLUDES(mu_);
  size_t queued_bytes() const EXCLUDES(mu_);

 private:
  struct Item {
    enum class Kind : uint8_t { kRows, kEvent, kResolved };
    Kind kind = Kind::kEvent;
    RowBatch batch;                     // kRows.
    std::optional<cdcpb::Event> event;  // kEvent.
    cdcpb::ResolvedTs resolved;         // kResolved.
    size_t bytes = 0;
    uint64_t seq = 0;         // Queue order across both queues.
    bool scan = false;        // An incremental scan's event (kEvent only).
    uint64_t request_id = 0;  // Of a scan event or a resolved-ts batch.
  };

  // `except_scan`: queued scan events do not count against the budget.
  PushResult Admit(size_t bytes, bool force, bool except_scan = false) const REQUIRES(mu_);
  PushResult PushRowLocked(uint64_t region_id, uint64_t request_id, uint64_t index,
                           const RowView& row, bool force) REQUIRES(mu_);
  PushResult PushEventItem(cdcpb::Event event, bool force, bool scan) EXCLUDES(mu_);
  void Enqueue(Item item) REQUIRES(mu_);
  bool Empty() const REQUIRES(mu_) { return live_.empty() && scan_.empty(); }
  // The queue whose front the writer takes next (see Order above).
  std::deque<Item>& NextQueue() REQUIRES(mu_);
  Item Pop(std::deque<Item>* queue) REQUIRES(mu_);
  // Moves the items of the next message to taken_.
  void TakeMessageItems() REQUIRES(mu_);
  // Writer only: encodes taken_ into *bytes.
  void EncodeMessage(std::string* bytes);
  void EncodeRows(const RowBatch& batch, std::string* bytes);

  const StreamSinkOptions options_;
  mutable Mutex mu_;
  CondVar not_empty_;
  CondVar has_space_;
  std::deque<Item> live_ GUARDED_BY(mu_);  // Live rows, errors, resolved ts.
  std::deque<Item> scan_ GUARDED_BY(mu_);  // Scan events.
  uint64_t next_seq_ GUARDED_BY(mu_) = 1;
  // Queued scan events per request id.
  absl::flat_hash_map<uint64_t, size_t> scan_queued_ GUARDED_BY(mu_);
  size_t bytes_ GUARDED_BY(mu_) = 0;       // Both queues.
  size_t scan_bytes_ GUARDED_BY(mu_) = 0;  // The scan queue.
  bool closed_ GUARDED_BY(mu_) = false;
  // Buffers of sent row batches, handed to new batches.
  std::vector<RowBatch> spare_ GUARDED_BY(mu_);
  // Writer-only state (one writer at a time).
  std::vector<Item> taken_;
  std::vector<RowView> views_;  // One batch's rows, reused.
};

}  // namespace sluice::simkv
