#include "common/lifecycle.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include "common/clock.h"
#include "common/test_util.h"

namespace sluice {
namespace {

// A body that runs until its stop is requested.
void RunUntilStopped(StopToken token) { Clock::Real()->SleepFor(std::chrono::hours(1), token); }

TEST(OwnedThreadTest, StopIsObservedAndJoinWaits) {
  OwnedThread thread;
  Notification running;
  std::atomic<bool> saw_stop{false};
  std::atomic<bool> finished{false};
  thread.Start("sluice-test", [&](StopToken token) {
    running.Notify();
    RunUntilStopped(token);
    saw_stop = token.cancelled();
    finished = true;
  });
  ASSERT_TRUE(running.WaitFor());
  EXPECT_TRUE(thread.joinable());
  EXPECT_FALSE(thread.stop_requested());
  thread.RequestStop();
  EXPECT_TRUE(thread.stop_requested());
  thread.Join();
  EXPECT_TRUE(finished);  // Join returned only after the body did.
  EXPECT_TRUE(saw_stop);
  EXPECT_FALSE(thread.joinable());
}

TEST(OwnedThreadTest, JoinWaitsForABodyThatIgnoresStop) {
  OwnedThread thread;
  Notification release;
  std::atomic<bool> finished{false};
  thread.Start("sluice-slow", [&](StopToken) {
    EXPECT_TRUE(release.WaitFor());
    finished = true;
  });
  thread.RequestStop();
  release.Notify();
  thread.Join();
  EXPECT_TRUE(finished);
}

TEST(OwnedThreadTest, StopTwiceAndJoinWithoutStartAreHarmless) {
  OwnedThread never_started;
  never_started.Join();
  never_started.Stop();
  EXPECT_FALSE(never_started.joinable());

  OwnedThread thread;
  thread.Start("sluice-twice", RunUntilStopped);
  thread.Stop();
  thread.Stop();
  thread.Join();
  thread.RequestStop();
  EXPECT_FALSE(thread.joinable());
}

TEST(OwnedThreadTest, ThreadsAreNamedAndLongNamesTruncated) {
  std::string name, long_name;
  {
    OwnedThread a, b;
    a.Start("sluice-puller", [&](StopToken) { name = CurrentThreadName(); });
    b.Start("sluice-a-very-long-thread-name", [&](StopToken) { long_name = CurrentThreadName(); });
    a.Join();
    b.Join();
  }
  EXPECT_EQ(name, "sluice-puller");
  EXPECT_EQ(long_name, "sluice-a-very-l");  // 15 bytes.
}

TEST(OwnedThreadTest, DestructorStopsAndJoins) {
  std::atomic<bool> finished{false};
  {
    OwnedThread thread;
    thread.Start("sluice-dtor", [&](StopToken token) {
      RunUntilStopped(token);
      finished = true;
    });
  }
  EXPECT_TRUE(finished);
}

TEST(OwnedThreadTest, StopRequestedBeforeStartIsSeenAtOnce) {
  OwnedThread thread;
  thread.RequestStop();
  std::atomic<bool> cancelled{false};
  thread.Start("sluice-early", [&](StopToken token) { cancelled = token.cancelled(); });
  thread.Join();
  EXPECT_TRUE(cancelled);
}

TEST(OwnedThreadTest, BodyMayRequestItsOwnStop) {
  OwnedThread thread;
  thread.Start("sluice-self", [&thread](StopToken token) {
    thread.RequestStop();
    EXPECT_TRUE(token.cancelled());
  });
  thread.Join();
  EXPECT_TRUE(thread.stop_requested());
}

TEST(ThreadGroupTest, AllThreadsObserveOneStop) {
  ThreadGroup group;
  constexpr int kThreads = 3;
  std::atomic<int> running{0};
  std::atomic<int> stopped{0};
  for (int i = 0; i < kThreads; ++i) {
    group.Start("sluice-w" + std::to_string(i), [&](StopToken token) {
      running.fetch_add(1);
      RunUntilStopped(token);
      if (token.cancelled()) stopped.fetch_add(1);
    });
  }
  EXPECT_EQ(group.size(), 3u);
  ASSERT_TRUE(PollUntil([&] { return running.load() == kThreads; }));
  EXPECT_EQ(stopped.load(), 0);
  group.Stop();
  EXPECT_EQ(stopped.load(), kThreads);
  group.Stop();  // Idempotent.
  group.Join();
  EXPECT_TRUE(group.stop_requested());
  EXPECT_TRUE(group.token().cancelled());
}

TEST(ThreadGroupTest, DestructorStopsAndJoins) {
  std::atomic<int> finished{0};
  {
    ThreadGroup group;
    for (int i = 0; i < 2; ++i) {
      group.Start("sluice-g", [&](StopToken token) {
        RunUntilStopped(token);
        finished.fetch_add(1);
      });
    }
  }
  EXPECT_EQ(finished.load(), 2);
}

TEST(ThreadGroupTest, ThreadStartedAfterStopRequestSeesIt) {
  ThreadGroup group;
  group.RequestStop();
  std::atomic<bool> cancelled{false};
  group.Start("sluice-late", [&](StopToken token) { cancelled = token.cancelled(); });
  group.Join();
  EXPECT_TRUE(cancelled);
}

}  // namespace
}  // namespace sluice
