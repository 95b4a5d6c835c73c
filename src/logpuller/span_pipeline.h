// SpanPipeline: delivers a subscription's data batches to its KvConsumer
// without waiting for earlier batches to be persisted, and publishes the
// subscription's resolved ts only once every batch received before that
// resolved signal is persisted (docs/architecture.md, "Invariants":
// persisted before resolved; docs/design/span-pipeline.md).
//
// Model. Each subscription has a data sequence: EnqueueData() gives the next
// seq to a batch and the worker hands it to ConsumeKvEvents() at once, with a
// persisted callback. EnqueueResolved(ts) binds ts to the last seq enqueued
// before it (a barrier); barriers with the same wait seq merge to the max ts.
// A barrier is published with AdvanceResolvedTs() once every seq up to its
// wait seq is persisted, in any completion order. While a barrier waits, the
// consumer is told the subscription is urgent (SetPersistUrgent(true)), and
// told again when none waits, including when its barriers are dropped
// (unregistered, reset, failed). The persisted seqs are kept
// as the set still outstanding, so the acked prefix compacts by construction.
//
// Threads. N workers (owned, joined in Stop()); subscription id % N picks the
// worker that owns all of that subscription's state, so no per-subscription
// locks exist. Each worker has a bounded data queue (data and resolved
// messages, in producer order; a full queue blocks the producer) and an
// unbounded control queue (register, unregister, persisted), which the
// worker always empties before it takes the next data message. Consumer
// calls for one subscription come from its worker only, never concurrently.
//
// Quota. A global ByteQuota bounds the data bytes in flight: EnqueueData()
// acquires the batch's ApproximateBytes() (blocking; cancellable) and the
// bytes are released exactly once when the batch's persisted callback runs,
// or when the batch is dropped (unregistered, reset, failed, stopped), or
// when the consumer destroys the callback without calling it. A batch larger
// than the whole quota is admitted whole once nothing else is in flight
// (ByteQuota's rule); it is not split.
//
// Persisted callbacks never block: they release the quota and push a small
// message onto the worker's unbounded control queue. They may run on any
// thread, at any time, including after Stop() and after the pipeline is
// destroyed (they then only release quota). A second call of the same
// callback is a consumer bug: it is counted, logged and otherwise ignored.
//
// First publishes. A subscription that has never published and has a
// barrier waiting is a pending first publish: its consumer's backlog (an
// initial scan) is all that stands between its table and the sink.
// AwaitFirstPublishes() lets a producer (the client, for data of scans still
// running) wait until none is pending, so that the node's CPU and writers go
// to that backlog first. A subscription holds waiters for at most max_wait
// from when it became pending, so one whose consumer never persists stops
// holding anyone after that. A subscription reset by Register() has not
// published in its new generation, so it can be pending again.
//
// Failures. A consumer call that throws, a callback destroyed without being
// called, or an impossible persisted seq fails only that subscription: its
// state is dropped, the consumer gets OnSubscriptionError() and the
// FailureHandler is called (both from the worker thread). A batch whose
// callback reports an error (the consumer could not store it) fails the
// subscription the same way, except that the consumer is not told: nothing
// at or after that batch is published, its quota is released, and the
// FailureHandler decides whether to register it again (from its last
// published ts) or to fail it for good.
//
// Every public method is thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "common/cancel.h"
#include "common/clock.h"
#include "common/kv_entry.h"
#include "common/lifecycle.h"
#include "common/metrics.h"
#include "common/status.h"
#include "common/strong_id.h"
#include "common/thread_annotations.h"
#include "logpuller/consumer.h"

namespace sluice::logpuller {

namespace span_pipeline_internal {
struct Shared;
class Worker;
}  // namespace span_pipeline_internal

struct SpanPipelineOptions {
  // Worker threads. 0: std::thread::hardware_concurrency(), at least 1.
  size_t num_workers = 0;
  // Data and resolved messages each worker's queue holds before producers
  // block. Must be > 0 (0 is treated as 1).
  size_t queue_capacity = 4096;
  // Data bytes in flight over all subscriptions: acquired in EnqueueData(),
  // released when the batch is persisted (or dropped). Default 1 GiB.
  uint64_t quota_bytes = 1ULL << 30;
  // A batch handed to its consumer longer than this without being persisted
  // is reported as stalled (logged and counted once, listed by every check).
  std::chrono::milliseconds stall_threshold{60000};
  // How often each worker runs the stall check on `clock`. Zero: only when
  // CheckStalls() is called.
  std::chrono::milliseconds stall_check_interval{5000};
  // Time source for stall detection. Must outlive the pipeline.
  Clock* clock = Clock::Real();
  // Where the pipeline's metrics are registered (gauges are shared by every
  // pipeline of the registry and add up). Must outlive the pipeline.
  Registry* metrics = Registry::Default();
};

class SpanPipeline {
 public:
  // Called from a worker thread when a subscription fails, with whether the
  // consumer was told (OnSubscriptionError); it was not when the consumer
  // reported that it could not store a batch. Must not block and must not
  // call Stop(), EnqueueData() or EnqueueResolved(); Unregister() and
  // Register() are fine.
  using FailureHandler = std::function<void(SubscriptionId, const Status&, bool consumer_told)>;

  struct Stall {
    SubscriptionId id;
    uint64_t seq = 0;
    Clock::Duration age{};
  };

  SpanPipeline(SpanPipelineOptions options, FailureHandler on_failure);
  // Stops (see Stop()).
  ~SpanPipeline();
  SpanPipeline(const SpanPipeline&) = delete;
  SpanPipeline& operator=(const SpanPipeline&) = delete;

  // Starts the workers. Once; no-op after Stop(). Messages enqueued before
  // Start() wait in the queues.
  void Start() EXCLUDES(lifecycle_mu_);

  // Closes the quota and the queues (blocked EnqueueData / EnqueueResolved
  // calls return Cancelled), joins the workers, drops queued messages and all
  // subscription state (releasing the quota of queued batches). Batches
  // already handed to consumers release their quota when their callbacks run
  // (or are destroyed); nothing else happens then. A batch dequeued just as
  // Stop() starts may still be handed over. Idempotent. Not from a worker
  // thread (consumer calls, FailureHandler).
  void Stop() EXCLUDES(lifecycle_mu_);

  // Registers `id`, whose resolved ts starts at `start_ts`. Registering an id
  // that still has state resets it: a fresh generation with seqs from 1;
  // callbacks of the old generation still release their quota but never
  // touch the new state, and data or resolved messages still queued for the
  // old generation (e.g. from an EnqueueData() racing with this call) are
  // dropped. Never blocks. Cancelled after Stop(), InvalidArgument for a
  // null consumer.
  Status Register(SubscriptionId id, std::shared_ptr<KvConsumer> consumer, Ts start_ts);

  // Unregisters `id`. Never blocks (safe from region-failure handling, even
  // with a full worker queue). Queued and later messages for it are dropped
  // (releasing their quota); the state goes once no batch is in flight.
  // Unknown ids: no-op.
  void Unregister(SubscriptionId id);

  // Hands `batch` to the consumer (from the worker) under the next data seq.
  // Blocks on the quota and on a full worker queue. Returns OK once queued
  // (an empty batch is ignored), NotFound if `id` is not registered,
  // Cancelled if `token` is cancelled or the pipeline stops first.
  Status EnqueueData(SubscriptionId id, KvBatch batch, const CancelToken& token = {});

  // Blocks while some first publish is pending (see the class comment) and
  // became pending less than `max_wait` ago, for at most `max_wait` on
  // options.clock, until `token` is cancelled or the pipeline stops. True if
  // none is pending on return.
  bool AwaitFirstPublishes(Clock::Duration max_wait, const CancelToken& token = {});

  // Queues a barrier: `ts` is published with AdvanceResolvedTs() once every
  // batch whose EnqueueData() returned before this call is persisted. Only
  // increasing ts are published, except that the first may equal start_ts
  // (published once); ts below start_ts are never published. Blocks on a
  // full worker queue. NotFound if `id` is not registered (counted as a
  // dropped barrier), Cancelled as for EnqueueData().
  Status EnqueueResolved(SubscriptionId id, Ts ts, const CancelToken& token = {});

  // Runs one stall check over every worker now: each batch outstanding
  // longer than stall_threshold is listed (and logged and counted the first
  // time it is seen). Workers also run it every stall_check_interval.
  std::vector<Stall> CheckStalls();

  // Snapshots for tests and metrics.
  uint64_t InFlightBytes() const;        // Handed to consumers, not yet persisted.
  uint64_t InFlightBatches() const;      // Likewise, in batches.
  size_t NumSubscriptions() const;       // States held by workers.
  size_t PendingBarriers() const;        // Resolved barriers not yet published.
  uint64_t QuotaInFlight() const;        // Quota held: queued plus in flight.
  size_t QuotaWaiters() const;           // Producers blocked on the quota.
  size_t QueuedDataMessages() const;     // Data and resolved messages queued.
  size_t BlockedProducers() const;       // Callers blocked on a full worker queue.
  uint64_t DuplicateCallbacks() const;   // Persisted callbacks called twice.
  size_t FirstPublishesPending() const;  // Subscriptions whose first publish waits.
  size_t FirstPublishWaiters() const;    // Threads in AwaitFirstPublishes().

 private:
  span_pipeline_internal::Worker& WorkerFor(SubscriptionId id);

  const SpanPipelineOptions options_;
  const FailureHandler on_failure_;
  std::shared_ptr<span_pipeline_internal::Shared> shared_;
  std::vector<std::unique_ptr<span_pipeline_internal::Worker>> workers_;
  ThreadGroup threads_;
  Mutex lifecycle_mu_;  // Serializes Start() and Stop().
  bool started_ GUARDED_BY(lifecycle_mu_) = false;
  bool stopped_ GUARDED_BY(lifecycle_mu_) = false;
};

}  // namespace sluice::logpuller
