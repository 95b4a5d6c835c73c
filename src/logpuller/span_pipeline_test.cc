#include "logpuller/span_pipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/cancel.h"
#include "common/clock.h"
#include "common/metrics.h"
#include "common/test_util.h"
#include "common/thread_annotations.h"

namespace sluice::logpuller {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr auto kWait = seconds(5);  // Bound on every wait; tests pass far sooner.
const SubscriptionId kSub(7);
const SubscriptionId kOther(8);
const SubscriptionId kProbe(1000);
const std::string kMetric = "sluice_logpuller_span_pipeline_";

// One entry whose commit ts is `marker`, with `value_bytes` of payload.
KvBatch MakeBatch(uint64_t marker, size_t value_bytes = 16) {
  RawKvEntry entry;
  entry.key = std::to_string(marker);
  entry.value = std::string(value_bytes, 'v');
  entry.start_ts = Ts(marker);
  entry.commit_ts = Ts(marker);
  return {entry};
}

// Records every call; the test completes persisted callbacks when it likes,
// from any thread. `violations` counts publishes that go backwards or, with
// check_barrier_, come while a received batch whose marker (commit ts) is
// <= ts is not yet persisted.
class FakeConsumer : public KvConsumer {
 public:
  struct Record {
    std::vector<KvBatch> batches;
    std::vector<Ts> resolved;
    std::vector<bool> urgent;  // Each SetPersistUrgent() call.
    std::vector<Status> errors;
    uint64_t violations = 0;
  };

  void ConsumeKvEvents(KvBatch batch, PersistedCallback persisted) override {
    if (gate_ != nullptr) {
      entered_.Notify();
      gate_->WaitFor(kWait);
    }
    if (throw_on_consume_) throw std::runtime_error("consume failed");
    size_t index;
    {
      MutexLock lock(&mu_);
      index = record_.batches.size();
      record_.batches.push_back(std::move(batch));
      callbacks_.push_back(std::move(persisted));
    }
    if (on_batch_) on_batch_(index);
  }

  void AdvanceResolvedTs(Ts ts) override {
    {
      MutexLock lock(&mu_);
      if (!record_.resolved.empty() && ts <= record_.resolved.back()) ++record_.violations;
      for (size_t i = 0; check_barrier_ && i < record_.batches.size(); ++i) {
        bool covered = record_.batches[i].at(0).commit_ts <= ts;
        if (covered && persisted_.count(i) == 0) ++record_.violations;
      }
      record_.resolved.push_back(ts);
    }
    if (throw_on_resolved_) throw std::runtime_error("advance failed");
  }

  void SetPersistUrgent(bool urgent) override {
    MutexLock lock(&mu_);
    record_.urgent.push_back(urgent);
  }

  void OnSubscriptionError(const Status& status) override {
    MutexLock lock(&mu_);
    record_.errors.push_back(status);
  }

  // Calls the persisted callback of the i-th batch received (a copy, so a
  // test can call it twice like a buggy consumer).
  void Persist(size_t i) {
    PersistedCallback callback;
    {
      MutexLock lock(&mu_);
      callback = callbacks_.at(i);
      persisted_.insert(i);
    }
    callback();
  }
  void ForgetCallbacks() {
    MutexLock lock(&mu_);
    callbacks_.clear();
  }

  Record Get() {
    MutexLock lock(&mu_);
    return record_;
  }
  bool WaitForBatches(size_t n) {
    return PollUntil([&] { return Get().batches.size() >= n; }, kWait);
  }
  bool WaitForResolved(size_t n) {
    return PollUntil([&] { return Get().resolved.size() >= n; }, kWait);
  }

  // Set before the consumer is registered.
  Notification* gate_ = nullptr;  // ConsumeKvEvents waits on it.
  Notification entered_;          // ConsumeKvEvents reached the gate.
  bool throw_on_consume_ = false;
  bool throw_on_resolved_ = false;
  bool check_barrier_ = false;
  std::function<void(size_t)> on_batch_;  // Called with each new batch's index.

 private:
  Mutex mu_;
  Record record_ GUARDED_BY(mu_);
  std::vector<PersistedCallback> callbacks_ GUARDED_BY(mu_);
  std::set<size_t> persisted_ GUARDED_BY(mu_);  // Batch indexes.
};

class SpanPipelineTest : public ::testing::Test {
 protected:
  SpanPipelineOptions Options() {
    SpanPipelineOptions options;
    options.num_workers = 1;
    options.queue_capacity = 64;
    options.quota_bytes = 1 << 20;
    options.stall_check_interval = milliseconds(0);
    options.clock = &clock_;
    options.metrics = &registry_;
    return options;
  }

  // Starts a pipeline with a probe subscription used by Sync().
  void Start(SpanPipelineOptions options) {
    pipeline_ = std::make_unique<SpanPipeline>(options, [this](SubscriptionId id, const Status& s) {
      MutexLock lock(&failures_mu_);
      failures_.emplace_back(id, s);
    });
    pipeline_->Start();
    ASSERT_TRUE(pipeline_->Register(kProbe, probe_, Ts(0)).ok());
  }
  void Start() { Start(Options()); }

  // Starts a pipeline with one-message queues and a 1 KiB quota, and parks
  // its worker inside kSub's consumer (batch 1) with batch 2 filling the queue.
  std::shared_ptr<FakeConsumer> StartWithBlockedWorker(Notification* gate) {
    SpanPipelineOptions options = Options();
    options.queue_capacity = 1;
    options.quota_bytes = 1024;
    Start(options);
    auto c = Register(kSub, Ts(10));
    c->gate_ = gate;
    EXPECT_TRUE(Data(kSub, 1).ok());
    EXPECT_TRUE(c->entered_.WaitFor(kWait));
    EXPECT_TRUE(Data(kSub, 2).ok());
    EXPECT_EQ(pipeline_->QueuedDataMessages(), 1u);
    return c;
  }

  std::shared_ptr<FakeConsumer> Register(SubscriptionId id, Ts start_ts) {
    auto consumer = std::make_shared<FakeConsumer>();
    EXPECT_TRUE(pipeline_->Register(id, consumer, start_ts).ok());
    return consumer;
  }
  Status Data(SubscriptionId id, uint64_t marker, size_t value_bytes = 16) {
    return pipeline_->EnqueueData(id, MakeBatch(marker, value_bytes));
  }
  Status Resolved(SubscriptionId id, uint64_t ts) { return pipeline_->EnqueueResolved(id, Ts(ts)); }

  // Returns once the worker has handled every message posted before the
  // call (single worker: the probe's resolved is behind them in the data
  // queue, and the worker empties the control queue before handling it).
  void Sync() {
    ++probe_ts_;
    ASSERT_TRUE(pipeline_->EnqueueResolved(kProbe, Ts(probe_ts_)).ok());
    ASSERT_TRUE(probe_->WaitForResolved(probe_ts_));
  }

  size_t Subscriptions() { return pipeline_->NumSubscriptions() - 1; }  // Without the probe.
  std::vector<std::pair<SubscriptionId, Status>> Failures() {
    MutexLock lock(&failures_mu_);
    return failures_;
  }
  double Counter(const std::string& name) {
    return registry_.AddCounter(kMetric + name, "")->Value();
  }
  double Gauge(const std::string& name) { return registry_.AddGauge(kMetric + name, "")->Value(); }

  ManualClock clock_;
  Registry registry_;
  std::shared_ptr<FakeConsumer> probe_ = std::make_shared<FakeConsumer>();
  uint64_t probe_ts_ = 0;
  Mutex failures_mu_;
  std::vector<std::pair<SubscriptionId, Status>> failures_ GUARDED_BY(failures_mu_);
  std::unique_ptr<SpanPipeline> pipeline_;  // Last: destroyed before the clock.
};

TEST_F(SpanPipelineTest, InOrderAcksPublishOnlyAfterEveryEarlierBatch) {
  Start();
  auto c = Register(kSub, Ts(10));
  for (uint64_t i = 1; i <= 3; ++i) ASSERT_TRUE(Data(kSub, i).ok());
  ASSERT_TRUE(Resolved(kSub, 100).ok());
  ASSERT_TRUE(Data(kSub, 4).ok());  // After the resolved: not waited for.
  ASSERT_TRUE(c->WaitForBatches(4));
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(c->Get().batches[i].at(0).commit_ts, Ts(i + 1));
  Sync();
  EXPECT_TRUE(c->Get().resolved.empty());
  EXPECT_EQ(pipeline_->PendingBarriers(), 1u);
  EXPECT_EQ(pipeline_->InFlightBatches(), 4u);
  EXPECT_EQ(Gauge("inflight_batches"), 4);

  c->Persist(0);
  c->Persist(1);
  Sync();
  EXPECT_TRUE(c->Get().resolved.empty());
  c->Persist(2);
  ASSERT_TRUE(c->WaitForResolved(1));
  EXPECT_EQ(c->Get().resolved, std::vector<Ts>{Ts(100)});
  EXPECT_EQ(pipeline_->PendingBarriers(), 0u);
  EXPECT_EQ(pipeline_->InFlightBatches(), 1u);
  c->Persist(3);
  EXPECT_EQ(pipeline_->InFlightBytes(), 0u);
  EXPECT_EQ(pipeline_->QuotaInFlight(), 0u);
  EXPECT_EQ(Gauge("inflight_bytes"), 0);
}

TEST_F(SpanPipelineTest, ConsumerIsUrgentExactlyWhileABarrierWaits) {
  Start();
  auto c = Register(kSub, Ts(10));
  ASSERT_TRUE(Data(kSub, 1).ok());
  ASSERT_TRUE(Data(kSub, 2).ok());
  Sync();
  EXPECT_TRUE(c->Get().urgent.empty());  // Batches alone: nobody waits.

  ASSERT_TRUE(Resolved(kSub, 100).ok());
  Sync();
  EXPECT_EQ(c->Get().urgent, std::vector<bool>{true});
  c->Persist(0);
  Sync();
  EXPECT_EQ(c->Get().urgent, std::vector<bool>{true});  // Batch 2 still waited for.
  c->Persist(1);
  ASSERT_TRUE(c->WaitForResolved(1));
  Sync();
  EXPECT_EQ(c->Get().urgent, (std::vector<bool>{true, false}));

  // A barrier with nothing in flight is published at once: never urgent.
  ASSERT_TRUE(Resolved(kSub, 200).ok());
  ASSERT_TRUE(c->WaitForResolved(2));
  Sync();
  EXPECT_EQ(c->Get().urgent, (std::vector<bool>{true, false}));

  // Urgent again for the next waiting barrier; a second barrier keeps it so.
  ASSERT_TRUE(Data(kSub, 3).ok());
  ASSERT_TRUE(Resolved(kSub, 300).ok());
  ASSERT_TRUE(Data(kSub, 4).ok());
  ASSERT_TRUE(Resolved(kSub, 400).ok());
  Sync();
  EXPECT_EQ(c->Get().urgent, (std::vector<bool>{true, false, true}));
  c->Persist(2);
  ASSERT_TRUE(c->WaitForResolved(3));
  Sync();
  EXPECT_EQ(c->Get().urgent, (std::vector<bool>{true, false, true}));
  c->Persist(3);
  ASSERT_TRUE(c->WaitForResolved(4));
  Sync();
  EXPECT_EQ(c->Get().urgent, (std::vector<bool>{true, false, true, false}));
  EXPECT_EQ(c->Get().resolved, (std::vector<Ts>{Ts(100), Ts(200), Ts(300), Ts(400)}));
}

// AwaitFirstPublishes() on a thread of its own. Join() waits (real time,
// bounded) for it to return; if it has not, the test fails and the clock
// moves past every deadline so that the thread can be joined.
class Awaiter {
 public:
  Awaiter(SpanPipeline* pipeline, Clock::Duration max_wait, CancelToken token = {})
      : thread_([this, pipeline, max_wait, token] {
          result_ = pipeline->AwaitFirstPublishes(max_wait, token) ? 1 : 0;
          done_.Notify();
        }) {}
  ~Awaiter() {
    if (thread_.joinable()) thread_.join();
  }
  bool returned() const { return done_.HasBeenNotified(); }
  // 1: nothing pending on return; 0: it gave up.
  int Join(ManualClock* clock) {
    bool returned = done_.WaitFor(kWait);
    if (!returned) clock->Advance(std::chrono::hours(48));
    thread_.join();
    EXPECT_TRUE(returned) << "AwaitFirstPublishes did not return";
    return result_.load();
  }

 private:
  Notification done_;
  std::atomic<int> result_{-1};
  std::thread thread_;  // Last: starts once the rest is built.
};

// A first publish is pending while a subscription that never published has a
// barrier waiting; AwaitFirstPublishes() returns once the consumer has heard
// of that publish.
TEST_F(SpanPipelineTest, AwaitFirstPublishesReturnsOnceTheFirstResolvedTsIsPublished) {
  Start();
  auto c = Register(kSub, Ts(10));
  EXPECT_TRUE(pipeline_->AwaitFirstPublishes(seconds(0)));  // Nothing pending.
  ASSERT_TRUE(Data(kSub, 1).ok());
  Sync();
  EXPECT_EQ(pipeline_->FirstPublishesPending(), 0u);  // A batch alone: nobody waits.
  ASSERT_TRUE(Resolved(kSub, 100).ok());
  Sync();
  EXPECT_EQ(pipeline_->FirstPublishesPending(), 1u);

  std::atomic<size_t> resolved_on_return{99};
  Notification returned;
  std::thread waiter([&] {
    pipeline_->AwaitFirstPublishes(std::chrono::hours(1));
    resolved_on_return = c->Get().resolved.size();
    returned.Notify();
  });
  ASSERT_TRUE(PollUntil([&] { return pipeline_->FirstPublishWaiters() == 1; }, kWait));
  c->Persist(0);
  bool in_time = returned.WaitFor(kWait);
  if (!in_time) clock_.Advance(std::chrono::hours(2));
  waiter.join();
  ASSERT_TRUE(in_time);
  EXPECT_EQ(resolved_on_return, 1u);
  EXPECT_EQ(pipeline_->FirstPublishesPending(), 0u);
  EXPECT_EQ(pipeline_->FirstPublishWaiters(), 0u);

  // Later barriers make the consumer urgent, but they are not first publishes.
  ASSERT_TRUE(Data(kSub, 2).ok());
  ASSERT_TRUE(Resolved(kSub, 200).ok());
  Sync();
  EXPECT_EQ(pipeline_->PendingBarriers(), 1u);
  EXPECT_EQ(pipeline_->FirstPublishesPending(), 0u);
  EXPECT_TRUE(pipeline_->AwaitFirstPublishes(std::chrono::hours(1)));
  c->Persist(1);
}

// Each wait is bounded on the pipeline's clock, and a subscription holds
// waiters for at most that long from when it became pending.
TEST_F(SpanPipelineTest, AwaitFirstPublishesIsBoundedPerPendingSubscription) {
  Start();
  auto waiting = [&] { return pipeline_->FirstPublishWaiters() == 1; };
  auto a = Register(kSub, Ts(10));
  ASSERT_TRUE(Data(kSub, 1).ok());
  ASSERT_TRUE(Resolved(kSub, 100).ok());
  Sync();  // kSub pending since t0.
  {
    Awaiter timed(pipeline_.get(), milliseconds(100));
    ASSERT_TRUE(PollUntil(waiting, kWait));
    clock_.Advance(milliseconds(99));
    EXPECT_FALSE(timed.returned());
    clock_.Advance(milliseconds(1));
    EXPECT_EQ(timed.Join(&clock_), 0);
  }
  // At t0 + 100: kSub holds no one for 100 ms any more, and for 150 ms only
  // until t0 + 150, not for 150 ms from the call.
  EXPECT_FALSE(pipeline_->AwaitFirstPublishes(milliseconds(100)));
  {
    Awaiter longer(pipeline_.get(), milliseconds(150));
    ASSERT_TRUE(PollUntil(waiting, kWait));
    clock_.Advance(milliseconds(50));
    EXPECT_EQ(longer.Join(&clock_), 0);
  }
  // A subscription pending since t0 + 150 holds a new waiter until both
  // have published.
  auto b = Register(kOther, Ts(10));
  ASSERT_TRUE(Data(kOther, 1).ok());
  ASSERT_TRUE(Resolved(kOther, 100).ok());
  Sync();
  EXPECT_EQ(pipeline_->FirstPublishesPending(), 2u);
  Awaiter both(pipeline_.get(), milliseconds(100));
  ASSERT_TRUE(PollUntil(waiting, kWait));
  clock_.Advance(milliseconds(99));
  a->Persist(0);
  ASSERT_TRUE(a->WaitForResolved(1));
  Sync();
  EXPECT_EQ(pipeline_->FirstPublishesPending(), 1u);
  EXPECT_FALSE(both.returned());
  b->Persist(0);
  EXPECT_EQ(both.Join(&clock_), 1);
}

TEST_F(SpanPipelineTest, AwaitFirstPublishesEndsOnCancelResetUnregisterAndStop) {
  Start();
  auto pend = [&](SubscriptionId id) {
    auto c = Register(id, Ts(10));
    EXPECT_TRUE(Data(id, 1).ok());
    EXPECT_TRUE(Resolved(id, 100).ok());
    Sync();
    return c;
  };
  auto a = pend(kSub);
  EXPECT_EQ(pipeline_->FirstPublishesPending(), 1u);
  {
    CancelSource cancel;
    Awaiter cancellable(pipeline_.get(), std::chrono::hours(1), cancel.token());
    ASSERT_TRUE(PollUntil([&] { return pipeline_->FirstPublishWaiters() == 1; }, kWait));
    cancel.Cancel();
    EXPECT_EQ(cancellable.Join(&clock_), 0);
  }
  {
    // Registering the id again resets it: its old barrier no longer waits.
    Awaiter reset(pipeline_.get(), std::chrono::hours(1));
    ASSERT_TRUE(PollUntil([&] { return pipeline_->FirstPublishWaiters() == 1; }, kWait));
    auto fresh = Register(kSub, Ts(10));
    EXPECT_EQ(reset.Join(&clock_), 1);
    a->Persist(0);
  }
  {
    auto b = pend(kOther);
    Awaiter unregistered(pipeline_.get(), std::chrono::hours(1));
    ASSERT_TRUE(PollUntil([&] { return pipeline_->FirstPublishWaiters() == 1; }, kWait));
    pipeline_->Unregister(kOther);
    EXPECT_EQ(unregistered.Join(&clock_), 1);
    b->Persist(0);
  }
  auto c = pend(SubscriptionId(9));
  EXPECT_EQ(pipeline_->FirstPublishesPending(), 1u);
  {
    Awaiter stopped(pipeline_.get(), std::chrono::hours(1));
    ASSERT_TRUE(PollUntil([&] { return pipeline_->FirstPublishWaiters() == 1; }, kWait));
    pipeline_->Stop();
    stopped.Join(&clock_);
  }
  EXPECT_EQ(pipeline_->FirstPublishesPending(), 0u);  // Stop dropped every state.
  c->Persist(0);
}

TEST_F(SpanPipelineTest, OutOfOrderAcksPublishEachBarrierWhenItsPrefixIsPersisted) {
  Start();
  auto a = Register(kSub, Ts(10));
  auto b = Register(kOther, Ts(10));
  for (const SubscriptionId id : {kSub, kOther}) {
    ASSERT_TRUE(Data(id, 1).ok());
    ASSERT_TRUE(Data(id, 2).ok());
    ASSERT_TRUE(Resolved(id, 100).ok());
    ASSERT_TRUE(Data(id, 3).ok());
    ASSERT_TRUE(Resolved(id, 200).ok());
  }
  ASSERT_TRUE(a->WaitForBatches(3));
  ASSERT_TRUE(b->WaitForBatches(3));

  a->Persist(1);  // seq 2 before seq 1: nothing yet.
  Sync();
  EXPECT_TRUE(a->Get().resolved.empty());
  a->Persist(0);  // seqs 1-2 persisted: the barrier waiting for seq 2 goes.
  ASSERT_TRUE(a->WaitForResolved(1));
  a->Persist(2);
  ASSERT_TRUE(a->WaitForResolved(2));
  EXPECT_EQ(a->Get().resolved, (std::vector<Ts>{Ts(100), Ts(200)}));

  b->Persist(2);
  b->Persist(1);
  Sync();
  EXPECT_TRUE(b->Get().resolved.empty());
  b->Persist(0);  // Both barriers are ready at once: only the max is published.
  ASSERT_TRUE(b->WaitForResolved(1));
  Sync();
  EXPECT_EQ(b->Get().resolved, std::vector<Ts>{Ts(200)});
  EXPECT_EQ(pipeline_->QuotaInFlight(), 0u);
}

TEST_F(SpanPipelineTest, BarriersWithTheSameWaitSeqMergeToTheMaxTs) {
  Start();
  auto c = Register(kSub, Ts(10));
  ASSERT_TRUE(Data(kSub, 1).ok());
  for (uint64_t ts : {100, 150, 120}) ASSERT_TRUE(Resolved(kSub, ts).ok());
  Sync();
  EXPECT_EQ(pipeline_->PendingBarriers(), 1u);
  EXPECT_EQ(Gauge("pending_resolved_barriers"), 1);
  c->Persist(0);
  ASSERT_TRUE(c->WaitForResolved(1));
  ASSERT_TRUE(Resolved(kSub, 150).ok());  // No progress: not published again.
  ASSERT_TRUE(Resolved(kSub, 160).ok());
  ASSERT_TRUE(c->WaitForResolved(2));
  Sync();
  EXPECT_EQ(c->Get().resolved, (std::vector<Ts>{Ts(150), Ts(160)}));
  EXPECT_EQ(pipeline_->PendingBarriers(), 0u);
}

TEST_F(SpanPipelineTest, ResolvedWithNothingOutstandingIsPublishedAtOnce) {
  Start();
  auto c = Register(kSub, Ts(50));
  ASSERT_TRUE(Resolved(kSub, 100).ok());
  ASSERT_TRUE(c->WaitForResolved(1));
  ASSERT_TRUE(Data(kSub, 1).ok());
  ASSERT_TRUE(c->WaitForBatches(1));
  c->Persist(0);
  ASSERT_TRUE(Resolved(kSub, 200).ok());
  ASSERT_TRUE(c->WaitForResolved(2));
  EXPECT_EQ(c->Get().resolved, (std::vector<Ts>{Ts(100), Ts(200)}));
}

TEST_F(SpanPipelineTest, FirstResolvedEqualToStartTsIsPublishedExactlyOnce) {
  Start();
  auto c = Register(kSub, Ts(100));
  for (uint64_t ts : {90, 100, 100, 100, 101}) ASSERT_TRUE(Resolved(kSub, ts).ok());
  ASSERT_TRUE(c->WaitForResolved(2));
  Sync();
  EXPECT_EQ(c->Get().resolved, (std::vector<Ts>{Ts(100), Ts(101)}));
}

TEST_F(SpanPipelineTest, CallbacksAfterStopAndAfterDestructionOnlyReleaseQuota) {
  Start();
  auto c = Register(kSub, Ts(10));
  ASSERT_TRUE(Data(kSub, 1).ok());
  ASSERT_TRUE(Data(kSub, 2).ok());
  ASSERT_TRUE(Resolved(kSub, 100).ok());
  ASSERT_TRUE(c->WaitForBatches(2));
  pipeline_->Stop();
  const uint64_t batch_bytes = ApproximateBytes(MakeBatch(1));
  EXPECT_EQ(pipeline_->QuotaInFlight(), 2 * batch_bytes);
  EXPECT_EQ(pipeline_->NumSubscriptions(), 0u);
  EXPECT_EQ(Data(kSub, 3).code(), Code::kCancelled);
  EXPECT_EQ(Resolved(kSub, 200).code(), Code::kCancelled);
  EXPECT_EQ(pipeline_->Register(kOther, c, Ts(1)).code(), Code::kCancelled);
  pipeline_->Stop();  // Idempotent.

  c->Persist(1);
  EXPECT_EQ(pipeline_->QuotaInFlight(), batch_bytes);
  EXPECT_EQ(pipeline_->InFlightBatches(), 1u);
  pipeline_.reset();
  EXPECT_EQ(Gauge("inflight_bytes"), batch_bytes);
  c->Persist(0);  // The pipeline is gone; the callback must still be safe.
  EXPECT_EQ(Gauge("inflight_bytes"), 0);
  EXPECT_EQ(Gauge("active_subscriptions"), 0);
  EXPECT_TRUE(c->Get().resolved.empty());
}

TEST_F(SpanPipelineTest, StopCancelsProducersBlockedOnTheQueueAndOnTheQuota) {
  Notification gate;
  auto c = StartWithBlockedWorker(&gate);
  Status on_queue, on_quota;
  Notification queue_done, quota_done;
  std::thread queue_producer([&] {
    on_queue = Data(kSub, 3);
    queue_done.Notify();
  });
  // Batch 3 holds its quota while it waits for queue space; batch 4 cannot fit.
  const uint64_t batch_bytes = ApproximateBytes(MakeBatch(1));
  ASSERT_TRUE(PollUntil([&] { return pipeline_->QuotaInFlight() == 3 * batch_bytes; }));
  std::thread quota_producer([&] {
    on_quota = Data(kSub, 4, 900);
    quota_done.Notify();
  });
  ASSERT_TRUE(PollUntil([&] { return pipeline_->QuotaWaiters() == 1; }));
  EXPECT_FALSE(queue_done.WaitFor(milliseconds(20)));
  std::thread stopper([&] { pipeline_->Stop(); });  // Joins the worker once the gate opens.
  EXPECT_TRUE(queue_done.WaitFor(kWait));           // Both return while the worker is busy.
  EXPECT_TRUE(quota_done.WaitFor(kWait));
  EXPECT_EQ(on_queue.code(), Code::kCancelled);
  EXPECT_EQ(on_quota.code(), Code::kCancelled);
  gate.Notify();
  for (std::thread* t : {&stopper, &queue_producer, &quota_producer}) t->join();
  // Batch 2 may have been handed over before the worker saw the stop.
  for (size_t i = 0; i < c->Get().batches.size(); ++i) c->Persist(i);
  EXPECT_EQ(pipeline_->QuotaInFlight(), 0u);
}

TEST_F(SpanPipelineTest, UnregisterReturnsWhileTheWorkerQueueIsFullAndAProducerIsBlocked) {
  Notification gate;
  auto c = StartWithBlockedWorker(&gate);
  Status status;
  Notification producer_done, unregistered;
  std::thread producer([&] {
    status = Data(kSub, 3);
    producer_done.Notify();
  });
  EXPECT_FALSE(producer_done.WaitFor(milliseconds(20)));  // Blocked on the full queue.
  std::thread unregister([&] {
    pipeline_->Unregister(kSub);
    unregistered.Notify();
  });
  EXPECT_TRUE(unregistered.WaitFor(kWait));
  gate.Notify();
  unregister.join();
  producer.join();
  EXPECT_TRUE(status.ok());  // Queued, then dropped by the worker.
  Sync();
  EXPECT_EQ(c->Get().batches.size(), 1u);  // Batches 2 and 3 were dropped.
  EXPECT_EQ(Subscriptions(), 1u);          // Batch 1 is still in flight.
  c->Persist(0);
  Sync();
  EXPECT_EQ(Subscriptions(), 0u);
  EXPECT_EQ(pipeline_->QuotaInFlight(), 0u);
}

TEST_F(SpanPipelineTest, UnregisterWithInFlightBatchesKeepsStateUntilTheyArePersisted) {
  Start();
  auto c = Register(kSub, Ts(10));
  ASSERT_TRUE(Data(kSub, 1).ok());
  ASSERT_TRUE(Data(kSub, 2).ok());
  ASSERT_TRUE(Resolved(kSub, 100).ok());
  ASSERT_TRUE(c->WaitForBatches(2));
  pipeline_->Unregister(kSub);
  pipeline_->Unregister(kSub);  // Unknown now: no-op.
  Sync();
  EXPECT_EQ(Subscriptions(), 1u);
  EXPECT_EQ(pipeline_->PendingBarriers(), 0u);
  EXPECT_EQ(Counter("resolved_barrier_dropped_total"), 1);
  EXPECT_EQ(Resolved(kSub, 200).code(), Code::kNotFound);
  EXPECT_EQ(Counter("resolved_barrier_dropped_total"), 2);
  EXPECT_EQ(Data(kSub, 3).code(), Code::kNotFound);

  c->Persist(1);
  c->Persist(0);
  Sync();
  EXPECT_EQ(Subscriptions(), 0u);
  EXPECT_EQ(Gauge("active_subscriptions"), 1);  // The probe.
  EXPECT_TRUE(c->Get().resolved.empty());
  EXPECT_EQ(pipeline_->QuotaInFlight(), 0u);
}

TEST_F(SpanPipelineTest, ReRegisterStartsAFreshGeneration) {
  Start();
  auto old_consumer = Register(kSub, Ts(10));
  ASSERT_TRUE(Data(kSub, 1).ok());
  ASSERT_TRUE(Resolved(kSub, 50).ok());
  ASSERT_TRUE(old_consumer->WaitForBatches(1));

  auto new_consumer = Register(kSub, Ts(20));
  ASSERT_TRUE(Data(kSub, 2).ok());  // seq 1 of the new generation.
  ASSERT_TRUE(Resolved(kSub, 60).ok());
  Sync();
  EXPECT_EQ(new_consumer->Get().batches.size(), 1u);
  EXPECT_EQ(Subscriptions(), 1u);
  EXPECT_EQ(pipeline_->PendingBarriers(), 1u);

  old_consumer->Persist(0);  // Old seq 1 must not count as the new seq 1.
  Sync();
  EXPECT_TRUE(new_consumer->Get().resolved.empty());
  EXPECT_TRUE(old_consumer->Get().resolved.empty());
  new_consumer->Persist(0);
  ASSERT_TRUE(new_consumer->WaitForResolved(1));
  EXPECT_EQ(new_consumer->Get().resolved, std::vector<Ts>{Ts(60)});
  EXPECT_EQ(pipeline_->QuotaInFlight(), 0u);
  EXPECT_EQ(pipeline_->InFlightBatches(), 0u);
}

TEST_F(SpanPipelineTest, ThrowingConsumerFailsOnlyItsSubscription) {
  Start();
  const SubscriptionId kThird(9);
  auto bad = Register(kSub, Ts(10));
  bad->throw_on_consume_ = true;
  auto bad_resolved = Register(kThird, Ts(10));
  bad_resolved->throw_on_resolved_ = true;
  auto good = Register(kOther, Ts(10));
  ASSERT_TRUE(Data(kSub, 1).ok());
  ASSERT_TRUE(Resolved(kThird, 100).ok());
  ASSERT_TRUE(Data(kOther, 2).ok());
  ASSERT_TRUE(Resolved(kOther, 100).ok());
  ASSERT_TRUE(good->WaitForBatches(1));
  good->Persist(0);
  ASSERT_TRUE(good->WaitForResolved(1));
  Sync();

  auto failures = Failures();
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_EQ(failures[0].first, kSub);
  EXPECT_EQ(failures[0].second.code(), Code::kInternal);
  EXPECT_EQ(failures[1].first, kThird);
  EXPECT_EQ(failures[1].second.code(), Code::kInternal);
  ASSERT_EQ(bad->Get().errors.size(), 1u);
  EXPECT_EQ(bad->Get().errors[0].code(), Code::kInternal);
  EXPECT_EQ(Data(kSub, 3).code(), Code::kNotFound);
  EXPECT_EQ(Subscriptions(), 1u);
  EXPECT_EQ(pipeline_->QuotaInFlight(), 0u);  // The thrown-away callback released its bytes.
  EXPECT_EQ(Counter("subscription_failures_total"), 2);
}

TEST_F(SpanPipelineTest, CallbackCalledTwiceOrNeverIsContained) {
  Start();
  auto c = Register(kSub, Ts(10));
  ASSERT_TRUE(Data(kSub, 1).ok());
  ASSERT_TRUE(Data(kSub, 2).ok());
  ASSERT_TRUE(Data(kSub, 3).ok());
  ASSERT_TRUE(c->WaitForBatches(3));
  c->Persist(0);
  c->Persist(0);  // Counted and ignored: released once.
  EXPECT_EQ(pipeline_->DuplicateCallbacks(), 1u);
  EXPECT_EQ(Counter("duplicate_callbacks_total"), 1);
  EXPECT_EQ(pipeline_->QuotaInFlight(), 2 * ApproximateBytes(MakeBatch(2)));
  ASSERT_TRUE(Resolved(kSub, 100).ok());
  Sync();
  EXPECT_TRUE(c->Get().resolved.empty());  // Batches 2 and 3 are outstanding.
  EXPECT_TRUE(Failures().empty());

  c->Persist(1);
  c->ForgetCallbacks();  // Batch 3's callback is destroyed uncalled.
  EXPECT_EQ(pipeline_->QuotaInFlight(), 0u);
  Sync();
  ASSERT_EQ(Failures().size(), 1u);  // Its barrier can never be honoured.
  EXPECT_EQ(Failures()[0].first, kSub);
  EXPECT_EQ(Subscriptions(), 0u);
  EXPECT_TRUE(c->Get().resolved.empty());
}

TEST_F(SpanPipelineTest, OversizeBatchIsAdmittedWholeOnceNothingElseIsInFlight) {
  SpanPipelineOptions options = Options();
  options.quota_bytes = 1024;
  Start(options);
  auto c = Register(kSub, Ts(10));
  ASSERT_TRUE(Data(kSub, 1, 100).ok());
  ASSERT_TRUE(c->WaitForBatches(1));
  Status status;
  std::thread producer([&] { status = Data(kSub, 2, 10240); });
  ASSERT_TRUE(PollUntil([&] { return pipeline_->QuotaWaiters() == 1; }));
  c->Persist(0);
  producer.join();
  ASSERT_TRUE(status.ok());
  ASSERT_TRUE(Resolved(kSub, 100).ok());
  ASSERT_TRUE(c->WaitForBatches(2));
  EXPECT_EQ(pipeline_->QuotaInFlight(), ApproximateBytes(MakeBatch(2, 10240)));
  c->Persist(1);
  ASSERT_TRUE(c->WaitForResolved(1));
  EXPECT_EQ(pipeline_->QuotaInFlight(), 0u);
}

TEST_F(SpanPipelineTest, CheckStallsReportsABatchOutstandingPastTheThreshold) {
  SpanPipelineOptions options = Options();
  options.stall_threshold = seconds(60);
  options.stall_check_interval = seconds(5);  // The worker checks too; each stall counts once.
  Start(options);
  auto c = Register(kSub, Ts(10));
  ASSERT_TRUE(Data(kSub, 1).ok());
  ASSERT_TRUE(c->WaitForBatches(1));
  EXPECT_TRUE(pipeline_->CheckStalls().empty());
  clock_.Advance(seconds(30));
  EXPECT_TRUE(pipeline_->CheckStalls().empty());
  clock_.Advance(seconds(31));
  std::vector<SpanPipeline::Stall> stalls = pipeline_->CheckStalls();
  ASSERT_EQ(stalls.size(), 1u);
  EXPECT_EQ(stalls[0].id, kSub);
  EXPECT_EQ(stalls[0].seq, 1u);
  EXPECT_EQ(stalls[0].age, seconds(61));
  EXPECT_EQ(pipeline_->CheckStalls().size(), 1u);
  EXPECT_EQ(Counter("stalls_total"), 1);
  c->Persist(0);
  Sync();
  EXPECT_TRUE(pipeline_->CheckStalls().empty());
}

TEST_F(SpanPipelineTest, ConcurrentProducersKeepTheBarrierForEveryPublish) {
  constexpr int kProducers = 4;
  constexpr int kSubsPerProducer = 4;
  constexpr uint64_t kBatches = 150;  // Batch k of a subscription has marker k.
  SpanPipelineOptions options = Options();
  options.num_workers = 3;
  options.queue_capacity = 8;
  options.quota_bytes = 4096;
  Start(options);

  // Batches received by every consumer, persisted in random order by one thread.
  Mutex pool_mu;
  std::vector<std::pair<FakeConsumer*, size_t>> pool;  // Guarded by pool_mu.
  std::atomic<bool> done{false};
  std::vector<std::shared_ptr<FakeConsumer>> consumers;
  for (int i = 0; i < kProducers * kSubsPerProducer; ++i) {
    auto c = std::make_shared<FakeConsumer>();
    c->check_barrier_ = true;
    c->on_batch_ = [&pool_mu, &pool, raw = c.get()](size_t index) {
      MutexLock lock(&pool_mu);
      pool.emplace_back(raw, index);
    };
    ASSERT_TRUE(pipeline_->Register(SubscriptionId(i), c, Ts(0)).ok());
    consumers.push_back(std::move(c));
  }
  std::thread completer([&] {
    std::mt19937_64 rng(42);
    while (true) {
      std::pair<FakeConsumer*, size_t> next{nullptr, 0};
      {
        MutexLock lock(&pool_mu);
        if (!pool.empty()) {
          std::swap(pool[rng() % pool.size()], pool.back());
          next = pool.back();
          pool.pop_back();
        }
      }
      if (next.first != nullptr) {
        next.first->Persist(next.second);
      } else if (done) {
        return;
      } else {
        std::this_thread::yield();
      }
    }
  });

  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      std::mt19937_64 rng(p);
      for (uint64_t k = 1; k <= kBatches + 1; ++k) {
        for (int s = 0; s < kSubsPerProducer; ++s) {
          SubscriptionId id(p * kSubsPerProducer + s);
          EXPECT_TRUE(k > kBatches || Data(id, k, rng() % 200).ok());
          bool resolve = k > kBatches || rng() % 3 == 0;
          EXPECT_TRUE(!resolve || Resolved(id, std::min(k, kBatches)).ok());
        }
      }
    });
  }
  for (std::thread& t : producers) t.join();
  for (auto& c : consumers) {
    EXPECT_TRUE(PollUntil(
        [&] {
          std::vector<Ts> resolved = c->Get().resolved;
          return !resolved.empty() && resolved.back() == Ts(kBatches);
        },
        kWait));
  }
  done = true;
  completer.join();
  for (auto& c : consumers) EXPECT_EQ(c->Get().violations, 0u);
  EXPECT_EQ(pipeline_->QuotaInFlight(), 0u);
  EXPECT_EQ(pipeline_->InFlightBatches(), 0u);
  EXPECT_EQ(pipeline_->PendingBarriers(), 0u);
  EXPECT_TRUE(Failures().empty());
}

}  // namespace
}  // namespace sluice::logpuller
