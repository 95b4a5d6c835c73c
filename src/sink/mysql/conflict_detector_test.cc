// Conflict detection, conflict keys and PostFlush ordering, without a database.
#include "sink/mysql/conflict_detector.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "codec/mysql_type.h"
#include "common/lifecycle.h"
#include "common/test_util.h"
#include "sink/mysql/flush_orderer.h"
#include "sink/mysql/mysql_test_util.h"
#include "sink/mysql/row_keys.h"

namespace sluice::sink {
namespace {

namespace mt = codec::mysql_type;
namespace mf = codec::mysql_flag;
using codec::Datum;
using Detector = ConflictDetector<int>;

// Pops without blocking forever: the caller knows something is queued.
std::vector<Detector::Ticket*> PopOne(Detector* d, size_t w, size_t max_weight = 1) {
  std::vector<Detector::Ticket*> out;
  EXPECT_TRUE(d->Pop(w, max_weight, &out));
  return out;
}

TEST(ConflictDetectorTest, DifferentKeysGoToDifferentWorkers) {
  Detector d(2);
  d.Add({1}, 10, 1);
  d.Add({2}, 20, 1);
  // Both are ready at once, one per worker: they can be written in parallel.
  auto a = PopOne(&d, 0);
  auto b = PopOne(&d, 1);
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(a[0]->item + b[0]->item, 30);
  d.Finish(a[0]);
  d.Finish(b[0]);
  EXPECT_EQ(d.pending(), 0u);
}

TEST(ConflictDetectorTest, SameKeyWaitsOrFollowsOnTheSameWorker) {
  Detector d(2);
  d.Add({7, 1}, 1, 1);
  auto first = PopOne(&d, 0);  // The least loaded worker is 0.
  ASSERT_EQ(first[0]->item, 1);
  // Conflicts with a ticket being written on worker 0: queued behind it there.
  d.Add({7}, 2, 1);
  auto second = PopOne(&d, 0);
  ASSERT_EQ(second[0]->item, 2);
  d.Finish(first[0]);
  d.Finish(second[0]);
  EXPECT_EQ(d.pending(), 0u);
}

// A worker finishes its whole batch at once, including a ticket queued on it
// behind a dependency in the same batch; a ticket that also waits on the
// batch goes once its other dependency is finished too.
TEST(ConflictDetectorTest, FinishingABatchReleasesEveryKeyOnce) {
  Detector d(2);
  d.Add({7}, 1, 1);
  auto first = PopOne(&d, 0);
  d.Add({7, 8}, 2, 1);  // Behind ticket 1 on worker 0.
  d.Add({9}, 3, 1);     // Free: worker 1.
  auto batch = first;
  auto second = PopOne(&d, 0);
  batch.push_back(second[0]);
  ASSERT_EQ(batch[1]->item, 2);
  auto other = PopOne(&d, 1);
  d.Add({8, 9}, 4, 1);  // Waits for ticket 2 (worker 0) and ticket 3 (worker 1).
  EXPECT_EQ(d.queued(0) + d.queued(1), 0u);
  d.Finish(batch);
  EXPECT_EQ(d.pending(), 2u);
  // Ticket 4's keys from the batch are released; ticket 3 still holds 9.
  EXPECT_EQ(d.queued(0) + d.queued(1), 0u);
  d.Finish(other);
  std::vector<Detector::Ticket*> last;
  for (size_t w = 0; w < 2 && last.empty(); ++w) {
    if (d.queued(w) > 0) last = PopOne(&d, w);
  }
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0]->item, 4);
  d.Finish(last);
  EXPECT_EQ(d.pending(), 0u);
  d.WaitIdle();
}

TEST(ConflictDetectorTest, AGroupStaysOnItsWorkerWithinTheSlack) {
  Detector d(2, /*affinity_slack=*/2);
  // Group 5 starts on worker 0 (least loaded); group 6 then goes to the
  // empty worker 1.
  d.Add({1}, 1, 1, /*group=*/5);
  d.Add({2}, 2, 1, /*group=*/6);
  // More of group 5 follows it while worker 0 has at most 2 rows more
  // queued than worker 1; the next one goes to the least loaded worker.
  d.Add({3}, 3, 1, 5);  // Queued 1 vs 1.
  d.Add({4}, 4, 1, 5);  // 2 vs 1.
  d.Add({5}, 5, 1, 5);  // 3 vs 1: still within the slack.
  d.Add({6}, 6, 1, 5);  // 4 vs 1: over it, so worker 1.
  EXPECT_EQ(d.queued(0), 4u);
  EXPECT_EQ(d.queued(1), 2u);
  auto w0 = PopOne(&d, 0, 10);
  auto w1 = PopOne(&d, 1, 10);
  std::vector<int> items0, items1;
  for (auto* t : w0) items0.push_back(t->item);
  for (auto* t : w1) items1.push_back(t->item);
  EXPECT_EQ(items0, (std::vector<int>{1, 3, 4, 5}));
  EXPECT_EQ(items1, (std::vector<int>{2, 6}));
  for (auto* t : w0) d.Finish(t);
  for (auto* t : w1) d.Finish(t);
  EXPECT_EQ(d.pending(), 0u);
}

// Items of `batch`, in order.
std::vector<int> Items(const std::vector<Detector::Ticket*>& batch) {
  std::vector<int> items;
  for (auto* t : batch) items.push_back(t->item);
  return items;
}

TEST(ConflictDetectorTest, ATicketStartsABatchRatherThanJoinAnotherGroupsBatch) {
  Detector d(2, /*affinity_slack=*/4, /*batch_weight=*/4);
  d.Add({1}, 1, 4, /*group=*/5);  // Worker 0: a full batch of group 5.
  d.Add({2}, 2, 1, /*group=*/6);  // Worker 1, the empty one.
  // Worker 1 is the least loaded, but there group 7 would share a batch
  // with group 6; on worker 0 (within the slack) it starts the next batch.
  d.Add({3}, 3, 1, /*group=*/7);
  // Asserted, so that a wrong placement fails instead of blocking a Pop().
  ASSERT_EQ(d.queued(0), 2u);
  ASSERT_EQ(d.queued(1), 1u);
  auto w1 = PopOne(&d, 1, 4);
  EXPECT_EQ(Items(w1), (std::vector<int>{2}));
  auto first = PopOne(&d, 0, 4);
  EXPECT_EQ(Items(first), (std::vector<int>{1}));
  d.Finish(first);
  auto second = PopOne(&d, 0, 4);
  EXPECT_EQ(Items(second), (std::vector<int>{3}));
  d.Finish(second);
  d.Finish(w1);
  EXPECT_EQ(d.pending(), 0u);
}

TEST(ConflictDetectorTest, AGroupFillsItsOpenBatchThenFollowsIt) {
  Detector d(2, /*affinity_slack=*/4, /*batch_weight=*/4);
  d.Add({1}, 1, 1, /*group=*/5);  // Worker 0.
  // Worker 1 stays empty (a batch would start there), but group 5 fills
  // its open batch on worker 0 and then starts the next one behind it.
  d.Add({3}, 3, 1, 5);  // 2 of 4.
  d.Add({4}, 4, 2, 5);  // 4 of 4.
  d.Add({5}, 5, 1, 5);  // The next batch, still within the slack.
  ASSERT_EQ(d.queued(0), 4u);
  ASSERT_EQ(d.queued(1), 0u);
  d.Add({2}, 2, 1, /*group=*/6);  // Worker 1.
  ASSERT_EQ(d.queued(1), 1u);
  auto first = PopOne(&d, 0, 4);
  EXPECT_EQ(Items(first), (std::vector<int>{1, 3, 4}));
  d.Finish(first);
  auto second = PopOne(&d, 0, 4);
  EXPECT_EQ(Items(second), (std::vector<int>{5}));
  d.Finish(second);
  d.Finish(PopOne(&d, 1, 4));
  EXPECT_EQ(d.pending(), 0u);
}

TEST(ConflictDetectorTest, AffinityNeverOverridesADependency) {
  Detector d(2, /*affinity_slack=*/100);
  d.Add({1}, 1, 1, /*group=*/5);  // Worker 0.
  d.Add({2}, 2, 1, /*group=*/6);  // Worker 1.
  // Group 5 would follow worker 0, but key 2 ties it to ticket 2 on worker 1.
  d.Add({2}, 3, 1, /*group=*/5);
  EXPECT_EQ(d.queued(0), 1u);
  EXPECT_EQ(d.queued(1), 2u);
  auto w1 = PopOne(&d, 1, 10);
  ASSERT_EQ(w1.size(), 2u);
  EXPECT_EQ(w1[0]->item, 2);
  EXPECT_EQ(w1[1]->item, 3);
  for (auto* t : w1) d.Finish(t);
  d.Finish(PopOne(&d, 0)[0]);
  EXPECT_EQ(d.pending(), 0u);
}

TEST(ConflictDetectorTest, WithoutSlackTheLeastLoadedWorkerWins) {
  Detector d(2);
  d.Add({1}, 1, 1, 5);
  d.Add({2}, 2, 1, 5);
  EXPECT_EQ(d.queued(0), 1u);
  EXPECT_EQ(d.queued(1), 1u);
  for (size_t w = 0; w < 2; ++w) d.Finish(PopOne(&d, w)[0]);
  EXPECT_EQ(d.pending(), 0u);
}

TEST(ConflictDetectorTest, ADependerReachedThroughSeveralKeysIsQueuedOnce) {
  Detector d(2);
  d.Add({1}, 1, 1);
  d.Add({1}, 2, 1);     // Follows ticket 1 on worker 0.
  d.Add({6, 7}, 3, 1);  // Free to run on the other worker.
  EXPECT_EQ(d.queued(0), 2u);
  EXPECT_EQ(d.queued(1), 1u);
  auto first = PopOne(&d, 0, /*max_weight=*/2);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0]->item, 1);
  EXPECT_EQ(first[1]->item, 2);
  auto other = PopOne(&d, 1);
  EXPECT_EQ(other[0]->item, 3);
  // Needs tickets 2 (worker 0) and 3 (worker 1, reached through two keys):
  // it waits for both to finish, then is queued once.
  d.Add({1, 6, 7, 1}, 4, 1);
  d.Finish(first[0]);
  d.Finish(first[1]);
  EXPECT_EQ(d.queued(0) + d.queued(1), 0u);
  d.Finish(other[0]);
  EXPECT_EQ(d.queued(0) + d.queued(1), 1u);
  d.Add({2}, 5, 1);
  EXPECT_EQ(d.pending(), 2u);
  // Destroyed with tickets still live: the detector frees them.
}

TEST(ConflictDetectorTest, TicketDependingOnTwoWorkersWaitsForBoth) {
  Detector d(2);
  d.Add({1}, 1, 1);
  d.Add({2}, 2, 1);
  auto a = PopOne(&d, 0);
  auto b = PopOne(&d, 1);
  d.Add({1, 2}, 3, 1);  // Needs both, which run on different workers.
  EXPECT_EQ(d.queued(0) + d.queued(1), 0u);
  d.Finish(a[0]);
  EXPECT_EQ(d.queued(0) + d.queued(1), 0u);  // Still waits for ticket 2.
  d.Finish(b[0]);
  ASSERT_EQ(d.queued(0) + d.queued(1), 1u);
  auto c = PopOne(&d, d.queued(0) == 1 ? 0 : 1);
  ASSERT_EQ(c[0]->item, 3);
  d.Finish(c[0]);
  EXPECT_EQ(d.pending(), 0u);
}

TEST(ConflictDetectorTest, ChainOfConflictsRunsInOrderUnderConcurrency) {
  constexpr int kWorkers = 4, kTxns = 2000, kKeys = 16;
  Detector d(kWorkers);
  std::vector<std::vector<int>> seen(kKeys);  // Written order per key.
  Mutex mu;
  ThreadGroup workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.Start("w", [&, w](StopToken) {
      std::vector<Detector::Ticket*> batch;
      while (true) {
        batch.clear();
        if (!d.Pop(w, 8, &batch)) return;
        for (Detector::Ticket* t : batch) {
          {
            MutexLock lock(&mu);
            seen[t->item % kKeys].push_back(t->item);
            seen[(t->item / kKeys) % kKeys].push_back(t->item);
          }
          d.Finish(t);
        }
      }
    });
  }
  for (int i = 0; i < kTxns; ++i) {
    d.Add({static_cast<uint64_t>(i % kKeys), static_cast<uint64_t>((i / kKeys) % kKeys)}, i, 1);
  }
  ASSERT_TRUE(PollUntil([&] { return d.pending() == 0; }, std::chrono::seconds(20)));
  d.Close();
  workers.Stop();
  for (int k = 0; k < kKeys; ++k) {
    std::vector<int> expect;
    for (int i = 0; i < kTxns; ++i) {
      if (i % kKeys == k || (i / kKeys) % kKeys == k) expect.push_back(i);
    }
    std::vector<int> got;
    for (int v : seen[k]) {
      if (got.empty() || got.back() != v) got.push_back(v);  // A txn with both keys equal.
    }
    EXPECT_EQ(got, expect) << "key " << k;
  }
}

TEST(ConflictDetectorTest, CloseHandsOutQueuedThenEnds) {
  Detector d(1);
  d.Add({1}, 1, 5);
  d.Add({2}, 2, 5);
  d.Close();
  std::vector<Detector::Ticket*> out;
  ASSERT_TRUE(d.Pop(0, 6, &out));
  EXPECT_EQ(out.size(), 1u);  // Weight 5 + 5 > 6.
  ASSERT_TRUE(d.Pop(0, 6, &out));
  EXPECT_EQ(out.size(), 2u);
  EXPECT_FALSE(d.Pop(0, 6, &out));
  d.Add({3}, 3, 1);  // Ignored after Close.
  EXPECT_EQ(d.pending(), 2u);
}

event::TableSchemaPtr KeyedSchema(std::string collate = "utf8mb4_bin") {
  using testing::Col;
  model::ColumnInfo name = Col(0, "name", mt::kVarchar);
  name.type.collate = collate;
  model::TableInfo t = testing::IntHandleTable(30, "k", {name, Col(0, "v", mt::kLong)});
  t.indices = {testing::Index(2, "uk", {"name"}, false, true)};
  return testing::Schema("db", t);
}

std::vector<Datum> Row(int64_t id, std::string name, int64_t v) {
  return {Datum::Int64(id), Datum::Bytes(name), Datum::Int64(v)};
}

bool Share(const event::DmlEventPtr& a, const event::DmlEventPtr& b) {
  auto ka = ConflictKeys(*a), kb = ConflictKeys(*b);
  for (uint64_t k : ka) {
    if (std::find(kb.begin(), kb.end(), k) != kb.end()) return true;
  }
  return false;
}

TEST(ConflictKeysTest, PrimaryAndUniqueKeysConflict) {
  auto s = KeyedSchema();
  using testing::Insert;
  using testing::Txn;
  auto a = Txn(s, 1, {Insert(Row(1, "x", 1))});
  EXPECT_TRUE(Share(a, Txn(s, 2, {testing::Delete(Row(1, "y", 2))})));  // Same id.
  EXPECT_TRUE(Share(a, Txn(s, 2, {Insert(Row(2, "x", 2))})));           // Same unique name.
  EXPECT_TRUE(Share(a, Txn(s, 2, {Insert(Row(2, "x  ", 2))})));         // PAD SPACE.
  EXPECT_FALSE(Share(a, Txn(s, 2, {Insert(Row(2, "X", 2))})));          // _bin: case matters.
  EXPECT_FALSE(Share(a, Txn(s, 2, {Insert(Row(2, "z", 1))})));
  // Another dispatcher of the same table still conflicts on the same row.
  EXPECT_TRUE(Share(a, Txn(s, 2, {Insert(Row(1, "q", 1))}, DispatcherId{0, 2})));
  auto ci = KeyedSchema("utf8mb4_general_ci");
  EXPECT_TRUE(Share(Txn(ci, 1, {Insert(Row(1, "x", 1))}), Txn(ci, 2, {Insert(Row(2, "X", 1))})));
}

TEST(ConflictKeysTest, KeylessRowsSerialiseTheirDispatcher) {
  using testing::Col;
  model::TableInfo t;
  t.id = 31;
  t.name = model::CIStr::From("nokey");
  t.columns = {Col(1, "a", mt::kLong)};
  auto s = testing::Schema("db", t);
  auto a = testing::Txn(s, 1, {testing::Insert({Datum::Int64(1)})}, DispatcherId{0, 1});
  auto b = testing::Txn(s, 2, {testing::Insert({Datum::Int64(2)})}, DispatcherId{0, 1});
  auto c = testing::Txn(s, 2, {testing::Insert({Datum::Int64(2)})}, DispatcherId{0, 2});
  EXPECT_TRUE(Share(a, b));
  EXPECT_FALSE(Share(a, c));
}

TEST(FlushOrdererTest, PostFlushFollowsAddOrderPerDispatcher) {
  auto s = KeyedSchema();
  FlushOrderer orderer;
  std::vector<int> order;
  std::vector<event::DmlEventPtr> events;
  std::vector<uint64_t> seqs;
  for (int i = 0; i < 4; ++i) {
    DispatcherId d{0, static_cast<uint64_t>(i % 2)};
    auto e = testing::Txn(s, 10 + i, {testing::Insert(Row(i, "n", i))}, d);
    e->AddPostFlush([&order, i] { order.push_back(i); });
    seqs.push_back(orderer.Register(e));
    events.push_back(e);
  }
  orderer.Done(events[2]->dispatcher_id, seqs[2]);  // Waits for event 0.
  orderer.Done(events[3]->dispatcher_id, seqs[3]);  // Waits for event 1.
  EXPECT_TRUE(order.empty());
  orderer.Done(events[1]->dispatcher_id, seqs[1]);
  EXPECT_EQ(order, (std::vector<int>{1, 3}));
  orderer.Done(events[0]->dispatcher_id, seqs[0]);
  EXPECT_EQ(order, (std::vector<int>{1, 3, 0, 2}));
  EXPECT_EQ(orderer.pending(), 0u);
}

// A worker's batch marks all its events at once: each lane still delivers
// in add order, and only its written prefix.
TEST(FlushOrdererTest, ABatchOfDoneEventsDeliversEachLaneInOrder) {
  auto s = KeyedSchema();
  FlushOrderer orderer;
  std::vector<int> order;
  std::vector<FlushOrderer::Written> written;
  for (int i = 0; i < 6; ++i) {
    DispatcherId d{0, static_cast<uint64_t>(i % 2)};
    auto e = testing::Txn(s, 10 + i, {testing::Insert(Row(i, "n", i))}, d);
    e->AddPostFlush([&order, i] { order.push_back(i); });
    written.push_back({d, orderer.Register(e)});
  }
  // Events 5, 2, 0 and 1 in one batch: lane 0 has 0 and 2 (4 is missing),
  // lane 1 has 1 (3 is missing, so 5 waits).
  orderer.Done({written[5], written[2], written[0], written[1]});
  auto lane = [&order](int parity) {
    std::vector<int> out;
    for (int i : order) {
      if (i % 2 == parity) out.push_back(i);
    }
    return out;
  };
  EXPECT_EQ(lane(0), (std::vector<int>{0, 2}));
  EXPECT_EQ(lane(1), (std::vector<int>{1}));
  orderer.Done({written[3], written[4]});
  EXPECT_EQ(lane(0), (std::vector<int>{0, 2, 4}));
  EXPECT_EQ(lane(1), (std::vector<int>{1, 3, 5}));
  EXPECT_EQ(orderer.pending(), 0u);
  orderer.Done({written[3]});  // Already delivered: ignored.
  EXPECT_EQ(order.size(), 6u);
}

}  // namespace
}  // namespace sluice::sink
