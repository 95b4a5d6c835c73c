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

#include "common/clock.h"
#include "common/metrics.h"
#include "common/test_util.h"
#include "common/thread_annotations.h"
#include "logpuller/span_pipeline_test_util.h"

namespace sluice::logpuller {
namespace {

using namespace span_pipeline_testing;  // NOLINT(build/namespaces): the fixture's names.
using std::chrono::milliseconds;
using std::chrono::seconds;

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
  // Blocked on the full queue.
  ASSERT_TRUE(PollUntil([&] { return pipeline_->BlockedProducers() == 1; }, kWait));
  EXPECT_FALSE(producer_done.WaitFor(milliseconds(0)));
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
