// The MetaStore contract (metastore.h), run against every backend: the
// embedded store and etcd. Backend-specific behaviour (reopen, on-disk
// corruption, exact lease arithmetic on a ManualClock, etcd reconnects) is
// tested beside each backend.
#include <atomic>
#include <thread>

#include "common/test_util.h"
#include "meta/meta_test_util.h"

namespace sluice::meta {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

using MetaContractTest = MetaBackendTest;
SLUICE_META_BACKENDS(MetaContractTest);

TEST_P(MetaContractTest, RevisionsAreMonotonicAndPerKey) {
  const Revision r1 = *store_->Put("a", "1");
  const Revision r2 = *store_->Put("b", "1");
  const Revision r3 = *store_->Put("a", "2");
  EXPECT_LT(r1, r2);
  EXPECT_LT(r2, r3);
  EXPECT_LE(r3, *store_->CurrentRevision());
  std::optional<KeyValue> a = *store_->Get("a");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->value, "2");
  EXPECT_EQ(a->create_revision, r1);
  EXPECT_EQ(a->mod_revision, r3);
  EXPECT_EQ(a->version, 2);
  const Revision r4 = *store_->Delete("a");
  EXPECT_GT(r4, r3);
  EXPECT_FALSE(store_->Get("a")->has_value());
  // A re-created key starts a new life.
  const Revision r5 = *store_->Put("a", "3");
  EXPECT_EQ((*store_->Get("a"))->create_revision, r5);
  EXPECT_EQ((*store_->Get("a"))->version, 1);
  EXPECT_FALSE(store_->Get("missing")->has_value());
}

TEST_P(MetaContractTest, TxnCompareAndSwap) {
  ASSERT_TRUE(store_->Put("epoch", "1").ok());
  const Revision rev = (*store_->Get("epoch"))->mod_revision;

  TxnRequest cas;
  cas.compares = {Compare::ModRevisionIs("epoch", rev)};
  cas.success = {TxnOp::Put("epoch", "2")};
  cas.failure = {TxnOp::Put("lost", "yes")};
  Result<TxnResponse> won = store_->Txn(cas);
  ASSERT_TRUE(won.ok()) << won.status().ToString();
  EXPECT_TRUE(won->succeeded);
  EXPECT_EQ((*store_->Get("epoch"))->mod_revision, won->revision);

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

  // As in etcd, a value compare on a missing key fails whatever the op.
  Compare not_equal = Compare::ValueIs("nobody", "x");
  not_equal.op = Compare::Op::kNotEqual;
  TxnRequest on_missing;
  on_missing.compares = {not_equal};
  EXPECT_FALSE(store_->Txn(on_missing)->succeeded);

  // A failed compare with an empty failure branch commits nothing.
  std::unique_ptr<WatchCursor> cursor = std::move(store_->Watch("", 0)).value();
  EXPECT_FALSE(store_->Txn(by_value)->succeeded);  // "fresh" exists now.
  EXPECT_TRUE(NextEventIsMarker(cursor.get(), "marker"));
}

TEST_P(MetaContractTest, TxnRejectsBadWrites) {
  std::unique_ptr<WatchCursor> cursor = std::move(store_->Watch("", 0)).value();
  TxnRequest twice;
  twice.success = {TxnOp::Put("k", "1"), TxnOp::Put("k", "2")};
  EXPECT_EQ(store_->Txn(twice).status().code(), Code::kInvalidArgument);
  TxnRequest empty_key;
  empty_key.success = {TxnOp::Put("", "1")};
  EXPECT_EQ(store_->Txn(empty_key).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(store_->Put("k", "v", LeaseId(42)).status().code(), Code::kNotFound);
  EXPECT_TRUE(NextEventIsMarker(cursor.get(), "marker"));
}

TEST_P(MetaContractTest, GetPrefixReturnsKeyOrder) {
  Revision last = 0;
  for (const char* key : {"/a/2", "/b/1", "/a/1", "/a", "/a/3/x"}) {
    last = *store_->Put(key, key);
  }
  Result<RangeResult> range = store_->GetPrefix("/a/");
  ASSERT_TRUE(range.ok()) << range.status().ToString();
  std::vector<std::string> keys;
  for (const KeyValue& kv : range->kvs) keys.push_back(kv.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"/a/1", "/a/2", "/a/3/x"}));
  EXPECT_GE(range->revision, last);
  EXPECT_EQ(store_->GetPrefix("")->kvs.size(), 5u);
  EXPECT_TRUE(store_->GetPrefix("/c")->kvs.empty());
}

TEST_P(MetaContractTest, WatchDeliversInOrderAndResumes) {
  Result<std::unique_ptr<WatchCursor>> cursor = store_->Watch("/w/", 0);
  ASSERT_TRUE(cursor.ok()) << cursor.status().ToString();
  const Revision r1 = *store_->Put("/w/1", "a");
  ASSERT_TRUE(store_->Put("/other", "x").ok());
  TxnRequest txn;
  txn.success = {TxnOp::Put("/w/3", "c"), TxnOp::Delete("/w/1"), TxnOp::Put("/w/2", "b")};
  const Revision r3 = store_->Txn(txn)->revision;

  std::vector<WatchEvent> events = Collect(cursor->get(), 4);
  EXPECT_EQ(Keys(events), (std::vector<std::string>{"/w/1", "/w/3", "/w/1", "/w/2"}));
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].kv.mod_revision, r1);
  EXPECT_EQ(events[0].kv.value, "a");
  EXPECT_EQ(events[2].type, WatchEvent::Type::kDelete);
  EXPECT_EQ(events[2].kv.mod_revision, r3);
  EXPECT_EQ(events[3].kv.mod_revision, r3);
  EXPECT_EQ((*cursor)->next_revision(), r3 + 1);

  // A new watch from the revision after r1 sees r3 only.
  Result<std::unique_ptr<WatchCursor>> resumed = store_->Watch("/w/", r1 + 1);
  ASSERT_TRUE(resumed.ok());
  EXPECT_EQ(Keys(Collect(resumed->get(), 3)), (std::vector<std::string>{"/w/3", "/w/1", "/w/2"}));
  EXPECT_EQ(store_->Watch("/w/", -1).status().code(), Code::kInvalidArgument);
}

TEST_P(MetaContractTest, WatchNextWaitsForAWrite) {
  std::unique_ptr<WatchCursor> cursor = std::move(store_->Watch("/w/", 0)).value();
  Result<std::vector<WatchEvent>> got = Cancelled("not run");
  std::thread watcher([&] { got = cursor->Next(CancelToken(), Clock::TimePoint::max()); });
  ASSERT_TRUE(store_->Put("/x", "ignored").ok());
  ASSERT_TRUE(store_->Put("/w/k", "v").ok());
  watcher.join();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(Keys(*got), std::vector<std::string>{"/w/k"});
  EXPECT_TRUE(cursor->Poll()->empty());
}

TEST_P(MetaContractTest, WatchNextTimesOutAndCancels) {
  std::unique_ptr<WatchCursor> cursor = std::move(store_->Watch("/w/", 0)).value();
  EXPECT_EQ(cursor->Next(CancelToken(), Clock::Real()->Now() + milliseconds(50)).status().code(),
            Code::kTimeout);
  CancelSource cancel;
  Status cancelled;
  std::thread waiter(
      [&] { cancelled = cursor->Next(cancel.token(), Clock::TimePoint::max()).status(); });
  cancel.Cancel();
  waiter.join();
  EXPECT_EQ(cancelled.code(), Code::kCancelled);
}

TEST_P(MetaContractTest, LeaseExpiryDeletesItsKeysInOneRevision) {
  LeaseGrant lease = *store_->GrantLease(seconds(1));
  EXPECT_GE(lease.ttl, seconds(1));
  ASSERT_TRUE(store_->Put("/n/1", "a", lease.id).ok());
  ASSERT_TRUE(store_->Put("/n/2", "b", lease.id).ok());
  ASSERT_TRUE(store_->Put("/n/3", "kept").ok());
  EXPECT_EQ((*store_->Get("/n/1"))->lease, lease.id);
  std::unique_ptr<WatchCursor> cursor = std::move(store_->Watch("/n/", 0)).value();
  ASSERT_TRUE(store_->KeepAlive(lease.id).ok());
  Result<Clock::Duration> left = store_->LeaseTimeToLive(lease.id);
  ASSERT_TRUE(left.ok()) << left.status().ToString();
  EXPECT_LE(*left, lease.ttl);

  // Nobody keeps it alive: it expires and takes its keys along.
  ASSERT_TRUE(PollUntil([&] { return store_->GetPrefix("/n/")->kvs.size() == 1; }, seconds(15)));
  std::vector<WatchEvent> events = Collect(cursor.get(), 2);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].type, WatchEvent::Type::kDelete);
  EXPECT_EQ(events[1].type, WatchEvent::Type::kDelete);
  EXPECT_EQ(events[0].kv.mod_revision, events[1].kv.mod_revision);
  EXPECT_EQ(store_->KeepAlive(lease.id).code(), Code::kNotFound);
  EXPECT_EQ(store_->LeaseTimeToLive(lease.id).status().code(), Code::kNotFound);
}

TEST_P(MetaContractTest, RevokeLeaseAndRebindKey) {
  LeaseGrant a = *store_->GrantLease(seconds(10));
  LeaseGrant b = *store_->GrantLease(seconds(10));
  EXPECT_NE(a.id, b.id);
  ASSERT_TRUE(store_->Put("k1", "v", a.id).ok());
  ASSERT_TRUE(store_->Put("k2", "v", a.id).ok());
  ASSERT_TRUE(store_->Put("k2", "v", b.id).ok());  // Moves k2 to lease b.
  ASSERT_TRUE(store_->RevokeLease(a.id).ok());
  EXPECT_FALSE(store_->Get("k1")->has_value());
  EXPECT_TRUE(store_->Get("k2")->has_value());
  EXPECT_EQ(store_->RevokeLease(a.id).code(), Code::kNotFound);
  // A lease without keys goes without a change.
  std::unique_ptr<WatchCursor> cursor = std::move(store_->Watch("", 0)).value();
  LeaseGrant c = *store_->GrantLease(seconds(5));
  ASSERT_TRUE(store_->RevokeLease(c.id).ok());
  EXPECT_TRUE(NextEventIsMarker(cursor.get(), "marker"));
  EXPECT_EQ(store_->GrantLease(Clock::Duration::zero()).status().code(), Code::kInvalidArgument);
  ASSERT_TRUE(store_->RevokeLease(b.id).ok());
}

TEST_P(MetaContractTest, StopWakesWatchersAndRefusesCalls) {
  std::unique_ptr<WatchCursor> cursor = std::move(store_->Watch("", 0)).value();
  Status st;
  std::thread watcher([&] { st = cursor->Next(CancelToken(), Clock::TimePoint::max()).status(); });
  stop_();
  watcher.join();
  EXPECT_EQ(st.code(), Code::kCancelled);
  EXPECT_EQ(store_->Put("a", "1").status().code(), Code::kCancelled);
  EXPECT_EQ(store_->Get("a").status().code(), Code::kCancelled);
  EXPECT_EQ(store_->Watch("", 0).status().code(), Code::kCancelled);
  cursor.reset();
}

TEST_P(MetaContractTest, ConcurrentCasIncrementsLoseNothing) {
  constexpr int kThreads = 4;
  constexpr int kIncrements = 50;
  const Revision first = *store_->Put("counter", "0");
  std::vector<std::thread> threads;
  std::atomic<int> won{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int done = 0; done < kIncrements;) {
        KeyValue kv = **store_->Get("counter");
        TxnRequest txn;
        txn.compares = {Compare::ModRevisionIs("counter", kv.mod_revision)};
        txn.success = {TxnOp::Put("counter", std::to_string(std::stoi(kv.value) + 1))};
        if (store_->Txn(txn)->succeeded) {
          ++done;
          ++won;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const KeyValue counter = **store_->Get("counter");
  EXPECT_EQ(counter.value, std::to_string(kThreads * kIncrements));
  EXPECT_EQ(counter.version, 1 + kThreads * kIncrements);
  EXPECT_EQ(counter.create_revision, first);
  EXPECT_EQ(won.load(), kThreads * kIncrements);
}

}  // namespace
}  // namespace sluice::meta
