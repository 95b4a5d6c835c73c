// Batches the consumer cannot store, and consumer failures while a producer
// is blocked on a full pipeline queue. A failed store never becomes a
// published resolved ts: the subscription restarts from its last published
// resolved ts and the rows arrive again, or, after repeated failures, it
// fails with the store's error. A failure handled while a region worker
// waits for queue room (holding its subscription's lock) does not deadlock.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "codec/tablecodec.h"
#include "common/test_util.h"
#include "logpuller/fake_store.h"
#include "logpuller/fake_store_fixture.h"
#include "logpuller/puller_test_util.h"
#include "logpuller/subscription_client.h"

namespace sluice::logpuller {
namespace {

using testing::CommitRow;
using testing::CommittedRow;
using testing::FakeStep;
using testing::KeyA;
using testing::kTableA;
using testing::kTableB;
using testing::PrewriteRow;
using testing::Put;
using testing::RecordingConsumer;
using testing::StartOptions;
using testing::Sub;
using testing::WatchedConsumer;

constexpr auto kWaitLong = testing::kFakeWait;

// Fails the next `n` batches with an I/O error, as an event store whose
// write failed, without storing them; forwards everything else.
class FailingStore final : public KvConsumer {
 public:
  explicit FailingStore(std::shared_ptr<KvConsumer> inner) : inner_(std::move(inner)) {}
  void FailNext(int n) { fail_next_.store(n); }
  int failed() const { return failed_.load(); }

  void ConsumeKvEvents(KvBatch batch, PersistedCallback persisted) override {
    int left = fail_next_.load();
    while (left > 0 && !fail_next_.compare_exchange_weak(left, left - 1)) {
    }
    if (left > 0) {
      failed_.fetch_add(1);
      persisted(IoError("injected: event store write failed"));
      return;
    }
    inner_->ConsumeKvEvents(std::move(batch), std::move(persisted));
  }
  void AdvanceResolvedTs(Ts ts) override { inner_->AdvanceResolvedTs(ts); }
  void OnSubscriptionError(const Status& status) override { inner_->OnSubscriptionError(status); }

 private:
  std::shared_ptr<KvConsumer> inner_;
  std::atomic<int> fail_next_{0};
  std::atomic<int> failed_{0};
};

class PersistFailureTest : public testing::FakeStoreClientTest {
 protected:
  // Subscribes table A through a FailingStore in front of a recording
  // consumer (checked by the fixture like every other).
  Sub SubscribeFailing(std::shared_ptr<FailingStore>* store) {
    auto consumer = std::make_shared<RecordingConsumer>(&persister_);
    auto watched = std::make_shared<WatchedConsumer>(consumer);
    consumers_.push_back(consumer);
    watched_.push_back(watched);
    *store = std::make_shared<FailingStore>(watched);
    return Sub{SubscribeWith(kTableA, *store), consumer};
  }

  // Table A's region: the first attempt publishes 2000; each of the next
  // `restarts` attempts scans the transaction committed at 2200.
  void ScriptTableA(int restarts) {
    fake_->Script(region_a_, 1, {FakeStep::Initialized(), FakeStep::Resolved(Ts(2000))});
    for (int attempt = 2; attempt <= restarts + 1; ++attempt) {
      fake_->Script(region_a_, attempt,
                    {FakeStep::Rows({CommittedRow(KeyA(1), "v1", Ts(2100), Ts(2200))}),
                     FakeStep::Initialized()});
    }
  }

  // The same transaction live on table A's region (prewrite at 2100, commit
  // at 2200), then `after`.
  Status CommitLiveTxnA(std::vector<FakeStep> after = {}) {
    std::vector<FakeStep> steps = {FakeStep::Rows({PrewriteRow(KeyA(1), "v1", Ts(2100))}),
                                   FakeStep::Rows({CommitRow(KeyA(1), Ts(2100), Ts(2200))})};
    for (FakeStep& step : after) steps.push_back(std::move(step));
    return fake_->Push(region_a_, steps);
  }
};

TEST_F(PersistFailureTest, AFailedStoreRestartsTheSubscriptionFromItsLastPublishedTs) {
  ASSERT_NO_FATAL_FAILURE(Start());
  ScriptTableA(1);  // The restart's scan finds the transaction whose batch failed.
  std::shared_ptr<FailingStore> store;
  Sub a = SubscribeFailing(&store);
  Sub b = Subscribe(kTableB);
  ASSERT_TRUE(a->WaitResolved(Ts(2000), kWaitLong));

  store->FailNext(1);
  ASSERT_TRUE(CommitLiveTxnA({FakeStep::Resolved(Ts(2500))}).ok());
  ASSERT_TRUE(WaitRegistered(region_a_, 2));
  EXPECT_EQ(store->failed(), 1);
  // Nothing past the failed batch was published, and the restart starts at
  // the last published resolved ts.
  EXPECT_EQ(a->resolved(), Ts(2000));
  EXPECT_EQ(Register(region_a_, 2).checkpoint, Ts(2000));

  fake_->Tick(Ts(3000));
  ASSERT_TRUE(a->WaitResolved(Ts(3000), kWaitLong));
  ASSERT_TRUE(b->WaitResolved(Ts(3000), kWaitLong));
  EXPECT_EQ(testing::DiffChanges({Put(KeyA(1), "v1", Ts(2100), Ts(2200))}, Delivered(a)), "");
  EXPECT_FALSE(a->error().has_value());
  EXPECT_EQ(stats().restarts, 1u);
  EXPECT_EQ(stats().fatal, 0u);
}

TEST_F(PersistFailureTest, StoresThatKeepFailingFailTheSubscriptionWithTheStoresError) {
  StartOptions start;
  start.max_persist_restarts = 2;
  ASSERT_NO_FATAL_FAILURE(Start(start));
  ScriptTableA(2);
  std::shared_ptr<FailingStore> store;
  Sub a = SubscribeFailing(&store);
  Sub b = Subscribe(kTableB);
  ASSERT_TRUE(a->WaitResolved(Ts(2000), kWaitLong));

  store->FailNext(1000);
  ASSERT_TRUE(CommitLiveTxnA().ok());
  ASSERT_TRUE(PollUntil([&] { return a->error().has_value(); }, kWaitLong));
  EXPECT_EQ(a->error()->code(), Code::kIoError);
  EXPECT_THAT(std::string(a->error()->message()), ::testing::HasSubstr("injected"));
  EXPECT_EQ(store->failed(), 3);  // The first try and two restarts.
  EXPECT_EQ(stats().restarts, 2u);
  EXPECT_EQ(stats().fatal, 1u);
  EXPECT_EQ(a->resolved(), Ts(2000));
  fake_->Tick(Ts(2500));  // B is untouched.
  ASSERT_TRUE(b->WaitResolved(Ts(2500), kWaitLong));
}

// The first batch blocks its pipeline worker until released, then fails
// the subscription (a throw or a dropped callback). By then a second batch
// fills the worker's one-message queue, and the region worker waits in
// EnqueueResolved for room while it holds the subscription's lock.
class BlockedWorkerStore final : public KvConsumer {
 public:
  enum class Failure { kThrow, kLoseCallback };
  BlockedWorkerStore(std::shared_ptr<KvConsumer> inner, Failure failure)
      : inner_(std::move(inner)), failure_(failure) {}

  void ConsumeKvEvents(KvBatch batch, PersistedCallback persisted) override {
    if (calls_.fetch_add(1) > 0) {
      inner_->ConsumeKvEvents(std::move(batch), std::move(persisted));
      return;
    }
    entered_.Notify();
    release_.WaitFor(std::chrono::seconds(30));
    if (failure_ == Failure::kThrow) throw std::runtime_error("injected consumer failure");
    // kLoseCallback: `persisted` is destroyed uncalled when this returns.
  }
  void AdvanceResolvedTs(Ts ts) override { inner_->AdvanceResolvedTs(ts); }
  void OnSubscriptionError(const Status& status) override { inner_->OnSubscriptionError(status); }

  bool WaitEntered() { return entered_.WaitFor(kWaitLong); }
  void Release() { release_.Notify(); }

 private:
  std::shared_ptr<KvConsumer> inner_;
  const Failure failure_;
  std::atomic<int> calls_{0};
  Notification entered_;
  Notification release_;
};

class FullQueueFailureTest : public PersistFailureTest,
                             public ::testing::WithParamInterface<BlockedWorkerStore::Failure> {};

TEST_P(FullQueueFailureTest, AFailureWhileTheWorkerQueueIsFullDoesNotDeadlock) {
  StartOptions start;
  start.region_workers = 1;
  start.pipeline_workers = 1;
  start.pipeline_queue = 1;
  start.scan_yield_max = std::chrono::milliseconds(0);
  ASSERT_NO_FATAL_FAILURE(Start(start));
  fake_->Script(region_a_, 1,
                {FakeStep::Rows({CommittedRow(KeyA(1), "v1", Ts(1100), Ts(1200))}),
                 FakeStep::Rows({CommittedRow(KeyA(2), "v2", Ts(1300), Ts(1400))}),
                 FakeStep::Initialized(), FakeStep::Resolved(Ts(2000))});
  Sub b = Subscribe(kTableB);
  auto consumer = std::make_shared<RecordingConsumer>(&persister_);
  auto watched = std::make_shared<WatchedConsumer>(consumer);
  consumers_.push_back(consumer);
  watched_.push_back(watched);
  auto store = std::make_shared<BlockedWorkerStore>(watched, GetParam());
  SubscribeWith(kTableA, store);

  ASSERT_TRUE(store->WaitEntered());
  SpanPipeline& pipeline = env_->client->pipeline();
  // The second batch is queued and the resolved ts waits for room.
  ASSERT_TRUE(PollUntil(
      [&] { return pipeline.QueuedDataMessages() == 1 && pipeline.BlockedProducers() == 1; },
      kWaitLong));
  store->Release();

  ASSERT_TRUE(PollUntil([&] { return consumer->error().has_value(); }, kWaitLong));
  EXPECT_EQ(consumer->error()->code(), Code::kInternal);
  ASSERT_TRUE(PollUntil([&] { return stats().fatal == 1; }, kWaitLong));
  EXPECT_TRUE(PollUntil([&] { return pipeline.BlockedProducers() == 0; }, kWaitLong));
  // The worker and the region worker are free: B still advances.
  ASSERT_TRUE(WaitRegistered(region_b_, 1));
  fake_->Tick(Ts(2500));
  EXPECT_TRUE(b->WaitResolved(Ts(2500), kWaitLong));
  EXPECT_EQ(stats().subscriptions, 1u);
}

INSTANTIATE_TEST_SUITE_P(Failures, FullQueueFailureTest,
                         ::testing::Values(BlockedWorkerStore::Failure::kThrow,
                                           BlockedWorkerStore::Failure::kLoseCallback));

}  // namespace
}  // namespace sluice::logpuller
