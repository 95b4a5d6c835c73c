// Lock resolution over the MVCC store: what TiKV's ScanLock, CheckTxnStatus
// and ResolveLock do to a transaction whose writer went away.
#include "simkv/lock_resolution.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/tso.h"

namespace sluice::simkv {
namespace {

constexpr int64_t kMs = 1'700'000'000'000;  // A physical time in ms.
constexpr uint64_t kTtl = 3000;

Ts At(int64_t ms_after, int64_t logical = 0) { return tso::Compose(kMs + ms_after, logical); }

class LockResolutionTest : public ::testing::Test {
 protected:
  // Transaction `start` locks `keys` (keys[0] the primary) and its writer dies.
  void Orphan(Ts start, const std::vector<std::string>& keys) {
    std::vector<Mutation> mutations;
    for (const std::string& key : keys) mutations.push_back(Mutation::Put(key, "v" + key));
    ASSERT_TRUE(store_.Prewrite(mutations, keys[0], start, kTtl).ok());
  }
  std::optional<std::string> Read(const std::string& key) {
    TxnResult<std::optional<std::string>> got = store_.Get(key, At(1'000'000));
    EXPECT_TRUE(got.ok()) << (got.ok() ? "" : got.error().ToString());
    return got.ok() ? got.value() : std::nullopt;
  }

  MvccStore store_;
};

TEST_F(LockResolutionTest, ScanLocksHonoursMaxVersionRangeAndLimit) {
  Orphan(At(0, 1), {"a", "c"});
  Orphan(At(0, 5), {"b"});
  Orphan(At(10), {"d"});
  auto keys = [](const std::vector<LockInfo>& locks) {
    std::string out;
    for (const LockInfo& l : locks) out += l.key;
    return out;
  };
  EXPECT_EQ(keys(ScanLocks(store_, "", "", At(0, 5), 0)), "abc");
  EXPECT_EQ(keys(ScanLocks(store_, "", "", At(0, 4), 0)), "ac");
  EXPECT_EQ(keys(ScanLocks(store_, "b", "d", At(100), 0)), "bc");
  EXPECT_EQ(keys(ScanLocks(store_, "", "", At(100), 2)), "ab");
  std::vector<LockInfo> locks = ScanLocks(store_, "c", "", At(0, 1), 0);
  ASSERT_EQ(locks.size(), 1u);
  EXPECT_EQ(locks[0].primary, "a");
  EXPECT_EQ(locks[0].start_ts, At(0, 1));
  EXPECT_EQ(locks[0].ttl_ms, kTtl);
}

TEST_F(LockResolutionTest, ALiveLockIsLeftAndAnExpiredOneRolledBack) {
  Orphan(At(0), {"p", "s"});
  // TTL not over: locked, nothing changes.
  TxnResult<TxnStatusAnswer> alive = CheckTxnStatus(store_, "p", At(0), At(kTtl), false);
  ASSERT_TRUE(alive.ok());
  EXPECT_EQ(alive.value().lock_ttl_ms, kTtl);
  EXPECT_EQ(alive.value().action, TxnAction::kNoAction);
  ASSERT_TRUE(alive.value().lock.has_value());
  EXPECT_EQ(store_.Locks("", "").size(), 2u);
  // Over: the primary is rolled back; then ResolveLock clears the rest.
  TxnResult<TxnStatusAnswer> expired = CheckTxnStatus(store_, "p", At(0), At(kTtl + 1), false);
  ASSERT_TRUE(expired.ok());
  EXPECT_EQ(expired.value().action, TxnAction::kTtlExpireRollback);
  EXPECT_EQ(expired.value().lock_ttl_ms, 0u);
  EXPECT_EQ(expired.value().commit_ts, Ts());
  ASSERT_EQ(store_.Locks("", "").size(), 1u);
  ASSERT_TRUE(ResolveTxnLocks(store_, "", "", At(0), Ts(), {}).ok());
  EXPECT_TRUE(store_.Locks("", "").empty());
  EXPECT_EQ(Read("p"), std::nullopt);
  EXPECT_EQ(Read("s"), std::nullopt);
  // The writer coming back cannot commit it any more.
  std::vector<std::string> primary{"p"};
  EXPECT_FALSE(store_.Commit(primary, At(0), At(20)).ok());
}

TEST_F(LockResolutionTest, ACommittedPrimaryCommitsTheSecondaries) {
  Orphan(At(0), {"p", "s1", "s2"});
  std::vector<std::string> primary{"p"};
  ASSERT_TRUE(store_.Commit(primary, At(0), At(5)).ok());
  TxnResult<TxnStatusAnswer> status = CheckTxnStatus(store_, "p", At(0), At(1'000'000), true);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status.value().commit_ts, At(5));
  EXPECT_EQ(status.value().lock_ttl_ms, 0u);
  // Only s1 in range first, then the rest of the region.
  ASSERT_TRUE(ResolveTxnLocks(store_, "s1", "s2", At(0), At(5), {}).ok());
  EXPECT_EQ(store_.Locks("", "").size(), 1u);
  ASSERT_TRUE(ResolveTxnLocks(store_, "", "", At(0), At(5), {}).ok());
  EXPECT_TRUE(store_.Locks("", "").empty());
  EXPECT_EQ(Read("s1"), "vs1");
  EXPECT_EQ(Read("s2"), "vs2");
  // Another transaction's locks are not touched.
  Orphan(At(50), {"q"});
  ASSERT_TRUE(ResolveTxnLocks(store_, "", "", At(0), At(5), {}).ok());
  EXPECT_EQ(store_.Locks("", "").size(), 1u);
}

TEST_F(LockResolutionTest, NoTraceIsNotFoundUnlessAskedToRollBack) {
  TxnResult<TxnStatusAnswer> unknown = CheckTxnStatus(store_, "p", At(0), At(10), false);
  ASSERT_TRUE(unknown.ok());
  EXPECT_TRUE(unknown.value().not_found);
  TxnResult<TxnStatusAnswer> rolled = CheckTxnStatus(store_, "p", At(0), At(10), true);
  ASSERT_TRUE(rolled.ok());
  EXPECT_EQ(rolled.value().action, TxnAction::kLockNotExistRollback);
  // The rollback record refuses a late prewrite of that transaction.
  EXPECT_FALSE(store_.Prewrite({Mutation::Put("p", "late")}, "p", At(0), kTtl).ok());
}

TEST_F(LockResolutionTest, ACommitTsNotAboveTheStartTsIsRefused) {
  Orphan(At(10), {"p"});
  std::vector<std::string> keys{"p"};
  EXPECT_FALSE(ResolveTxnLocks(store_, "", "", At(10), At(10), keys).ok());
  EXPECT_EQ(store_.Locks("", "").size(), 1u);
}

}  // namespace
}  // namespace sluice::simkv
