// Error mapping and conversions of PD wire messages.
#include "pd/pd_wire.h"

#include <gtest/gtest.h>

namespace sluice::pd {
namespace {

pdpb::ResponseHeader ErrorHeader(pdpb::ErrorType type, const std::string& message) {
  pdpb::ResponseHeader header;
  header.set_cluster_id(7);
  header.mutable_error()->set_type(type);
  header.mutable_error()->set_message(message);
  return header;
}

TEST(FromHeaderTest, MapsErrorTypes) {
  pdpb::ResponseHeader ok;
  ok.set_cluster_id(7);
  EXPECT_TRUE(FromHeader(ok, 7, "x").ok());
  EXPECT_TRUE(FromHeader(ok, 0, "x").ok());
  EXPECT_EQ(FromHeader(ok, 8, "x").code(), Code::kIncompatible);
  EXPECT_EQ(FromHeader(ErrorHeader(pdpb::NOT_BOOTSTRAPPED, "no"), 7, "x").code(),
            Code::kUnavailable);
  EXPECT_EQ(FromHeader(ErrorHeader(pdpb::REGION_NOT_FOUND, ""), 7, "x").code(), Code::kNotFound);
  EXPECT_EQ(FromHeader(ErrorHeader(pdpb::INCOMPATIBLE_VERSION, ""), 7, "x").code(),
            Code::kIncompatible);
  EXPECT_EQ(FromHeader(ErrorHeader(pdpb::UNKNOWN, "invalid store ID 9, not found"), 7, "x").code(),
            Code::kNotFound);
  EXPECT_EQ(FromHeader(ErrorHeader(pdpb::UNKNOWN, "mismatch cluster id, need 1 but got 2"), 7, "x")
                .code(),
            Code::kIncompatible);
  EXPECT_EQ(FromHeader(ErrorHeader(pdpb::UNKNOWN, "etcd slow"), 7, "x").code(), Code::kUnavailable);
  EXPECT_EQ(FromHeader(ErrorHeader(static_cast<pdpb::ErrorType>(99), "?"), 7, "x").code(),
            Code::kUnavailable);
  // An explicit OK error type is no error.
  EXPECT_TRUE(FromHeader(ErrorHeader(pdpb::OK, ""), 7, "x").ok());
}

TEST(FromGrpcTest, MapsCodes) {
  EXPECT_TRUE(FromGrpc(grpc::Status::OK, "x").ok());
  EXPECT_EQ(FromGrpc(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                                  "mismatch cluster id, need 1 but got 2"),
                     "x")
                .code(),
            Code::kIncompatible);
  EXPECT_EQ(FromGrpc(grpc::Status(grpc::StatusCode::UNAVAILABLE, "down"), "x").code(),
            Code::kUnavailable);
  EXPECT_EQ(FromGrpc(grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, ""), "x").code(),
            Code::kUnavailable);
  EXPECT_EQ(FromGrpc(grpc::Status(grpc::StatusCode::UNIMPLEMENTED, ""), "x").code(),
            Code::kNotSupported);
  EXPECT_TRUE(ShouldReconnect(grpc::StatusCode::UNAVAILABLE));
  EXPECT_TRUE(ShouldReconnect(grpc::StatusCode::DEADLINE_EXCEEDED));
  EXPECT_FALSE(ShouldReconnect(grpc::StatusCode::FAILED_PRECONDITION));
}

TEST(StripUrlTest, RemovesSchemeAndTrailingSlash) {
  EXPECT_EQ(StripUrl("http://127.0.0.1:2379"), "127.0.0.1:2379");
  EXPECT_EQ(StripUrl("https://pd:2379/"), "pd:2379");
  EXPECT_EQ(StripUrl("pd:2379"), "pd:2379");
}

TEST(RegionFromProtoTest, ConvertsAndValidates) {
  metapb::Region region;
  region.set_id(5);
  region.set_start_key("a");
  region.set_end_key("c");
  region.mutable_region_epoch()->set_conf_ver(2);
  region.mutable_region_epoch()->set_version(3);
  metapb::Peer* peer = region.add_peers();
  peer->set_id(11);
  peer->set_store_id(1);
  metapb::Peer leader = *peer;

  Result<Region> converted = RegionFromProto(region, &leader);
  ASSERT_TRUE(converted.ok());
  EXPECT_EQ(converted->id, RegionId(5));
  EXPECT_EQ(converted->conf_ver, 2u);
  EXPECT_EQ(converted->version, 3u);
  EXPECT_EQ(converted->leader_store, StoreId(1));
  EXPECT_EQ(converted->leader_peer_id, 11u);
  ASSERT_EQ(converted->peers.size(), 1u);
  EXPECT_TRUE(converted->Contains("b"));
  EXPECT_FALSE(converted->Contains("c"));

  metapb::Peer empty;
  EXPECT_FALSE(RegionFromProto(region, &empty)->has_leader());
  EXPECT_FALSE(RegionFromProto(region, nullptr)->has_leader());

  metapb::Region inverted = region;
  inverted.set_start_key("d");
  EXPECT_EQ(RegionFromProto(inverted, nullptr).status().code(), Code::kProtocolViolation);
  metapb::Region no_id = region;
  no_id.set_id(0);
  EXPECT_EQ(RegionFromProto(no_id, nullptr).status().code(), Code::kProtocolViolation);
}

TEST(StoreFromProtoTest, ConvertsState) {
  metapb::Store store;
  store.set_id(3);
  store.set_address("127.0.0.1:20160");
  store.set_version("8.5.0");
  store.set_state(metapb::Tombstone);
  Result<Store> converted = StoreFromProto(store);
  ASSERT_TRUE(converted.ok());
  EXPECT_FALSE(converted->up);
  EXPECT_TRUE(converted->tombstone);
  EXPECT_EQ(converted->version, "8.5.0");
  store.set_id(0);
  EXPECT_EQ(StoreFromProto(store).status().code(), Code::kProtocolViolation);
}

}  // namespace
}  // namespace sluice::pd
