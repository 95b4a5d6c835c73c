#include <rocksdb/db.h>

#include <thread>

#include "common/test_util.h"
#include "meta/meta_test_util.h"
#include "meta/record_format.h"

namespace sluice::meta {
namespace {

using std::chrono::seconds;

// The embedded store's own facts: revisions count from 1 and watch history
// survives a reopen. The rest of the contract: metastore_contract_test.cc.
TEST_F(MetaStoreTest, RevisionsCountFromOneAndWatchResumesAfterReopen) {
  EXPECT_EQ(*store_->CurrentRevision(), 0);
  Result<std::unique_ptr<WatchCursor>> cursor = store_->Watch("/w/", 0);
  ASSERT_TRUE(cursor.ok());
  EXPECT_TRUE((*cursor)->Poll()->empty());
  EXPECT_EQ(*store_->Put("/w/1", "a"), 1);
  EXPECT_EQ(*store_->Delete("missing"), 1);  // Deleting nothing commits nothing.
  ASSERT_TRUE(store_->Put("/other", "x").ok());
  TxnRequest txn;
  txn.success = {TxnOp::Put("/w/3", "c"), TxnOp::Delete("/w/1"), TxnOp::Put("/w/2", "b")};
  EXPECT_EQ(store_->Txn(txn)->revision, 3);
  // Poll sees every committed event at once.
  EXPECT_EQ(Keys(*(*cursor)->Poll()), (std::vector<std::string>{"/w/1", "/w/3", "/w/1", "/w/2"}));
  EXPECT_EQ((*cursor)->next_revision(), 4);

  cursor->reset();
  ASSERT_TRUE(Reopen().ok());
  Result<std::unique_ptr<WatchCursor>> resumed = store_->Watch("/w/", 2);
  ASSERT_TRUE(resumed.ok());
  EXPECT_EQ(Keys(*(*resumed)->Poll()), (std::vector<std::string>{"/w/3", "/w/1", "/w/2"}));
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

}  // namespace
}  // namespace sluice::meta
