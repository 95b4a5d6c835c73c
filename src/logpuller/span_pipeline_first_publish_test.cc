// The span pipeline's first publishes: a subscription that never published
// with a barrier waiting is pending until its consumer hears of the publish;
// AwaitFirstPublishes() waits for that, bounded per call and per pending
// subscription on the pipeline's clock, and ends on cancel, reset,
// unregister and Stop().
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "common/cancel.h"
#include "common/clock.h"
#include "common/test_util.h"
#include "logpuller/span_pipeline.h"
#include "logpuller/span_pipeline_test_util.h"

namespace sluice::logpuller {
namespace {

using namespace span_pipeline_testing;  // NOLINT(build/namespaces): the fixture's names.
using std::chrono::milliseconds;
using std::chrono::seconds;

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

}  // namespace
}  // namespace sluice::logpuller
