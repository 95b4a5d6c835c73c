// The contract between the log puller and whoever keeps its output (the
// event store): a KvConsumer per subscription, and the SpanSubscriber the
// consumer side uses to open and close subscriptions.
#pragma once

#include <chrono>
#include <concepts>
#include <functional>
#include <memory>

#include "common/kv_entry.h"
#include "common/span.h"
#include "common/status.h"
#include "common/strong_id.h"

namespace sluice::logpuller {

// Called exactly once per batch handed to ConsumeKvEvents(), from any thread,
// with the batch's outcome: OK once the batch is durable in the consumer (or
// dropped because the consumer is closing), an error when the consumer could
// not store it (a failed write). A failed batch is never covered by a
// published resolved ts: the puller fails or restarts the subscription from
// its last published resolved ts. It never blocks: the puller's
// implementation only enqueues a signal. The consumer must not hold its own
// locks while calling it. A value type: moved or copied freely, called once
// from whichever thread finishes the batch.
class PersistedCallback {
 public:
  PersistedCallback() = default;
  // A callback told the outcome.
  template <typename F>
  requires std::invocable<F&, const Status&> PersistedCallback(F fn)
      : fn_(std::move(fn)) {}  // NOLINT(google-explicit-constructor)
  // A callback for a consumer side that only ever succeeds (tests, tools):
  // it runs on OK and on an error alike.
  template <typename F>
  requires(std::invocable<F&> && !std::invocable<F&, const Status&>)
      PersistedCallback(F fn)  // NOLINT(google-explicit-constructor)
      : fn_([fn = std::move(fn)](const Status&) mutable { fn(); }) {}

  void operator()() { fn_(Status::Ok()); }
  void operator()(const Status& status) { fn_(status); }
  explicit operator bool() const { return static_cast<bool>(fn_); }

 private:
  std::function<void(const Status&)> fn_;
};

// Receives one subscription's output. Calls for one subscription are
// serialised by the puller (never concurrent with each other), but may come
// from different threads over time.
class KvConsumer {
 public:
  virtual ~KvConsumer() = default;

  // Takes ownership of a batch of committed changes (commit ts order is NOT
  // guaranteed across regions). May apply back-pressure by blocking briefly,
  // but must call `persisted` exactly once, eventually, on every path, with
  // an error if the batch could not be stored.
  virtual void ConsumeKvEvents(KvBatch batch, PersistedCallback persisted) = 0;

  // The subscription's resolved ts: every change with commit ts <= ts that
  // the puller received earlier has been persisted (the persisted callbacks
  // of all earlier batches have run). Strictly increasing except that the
  // first call may equal the start ts.
  virtual void AdvanceResolvedTs(Ts ts) = 0;

  // True while a resolved ts waits for batches already handed over (false
  // once none waits). A consumer that persists many subscriptions' batches
  // may persist urgent ones first: their resolved ts is then published
  // sooner, while others' batches have nobody waiting on them yet (an
  // initial scan's rows, before the region's first resolved ts). Default:
  // ignore.
  virtual void SetPersistUrgent(bool urgent) {}

  // The subscription failed with a non-retryable error (or was closed by the
  // puller). No further calls follow. Default: ignore.
  virtual void OnSubscriptionError(const Status& status) {}
};

struct SubscribeOptions {
  // How often the span resolved ts is recomputed; zero recomputes on every
  // region resolved-ts update (low-latency mode, used for the DDL span).
  std::chrono::milliseconds advance_interval{100};
  // Ask TiKV for old values (needed for updates and the MySQL sink's
  // safe mode). TiCDC always asks.
  bool read_old_value = true;
  // Whether the subscription's scan data waits while another subscription's
  // first resolved ts waits for its backlog (the log puller's
  // scan_yield_max). The DDL span's does not: no table's rows can be
  // delivered without it.
  bool yield_scan = true;
};

// Opens and closes subscriptions. Implemented by the log puller's
// SubscriptionClient; the event store depends only on this interface.
// Thread-safe.
class SpanSubscriber {
 public:
  virtual ~SpanSubscriber() = default;

  // Subscribes `comparable_span` (memcomparable form, e.g.
  // ToComparable(TableRecordSpan(id))) from `start_ts`: changes with commit
  // ts > start_ts. Returns the new, never reused, subscription id.
  virtual Result<SubscriptionId> Subscribe(const Span& comparable_span, Ts start_ts,
                                           std::shared_ptr<KvConsumer> consumer,
                                           const SubscribeOptions& options) = 0;

  // Stops a subscription. Never blocks on the network; batches already handed
  // to the consumer still get their persisted callbacks. Unknown ids: no-op.
  virtual void Unsubscribe(SubscriptionId id) = 0;
};

}  // namespace sluice::logpuller
