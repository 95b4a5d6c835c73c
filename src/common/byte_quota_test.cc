#include "common/byte_quota.h"

#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include "common/test_util.h"

namespace sluice {
namespace {

// Runs quota->Acquire(bytes, token) on its own thread.
class AsyncAcquire {
 public:
  AsyncAcquire(ByteQuota* quota, uint64_t bytes, CancelToken token = {})
      : thread_([this, quota, bytes, token] {
          status_ = quota->Acquire(bytes, token);
          done_.Notify();
        }) {}
  ~AsyncAcquire() { thread_.join(); }

  bool WaitDone() { return done_.WaitFor(); }
  bool done() const { return done_.HasBeenNotified(); }
  // Valid after WaitDone() returned true.
  const Status& status() const { return status_; }

 private:
  Notification done_;
  Status status_;
  std::thread thread_;  // Last: starts after the other members exist.
};

TEST(ByteQuotaTest, TryAcquireAndReleaseAccounting) {
  ByteQuota quota(100);
  EXPECT_TRUE(quota.TryAcquire(60));
  EXPECT_TRUE(quota.TryAcquire(40));
  EXPECT_FALSE(quota.TryAcquire(1));
  EXPECT_EQ(quota.InFlight(), 100u);
  quota.Release(60);
  EXPECT_EQ(quota.InFlight(), 40u);
  EXPECT_TRUE(quota.Acquire(60).ok());
  quota.Release(100);
  EXPECT_EQ(quota.InFlight(), 0u);
}

TEST(ByteQuotaTest, BlockedAcquireWakesOnRelease) {
  ByteQuota quota(100);
  ASSERT_TRUE(quota.Acquire(80).ok());
  AsyncAcquire waiter(&quota, 50);
  ASSERT_TRUE(PollUntil([&] { return quota.NumWaiting() == 1; }));
  EXPECT_FALSE(waiter.done());
  quota.Release(80);
  ASSERT_TRUE(waiter.WaitDone());
  EXPECT_TRUE(waiter.status().ok());
  EXPECT_EQ(quota.InFlight(), 50u);
  quota.Release(50);
}

TEST(ByteQuotaTest, OversizeRequestAdmittedOnlyWhenNothingInFlight) {
  ByteQuota quota(100);
  // Alone, an oversize request goes through at once.
  ASSERT_TRUE(quota.Acquire(1000).ok());
  EXPECT_EQ(quota.InFlight(), 1000u);
  EXPECT_FALSE(quota.TryAcquire(1));
  quota.Release(1000);

  ASSERT_TRUE(quota.Acquire(10).ok());
  EXPECT_FALSE(quota.TryAcquire(500));
  AsyncAcquire big(&quota, 500);
  ASSERT_TRUE(PollUntil([&] { return quota.NumWaiting() == 1; }));
  EXPECT_FALSE(big.done());
  quota.Release(10);
  ASSERT_TRUE(big.WaitDone());
  EXPECT_TRUE(big.status().ok());
  EXPECT_EQ(quota.InFlight(), 500u);
  quota.Release(500);
}

TEST(ByteQuotaTest, WaitersAreServedInOrder) {
  ByteQuota quota(100);
  ASSERT_TRUE(quota.Acquire(60).ok());
  AsyncAcquire big(&quota, 100);  // Needs everything.
  ASSERT_TRUE(PollUntil([&] { return quota.NumWaiting() == 1; }));
  // 30 would fit, but the earlier waiter comes first.
  EXPECT_FALSE(quota.TryAcquire(30));
  AsyncAcquire small(&quota, 30);
  ASSERT_TRUE(PollUntil([&] { return quota.NumWaiting() == 2; }));
  EXPECT_FALSE(small.done());
  quota.Release(60);
  ASSERT_TRUE(big.WaitDone());
  EXPECT_TRUE(big.status().ok());
  EXPECT_FALSE(small.done());
  quota.Release(100);
  ASSERT_TRUE(small.WaitDone());
  EXPECT_TRUE(small.status().ok());
  quota.Release(30);
  EXPECT_EQ(quota.InFlight(), 0u);
}

TEST(ByteQuotaTest, CancellationUnblocksAndAcquiresNothing) {
  ByteQuota quota(100);
  ASSERT_TRUE(quota.Acquire(100).ok());
  CancelSource source;
  AsyncAcquire waiter(&quota, 10, source.token());
  ASSERT_TRUE(PollUntil([&] { return quota.NumWaiting() == 1; }));
  source.Cancel();
  ASSERT_TRUE(waiter.WaitDone());
  EXPECT_EQ(waiter.status().code(), Code::kCancelled);
  EXPECT_EQ(quota.InFlight(), 100u);
  EXPECT_EQ(quota.NumWaiting(), 0u);
  // An already cancelled token fails at once, even if the bytes would fit.
  quota.Release(100);
  EXPECT_EQ(quota.Acquire(1, source.token()).code(), Code::kCancelled);
  EXPECT_EQ(quota.InFlight(), 0u);
}

TEST(ByteQuotaTest, CancelledHeadWaiterLetsNextOneIn) {
  ByteQuota quota(100);
  ASSERT_TRUE(quota.Acquire(60).ok());
  CancelSource source;
  AsyncAcquire head(&quota, 100, source.token());
  ASSERT_TRUE(PollUntil([&] { return quota.NumWaiting() == 1; }));
  AsyncAcquire next(&quota, 30);
  ASSERT_TRUE(PollUntil([&] { return quota.NumWaiting() == 2; }));
  source.Cancel();
  ASSERT_TRUE(head.WaitDone());
  EXPECT_EQ(head.status().code(), Code::kCancelled);
  ASSERT_TRUE(next.WaitDone());
  EXPECT_TRUE(next.status().ok());
  EXPECT_EQ(quota.InFlight(), 90u);
  quota.Release(90);
}

TEST(ByteQuotaTest, CloseUnblocksWaitersAndFailsLaterAcquires) {
  ByteQuota quota(10);
  ASSERT_TRUE(quota.Acquire(10).ok());
  AsyncAcquire a(&quota, 5);
  AsyncAcquire b(&quota, 5);
  ASSERT_TRUE(PollUntil([&] { return quota.NumWaiting() == 2; }));
  quota.Close();
  ASSERT_TRUE(a.WaitDone());
  ASSERT_TRUE(b.WaitDone());
  EXPECT_EQ(a.status().code(), Code::kCancelled);
  EXPECT_EQ(b.status().code(), Code::kCancelled);
  EXPECT_EQ(quota.Acquire(1).code(), Code::kCancelled);
  EXPECT_FALSE(quota.TryAcquire(1));
  // Holders can still give back what they have.
  quota.Release(10);
  EXPECT_EQ(quota.InFlight(), 0u);
}

TEST(ByteQuotaTest, OverReleaseIsAProgrammingError) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  ByteQuota quota(100);
  ASSERT_TRUE(quota.Acquire(10).ok());
  // Debug builds assert; release builds clamp at zero.
  EXPECT_DEBUG_DEATH(quota.Release(11), "more bytes than in flight");
#ifdef NDEBUG
  EXPECT_EQ(quota.InFlight(), 0u);
#else
  quota.Release(10);
#endif
  EXPECT_EQ(quota.InFlight(), 0u);
}

TEST(ByteQuotaTest, LeaseReleasesExactlyOnce) {
  ByteQuota quota(100);
  {
    QuotaLease lease;
    ASSERT_TRUE(QuotaLease::Acquire(&quota, 40, CancelToken(), &lease).ok());
    EXPECT_EQ(quota.InFlight(), 40u);
    QuotaLease moved = std::move(lease);
    EXPECT_EQ(moved.bytes(), 40u);
    EXPECT_EQ(lease.bytes(), 0u);  // NOLINT(bugprone-use-after-move): moved-from is empty.
    lease.Release();               // No-op on a moved-from lease.
    EXPECT_EQ(quota.InFlight(), 40u);
    QuotaLease other = QuotaLease::Adopt(&quota, 0);
    other = std::move(moved);
    EXPECT_EQ(quota.InFlight(), 40u);
  }
  EXPECT_EQ(quota.InFlight(), 0u);

  CancelSource source;
  source.Cancel();
  QuotaLease failed;
  EXPECT_EQ(QuotaLease::Acquire(&quota, 1, source.token(), &failed).code(), Code::kCancelled);
  EXPECT_EQ(failed.bytes(), 0u);
}

// Several threads acquire and release random amounts: in-flight bytes never
// exceed the capacity and return to zero.
TEST(ByteQuotaTest, ConcurrentAcquireReleaseKeepsBound) {
  constexpr uint64_t kCapacity = 100;
  ByteQuota quota(kCapacity);
  std::atomic<uint64_t> held{0};
  std::atomic<bool> over{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      for (int i = 0; i < 500; ++i) {
        uint64_t bytes = 1 + rng() % 40;
        bool ok = (i % 3 == 0) ? quota.TryAcquire(bytes) : quota.Acquire(bytes).ok();
        if (!ok) continue;
        if (held.fetch_add(bytes) + bytes > kCapacity) over = true;
        held.fetch_sub(bytes);
        quota.Release(bytes);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_FALSE(over.load());
  EXPECT_EQ(quota.InFlight(), 0u);
}

}  // namespace
}  // namespace sluice
