#include "eventstore/write_queue.h"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <functional>
#include <thread>
#include <vector>

namespace sluice::eventstore {
namespace {

struct Task {
  int sub = 0;
  size_t entries = 1;
  int seq = 0;  // Order of Push() within the test.
};

class WriteQueueTest : public ::testing::Test {
 protected:
  void Push(int sub, size_t entries = 1) {
    Task task{sub, entries, next_seq_++};
    ASSERT_TRUE(queue_.Push(&task));
  }
  // One round's tasks as (sub, seq) pairs.
  std::vector<std::pair<int, int>> Round(size_t max_entries) {
    std::vector<Task> out;
    EXPECT_TRUE(queue_.PopRound(max_entries, &out));
    std::vector<std::pair<int, int>> got;
    for (const Task& t : out) got.emplace_back(t.sub, t.seq);
    return got;
  }
  // As the event store does: the flag and the queue's count change together.
  void SetUrgent(int sub, bool urgent) {
    if (urgent_[sub].exchange(urgent) != urgent) queue_.AddUrgent(urgent ? 1 : -1);
  }

  std::array<std::atomic<bool>, 4> urgent_{};
  std::atomic<int> urgent_reads_{0};
  std::function<bool(const Task&)> urgent_fn_ = [this](const Task& t) {
    return urgent_[t.sub].load();
  };
  WriteQueue<Task> queue_{[](const Task& t) { return t.entries; },
                          [this](const Task& t) -> const void* { return &urgent_[t.sub]; },
                          [this](const Task& t) {
                            ++urgent_reads_;
                            return urgent_fn_(t);
                          }};
  int next_seq_ = 0;
};

using Got = std::vector<std::pair<int, int>>;

TEST_F(WriteQueueTest, WithoutUrgentTasksRoundsAreFifoUpToTheEntryLimit) {
  Push(0, 3);
  Push(1, 3);
  Push(0, 3);
  Push(1, 10);
  EXPECT_EQ(Round(6), (Got{{0, 0}, {1, 1}}));
  // A round takes at least one task, even one larger than the limit.
  EXPECT_EQ(Round(2), (Got{{0, 2}}));
  EXPECT_EQ(Round(2), (Got{{1, 3}}));
  EXPECT_EQ(queue_.size(), 0u);
}

TEST_F(WriteQueueTest, UrgentSubscriptionsGoFirstEachInItsOwnOrder) {
  Push(0);
  Push(1);
  Push(2);
  Push(1);
  Push(0);
  Push(2);
  SetUrgent(2, true);
  SetUrgent(1, true);
  // Both urgent subscriptions' tasks, in queue order, before sub 0's.
  EXPECT_EQ(Round(3), (Got{{1, 1}, {2, 2}, {1, 3}}));
  SetUrgent(1, false);
  // The urgent task, then the round fills up from the front.
  EXPECT_EQ(Round(3), (Got{{2, 5}, {0, 0}, {0, 4}}));
  EXPECT_EQ(queue_.size(), 0u);
}

TEST_F(WriteQueueTest, ARoundReadsEachSubscriptionsUrgencyOnce) {
  Push(1);
  Push(2);
  Push(1);
  SetUrgent(3, true);  // Some subscription is urgent: rounds look.
  // Sub 1 turns urgent while the round is looking: its first task was
  // already passed over as not urgent, so its second must not go first.
  int sub1_reads = 0;
  urgent_fn_ = [&](const Task& t) { return t.sub == 1 && ++sub1_reads > 1; };
  EXPECT_EQ(Round(10), (Got{{1, 0}, {2, 1}, {1, 2}}));
  EXPECT_EQ(sub1_reads, 1);
}

TEST_F(WriteQueueTest, WithoutAnUrgentSubscriptionRoundsDoNotLook) {
  for (int i = 0; i < 5; ++i) Push(i % 2);
  EXPECT_EQ(Round(2), (Got{{0, 0}, {1, 1}}));
  EXPECT_EQ(urgent_reads_.load(), 0);
  SetUrgent(1, true);
  EXPECT_EQ(Round(1), (Got{{1, 3}}));
  EXPECT_GT(urgent_reads_.load(), 0);
}

TEST_F(WriteQueueTest, AFrontTaskIsPassedOverAtMostMaxBypassRoundsInARow) {
  Push(0);  // Never urgent: the front task.
  SetUrgent(1, true);
  const int rounds = WriteQueue<Task>::kMaxBypassRounds;
  for (int i = 0; i < rounds + 2; ++i) Push(1);
  for (int i = 0; i < rounds; ++i) {
    EXPECT_EQ(Round(1), (Got{{1, i + 1}})) << "round " << i;
  }
  // The next round is FIFO: the front task, then urgent ones go first again.
  EXPECT_EQ(Round(1), (Got{{0, 0}}));
  EXPECT_EQ(Round(1), (Got{{1, rounds + 1}}));
}

TEST_F(WriteQueueTest, TakingTheFrontResetsTheBypassCount) {
  SetUrgent(1, true);
  const int rounds = WriteQueue<Task>::kMaxBypassRounds;
  for (int i = 0; i < rounds - 1; ++i) Push(1);
  Push(0);
  for (int i = 0; i < rounds + 1; ++i) Push(1);
  // The first rounds take urgent tasks from the front: no bypass counted.
  for (int i = 0; i < rounds - 1; ++i) EXPECT_EQ(Round(1), (Got{{1, i}}));
  // Then kMaxBypassRounds rounds pass over sub 0's task before it goes.
  for (int i = 0; i < rounds; ++i) EXPECT_EQ(Round(1), (Got{{1, rounds + i}}));
  EXPECT_EQ(Round(1), (Got{{0, rounds - 1}}));
  EXPECT_EQ(Round(1), (Got{{1, 2 * rounds}}));
}

TEST_F(WriteQueueTest, CloseLetsWorkersDrainThenStops) {
  Push(0);
  Push(1);
  queue_.Close();
  Task late{2, 1, 99};
  EXPECT_FALSE(queue_.Push(&late));
  EXPECT_EQ(late.seq, 99);  // Untouched.
  EXPECT_EQ(Round(1), (Got{{0, 0}}));
  std::vector<Task> rest;
  queue_.TakeAll(&rest);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].seq, 1);
  std::vector<Task> out;
  EXPECT_FALSE(queue_.PopRound(10, &out));
  EXPECT_TRUE(out.empty());
}

TEST_F(WriteQueueTest, ABlockedWorkerWakesForAPushAndForClose) {
  std::vector<Task> out;
  std::thread worker([&] {
    while (queue_.PopRound(10, &out)) {
    }
  });
  Push(3, 2);
  queue_.Close();  // The worker still gets the pushed task, then returns.
  worker.join();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].sub, 3);
}

}  // namespace
}  // namespace sluice::eventstore
