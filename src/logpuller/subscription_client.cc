#include "logpuller/subscription_client.h"

#include <algorithm>
#include <cassert>
#include <optional>
#include <thread>

#include "common/logging.h"

namespace sluice::logpuller {

namespace {

constexpr auto kMaxServerBusyBackoff = std::chrono::minutes(10);

size_t DefaultWorkers(size_t n) {
  if (n != 0) return n;
  return std::max<unsigned>(1, std::thread::hardware_concurrency());
}

RequestSchedulerOptions WithClusterId(RequestSchedulerOptions options, pd::PdClient* pd) {
  options.stream.cluster_id = pd->cluster_id();
  return options;
}

// The resolver's deadlines and backoff run on the client's clock.
kvclient::LockResolverOptions WithClock(kvclient::LockResolverOptions options, Clock* clock) {
  options.rpc.clock = clock;
  return options;
}

}  // namespace

SubscriptionClient::SubscriptionClient(SubscriptionClientOptions options, pd::PdClient* pd,
                                       pd::RegionCache* cache)
    : options_(std::move(options)),
      pd_(pd),
      cache_(cache),
      pipeline_(options_.pipeline,
                [this](SubscriptionId id, const Status& status, bool consumer_told) {
                  OnPipelineFailure(id, status, consumer_told);
                }),
      pool_(DefaultWorkers(options_.region_workers), options_.region_queue_capacity, this),
      scheduler_(WithClusterId(options_.scheduler, pd), cache, &pool_, this),
      lock_resolver_(pd, cache, WithClock(options_.lock_resolver, options_.scheduler.clock)) {}

SubscriptionClient::~SubscriptionClient() { Stop(); }

void SubscriptionClient::Start() {
  MutexLock lock(&mu_);
  if (started_) return;
  started_ = true;
  pipeline_.Start();
  pool_.Start();
  scheduler_.Start();
  failure_thread_.Start("puller-failures", [this](StopToken stop) {
    while (std::optional<PipelineFailure> f = failures_.Pop(stop)) {
      HandlePipelineFailure(*f);
    }
  });
  if (options_.resolve_lock_check_interval.count() > 0) {
    lock_thread_.Start("puller-locks", [this](StopToken stop) {
      StuckRegions stuck(options_.stuck);
      while (options_.scheduler.clock->SleepFor(options_.resolve_lock_check_interval, stop)) {
        CheckStuckRegions(stuck);
      }
    });
  }
}

void SubscriptionClient::Stop() {
  std::map<SubscriptionId, std::shared_ptr<Subscription>> subs;
  {
    MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
    subs.swap(subs_);
  }
  for (auto& [id, sub] : subs) {
    MutexLock lock(&sub->mu);
    if (sub->run != nullptr) sub->run->stopped.store(true);
  }
  // Region workers first: that unblocks stream readers waiting for queue room
  // and workers waiting for pipeline quota.
  // The failure thread first: it restarts runs through the scheduler and
  // the pipeline. Failures reported after this are dropped.
  failures_.Close();
  failure_thread_.Stop();
  lock_resolver_.Stop();  // Ends a resolution in progress.
  lock_thread_.Stop();
  pool_.Stop();
  scheduler_.Stop();
  pipeline_.Stop();
  for (auto& [id, sub] : subs) {
    MutexLock lock(&sub->mu);
    sub->run.reset();  // Breaks the run -> subscription cycle.
  }
}

Result<SubscriptionId> SubscriptionClient::Subscribe(const Span& comparable_span, Ts start_ts,
                                                     std::shared_ptr<KvConsumer> consumer,
                                                     const SubscribeOptions& options) {
  if (comparable_span.IsEmpty()) return InvalidArgument("subscribe: empty span");
  if (consumer == nullptr) return InvalidArgument("subscribe: no consumer");
  auto sub = std::make_shared<Subscription>();
  sub->span = comparable_span;
  sub->start_ts = start_ts;
  sub->options = options;
  sub->consumer = std::make_shared<TrackingConsumer>(std::move(consumer));
  auto run = std::make_shared<SubscriptionRun>(sub, next_request_id_.fetch_add(1), comparable_span,
                                               start_ts);
  {
    MutexLock lock(&mu_);
    if (stopped_) return Cancelled("subscription client stopped");
    sub->id = SubscriptionId(next_id_++);
    subs_[sub->id] = sub;
  }
  {
    MutexLock lock(&sub->mu);
    sub->run = run;
    sub->last_enqueued = start_ts;
  }
  Status registered = pipeline_.Register(sub->id, sub->consumer, start_ts);
  if (!registered.ok()) {
    Unsubscribe(sub->id);
    return registered;
  }
  scheduler_.PostRange(RangeTask{run, comparable_span, 0});
  return sub->id;
}

void SubscriptionClient::Unsubscribe(SubscriptionId id) {
  std::shared_ptr<Subscription> sub;
  {
    MutexLock lock(&mu_);
    auto it = subs_.find(id);
    if (it == subs_.end()) return;
    sub = std::move(it->second);
    subs_.erase(it);
  }
  Detach(*sub);
}

void SubscriptionClient::StopRun(SubscriptionRun& run) {
  run.stopped.store(true);
  run.lock.Stop();
  pool_.PostDropRun(run.request_id);
  scheduler_.PostDeregister(run.request_id);
}

void SubscriptionClient::Detach(Subscription& sub) {
  std::shared_ptr<SubscriptionRun> run;
  {
    MutexLock lock(&sub.mu);
    run = std::move(sub.run);
  }
  if (run != nullptr) StopRun(*run);
  pipeline_.Unregister(sub.id);
}

std::shared_ptr<Subscription> SubscriptionClient::Find(SubscriptionId id) const {
  MutexLock lock(&mu_);
  auto it = subs_.find(id);
  return it == subs_.end() ? nullptr : it->second;
}

SubscriptionClient::Stats SubscriptionClient::stats() const {
  Stats stats;
  {
    MutexLock lock(&mu_);
    stats.subscriptions = subs_.size();
  }
  stats.region_states = pool_.NumStates();
  stats.region_errors = region_errors_.load();
  stats.stream_errors = stream_errors_.load();
  stats.restarts = restarts_.load();
  stats.fatal = fatal_.load();
  stats.scan_yields = scan_yields_.load();
  stats.scans_yielding = scans_yielding_.load();
  stats.lock_resolutions = lock_resolutions_.load();
  stats.lock_resolution_errors = lock_resolution_errors_.load();
  stats.txns_resolved = txns_resolved_.load();
  stats.stuck_reconnects = stuck_reconnects_.load();
  return stats;
}

void SubscriptionClient::RetryRegion(RegionState& state, Span range, Clock::Duration min_delay) {
  int attempts = state.attempts + 1;
  Clock::Duration delay = std::max(min_delay, scheduler_.BackoffDelay(attempts));
  scheduler_.PostRegion(RegionTask{state.run, state.region, std::move(range), attempts}, delay);
}

void SubscriptionClient::RetryRange(RegionState& state, Span range) {
  int attempts = state.attempts + 1;
  scheduler_.PostRange(RangeTask{state.run, std::move(range), attempts},
                       scheduler_.BackoffDelay(attempts));
}

void SubscriptionClient::OnRegionFailed(std::unique_ptr<RegionState> state, RegionFailure failure) {
  SubscriptionRun& run = *state->run;
  RegionId region = state->region.id;
  std::optional<Span> released;
  run.lock.Unlock(region, state->ResolvedTs(), &released);
  if (!state->initialized) scheduler_.ReleaseScanSlot(state->region.leader_store);
  if (run.stopped.load()) return;
  if (!released.has_value()) {
    // A state always holds its region's lock, so this is a bug here;
    // re-dividing the whole span still covers what the region served, and
    // the other locks answer it with their own parts.
    assert(false && "a failed region held no range lock");
    released = run.sub->span;
  }
  Span range = std::move(released).value();
  if (failure.kind == RegionFailure::Kind::kStreamError) {
    stream_errors_.fetch_add(1);
    cache_->OnSendFail(region, /*reload=*/false);
    RetryRegion(*state, std::move(range), {});
    return;
  }
  region_errors_.fetch_add(1);
  const cdcpb::Error& error = failure.error;
  if (error.has_not_leader()) {
    const metapb::Peer& leader = error.not_leader().leader();
    if (error.not_leader().has_leader() && leader.store_id() != 0) {
      cache_->UpdateLeader(region, StoreId(leader.store_id()), leader.id());
      state->region.leader_store = StoreId(leader.store_id());
      state->region.leader_peer_id = leader.id();
      RetryRegion(*state, std::move(range), {});
    } else {
      cache_->Invalidate(region);
      RetryRange(*state, std::move(range));
    }
  } else if (error.has_epoch_not_match() || error.has_region_not_found()) {
    cache_->Invalidate(region);
    RetryRange(*state, std::move(range));
  } else if (error.has_server_is_busy()) {
    auto busy = std::chrono::milliseconds(error.server_is_busy().backoff_ms());
    RetryRegion(*state, std::move(range), std::min<Clock::Duration>(busy, kMaxServerBusyBackoff));
  } else if (error.has_duplicate_request()) {
    FailRun(state->run, Internal("TiKV reports a duplicate request for region " +
                                 std::to_string(region.value())));
  } else if (error.has_compatibility() || error.has_cluster_id_mismatch()) {
    Fail(run.sub, Incompatible("TiKV refuses the subscription: " + error.ShortDebugString()));
  } else {
    RetryRegion(*state, std::move(range), {});  // Congested and errors this client does not know.
  }
}

void SubscriptionClient::OnRegionInitialized(RegionState& state) {
  scheduler_.ReleaseScanSlot(state.region.leader_store);
}

void SubscriptionClient::OnRegionDropped(RegionState& state) {
  if (!state.initialized) scheduler_.ReleaseScanSlot(state.region.leader_store);
}

// A new subscription's initial scan is the kind of ingest that can wait: no
// one reads the subscription before its first resolved ts, which needs every
// region initialized. Once a resolved ts went to the pipeline, readers wait
// on it, so a later rescan (a split, a restart) never waits here; nor does
// a subscription with a pending first publish (its resolved ts went).
void SubscriptionClient::YieldToFirstPublishes(SubscriptionRun& run, const CancelToken& token) {
  if (options_.scan_yield_max.count() <= 0 || pipeline_.FirstPublishesPending() == 0) return;
  const Subscription& sub = *run.sub;
  if (!sub.options.yield_scan || sub.resolved_enqueued.load(std::memory_order_relaxed)) return;
  if (run.lock.AllInitialized()) return;
  scans_yielding_.fetch_add(1);
  scan_yields_.fetch_add(1);
  pipeline_.AwaitFirstPublishes(options_.scan_yield_max, token);
  scans_yielding_.fetch_sub(1);
}

void SubscriptionClient::EnqueueData(SubscriptionRun& run, KvBatch batch,
                                     const CancelToken& token) {
  if (run.stopped.load()) return;
  YieldToFirstPublishes(run, token);
  if (run.stopped.load()) return;  // Stopped (restarted) while it waited.
  Status status = pipeline_.EnqueueData(run.sub->id, std::move(batch), token);
  if (!status.ok() && status.code() != Code::kCancelled) {
    LOG_WARN("subscription {}: enqueue failed: {}", run.sub->id.value(), status.ToString());
  }
}

void SubscriptionClient::MaybeAdvance(SubscriptionRun& run, const CancelToken& token) {
  Subscription& sub = *run.sub;
  if (sub.options.advance_interval.count() > 0) {
    Clock::Duration::rep now = options_.scheduler.clock->Now().time_since_epoch().count();
    Clock::Duration::rep last = run.last_compute.load(std::memory_order_relaxed);
    if (Clock::Duration(now - last) < sub.options.advance_interval) return;
    // Another worker that wins the race recomputes instead.
    if (!run.last_compute.compare_exchange_strong(last, now, std::memory_order_relaxed)) return;
  }
  Ts ts = run.lock.ResolvedTs();
  // Under the subscription's lock so that a resolved ts of a replaced run
  // can never reach the pipeline after the restart reset it.
  MutexLock lock(&sub.mu);
  if (sub.run.get() != &run || run.stopped.load()) return;
  if (ts < run.checkpoint) return;
  if (ts == run.checkpoint) {
    if (sub.sent_checkpoint || !run.lock.AllInitialized()) return;
    sub.sent_checkpoint = true;
  } else if (ts <= sub.last_enqueued) {
    return;
  }
  sub.last_enqueued = ts;
  sub.resolved_enqueued.store(true, std::memory_order_relaxed);
  Status status = pipeline_.EnqueueResolved(sub.id, ts, token);
  if (!status.ok() && status.code() != Code::kCancelled) {
    LOG_WARN("subscription {}: resolved ts not enqueued: {}", sub.id.value(), status.ToString());
  }
}

void SubscriptionClient::FailRun(const std::shared_ptr<SubscriptionRun>& run,
                                 const Status& status) {
  if (run->stopped.exchange(true)) return;
  std::shared_ptr<Subscription> sub = run->sub;
  if (status.code() == Code::kIncompatible) {
    Fail(sub, status);
    return;
  }
  LOG_WARN("subscription {} restarts from its checkpoint after: {}", sub->id.value(),
           status.ToString());
  std::shared_ptr<SubscriptionRun> next;
  int restarts = 0;
  {
    MutexLock lock(&sub->mu);
    if (sub->run != run) return;  // Unsubscribed or already restarted.
    Ts checkpoint = std::max(sub->start_ts, sub->consumer->published());
    next = std::make_shared<SubscriptionRun>(sub, next_request_id_.fetch_add(1), sub->span,
                                             checkpoint);
    sub->run = next;
    sub->last_enqueued = checkpoint;
    sub->sent_checkpoint = true;  // The consumer has seen it already.
    restarts = ++sub->restarts;
    Status reset = pipeline_.Register(sub->id, sub->consumer, checkpoint);
    if (!reset.ok()) LOG_ERROR("span pipeline reset failed: {}", reset.ToString());
  }
  restarts_.fetch_add(1);
  StopRun(*run);  // Already marked stopped above.
  auto delay =
      std::min<Clock::Duration>(options_.scheduler.backoff_max,
                                options_.restart_backoff_base * (1 << std::min(restarts - 1, 10)));
  scheduler_.PostRange(RangeTask{next, sub->span, 0}, delay);
}

void SubscriptionClient::Fail(const std::shared_ptr<Subscription>& sub, const Status& status,
                              bool notify_consumer) {
  {
    MutexLock lock(&mu_);
    auto it = subs_.find(sub->id);
    if (it == subs_.end() || it->second != sub) return;
    subs_.erase(it);
  }
  LOG_ERROR("subscription {} failed: {}", sub->id.value(), status.ToString());
  fatal_.fetch_add(1);
  Detach(*sub);
  if (notify_consumer) sub->consumer->OnSubscriptionError(status);
}

void SubscriptionClient::OnPipelineFailure(SubscriptionId id, const Status& status,
                                           bool consumer_told) {
  // Never blocks: after Stop() the queue is closed and the failure dropped.
  failures_.Push(PipelineFailure{id, status, consumer_told});
}

void SubscriptionClient::HandlePipelineFailure(const PipelineFailure& failure) {
  std::shared_ptr<Subscription> sub = Find(failure.id);
  if (sub == nullptr) return;
  const Status& status = failure.status;
  // A failed store (the consumer not told yet) may be retried; a consumer
  // bug (a throw, a lost callback) fails the subscription.
  if (!failure.consumer_told && MayRetryPersist(*sub, status)) {
    std::shared_ptr<SubscriptionRun> run;
    {
      MutexLock lock(&sub->mu);
      run = sub->run;
    }
    if (run != nullptr) FailRun(run, status.WithContext("span pipeline"));
    return;
  }
  Fail(sub, status.WithContext("span pipeline"), /*notify_consumer=*/!failure.consumer_told);
}

bool SubscriptionClient::MayRetryPersist(Subscription& sub, const Status& status) {
  if (!IsRetryable(status.code())) return false;
  MutexLock lock(&sub.mu);
  Ts published = sub.consumer->published();
  if (published > sub.persist_failed_at) sub.persist_failures = 0;
  sub.persist_failed_at = published;
  if (++sub.persist_failures > options_.max_persist_restarts) {
    LOG_ERROR("subscription {}: {} failed stores in a row at resolved ts {}; giving up",
              sub.id.value(), sub.persist_failures - 1, published.value());
    return false;
  }
  return true;
}

Status SubscriptionClient::OnStreamEvent(uint64_t stream_id, MessageBytes message) {
  return pool_.PostEvent(stream_id, std::move(message));
}

void SubscriptionClient::OnStreamBroken(uint64_t stream_id, StoreId store, const Status& status) {
  LOG_INFO("store {} stream {} broke: {}", store.value(), stream_id, status.ToString());
  pool_.PostStreamBroken(stream_id, status);
}

}  // namespace sluice::logpuller
