// Conformance: bad requests get TiKV's answers and the store stays up.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <random>

#include "common/memcomparable.h"
#include "simkv/simkv_test_util.h"

namespace sluice::simkv::testing {
namespace {

using cdcpb::Event;

class CdcBadInputTest : public SimKvTest {
 protected:
  void SetUp() override { StartCluster(); }

  // The store still serves a well-formed subscription.
  void ExpectStillServing(const RegionInfo& region) {
    auto client = Subscribe(region, 99);
    ExpectNoViolations(*client);
  }
};

TEST_F(CdcBadInputTest, RegionZeroIsRegionNotFound) {
  RegionInfo region = RegionFor("c");
  auto client = Connect(LeaderAddress(region));
  auto request = RegisterRequest(cluster_id(), region, 1, Ts(0));
  request.set_region_id(0);
  ASSERT_TRUE(client->Send(request));
  auto error = client->WaitError(1, 0);
  ASSERT_TRUE(error && error->has_region_not_found());
  EXPECT_EQ(error->region_not_found().region_id(), 0u);
}

TEST_F(CdcBadInputTest, UndecodableKeysObserveTheWholeRegion) {
  Put({{"c1", "v"}, {"k1", "w"}});
  RegionInfo region = RegionFor("c");
  auto client = Connect(LeaderAddress(region));
  auto request = RegisterRequest(cluster_id(), region, 1, Ts(0));
  request.set_start_key(std::string("\x01\x02garbage", 9));
  request.set_end_key("\xff");
  ASSERT_TRUE(client->Send(request));
  ASSERT_TRUE(client->WaitInitialized(1, region.id.value()));
  EXPECT_EQ(client->Snapshot().Find(1, region.id.value())->CountType(Event::COMMITTED), 2u);
  ExpectNoViolations(*client);
}

TEST_F(CdcBadInputTest, InvertedRangeInitializesEmpty) {
  Put({{"c1", "v"}});
  RegionInfo region = RegionFor("c");
  auto client = Connect(LeaderAddress(region));
  auto request = RegisterRequest(cluster_id(), region, 1, Ts(0));
  request.set_start_key(memcomparable::EncodeBytes("k"));
  request.set_end_key(memcomparable::EncodeBytes("c"));
  ASSERT_TRUE(client->Send(request));
  ASSERT_TRUE(client->WaitInitialized(1, region.id.value()));
  EXPECT_EQ(client->Snapshot().Find(1, region.id.value())->rows.size(), 1u);  // INITIALIZED.
  Put({{"d1", "not observed"}});
  cluster_->AdvanceResolvedTs();
  ASSERT_TRUE(client->WaitResolvedAbove(1, region.id.value(), 0).has_value());
  EXPECT_EQ(client->Snapshot().Find(1, region.id.value())->rows.size(), 1u);
  ExpectNoViolations(*client);
}

TEST_F(CdcBadInputTest, UnusualRequestKindsAndEnumsAreHandled) {
  RegionInfo region = RegionFor("c");
  auto client = Connect(LeaderAddress(region));
  cdcpb::ChangeDataRequest notify = RegisterRequest(cluster_id(), region, 1, Ts(0));
  notify.mutable_notify_txn_status()->add_txn_status()->set_start_ts(5);
  ASSERT_TRUE(client->Send(notify));                                  // Ignored (TiKV would abort).
  ASSERT_TRUE(client->Send(DeregisterRequest(cluster_id(), 12345)));  // Nothing to end.

  cdcpb::ChangeDataRequest odd = RegisterRequest(cluster_id(), region, 2, Ts(0));
  odd.set_extra_op(static_cast<kvrpcpb::ExtraOp>(42));  // Unknown: no old values.
  odd.set_scan_priority(static_cast<cdcpb::ScanPriority>(99));
  odd.mutable_register_();
  ASSERT_TRUE(client->Send(odd));
  ASSERT_TRUE(client->WaitInitialized(2, region.id.value()));

  cdcpb::ChangeDataRequest api = RegisterRequest(cluster_id(), region, 3, Ts(0));
  api.set_kv_api(static_cast<cdcpb::ChangeDataRequest::KvAPI>(77));
  ASSERT_TRUE(client->Send(api));
  auto error = client->WaitError(3, region.id.value());
  ASSERT_TRUE(error && error->has_compatibility());
  EXPECT_EQ(client->Snapshot().Find(1, region.id.value()), nullptr);
  ExpectNoViolations(*client);
}

TEST_F(CdcBadInputTest, UnparsableBytesEndOnlyThatStream) {
  RegionInfo region = RegionFor("c");
  auto channel = grpc::CreateChannel(LeaderAddress(region), grpc::InsecureChannelCredentials());
  grpc::internal::RpcMethod method("/cdcpb.ChangeData/EventFeedV2",
                                   grpc::internal::RpcMethod::BIDI_STREAMING);
  grpc::ClientContext context;
  context.AddMetadata("features", "stream-multiplexing");
  std::unique_ptr<grpc::ClientReaderWriter<grpc::ByteBuffer, grpc::ByteBuffer>> stream(
      grpc::internal::ClientReaderWriterFactory<grpc::ByteBuffer, grpc::ByteBuffer>::Create(
          channel.get(), method, &context));
  // Field 1 (header) claims far more bytes than follow.
  grpc::Slice slice(std::string("\x0a\xff\xff\xff\xff\x0f\x01", 7));
  grpc::ByteBuffer garbage(&slice, 1);
  stream->Write(garbage);
  stream->WritesDone();
  grpc::ByteBuffer reply;
  while (stream->Read(&reply)) {
  }
  stream->Finish().IgnoreError();
  ExpectStillServing(region);
}

TEST_F(CdcBadInputTest, AStreamOfNonsenseDoesNotHurtTheStore) {
  RegionInfo region = RegionFor("c");
  Put({{"c1", "v"}});
  std::mt19937_64 rng(20240521);
  auto random_bytes = [&](size_t max) {
    std::string out(rng() % (max + 1), '\0');
    for (char& c : out) c = static_cast<char>(rng());
    return out;
  };
  const uint64_t region_ids[] = {0, region.id.value(), RegionFor("a").id.value(), 77777};
  const char* versions[] = {"8.5.0", "", "4.0.7", "9999.0.0", "x.y.z", "5.2.0-alpha"};
  {
    auto client = Connect(LeaderAddress(region));
    for (int i = 0; i < 300; ++i) {
      cdcpb::ChangeDataRequest request;
      request.mutable_header()->set_cluster_id(rng() % 3 == 0 ? rng() : cluster_id());
      request.mutable_header()->set_ticdc_version(versions[rng() % 6]);
      request.set_region_id(region_ids[rng() % 4]);
      request.mutable_region_epoch()->set_version(rng() % 4);
      request.mutable_region_epoch()->set_conf_ver(rng() % 4);
      request.set_checkpoint_ts(rng() % 2 == 0 ? 0 : rng());
      request.set_start_key(random_bytes(20));
      request.set_end_key(random_bytes(20));
      request.set_request_id(rng() % 5);
      request.set_extra_op(static_cast<kvrpcpb::ExtraOp>(rng() % 4));
      request.set_kv_api(static_cast<cdcpb::ChangeDataRequest::KvAPI>(rng() % 4));
      switch (rng() % 4) {
        case 0:
          request.mutable_deregister();
          break;
        case 1:
          request.mutable_notify_txn_status()->add_txn_status()->set_start_ts(rng());
          break;
        case 2:
          request.mutable_register_();
          break;
        default:
          break;
      }
      if (!client->Send(request)) break;
      if (i % 50 == 0) cluster_->AdvanceResolvedTs();
    }
    Put({{"c2", "w"}});
    client->CloseSend();
    ASSERT_TRUE(client->WaitFinished().has_value());
  }
  ExpectStillServing(region);
}

}  // namespace
}  // namespace sluice::simkv::testing
