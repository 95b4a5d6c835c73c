#include "common/clock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "common/test_util.h"

namespace sluice {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(RealClockTest, NowIsMonotonicAndWallNowIsCalendarTime) {
  Clock* clock = Clock::Real();
  auto a = clock->Now();
  auto b = clock->Now();
  EXPECT_LE(a, b);
  // Later than 2020-01-01.
  EXPECT_GT(clock->WallNow(), Clock::WallTime(seconds(1577836800)));
}

TEST(RealClockTest, SleepReturnsAtOnceForPastDeadlineOrCancelledToken) {
  Clock* clock = Clock::Real();
  EXPECT_TRUE(clock->SleepUntil(clock->Now(), CancelToken()));
  CancelSource source;
  source.Cancel();
  EXPECT_FALSE(clock->SleepFor(seconds(30), source.token()));
}

TEST(ManualClockTest, AdvanceMovesSteadyAndWallTime) {
  ManualClock clock;
  auto start = clock.Now();
  auto wall = clock.WallNow();
  clock.Advance(milliseconds(1500));
  EXPECT_EQ(clock.Now() - start, milliseconds(1500));
  EXPECT_EQ(clock.WallNow() - wall, milliseconds(1500));
  clock.SetWallTime(Clock::WallTime(seconds(42)));
  EXPECT_EQ(clock.WallNow(), Clock::WallTime(seconds(42)));
  EXPECT_EQ(clock.Now() - start, milliseconds(1500));  // Steady time unaffected.
}

TEST(ManualClockTest, WaitUntilPastDeadlineReturnsAtOnce) {
  ManualClock clock;
  Mutex mu;
  CondVar cv;
  MutexLock lock(&mu);
  EXPECT_TRUE(clock.WaitUntil(&cv, &mu, clock.Now()));
  EXPECT_EQ(clock.NumWaiters(), 0u);
}

TEST(ManualClockTest, AdvanceWakesSleeperOnlyOnceDeadlinePasses) {
  ManualClock clock;
  Notification done;
  bool reached = false;
  std::thread sleeper([&] {
    reached = clock.SleepFor(seconds(10), CancelToken());
    done.Notify();
  });
  ASSERT_TRUE(clock.AwaitWaiters(1));
  clock.Advance(seconds(5));
  EXPECT_FALSE(done.HasBeenNotified());  // 5 s of 10 s: must still sleep.
  clock.Advance(seconds(5));
  EXPECT_TRUE(done.WaitFor());
  sleeper.join();
  EXPECT_TRUE(reached);
  EXPECT_EQ(clock.NumWaiters(), 0u);
}

TEST(ManualClockTest, AdvanceWakesOnlyDueWaiters) {
  ManualClock clock;
  Notification short_done, long_done;
  std::thread short_sleeper([&] {
    EXPECT_TRUE(clock.SleepFor(seconds(1), CancelToken()));
    short_done.Notify();
  });
  std::thread long_sleeper([&] {
    EXPECT_TRUE(clock.SleepFor(seconds(60), CancelToken()));
    long_done.Notify();
  });
  ASSERT_TRUE(clock.AwaitWaiters(2));
  clock.Advance(seconds(2));
  EXPECT_TRUE(short_done.WaitFor());
  short_sleeper.join();
  EXPECT_FALSE(long_done.HasBeenNotified());
  EXPECT_EQ(clock.NumWaiters(), 1u);
  clock.Advance(seconds(58));
  EXPECT_TRUE(long_done.WaitFor());
  long_sleeper.join();
}

TEST(ManualClockTest, CancelWakesSleeperWithoutAdvancing) {
  ManualClock clock;
  CancelSource source;
  Notification done;
  bool reached = true;
  std::thread sleeper([&] {
    reached = clock.SleepFor(seconds(10), source.token());
    done.Notify();
  });
  ASSERT_TRUE(clock.AwaitWaiters(1));
  source.Cancel();
  EXPECT_TRUE(done.WaitFor());
  sleeper.join();
  EXPECT_FALSE(reached);
}

// A component-style wait: a signal from the component wakes the waiter
// before its deadline, and WaitUntil reports no timeout.
TEST(ManualClockTest, SignalBeforeDeadlineIsNotATimeout) {
  ManualClock clock;
  Mutex mu;
  CondVar cv;
  bool ready = false;  // Guarded by mu.
  bool timed_out = true;
  std::thread waiter([&] {
    MutexLock lock(&mu);
    auto deadline = clock.Now() + seconds(10);
    while (!ready) timed_out = clock.WaitUntil(&cv, &mu, deadline);
  });
  ASSERT_TRUE(clock.AwaitWaiters(1));
  {
    MutexLock lock(&mu);
    ready = true;
    cv.SignalAll();
  }
  waiter.join();
  EXPECT_FALSE(timed_out);
}

// Many threads sleep for short manual intervals while the main thread keeps
// advancing time: no wake-up may be lost (each sleeper would hang).
TEST(ManualClockTest, ConcurrentSleepersAndAdvancesLoseNoWakeups) {
  ManualClock clock;
  constexpr int kThreads = 4;
  constexpr int kRounds = 200;
  std::atomic<int> finished{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&clock, &finished, t] {
      for (int i = 0; i < kRounds; ++i) {
        clock.SleepFor(milliseconds(1 + (i + t) % 3), CancelToken());
      }
      finished.fetch_add(1);
    });
  }
  EXPECT_TRUE(PollUntil([&] {
    clock.Advance(milliseconds(1));
    return finished.load() == kThreads;
  }));
  for (auto& t : threads) t.join();
}

TEST(BackoffTest, ExponentialWithoutJitterAndCapped) {
  BackoffOptions options;
  options.base = milliseconds(100);
  options.max = milliseconds(1000);
  options.multiplier = 2.0;
  options.jitter = 0;
  Backoff backoff(options, /*seed=*/1);
  std::vector<int64_t> got;
  for (int i = 0; i < 6; ++i) {
    got.push_back(std::chrono::duration_cast<milliseconds>(backoff.Next()).count());
  }
  EXPECT_EQ(got, (std::vector<int64_t>{100, 200, 400, 800, 1000, 1000}));
  EXPECT_EQ(backoff.attempts(), 6);
  backoff.Reset();
  EXPECT_EQ(backoff.attempts(), 0);
  EXPECT_EQ(backoff.Next(), milliseconds(100));
}

TEST(BackoffTest, GrpcConnectShape) {
  // 1 s base, 1.1 multiplier, 3 s maximum (TiCDC's gRPC dial backoff).
  Backoff backoff({seconds(1), seconds(3), 1.1, 0}, 1);
  EXPECT_EQ(backoff.Next(), seconds(1));
  EXPECT_EQ(backoff.Next(), milliseconds(1100));
  for (int i = 0; i < 20; ++i) backoff.Next();
  EXPECT_EQ(backoff.Next(), seconds(3));
}

TEST(BackoffTest, JitterStaysInRangeAndIsDeterministicPerSeed) {
  BackoffOptions options{milliseconds(100), seconds(10), 2.0, 0.5};
  Backoff a(options, 7), b(options, 7), c(options, 8);
  bool any_difference = false;
  double nominal_ms = 100;
  for (int i = 0; i < 10; ++i) {
    auto da = a.Next();
    EXPECT_EQ(da, b.Next());
    if (da != c.Next()) any_difference = true;
    double ms = std::chrono::duration<double, std::milli>(da).count();
    EXPECT_GE(ms, nominal_ms * 0.5 - 1e-6);
    EXPECT_LE(ms, nominal_ms);
    nominal_ms = std::min(nominal_ms * 2, 10000.0);
  }
  EXPECT_TRUE(any_difference);
}

}  // namespace
}  // namespace sluice
