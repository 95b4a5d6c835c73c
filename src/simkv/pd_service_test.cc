// Conformance of the simulated PD as a PD client sees it over gRPC.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <limits>

#include "common/memcomparable.h"
#include "common/tso.h"
#include "pdpb.grpc.pb.h"
#include "simkv/simkv_test_util.h"

namespace sluice::simkv::testing {
namespace {

class PdServiceTest : public SimKvTest {
 protected:
  void SetUp() override {
    StartCluster();
    channel_ = grpc::CreateChannel(cluster_->pd_address(), grpc::InsecureChannelCredentials());
    stub_ = pdpb::PD::NewStub(channel_);
  }

  template <typename Request>
  Request WithHeader(uint64_t cluster) {
    Request request;
    request.mutable_header()->set_cluster_id(cluster);
    return request;
  }

  pdpb::UpdateServiceGCSafePointResponse UpdateSafePoint(const std::string& service, int64_t ttl,
                                                         uint64_t safe_point) {
    auto request = WithHeader<pdpb::UpdateServiceGCSafePointRequest>(cluster_id());
    request.set_service_id(service);
    request.set_ttl(ttl);
    request.set_safe_point(safe_point);
    pdpb::UpdateServiceGCSafePointResponse response;
    grpc::ClientContext context;
    EXPECT_TRUE(stub_->UpdateServiceGCSafePoint(&context, request, &response).ok());
    return response;
  }

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<pdpb::PD::Stub> stub_;
};

TEST_F(PdServiceTest, GetMembersAnswersAnyClusterIdWithTheRealOne) {
  auto request = WithHeader<pdpb::GetMembersRequest>(0);
  pdpb::GetMembersResponse response;
  grpc::ClientContext context;
  ASSERT_TRUE(stub_->GetMembers(&context, request, &response).ok());
  EXPECT_EQ(response.header().cluster_id(), cluster_id());
  EXPECT_FALSE(response.header().has_error());
  ASSERT_EQ(response.members_size(), 1);
  ASSERT_EQ(response.leader().client_urls_size(), 1);
  EXPECT_EQ(response.leader().client_urls(0), "http://" + cluster_->pd_address());
  EXPECT_EQ(response.leader().member_id(), response.members(0).member_id());
}

TEST_F(PdServiceTest, WrongClusterIdIsFailedPrecondition) {
  auto request = WithHeader<pdpb::GetRegionRequest>(cluster_id() + 1);
  pdpb::GetRegionResponse response;
  grpc::ClientContext context;
  grpc::Status status = stub_->GetRegion(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(status.error_message(), "mismatch cluster id, need " + std::to_string(cluster_id()) +
                                        " but got " + std::to_string(cluster_id() + 1));

  grpc::ClientContext tso_context;
  auto tso = stub_->Tso(&tso_context);
  auto tso_request = WithHeader<pdpb::TsoRequest>(7);
  tso_request.set_count(1);
  ASSERT_TRUE(tso->Write(tso_request));
  pdpb::TsoResponse tso_response;
  EXPECT_FALSE(tso->Read(&tso_response));
  EXPECT_EQ(tso->Finish().error_code(), grpc::StatusCode::FAILED_PRECONDITION);
}

TEST_F(PdServiceTest, TsoBatchesAreMonotonicAndEndAtTheLastTimestamp) {
  grpc::ClientContext context;
  auto tso = stub_->Tso(&context);
  uint64_t last = 0;
  for (uint32_t count : {1u, 10u, 1u, 100u, 3u}) {
    auto request = WithHeader<pdpb::TsoRequest>(cluster_id());
    request.set_count(count);
    ASSERT_TRUE(tso->Write(request));
    pdpb::TsoResponse response;
    ASSERT_TRUE(tso->Read(&response));
    EXPECT_EQ(response.count(), count);
    EXPECT_EQ(response.header().cluster_id(), cluster_id());
    Ts ts = tso::Compose(response.timestamp().physical(), response.timestamp().logical());
    Ts first = tso::BatchElement(ts, count, 0);
    EXPECT_GT(first.value(), last);
    last = ts.value();
  }
  EXPECT_LT(last, cluster_->tso().Allocate(1)->value());
  auto zero = WithHeader<pdpb::TsoRequest>(cluster_id());
  ASSERT_TRUE(tso->Write(zero));
  pdpb::TsoResponse response;
  EXPECT_FALSE(tso->Read(&response));
  EXPECT_EQ(tso->Finish().error_code(), grpc::StatusCode::UNKNOWN);
}

TEST_F(PdServiceTest, GetRegionByKeyAndById) {
  auto request = WithHeader<pdpb::GetRegionRequest>(cluster_id());
  request.set_region_key(memcomparable::EncodeBytes("c"));
  pdpb::GetRegionResponse response;
  grpc::ClientContext context;
  ASSERT_TRUE(stub_->GetRegion(&context, request, &response).ok());
  RegionInfo expected = RegionFor("c");
  EXPECT_EQ(response.region().id(), expected.id.value());
  EXPECT_EQ(response.region().start_key(), memcomparable::EncodeBytes("b"));
  EXPECT_EQ(response.region().end_key(), memcomparable::EncodeBytes("m"));
  EXPECT_EQ(response.region().region_epoch().version(), expected.epoch.version);
  EXPECT_EQ(response.leader().store_id(), expected.leader.value());
  EXPECT_EQ(response.region().peers_size(), 3);

  auto by_id = WithHeader<pdpb::GetRegionByIDRequest>(cluster_id());
  by_id.set_region_id(expected.id.value());
  pdpb::GetRegionResponse by_id_response;
  grpc::ClientContext by_id_context;
  ASSERT_TRUE(stub_->GetRegionByID(&by_id_context, by_id, &by_id_response).ok());
  EXPECT_EQ(by_id_response.region().SerializeAsString(), response.region().SerializeAsString());

  by_id.set_region_id(424242);
  pdpb::GetRegionResponse missing;
  grpc::ClientContext missing_context;
  ASSERT_TRUE(stub_->GetRegionByID(&missing_context, by_id, &missing).ok());
  EXPECT_FALSE(missing.has_region());
  EXPECT_FALSE(missing.header().has_error());
}

TEST_F(PdServiceTest, ScanRegionsFillsLegacyAndNewFields) {
  auto request = WithHeader<pdpb::ScanRegionsRequest>(cluster_id());
  pdpb::ScanRegionsResponse all;
  grpc::ClientContext context;
  ASSERT_TRUE(stub_->ScanRegions(&context, request, &all).ok());
  ASSERT_EQ(all.regions_size(), 3);
  ASSERT_EQ(all.region_metas_size(), 3);
  ASSERT_EQ(all.leaders_size(), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(all.region_metas(i).SerializeAsString(), all.regions(i).region().SerializeAsString());
    EXPECT_EQ(all.leaders(i).SerializeAsString(), all.regions(i).leader().SerializeAsString());
  }
  EXPECT_EQ(all.regions(0).region().start_key(), "");
  EXPECT_EQ(all.regions(2).region().end_key(), "");

  request.set_start_key(memcomparable::EncodeBytes("c"));
  request.set_end_key(memcomparable::EncodeBytes("n"));
  request.set_limit(1);
  pdpb::ScanRegionsResponse limited;
  grpc::ClientContext limited_context;
  ASSERT_TRUE(stub_->ScanRegions(&limited_context, request, &limited).ok());
  ASSERT_EQ(limited.regions_size(), 1);
  EXPECT_EQ(limited.regions(0).region().id(), RegionFor("c").id.value());
}

TEST_F(PdServiceTest, BatchScanRegionsDedupesAndRejectsBadRanges) {
  auto request = WithHeader<pdpb::BatchScanRegionsRequest>(cluster_id());
  auto* first = request.add_ranges();
  first->set_start_key(memcomparable::EncodeBytes("c"));
  first->set_end_key(memcomparable::EncodeBytes("d"));
  auto* second = request.add_ranges();
  second->set_start_key(memcomparable::EncodeBytes("e"));
  second->set_end_key(memcomparable::EncodeBytes("n"));
  pdpb::BatchScanRegionsResponse response;
  grpc::ClientContext context;
  ASSERT_TRUE(stub_->BatchScanRegions(&context, request, &response).ok());
  ASSERT_EQ(response.regions_size(), 2);
  EXPECT_EQ(response.regions(0).region().id(), RegionFor("c").id.value());
  EXPECT_EQ(response.regions(1).region().id(), RegionFor("n").id.value());

  std::swap(*request.mutable_ranges(0), *request.mutable_ranges(1));
  pdpb::BatchScanRegionsResponse overlapped;
  grpc::ClientContext overlapped_context;
  ASSERT_TRUE(stub_->BatchScanRegions(&overlapped_context, request, &overlapped).ok());
  EXPECT_EQ(overlapped.header().error().type(), pdpb::UNKNOWN);
  EXPECT_EQ(overlapped.header().error().message(), "invalid key range, ranges overlapped");
}

TEST_F(PdServiceTest, StoresCarryTheirAddresses) {
  pdpb::GetAllStoresResponse all;
  grpc::ClientContext context;
  ASSERT_TRUE(
      stub_->GetAllStores(&context, WithHeader<pdpb::GetAllStoresRequest>(cluster_id()), &all)
          .ok());
  ASSERT_EQ(all.stores_size(), 3);
  for (const metapb::Store& store : all.stores()) {
    EXPECT_EQ(store.address(), cluster_->store_address(StoreId(store.id())));
    EXPECT_EQ(store.state(), metapb::Up);
  }
  ASSERT_TRUE(cluster_->store_registry().SetState(StoreId(2), StoreState::kOffline).ok());
  auto request = WithHeader<pdpb::GetStoreRequest>(cluster_id());
  request.set_store_id(2);
  pdpb::GetStoreResponse store;
  grpc::ClientContext store_context;
  ASSERT_TRUE(stub_->GetStore(&store_context, request, &store).ok());
  EXPECT_EQ(store.store().state(), metapb::Offline);

  request.set_store_id(99);
  pdpb::GetStoreResponse missing;
  grpc::ClientContext missing_context;
  ASSERT_TRUE(stub_->GetStore(&missing_context, request, &missing).ok());
  EXPECT_EQ(missing.header().error().type(), pdpb::UNKNOWN);
  EXPECT_EQ(missing.header().error().message(), "invalid store ID 99, not found");
}

TEST_F(PdServiceTest, ServiceSafePointsExpireAndCannotGoBelowGc) {
  auto first = UpdateSafePoint("ticdc", 10, 1000);
  EXPECT_EQ(first.min_safe_point(), 0u);  // gc_worker has not run.
  EXPECT_EQ(first.service_id(), "gc_worker");

  ASSERT_TRUE(cluster_->RunGc(Ts(5000)).ok());
  EXPECT_EQ(cluster_->pd().GcSafePoint(), Ts(1000));  // Held back by ticdc.

  auto below = UpdateSafePoint("ticdc", 10, 500);
  EXPECT_EQ(below.min_safe_point(), 1000u);  // Refused: the caller sees a higher minimum.
  auto others = UpdateSafePoint("br", 5, 3000);
  EXPECT_EQ(others.min_safe_point(), 1000u);
  ASSERT_EQ(cluster_->pd().LiveServiceSafePoints().size(), 2u);

  clock_.Advance(std::chrono::seconds(6));  // br expires.
  EXPECT_EQ(cluster_->pd().LiveServiceSafePoints().size(), 1u);
  auto removed = UpdateSafePoint("ticdc", 0, std::numeric_limits<uint64_t>::max());
  EXPECT_TRUE(cluster_->pd().LiveServiceSafePoints().empty());
  ASSERT_TRUE(cluster_->RunGc(Ts(5000)).ok());
  EXPECT_EQ(cluster_->pd().GcSafePoint(), Ts(5000));

  pdpb::GetGCSafePointResponse gc;
  grpc::ClientContext context;
  ASSERT_TRUE(
      stub_->GetGCSafePoint(&context, WithHeader<pdpb::GetGCSafePointRequest>(cluster_id()), &gc)
          .ok());
  EXPECT_EQ(gc.safe_point(), 5000u);
}

TEST_F(PdServiceTest, GcNeverPassesTheMinimumServiceSafePoint) {
  Ts first = Put({{"c1", "v1"}});
  Ts second = Put({{"c1", "v2"}});
  UpdateSafePoint("ticdc", 60, first.value());
  Result<Ts> gc = cluster_->RunGc();
  ASSERT_TRUE(gc.ok());
  EXPECT_EQ(*gc, first);
  // History above the safe point is intact: the old version is readable and
  // an incremental scan from the safe point sees the later change.
  auto value = cluster_->mvcc().Get("c1", first);
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(*value.value(), "v1");
  auto client = Subscribe(RegionFor("c"), 1, first);
  StreamLog log = client->Snapshot();
  const RegionLog* region = log.Find(1, RegionFor("c").id.value());
  ASSERT_NE(region, nullptr);
  ASSERT_EQ(region->CountType(cdcpb::Event::COMMITTED), 1u);
  EXPECT_EQ(region->rows[0].commit_ts(), second.value());
  EXPECT_EQ(region->rows[0].old_value(), "v1");

  // Only the GC worker itself (infinite TTL) may set gc_worker.
  auto gc_worker = WithHeader<pdpb::UpdateServiceGCSafePointRequest>(cluster_id());
  gc_worker.set_service_id("gc_worker");
  gc_worker.set_ttl(60);
  gc_worker.set_safe_point(second.value());
  pdpb::UpdateServiceGCSafePointResponse refused;
  grpc::ClientContext context;
  EXPECT_EQ(stub_->UpdateServiceGCSafePoint(&context, gc_worker, &refused).error_code(),
            grpc::StatusCode::UNKNOWN);
  EXPECT_EQ(cluster_->pd().GcSafePoint(), first);
  UpdateSafePoint("ticdc", 0, 0);
  ASSERT_TRUE(cluster_->RunGc().ok());
  EXPECT_FALSE(cluster_->mvcc().Get("c1", first).ok());
  ExpectNoViolations(*client);
}

}  // namespace
}  // namespace sluice::simkv::testing
