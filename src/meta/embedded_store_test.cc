#include <rocksdb/db.h>

#include <thread>

#include "common/test_util.h"
#include "meta/meta_test_util.h"
#include "meta/record_format.h"

namespace sluice::meta {
namespace {

using std::chrono::seconds;

std::vector<std::string> Keys(const std::vector<WatchEvent>& events) {
  std::vector<std::string> keys;
  for (const WatchEvent& e : events) keys.push_back(e.kv.key);
  return keys;
}

TEST_F(MetaStoreTest, RevisionsAreMonotonicAndPerKey) {
  EXPECT_EQ(*store_->CurrentRevision(), 0);
  EXPECT_EQ(*store_->Put("a", "1"), 1);
  EXPECT_EQ(*store_->Put("b", "1"), 2);
  EXPECT_EQ(*store_->Put("a", "2"), 3);
  std::optional<KeyValue> a = *store_->Get("a");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->value, "2");
  EXPECT_EQ(a->create_revision, 1);
  EXPECT_EQ(a->mod_revision, 3);
  EXPECT_EQ(a->version, 2);
  // Deleting a missing key commits nothing.
  EXPECT_EQ(*store_->Delete("missing"), 3);
  EXPECT_EQ(*store_->Delete("a"), 4);
  EXPECT_FALSE(store_->Get("a")->has_value());
  // A re-created key starts a new life.
  EXPECT_EQ(*store_->Put("a", "3"), 5);
  EXPECT_EQ((*store_->Get("a"))->create_revision, 5);
  EXPECT_EQ((*store_->Get("a"))->version, 1);
}

TEST_F(MetaStoreTest, TxnCompareAndSwap) {
  ASSERT_TRUE(store_->Put("epoch", "1").ok());
  const Revision rev = (*store_->Get("epoch"))->mod_revision;

  TxnRequest cas;
  cas.compares = {Compare::ModRevisionIs("epoch", rev)};
  cas.success = {TxnOp::Put("epoch", "2")};
  cas.failure = {TxnOp::Put("lost", "yes")};
  Result<TxnResponse> won = store_->Txn(cas);
  ASSERT_TRUE(won.ok());
  EXPECT_TRUE(won->succeeded);
  EXPECT_EQ(won->revision, rev + 1);

  // The same compare now fails and runs the failure branch.
  Result<TxnResponse> lost = store_->Txn(cas);
  ASSERT_TRUE(lost.ok());
  EXPECT_FALSE(lost->succeeded);
  EXPECT_EQ((*store_->Get("epoch"))->value, "2");
  EXPECT_EQ((*store_->Get("lost"))->value, "yes");

  TxnRequest by_value;
  by_value.compares = {Compare::ValueIs("epoch", "2"), Compare::Absent("fresh")};
  by_value.success = {TxnOp::Put("fresh", "x"), TxnOp::Delete("lost")};
  ASSERT_TRUE(store_->Txn(by_value)->succeeded);
  EXPECT_FALSE(store_->Get("lost")->has_value());
  EXPECT_FALSE(store_->Txn(by_value)->succeeded);  // "fresh" exists now.

  // As in etcd, a value compare on a missing key fails whatever the op.
  Compare not_equal = Compare::ValueIs("nobody", "x");
  not_equal.op = Compare::Op::kNotEqual;
  TxnRequest on_missing;
  on_missing.compares = {not_equal};
  EXPECT_FALSE(store_->Txn(on_missing)->succeeded);

  // A failed compare with an empty failure branch commits nothing.
  const Revision before = *store_->CurrentRevision();
  EXPECT_EQ(store_->Txn(by_value)->revision, before);
}

TEST_F(MetaStoreTest, TxnRejectsBadWrites) {
  TxnRequest twice;
  twice.success = {TxnOp::Put("k", "1"), TxnOp::Put("k", "2")};
  EXPECT_EQ(store_->Txn(twice).status().code(), Code::kInvalidArgument);
  TxnRequest empty_key;
  empty_key.success = {TxnOp::Put("", "1")};
  EXPECT_EQ(store_->Txn(empty_key).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(store_->Put("k", "v", LeaseId(42)).status().code(), Code::kNotFound);
  EXPECT_EQ(*store_->CurrentRevision(), 0);
}

TEST_F(MetaStoreTest, GetPrefixReturnsKeyOrder) {
  for (const char* key : {"/a/2", "/b/1", "/a/1", "/a", "/a/3/x"}) {
    ASSERT_TRUE(store_->Put(key, key).ok());
  }
  Result<RangeResult> range = store_->GetPrefix("/a/");
  ASSERT_TRUE(range.ok());
  std::vector<std::string> keys;
  for (const KeyValue& kv : range->kvs) keys.push_back(kv.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"/a/1", "/a/2", "/a/3/x"}));
  EXPECT_EQ(range->revision, 5);
  EXPECT_EQ(store_->GetPrefix("")->kvs.size(), 5u);
}

TEST_F(MetaStoreTest, WatchDeliversInOrderAndResumes) {
  Result<std::unique_ptr<WatchCursor>> cursor = store_->Watch("/w/", 0);
  ASSERT_TRUE(cursor.ok());
  EXPECT_TRUE((*cursor)->Poll()->empty());
  ASSERT_TRUE(store_->Put("/w/1", "a").ok());  // Revision 1.
  ASSERT_TRUE(store_->Put("/other", "x").ok());
  TxnRequest txn;
  txn.success = {TxnOp::Put("/w/3", "c"), TxnOp::Delete("/w/1"), TxnOp::Put("/w/2", "b")};
  ASSERT_TRUE(store_->Txn(txn).ok());  // Revision 3.

  Result<std::vector<WatchEvent>> events = (*cursor)->Poll();
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(Keys(*events), (std::vector<std::string>{"/w/1", "/w/3", "/w/1", "/w/2"}));
  EXPECT_EQ((*events)[0].kv.mod_revision, 1);
  EXPECT_EQ((*events)[2].type, WatchEvent::Type::kDelete);
  EXPECT_EQ((*events)[2].kv.mod_revision, 3);
  EXPECT_EQ((*cursor)->next_revision(), 4);
  EXPECT_TRUE((*cursor)->Poll()->empty());

  // A new watch from revision 2 sees revision 3 only, also after a restart.
  cursor->reset();
  ASSERT_TRUE(Reopen().ok());
  Result<std::unique_ptr<WatchCursor>> resumed = store_->Watch("/w/", 2);
  ASSERT_TRUE(resumed.ok());
  EXPECT_EQ(Keys(*(*resumed)->Poll()), (std::vector<std::string>{"/w/3", "/w/1", "/w/2"}));
}

TEST_F(MetaStoreTest, WatchNextWaitsForAWrite) {
  std::unique_ptr<WatchCursor> cursor = std::move(store_->Watch("/w/", 0)).value();
  Result<std::vector<WatchEvent>> got = Cancelled("not run");
  std::thread watcher([&] { got = cursor->Next(CancelToken(), Clock::TimePoint::max()); });
  ASSERT_TRUE(store_->Put("/x", "ignored").ok());
  ASSERT_TRUE(store_->Put("/w/k", "v").ok());
  watcher.join();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(Keys(*got), std::vector<std::string>{"/w/k"});
}

TEST_F(MetaStoreTest, WatchNextTimesOutOnTheClockAndCancels) {
  std::unique_ptr<WatchCursor> cursor = std::move(store_->Watch("/w/", 0)).value();
  Status timed_out;
  std::thread watcher(
      [&] { timed_out = cursor->Next(CancelToken(), clock_.Now() + seconds(5)).status(); });
  ASSERT_TRUE(clock_.AwaitWaiters(2));  // The watcher and the lease thread.
  clock_.Advance(seconds(6));
  watcher.join();
  EXPECT_EQ(timed_out.code(), Code::kTimeout);

  CancelSource cancel;
  Status cancelled;
  std::thread waiter(
      [&] { cancelled = cursor->Next(cancel.token(), Clock::TimePoint::max()).status(); });
  ASSERT_TRUE(clock_.AwaitWaiters(2));
  cancel.Cancel();
  waiter.join();
  EXPECT_EQ(cancelled.code(), Code::kCancelled);
}

TEST_F(MetaStoreTest, WatchFromCompactedRevisionIsTyped) {
  history_revisions_ = 5;
  ASSERT_TRUE(Reopen().ok());
  std::unique_ptr<WatchCursor> slow = std::move(store_->Watch("", 1)).value();
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(store_->Put("k", std::to_string(i)).ok());
  EXPECT_EQ(store_->compacted_revision(), 5);
  Result<std::unique_ptr<WatchCursor>> old = store_->Watch("", 2);
  EXPECT_EQ(old.status().code(), Code::kNotFound);
  EXPECT_TRUE(old.status().message().starts_with("compacted"));
  EXPECT_EQ(slow->Poll().status().code(), Code::kNotFound);
  Result<std::unique_ptr<WatchCursor>> recent = store_->Watch("", 6);
  ASSERT_TRUE(recent.ok());
  EXPECT_EQ((*recent)->Poll()->size(), 5u);
}

TEST_F(MetaStoreTest, LeaseExpiryDeletesItsKeysInOneRevision) {
  LeaseGrant lease = *store_->GrantLease(seconds(10));
  ASSERT_TRUE(store_->Put("/n/1", "a", lease.id).ok());
  ASSERT_TRUE(store_->Put("/n/2", "b", lease.id).ok());
  ASSERT_TRUE(store_->Put("/n/3", "kept").ok());
  std::unique_ptr<WatchCursor> cursor = std::move(store_->Watch("/n/", 0)).value();

  clock_.Advance(seconds(8));
  ASSERT_TRUE(store_->KeepAlive(lease.id).ok());
  clock_.Advance(seconds(8));  // 16 s after grant, 8 s after the keep-alive.
  ASSERT_TRUE(store_->ExpireDueLeases().ok());
  EXPECT_TRUE(store_->Get("/n/1")->has_value());
  EXPECT_EQ(*store_->LeaseTimeToLive(lease.id), seconds(2));

  clock_.Advance(seconds(2));
  EXPECT_EQ(store_->KeepAlive(lease.id).code(), Code::kNotFound);  // Expired, maybe not reaped.
  // The lease thread reaps it; wait for that, bounded.
  ASSERT_TRUE(PollUntil([&] { return store_->GetPrefix("/n/")->kvs.size() == 1; }));
  Result<std::vector<WatchEvent>> events = cursor->Poll();
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[0].type, WatchEvent::Type::kDelete);
  EXPECT_EQ((*events)[0].kv.mod_revision, (*events)[1].kv.mod_revision);
  EXPECT_EQ(*store_->CurrentRevision(), 4);
  EXPECT_EQ(store_->LeaseTimeToLive(lease.id).status().code(), Code::kNotFound);
}

TEST_F(MetaStoreTest, RevokeLeaseAndRebindKey) {
  LeaseGrant a = *store_->GrantLease(seconds(10));
  LeaseGrant b = *store_->GrantLease(seconds(10));
  ASSERT_TRUE(store_->Put("k1", "v", a.id).ok());
  ASSERT_TRUE(store_->Put("k2", "v", a.id).ok());
  ASSERT_TRUE(store_->Put("k2", "v", b.id).ok());  // Moves k2 to lease b.
  ASSERT_TRUE(store_->RevokeLease(a.id).ok());
  EXPECT_FALSE(store_->Get("k1")->has_value());
  EXPECT_TRUE(store_->Get("k2")->has_value());
  EXPECT_EQ(store_->RevokeLease(a.id).code(), Code::kNotFound);
  // A lease without keys goes without a revision.
  LeaseGrant c = *store_->GrantLease(seconds(1));
  const Revision before = *store_->CurrentRevision();
  ASSERT_TRUE(store_->RevokeLease(c.id).ok());
  EXPECT_EQ(*store_->CurrentRevision(), before);
  EXPECT_EQ(store_->GrantLease(std::chrono::microseconds(10)).status().code(),
            Code::kInvalidArgument);
}

TEST_F(MetaStoreTest, ReopenKeepsEverythingCommitted) {
  LeaseGrant lease = *store_->GrantLease(seconds(10));
  ASSERT_TRUE(store_->Put("a", "1").ok());
  ASSERT_TRUE(store_->Put("b", "2", lease.id).ok());
  ASSERT_TRUE(store_->Put("a", "3").ok());
  const KeyValue a = **store_->Get("a");
  clock_.Advance(seconds(9));
  ASSERT_TRUE(Reopen().ok());
  EXPECT_EQ(*store_->CurrentRevision(), 3);
  EXPECT_EQ(**store_->Get("a"), a);
  EXPECT_EQ((*store_->Get("b"))->lease, lease.id);
  // Leases come back with their full TTL, counted from the reopen.
  EXPECT_EQ(*store_->LeaseTimeToLive(lease.id), seconds(10));
  // New leases get new ids.
  EXPECT_GT(store_->GrantLease(seconds(1))->id.value(), lease.id.value());
  clock_.Advance(seconds(10));
  ASSERT_TRUE(store_->ExpireDueLeases().ok());
  EXPECT_FALSE(store_->Get("b")->has_value());
  ASSERT_TRUE(Reopen().ok());
  EXPECT_FALSE(store_->Get("b")->has_value());
  EXPECT_EQ(*store_->CurrentRevision(), 4);
}

TEST_F(MetaStoreTest, CorruptRecordOnDiskFailsOpenTyped) {
  ASSERT_TRUE(store_->Put("a", "1").ok());
  store_.reset();
  {
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), dir_, &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), format::UserKey("a"), "\x09garbage").ok());
  }
  Status st = Reopen();
  EXPECT_EQ(st.code(), Code::kCorruption) << st.ToString();
}

TEST_F(MetaStoreTest, StopWakesWatchersAndRefusesCalls) {
  std::unique_ptr<WatchCursor> cursor = std::move(store_->Watch("", 0)).value();
  Status st;
  std::thread watcher([&] { st = cursor->Next(CancelToken(), Clock::TimePoint::max()).status(); });
  ASSERT_TRUE(clock_.AwaitWaiters(2));
  store_->Stop();
  watcher.join();
  EXPECT_EQ(st.code(), Code::kCancelled);
  EXPECT_EQ(store_->Put("a", "1").status().code(), Code::kCancelled);
  EXPECT_EQ(store_->Get("a").status().code(), Code::kCancelled);
  cursor.reset();
}

TEST_F(MetaStoreTest, ConcurrentCasIncrementsLoseNothing) {
  constexpr int kThreads = 4;
  constexpr int kIncrements = 50;
  ASSERT_TRUE(store_->Put("counter", "0").ok());
  std::vector<std::thread> threads;
  std::atomic<int> aborted{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int done = 0; done < kIncrements;) {
        KeyValue kv = **store_->Get("counter");
        TxnRequest txn;
        txn.compares = {Compare::ModRevisionIs("counter", kv.mod_revision)};
        txn.success = {TxnOp::Put("counter", std::to_string(std::stoi(kv.value) + 1))};
        if (store_->Txn(txn)->succeeded)
          ++done;
        else
          ++aborted;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ((*store_->Get("counter"))->value, std::to_string(kThreads * kIncrements));
  EXPECT_EQ(*store_->CurrentRevision(), 1 + kThreads * kIncrements);
}

}  // namespace
}  // namespace sluice::meta
