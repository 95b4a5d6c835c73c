#include "logpuller/span_pipeline.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "common/byte_quota.h"
#include "common/logging.h"
#include "common/queue.h"
#include "common/thread_annotations.h"

namespace sluice::logpuller {
namespace span_pipeline_internal {
namespace {

constexpr std::chrono::hours kIdleWait{1};  // Wait bound when no stall check is due.

// Runs a consumer call; an exception becomes an Internal status.
template <typename Fn>
Status CallConsumer(const char* what, Fn&& fn) {
  try {
    fn();
    return Status::Ok();
  } catch (const std::exception& e) {
    return Internal(std::string("consumer ") + what + " threw: " + RedactText(e.what()));
  } catch (...) {
    return Internal(std::string("consumer ") + what + " threw a non-standard exception");
  }
}

}  // namespace

// A per-pipeline count mirrored into a registry gauge (shared by every
// pipeline of that registry, so the gauge is the sum).
class Stat {
 public:
  explicit Stat(std::shared_ptr<Gauge> gauge) : gauge_(std::move(gauge)) {}
  void Add(int64_t delta) {
    value_.fetch_add(delta);
    gauge_->Add(static_cast<double>(delta));
  }
  uint64_t Value() const { return static_cast<uint64_t>(std::max<int64_t>(value_.load(), 0)); }

 private:
  std::atomic<int64_t> value_{0};
  const std::shared_ptr<Gauge> gauge_;
};

std::string MetricName(const char* suffix) {
  return std::string("sluice_logpuller_span_pipeline_") + suffix;
}

struct Metrics {
  explicit Metrics(Registry* r)
      : in_flight_bytes(r->AddGauge(MetricName("inflight_bytes"),
                                    "Data bytes handed to consumers, not yet persisted.")),
        in_flight_batches(r->AddGauge(MetricName("inflight_batches"),
                                      "Data batches handed to consumers, not yet persisted.")),
        pending_barriers(r->AddGauge(MetricName("pending_resolved_barriers"),
                                     "Resolved-ts barriers waiting for earlier batches.")),
        subscriptions(r->AddGauge(MetricName("active_subscriptions"),
                                  "Subscriptions with state in the span pipeline.")),
        barriers_dropped(r->AddCounter(MetricName("resolved_barrier_dropped_total"),
                                       "Resolved-ts barriers dropped: subscription not active.")),
        stalls(r->AddCounter(MetricName("stalls_total"),
                             "Batches outstanding longer than the stall threshold.")),
        duplicate_callbacks(r->AddCounter(MetricName("duplicate_callbacks_total"),
                                          "Persisted callbacks called twice (consumer bug).")),
        failures(r->AddCounter(MetricName("subscription_failures_total"),
                               "Subscriptions failed by the span pipeline.")) {}

  Stat in_flight_bytes;
  Stat in_flight_batches;
  Stat pending_barriers;
  Stat subscriptions;
  const std::shared_ptr<Counter> barriers_dropped;
  const std::shared_ptr<Counter> stalls;
  const std::shared_ptr<Counter> duplicate_callbacks;
  const std::shared_ptr<Counter> failures;
};

// A message on a worker's unbounded control queue.
struct Control {
  // kFailed: the consumer could not store the batch; kLost: it destroyed
  // the callback without calling it.
  enum class Kind { kRegister, kUnregister, kPersisted, kFailed, kLost };
  Kind kind;
  SubscriptionId id;
  uint64_t generation = 0;
  uint64_t seq = 0;                      // kPersisted, kFailed, kLost.
  std::shared_ptr<KvConsumer> consumer;  // kRegister.
  Ts start_ts;                           // kRegister.
  Status status;                         // kFailed.
};

// A message on a worker's bounded data queue: a batch or a resolved ts.
struct DataMsg {
  SubscriptionId id;
  uint64_t generation = 0;
  bool resolved = false;
  Ts ts;          // resolved only.
  KvBatch batch;  // data only.
  QuotaLease lease;
};

// A worker's control queue and wake-up flag. Producers, callbacks and Stop()
// wake the worker; it sleeps on the pipeline's clock until woken or the next
// stall check is due.
class Mailbox {
 public:
  // False once the queue is closed (after Stop()).
  bool Post(Control&& msg) {
    if (!control.Push(std::move(msg))) return false;
    Wake();
    return true;
  }

  void Wake() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    pending_ = true;
    cv_.Signal();
  }

  void Wait(Clock* clock, Clock::TimePoint deadline, const StopToken& stop) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    while (!pending_ && !stop.cancelled()) {
      if (clock->WaitUntil(&cv_, &mu_, deadline)) break;
    }
    pending_ = false;
  }

  UnboundedMpscQueue<Control> control;

 private:
  Mutex mu_;
  CondVar cv_;
  bool pending_ GUARDED_BY(mu_) = false;
};

// What persisted callbacks need. Shared by the pipeline and every callback,
// so that a callback arriving after Stop() or after the pipeline is
// destroyed can still release its quota.
struct Shared {
  Shared(uint64_t quota_bytes, Registry* registry, size_t num_workers)
      : quota(std::max<uint64_t>(quota_bytes, 1)), metrics(registry) {
    for (size_t i = 0; i < num_workers; ++i) mailboxes.push_back(std::make_unique<Mailbox>());
  }

  ByteQuota quota;
  Metrics metrics;
  std::vector<std::unique_ptr<Mailbox>> mailboxes;  // One per worker.
  std::atomic<bool> stopped{false};
  std::atomic<uint64_t> next_generation{1};
  std::atomic<uint64_t> duplicate_callbacks{0};

  // First publishes: since when each subscription whose first resolved ts
  // waits for persistence has waited, and the threads in
  // SpanPipeline::AwaitFirstPublishes().
  Mutex first_mu;
  CondVar first_cv;
  std::multiset<Clock::TimePoint> first_pending GUARDED_BY(first_mu);
  size_t first_waiters GUARDED_BY(first_mu) = 0;
  // first_pending.size(), for a check on every batch without the mutex.
  std::atomic<size_t> first_pending_now{0};

  void AddFirstPending(Clock::TimePoint since) EXCLUDES(first_mu) {
    MutexLock lock(&first_mu);
    first_pending.insert(since);
    first_pending_now.store(first_pending.size(), std::memory_order_relaxed);
  }
  // Wakes the waiters: their deadline may now be earlier, or nothing waits.
  void RemoveFirstPending(Clock::TimePoint since) EXCLUDES(first_mu) {
    MutexLock lock(&first_mu);
    first_pending.erase(first_pending.find(since));
    first_pending_now.store(first_pending.size(), std::memory_order_relaxed);
    first_cv.SignalAll();
  }
  void WakeFirstWaiters() EXCLUDES(first_mu) {
    MutexLock lock(&first_mu);
    first_cv.SignalAll();
  }
};

// One batch handed to a consumer. Owned by the persisted callback (all its
// copies); releases the batch's quota exactly once: on the first call, or on
// destruction if the callback was never called.
class BatchTicket {
 public:
  // `batch` names the batch: kind, id, generation and seq.
  BatchTicket(std::shared_ptr<Shared> shared, size_t worker, Control batch, QuotaLease lease)
      : shared_(std::move(shared)), worker_(worker), batch_(batch), lease_(std::move(lease)) {
    shared_->metrics.in_flight_bytes.Add(static_cast<int64_t>(lease_.bytes()));
    shared_->metrics.in_flight_batches.Add(1);
  }
  BatchTicket(const BatchTicket&) = delete;
  BatchTicket& operator=(const BatchTicket&) = delete;

  ~BatchTicket() {
    if (called_.exchange(true)) return;
    if (!shared_->stopped.load()) {
      LOG_WARN("span pipeline: subscription {} batch {} dropped its persisted callback uncalled",
               batch_.id.value(), batch_.seq);
    }
    Finish(Control::Kind::kLost);
  }

  // The persisted callback. Never blocks.
  void OnPersisted(const Status& status) {
    if (called_.exchange(true)) {
      shared_->duplicate_callbacks += 1;
      shared_->metrics.duplicate_callbacks->Inc();
      LOG_ERROR("span pipeline: persisted callback of subscription {} batch {} called twice",
                batch_.id.value(), batch_.seq);
      return;
    }
    Finish(status.ok() ? Control::Kind::kPersisted : Control::Kind::kFailed, status);
  }

 private:
  void Finish(Control::Kind kind, const Status& status = Status::Ok()) {
    uint64_t bytes = lease_.bytes();
    lease_.Release();
    shared_->metrics.in_flight_bytes.Add(-static_cast<int64_t>(bytes));
    shared_->metrics.in_flight_batches.Add(-1);
    // Fails only after Stop(); the quota is back already, nothing else to do.
    Control signal = batch_;
    signal.kind = kind;
    signal.status = status;
    shared_->mailboxes[worker_]->Post(std::move(signal));
  }

  const std::shared_ptr<Shared> shared_;
  const size_t worker_;
  const Control batch_;
  QuotaLease lease_;  // Touched only by whoever wins `called_`.
  std::atomic<bool> called_{false};
};

// One worker: the state of the subscriptions routed to it, its data queue,
// and the producer-side registry of generations.
//
// States are touched only by the worker thread (and by DropAll() after the
// thread is joined). `mu_` guards the two small tables that producers and
// CheckStalls() use from other threads.
class Worker {
 public:
  Worker(size_t index, const SpanPipelineOptions& options, std::shared_ptr<Shared> shared,
         const SpanPipeline::FailureHandler* on_failure)
      : index_(index),
        options_(options),
        shared_(std::move(shared)),
        mailbox_(shared_->mailboxes[index].get()),
        on_failure_(on_failure),
        data_(std::max<size_t>(options.queue_capacity, 1)) {}

  Status Register(SubscriptionId id, std::shared_ptr<KvConsumer> consumer, Ts start_ts)
      EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    uint64_t generation = shared_->next_generation.fetch_add(1);
    // Posted under mu_, so the worker sees one id's registrations in the
    // order the registry records them.
    Control msg{Control::Kind::kRegister, id, generation, 0, std::move(consumer), start_ts, {}};
    if (!mailbox_->Post(std::move(msg))) return Cancelled("span pipeline stopped");
    generations_[id] = generation;
    return Status::Ok();
  }

  void Unregister(SubscriptionId id) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    auto it = generations_.find(id);
    if (it == generations_.end()) return;
    mailbox_->Post(Control{Control::Kind::kUnregister, id, it->second, 0, nullptr, Ts(), {}});
    generations_.erase(it);
  }

  Result<uint64_t> Generation(SubscriptionId id) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    auto it = generations_.find(id);
    if (it != generations_.end()) return it->second;
    return NotFound("span pipeline: subscription " + std::to_string(id.value()) +
                    " not registered");
  }

  Status PushData(DataMsg&& msg, const CancelToken& token) {
    RETURN_IF_ERROR(data_.Push(std::move(msg), token));
    mailbox_->Wake();
    return Status::Ok();
  }
  void CloseDataQueue() { data_.Close(); }
  size_t QueuedData() const { return data_.size(); }
  size_t BlockedProducers() const { return data_.blocked_pushers(); }

  std::vector<SpanPipeline::Stall> CheckStalls(Clock::TimePoint now) EXCLUDES(mu_) {
    std::vector<SpanPipeline::Stall> stalls;
    MutexLock lock(&mu_);
    for (auto& [key, entry] : handed_) {
      Clock::Duration age = now - entry.handed_at;
      if (age <= options_.stall_threshold) continue;
      auto [id, generation, seq] = key;
      stalls.push_back({SubscriptionId(id), seq, age});
      if (entry.reported) continue;
      entry.reported = true;
      shared_->metrics.stalls->Inc();
      LOG_WARN("span pipeline: subscription {} batch {} not persisted after {} ms", id, seq,
               std::chrono::duration_cast<std::chrono::milliseconds>(age).count());
    }
    return stalls;
  }

  void Run(const StopToken& stop) {
    Clock* clock = options_.clock;
    Clock::TimePoint next_check = NextCheck(clock->Now());
    while (!stop.cancelled() && !shared_->stopped.load()) {
      DrainControl();
      if (std::optional<DataMsg> msg = data_.TryPop()) {
        // A register or persisted posted before this message was pushed is
        // in the control queue now; apply it first.
        DrainControl();
        HandleData(*msg);
      } else {
        mailbox_->Wait(clock, next_check, stop);
      }
      Clock::TimePoint now = clock->Now();
      if (now < next_check) continue;
      if (options_.stall_check_interval.count() > 0) CheckStalls(now);
      next_check = NextCheck(now);
    }
  }

  // After the thread is joined (or was never started): drops every queued
  // message (leases return the quota of queued batches) and every state.
  void DropAll() EXCLUDES(mu_) {
    mailbox_->control.Close();
    std::vector<Control> control;
    mailbox_->control.TryPopAll(&control);
    control.clear();
    data_.Close();
    std::vector<DataMsg> data;
    data_.TryPopAll(&data);
    data.clear();
    while (!states_.empty()) DropState(states_.begin());
    MutexLock lock(&mu_);
    generations_.clear();
  }

 private:
  struct Barrier {
    uint64_t wait_seq;
    Ts ts;
  };
  // A FIFO of barriers on a vector: empty costs nothing (a std::deque
  // allocates ~576 bytes even when empty, per idle subscription), and the
  // consumed prefix is dropped when it is at least half of the vector.
  class BarrierQueue {
   public:
    bool empty() const { return head_ == items_.size(); }
    size_t size() const { return items_.size() - head_; }
    Barrier& front() { return items_[head_]; }
    Barrier& back() { return items_.back(); }
    void push_back(Barrier b) { items_.push_back(b); }
    void pop_front() {
      ++head_;
      if (head_ == items_.size()) {
        clear();
      } else if (head_ >= 16 && head_ * 2 >= items_.size()) {
        items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
        head_ = 0;
      }
    }
    void clear() {
      items_.clear();
      head_ = 0;
    }

   private:
    std::vector<Barrier> items_;
    size_t head_ = 0;
  };
  struct State {
    uint64_t generation = 0;
    std::shared_ptr<KvConsumer> consumer;
    Ts start_ts;
    uint64_t next_seq = 1;
    std::set<uint64_t> outstanding;  // Handed, not yet persisted.
    BarrierQueue barriers;           // Increasing wait_seq and ts.
    bool published_any = false;
    Ts last_published;
    bool unregistered = false;  // Waiting for in-flight batches to drain.
    bool urgent = false;        // Last SetPersistUrgent() told the consumer.
    // Set while counted in Shared::first_pending: since when.
    std::optional<Clock::TimePoint> first_pending_since;

    // Every seq up to this one is persisted.
    uint64_t Acked() const { return outstanding.empty() ? next_seq - 1 : *outstanding.begin() - 1; }
    bool Publishable(Ts ts) const { return published_any ? ts > last_published : ts >= start_ts; }
  };
  using StateMap = std::unordered_map<SubscriptionId, State>;
  using StallKey = std::tuple<uint64_t, uint64_t, uint64_t>;  // id, generation, seq.
  struct StallEntry {
    Clock::TimePoint handed_at;
    bool reported = false;
  };

  Clock::TimePoint NextCheck(Clock::TimePoint now) const {
    bool periodic = options_.stall_check_interval.count() > 0;
    return now + (periodic ? Clock::Duration(options_.stall_check_interval) : kIdleWait);
  }

  State* Find(SubscriptionId id, uint64_t generation) {
    auto it = states_.find(id);
    if (it == states_.end() || it->second.generation != generation) return nullptr;
    return &it->second;
  }

  void DrainControl() {
    std::vector<Control> batch;
    while (mailbox_->control.TryPopAll(&batch, 256) > 0) {
      for (Control& msg : batch) HandleControl(msg);
      batch.clear();
    }
  }

  void HandleControl(Control& msg) {
    if (msg.kind == Control::Kind::kRegister) return HandleRegister(msg);
    State* state = Find(msg.id, msg.generation);
    if (state == nullptr) return;  // Old generation, failed or dropped: quota is back already.
    if (msg.kind != Control::Kind::kUnregister) return HandleDone(msg, *state);
    state->unregistered = true;
    shared_->metrics.pending_barriers.Add(-static_cast<int64_t>(state->barriers.size()));
    shared_->metrics.barriers_dropped->Add(static_cast<double>(state->barriers.size()));
    state->barriers.clear();
    ClearUrgent(*state);
    if (state->outstanding.empty()) DropState(states_.find(msg.id));
  }

  void HandleRegister(Control& msg) {
    auto old = states_.find(msg.id);
    if (old != states_.end()) {
      LOG_INFO("span pipeline: subscription {} registered again; resetting it", msg.id.value());
      DropState(old);
    }
    State& state = states_[msg.id];
    state.generation = msg.generation;
    state.consumer = std::move(msg.consumer);
    state.start_ts = msg.start_ts;
    shared_->metrics.subscriptions.Add(1);
  }

  // A persisted (or lost) signal for the current generation.
  void HandleDone(const Control& msg, State& state) {
    if (state.outstanding.erase(msg.seq) == 0) {
      return Fail(msg.id, Internal("span pipeline: persisted signal for unknown batch seq " +
                                   std::to_string(msg.seq)));
    }
    {
      MutexLock lock(&mu_);
      handed_.erase(StallKey(msg.id.value(), msg.generation, msg.seq));
    }
    if (state.unregistered) {
      if (state.outstanding.empty()) DropState(states_.find(msg.id));
    } else if (msg.kind == Control::Kind::kFailed) {
      // Nothing at or after this batch may be published: the subscription
      // fails, and its owner restarts it from the last published ts.
      // The consumer is not told: the owner decides (a restart keeps it).
      Fail(msg.id, msg.status.WithContext("persisting batch seq " + std::to_string(msg.seq)),
           /*notify_consumer=*/false);
    } else if (msg.kind == Control::Kind::kLost) {
      // The batch will never be persisted: no later barrier can be honoured.
      Fail(msg.id, Internal("consumer destroyed the persisted callback of batch seq " +
                            std::to_string(msg.seq) + " without calling it"));
    } else {
      Flush(msg.id, state);
    }
  }

  void HandleData(DataMsg& msg) {
    State* state = Find(msg.id, msg.generation);
    if (state == nullptr || state->unregistered) {
      // Unregistered, reset or failed; the lease returns the quota.
      if (msg.resolved) shared_->metrics.barriers_dropped->Inc();
    } else if (msg.resolved) {
      AddBarrier(*state, msg.ts);
      Flush(msg.id, *state);
    } else {
      Hand(msg.id, *state, msg);
    }
  }

  void Hand(SubscriptionId id, State& state, DataMsg& msg) {
    uint64_t seq = state.next_seq++;
    state.outstanding.insert(seq);
    {
      MutexLock lock(&mu_);
      handed_[StallKey(id.value(), state.generation, seq)] = StallEntry{options_.clock->Now()};
    }
    Control batch{Control::Kind::kPersisted, id, state.generation, seq, nullptr, Ts(), {}};
    auto ticket = std::make_shared<BatchTicket>(shared_, index_, batch, std::move(msg.lease));
    PersistedCallback persisted = [ticket = std::move(ticket)](const Status& status) {
      ticket->OnPersisted(status);
    };
    std::shared_ptr<KvConsumer> consumer = state.consumer;  // `state` may go in Fail().
    Status status = CallConsumer("ConsumeKvEvents", [&] {
      consumer->ConsumeKvEvents(std::move(msg.batch), std::move(persisted));
    });
    if (!status.ok()) Fail(id, status);
  }

  void AddBarrier(State& state, Ts ts) {
    uint64_t wait_seq = state.next_seq - 1;
    if (!state.Publishable(ts)) return;  // At or below what is already published.
    if (!state.barriers.empty()) {
      Barrier& last = state.barriers.back();
      if (last.wait_seq == wait_seq) {
        last.ts = std::max(last.ts, ts);
        return;
      }
      if (ts <= last.ts) return;  // Waits longer than `last` for no more: never published.
    }
    state.barriers.push_back(Barrier{wait_seq, ts});
    shared_->metrics.pending_barriers.Add(1);
  }

  // Publishes the highest ts among the barriers whose wait seq is persisted,
  // and tells the consumer whether a barrier still waits (SetPersistUrgent).
  void Flush(SubscriptionId id, State& state) {
    uint64_t acked = state.Acked();
    std::optional<Ts> ready;
    while (!state.barriers.empty() && state.barriers.front().wait_seq <= acked) {
      ready = std::max(ready.value_or(Ts()), state.barriers.front().ts);
      state.barriers.pop_front();
      shared_->metrics.pending_barriers.Add(-1);
    }
    std::shared_ptr<KvConsumer> consumer = state.consumer;  // `state` may go in Fail().
    if (Status status = SetUrgent(state, !state.barriers.empty()); !status.ok()) {
      return Fail(id, status);
    }
    if (ready.has_value() && state.Publishable(*ready)) {
      state.published_any = true;
      state.last_published = *ready;
      Status status =
          CallConsumer("AdvanceResolvedTs", [&] { consumer->AdvanceResolvedTs(*ready); });
      if (!status.ok()) return Fail(id, status);
    }
    NoteFirstPublish(state);  // After the consumer heard of it.
  }

  void Fail(SubscriptionId id, const Status& status, bool notify_consumer = true) EXCLUDES(mu_) {
    auto it = states_.find(id);
    if (it == states_.end()) return;
    LOG_WARN("span pipeline: subscription {} failed: {}", id.value(), status.ToString());
    uint64_t generation = it->second.generation;
    std::shared_ptr<KvConsumer> consumer = it->second.consumer;
    DropState(it);
    {
      MutexLock lock(&mu_);
      auto g = generations_.find(id);
      if (g != generations_.end() && g->second == generation) generations_.erase(g);
    }
    shared_->metrics.failures->Inc();
    if (notify_consumer) {
      CallConsumer("OnSubscriptionError", [&] {
        consumer->OnSubscriptionError(status);
      }).IgnoreError();
    }
    if (!*on_failure_) return;
    try {
      (*on_failure_)(id, status, /*consumer_told=*/notify_consumer);
    } catch (...) {
      LOG_ERROR("span pipeline: failure handler threw for subscription {}", id.value());
    }
  }

  // Counts the subscription in Shared::first_pending while it has never
  // published and a barrier waits (so first_pending implies urgent).
  void NoteFirstPublish(State& state) {
    bool pending = state.urgent && !state.published_any;
    if (pending == state.first_pending_since.has_value()) return;
    if (pending) {
      state.first_pending_since = options_.clock->Now();
      shared_->AddFirstPending(*state.first_pending_since);
    } else {
      shared_->RemoveFirstPending(*state.first_pending_since);
      state.first_pending_since.reset();
    }
  }

  // Tells the consumer whether a barrier waits, if that changed.
  Status SetUrgent(State& state, bool urgent) {
    if (urgent == state.urgent) return Status::Ok();
    state.urgent = urgent;
    std::shared_ptr<KvConsumer> consumer = state.consumer;
    return CallConsumer("SetPersistUrgent", [&] { consumer->SetPersistUrgent(urgent); });
  }

  // The state's barriers are gone (unregistered, reset or failed): nothing
  // waits any more.
  void ClearUrgent(State& state) {
    SetUrgent(state, false).IgnoreError();
    NoteFirstPublish(state);
  }

  void DropState(StateMap::iterator it) EXCLUDES(mu_) {
    State& state = it->second;
    ClearUrgent(state);
    shared_->metrics.pending_barriers.Add(-static_cast<int64_t>(state.barriers.size()));
    shared_->metrics.subscriptions.Add(-1);
    {
      MutexLock lock(&mu_);
      uint64_t id = it->first.value();
      handed_.erase(handed_.lower_bound(StallKey(id, state.generation, 0)),
                    handed_.upper_bound(StallKey(id, state.generation, UINT64_MAX)));
    }
    // May destroy the consumer and with it uncalled callbacks; they only
    // post to the control queue, which the worker is not holding.
    states_.erase(it);
  }

  const size_t index_;
  const SpanPipelineOptions& options_;
  const std::shared_ptr<Shared> shared_;
  Mailbox* const mailbox_;
  const SpanPipeline::FailureHandler* const on_failure_;
  BoundedMpscQueue<DataMsg> data_;
  StateMap states_;  // Worker thread only.

  Mutex mu_;
  std::unordered_map<SubscriptionId, uint64_t> generations_ GUARDED_BY(mu_);
  std::map<StallKey, StallEntry> handed_ GUARDED_BY(mu_);  // Batches awaiting persistence.
};

}  // namespace span_pipeline_internal

using span_pipeline_internal::DataMsg;
using span_pipeline_internal::Shared;
using span_pipeline_internal::Worker;

SpanPipeline::SpanPipeline(SpanPipelineOptions options, FailureHandler on_failure)
    : options_(std::move(options)), on_failure_(std::move(on_failure)) {
  size_t n = options_.num_workers > 0 ? options_.num_workers
                                      : std::max<size_t>(std::thread::hardware_concurrency(), 1);
  shared_ = std::make_shared<Shared>(options_.quota_bytes, options_.metrics, n);
  for (size_t i = 0; i < n; ++i) {
    workers_.push_back(std::make_unique<Worker>(i, options_, shared_, &on_failure_));
  }
}

SpanPipeline::~SpanPipeline() { Stop(); }

void SpanPipeline::Start() {
  MutexLock lock(&lifecycle_mu_);
  if (started_ || stopped_) return;
  started_ = true;
  for (size_t i = 0; i < workers_.size(); ++i) {
    Worker* worker = workers_[i].get();
    threads_.Start("span-pipe-" + std::to_string(i),
                   [worker](StopToken stop) { worker->Run(stop); });
  }
}

void SpanPipeline::Stop() {
  MutexLock lock(&lifecycle_mu_);
  if (stopped_) return;
  stopped_ = true;
  shared_->stopped = true;
  shared_->quota.Close();
  shared_->WakeFirstWaiters();
  for (auto& worker : workers_) worker->CloseDataQueue();
  threads_.RequestStop();
  for (auto& mailbox : shared_->mailboxes) mailbox->Wake();
  threads_.Join();
  for (auto& worker : workers_) worker->DropAll();
}

Status SpanPipeline::Register(SubscriptionId id, std::shared_ptr<KvConsumer> consumer,
                              Ts start_ts) {
  if (consumer == nullptr) return InvalidArgument("span pipeline: null consumer");
  if (shared_->stopped) return Cancelled("span pipeline stopped");
  return WorkerFor(id).Register(id, std::move(consumer), start_ts);
}

void SpanPipeline::Unregister(SubscriptionId id) { WorkerFor(id).Unregister(id); }

Status SpanPipeline::EnqueueData(SubscriptionId id, KvBatch batch, const CancelToken& token) {
  if (shared_->stopped) return Cancelled("span pipeline stopped");
  Worker& worker = WorkerFor(id);
  ASSIGN_OR_RETURN(uint64_t generation, worker.Generation(id));
  if (batch.empty()) return Status::Ok();
  uint64_t bytes = ApproximateBytes(batch);
  QuotaLease lease;
  RETURN_IF_ERROR(QuotaLease::Acquire(&shared_->quota, bytes, token, &lease));
  DataMsg msg{id, generation, false, Ts(), std::move(batch), std::move(lease)};
  // On failure `msg` keeps the lease, which returns the quota.
  return worker.PushData(std::move(msg), token);
}

bool SpanPipeline::AwaitFirstPublishes(Clock::Duration max_wait, const CancelToken& token) {
  Shared& shared = *shared_;
  CancelCallback wake(token, [&shared] { shared.WakeFirstWaiters(); });
  MutexLock lock(&shared.first_mu);
  Clock* clock = options_.clock;
  const Clock::TimePoint cap = clock->Now() + max_wait;
  ++shared.first_waiters;
  while (!shared.first_pending.empty() && !token.cancelled() && !shared.stopped.load()) {
    // A subscription holds others for max_wait from when it became pending,
    // so one that never persists stops holding anyone after that.
    Clock::TimePoint deadline = std::min(cap, *shared.first_pending.rbegin() + max_wait);
    if (clock->Now() >= deadline) break;
    clock->WaitUntil(&shared.first_cv, &shared.first_mu, deadline);
  }
  --shared.first_waiters;
  return shared.first_pending.empty();
}

Status SpanPipeline::EnqueueResolved(SubscriptionId id, Ts ts, const CancelToken& token) {
  if (shared_->stopped) return Cancelled("span pipeline stopped");
  Worker& worker = WorkerFor(id);
  Result<uint64_t> generation = worker.Generation(id);
  if (!generation.ok()) {
    shared_->metrics.barriers_dropped->Inc();
    return generation.status();
  }
  return worker.PushData(DataMsg{id, *generation, true, ts, {}, {}}, token);
}

std::vector<SpanPipeline::Stall> SpanPipeline::CheckStalls() {
  Clock::TimePoint now = options_.clock->Now();
  std::vector<Stall> stalls;
  for (auto& worker : workers_) {
    std::vector<Stall> found = worker->CheckStalls(now);
    stalls.insert(stalls.end(), found.begin(), found.end());
  }
  return stalls;
}

uint64_t SpanPipeline::InFlightBytes() const { return shared_->metrics.in_flight_bytes.Value(); }
uint64_t SpanPipeline::InFlightBatches() const {
  return shared_->metrics.in_flight_batches.Value();
}
size_t SpanPipeline::NumSubscriptions() const { return shared_->metrics.subscriptions.Value(); }
size_t SpanPipeline::PendingBarriers() const { return shared_->metrics.pending_barriers.Value(); }
uint64_t SpanPipeline::QuotaInFlight() const { return shared_->quota.InFlight(); }
size_t SpanPipeline::QuotaWaiters() const { return shared_->quota.NumWaiting(); }
size_t SpanPipeline::QueuedDataMessages() const {
  size_t total = 0;
  for (const auto& worker : workers_) total += worker->QueuedData();
  return total;
}
size_t SpanPipeline::BlockedProducers() const {
  size_t total = 0;
  for (const auto& worker : workers_) total += worker->BlockedProducers();
  return total;
}
uint64_t SpanPipeline::DuplicateCallbacks() const { return shared_->duplicate_callbacks.load(); }
size_t SpanPipeline::FirstPublishesPending() const {
  return shared_->first_pending_now.load(std::memory_order_relaxed);
}
size_t SpanPipeline::FirstPublishWaiters() const {
  MutexLock lock(&shared_->first_mu);
  return shared_->first_waiters;
}

Worker& SpanPipeline::WorkerFor(SubscriptionId id) {
  return *workers_[id.value() % workers_.size()];
}

}  // namespace sluice::logpuller
