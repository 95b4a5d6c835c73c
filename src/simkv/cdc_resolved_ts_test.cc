// Conformance: resolved ts as a CDC client sees it.
#include <gtest/gtest.h>

#include "simkv/simkv_test_util.h"

namespace sluice::simkv::testing {
namespace {

class CdcResolvedTsTest : public SimKvTest {
 protected:
  void SetUp() override { StartCluster(); }

  std::vector<uint64_t> Resolved(const CdcTestClient& client, uint64_t request_id,
                                 const RegionInfo& region) {
    StreamLog log = client.Snapshot();
    const RegionLog* region_log = log.Find(request_id, region.id.value());
    return region_log == nullptr ? std::vector<uint64_t>{} : region_log->resolved;
  }
};

TEST_F(CdcResolvedTsTest, NeverPassesAnOpenLockAndNeverGoesBack) {
  RegionInfo region = RegionFor("c");
  auto client = Subscribe(region, 1);
  cluster_->AdvanceResolvedTs();
  std::optional<uint64_t> before = client->WaitResolvedAbove(1, region.id.value(), 0);
  ASSERT_TRUE(before.has_value());

  Txn txn = Prewrite({{"c1", "v"}});
  for (int i = 0; i < 3; ++i) {
    cluster_->AdvanceResolvedTs();
    ASSERT_TRUE(client->WaitFor([&](const StreamLog& log) {
      return log.Find(1, region.id.value())->resolved.size() >= static_cast<size_t>(i + 2);
    }));
    EXPECT_LE(Resolved(*client, 1, region).back(), txn.start_ts().value());
  }
  Result<Ts> commit = cluster_->txn().Commit(txn);
  ASSERT_TRUE(commit.ok());
  cluster_->AdvanceResolvedTs();
  std::optional<uint64_t> after = client->WaitResolvedAbove(1, region.id.value(), commit->value());
  ASSERT_TRUE(after.has_value());
  std::vector<uint64_t> all = Resolved(*client, 1, region);
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end()));
  ExpectNoViolations(*client);  // Includes: no commit at or below a resolved ts.
}

TEST_F(CdcResolvedTsTest, LockOutsideTheObservedRangeDoesNotHoldItBack) {
  RegionInfo region = RegionFor("c");
  auto client = Subscribe(region, 1);
  Txn other = Prewrite({{"n1", "elsewhere"}});
  cluster_->AdvanceResolvedTs();
  std::optional<uint64_t> ts = client->WaitResolvedAbove(1, region.id.value(), 0);
  ASSERT_TRUE(ts.has_value());
  EXPECT_GT(*ts, other.start_ts().value());
  ExpectNoViolations(*client);
}

TEST_F(CdcResolvedTsTest, BatchesAreGroupedByRequestIdWithMultiplexing) {
  RegionInfo c = RegionFor("c");
  auto client = Connect(LeaderAddress(c));
  ASSERT_TRUE(client->Send(RegisterRequest(cluster_id(), c, 10, Ts(0))));
  ASSERT_TRUE(client->Send(RegisterRequest(cluster_id(), c, 20, Ts(0))));
  ASSERT_TRUE(client->WaitInitialized(10, c.id.value()));
  ASSERT_TRUE(client->WaitInitialized(20, c.id.value()));
  cluster_->AdvanceResolvedTs();
  ASSERT_TRUE(client->WaitResolvedAbove(10, c.id.value(), 0).has_value());
  ASSERT_TRUE(client->WaitResolvedAbove(20, c.id.value(), 0).has_value());
  ExpectNoViolations(*client);
}

TEST_F(CdcResolvedTsTest, EventFeedV1SendsRequestIdZero) {
  RegionInfo c = RegionFor("c");
  CdcTestClientOptions options;
  options.v2 = false;
  auto client = Connect(LeaderAddress(c), options);
  ASSERT_TRUE(client->Send(RegisterRequest(cluster_id(), c, 5, Ts(0))));
  ASSERT_TRUE(client->WaitInitialized(5, c.id.value()));
  cluster_->AdvanceResolvedTs();
  // The client files a request-id-0 batch under the region's subscription.
  ASSERT_TRUE(client->WaitResolvedAbove(5, c.id.value(), 0).has_value());
  ExpectNoViolations(*client);
}

TEST_F(CdcResolvedTsTest, TickerAdvancesOnTheClock) {
  SimClusterOptions options = DefaultOptions();
  options.resolved_ts_interval = std::chrono::milliseconds(200);
  cluster_->Stop();
  StartCluster(options);
  RegionInfo region = RegionFor("c");
  auto client = Subscribe(region, 1);
  // Three tickers (one per store) wait on the manual clock.
  ASSERT_TRUE(clock_.AwaitWaiters(3));
  clock_.Advance(std::chrono::milliseconds(200));
  ASSERT_TRUE(client->WaitResolvedAbove(1, region.id.value(), 0).has_value());
  ExpectNoViolations(*client);
}

}  // namespace
}  // namespace sluice::simkv::testing
