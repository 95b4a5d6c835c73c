#include "common/thread_annotations.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "common/test_util.h"

namespace sluice {
namespace {

class Counter {
 public:
  void Inc() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    ++value_;
  }
  int value() const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return value_;
  }

 private:
  mutable Mutex mu_;
  int value_ GUARDED_BY(mu_) = 0;
};

TEST(MutexTest, MutexLockMakesIncrementsExclusive) {
  Counter counter;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&counter] {
      for (int i = 0; i < 10000; ++i) counter.Inc();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(counter.value(), 40000);
}

TEST(MutexTest, TryLock) {
  Mutex mu;
  if (!mu.TryLock()) {
    ADD_FAILURE() << "TryLock on a free mutex failed";
    return;
  }
  bool other_got_it = false;
  std::thread other([&] {
    if (mu.TryLock()) {
      other_got_it = true;
      mu.Unlock();
    }
  });
  other.join();
  EXPECT_FALSE(other_got_it);
  mu.Unlock();
}

struct Flag {
  Mutex mu;
  CondVar cv;
  bool set GUARDED_BY(mu) = false;
};

TEST(CondVarTest, SignalWakesWaiter) {
  Flag flag;
  Notification woke;
  std::thread waiter([&] {
    MutexLock lock(&flag.mu);
    while (!flag.set) flag.cv.Wait(&flag.mu);
    woke.Notify();
  });
  {
    MutexLock lock(&flag.mu);
    flag.set = true;
    flag.cv.SignalAll();
  }
  EXPECT_TRUE(woke.WaitFor());
  waiter.join();
}

TEST(CondVarTest, WaitUntilReportsTimeout) {
  Flag flag;
  MutexLock lock(&flag.mu);
  // A deadline in the past times out at once.
  EXPECT_TRUE(flag.cv.WaitUntil(&flag.mu, std::chrono::steady_clock::now()));
  EXPECT_TRUE(flag.cv.WaitFor(&flag.mu, std::chrono::milliseconds(1)));
}

TEST(CondVarTest, WaitForReturnsFalseWhenSignalledBeforeDeadline) {
  Flag flag;
  std::thread setter;
  bool timed_out = true;
  {
    MutexLock lock(&flag.mu);
    setter = std::thread([&] {
      MutexLock inner(&flag.mu);
      flag.set = true;
      flag.cv.SignalAll();
    });
    while (!flag.set) timed_out = flag.cv.WaitFor(&flag.mu, std::chrono::seconds(5));
  }
  setter.join();
  EXPECT_FALSE(timed_out);
}

}  // namespace
}  // namespace sluice
