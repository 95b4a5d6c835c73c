#include "eventstore/event_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "codec/tablecodec.h"
#include "common/clock.h"
#include "common/test_util.h"
#include "common/thread_annotations.h"

namespace sluice::eventstore {
namespace {

using logpuller::KvConsumer;

// Records subscriptions and hands the test the consumer of each.
class FakePuller : public logpuller::SpanSubscriber {
 public:
  struct Sub {
    Span span;
    Ts start_ts;
    std::shared_ptr<KvConsumer> consumer;
    bool active = true;
  };

  Result<SubscriptionId> Subscribe(const Span& span, Ts start_ts,
                                   std::shared_ptr<KvConsumer> consumer,
                                   const logpuller::SubscribeOptions& options) override {
    MutexLock lock(&mu_);
    if (!fail_next_.ok()) {
      Status st = fail_next_;
      fail_next_ = Status::Ok();
      return st;
    }
    SubscriptionId id(next_id_++);
    subs_[id] = Sub{span, start_ts, std::move(consumer), true};
    last_ = id;
    return id;
  }

  void Unsubscribe(SubscriptionId id) override {
    MutexLock lock(&mu_);
    unsubscribed_.push_back(id);
    auto it = subs_.find(id);
    if (it != subs_.end()) it->second.active = false;
  }

  void FailNext(Status st) {
    MutexLock lock(&mu_);
    fail_next_ = std::move(st);
  }
  SubscriptionId last() {
    MutexLock lock(&mu_);
    return last_;
  }
  Sub sub(SubscriptionId id) {
    MutexLock lock(&mu_);
    return subs_.at(id);
  }
  std::vector<SubscriptionId> unsubscribed() {
    MutexLock lock(&mu_);
    return unsubscribed_;
  }

 private:
  Mutex mu_;
  uint64_t next_id_ = 100;
  SubscriptionId last_;
  Status fail_next_;
  std::map<SubscriptionId, Sub> subs_;
  std::vector<SubscriptionId> unsubscribed_;
};

constexpr TableId kTable(42);

RawKvEntry Row(int64_t handle, uint64_t commit, uint64_t start, KvOp op = KvOp::kPut,
               std::string old_value = "", TableId table = kTable) {
  RawKvEntry e;
  e.op = op;
  e.key = codec::EncodeRowKey(table, handle);
  if (op == KvOp::kPut) {
    e.value = "v";
    e.value += std::to_string(handle);
  }
  e.old_value = std::move(old_value);
  e.start_ts = Ts(start);
  e.commit_ts = Ts(commit);
  e.region_id = RegionId(3);
  return e;
}

DispatcherId Disp(uint64_t n) { return DispatcherId{7, n}; }

struct Notified {
  Mutex mu;
  std::vector<std::pair<Ts, Ts>> calls GUARDED_BY(mu);
};

class EventStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(OpenStore().ok()); }
  void TearDown() override {
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(options_.data_dir, ec);
  }

  // Destroys the current store (closing its instances) and opens a new one.
  Status OpenStore() {
    store_.reset();
    options_.data_dir = ::testing::TempDir() + "/es_" +
                        ::testing::UnitTest::GetInstance()->current_test_info()->name();
    options_.clock = &clock_;
    options_.memtable_bytes = 4 << 20;
    options_.block_cache_bytes = 8 << 20;
    options_.max_batch_entries = 512;
    ASSIGN_OR_RETURN(store_, EventStore::Open(options_, &puller_));
    return Status::Ok();
  }

  // Registers `id` and returns the consumer the puller got.
  std::shared_ptr<KvConsumer> Register(DispatcherId id, Ts start, Notified* notified = nullptr,
                                       TableId table = kTable) {
    NotifyFn fn;
    if (notified != nullptr) {
      fn = [notified](Ts r, Ts m) {
        MutexLock lock(&notified->mu);
        notified->calls.emplace_back(r, m);
      };
    }
    Status st = store_->RegisterDispatcher(id, table, ToComparable(TableRecordSpan(table)), start,
                                           std::move(fn));
    EXPECT_TRUE(st.ok()) << st.ToString();
    return puller_.sub(puller_.last()).consumer;
  }

  // Reopens the store with one instance whose writer waits in its first
  // round (held_.in_round tells it got there) until held_.release.
  Status OpenWithHeldFirstRound() {
    store_->Stop();
    options_.num_dbs = 1;
    options_.before_write_round_for_testing = [this] {
      if (held_.first.exchange(false)) {
        held_.in_round.Notify();
        held_.release.WaitFor(std::chrono::seconds(10));
      }
    };
    return OpenStore();
  }

  // Hands `batch` to the consumer and waits for its persisted callback.
  static void Persist(KvConsumer* consumer, KvBatch batch) {
    Notification done;
    consumer->ConsumeKvEvents(std::move(batch), [&done] { done.Notify(); });
    ASSERT_TRUE(done.WaitFor());
  }

  struct Scan {
    std::vector<RawKvEntry> rows;
    std::vector<bool> new_txn;
    Status status;
    ScanCursor cursor;
  };
  Scan ReadAll(DispatcherId id, Ts from, Ts to, std::optional<ScanCursor> cursor = std::nullopt,
               size_t limit = SIZE_MAX) {
    Scan scan;
    auto it = store_->GetIterator(id, from, to, std::move(cursor));
    EXPECT_TRUE(it.ok()) << it.status().ToString();
    if (!it.ok()) return scan;
    RawKvEntry e;
    bool new_txn = false;
    while (scan.rows.size() < limit && (*it)->Next(&e, &new_txn)) {
      scan.rows.push_back(e);
      scan.new_txn.push_back(new_txn);
    }
    scan.status = (*it)->status();
    scan.cursor = (*it)->cursor();
    return scan;
  }

  // Advances the clock by one GC interval and waits for the pass it runs.
  void RunGcPass() {
    uint64_t before = store_->stats().gc_passes;
    ASSERT_TRUE(clock_.AwaitWaiters(1));
    clock_.Advance(options_.gc_interval);
    ASSERT_TRUE(PollUntil([&] { return store_->stats().gc_passes > before; }));
  }

  struct HeldRound {
    std::atomic<bool> first{true};
    Notification in_round;
    Notification release;
  };

  ManualClock clock_;
  FakePuller puller_;
  HeldRound held_;  // Before store_: its writer may wait on it.
  EventStoreOptions options_;
  std::unique_ptr<EventStore> store_;
};

TEST_F(EventStoreTest, SubscribesTheTableSpanFromTheStartTs) {
  Register(Disp(1), Ts(5));
  FakePuller::Sub sub = puller_.sub(puller_.last());
  EXPECT_EQ(sub.span, ToComparable(TableRecordSpan(kTable)));
  EXPECT_EQ(sub.start_ts, Ts(5));
  EXPECT_EQ(store_->stats().subscriptions, 1u);
  EXPECT_EQ(store_->RegisterDispatcher(Disp(1), kTable, sub.span, Ts(5), nullptr).code(),
            Code::kAlreadyExists);
}

TEST_F(EventStoreTest, SubscribeFailureIsReturnedAndLeavesNothing) {
  puller_.FailNext(Unavailable("no stores"));
  Status st = store_->RegisterDispatcher(Disp(1), kTable, Span{}, Ts(5), nullptr);
  EXPECT_EQ(st.code(), Code::kUnavailable);
  EXPECT_EQ(store_->stats().subscriptions, 0u);
  EXPECT_EQ(store_->GetIterator(Disp(1), Ts(5), Ts(5)).status().code(), Code::kNotFound);
}

TEST_F(EventStoreTest, OrdersByCommitThenStartThenDmlOrderAcrossBatches) {
  auto c = Register(Disp(1), Ts(5));
  // Written out of order across three batches.
  Persist(c.get(), {Row(1, 30, 25), Row(2, 20, 15, KvOp::kPut)});
  Persist(c.get(),
          {Row(3, 20, 15, KvOp::kDelete), Row(4, 20, 12), Row(5, 20, 15, KvOp::kPut, "o")});
  Persist(c.get(), {Row(6, 10, 8), Row(0, 20, 15, KvOp::kPut)});
  c->AdvanceResolvedTs(Ts(30));
  Scan scan = ReadAll(Disp(1), Ts(5), Ts(30));
  ASSERT_TRUE(scan.status.ok());
  std::vector<int64_t> handles;
  for (const RawKvEntry& e : scan.rows) {
    handles.push_back(codec::DecodeRowKey(e.key)->handle.int_value);
  }
  // (10,8) | (20,12) | (20,15): delete 3, update 5, inserts 0 and 2 | (30,25).
  EXPECT_EQ(handles, (std::vector<int64_t>{6, 4, 3, 5, 0, 2, 1}));
  EXPECT_EQ(scan.new_txn, (std::vector<bool>{true, true, true, false, false, false, true}));
  EXPECT_EQ(scan.rows[3], Row(5, 20, 15, KvOp::kPut, "o"));
  EXPECT_EQ(scan.rows[2], Row(3, 20, 15, KvOp::kDelete));
  EXPECT_EQ(store_->stats().entries_written, 7u);
}

// An incremental scan hands rows over in row-key order with commit ts all
// over the place. Every row must read back in commit-ts order, and a change
// delivered twice with different bytes keeps the later copy, within one
// RocksDB write batch and across batches (512 entries here).
TEST_F(EventStoreTest, ScanOrderBatchesReadBackInCommitOrderAndTheLaterDuplicateWins) {
  auto c = Register(Disp(1), Ts(5));
  KvBatch scan;
  for (int64_t h = 0; h < 1500; ++h) {
    scan.push_back(Row(h, 10 + static_cast<uint64_t>((h * 7919) % 1000), 9));
  }
  // Handle 3 again in the same write batch, handle 7 again two batches later.
  RawKvEntry again3 = scan[3];
  again3.value = "second";
  scan.insert(scan.begin() + 100, again3);
  RawKvEntry again7 = scan[7];
  again7.value = "second";
  scan.push_back(again7);
  Persist(c.get(), std::move(scan));
  c->AdvanceResolvedTs(Ts(2000));
  Scan read = ReadAll(Disp(1), Ts(5), Ts(2000));
  ASSERT_TRUE(read.status.ok());
  ASSERT_EQ(read.rows.size(), 1500u);
  for (size_t i = 1; i < read.rows.size(); ++i) {
    ASSERT_LE(read.rows[i - 1].commit_ts, read.rows[i].commit_ts) << "at " << i;
  }
  for (const RawKvEntry& e : read.rows) {
    int64_t handle = codec::DecodeRowKey(e.key)->handle.int_value;
    if (handle == 3 || handle == 7) {
      EXPECT_EQ(e.value, "second") << handle;
    } else {
      EXPECT_EQ(e.value, "v" + std::to_string(handle));
    }
  }
}

TEST_F(EventStoreTest, IteratorCoversFromExclusiveToInclusive) {
  auto c = Register(Disp(1), Ts(5));
  Persist(c.get(), {Row(1, 10, 9), Row(2, 20, 19), Row(3, 30, 29), Row(4, 40, 39)});
  c->AdvanceResolvedTs(Ts(40));
  Scan scan = ReadAll(Disp(1), Ts(10), Ts(30));
  ASSERT_EQ(scan.rows.size(), 2u);
  EXPECT_EQ(scan.rows[0].commit_ts, Ts(20));
  EXPECT_EQ(scan.rows[1].commit_ts, Ts(30));
  EXPECT_TRUE(ReadAll(Disp(1), Ts(20), Ts(20)).rows.empty());
  EXPECT_EQ(ReadAll(Disp(1), Ts(5), Ts(40)).rows.size(), 4u);
}

TEST_F(EventStoreTest, DataIsKeptPerSubscription) {
  auto a = Register(Disp(1), Ts(5));
  auto b = Register(Disp(2), Ts(5), nullptr, TableId(43));
  auto c = Register(Disp(3), Ts(5));  // Same table as Disp(1), own subscription.
  Persist(a.get(), {Row(1, 10, 9)});
  Persist(b.get(), {Row(2, 10, 9, KvOp::kPut, "", TableId(43))});
  Persist(c.get(), {Row(3, 10, 9), Row(4, 11, 9)});
  for (auto* k : {a.get(), b.get(), c.get()}) k->AdvanceResolvedTs(Ts(20));
  EXPECT_EQ(ReadAll(Disp(1), Ts(5), Ts(20)).rows.size(), 1u);
  EXPECT_EQ(ReadAll(Disp(2), Ts(5), Ts(20)).rows.at(0), Row(2, 10, 9, KvOp::kPut, "", TableId(43)));
  EXPECT_EQ(ReadAll(Disp(3), Ts(5), Ts(20)).rows.size(), 2u);
}

TEST_F(EventStoreTest, CursorResumesInsideALargeTransactionExactlyOnce) {
  auto c = Register(Disp(1), Ts(5));
  KvBatch big;
  for (int64_t h = 0; h < 10000; ++h) big.push_back(Row(h, 100, 90));
  Persist(c.get(), std::move(big));  // Written in chunks of max_batch_entries.
  Persist(c.get(), {Row(1, 110, 105)});
  c->AdvanceResolvedTs(Ts(110));

  Scan first = ReadAll(Disp(1), Ts(5), Ts(110), std::nullopt, 100);
  ASSERT_EQ(first.rows.size(), 100u);
  EXPECT_EQ(first.cursor.commit_ts, Ts(100));
  EXPECT_EQ(first.cursor.start_ts, Ts(90));

  Scan rest = ReadAll(Disp(1), Ts(100), Ts(110), first.cursor);
  ASSERT_TRUE(rest.status.ok());
  ASSERT_EQ(rest.rows.size(), 10000u - 100u + 1u);
  EXPECT_FALSE(rest.new_txn.front());  // Same transaction as the cursor.
  EXPECT_TRUE(rest.new_txn.back());
  std::set<std::string> keys;
  for (const auto* scan : {&first, &rest}) {
    for (const RawKvEntry& e : scan->rows) {
      if (e.commit_ts == Ts(100)) {
        EXPECT_TRUE(keys.insert(e.key).second);
      }
    }
  }
  EXPECT_EQ(keys.size(), 10000u);

  // A cursor without a position skips the rest of that transaction.
  Scan after = ReadAll(Disp(1), Ts(100), Ts(110), ScanCursor{Ts(100), Ts(90), ""});
  ASSERT_EQ(after.rows.size(), 1u);
  EXPECT_EQ(after.rows[0].commit_ts, Ts(110));
}

TEST_F(EventStoreTest, LateDataIsDroppedAndCounted) {
  auto c = Register(Disp(1), Ts(5));
  c->AdvanceResolvedTs(Ts(50));
  Persist(c.get(), {Row(1, 40, 39), Row(2, 50, 49), Row(3, 60, 59)});
  Persist(c.get(), {Row(4, 3, 2)});  // Wholly late: still called back.
  c->AdvanceResolvedTs(Ts(60));
  Scan scan = ReadAll(Disp(1), Ts(5), Ts(60));
  ASSERT_EQ(scan.rows.size(), 1u);
  EXPECT_EQ(scan.rows[0].commit_ts, Ts(60));
  EXPECT_EQ(store_->stats().entries_dropped_late, 3u);
  EXPECT_EQ(store_->stats().entries_written, 1u);
}

TEST_F(EventStoreTest, NotifiesOnEachResolvedAdvanceWithMaxCommitTs) {
  Notified notified;
  auto c = Register(Disp(1), Ts(5), &notified);
  Persist(c.get(), {Row(1, 80, 70), Row(2, 70, 60)});
  c->AdvanceResolvedTs(Ts(75));
  c->AdvanceResolvedTs(Ts(75));  // Not an advance.
  c->AdvanceResolvedTs(Ts(74));
  c->AdvanceResolvedTs(Ts(90));
  MutexLock lock(&notified.mu);
  ASSERT_EQ(notified.calls.size(), 2u);
  EXPECT_EQ(notified.calls[0], std::make_pair(Ts(75), Ts(80)));
  EXPECT_EQ(notified.calls[1], std::make_pair(Ts(90), Ts(80)));
}

TEST_F(EventStoreTest, GcDeletesUpToTheCheckpointAndKeepsTheRest) {
  auto c = Register(Disp(1), Ts(5));
  Persist(c.get(), {Row(1, 10, 9), Row(2, 20, 19), Row(3, 30, 29), Row(4, 40, 39), Row(5, 50, 49)});
  c->AdvanceResolvedTs(Ts(50));
  store_->UpdateDispatcherCheckpoint(Disp(1), Ts(30));
  store_->UpdateDispatcherCheckpoint(Disp(1), Ts(20));  // Going back is ignored.
  RunGcPass();
  EXPECT_EQ(*store_->CountKeysForTesting(Disp(1)), 2u);
  EXPECT_GE(store_->stats().gc_delete_ranges, 1u);
  Scan scan = ReadAll(Disp(1), Ts(30), Ts(50));
  ASSERT_EQ(scan.rows.size(), 2u);
  EXPECT_EQ(scan.rows[0].commit_ts, Ts(40));

  // A checkpoint above the resolved ts is capped at it.
  store_->UpdateDispatcherCheckpoint(Disp(1), Ts(1000));
  Persist(c.get(), {Row(6, 60, 59)});
  RunGcPass();
  EXPECT_EQ(*store_->CountKeysForTesting(Disp(1)), 1u);
  c->AdvanceResolvedTs(Ts(60));
  RunGcPass();
  EXPECT_EQ(*store_->CountKeysForTesting(Disp(1)), 0u);
}

// Scattered (scan-order) writes and GC range deletions share a memtable:
// the writers' insert hints must never mix the point and range-deletion
// skip lists (RocksDB keeps one hint map for both; a DeleteRange given a hint
// leaves a foreign splice that the next write to the same table follows).
TEST_F(EventStoreTest, GcRangeDeletesBetweenScatteredWritesLoseNothing) {
  auto c = Register(Disp(1), Ts(5));
  constexpr int kRounds = 6;
  constexpr int64_t kRows = 700;
  uint64_t base = 10;
  for (int round = 0; round < kRounds; ++round) {
    KvBatch batch;
    for (int64_t h = 0; h < kRows; ++h) {
      const uint64_t commit = base + static_cast<uint64_t>((h * 7919) % kRows);
      batch.push_back(Row(round * kRows + h, commit, commit - 1));
    }
    Persist(c.get(), std::move(batch));
    base += kRows;
    c->AdvanceResolvedTs(Ts(base - 1));
    // Keep the last round's rows; delete everything before them.
    store_->UpdateDispatcherCheckpoint(Disp(1), Ts(base - 1 - kRows));
    RunGcPass();
  }
  EXPECT_GE(store_->stats().gc_delete_ranges, static_cast<uint64_t>(kRounds - 1));
  EXPECT_EQ(*store_->CountKeysForTesting(Disp(1)), static_cast<uint64_t>(kRows));
  Scan read = ReadAll(Disp(1), Ts(base - 1 - kRows), Ts(base - 1));
  ASSERT_TRUE(read.status.ok()) << read.status.ToString();
  ASSERT_EQ(read.rows.size(), static_cast<size_t>(kRows));
  for (size_t i = 1; i < read.rows.size(); ++i) {
    ASSERT_LT(read.rows[i - 1].commit_ts, read.rows[i].commit_ts) << "at " << i;
  }
}

TEST_F(EventStoreTest, GcCompactsDeletedRangesNowAndThen) {
  store_->Stop();
  options_.compact_every_gc_passes = 2;
  ASSERT_TRUE(OpenStore().ok());
  auto c = Register(Disp(1), Ts(5));
  Persist(c.get(), {Row(1, 10, 9), Row(2, 20, 19)});
  c->AdvanceResolvedTs(Ts(20));
  store_->UpdateDispatcherCheckpoint(Disp(1), Ts(20));
  RunGcPass();
  RunGcPass();
  EXPECT_EQ(store_->stats().compactions, 1u);
  EXPECT_EQ(*store_->CountKeysForTesting(), 0u);
}

TEST_F(EventStoreTest, UnregisterOfTheLastReaderUnsubscribesAndDeletesData) {
  auto c = Register(Disp(1), Ts(5));
  SubscriptionId pid = puller_.last();
  auto other = Register(Disp(2), Ts(5));
  Persist(c.get(), {Row(1, 10, 9), Row(2, 20, 19)});
  Persist(other.get(), {Row(3, 10, 9)});
  store_->UnregisterDispatcher(Disp(1));
  EXPECT_EQ(puller_.unsubscribed(), std::vector<SubscriptionId>{pid});
  ASSERT_TRUE(PollUntil([&] { return *store_->CountKeysForTesting() == 1u; }));
  EXPECT_EQ(store_->stats().subscriptions, 1u);
  EXPECT_EQ(store_->GetIterator(Disp(1), Ts(5), Ts(5)).status().code(), Code::kNotFound);
  // A late call from the puller is called back and stores nothing.
  Persist(c.get(), {Row(4, 30, 29)});
  EXPECT_EQ(*store_->CountKeysForTesting(), 1u);
  store_->UnregisterDispatcher(Disp(1));  // Unknown now: no-op.
  EXPECT_EQ(puller_.unsubscribed().size(), 1u);
}

TEST_F(EventStoreTest, PersistedCallbacksRunOnceIncludingBatchesPendingAtStop) {
  // Hold the writer in its first round so later batches stay queued.
  ASSERT_TRUE(OpenWithHeldFirstRound().ok());
  auto c = Register(Disp(1), Ts(5));
  constexpr int kBatches = 20;
  std::vector<std::atomic<int>> calls(kBatches + 1);
  for (int b = 0; b < kBatches; ++b) {
    c->ConsumeKvEvents({Row(b, 10 + b, 9)}, [&calls, b] { calls[b].fetch_add(1); });
    if (b == 0) {
      ASSERT_TRUE(held_.in_round.WaitFor());
    }
  }
  std::thread stopper([&] { store_->Stop(); });
  ASSERT_TRUE(PollUntil([&] { return !puller_.unsubscribed().empty(); }));
  held_.release.Notify();
  stopper.join();
  // After Stop, the consumer still calls back at once.
  c->ConsumeKvEvents({Row(99, 99, 98)}, [&calls] { calls[kBatches].fetch_add(1); });
  for (int b = 0; b <= kBatches; ++b) EXPECT_EQ(calls[b].load(), 1) << b;
  EXPECT_EQ(store_->stats().entries_written, 0u);
  EXPECT_EQ(store_->stats().entries_dropped_closed, static_cast<uint64_t>(kBatches + 1));
  EXPECT_EQ(puller_.unsubscribed().size(), 1u);
}

TEST_F(EventStoreTest, AnUrgentSubscriptionsQueuedBatchesAreWrittenFirst) {
  // Hold the writer in its first round while two subscriptions' batches
  // queue up interleaved; then one becomes urgent (a resolved ts waits).
  ASSERT_TRUE(OpenWithHeldFirstRound().ok());
  constexpr TableId kOther(43);
  auto a = Register(Disp(1), Ts(5));
  auto b = Register(Disp(2), Ts(5), nullptr, kOther);
  Mutex mu;
  std::vector<char> order;  // Which subscription each persisted batch was.
  auto done = [&](char who) {
    return [&mu, &order, who] {
      MutexLock lock(&mu);
      order.push_back(who);
    };
  };
  b->ConsumeKvEvents({Row(0, 10, 9, KvOp::kPut, "", kOther)}, done('-'));
  ASSERT_TRUE(held_.in_round.WaitFor());
  constexpr int kBatches = 5;
  for (int i = 0; i < kBatches; ++i) {
    b->ConsumeKvEvents({Row(i, 11 + i, 10 + i, KvOp::kPut, "", kOther)}, done('b'));
    a->ConsumeKvEvents({Row(i, 11 + i, 10 + i)}, done('a'));
  }
  a->SetPersistUrgent(true);
  held_.release.Notify();
  ASSERT_TRUE(PollUntil([&] {
    MutexLock lock(&mu);
    return order.size() == 2 * kBatches + 1;
  }));
  MutexLock lock(&mu);
  EXPECT_EQ(std::string(order.begin(), order.end()), "-aaaaabbbbb");
}

TEST_F(EventStoreTest, ConcurrentWritersEachCallbackOnce) {
  store_->Stop();
  options_.write_workers_per_db = 2;
  ASSERT_TRUE(OpenStore().ok());
  constexpr int kSubs = 4;
  constexpr int kBatches = 50;
  std::vector<std::shared_ptr<KvConsumer>> consumers;
  for (int s = 0; s < kSubs; ++s) consumers.push_back(Register(Disp(s), Ts(5)));
  std::atomic<int> callbacks{0};
  std::vector<std::thread> threads;
  for (int s = 0; s < kSubs; ++s) {
    threads.emplace_back([&, s] {
      for (int b = 0; b < kBatches; ++b) {
        KvBatch batch;
        for (int i = 0; i < 100; ++i) batch.push_back(Row(b * 100 + i, 10 + b, 9));
        consumers[s]->ConsumeKvEvents(std::move(batch), [&] { callbacks.fetch_add(1); });
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE(PollUntil([&] { return callbacks.load() == kSubs * kBatches; }));
  for (int s = 0; s < kSubs; ++s) {
    consumers[s]->AdvanceResolvedTs(Ts(10 + kBatches));
    EXPECT_EQ(ReadAll(Disp(s), Ts(5), Ts(10 + kBatches)).rows.size(), 100u * kBatches);
  }
  EXPECT_EQ(store_->stats().entries_written, 100u * kBatches * kSubs);
  EXPECT_EQ(callbacks.load(), kSubs * kBatches);
}

TEST_F(EventStoreTest, GetIteratorOutsideCheckpointAndResolvedIsInvalid) {
  auto c = Register(Disp(1), Ts(5));
  Persist(c.get(), {Row(1, 10, 9), Row(2, 20, 19)});
  c->AdvanceResolvedTs(Ts(20));
  store_->UpdateDispatcherCheckpoint(Disp(1), Ts(10));
  auto code = [&](Ts from, Ts to, std::optional<ScanCursor> cursor = std::nullopt) {
    return store_->GetIterator(Disp(1), from, to, std::move(cursor)).status().code();
  };
  EXPECT_EQ(code(Ts(10), Ts(21)), Code::kInvalidArgument);  // Above resolved.
  EXPECT_EQ(code(Ts(9), Ts(20)), Code::kInvalidArgument);   // Below checkpoint.
  EXPECT_EQ(code(Ts(15), Ts(12)), Code::kInvalidArgument);  // Reversed.
  EXPECT_EQ(code(Ts(10), Ts(20)), Code::kOk);
  EXPECT_EQ(code(Ts(12), Ts(20), ScanCursor{Ts(11), Ts(1), ""}), Code::kInvalidArgument);
  EXPECT_EQ(code(Ts(10), Ts(20), ScanCursor{Ts(10), Ts(9), ""}), Code::kInvalidArgument);
  EXPECT_EQ(code(Ts(12), Ts(20), ScanCursor{Ts(12), Ts(1), "junk"}), Code::kInvalidArgument);
  EXPECT_EQ(store_->GetIterator(Disp(9), Ts(10), Ts(20)).status().code(), Code::kNotFound);
}

TEST_F(EventStoreTest, CorruptValueIsCorruptionNotACrash) {
  auto c = Register(Disp(1), Ts(5));
  Persist(c.get(), {Row(1, 10, 9), Row(3, 30, 29)});
  ASSERT_TRUE(store_->PutRawForTesting(Disp(1), Row(2, 20, 19), "\x01\x01\xff").ok());
  c->AdvanceResolvedTs(Ts(30));
  Scan scan = ReadAll(Disp(1), Ts(5), Ts(30));
  ASSERT_EQ(scan.rows.size(), 1u);
  EXPECT_EQ(scan.status.code(), Code::kCorruption);
}

TEST_F(EventStoreTest, PullerErrorIsReported) {
  auto c = Register(Disp(1), Ts(5));
  EXPECT_TRUE(store_->SubscriptionStatus(Disp(1)).ok());
  c->OnSubscriptionError(Unavailable("region gone"));
  EXPECT_EQ(store_->SubscriptionStatus(Disp(1)).code(), Code::kUnavailable);
  EXPECT_EQ(store_->SubscriptionStatus(Disp(2)).code(), Code::kNotFound);
}

TEST_F(EventStoreTest, StopUnsubscribesEverythingAndRefusesNewWork) {
  Register(Disp(1), Ts(5));
  Register(Disp(2), Ts(5));
  store_->Stop();
  EXPECT_EQ(puller_.unsubscribed().size(), 2u);
  EXPECT_EQ(store_->RegisterDispatcher(Disp(3), kTable, Span{}, Ts(5), nullptr).code(),
            Code::kCancelled);
  EXPECT_EQ(store_->GetIterator(Disp(1), Ts(5), Ts(5)).status().code(), Code::kCancelled);
  store_->Stop();  // Idempotent.
}

TEST(EventStoreOpenTest, RejectsBadOptions) {
  FakePuller puller;
  EventStoreOptions options;
  EXPECT_EQ(EventStore::Open(options, &puller).status().code(), Code::kInvalidArgument);
  options.data_dir = ::testing::TempDir() + "/es_bad_options";
  EXPECT_EQ(EventStore::Open(options, nullptr).status().code(), Code::kInvalidArgument);
  options.num_dbs = 0;
  EXPECT_EQ(EventStore::Open(options, &puller).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace sluice::eventstore
