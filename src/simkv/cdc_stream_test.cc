// Conformance: streams, multiplexing and deregister, stores going down and
// coming back, PD and CDC agreeing on regions.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "common/memcomparable.h"
#include "common/test_util.h"
#include "pdpb.grpc.pb.h"
#include "simkv/simkv_test_util.h"

namespace sluice::simkv::testing {
namespace {

using cdcpb::Event;

class CdcStreamTest : public SimKvTest {
 protected:
  void SetUp() override {
    SimClusterOptions options = DefaultOptions();
    // Four regions, one replica each: leaders on stores 1, 2, 3, 1.
    options.replicas = 1;
    options.raw_split_keys = {"b", "f", "m"};
    StartCluster(options);
  }
};

TEST_F(CdcStreamTest, DeregisterByRequestIdEndsEveryRegionUnderIt) {
  // (-inf, b) and [m, +inf) share store 1.
  RegionInfo c = RegionFor("a");
  std::vector<RegionInfo> same_store;
  for (const RegionInfo& r : cluster_->regions().Scan("", "", 0)) {
    if (r.leader == c.leader) same_store.push_back(r);
  }
  ASSERT_GE(same_store.size(), 2u);
  auto client = Connect(LeaderAddress(c));
  for (const RegionInfo& r : same_store) {
    ASSERT_TRUE(client->Send(RegisterRequest(cluster_id(), r, 1, Ts(0))));
    ASSERT_TRUE(client->Send(RegisterRequest(cluster_id(), r, 2, Ts(0))));
  }
  for (const RegionInfo& r : same_store) {
    ASSERT_TRUE(client->WaitInitialized(1, r.id.value()));
    ASSERT_TRUE(client->WaitInitialized(2, r.id.value()));
  }
  ASSERT_TRUE(client->Send(DeregisterRequest(cluster_id(), 1)));
  for (const RegionInfo& r : same_store) {
    auto error = client->WaitError(1, r.id.value());
    ASSERT_TRUE(error && error->has_region_not_found());  // TiKV's answer to a deregister.
  }
  EXPECT_EQ(cluster_->NumSubscriptions(c.leader), same_store.size());
  // Request 2 still gets everything.
  Put({{"a1", "v"}});
  ASSERT_TRUE(client->WaitFor([&](const StreamLog& log) {
    return log.Find(2, c.id.value())->CountType(Event::COMMIT) == 1;
  }));
  // Deregister one region of request 2 only.
  ASSERT_TRUE(client->Send(DeregisterRequest(cluster_id(), 2, same_store[0].id.value())));
  ASSERT_TRUE(client->WaitError(2, same_store[0].id.value()).has_value());
  EXPECT_EQ(cluster_->NumSubscriptions(c.leader), same_store.size() - 1);
  ExpectNoViolations(*client);
}

TEST_F(CdcStreamTest, UnknownFeatureIsUnimplemented) {
  CdcTestClientOptions options;
  options.features = "stream-multiplexing,time-travel";
  auto client = Connect(LeaderAddress(RegionFor("c")), options);
  std::optional<grpc::Status> status = client->WaitFinished();
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->error_code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_EQ(status->error_message(), "time-travel");
}

TEST_F(CdcStreamTest, ClosingTheClientSideEndsTheStreamCleanly) {
  RegionInfo c = RegionFor("c");
  auto client = Subscribe(c, 1);
  client->CloseSend();
  std::optional<grpc::Status> status = client->WaitFinished();
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(status->ok()) << status->error_message();
  EXPECT_TRUE(PollUntil([&] { return cluster_->NumSubscriptions(c.leader) == 0; }));
}

TEST_F(CdcStreamTest, DroppedStreamsBreakAndAReconnectWorks) {
  RegionInfo c = RegionFor("c");
  auto client = Subscribe(c, 1);
  ASSERT_TRUE(cluster_->DropStreams(c.leader).ok());
  std::optional<grpc::Status> status = client->WaitFinished();
  ASSERT_TRUE(status.has_value());
  EXPECT_FALSE(status->ok());
  EXPECT_TRUE(PollUntil([&] { return cluster_->NumSubscriptions(c.leader) == 0; }));
  auto again = Subscribe(c, 1);
  ExpectNoViolations(*again);
}

TEST_F(CdcStreamTest, StoreDownRefusesConnectionsAndRestartServesTheSameAddress) {
  RegionInfo c = RegionFor("c");
  std::string address = LeaderAddress(c);
  auto client = Subscribe(c, 1);
  ASSERT_TRUE(cluster_->StoreDown(c.leader).ok());
  std::optional<grpc::Status> status = client->WaitFinished();
  ASSERT_TRUE(status.has_value());
  EXPECT_FALSE(status->ok());

  auto refused = Connect(address);
  refused->Send(RegisterRequest(cluster_id(), c, 1, Ts(0)));
  status = refused->WaitFinished();
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->error_code(), grpc::StatusCode::UNAVAILABLE);
  Ts during = Put({{"c1", "written while down"}});

  ASSERT_TRUE(cluster_->StoreRestart(c.leader).ok());
  EXPECT_EQ(cluster_->store_address(c.leader), address);
  auto again = Subscribe(c, 1, Ts(0));
  StreamLog log = again->Snapshot();
  std::vector<Row> committed = log.Find(1, c.id.value())->RowsOfType(Event::COMMITTED);
  ASSERT_EQ(committed.size(), 1u);
  EXPECT_EQ(committed[0].commit_ts(), during.value());
  ExpectNoViolations(*again);
}

TEST_F(CdcStreamTest, PdRegionsAgreeWithTheStores) {
  auto channel = grpc::CreateChannel(cluster_->pd_address(), grpc::InsecureChannelCredentials());
  auto pd = pdpb::PD::NewStub(channel);
  auto scan_regions = [&] {
    pdpb::ScanRegionsRequest request;
    request.mutable_header()->set_cluster_id(cluster_id());
    pdpb::ScanRegionsResponse response;
    grpc::ClientContext context;
    EXPECT_TRUE(pd->ScanRegions(&context, request, &response).ok());
    return response;
  };
  auto store_address = [&](uint64_t store_id) {
    pdpb::GetStoreRequest request;
    request.mutable_header()->set_cluster_id(cluster_id());
    request.set_store_id(store_id);
    pdpb::GetStoreResponse response;
    grpc::ClientContext context;
    EXPECT_TRUE(pd->GetStore(&context, request, &response).ok());
    return response.store().address();
  };
  // Subscribe every region where PD says its leader is, with PD's epoch.
  auto subscribe_all = [&](uint64_t request_id) {
    std::vector<std::unique_ptr<CdcTestClient>> clients;
    pdpb::ScanRegionsResponse regions = scan_regions();
    for (const pdpb::Region& r : regions.regions()) {
      auto client = Connect(store_address(r.leader().store_id()));
      cdcpb::ChangeDataRequest request;
      request.mutable_header()->set_cluster_id(cluster_id());
      request.mutable_header()->set_ticdc_version(kClientVersion);
      request.set_region_id(r.region().id());
      *request.mutable_region_epoch() = r.region().region_epoch();
      request.set_start_key(r.region().start_key());
      request.set_end_key(r.region().end_key());
      request.set_request_id(request_id);
      EXPECT_TRUE(client->Send(request));
      EXPECT_TRUE(client->WaitInitialized(request_id, r.region().id()));
      clients.push_back(std::move(client));
    }
    return clients;
  };
  auto clients = subscribe_all(1);
  ASSERT_EQ(clients.size(), 4u);

  RegionInfo c = RegionFor("c");
  auto parts = cluster_->Split(c.id, "d");
  ASSERT_TRUE(parts.ok());
  bool found = false;
  for (auto& client : clients) {
    StreamLog log = client->Snapshot();
    const RegionLog* region = log.Find(1, c.id.value());
    if (region == nullptr) continue;
    found = true;
    auto error = client->WaitError(1, c.id.value());
    ASSERT_TRUE(error && error->has_epoch_not_match());
    // The regions in the error are the ones PD now serves.
    pdpb::ScanRegionsResponse now = scan_regions();
    for (const metapb::Region& current : error->epoch_not_match().current_regions()) {
      bool in_pd = false;
      for (const pdpb::Region& r : now.regions()) {
        in_pd |= r.region().SerializeAsString() == current.SerializeAsString();
      }
      EXPECT_TRUE(in_pd) << current.ShortDebugString();
    }
  }
  EXPECT_TRUE(found);
  // Re-resolving from PD gives subscriptions that all initialize.
  auto after = subscribe_all(2);
  EXPECT_EQ(after.size(), 5u);
  for (auto& client : clients) ExpectNoViolations(*client);
  for (auto& client : after) ExpectNoViolations(*client);
}

}  // namespace
}  // namespace sluice::simkv::testing
