// The subscription client's lock-resolution thread: stuck spans, their
// regions' locks resolved through TiKV's transaction API, and restarts for
// regions stuck far longer (README.md, "Stuck regions").
#include "common/logging.h"
#include "logpuller/subscription_client.h"

namespace sluice::logpuller {

std::vector<SpanProgress> SubscriptionClient::SpanProgresses() const {
  std::vector<std::shared_ptr<Subscription>> subs;
  {
    MutexLock lock(&mu_);
    subs.reserve(subs_.size());
    for (const auto& [id, sub] : subs_) subs.push_back(sub);
  }
  // Each subscription's lock alone, never inside the client's.
  std::vector<std::pair<SubscriptionId, std::shared_ptr<SubscriptionRun>>> runs;
  runs.reserve(subs.size());
  for (const std::shared_ptr<Subscription>& sub : subs) {
    MutexLock sub_lock(&sub->mu);
    if (sub->run != nullptr && !sub->run->stopped.load()) runs.emplace_back(sub->id, sub->run);
  }
  std::vector<SpanProgress> out;
  out.reserve(runs.size());
  for (const auto& [id, run] : runs) {
    SpanProgress span;
    span.id = id;
    span.request_id = run->request_id;
    span.resolved_ts = run->lock.ResolvedTs();
    span.initialized = run->lock.AllInitialized();
    span.regions = run->lock.LockedRegions();
    out.push_back(std::move(span));
  }
  return out;
}

void SubscriptionClient::CheckStuckRegions(StuckRegions& stuck) {
  Result<Ts> current = pd_->GetTs();
  if (!current.ok()) {
    LOG_WARN("stuck-region check skipped: no TSO: {}", current.status().ToString());
    return;
  }
  std::vector<ResolveLockTask> resolve;
  std::vector<ReconnectTask> reconnect;
  Clock* clock = options_.scheduler.clock;
  stuck.Check(SpanProgresses(), *current, clock->Now(), &resolve, &reconnect);
  for (const ReconnectTask& task : reconnect) ReconnectStuck(task);
  for (const ResolveLockTask& task : resolve) {
    Result<kvclient::LockResolveResult> result =
        lock_resolver_.ResolveRegion(task.key, task.max_version);
    stuck.Resolved(task.region, clock->Now());
    lock_resolutions_.fetch_add(1, std::memory_order_relaxed);
    if (!result.ok()) {
      if (result.status().code() == Code::kCancelled) return;
      lock_resolution_errors_.fetch_add(1, std::memory_order_relaxed);
      LOG_WARN("region {}: lock resolution up to {} failed: {}", task.region.value(),
               task.max_version.value(), result.status().ToString());
      continue;
    }
    txns_resolved_.fetch_add(result->txns_committed + result->txns_rolled_back,
                             std::memory_order_relaxed);
  }
}

void SubscriptionClient::ReconnectStuck(const ReconnectTask& task) {
  std::shared_ptr<SubscriptionRun> run;
  if (std::shared_ptr<Subscription> sub = Find(task.id)) {
    MutexLock lock(&sub->mu);
    run = sub->run;
  }
  if (run == nullptr || run->request_id != task.request_id) return;
  stuck_reconnects_.fetch_add(1, std::memory_order_relaxed);
  // A restart, not a region retry: the new run's request id keeps anything
  // TiKV still sends for the old registration out of the new one.
  FailRun(run, Unavailable(
                   "region " + std::to_string(task.region.value()) + " made no progress for " +
                   std::to_string(options_.stuck.reconnect_after.count()) + " ms; reconnecting"));
}

}  // namespace sluice::logpuller
