// Internal state of the subscription client shared by its threads: a
// Subscription (what the user asked for) and its current SubscriptionRun
// (one attempt at serving it, with its own TiKV request id and range lock).
// A run is replaced when the subscription restarts from its checkpoint after
// invalid input; states of an old run are dropped, never mixed with the new.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>

#include "common/clock.h"
#include "common/span.h"
#include "common/strong_id.h"
#include "common/thread_annotations.h"
#include "logpuller/consumer.h"
#include "logpuller/range_lock.h"

namespace sluice::logpuller {

struct Subscription;

// One attempt at serving a subscription. Shared by the scheduler's tasks and
// the region states of the run; fields are immutable or synchronised.
struct SubscriptionRun {
  SubscriptionRun(std::shared_ptr<Subscription> sub, uint64_t request_id, const Span& span,
                  Ts checkpoint)
      : sub(std::move(sub)),
        request_id(request_id),
        checkpoint(checkpoint),
        lock(span, checkpoint) {}

  std::shared_ptr<Subscription> sub;
  const uint64_t request_id;  // TiKV request id; unique per run, never reused.
  const Ts checkpoint;        // The run started here (changes with commit ts > it).
  RangeLock lock;
  std::atomic<bool> stopped{false};
  std::atomic<int> restarts_before{0};  // Backoff input for the run's first ranges.
  // When the span resolved ts was last recomputed (Clock::TimePoint ticks);
  // region workers race for it with compare-exchange, so one recomputes.
  std::atomic<Clock::Duration::rep> last_compute{0};
};

// The consumer as the pipeline sees it: forwards to the user's consumer and
// remembers the last published resolved ts (the restart checkpoint).
class TrackingConsumer final : public KvConsumer {
 public:
  explicit TrackingConsumer(std::shared_ptr<KvConsumer> inner) : inner_(std::move(inner)) {}
  void ConsumeKvEvents(KvBatch batch, PersistedCallback persisted) override {
    inner_->ConsumeKvEvents(std::move(batch), std::move(persisted));
  }
  void AdvanceResolvedTs(Ts ts) override {
    uint64_t prev = published_.load(std::memory_order_relaxed);
    while (ts.value() > prev &&
           !published_.compare_exchange_weak(prev, ts.value(), std::memory_order_relaxed)) {
    }
    inner_->AdvanceResolvedTs(ts);
  }
  void SetPersistUrgent(bool urgent) override { inner_->SetPersistUrgent(urgent); }
  void OnSubscriptionError(const Status& status) override { inner_->OnSubscriptionError(status); }
  Ts published() const { return Ts(published_.load(std::memory_order_relaxed)); }

 private:
  std::shared_ptr<KvConsumer> inner_;
  std::atomic<uint64_t> published_{0};
};

struct Subscription {
  SubscriptionId id;
  Span span;  // Comparable.
  Ts start_ts;
  SubscribeOptions options;
  std::shared_ptr<TrackingConsumer> consumer;

  Mutex mu;
  // The current run; null once unsubscribed (breaks the run -> sub cycle).
  std::shared_ptr<SubscriptionRun> run GUARDED_BY(mu);
  // Last resolved ts handed to the pipeline for the current run.
  Ts last_enqueued GUARDED_BY(mu);
  bool sent_checkpoint GUARDED_BY(mu) = false;
  int restarts GUARDED_BY(mu) = 0;
  // Restarts after batches the consumer could not store, in a row: reset
  // once the published ts moves past where the last one failed.
  int persist_failures GUARDED_BY(mu) = 0;
  Ts persist_failed_at GUARDED_BY(mu);
  // A resolved ts went to the pipeline: the initial scan is over and readers
  // wait on the subscription (kept across runs).
  std::atomic<bool> resolved_enqueued{false};
};

}  // namespace sluice::logpuller
