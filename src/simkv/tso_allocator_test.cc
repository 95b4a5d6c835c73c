#include "simkv/tso_allocator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/tso.h"

namespace sluice::simkv {
namespace {

// A clock the test moves by hand.
struct FakeMillis {
  std::atomic<int64_t> ms{1'700'000'000'000};
  TsoAllocator::PhysicalClock Fn() {
    return [this] { return ms.load(); };
  }
};

TEST(TsoAllocatorTest, BatchesFollowThePdConvention) {
  FakeMillis clock;
  TsoAllocator tso(clock.Fn());
  auto first = tso.Allocate(1);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(tso::Physical(*first), clock.ms.load());
  EXPECT_EQ(tso::Logical(*first), 0);
  auto batch = tso.Allocate(10);
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ(tso::Physical(*batch), clock.ms.load());
  EXPECT_EQ(tso::Logical(*batch), 10);  // Batch is logical 1..10.
  EXPECT_EQ(tso::BatchElement(*batch, 10, 0), Ts(first->value() + 1));
  EXPECT_EQ(tso.Max(), *batch);

  clock.ms += 5;
  auto later = tso.Allocate(1);
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(*later, tso::Compose(clock.ms.load(), 0));

  EXPECT_EQ(tso.Allocate(0).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(tso.Allocate(TsoAllocator::kMaxBatch + 1).status().code(), Code::kInvalidArgument);
}

TEST(TsoAllocatorTest, MonotonicWhenTheClockGoesBack) {
  FakeMillis clock;
  TsoAllocator tso(clock.Fn());
  Ts last = *tso.Allocate(3);
  for (int i = 0; i < 100; ++i) {
    clock.ms -= 7;  // The clock keeps going backwards.
    Ts next = *tso.Allocate(1 + i % 4);
    EXPECT_GT(next, last);
    EXPECT_EQ(tso::Physical(next), tso::Physical(last));
    last = next;
  }
}

TEST(TsoAllocatorTest, RollsPhysicalForwardOnLogicalOverflow) {
  FakeMillis clock;
  TsoAllocator tso(clock.Fn());
  const int64_t start = clock.ms.load();
  Ts a = *tso.Allocate(TsoAllocator::kMaxBatch - 2);  // Logical 0 .. 2^18 - 3.
  EXPECT_EQ(tso::Physical(a), start);
  EXPECT_EQ(tso::Logical(a), static_cast<int64_t>(tso::kLogicalMask) - 2);
  Ts b = *tso.Allocate(2);  // Just fits.
  EXPECT_EQ(b, tso::Compose(start, tso::kLogicalMask));
  Ts c = *tso.Allocate(1);  // Overflows: next millisecond although the clock stands still.
  EXPECT_EQ(c, tso::Compose(start + 1, 0));
  Ts d = *tso.Allocate(TsoAllocator::kMaxBatch);  // Does not fit after c: rolls again.
  EXPECT_EQ(d, tso::Compose(start + 2, tso::kLogicalMask));
  EXPECT_GT(d, c);
  // The batch of d never overlaps c.
  EXPECT_GT(tso::BatchElement(d, TsoAllocator::kMaxBatch, 0), c);
}

TEST(TsoAllocatorTest, RestoreAboveKeepsARestartedServiceMonotonic) {
  FakeMillis clock;
  Ts persisted;
  {
    TsoAllocator tso(clock.Fn());
    clock.ms += 1000;
    ASSERT_TRUE(tso.Allocate(5).ok());
    persisted = tso.Max();
  }
  clock.ms -= 60'000;  // The restarted service's clock is a minute behind.
  TsoAllocator restarted(clock.Fn());
  restarted.RestoreAbove(persisted);
  EXPECT_EQ(restarted.Max(), persisted);
  Ts next = *restarted.Allocate(1);
  EXPECT_GT(next, persisted);
  restarted.RestoreAbove(Ts(1));  // Restoring below the current maximum is a no-op.
  EXPECT_EQ(restarted.Max(), next);
}

TEST(TsoAllocatorTest, FollowsTheWallTimeOfAClock) {
  sluice::ManualClock clock;  // Wall time starts at 1700000000 s.
  TsoAllocator tso(&clock);
  Ts a = *tso.Allocate(1);
  EXPECT_EQ(tso::Physical(a), int64_t{1'700'000'000'000});
  clock.Advance(std::chrono::milliseconds(5));
  Ts b = *tso.Allocate(1);
  EXPECT_EQ(tso::Physical(b), int64_t{1'700'000'000'005});
  clock.SetWallTime(Clock::WallTime(std::chrono::seconds(1'600'000'000)));  // Backwards.
  Ts c = *tso.Allocate(1);
  EXPECT_GT(c, b);
  EXPECT_EQ(tso::Physical(c), tso::Physical(b));
}

TEST(TsoAllocatorTest, ConcurrentCallersGetDistinctIncreasingBatches) {
  FakeMillis clock;
  TsoAllocator tso(clock.Fn());
  constexpr int kThreads = 4;
  constexpr int kCalls = 500;
  std::vector<std::vector<Ts>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        seen[t].push_back(*tso.Allocate(1 + i % 3));
        if (i % 100 == 0) clock.ms += (t % 2 == 0) ? 1 : -3;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::vector<Ts> all;
  for (const auto& per_thread : seen) {
    for (size_t i = 1; i < per_thread.size(); ++i) EXPECT_GT(per_thread[i], per_thread[i - 1]);
    all.insert(all.end(), per_thread.begin(), per_thread.end());
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end());
}

}  // namespace
}  // namespace sluice::simkv
