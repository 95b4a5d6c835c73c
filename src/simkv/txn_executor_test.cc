#include "simkv/txn_executor.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "simkv/mvcc_store.h"
#include "simkv/workload_test_util.h"

namespace sluice::simkv {
namespace {

class TxnExecutorTest : public ::testing::Test {
 protected:
  // Commits `value` at `key` in one phase, as another client would.
  void WriteOther(const std::string& key, const std::string& value) {
    Ts start = tso_->Allocate().value();
    Ts commit = tso_->Allocate().value();
    ASSERT_TRUE(store_.CommitOnePc({Mutation::Put(key, value)}, start, commit).ok());
  }

  std::optional<std::string> Read(const std::string& key) {
    return store_.Get(key, tso_->Allocate().value()).value();
  }

  MvccStore store_;
  std::unique_ptr<TsoAllocator> tso_ = testutil::FixedTso();
  TxnExecutor executor_{&store_, tso_.get(), /*max_attempts=*/3};
};

TEST(MutationSetTest, LastWriteWinsInFirstWriteOrder) {
  MutationSet set;
  set.Put("a", "1");
  set.Put("b", "2");
  set.Delete("a");
  set.Put("b", "3");
  ASSERT_EQ(set.size(), 2u);
  EXPECT_EQ(set.mutations()[0].key, "a");
  EXPECT_EQ(set.mutations()[0].op, MutationOp::kDelete);
  EXPECT_EQ(set.mutations()[1].value, "3");
  std::vector<Mutation> taken = set.Take();
  EXPECT_EQ(taken.size(), 2u);
  EXPECT_TRUE(set.empty());
}

TEST_F(TxnExecutorTest, CommitsPrimaryAndSecondaries) {
  auto out = executor_.Commit({Mutation::Put("k1", "v1"), Mutation::Put("k2", "v2")}, {});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_LT(out->start_ts, out->commit_ts);
  EXPECT_EQ(out->attempts, 1);
  EXPECT_EQ(Read("k1"), "v1");
  EXPECT_EQ(Read("k2"), "v2");
  EXPECT_EQ(store_.MinLockStartTs("", ""), std::nullopt);
}

TEST_F(TxnExecutorTest, WriteConflictIsRetriedWithANewStartTs) {
  int calls = 0;
  std::vector<Ts> starts;
  executor_.set_before_prewrite_hook([&](Ts start, const std::vector<Mutation>& m) {
    starts.push_back(start);
    // The first attempt meets a write committed after its start ts.
    if (calls++ == 0) WriteOther(m[0].key, "other");
  });
  auto out = executor_.Commit({Mutation::Put("k", "mine")}, {});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->attempts, 2);
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_LT(starts[0], starts[1]);
  EXPECT_EQ(out->start_ts, starts[1]);
  EXPECT_EQ(executor_.stats().conflict_retries, 1u);
  EXPECT_EQ(Read("k"), "mine");
}

TEST_F(TxnExecutorTest, OnePhaseConflictIsRetried) {
  int calls = 0;
  executor_.set_before_prewrite_hook([&](Ts, const std::vector<Mutation>& m) {
    if (calls++ == 0) WriteOther(m[0].key, "other");
  });
  TxnOptions opts;
  opts.one_pc = true;
  auto out = executor_.Commit({Mutation::Put("k", "mine")}, opts);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->attempts, 2);
  EXPECT_EQ(executor_.stats().one_pc, 1u);
  EXPECT_EQ(Read("k"), "mine");
}

TEST_F(TxnExecutorTest, GivesUpWithAbortedWhenEveryAttemptConflicts) {
  executor_.set_before_prewrite_hook(
      [&](Ts, const std::vector<Mutation>& m) { WriteOther(m[0].key, "other"); });
  auto out = executor_.Commit({Mutation::Put("k", "mine")}, {});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), Code::kAborted);
  EXPECT_EQ(executor_.stats().conflict_retries, 3u);
  EXPECT_EQ(store_.MinLockStartTs("", ""), std::nullopt);
  EXPECT_EQ(Read("k"), "other");
}

TEST_F(TxnExecutorTest, OpenTransactionHoldsItsLocksUntilCommitOrRollback) {
  auto open = executor_.PrewriteOnly({Mutation::Put("a", "1"), Mutation::Put("b", "2")}, 60000);
  ASSERT_TRUE(open.ok());
  EXPECT_EQ(store_.MinLockStartTs("", ""), open->start_ts);
  auto committed = executor_.CommitOpen(*open);
  ASSERT_TRUE(committed.ok());
  EXPECT_EQ(store_.MinLockStartTs("", ""), std::nullopt);
  EXPECT_EQ(Read("b"), "2");

  auto other = executor_.PrewriteOnly({Mutation::Put("c", "3")}, 60000);
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE(executor_.RollbackOpen(*other).ok());
  EXPECT_EQ(store_.MinLockStartTs("", ""), std::nullopt);
  EXPECT_EQ(Read("c"), std::nullopt);
  EXPECT_EQ(executor_.stats().rolled_back, 1u);
}

}  // namespace
}  // namespace sluice::simkv
