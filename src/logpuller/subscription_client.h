// SubscriptionClient: the log puller. It subscribes key spans in TiKV's CDC
// service from a start ts and hands their committed changes and resolved ts
// to a KvConsumer per subscription (the event store), through the span
// pipeline, so that a resolved ts is published only after every earlier batch
// of that subscription is persisted (docs/design/span-pipeline.md).
//
// Inside: a RequestScheduler thread (regions, range locks, scan windows,
// streams), reader threads of the store streams, a RegionWorkerPool (matcher
// and region resolved ts, sharded by region id), the SpanPipeline (sharded
// by subscription id), a failure thread that handles the pipeline's
// failures (a batch the consumer could not store restarts its subscription
// from the last published resolved ts, a few times in a row at most), and a
// lock-resolution thread: a span whose resolved ts is stuck behind a lock
// left by a writer that went away gets its regions' locks resolved through
// TiKV's transaction API (kvclient::LockResolver), and a region stuck far
// longer restarts its subscription (StuckRegions says when).
// Region errors are retried as TiKV's table says (retry the region or
// reload the range, backoff per range); invalid
// input from TiKV restarts the subscription from its last published resolved
// ts; incompatibility fails it (KvConsumer::OnSubscriptionError). While a
// subscription's first resolved ts waits for its scanned backlog to be
// persisted, new subscriptions' initial scans wait (bounded) before their
// data enters the pipeline: during a catch-up of many tables, each table
// becomes readable once its own backlog is written, not once every table's
// is.
//
// Thread-safety: Subscribe/Unsubscribe/stats from any thread; Start() and
// Stop() by the owner. PD client and region cache are borrowed.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>

#include "common/clock.h"
#include "common/lifecycle.h"
#include "common/queue.h"
#include "common/thread_annotations.h"
#include "kvclient/lock_resolver.h"
#include "logpuller/consumer.h"
#include "logpuller/region_worker.h"
#include "logpuller/request_scheduler.h"
#include "logpuller/span_pipeline.h"
#include "logpuller/store_stream.h"
#include "logpuller/stuck_regions.h"
#include "pd/pd_client.h"
#include "pd/region_cache.h"

namespace sluice::logpuller {

// Messages (one per store message and shard, ~100 rows) queued per region
// worker on the data path. Small on purpose: rows behind a deep queue are out
// of cache by the time the worker reads them.
inline constexpr size_t kDefaultRegionQueueCapacity = 64;

struct SubscriptionClientOptions {
  size_t region_workers = 0;                                   // 0: one per core.
  size_t region_queue_capacity = kDefaultRegionQueueCapacity;  // Data path, per worker.
  RequestSchedulerOptions scheduler;  // Streams per store, scan window, backoff, clock.
  SpanPipelineOptions pipeline;       // Workers, queue size, in-flight quota.
  // Restarts of one subscription (after invalid input) back off from
  // restart_backoff_base doubling up to scheduler.backoff_max.
  std::chrono::milliseconds restart_backoff_base{100};
  // While some subscription's first resolved ts waits for its backlog to be
  // persisted (SpanPipeline::AwaitFirstPublishes), a region worker holds each
  // batch of a new subscription's initial scan for up to this long (and a
  // pending subscription holds others for at most this long in all), so
  // that the backlog someone waits for is written before the node ingests
  // more. Zero: never. See README.md, "Scans yield to a first publish".
  std::chrono::milliseconds scan_yield_max{1000};
  // A batch the consumer could not store (a failed event store write)
  // restarts its subscription from the last published resolved ts, with the
  // restart backoff; after this many such restarts in a row with no publish
  // in between, the subscription fails (OnSubscriptionError) instead.
  int max_persist_restarts = 10;
  // How often the lock-resolution thread looks for stuck spans (TiCDC:
  // 2 s); zero: never (no thread, no lock resolution).
  std::chrono::milliseconds resolve_lock_check_interval{2000};
  StuckRegionOptions stuck;  // When a span counts as stuck; reconnects.
  kvclient::LockResolverOptions lock_resolver;
};

class SubscriptionClient final : public SpanSubscriber,
                                 private RegionWorkerHost,
                                 private StreamSink {
 public:
  struct Stats {
    size_t subscriptions = 0;
    size_t region_states = 0;
    uint64_t region_errors = 0;
    uint64_t stream_errors = 0;
    uint64_t restarts = 0;
    uint64_t fatal = 0;
    uint64_t scan_yields = 0;             // Batches of scanning runs held for a first publish.
    size_t scans_yielding = 0;            // Region workers holding one now.
    uint64_t lock_resolutions = 0;        // Regions whose locks were resolved.
    uint64_t lock_resolution_errors = 0;  // ...of which failed.
    uint64_t txns_resolved = 0;           // Transactions committed or rolled back.
    uint64_t stuck_reconnects = 0;        // Subscriptions restarted for a stuck region.
  };

  SubscriptionClient(SubscriptionClientOptions options, pd::PdClient* pd, pd::RegionCache* cache);
  ~SubscriptionClient() override;
  SubscriptionClient(const SubscriptionClient&) = delete;
  SubscriptionClient& operator=(const SubscriptionClient&) = delete;

  void Start();
  // Stops every thread; subscriptions are dropped without further calls
  // except persisted callbacks that the consumer still owes.
  void Stop() EXCLUDES(mu_);

  Result<SubscriptionId> Subscribe(const Span& comparable_span, Ts start_ts,
                                   std::shared_ptr<KvConsumer> consumer,
                                   const SubscribeOptions& options) override EXCLUDES(mu_);
  void Unsubscribe(SubscriptionId id) override EXCLUDES(mu_);

  Stats stats() const EXCLUDES(mu_);
  SpanPipeline& pipeline() { return pipeline_; }
  RequestScheduler& scheduler() { return scheduler_; }

 private:
  // RegionWorkerHost.
  void OnRegionFailed(std::unique_ptr<RegionState> state, RegionFailure failure) override;
  void OnRegionInitialized(RegionState& state) override;
  void OnRegionDropped(RegionState& state) override;
  void EnqueueData(SubscriptionRun& run, KvBatch batch, const CancelToken& token) override;
  void MaybeAdvance(SubscriptionRun& run, const CancelToken& token) override;
  void FailRun(const std::shared_ptr<SubscriptionRun>& run, const Status& status) override;
  // StreamSink.
  Status OnStreamEvent(uint64_t stream_id, MessageBytes message) override;
  void OnStreamBroken(uint64_t stream_id, StoreId store, const Status& status) override;

  // Holds a batch of a still-scanning run while a first publish is pending
  // (options_.scan_yield_max).
  void YieldToFirstPublishes(SubscriptionRun& run, const CancelToken& token);
  void RetryRegion(RegionState& state, Span range, Clock::Duration min_delay);
  void RetryRange(RegionState& state, Span range);
  // The pipeline's FailureHandler: queues the failure for failure_thread_
  // and returns (it runs on a pipeline worker, which must never block).
  void OnPipelineFailure(SubscriptionId id, const Status& status, bool consumer_told);
  struct PipelineFailure {
    SubscriptionId id;
    Status status;
    bool consumer_told = false;
  };
  // On failure_thread_: restarts the subscription after a failed store
  // (while retries remain), or fails it.
  void HandlePipelineFailure(const PipelineFailure& failure);
  // Whether a failed persist may restart the subscription; counts it.
  bool MayRetryPersist(Subscription& sub, const Status& status) EXCLUDES(sub.mu);
  // Fails `sub` for good; tells its consumer unless it was told already.
  void Fail(const std::shared_ptr<Subscription>& sub, const Status& status,
            bool notify_consumer = true) EXCLUDES(mu_);
  // On lock_thread_: one round of the stuck-span check, then the lock
  // resolutions and reconnects it asks for.
  void CheckStuckRegions(StuckRegions& stuck) EXCLUDES(mu_);
  std::vector<SpanProgress> SpanProgresses() const EXCLUDES(mu_);
  void ReconnectStuck(const ReconnectTask& task) EXCLUDES(mu_);
  // Stops a run: no more requests, its region states dropped, its TiKV
  // request deregistered. Never blocks.
  void StopRun(SubscriptionRun& run);
  // Takes the subscription's current run away, stops it and unregisters the
  // subscription from the pipeline. The caller removed it from subs_.
  void Detach(Subscription& sub);
  std::shared_ptr<Subscription> Find(SubscriptionId id) const EXCLUDES(mu_);

  const SubscriptionClientOptions options_;
  pd::PdClient* const pd_;
  pd::RegionCache* const cache_;
  SpanPipeline pipeline_;
  RegionWorkerPool pool_;
  RequestScheduler scheduler_;
  // Pipeline failures, handled off the pipeline's workers: the handling
  // takes subscription locks that a producer blocked on a full worker
  // queue may hold.
  UnboundedMpscQueue<PipelineFailure> failures_;
  ThreadGroup failure_thread_;
  kvclient::LockResolver lock_resolver_;
  ThreadGroup lock_thread_;

  std::atomic<uint64_t> next_request_id_{1};
  std::atomic<uint64_t> region_errors_{0};
  std::atomic<uint64_t> stream_errors_{0};
  std::atomic<uint64_t> restarts_{0};
  std::atomic<uint64_t> fatal_{0};
  std::atomic<uint64_t> scan_yields_{0};
  std::atomic<size_t> scans_yielding_{0};
  std::atomic<uint64_t> lock_resolutions_{0};
  std::atomic<uint64_t> lock_resolution_errors_{0};
  std::atomic<uint64_t> txns_resolved_{0};
  std::atomic<uint64_t> stuck_reconnects_{0};

  mutable Mutex mu_;
  uint64_t next_id_ GUARDED_BY(mu_) = 1;
  bool started_ GUARDED_BY(mu_) = false;
  bool stopped_ GUARDED_BY(mu_) = false;
  std::map<SubscriptionId, std::shared_ptr<Subscription>> subs_ GUARDED_BY(mu_);
};

}  // namespace sluice::logpuller
