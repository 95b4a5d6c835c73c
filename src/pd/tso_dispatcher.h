// TsoDispatcher: hands out TSO timestamps from one long-lived pdpb.PD/Tso
// bidi stream. Callers of GetTs() queue up; the dispatcher thread takes every
// waiting caller (up to options.tso_max_batch), sends one TsoRequest with
// count = number of waiters, and splits the answer, which carries the LAST
// timestamp of the batch, into count consecutive timestamps handed out in
// queue order. Timestamps handed out are strictly increasing and unique
// across batches, stream re-opens and PD restarts: an answer at or below the
// last handed-out timestamp is a protocol violation.
//
// Failures: a broken stream fails its batch with the mapped status
// (kUnavailable, or kIncompatible for a cluster-id mismatch), is closed, and
// is re-opened for the next batch (through PdConnection, which backs off). A
// caller that waits longer than options.rpc_timeout gets kUnavailable and
// cancels the stream if its request is in flight, so a PD that stops
// answering cannot block the dispatcher for longer than that.
//
// Threads: one owned thread "pd-tso" (started by Start, joined by Stop) owns
// the stream. GetTs() may be called from any thread; Start/Stop by the owner.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "common/lifecycle.h"
#include "common/status.h"
#include "common/strong_id.h"
#include "common/thread_annotations.h"
#include "pd/pd_connection.h"
#include "pdpb.grpc.pb.h"

namespace sluice::pd {

class TsoDispatcher {
 public:
  explicit TsoDispatcher(PdConnection* conn);  // Borrows; must outlive the dispatcher.
  ~TsoDispatcher();
  TsoDispatcher(const TsoDispatcher&) = delete;
  TsoDispatcher& operator=(const TsoDispatcher&) = delete;

  void Start();
  // Fails queued callers with kCancelled, closes the stream, joins the
  // thread. Idempotent.
  void Stop() EXCLUDES(mu_);

  Result<Ts> GetTs() EXCLUDES(mu_);

  // TsoRequests written to streams so far.
  uint64_t requests_sent() const { return requests_sent_.load(std::memory_order_relaxed); }
  // Streams opened so far.
  uint64_t streams_opened() const { return streams_opened_.load(std::memory_order_relaxed); }

 private:
  struct Waiter {
    bool in_flight = false;            // Guarded by mu_.
    std::optional<Result<Ts>> result;  // Guarded by mu_; set once.
  };
  using Batch = std::vector<std::shared_ptr<Waiter>>;
  // A PD answer: the last timestamp of `count`, spaced 1 << suffix_bits.
  struct Answer {
    Ts last;
    uint32_t count = 0;
    uint32_t suffix_bits = 0;
  };
  using Stream = grpc::ClientReaderWriter<pdpb::TsoRequest, pdpb::TsoResponse>;

  void Run();
  // Waits for callers; empty once stopping.
  Batch TakeBatch() EXCLUDES(mu_);
  // One request/response on the stream; the last ts of the batch.
  Result<Answer> RoundTrip(uint32_t count) EXCLUDES(mu_);
  Status OpenStream() EXCLUDES(mu_);
  // Closes the stream (cancelling it first if `cancel`); returns its final
  // status mapped, or `why` if it ended OK.
  Status CloseStream(Status why, bool cancel) EXCLUDES(mu_);
  Result<Answer> CheckResponse(const pdpb::TsoResponse& response, uint32_t count);
  void Complete(const Batch& batch, const Result<Answer>& answer) EXCLUDES(mu_);

  PdConnection* const conn_;
  const size_t max_batch_;

  mutable Mutex mu_;
  CondVar work_;  // Callers queued or stopping.
  CondVar done_;  // Results delivered.
  std::deque<std::shared_ptr<Waiter>> queue_ GUARDED_BY(mu_);
  grpc::ClientContext* live_context_ GUARDED_BY(mu_) = nullptr;  // Of the open stream.
  bool stopping_ GUARDED_BY(mu_) = false;

  // Owned by the dispatcher thread.
  std::unique_ptr<grpc::ClientContext> context_;
  std::unique_ptr<Stream> stream_;
  std::shared_ptr<PdStub> stream_stub_;
  Ts last_handed_out_;

  std::atomic<uint64_t> requests_sent_{0};
  std::atomic<uint64_t> streams_opened_{0};
  OwnedThread thread_;
};

}  // namespace sluice::pd
