// The lock resolver against a SimCluster over loopback: transactions whose
// writer died are settled as their primary says, live ones are left alone.
#include "kvclient/lock_resolver.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "common/memcomparable.h"
#include "common/tso.h"
#include "kvclient/kvclient_test_util.h"

namespace sluice::kvclient::testing {
namespace {

class LockResolverTest : public KvClientTest {
 protected:
  void SetUp() override {
    StartCluster();
    LockResolverOptions options;
    options.rpc.timeout = std::chrono::seconds(20);
    options.rpc.backoff.base = std::chrono::milliseconds(10);
    options.rpc.backoff.max = std::chrono::milliseconds(100);
    options.scan_limit = 2;  // Pages of two locks.
    resolver_ = std::make_unique<LockResolver>(pd_.get(), cache_.get(), options);
  }
  void TearDown() override {
    if (resolver_) resolver_->Stop();
    KvClientTest::TearDown();
  }

  // A start ts `ms` milliseconds in the past (its TTL may be over already).
  Ts Ago(int64_t ms) { return tso::Compose(tso::Physical(Now()) - ms, 0); }

  // Locks `keys` (keys[0] the primary) for `start`; the writer then dies.
  void Prewrite(Ts start, const std::vector<std::string>& keys, uint64_t ttl_ms) {
    std::vector<simkv::Mutation> mutations;
    for (const std::string& key : keys) mutations.push_back(simkv::Mutation::Put(key, "v-" + key));
    simkv::TxnStatus status = cluster_->mvcc().Prewrite(mutations, keys[0], start, ttl_ms);
    ASSERT_TRUE(status.ok()) << status.error().ToString();
  }

  size_t LocksIn(std::string_view start, std::string_view end) {
    return cluster_->mvcc().Locks(start, end).size();
  }

  std::optional<std::string> Read(const std::string& key) {
    Result<std::optional<std::string>> got = reader_->Get(key, Now());
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    return got.ok() ? *got : std::nullopt;
  }

  std::unique_ptr<LockResolver> resolver_;
};

TEST_F(LockResolverTest, SettlesOrphansAsTheirPrimarySaysAndLeavesLiveLocks) {
  // Rolled back: the primary's TTL is over and nothing committed it.
  const Ts dead = Ago(10'000);
  Prewrite(dead, {"a1", "n1"}, 3000);
  // Committed: the writer committed the primary, then died.
  const Ts half = Ago(10'000);
  Prewrite(half, {"b1", "n2"}, 3000);
  std::vector<std::string> primary{"b1"};
  const Ts commit = Now();
  ASSERT_TRUE(cluster_->mvcc().Commit(primary, half, commit).ok());
  // Alive: a long TTL.
  const Ts alive = Now();
  Prewrite(alive, {"n3"}, 600'000);
  ASSERT_EQ(LocksIn("m", "t"), 3u);

  Result<LockResolveResult> result =
      resolver_->ResolveRegion(memcomparable::EncodeBytes("n"), Now());
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->txns_rolled_back, 1u);
  EXPECT_EQ(result->txns_committed, 1u);
  EXPECT_EQ(result->txns_alive, 1u);
  EXPECT_EQ(LocksIn("", ""), 1u);  // n3 only; a1 went with CheckTxnStatus.
  EXPECT_EQ(Read("n1"), std::nullopt);
  EXPECT_EQ(Read("a1"), std::nullopt);
  EXPECT_EQ(Read("n2"), "v-n2");
  simkv::TxnState settled = cluster_->mvcc().CheckTxn("n2", half);
  EXPECT_EQ(settled.kind, simkv::TxnState::Kind::kCommitted);
  EXPECT_EQ(settled.commit_ts, commit);
}

TEST_F(LockResolverTest, PagesThroughTheRegionAndHonoursMaxVersion) {
  for (int i = 0; i < 5; ++i) Prewrite(Ago(10'000 - i), {"n" + std::to_string(i)}, 1000);
  Prewrite(Ago(1'000), {"o"}, 0);  // Above max_version: not scanned.
  Result<LockResolveResult> result =
      resolver_->ResolveRegion(memcomparable::EncodeBytes("p"), Ago(5'000));
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->txns_rolled_back, 5u);
  EXPECT_EQ(result->locks_scanned, 5u);
  EXPECT_EQ(LocksIn("m", "t"), 1u);
  // Locks of other regions are not touched.
  Prewrite(Ago(10'000), {"z"}, 0);
  ASSERT_TRUE(resolver_->ResolveRegion(memcomparable::EncodeBytes("n"), Now()).ok());
  EXPECT_EQ(LocksIn("t", ""), 1u);
  EXPECT_EQ(LocksIn("m", "t"), 0u);
}

TEST_F(LockResolverTest, StopCancels) {
  resolver_->Stop();
  Prewrite(Ago(10'000), {"n1"}, 0);
  Result<LockResolveResult> result =
      resolver_->ResolveRegion(memcomparable::EncodeBytes("n"), Now());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), Code::kCancelled) << result.status().ToString();
  EXPECT_EQ(LocksIn("m", "t"), 1u);
}

}  // namespace
}  // namespace sluice::kvclient::testing
