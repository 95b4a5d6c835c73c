// Conformance: each cdcpb.Error appears when its fault is injected, filled as
// TiKV fills it, and the subscription ends with it.
#include <gtest/gtest.h>

#include "common/memcomparable.h"
#include "common/test_util.h"
#include "simkv/simkv_test_util.h"

namespace sluice::simkv::testing {
namespace {

using cdcpb::Event;

class CdcErrorsTest : public SimKvTest {
 protected:
  void SetUp() override { StartCluster(); }

  // Registers `request` on `address` and returns the error it is answered.
  std::optional<cdcpb::Error> ErrorFor(const std::string& address,
                                       const cdcpb::ChangeDataRequest& request) {
    auto client = Connect(address);
    EXPECT_TRUE(client->Send(request));
    std::optional<cdcpb::Error> error =
        client->WaitError(request.request_id(), request.region_id());
    ExpectNoViolations(*client);
    return error;
  }
};

TEST_F(CdcErrorsTest, NotLeaderNamesTheLeader) {
  RegionInfo region = RegionFor("c");
  auto error = ErrorFor(cluster_->store_address(FollowerStore(region)),
                        RegisterRequest(cluster_id(), region, 1, Ts(0)));
  ASSERT_TRUE(error && error->has_not_leader()) << (error ? error->DebugString() : "none");
  EXPECT_EQ(error->not_leader().region_id(), region.id.value());
  EXPECT_EQ(error->not_leader().leader().store_id(), region.leader.value());
  EXPECT_EQ(error->not_leader().leader().id(), region.LeaderPeer()->id);
}

TEST_F(CdcErrorsTest, RegionNotFoundForUnknownRegionAndForAStoreWithoutAPeer) {
  RegionInfo region = RegionFor("c");
  RegionInfo unknown = region;
  unknown.id = RegionId(987654);
  auto error = ErrorFor(LeaderAddress(region), RegisterRequest(cluster_id(), unknown, 1, Ts(0)));
  ASSERT_TRUE(error && error->has_region_not_found());
  EXPECT_EQ(error->region_not_found().region_id(), 987654u);

  RestartCluster([](SimClusterOptions* o) { o->replicas = 1; });
  region = RegionFor("c");
  StoreId other(region.leader.value() % 3 + 1);
  error = ErrorFor(cluster_->store_address(other), RegisterRequest(cluster_id(), region, 1, Ts(0)));
  ASSERT_TRUE(error && error->has_region_not_found());
}

TEST_F(CdcErrorsTest, StaleEpochIsEpochNotMatchWithTheCurrentRegion) {
  RegionInfo region = RegionFor("c");
  RegionInfo stale = region;
  stale.epoch.version += 5;
  auto error = ErrorFor(LeaderAddress(region), RegisterRequest(cluster_id(), stale, 1, Ts(0)));
  ASSERT_TRUE(error && error->has_epoch_not_match());
  ASSERT_GE(error->epoch_not_match().current_regions_size(), 1);
  EXPECT_EQ(error->epoch_not_match().current_regions(0).id(), region.id.value());
  EXPECT_EQ(error->epoch_not_match().current_regions(0).region_epoch().version(),
            region.epoch.version);
}

TEST_F(CdcErrorsTest, ConfChangeAloneIsNotAnEpochErrorUnlessStrict) {
  RegionInfo region = RegionFor("c");
  ASSERT_TRUE(cluster_->BumpEpoch(region.id).ok());
  auto client = Subscribe(region, 1);  // Old conf_ver, same version: TiKV accepts.
  ExpectNoViolations(*client);

  RestartCluster([](SimClusterOptions* o) { o->check_conf_ver = true; });
  region = RegionFor("c");
  ASSERT_TRUE(cluster_->BumpEpoch(region.id).ok());
  auto error = ErrorFor(LeaderAddress(region), RegisterRequest(cluster_id(), region, 1, Ts(0)));
  ASSERT_TRUE(error && error->has_epoch_not_match());
}

TEST_F(CdcErrorsTest, SplitEndsSubscribersWithEpochNotMatchAndBothHalves) {
  RegionInfo region = RegionFor("c");
  auto client = Subscribe(region, 1);
  auto parts = cluster_->Split(region.id, "f");
  ASSERT_TRUE(parts.ok());
  auto error = client->WaitError(1, region.id.value());
  ASSERT_TRUE(error && error->has_epoch_not_match());
  ASSERT_EQ(error->epoch_not_match().current_regions_size(), 2);
  EXPECT_EQ(error->epoch_not_match().current_regions(0).id(), parts->first.id.value());
  EXPECT_EQ(error->epoch_not_match().current_regions(1).id(), parts->second.id.value());
  EXPECT_EQ(error->epoch_not_match().current_regions(1).start_key(),
            memcomparable::EncodeBytes("f"));
  EXPECT_EQ(cluster_->NumSubscriptions(region.leader), 0u);
  // Writes after the split are not sent on the dead subscription.
  Put({{"c1", "after"}});
  cluster_->AdvanceResolvedTs();
  ExpectNoViolations(*client);
}

TEST_F(CdcErrorsTest, MergeEndsSubscribersOfBothRegions) {
  RegionInfo left = RegionFor("c");
  RegionInfo right = RegionFor("n");
  auto left_client = Subscribe(left, 1);
  auto right_client = Subscribe(right, 2);
  auto merged = cluster_->Merge(left.id, right.id);
  ASSERT_TRUE(merged.ok());
  for (auto [client, request, region] :
       {std::tuple{left_client.get(), 1, left}, std::tuple{right_client.get(), 2, right}}) {
    auto error = client->WaitError(request, region.id.value());
    ASSERT_TRUE(error && error->has_epoch_not_match()) << region.id.value();
    ASSERT_EQ(error->epoch_not_match().current_regions_size(), 1);
    EXPECT_EQ(error->epoch_not_match().current_regions(0).id(), merged->id.value());
    ExpectNoViolations(*client);
  }
}

TEST_F(CdcErrorsTest, LeaderTransferEndsSubscribersWithNotLeaderAndTheNewLeader) {
  RegionInfo region = RegionFor("c");
  auto client = Subscribe(region, 1);
  StoreId target = FollowerStore(region);
  ASSERT_TRUE(cluster_->TransferLeader(region.id, target).ok());
  auto error = client->WaitError(1, region.id.value());
  ASSERT_TRUE(error && error->has_not_leader());
  EXPECT_EQ(error->not_leader().leader().store_id(), target.value());
  // The new leader serves the region.
  RegionInfo moved = RegionFor("c");
  auto again = Subscribe(moved, 1);
  ExpectNoViolations(*client);
  ExpectNoViolations(*again);
}

TEST_F(CdcErrorsTest, BusyStoreAnswersServerIsBusyUntilCleared) {
  RegionInfo region = RegionFor("c");
  ASSERT_TRUE(cluster_->SetStoreBusy(region.leader, "too many pending scans", 250).ok());
  auto error = ErrorFor(LeaderAddress(region), RegisterRequest(cluster_id(), region, 1, Ts(0)));
  ASSERT_TRUE(error && error->has_server_is_busy());
  EXPECT_EQ(error->server_is_busy().reason(), "too many pending scans");
  EXPECT_EQ(error->server_is_busy().backoff_ms(), 250u);
  ASSERT_TRUE(cluster_->ClearStoreBusy(region.leader).ok());
  auto client = Subscribe(region, 1);
  ExpectNoViolations(*client);
}

TEST_F(CdcErrorsTest, CongestFaultEndsEverySubscriptionWithCongested) {
  RegionInfo region = RegionFor("c");
  auto client = Subscribe(region, 1);
  ASSERT_TRUE(cluster_->Congest(region.leader).ok());
  auto error = client->WaitError(1, region.id.value());
  ASSERT_TRUE(error && error->has_congested());
  EXPECT_EQ(error->congested().region_id(), region.id.value());
  ExpectNoViolations(*client);
}

TEST_F(CdcErrorsTest, SlowClientOverflowIsCongestedAndTheStreamLives) {
  RestartCluster([](SimClusterOptions* o) { o->sink.max_bytes = 64 * 1024; });
  RegionInfo region = RegionFor("c");
  // A stream that does not read: once gRPC's windows are full its sink fills
  // up, and the region is congested instead of making the writers wait.
  auto slow = ConnectPaused(region);
  ASSERT_TRUE(slow->Send(RegisterRequest(cluster_id(), region, 2, cluster_->tso().Max())));
  ASSERT_TRUE(PollUntil([&] { return cluster_->NumSubscriptions(region.leader) == 1; }));
  std::string value(16 * 1024, 'x');
  for (int i = 0; i < 8000 && cluster_->NumSubscriptions(region.leader) > 0; ++i) {
    std::string key = "c";
    key += std::to_string(i % 50);
    Put({{key, value}});
  }
  EXPECT_EQ(cluster_->NumSubscriptions(region.leader), 0u);
  slow->StartReading();
  auto error = slow->WaitError(2, region.id.value());
  ASSERT_TRUE(error && error->has_congested());
  EXPECT_EQ(error->congested().region_id(), region.id.value());
  // The stream itself still works.
  ASSERT_TRUE(slow->Send(RegisterRequest(cluster_id(), region, 3, cluster_->tso().Max())));
  EXPECT_TRUE(slow->WaitInitialized(3, region.id.value()));
  ExpectNoViolations(*slow);
}

TEST_F(CdcErrorsTest, DuplicateRequestKeepsTheFirstSubscription) {
  RegionInfo region = RegionFor("c");
  auto client = Subscribe(region, 1);
  ASSERT_TRUE(client->Send(RegisterRequest(cluster_id(), region, 1, Ts(0))));
  auto error = client->WaitError(1, region.id.value());
  ASSERT_TRUE(error && error->has_duplicate_request());
  EXPECT_EQ(error->duplicate_request().region_id(), region.id.value());
  EXPECT_EQ(cluster_->NumSubscriptions(region.leader), 1u);
}

TEST_F(CdcErrorsTest, OldOrMissingClientVersionIsCompatibility) {
  RegionInfo region = RegionFor("c");
  for (const char* version : {"4.0.7", "", "not-a-version", "4.0.8-rc.1"}) {
    auto request = RegisterRequest(cluster_id(), region, 1, Ts(0));
    request.mutable_header()->set_ticdc_version(version);
    auto error = ErrorFor(LeaderAddress(region), request);
    ASSERT_TRUE(error && error->has_compatibility()) << version;
    EXPECT_EQ(error->compatibility().required_version(), "4.0.8");
  }
  auto raw = RegisterRequest(cluster_id(), region, 1, Ts(0));
  raw.set_kv_api(cdcpb::ChangeDataRequest::RawKV);
  auto error = ErrorFor(LeaderAddress(region), raw);
  ASSERT_TRUE(error && error->has_compatibility());
  EXPECT_EQ(error->compatibility().required_version(), "6.2.0");
}

TEST_F(CdcErrorsTest, ClusterIdMismatchForClientsThatValidateIt) {
  RegionInfo region = RegionFor("c");
  auto request = RegisterRequest(cluster_id() + 1, region, 1, Ts(0));
  auto error = ErrorFor(LeaderAddress(region), request);
  ASSERT_TRUE(error && error->has_cluster_id_mismatch());
  EXPECT_EQ(error->cluster_id_mismatch().current(), cluster_id());
  EXPECT_EQ(error->cluster_id_mismatch().request(), cluster_id() + 1);

  // Clients before 5.3.0 do not validate it (TiKV's feature gate).
  request.mutable_header()->set_ticdc_version("5.2.0");
  auto client = Connect(LeaderAddress(region));
  ASSERT_TRUE(client->Send(request));
  EXPECT_TRUE(client->WaitInitialized(1, region.id.value()));
}

}  // namespace
}  // namespace sluice::simkv::testing
