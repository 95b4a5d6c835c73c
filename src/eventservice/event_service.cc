#include "eventservice/event_service.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/lifecycle.h"
#include "common/logging.h"
#include "eventservice/dispatcher_state.h"
#include "eventservice/table_scanner.h"
#include "eventstore/event_store.h"
#include "schemastore/schema_reader.h"

namespace sluice::eventservice {

namespace {

// The dispatcher whose scan the current worker thread is running, so that
// RemoveDispatcher called from its own callback does not wait for itself.
thread_local const DispatcherState* tls_current = nullptr;

void StoreMax(std::atomic<uint64_t>* a, uint64_t v) {
  uint64_t cur = a->load(std::memory_order_relaxed);
  while (cur < v && !a->compare_exchange_weak(cur, v)) {
  }
}

std::string IdText(DispatcherId id) { return fmt::format("{}-{}", id.high, id.low); }

}  // namespace

// ---- WorkerQueue ----

void WorkerQueue::Wake(const DispatcherStatePtr& d) {
  if (d->queued.exchange(true)) return;
  MutexLock lock(&mu_);
  if (stop_) return;  // A notify racing with Stop(): nobody would take it.
  ready_.push_back(d);
  cv_.Signal();
}

void WorkerQueue::SchemaAdvanced() {
  MutexLock lock(&mu_);
  schema_advanced_ = true;
  cv_.Signal();
}

void WorkerQueue::Stop() {
  // Each state holds its queue: the queue lets go of the states so that the
  // pair is freed, and they are destroyed after the lock is released (the
  // last state may hold the last reference to this queue).
  std::deque<DispatcherStatePtr> ready;
  decltype(members_) members;
  {
    MutexLock lock(&mu_);
    stop_ = true;
    ready.swap(ready_);
    members.swap(members_);
    cv_.SignalAll();
  }
}

void WorkerQueue::AddMember(const DispatcherStatePtr& d) {
  MutexLock lock(&mu_);
  if (stop_) return;
  members_[d->id] = d;
}

void WorkerQueue::RemoveMember(DispatcherId id) {
  MutexLock lock(&mu_);
  members_.erase(id);
  ready_.erase(std::remove_if(ready_.begin(), ready_.end(),
                              [&](const DispatcherStatePtr& d) { return d->id == id; }),
               ready_.end());
}

std::vector<DispatcherStatePtr> WorkerQueue::Members() const {
  MutexLock lock(&mu_);
  std::vector<DispatcherStatePtr> out;
  out.reserve(members_.size());
  for (const auto& [id, d] : members_) out.push_back(d);
  return out;
}

WorkerQueue::Wakeup WorkerQueue::Wait(Clock* clock, Clock::TimePoint tick_deadline,
                                      DispatcherStatePtr* out) {
  MutexLock lock(&mu_);
  for (;;) {
    if (stop_) return Wakeup::kStop;
    if (clock->Now() >= tick_deadline) return Wakeup::kTick;
    if (schema_advanced_) {
      schema_advanced_ = false;
      return Wakeup::kSchema;
    }
    if (!ready_.empty()) {
      *out = std::move(ready_.front());
      ready_.pop_front();
      // Cleared before the scan, so a notify during it queues another one.
      (*out)->queued.store(false);
      return Wakeup::kDispatcher;
    }
    clock->WaitUntil(&cv_, &mu_, tick_deadline);
  }
}

// ---- Impl ----

class EventService::Impl {
 public:
  Impl(EventServiceOptions options, eventstore::EventStore* store,
       schemastore::SchemaReader* schema)
      : options_(std::move(options)), store_(store), schema_(schema) {
    size_t n = std::max<size_t>(options_.num_workers, 1);
    for (size_t i = 0; i < n; ++i) queues_.push_back(std::make_shared<WorkerQueue>());
    ctx_ = ScanContext{store_, schema_, &options_, &counters_};
  }
  ~Impl() { Stop(); }

  Status Start();
  void Stop();
  Status Register(DispatcherRegistration reg, bool trigger);
  void Remove(DispatcherId id);
  void Ack(DispatcherId id, size_t bytes);
  void UpdateCheckpoint(DispatcherId id, Ts checkpoint) {
    store_->UpdateDispatcherCheckpoint(id, checkpoint);
  }
  size_t UnackedBytes(DispatcherId id) const {
    DispatcherStatePtr d = Find(id);
    return d ? d->unacked.load() : 0;
  }
  EventServiceStats stats() const;

 private:
  DispatcherStatePtr Find(DispatcherId id) const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    auto it = dispatchers_.find(id);
    return it == dispatchers_.end() ? nullptr : it->second;
  }
  void WorkerLoop(size_t index);
  void Process(const DispatcherStatePtr& d);
  void Tick(const DispatcherStatePtr& d);
  bool HasWork(const DispatcherState& d, const ScanProgress& p) const;

  EventServiceOptions options_;
  eventstore::EventStore* const store_;
  schemastore::SchemaReader* const schema_;
  ServiceCounters counters_;
  ScanContext ctx_;
  std::vector<std::shared_ptr<WorkerQueue>> queues_;
  ThreadGroup workers_;
  mutable Mutex mu_;
  std::unordered_map<DispatcherId, DispatcherStatePtr> dispatchers_ GUARDED_BY(mu_);
  bool started_ GUARDED_BY(mu_) = false;
  bool stopped_ GUARDED_BY(mu_) = false;
  std::optional<uint64_t> listener_ GUARDED_BY(mu_);
};

Status EventService::Impl::Start() {
  if (options_.num_workers == 0 || options_.clock == nullptr ||
      options_.tick_interval <= std::chrono::milliseconds::zero() ||
      options_.resolved_interval <= std::chrono::milliseconds::zero() ||
      options_.default_memory_budget == 0 || options_.max_piece_bytes == 0) {
    return InvalidArgument("event service: bad options");
  }
  {
    MutexLock lock(&mu_);
    if (stopped_) return Cancelled("event service stopped");
    if (started_) return InvalidArgument("event service already started");
    started_ = true;
    std::vector<std::shared_ptr<WorkerQueue>> queues = queues_;
    listener_ = schema_->AddResolvedListener([queues](Ts) {
      for (const auto& q : queues) q->SchemaAdvanced();
    });
  }
  for (size_t i = 0; i < queues_.size(); ++i) {
    workers_.Start(fmt::format("evsvc-{}", i), [this, i](StopToken) { WorkerLoop(i); });
  }
  return Status::Ok();
}

void EventService::Impl::Stop() {
  std::unordered_map<DispatcherId, DispatcherStatePtr> all;
  std::optional<uint64_t> listener;
  {
    MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
    listener = listener_;
    all.swap(dispatchers_);
  }
  if (listener) schema_->RemoveResolvedListener(*listener);
  for (const auto& q : queues_) q->Stop();
  workers_.Stop();
  for (const auto& [id, d] : all) {
    d->removed.store(true);
    d->queue->RemoveMember(id);
    if (!d->table_trigger) store_->UnregisterDispatcher(id);
  }
}

Status EventService::Impl::Register(DispatcherRegistration reg, bool trigger) {
  if (reg.consumer == nullptr)
    return InvalidArgument("event service: registration without consumer");
  size_t budget = reg.memory_budget != 0 ? reg.memory_budget : options_.default_memory_budget;
  if (trigger) budget = std::numeric_limits<size_t>::max();
  std::shared_ptr<WorkerQueue> queue = queues_[std::hash<DispatcherId>()(reg.id) % queues_.size()];
  auto d = std::make_shared<DispatcherState>(reg.id, trigger, reg.table_id, std::move(reg.filter),
                                             budget, reg.consumer, queue);
  if (reg.skip_dml_after_start_ts) d->skip_dml_at = Ts(reg.start_ts.value() + 1);
  {
    MutexLock run(&d->run_mu);
    d->progress.sent_ts = reg.start_ts;
    d->progress.last_resolved = reg.start_ts;
    d->progress.last_resolved_time = options_.clock->Now();
  }
  d->store_resolved.store(reg.start_ts.value());
  d->store_max_commit.store(reg.start_ts.value());
  {
    MutexLock lock(&mu_);
    if (stopped_) return Cancelled("event service stopped");
    if (!dispatchers_.emplace(reg.id, d).second) {
      return AlreadyExists("event service: dispatcher " + IdText(reg.id) + " is registered");
    }
  }
  if (!trigger) {
    Span span = reg.comparable_span.value_or(ToComparable(TableRecordSpan(TableId(reg.table_id))));
    std::weak_ptr<DispatcherState> weak = d;
    eventstore::NotifyFn notify = [weak](Ts resolved, Ts max_commit) {
      DispatcherStatePtr s = weak.lock();
      if (s == nullptr || s->removed.load()) return;
      StoreMax(&s->store_max_commit, max_commit.value());
      StoreMax(&s->store_resolved, resolved.value());
      s->queue->Wake(s);
    };
    Status st = store_->RegisterDispatcher(reg.id, TableId(reg.table_id), span, reg.start_ts,
                                           std::move(notify));
    if (!st.ok()) {
      MutexLock lock(&mu_);
      dispatchers_.erase(reg.id);
      return st;
    }
  }
  queue->AddMember(d);
  queue->Wake(d);
  return Status::Ok();
}

void EventService::Impl::Remove(DispatcherId id) {
  DispatcherStatePtr d;
  {
    MutexLock lock(&mu_);
    auto it = dispatchers_.find(id);
    if (it == dispatchers_.end()) return;
    d = std::move(it->second);
    dispatchers_.erase(it);
  }
  d->removed.store(true);
  d->queue->RemoveMember(id);
  if (tls_current != d.get()) {
    MutexLock wait_for_delivery(&d->run_mu);
  }
  if (!d->table_trigger) store_->UnregisterDispatcher(id);
}

void EventService::Impl::Ack(DispatcherId id, size_t bytes) {
  DispatcherStatePtr d = Find(id);
  if (d == nullptr) return;
  size_t left = d->Release(bytes);
  if (left < d->budget && d->waiting_credit.exchange(false)) {
    d->queue->Wake(d);
  }
}

EventServiceStats EventService::Impl::stats() const {
  EventServiceStats s;
  s.scans = counters_.scans.load();
  s.dml_events = counters_.dml_events.load();
  s.ddl_events = counters_.ddl_events.load();
  s.resolved_events = counters_.resolved_events.load();
  s.rows = counters_.rows.load();
  s.rows_filtered = counters_.rows_filtered.load();
  s.rows_skipped_at_start = counters_.rows_skipped_at_start.load();
  s.rows_of_dropped_tables = counters_.rows_of_dropped_tables.load();
  s.split_updates = counters_.split_updates.load();
  return s;
}

void EventService::Impl::WorkerLoop(size_t index) {
  WorkerQueue& q = *queues_[index];
  Clock* clock = options_.clock;
  Clock::TimePoint next_tick = clock->Now() + options_.tick_interval;
  for (;;) {
    DispatcherStatePtr d;
    switch (q.Wait(clock, next_tick, &d)) {
      case WorkerQueue::Wakeup::kStop:
        return;
      case WorkerQueue::Wakeup::kTick:
        next_tick = clock->Now() + options_.tick_interval;
        for (const DispatcherStatePtr& m : q.Members()) Tick(m);
        break;
      case WorkerQueue::Wakeup::kSchema:
        for (const DispatcherStatePtr& m : q.Members()) {
          MutexLock run(&m->run_mu);
          if (!m->removed.load() && HasWork(*m, m->progress)) q.Wake(m);
        }
        break;
      case WorkerQueue::Wakeup::kDispatcher:
        Process(d);
        break;
    }
  }
}

bool EventService::Impl::HasWork(const DispatcherState& d, const ScanProgress& p) const {
  if (p.failed) return false;
  if (d.table_trigger) return schema_->resolved_ts() > p.sent_ts;
  if (!d.HasCredit()) return false;
  if (p.txn.has_value() || p.resume.has_value()) return true;
  Ts end = std::min(Ts(d.store_resolved.load()), schema_->resolved_ts());
  return end > p.sent_ts;
}

void EventService::Impl::Process(const DispatcherStatePtr& d) {
  ScanOutcome out;
  {
    MutexLock run(&d->run_mu);
    if (d->removed.load() || d->progress.failed) return;
    tls_current = d.get();
    out = d->table_trigger ? ScanTableTrigger(ctx_, *d, d->progress)
                           : ScanTable(ctx_, *d, d->progress);
    tls_current = nullptr;
  }
  switch (out) {
    case ScanOutcome::kYield:
      d->queue->Wake(d);
      break;
    case ScanOutcome::kNoCredit:
      d->waiting_credit.store(true);
      // An ack may have come between the scan's check and the flag.
      if (d->HasCredit() && d->waiting_credit.exchange(false)) {
        d->queue->Wake(d);
      }
      break;
    case ScanOutcome::kCaughtUp:
    case ScanOutcome::kRetryLater:  // The next tick retries.
    case ScanOutcome::kFailed:
      break;
  }
}

void EventService::Impl::Tick(const DispatcherStatePtr& d) {
  MutexLock run(&d->run_mu);
  ScanProgress& p = d->progress;
  if (d->removed.load() || p.failed) return;
  tls_current = d.get();
  if (!d->table_trigger) {
    Status st = store_->SubscriptionStatus(d->id);
    if (!st.ok() && st.code() != Code::kNotFound) {
      FailDispatcher(*d, p, st.WithContext(fmt::format("subscription of table {}", d->table_id)));
      tls_current = nullptr;
      return;
    }
  }
  if (HasWork(*d, p)) {
    d->queue->Wake(d);
  } else if (options_.clock->Now() - p.last_resolved_time >= options_.resolved_interval) {
    // Keep-alive: repeat the last resolved mark.
    p.last_resolved_time = options_.clock->Now();
    counters_.resolved_events.fetch_add(1, std::memory_order_relaxed);
    d->consumer->OnResolved(p.last_resolved);
  }
  tls_current = nullptr;
}

// ---- EventService ----

EventService::EventService(EventServiceOptions options, eventstore::EventStore* store,
                           schemastore::SchemaReader* schema)
    : impl_(std::make_unique<Impl>(std::move(options), store, schema)) {}

EventService::~EventService() = default;

Status EventService::Start() { return impl_->Start(); }
void EventService::Stop() { impl_->Stop(); }

Status EventService::RegisterDispatcher(DispatcherRegistration registration) {
  return impl_->Register(std::move(registration), /*trigger=*/false);
}

Status EventService::RegisterTableTrigger(DispatcherId id, Ts start_ts, EventConsumer* consumer) {
  DispatcherRegistration reg;
  reg.id = id;
  reg.table_id = event::kTableTriggerTableId;
  reg.start_ts = start_ts;
  reg.consumer = consumer;
  return impl_->Register(std::move(reg), /*trigger=*/true);
}

void EventService::RemoveDispatcher(DispatcherId id) { impl_->Remove(id); }
void EventService::Ack(DispatcherId id, size_t bytes) { impl_->Ack(id, bytes); }
void EventService::UpdateCheckpoint(DispatcherId id, Ts checkpoint) {
  impl_->UpdateCheckpoint(id, checkpoint);
}
size_t EventService::UnackedBytes(DispatcherId id) const { return impl_->UnackedBytes(id); }
EventServiceStats EventService::stats() const { return impl_->stats(); }

}  // namespace sluice::eventservice
