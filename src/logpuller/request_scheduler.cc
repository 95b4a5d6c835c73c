#include "logpuller/request_scheduler.h"

#include <algorithm>
#include <cmath>

#include "common/logging.h"

namespace sluice::logpuller {

RequestScheduler::RequestScheduler(RequestSchedulerOptions options, pd::RegionCache* cache,
                                   RegionWorkerPool* pool, StreamSink* sink)
    : options_(std::move(options)), cache_(cache), pool_(pool), sink_(sink) {}

RequestScheduler::~RequestScheduler() { Stop(); }

void RequestScheduler::Start() {
  thread_.Start("region-sched", [this](StopToken token) { Loop(token); });
}

void RequestScheduler::Stop() {
  thread_.RequestStop();
  {
    MutexLock lock(&mu_);
    cv_.SignalAll();
  }
  thread_.Join();
  for (auto& [id, store] : stores_) {
    for (auto& stream : store.streams) stream->Stop();
  }
  stores_.clear();
  MutexLock lock(&mu_);
  timers_.clear();
}

void RequestScheduler::PostRange(RangeTask task, Clock::Duration delay) {
  MutexLock lock(&mu_);
  timers_.emplace(options_.clock->Now() + delay, Task(std::move(task)));
  cv_.SignalAll();
}

void RequestScheduler::PostRegion(RegionTask task, Clock::Duration delay) {
  MutexLock lock(&mu_);
  timers_.emplace(options_.clock->Now() + delay, Task(std::move(task)));
  cv_.SignalAll();
}

void RequestScheduler::PostDeregister(uint64_t request_id) {
  MutexLock lock(&mu_);
  deregisters_.push_back(request_id);
  cv_.SignalAll();
}

void RequestScheduler::ReleaseScanSlot(StoreId store) {
  MutexLock lock(&mu_);
  ++released_[store];
  cv_.SignalAll();
}

Clock::Duration RequestScheduler::BackoffDelay(int attempts) {
  if (attempts <= 0) return {};
  double nominal = std::chrono::duration<double, std::milli>(options_.backoff_base).count() *
                   std::pow(2.0, std::min(attempts - 1, 30));
  nominal = std::min(nominal, static_cast<double>(options_.backoff_max.count()));
  uint64_t r;
  {
    MutexLock lock(&mu_);
    rng_state_ ^= rng_state_ << 13;
    rng_state_ ^= rng_state_ >> 7;
    rng_state_ ^= rng_state_ << 17;
    r = rng_state_;
  }
  double jitter = 0.5 + static_cast<double>(r % 1000) / 1000.0;  // [0.5, 1.5)
  return std::chrono::duration_cast<Clock::Duration>(
      std::chrono::duration<double, std::milli>(nominal * jitter));
}

size_t RequestScheduler::NumConnectedStreams() const {
  MutexLock lock(&mu_);
  return connected_streams_;
}

size_t RequestScheduler::NumWaitingForWindow() const {
  MutexLock lock(&mu_);
  return waiting_;
}

void RequestScheduler::Loop(const StopToken& token) {
  while (!token.cancelled()) {
    std::vector<Task> due;
    std::vector<uint64_t> deregisters;
    std::map<StoreId, size_t> released;
    {
      MutexLock lock(&mu_);
      while (!token.cancelled() && deregisters_.empty() && released_.empty() &&
             (timers_.empty() || timers_.begin()->first > options_.clock->Now())) {
        if (timers_.empty()) {
          cv_.Wait(&mu_);
        } else {
          options_.clock->WaitUntil(&cv_, &mu_, timers_.begin()->first);
        }
      }
      if (token.cancelled()) break;
      Clock::TimePoint now = options_.clock->Now();
      while (!timers_.empty() && timers_.begin()->first <= now && due.size() < 1024) {
        due.push_back(std::move(timers_.begin()->second));
        timers_.erase(timers_.begin());
      }
      deregisters.swap(deregisters_);
      released.swap(released_);
    }
    for (uint64_t request_id : deregisters) {
      for (auto& [id, store] : stores_) {
        for (auto& stream : store.streams) stream->Deregister(request_id);
      }
    }
    for (auto& [store, n] : released) {
      auto it = stores_.find(store);
      if (it == stores_.end()) continue;
      it->second.pending_scans -= std::min(it->second.pending_scans, n);
    }
    for (Task& task : due) Process(task);
    DrainWindows();
    size_t connected = 0;
    size_t waiting = 0;
    for (auto& [id, store] : stores_) {
      waiting += store.waiting.size();
      for (auto& stream : store.streams) connected += stream->connected() ? 1 : 0;
    }
    MutexLock lock(&mu_);
    connected_streams_ = connected;
    waiting_ = waiting;
  }
}

void RequestScheduler::Process(Task& task) {
  if (auto* range = std::get_if<RangeTask>(&task)) {
    ProcessRange(*range);
  } else {
    ProcessRegion(std::get<RegionTask>(task));
  }
}

void RequestScheduler::ProcessRange(RangeTask& task) {
  if (task.run->stopped.load()) return;
  Result<std::vector<pd::Region>> regions = cache_->LocateSpan(task.range);
  if (!regions.ok()) {
    LOG_WARN("locating regions of {} failed: {}", task.range.ToString(),
             regions.status().ToString());
    int attempts = task.attempts + 1;
    PostRange(RangeTask{std::move(task.run), std::move(task.range), attempts},
              BackoffDelay(attempts));
    return;
  }
  for (const pd::Region& region : regions.value()) {
    // A region is always requested (and locked) for all of its part of the
    // span, even when only a piece of it is being retried: a region holds one
    // lock and one request per run, so two pieces would never both lock.
    Span part = Intersect(task.run->sub->span, Span{region.start_key, region.end_key});
    if (part.IsEmpty()) continue;
    RegionTask region_task{task.run, RegionRoute::Of(region), std::move(part), task.attempts};
    ProcessRegion(region_task);
  }
}

void RequestScheduler::ProcessRegion(RegionTask& task) {
  if (task.run->stopped.load()) return;
  LockResult lock = task.run->lock.TryLock(task.range, task.region.id, task.region.version);
  switch (lock.outcome) {
    case LockOutcome::kCancelled:
      return;
    case LockOutcome::kWait:
      PostRegion(std::move(task), options_.lock_wait_retry);
      return;
    case LockOutcome::kStale:
      // Our view of the region is older than a lock already held: reload
      // the uncovered parts from PD, through the queue (never recursively).
      cache_->Invalidate(task.region.id);
      for (Span& retry : lock.retry_ranges) {
        PostRange(RangeTask{task.run, std::move(retry), task.attempts}, options_.lock_wait_retry);
      }
      return;
    case LockOutcome::kSuccess:
      break;
  }
  Result<std::string> address = cache_->StoreAddress(task.region.leader_store);
  if (!address.ok()) {
    task.run->lock.Unlock(task.region.id, lock.resolved_ts);
    cache_->Invalidate(task.region.id);
    cache_->InvalidateStore(task.region.leader_store);
    int attempts = task.attempts + 1;
    PostRange(RangeTask{task.run, task.range, attempts}, BackoffDelay(attempts));
    return;
  }
  StoreState& store = StoreFor(task.region.leader_store, address.value());
  Ready ready{std::move(task), lock.resolved_ts, std::move(address).value()};
  if (store.pending_scans >= options_.scan_window_per_store) {
    store.waiting.push_back(std::move(ready));
    return;
  }
  Send(store, std::move(ready));
}

RequestScheduler::StoreState& RequestScheduler::StoreFor(StoreId id, const std::string& address) {
  StoreState& store = stores_[id];
  if (store.address != address) {
    for (auto& stream : store.streams) stream->Stop();
    store.streams.clear();
    store.address = address;
    StoreStreamOptions stream_options = options_.stream;
    for (size_t i = 0; i < std::max<size_t>(1, options_.streams_per_store); ++i) {
      store.streams.push_back(std::make_unique<StoreStream>(id, address, sink_, stream_options));
    }
  }
  return store;
}

void RequestScheduler::Send(StoreState& store, Ready ready) {
  RegionTask& task = ready.task;
  if (task.run->stopped.load()) {
    task.run->lock.Unlock(task.region.id, ready.checkpoint);
    return;
  }
  cdcpb::ChangeDataRequest request;
  request.set_region_id(task.region.id.value());
  request.mutable_region_epoch()->set_conf_ver(task.region.conf_ver);
  request.mutable_region_epoch()->set_version(task.region.version);
  request.set_checkpoint_ts(ready.checkpoint.value());
  request.set_start_key(task.range.start);
  request.set_end_key(task.range.end);
  request.set_request_id(task.run->request_id);
  if (task.run->sub->options.read_old_value) {
    request.set_extra_op(kvrpcpb::ExtraOp::ReadOldValue);
  }
  request.mutable_register_();
  StoreStream& stream = *store.streams[store.next++ % store.streams.size()];
  auto state =
      std::make_unique<RegionState>(task.run, task.region, ready.checkpoint, task.attempts);
  bool posted = false;
  uint64_t used_stream = 0;
  Result<uint64_t> sent = stream.Send(std::move(request), [&](uint64_t stream_id) {
    state->stream_id = stream_id;
    used_stream = stream_id;
    pool_->PostStart(std::move(state));
    posted = true;
  });
  ++store.pending_scans;
  if (sent.ok()) return;
  if (posted) {
    // The state is in its worker; fail it there so that it is removed once.
    pool_->PostSendFailed(task.run->request_id, task.region.id, used_stream, sent.status());
    return;
  }
  --store.pending_scans;
  task.run->lock.Unlock(task.region.id, ready.checkpoint);
  RetryRegionLater(std::move(task), sent.status());
}

void RequestScheduler::RetryRegionLater(RegionTask task, const Status& why) {
  LOG_INFO("region {} request failed, retrying: {}", task.region.id.value(), why.ToString());
  cache_->OnSendFail(task.region.id, /*reload=*/false);
  int attempts = task.attempts + 1;
  task.attempts = attempts;
  PostRegion(std::move(task), BackoffDelay(attempts));
}

void RequestScheduler::DrainWindows() {
  for (auto& [id, store] : stores_) {
    while (!store.waiting.empty() && store.pending_scans < options_.scan_window_per_store) {
      Ready ready = std::move(store.waiting.front());
      store.waiting.pop_front();
      Send(store, std::move(ready));
    }
  }
}

}  // namespace sluice::logpuller
