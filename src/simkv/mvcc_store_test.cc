#include "simkv/mvcc_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/test_util.h"

namespace sluice::simkv {
namespace {

constexpr uint64_t kTtl = 3000;

std::vector<std::string> KeysOf(const std::vector<Mutation>& mutations) {
  std::vector<std::string> keys;
  for (const Mutation& m : mutations) keys.push_back(m.key);
  return keys;
}

// Prewrites and commits one transaction (primary = first mutation).
void Write(MvccStore& store, const std::vector<Mutation>& mutations, uint64_t start,
           uint64_t commit) {
  TxnStatus prewrite = store.Prewrite(mutations, mutations[0].key, Ts(start), kTtl);
  ASSERT_TRUE(prewrite.ok()) << prewrite.error().ToString();
  TxnStatus committed = store.Commit(KeysOf(mutations), Ts(start), Ts(commit));
  ASSERT_TRUE(committed.ok()) << committed.error().ToString();
}

// Concatenates pieces (avoids GCC 12's -Wrestrict false positive on
// "literal" + std::string at -O3).
std::string Cat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view part : parts) out.append(part);
  return out;
}

// The value at ts; "<none>" for absent, "<error kind>" on errors.
std::string Read(const MvccStore& store, const std::string& key, uint64_t ts) {
  auto result = store.Get(key, Ts(ts));
  if (!result.ok()) return Cat({"<", TxnErrorKindName(result.error().kind), ">"});
  return result.value().value_or("<none>");
}

TEST(MvccStoreTest, CommitThenReadAtVariousTs) {
  MvccStore store;
  ASSERT_TRUE(
      store.Prewrite({Mutation::Put("k1", "v1"), Mutation::Put("k2", "v2")}, "k1", Ts(10), kTtl)
          .ok());
  EXPECT_EQ(Read(store, "k1", 9), "<none>");  // The lock is newer than the read.
  EXPECT_EQ(Read(store, "k1", 11), "<key is locked>");
  auto locked = store.Get("k1", Ts(10));
  ASSERT_FALSE(locked.ok());
  ASSERT_TRUE(locked.error().lock.has_value());
  EXPECT_EQ(locked.error().lock->start_ts, Ts(10));
  EXPECT_EQ(locked.error().lock->primary, "k1");
  EXPECT_EQ(locked.status().code(), Code::kAborted);

  ASSERT_TRUE(store.Commit({"k1"}, Ts(10), Ts(15)).ok());
  EXPECT_EQ(Read(store, "k1", 14), "<none>");
  EXPECT_EQ(Read(store, "k1", 15), "v1");
  EXPECT_EQ(Read(store, "k2", 20), "<key is locked>");
  ASSERT_TRUE(store.Commit({"k2"}, Ts(10), Ts(15)).ok());
  EXPECT_EQ(Read(store, "k2", 20), "v2");

  Write(store, {Mutation::Put("k1", "v1b"), Mutation::Delete("k2")}, 20, 25);
  EXPECT_EQ(Read(store, "k1", 24), "v1");
  EXPECT_EQ(Read(store, "k1", 25), "v1b");
  EXPECT_EQ(Read(store, "k2", 24), "v2");
  EXPECT_EQ(Read(store, "k2", 25), "<none>");
  EXPECT_EQ(Read(store, "missing", 25), "<none>");
}

TEST(MvccStoreTest, WriteConflictAndLockConflict) {
  MvccStore store;
  Write(store, {Mutation::Put("k", "v")}, 10, 20);

  for (uint64_t start : {15, 20}) {  // A write with commit_ts >= start_ts exists.
    TxnStatus st = store.Prewrite({Mutation::Put("k", "x")}, "k", Ts(start), kTtl);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().kind, TxnErrorKind::kWriteConflict);
    EXPECT_EQ(st.error().key, "k");
    EXPECT_EQ(st.error().conflict_start_ts, Ts(10));
    EXPECT_EQ(st.error().conflict_commit_ts, Ts(20));
    EXPECT_EQ(st.status().code(), Code::kAborted);
  }

  ASSERT_TRUE(store.Prewrite({Mutation::Put("k", "x")}, "p", Ts(30), kTtl).ok());
  TxnStatus st = store.Prewrite({Mutation::Delete("k")}, "k", Ts(40), kTtl);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind, TxnErrorKind::kKeyIsLocked);
  ASSERT_TRUE(st.error().lock.has_value());
  EXPECT_EQ(st.error().lock->start_ts, Ts(30));
  EXPECT_EQ(st.error().lock->primary, "p");
  EXPECT_EQ(st.error().lock->value, "x");
  EXPECT_EQ(st.error().lock->ttl_ms, kTtl);
  EXPECT_EQ(st.error().lock->min_commit_ts, Ts(31));
}

TEST(MvccStoreTest, PrewriteIsAtomicAndIdempotent) {
  MvccStore store;
  ASSERT_TRUE(
      store.Prewrite({Mutation::Put("a", "1"), Mutation::Put("b", "2")}, "a", Ts(10), kTtl).ok());
  uint64_t index = store.applied_index();
  // b is locked, so nothing of this batch is written (c stays unlocked).
  TxnStatus st =
      store.Prewrite({Mutation::Put("c", "3"), Mutation::Put("b", "4")}, "c", Ts(20), kTtl);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().key, "b");
  EXPECT_TRUE(store.Locks("c", "").empty());
  EXPECT_EQ(store.applied_index(), index);
  // A retried prewrite of the same transaction changes nothing.
  EXPECT_TRUE(
      store.Prewrite({Mutation::Put("a", "1"), Mutation::Put("b", "2")}, "a", Ts(10), kTtl).ok());
  EXPECT_EQ(store.applied_index(), index);
  EXPECT_EQ(store.Locks("", "").size(), 2u);

  auto invalid = [](const TxnStatus& s) {
    return !s.ok() && s.error().kind == TxnErrorKind::kInvalidArgument;
  };
  EXPECT_TRUE(invalid(store.Prewrite({}, "a", Ts(30), kTtl)));
  EXPECT_TRUE(invalid(store.Prewrite({Mutation::Put("x", "1")}, "", Ts(30), kTtl)));
  EXPECT_TRUE(
      invalid(store.Prewrite({Mutation::Put("x", "1"), Mutation::Delete("x")}, "x", Ts(30), kTtl)));
  TxnStatus zero = store.Prewrite({Mutation::Put("x", "1")}, "x", Ts(0), kTtl);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().kind, TxnErrorKind::kBelowGcSafePoint);
}

TEST(MvccStoreTest, CommitRules) {
  MvccStore store;
  ASSERT_TRUE(
      store.Prewrite({Mutation::Put("p", "1"), Mutation::Put("s", "2")}, "p", Ts(10), kTtl).ok());
  auto kind_of = [](const TxnStatus& s) {
    return s.ok() ? "ok" : TxnErrorKindName(s.error().kind);
  };
  EXPECT_EQ(kind_of(store.Commit({"p"}, Ts(10), Ts(10))), "invalid argument");
  // All or nothing: an unknown key fails the batch and p stays locked.
  EXPECT_EQ(kind_of(store.Commit({"p", "zz"}, Ts(10), Ts(20))), "txn lock not found");
  EXPECT_EQ(store.Locks("p", "q").size(), 1u);
  EXPECT_EQ(kind_of(store.Commit({"p", "p"}, Ts(10), Ts(20))), "invalid argument");

  // Primary first; a resolver then commits the secondary; the client's own
  // late commit of that secondary is fine.
  EXPECT_EQ(kind_of(store.Commit({"p"}, Ts(10), Ts(20))), "ok");
  EXPECT_EQ(kind_of(store.Commit({"s"}, Ts(10), Ts(20))), "ok");
  uint64_t index = store.applied_index();
  EXPECT_EQ(kind_of(store.Commit({"s", "p"}, Ts(10), Ts(20))), "ok");
  EXPECT_EQ(store.applied_index(), index);  // Nothing applied twice.

  // A rolled-back transaction cannot commit.
  ASSERT_TRUE(store.Prewrite({Mutation::Put("r", "1")}, "r", Ts(30), kTtl).ok());
  ASSERT_TRUE(store.Rollback({"r"}, Ts(30)).ok());
  EXPECT_EQ(kind_of(store.Commit({"r"}, Ts(30), Ts(40))), "txn rolled back");
  EXPECT_EQ(kind_of(store.Commit({"never"}, Ts(30), Ts(40))), "txn lock not found");
}

TEST(MvccStoreTest, RollbackThenLatePrewriteRefused) {
  MvccStore store;
  ASSERT_TRUE(store.Prewrite({Mutation::Put("a", "1")}, "a", Ts(10), kTtl).ok());
  ASSERT_TRUE(store.Rollback({"a"}, Ts(10)).ok());
  EXPECT_TRUE(store.Locks("", "").empty());
  EXPECT_EQ(Read(store, "a", 20), "<none>");
  TxnStatus late = store.Prewrite({Mutation::Put("a", "1")}, "a", Ts(10), kTtl);
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().kind, TxnErrorKind::kTxnRolledBack);
  EXPECT_TRUE(store.Rollback({"a"}, Ts(10)).ok());  // Twice is harmless.

  // A rollback that arrives before the prewrite still protects the key.
  ASSERT_TRUE(store.Rollback({"b"}, Ts(30)).ok());
  late = store.Prewrite({Mutation::Put("b", "1")}, "b", Ts(30), kTtl);
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().kind, TxnErrorKind::kTxnRolledBack);
  // Another transaction may still write b.
  Write(store, {Mutation::Put("b", "2")}, 31, 32);

  // Rolling back a committed key fails.
  TxnStatus committed = store.Rollback({"b"}, Ts(31));
  ASSERT_FALSE(committed.ok());
  EXPECT_EQ(committed.error().kind, TxnErrorKind::kAlreadyCommitted);

  // A rollback at a ts where another transaction committed keeps that write
  // and still refuses the late prewrite (as a write conflict).
  Write(store, {Mutation::Put("c", "v")}, 40, 50);
  ASSERT_TRUE(store.Rollback({"c"}, Ts(50)).ok());
  EXPECT_EQ(Read(store, "c", 50), "v");
  late = store.Prewrite({Mutation::Put("c", "x")}, "c", Ts(50), kTtl);
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().kind, TxnErrorKind::kWriteConflict);
}

TEST(MvccStoreTest, OnePhaseCommit) {
  MvccStore store;
  Write(store, {Mutation::Put("b", "old")}, 1, 2);
  ASSERT_TRUE(
      store.CommitOnePc({Mutation::Put("a", "1"), Mutation::Delete("b")}, Ts(10), Ts(11)).ok());
  EXPECT_TRUE(store.Locks("", "").empty());
  EXPECT_EQ(Read(store, "a", 10), "<none>");
  EXPECT_EQ(Read(store, "a", 11), "1");
  EXPECT_EQ(Read(store, "b", 10), "old");
  EXPECT_EQ(Read(store, "b", 11), "<none>");
  // Retrying the same 1PC is harmless.
  EXPECT_TRUE(store.CommitOnePc({Mutation::Put("a", "1")}, Ts(10), Ts(11)).ok());

  TxnStatus conflict = store.CommitOnePc({Mutation::Put("a", "2")}, Ts(5), Ts(12));
  ASSERT_FALSE(conflict.ok());
  EXPECT_EQ(conflict.error().kind, TxnErrorKind::kWriteConflict);
  ASSERT_TRUE(store.Prewrite({Mutation::Put("c", "1")}, "c", Ts(20), kTtl).ok());
  TxnStatus locked = store.CommitOnePc({Mutation::Put("c", "2")}, Ts(21), Ts(22));
  ASSERT_FALSE(locked.ok());
  EXPECT_EQ(locked.error().kind, TxnErrorKind::kKeyIsLocked);
  EXPECT_FALSE(store.CommitOnePc({Mutation::Put("d", "1")}, Ts(30), Ts(30)).ok());

  // A lock-only 1PC writes nothing visible but conflicts with older starts.
  ASSERT_TRUE(store.CommitOnePc({Mutation::Lock("a")}, Ts(40), Ts(41)).ok());
  EXPECT_EQ(Read(store, "a", 50), "1");
  EXPECT_FALSE(store.Prewrite({Mutation::Put("a", "x")}, "a", Ts(39), kTtl).ok());
}

TEST(MvccStoreTest, LockOpDoesNotBlockReadsButHoldsResolvedTs) {
  MvccStore store;
  Write(store, {Mutation::Put("k", "v")}, 1, 2);
  ASSERT_TRUE(store.Prewrite({Mutation::Lock("k")}, "k", Ts(10), kTtl).ok());
  EXPECT_EQ(Read(store, "k", 20), "v");
  EXPECT_EQ(store.MinLockStartTs("", ""), Ts(10));
  ASSERT_TRUE(store.Commit({"k"}, Ts(10), Ts(11)).ok());
  EXPECT_EQ(Read(store, "k", 20), "v");
  EXPECT_EQ(store.MinLockStartTs("", ""), std::nullopt);
}

TEST(MvccStoreTest, ScanReturnsVisiblePairsAndStopsAtLocks) {
  MvccStore store;
  Write(store,
        {Mutation::Put("a", "1"), Mutation::Put("b", "2"), Mutation::Put("c", "3"),
         Mutation::Put("d", "4")},
        1, 2);
  Write(store, {Mutation::Delete("b")}, 3, 4);
  auto scan = store.Scan("", "", Ts(10), 0);
  ASSERT_TRUE(scan.ok());
  EXPECT_EQ(scan.value(), (std::vector<KvPair>{{"a", "1"}, {"c", "3"}, {"d", "4"}}));
  scan = store.Scan("b", "d", Ts(10), 0);
  ASSERT_TRUE(scan.ok());
  EXPECT_EQ(scan.value(), (std::vector<KvPair>{{"c", "3"}}));
  scan = store.Scan("", "", Ts(3), 2);
  ASSERT_TRUE(scan.ok());
  EXPECT_EQ(scan.value(), (std::vector<KvPair>{{"a", "1"}, {"b", "2"}}));

  ASSERT_TRUE(store.Prewrite({Mutation::Put("c", "x")}, "c", Ts(20), kTtl).ok());
  scan = store.Scan("", "", Ts(30), 0);
  ASSERT_FALSE(scan.ok());
  EXPECT_EQ(scan.error().kind, TxnErrorKind::kKeyIsLocked);
  EXPECT_EQ(scan.error().key, "c");
  EXPECT_TRUE(store.Scan("", "", Ts(30), 1).ok());  // Stops before the lock.
  EXPECT_TRUE(store.Scan("", "", Ts(19), 0).ok());  // Lock is newer than the read.
}

std::string Describe(const CommittedRow& row) {
  return row.key + "@" + std::to_string(row.commit_ts.value()) + "/" +
         std::to_string(row.start_ts.value()) + " " + std::string(WriteKindName(row.kind)) + " " +
         row.value + " old=" + row.old_value.value_or("-");
}

std::vector<std::string> DescribeRows(const MvccStore& store, std::string_view start,
                                      std::string_view end, uint64_t after, Ts snapshot) {
  auto scan = store.ScanCommitted(start, end, Ts(after), snapshot);
  EXPECT_TRUE(scan.ok()) << scan.status().ToString();
  std::vector<std::string> out;
  if (scan.ok()) {
    for (const CommittedRow& row : scan->rows) out.push_back(Describe(row));
  }
  return out;
}

// a: v1@10, v2@20, delete@30, v3@40; b: w1@15, a rollback and a lock record.
void FillHistory(MvccStore& store) {
  Write(store, {Mutation::Put("a", "v1")}, 5, 10);
  Write(store, {Mutation::Put("b", "w1")}, 12, 15);
  Write(store, {Mutation::Put("a", "v2")}, 18, 20);
  Write(store, {Mutation::Delete("a")}, 25, 30);
  ASSERT_TRUE(store.Rollback({"b"}, Ts(33)).ok());
  Write(store, {Mutation::Put("a", "v3")}, 35, 40);
  Write(store, {Mutation::Lock("b")}, 36, 38);
}

TEST(MvccStoreTest, ScanCommittedOldValuesAndOrdering) {
  MvccStore store;
  FillHistory(store);
  ASSERT_TRUE(store.Prewrite({Mutation::Put("c", "pending")}, "c", Ts(50), kTtl).ok());

  EXPECT_EQ(DescribeRows(store, "", "", 0, kMaxTs),
            (std::vector<std::string>{"a@10/5 put v1 old=-", "a@20/18 put v2 old=v1",
                                      "a@30/25 delete  old=v2", "a@40/35 put v3 old=-",
                                      "b@15/12 put w1 old=-"}));
  EXPECT_EQ(DescribeRows(store, "", "", 20, Ts(35)),
            (std::vector<std::string>{"a@30/25 delete  old=v2"}));
  EXPECT_EQ(DescribeRows(store, "", "", 10, Ts(20)),
            (std::vector<std::string>{"a@20/18 put v2 old=v1", "b@15/12 put w1 old=-"}));
  EXPECT_EQ(DescribeRows(store, "b", "", 0, kMaxTs),
            (std::vector<std::string>{"b@15/12 put w1 old=-"}));
  EXPECT_TRUE(DescribeRows(store, "", "", 40, kMaxTs).empty());

  auto scan = store.ScanCommitted("", "", Ts(0), kMaxTs);
  ASSERT_TRUE(scan.ok());
  EXPECT_EQ(scan->applied_index, store.applied_index());
  ASSERT_EQ(scan->prewrites.size(), 1u);
  EXPECT_EQ(scan->prewrites[0].lock.key, "c");
  EXPECT_EQ(scan->prewrites[0].lock.start_ts, Ts(50));
  EXPECT_EQ(scan->prewrites[0].lock.value, "pending");
  EXPECT_EQ(scan->prewrites[0].lock.primary, "c");
  EXPECT_EQ(scan->prewrites[0].lock.ttl_ms, kTtl);
  EXPECT_FALSE(scan->prewrites[0].old_value.has_value());
}

TEST(MvccStoreTest, MinLockStartTsAcrossCommitsAndRollbacks) {
  MvccStore store;
  EXPECT_EQ(store.MinLockStartTs("", ""), std::nullopt);
  ASSERT_TRUE(
      store.Prewrite({Mutation::Put("a", "1"), Mutation::Put("c", "1")}, "a", Ts(10), kTtl).ok());
  ASSERT_TRUE(store.Prewrite({Mutation::Put("b", "2")}, "b", Ts(20), kTtl).ok());
  EXPECT_EQ(store.MinLockStartTs("", ""), Ts(10));
  EXPECT_EQ(store.MinLockStartTs("b", "c"), Ts(20));
  EXPECT_EQ(store.MinLockStartTs("b", ""), Ts(10));
  EXPECT_EQ(store.Locks("b", "").size(), 2u);

  ASSERT_TRUE(store.Commit({"a"}, Ts(10), Ts(15)).ok());
  EXPECT_EQ(store.MinLockStartTs("a", "b"), std::nullopt);
  EXPECT_EQ(store.MinLockStartTs("", ""), Ts(10));  // Secondary c is still locked.
  ASSERT_TRUE(store.Commit({"c"}, Ts(10), Ts(15)).ok());
  EXPECT_EQ(store.MinLockStartTs("", ""), Ts(20));
  ASSERT_TRUE(store.Rollback({"b"}, Ts(20)).ok());
  EXPECT_EQ(store.MinLockStartTs("", ""), std::nullopt);
  EXPECT_TRUE(store.Locks("", "").empty());
}

TEST(MvccStoreTest, CheckTxnReportsPrimaryState) {
  MvccStore store;
  EXPECT_EQ(store.CheckTxn("p", Ts(10)).kind, TxnState::Kind::kNotFound);
  ASSERT_TRUE(store.Prewrite({Mutation::Put("p", "1")}, "p", Ts(10), kTtl).ok());
  TxnState state = store.CheckTxn("p", Ts(10));
  EXPECT_EQ(state.kind, TxnState::Kind::kLocked);
  ASSERT_TRUE(state.lock.has_value());
  EXPECT_EQ(state.lock->ttl_ms, kTtl);
  ASSERT_TRUE(store.Commit({"p"}, Ts(10), Ts(12)).ok());
  state = store.CheckTxn("p", Ts(10));
  EXPECT_EQ(state.kind, TxnState::Kind::kCommitted);
  EXPECT_EQ(state.commit_ts, Ts(12));
  ASSERT_TRUE(store.Rollback({"p"}, Ts(20)).ok());
  EXPECT_EQ(store.CheckTxn("p", Ts(20)).kind, TxnState::Kind::kRolledBack);
}

TEST(MvccStoreTest, GcHonoursSafePoint) {
  MvccStore store;
  FillHistory(store);                                // a: v1@10 v2@20 del@30 v3@40
  Write(store, {Mutation::Put("a", "v4")}, 45, 50);  // a: ... v4@50
  Write(store, {Mutation::Put("c", "x")}, 1, 2);     // c: x@2, deleted @22
  Write(store, {Mutation::Delete("c")}, 21, 22);
  ASSERT_TRUE(store.Prewrite({Mutation::Put("d", "pending")}, "d", Ts(34), kTtl).ok());
  std::vector<std::string> above = DescribeRows(store, "", "", 35, kMaxTs);
  std::vector<std::string> at_sp;
  for (const char* key : {"a", "b", "c"}) at_sp.push_back(Read(store, key, 35));

  GcStats stats = store.Gc(Ts(35));
  EXPECT_EQ(store.gc_safe_point(), Ts(35));
  EXPECT_EQ(stats.removed_keys, 1u);  // c: nothing visible at or after the safe point.
  EXPECT_GT(stats.removed_versions, 0u);
  // Reads at the safe point and the history above it are unchanged.
  for (size_t i = 0; i < at_sp.size(); ++i) {
    EXPECT_EQ(Read(store, std::string(1, static_cast<char>('a' + i)), 35), at_sp[i]);
  }
  EXPECT_EQ(DescribeRows(store, "", "", 35, kMaxTs), above);
  EXPECT_EQ(Read(store, "a", 45), "v3");
  EXPECT_EQ(Read(store, "a", 50), "v4");
  EXPECT_EQ(Read(store, "b", 35), "w1");
  EXPECT_EQ(store.Locks("", "").size(), 1u);  // Locks untouched.
  // a keeps v3@40 and v4@50; b keeps w1@15 and its lock record @38; d is
  // only a lock.
  MvccStats mvcc = store.Stats();
  EXPECT_EQ(mvcc.keys, 3u);
  EXPECT_EQ(mvcc.versions, 4u);
  EXPECT_EQ(mvcc.locks, 1u);

  // Below the safe point, reads and prewrites are refused.
  EXPECT_EQ(Read(store, "a", 34), "<below gc safe point>");
  auto old_scan = store.ScanCommitted("", "", Ts(34), kMaxTs);
  ASSERT_FALSE(old_scan.ok());
  EXPECT_EQ(old_scan.status().code(), Code::kGcSafepointExceeded);
  TxnStatus late = store.Prewrite({Mutation::Put("e", "1")}, "e", Ts(35), kTtl);
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().kind, TxnErrorKind::kBelowGcSafePoint);

  // The safe point never goes back; a later one keeps the newest put below it.
  EXPECT_EQ(store.Gc(Ts(20)).removed_versions, 0u);
  EXPECT_EQ(store.gc_safe_point(), Ts(35));
  store.Gc(Ts(45));
  EXPECT_EQ(Read(store, "a", 45), "v3");
  EXPECT_EQ(Read(store, "a", 50), "v4");
}

// Records observer events as compact strings.
class RecordingObserver : public MvccObserver {
 public:
  void OnPrewrite(const PrewriteEvent& e) override {
    events.push_back(Cat({"P", std::to_string(e.apply_index), " ", e.key, "/",
                          std::to_string(e.start_ts.value()), " ", MutationOpName(e.op), " ",
                          e.value, " old=", e.old_value.value_or("-"), " primary=", e.primary}));
  }
  void OnCommit(const CommitEvent& e) override {
    events.push_back(Cat({"C", std::to_string(e.apply_index), " ", e.key, "/",
                          std::to_string(e.start_ts.value()), "@",
                          std::to_string(e.commit_ts.value()), " ", WriteKindName(e.kind), " ",
                          e.value, " old=", e.old_value.value_or("-"), e.one_pc ? " 1pc" : ""}));
  }
  void OnRollback(const RollbackEvent& e) override {
    events.push_back(Cat({"R", std::to_string(e.apply_index), " ", e.key, "/",
                          std::to_string(e.start_ts.value()), e.removed_lock ? " lock=" : "",
                          e.removed_lock ? MutationOpName(e.lock_op) : ""}));
  }
  void OnApplied(uint64_t apply_index) override {
    events.push_back(Cat({"A", std::to_string(apply_index)}));
  }
  std::vector<std::string> events;
};

TEST(MvccStoreTest, ObserverSeesEventsInOrder) {
  MvccStore store;
  Write(store, {Mutation::Put("a", "a0")}, 1, 2);
  RecordingObserver observer;
  store.AddObserver(&observer);
  ASSERT_TRUE(
      store.Prewrite({Mutation::Put("a", "a1"), Mutation::Delete("b")}, "a", Ts(10), kTtl).ok());
  EXPECT_TRUE(store.Prewrite({Mutation::Put("a", "a1")}, "a", Ts(10), kTtl).ok());  // No event.
  ASSERT_TRUE(store.Commit({"a"}, Ts(10), Ts(15)).ok());
  ASSERT_TRUE(store.Commit({"b"}, Ts(10), Ts(15)).ok());
  ASSERT_TRUE(store.Prewrite({Mutation::Put("c", "c1")}, "c", Ts(20), kTtl).ok());
  ASSERT_TRUE(store.Rollback({"c", "d"}, Ts(20)).ok());
  ASSERT_TRUE(store.CommitOnePc({Mutation::Put("a", "a2")}, Ts(30), Ts(31)).ok());
  store.RemoveObserver(&observer);
  Write(store, {Mutation::Put("z", "unseen")}, 40, 41);

  EXPECT_EQ(observer.events, (std::vector<std::string>{
                                 "P3 a/10 put a1 old=a0 primary=a",
                                 "P3 b/10 delete  old=- primary=a",
                                 "A3",
                                 "C4 a/10@15 put a1 old=a0",
                                 "A4",
                                 "C5 b/10@15 delete  old=-",
                                 "A5",
                                 "P6 c/20 put c1 old=- primary=c",
                                 "A6",
                                 "R7 c/20 lock=put",
                                 "R7 d/20",
                                 "A7",
                                 "C8 a/30@31 put a2 old=a1 1pc",
                                 "A8",
                             }));
}

TEST(MvccStoreTest, ScansSeeKeysAddedAfterAnEarlierScanInKeyOrder) {
  MvccStore store;
  Write(store, {Mutation::Put("d", "d1"), Mutation::Put("b", "b1")}, 1, 2);
  ASSERT_EQ(store.Scan("", "", Ts(10), 0).value().size(), 2u);
  Write(store, {Mutation::Put("e", "e1"), Mutation::Put("a", "a1"), Mutation::Put("c", "c1")}, 3,
        4);
  ASSERT_TRUE(store.Prewrite({Mutation::Put("bb", "x")}, "bb", Ts(5), kTtl).ok());
  TxnResult<std::vector<KvPair>> all = store.Scan("", "", Ts(4), 0);
  ASSERT_TRUE(all.ok());
  std::vector<std::string> keys;
  for (const KvPair& kv : all.value()) keys.push_back(kv.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"a", "b", "c", "d", "e"}));
  EXPECT_EQ(store.MinLockStartTs("b", "c"), Ts(5));
  EXPECT_FALSE(store.MinLockStartTs("c", "").has_value());
  // A deleted key collected by GC leaves both indexes.
  ASSERT_TRUE(store.Rollback({"bb"}, Ts(5)).ok());
  EXPECT_FALSE(store.MinLockStartTs("", "").has_value());
  Write(store, {Mutation::Delete("c")}, 6, 7);
  EXPECT_EQ(store.Gc(Ts(8)).removed_keys, 2u);  // "c" and the rolled-back "bb".
  keys.clear();
  TxnResult<std::vector<KvPair>> some = store.Scan("b", "d", Ts(8), 0);
  ASSERT_TRUE(some.ok());
  for (const KvPair& kv : some.value()) keys.push_back(kv.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"b"}));
}

// A resolved-ts tick reads the locks while a region scan holds the store:
// it must answer without waiting for the scan to end.
TEST(MvccStoreTest, LockQueriesDoNotWaitForAScan) {
  MvccStore store;
  ASSERT_TRUE(store.Prewrite({Mutation::Put("a", "1")}, "a", Ts(10), kTtl).ok());
  ASSERT_TRUE(store.Commit(std::vector<std::string>{"a"}, Ts(10), Ts(11)).ok());
  ASSERT_TRUE(store.Prewrite({Mutation::Put("b", "2")}, "b", Ts(20), kTtl).ok());

  Notification in_scan;
  Notification release;
  std::thread scanner([&] {
    Result<uint64_t> scanned = store.VisitCommitted("", "", Ts(0), kMaxTs, [&](const ScannedRow&) {
      if (in_scan.HasBeenNotified()) return;
      in_scan.Notify();
      release.WaitFor(std::chrono::seconds(30));
    });
    EXPECT_TRUE(scanned.ok());
  });
  EXPECT_TRUE(in_scan.WaitFor());

  Notification answered;
  std::optional<Ts> min_lock;
  std::vector<LockInfo> locks;
  std::thread reader([&] {
    min_lock = store.MinLockStartTs("", "");
    locks = store.Locks("", "");
    answered.Notify();
  });
  EXPECT_TRUE(answered.WaitFor()) << "lock queries waited for the scan";
  release.Notify();
  reader.join();
  scanner.join();
  EXPECT_EQ(min_lock, Ts(20));
  ASSERT_EQ(locks.size(), 1u);
  EXPECT_EQ(locks[0].key, "b");
}

// Locks are listed apart from the store's main lock: a reader that lists
// them while writers prewrite, replace, commit and roll back must only ever
// see whole, live locks (the sanitizer builds check the lifetimes).
TEST(MvccStoreTest, LockListingRacesWithWriters) {
  MvccStore store;
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (uint64_t i = 1; i <= 2000; ++i) {
      const Ts start(i * 10);
      std::string k = "k";
      k += std::to_string(i % 3);
      std::string p = "p";
      p += std::to_string(i % 5);
      std::vector<Mutation> m = {Mutation::Put(k, "v"), Mutation::Put(p, "w")};
      const std::string primary = m[0].key;
      if (!store.Prewrite(m, primary, start, kTtl).ok()) continue;
      std::vector<std::string> keys = {m[0].key, m[1].key};
      if (i % 4 == 0) {
        EXPECT_TRUE(store.Rollback(keys, start).ok());
      } else {
        EXPECT_TRUE(store.Commit(keys, start, Ts(start.value() + 5)).ok());
      }
    }
    done = true;
  });
  uint64_t listed = 0;
  std::string bad;  // The first malformed lock seen, if any.
  while (!done.load() && bad.empty()) {
    for (const LockInfo& lock : store.Locks("", "")) {
      ++listed;
      if (lock.start_ts.value() % 10 != 0 || lock.value != (lock.key[0] == 'k' ? "v" : "w")) {
        bad = lock.key + "@" + std::to_string(lock.start_ts.value()) + "=" + lock.value;
      }
    }
    std::optional<Ts> min_lock = store.MinLockStartTs("", "");
    if (min_lock.has_value() && min_lock->value() % 10 != 0) {
      bad = "min lock " + std::to_string(min_lock->value());
    }
  }
  writer.join();
  EXPECT_EQ(bad, "");
  EXPECT_TRUE(store.Locks("", "").empty());
  RecordProperty("locks_listed", std::to_string(listed));
}

// What the resolved-ts round of CdcHub relies on: once MinLockStartTs no
// longer sees a transaction's lock, its commit has been handed to the
// observers. Here the observer holds the commit inside OnCommit while a
// round reads the locks; the round must not answer before OnApplied.
class OrderLog final : public MvccObserver {
 public:
  explicit OrderLog(Notification* round_done) : round_done_(round_done) {}
  void OnCommit(const CommitEvent&) override {
    in_commit_.Notify();
    // With the order kept, the round is blocked until OnApplied and this
    // wait runs out; otherwise the round finishes inside the commit.
    round_done_->WaitFor(std::chrono::milliseconds(200));
  }
  void OnApplied(uint64_t) override { Append("applied"); }
  void Append(const std::string& what) {
    MutexLock lock(&mu_);
    log_.push_back(what);
  }
  std::vector<std::string> log() const {
    MutexLock lock(&mu_);
    return log_;
  }
  Notification& in_commit() { return in_commit_; }

 private:
  Notification* const round_done_;
  Notification in_commit_;
  mutable Mutex mu_;
  std::vector<std::string> log_ GUARDED_BY(mu_);
};

TEST(MvccStoreTest, ALockLeavesTheListOnlyWithItsCommitHandedOver) {
  MvccStore store;
  ASSERT_TRUE(store.Prewrite({Mutation::Put("k", "v")}, "k", Ts(10), kTtl).ok());
  Notification round_done;
  OrderLog log(&round_done);
  store.AddObserver(&log);
  std::thread committer(
      [&] { EXPECT_TRUE(store.Commit(std::vector<std::string>{"k"}, Ts(10), Ts(11)).ok()); });
  EXPECT_TRUE(log.in_commit().WaitFor());
  std::optional<Ts> min_lock = store.MinLockStartTs("", "");
  log.Append(min_lock.has_value() ? "locked" : "unlocked");
  round_done.Notify();
  committer.join();
  store.RemoveObserver(&log);
  // Either the round saw the lock, or it ran after the commit was applied.
  std::vector<std::string> got = log.log();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(got == (std::vector<std::string>{"locked", "applied"}) ||
              got == (std::vector<std::string>{"applied", "unlocked"}))
      << got[0] << ", " << got[1];
}

// A one-phase commit lists no lock, so once its commit ts is taken, a
// resolved-ts bound read meanwhile must wait until the commit reaches the
// observers; otherwise the bound could pass a commit still to come.
TEST(MvccStoreTest, AResolvedBoundWaitsForAOnePcCommitWhoseTsIsTaken) {
  MvccStore store;
  Notification no_wait;
  no_wait.Notify();
  OrderLog log(&no_wait);
  store.AddObserver(&log);
  std::atomic<uint64_t> tso{10};
  Notification ts_taken;
  Notification bound_read;
  Ts commit_ts;
  std::thread committer([&] {
    auto next_ts = [&]() -> std::optional<Ts> {
      Ts ts(++tso);
      ts_taken.Notify();
      // With the order kept, the bound waits for the hand-over and this wait
      // runs out; otherwise the bound is read in between.
      bound_read.WaitFor(std::chrono::milliseconds(200));
      return ts;
    };
    EXPECT_TRUE(store.CommitOnePc({Mutation::Put("k", "v")}, Ts(10), next_ts, &commit_ts).ok());
  });
  EXPECT_TRUE(ts_taken.WaitFor());
  Result<Ts> bound = store.ReadResolvedBound([&]() -> Result<Ts> { return Ts(++tso); });
  log.Append("bound");
  bound_read.Notify();
  committer.join();
  store.RemoveObserver(&log);
  ASSERT_TRUE(bound.ok());
  EXPECT_GT(*bound, commit_ts);
  EXPECT_EQ(log.log(), (std::vector<std::string>{"applied", "bound"}));
}

}  // namespace
}  // namespace sluice::simkv
