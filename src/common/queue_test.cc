#include "common/queue.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/test_util.h"

namespace sluice {
namespace {

TEST(BoundedMpscQueueTest, TryPushTryPopInOrder) {
  BoundedMpscQueue<int> q(2);
  EXPECT_TRUE(q.TryPush(1));
  EXPECT_TRUE(q.TryPush(2));
  EXPECT_FALSE(q.TryPush(3));
  EXPECT_EQ(q.size(), 2u);
  EXPECT_EQ(q.TryPop(), 1);
  EXPECT_EQ(q.TryPop(), 2);
  EXPECT_EQ(q.TryPop(), std::nullopt);
}

TEST(BoundedMpscQueueTest, FailedPushLeavesItemUntouched) {
  BoundedMpscQueue<std::unique_ptr<int>> q(1);
  ASSERT_TRUE(q.TryPush(std::make_unique<int>(1)));
  auto item = std::make_unique<int>(2);
  EXPECT_FALSE(q.TryPush(std::move(item)));
  ASSERT_NE(item, nullptr);  // NOLINT(bugprone-use-after-move): not moved on failure.
  EXPECT_EQ(*item, 2);
}

TEST(BoundedMpscQueueTest, PushBlocksWhileFullUntilPop) {
  BoundedMpscQueue<int> q(1);
  ASSERT_TRUE(q.Push(1).ok());
  Notification pushed;
  std::thread producer([&] {
    EXPECT_TRUE(q.Push(2).ok());
    pushed.Notify();
  });
  EXPECT_FALSE(pushed.HasBeenNotified());  // The queue is full.
  EXPECT_EQ(q.Pop(), 1);
  EXPECT_TRUE(pushed.WaitFor());
  producer.join();
  EXPECT_EQ(q.Pop(), 2);
}

TEST(BoundedMpscQueueTest, CancelUnblocksPushAndKeepsItem) {
  BoundedMpscQueue<std::string> q(1);
  ASSERT_TRUE(q.Push("first").ok());
  CancelSource source;
  Notification done;
  std::thread producer([&] {
    std::string item = "second";
    Status st = q.Push(std::move(item), source.token());
    EXPECT_EQ(st.code(), Code::kCancelled);
    EXPECT_EQ(item, "second");  // NOLINT(bugprone-use-after-move): not moved on failure.
    done.Notify();
  });
  source.Cancel();
  EXPECT_TRUE(done.WaitFor());
  producer.join();
  EXPECT_EQ(q.size(), 1u);
}

TEST(BoundedMpscQueueTest, CancelUnblocksPop) {
  BoundedMpscQueue<int> q(4);
  CancelSource source;
  Notification done;
  std::thread consumer([&] {
    EXPECT_EQ(q.Pop(source.token()), std::nullopt);
    done.Notify();
  });
  source.Cancel();
  EXPECT_TRUE(done.WaitFor());
  consumer.join();
}

TEST(BoundedMpscQueueTest, CloseFailsPushesAndDrainsThenEnds) {
  BoundedMpscQueue<int> q(2);
  ASSERT_TRUE(q.Push(1).ok());
  ASSERT_TRUE(q.Push(2).ok());
  Notification blocked_push_done;
  std::thread producer([&] {
    EXPECT_EQ(q.Push(3).code(), Code::kCancelled);
    blocked_push_done.Notify();
  });
  q.Close();
  EXPECT_TRUE(blocked_push_done.WaitFor());
  producer.join();
  EXPECT_TRUE(q.closed());
  EXPECT_FALSE(q.TryPush(4));
  EXPECT_EQ(q.Push(4).code(), Code::kCancelled);
  EXPECT_EQ(q.Pop(), 1);
  EXPECT_EQ(q.TryPop(), 2);
  EXPECT_EQ(q.Pop(), std::nullopt);  // Closed and drained: does not block.
  std::vector<int> rest;
  EXPECT_EQ(q.PopAll(&rest), 0u);
}

TEST(BoundedMpscQueueTest, CloseWakesBlockedPop) {
  BoundedMpscQueue<int> q(2);
  Notification done;
  std::thread consumer([&] {
    EXPECT_EQ(q.Pop(), std::nullopt);
    done.Notify();
  });
  q.Close();
  EXPECT_TRUE(done.WaitFor());
  consumer.join();
}

TEST(BoundedMpscQueueTest, PopAllTakesABatch) {
  BoundedMpscQueue<int> q(10);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(q.TryPush(int{i}));
  std::vector<int> out;
  EXPECT_EQ(q.PopAll(&out, CancelToken(), 3), 3u);
  EXPECT_EQ(out, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(q.TryPopAll(&out), 2u);
  EXPECT_EQ(out, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(q.TryPopAll(&out), 0u);
  EXPECT_EQ(q.PopAll(&out, CancelToken(), 0), 0u);
}

TEST(BoundedMpscQueueTest, PopAllBlocksForTheFirstItem) {
  BoundedMpscQueue<int> q(4);
  std::vector<int> out;
  std::thread consumer([&] { EXPECT_EQ(q.PopAll(&out), 1u); });
  ASSERT_TRUE(q.Push(7).ok());
  consumer.join();
  EXPECT_EQ(out, std::vector<int>{7});
}

struct Item {
  int producer;
  int seq;
};

// Closes the queue and joins the producers when the test body returns, even
// after a failed ASSERT, so no thread outlives the test.
template <typename Queue>
class ProducerThreads {
 public:
  explicit ProducerThreads(Queue* q) : q_(q) {}
  ~ProducerThreads() {
    q_->Close();
    for (auto& t : threads_) t.join();
  }
  template <typename Fn>
  void Start(Fn fn) {
    threads_.emplace_back(std::move(fn));
  }

 private:
  Queue* q_;
  std::vector<std::thread> threads_;
};

// The checks below: several producers, one consumer, nothing lost, and each
// producer's items arrive in the order it pushed them.
TEST(BoundedMpscQueueTest, ManyProducersNoLossPerProducerFifo) {
  constexpr int kProducers = 4;
  constexpr int kPerProducer = 5000;
  BoundedMpscQueue<Item> q(64);
  ProducerThreads producers(&q);
  for (int p = 0; p < kProducers; ++p) {
    producers.Start([&q, p] {
      for (int i = 0; i < kPerProducer; ++i) ASSERT_TRUE(q.Push(Item{p, i}).ok());
    });
  }
  std::vector<int> next(kProducers, 0);
  int received = 0;
  std::vector<Item> batch;
  while (received < kProducers * kPerProducer) {
    batch.clear();
    if (received % 2 == 0) {
      ASSERT_GT(q.PopAll(&batch, CancelToken(), 100), 0u);
    } else {
      std::optional<Item> one = q.Pop();
      ASSERT_TRUE(one.has_value());
      batch.push_back(*one);
    }
    for (const Item& item : batch) {
      ASSERT_EQ(item.seq, next[item.producer]) << "producer " << item.producer;
      ++next[item.producer];
      ++received;
    }
  }
  EXPECT_EQ(q.size(), 0u);
}

TEST(UnboundedMpscQueueTest, PushNeverBlocksAndCloseEnds) {
  UnboundedMpscQueue<int> q;
  for (int i = 0; i < 100000; ++i) ASSERT_TRUE(q.Push(int{i}));
  EXPECT_EQ(q.size(), 100000u);
  q.Close();
  EXPECT_FALSE(q.Push(1));
  std::vector<int> out;
  EXPECT_EQ(q.TryPopAll(&out), 100000u);
  EXPECT_EQ(out.front(), 0);
  EXPECT_EQ(out.back(), 99999);
  EXPECT_EQ(q.Pop(), std::nullopt);
}

TEST(UnboundedMpscQueueTest, ManyProducersNoLossPerProducerFifo) {
  constexpr int kProducers = 4;
  constexpr int kPerProducer = 5000;
  UnboundedMpscQueue<Item> q;
  {
    ProducerThreads producers(&q);
    for (int p = 0; p < kProducers; ++p) {
      producers.Start([&q, p] {
        for (int i = 0; i < kPerProducer; ++i) ASSERT_TRUE(q.Push(Item{p, i}));
      });
    }
    std::vector<int> next(kProducers, 0);
    int received = 0;
    std::vector<Item> batch;
    while (received < kProducers * kPerProducer) {
      batch.clear();
      ASSERT_GT(q.PopAll(&batch), 0u);
      for (const Item& item : batch) {
        ASSERT_EQ(item.seq, next[item.producer]) << "producer " << item.producer;
        ++next[item.producer];
        ++received;
      }
    }
  }
  // The producers are done and the queue is closed: a consumer gets the end.
  Notification done;
  std::thread consumer([&] {
    EXPECT_EQ(q.Pop(), std::nullopt);
    done.Notify();
  });
  EXPECT_TRUE(done.WaitFor());
  consumer.join();
  EXPECT_FALSE(q.Push(Item{0, 0}));
}

}  // namespace
}  // namespace sluice
