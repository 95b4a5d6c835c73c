// gRPC method paths: every path through the descriptors and through the
// generated stubs against an in-process server.

#include <gmock/gmock.h>
#include <google/protobuf/descriptor.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/support/client_interceptor.h>
#include <grpcpp/support/server_interceptor.h>
#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "cdcpb.grpc.pb.h"
#include "etcd/rpc.grpc.pb.h"
#include "pdpb.grpc.pb.h"
#include "tikvpb.grpc.pb.h"

namespace sluice {
namespace {

using google::protobuf::DescriptorPool;

struct Rpc {
  const char* path;
  const char* input;
  const char* output;
  bool client_streaming;
  bool server_streaming;
};

constexpr Rpc kRpcs[] = {
    {"/cdcpb.ChangeData/EventFeed", "cdcpb.ChangeDataRequest", "cdcpb.ChangeDataEvent", true, true},
    {"/cdcpb.ChangeData/EventFeedV2", "cdcpb.ChangeDataRequest", "cdcpb.ChangeDataEvent", true,
     true},
    {"/pdpb.PD/GetMembers", "pdpb.GetMembersRequest", "pdpb.GetMembersResponse", false, false},
    {"/pdpb.PD/Tso", "pdpb.TsoRequest", "pdpb.TsoResponse", true, true},
    {"/pdpb.PD/GetRegion", "pdpb.GetRegionRequest", "pdpb.GetRegionResponse", false, false},
    {"/pdpb.PD/GetRegionByID", "pdpb.GetRegionByIDRequest", "pdpb.GetRegionResponse", false, false},
    {"/pdpb.PD/ScanRegions", "pdpb.ScanRegionsRequest", "pdpb.ScanRegionsResponse", false, false},
    {"/pdpb.PD/BatchScanRegions", "pdpb.BatchScanRegionsRequest", "pdpb.BatchScanRegionsResponse",
     false, false},
    {"/pdpb.PD/GetStore", "pdpb.GetStoreRequest", "pdpb.GetStoreResponse", false, false},
    {"/pdpb.PD/GetAllStores", "pdpb.GetAllStoresRequest", "pdpb.GetAllStoresResponse", false,
     false},
    {"/pdpb.PD/UpdateServiceGCSafePoint", "pdpb.UpdateServiceGCSafePointRequest",
     "pdpb.UpdateServiceGCSafePointResponse", false, false},
    {"/pdpb.PD/GetGCSafePoint", "pdpb.GetGCSafePointRequest", "pdpb.GetGCSafePointResponse", false,
     false},
    {"/tikvpb.Tikv/KvGet", "kvrpcpb.GetRequest", "kvrpcpb.GetResponse", false, false},
    {"/tikvpb.Tikv/KvScan", "kvrpcpb.ScanRequest", "kvrpcpb.ScanResponse", false, false},
    {"/tikvpb.Tikv/KvScanLock", "kvrpcpb.ScanLockRequest", "kvrpcpb.ScanLockResponse", false,
     false},
    {"/tikvpb.Tikv/KvResolveLock", "kvrpcpb.ResolveLockRequest", "kvrpcpb.ResolveLockResponse",
     false, false},
    {"/tikvpb.Tikv/KvCheckTxnStatus", "kvrpcpb.CheckTxnStatusRequest",
     "kvrpcpb.CheckTxnStatusResponse", false, false},
    {"/etcdserverpb.KV/Range", "etcdserverpb.RangeRequest", "etcdserverpb.RangeResponse", false,
     false},
    {"/etcdserverpb.KV/Put", "etcdserverpb.PutRequest", "etcdserverpb.PutResponse", false, false},
    {"/etcdserverpb.KV/DeleteRange", "etcdserverpb.DeleteRangeRequest",
     "etcdserverpb.DeleteRangeResponse", false, false},
    {"/etcdserverpb.KV/Txn", "etcdserverpb.TxnRequest", "etcdserverpb.TxnResponse", false, false},
    {"/etcdserverpb.KV/Compact", "etcdserverpb.CompactionRequest",
     "etcdserverpb.CompactionResponse", false, false},
    {"/etcdserverpb.Watch/Watch", "etcdserverpb.WatchRequest", "etcdserverpb.WatchResponse", true,
     true},
    {"/etcdserverpb.Lease/LeaseGrant", "etcdserverpb.LeaseGrantRequest",
     "etcdserverpb.LeaseGrantResponse", false, false},
    {"/etcdserverpb.Lease/LeaseRevoke", "etcdserverpb.LeaseRevokeRequest",
     "etcdserverpb.LeaseRevokeResponse", false, false},
    {"/etcdserverpb.Lease/LeaseKeepAlive", "etcdserverpb.LeaseKeepAliveRequest",
     "etcdserverpb.LeaseKeepAliveResponse", true, true},
    {"/etcdserverpb.Lease/LeaseTimeToLive", "etcdserverpb.LeaseTimeToLiveRequest",
     "etcdserverpb.LeaseTimeToLiveResponse", false, false},
};

constexpr const char* kServices[] = {"cdcpb.ChangeData",   "pdpb.PD",
                                     "tikvpb.Tikv",        "etcdserverpb.KV",
                                     "etcdserverpb.Watch", "etcdserverpb.Lease"};

TEST(ServiceTest, DescriptorsMatchTheExpectedPathsAndShapes) {
  const DescriptorPool* pool = DescriptorPool::generated_pool();
  for (const Rpc& rpc : kRpcs) {
    SCOPED_TRACE(rpc.path);
    const std::string path = rpc.path;
    const size_t slash = path.rfind('/');
    ASSERT_NE(slash, 0u);
    const auto* service = pool->FindServiceByName(path.substr(1, slash - 1));
    ASSERT_NE(service, nullptr);
    const auto* method = service->FindMethodByName(path.substr(slash + 1));
    ASSERT_NE(method, nullptr);
    EXPECT_EQ("/" + service->full_name() + "/" + method->name(), path);
    EXPECT_EQ(method->input_type()->full_name(), rpc.input);
    EXPECT_EQ(method->output_type()->full_name(), rpc.output);
    EXPECT_EQ(method->client_streaming(), rpc.client_streaming);
    EXPECT_EQ(method->server_streaming(), rpc.server_streaming);
  }
}

TEST(ServiceTest, ServicesDeclareNoOtherMethods) {
  std::set<std::string> expected;
  for (const Rpc& rpc : kRpcs) expected.insert(rpc.path);
  std::set<std::string> declared;
  for (const char* name : kServices) {
    const auto* service = DescriptorPool::generated_pool()->FindServiceByName(name);
    ASSERT_NE(service, nullptr) << name;
    for (int i = 0; i < service->method_count(); ++i) {
      declared.insert("/" + service->full_name() + "/" + service->method(i)->name());
    }
  }
  EXPECT_EQ(declared, expected);
  EXPECT_STREQ(cdcpb::ChangeData::service_full_name(), "cdcpb.ChangeData");
  EXPECT_STREQ(pdpb::PD::service_full_name(), "pdpb.PD");
  EXPECT_STREQ(tikvpb::Tikv::service_full_name(), "tikvpb.Tikv");
  EXPECT_STREQ(etcdserverpb::KV::service_full_name(), "etcdserverpb.KV");
  EXPECT_STREQ(etcdserverpb::Watch::service_full_name(), "etcdserverpb.Watch");
  EXPECT_STREQ(etcdserverpb::Lease::service_full_name(), "etcdserverpb.Lease");
}

// Records the path of every call made on a channel.
class PathRecorder : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit PathRecorder(std::vector<std::string>* paths) : paths_(paths) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo* info) override {
    std::lock_guard<std::mutex> lock(mu_);
    paths_->push_back(info->method());
    return nullptr;
  }

 private:
  std::mutex mu_;
  std::vector<std::string>* paths_;
};

// Records the path of every call a server dispatches.
class ServerPathRecorder : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit ServerPathRecorder(std::vector<std::string>* paths) : paths_(paths) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    std::lock_guard<std::mutex> lock(mu_);
    paths_->push_back(info->method() != nullptr ? info->method() : "<unknown>");
    return nullptr;
  }

 private:
  std::mutex mu_;
  std::vector<std::string>* paths_;
};

template <typename Stub, typename Req, typename Resp>
grpc::StatusCode CallUnary(Stub& stub,
                           grpc::Status (Stub::*rpc)(grpc::ClientContext*, const Req&, Resp*)) {
  grpc::ClientContext ctx;
  Req req;
  Resp resp;
  return (stub.*rpc)(&ctx, req, &resp).error_code();
}

template <typename Stub, typename Req, typename Resp>
grpc::StatusCode CallBidi(Stub& stub, std::unique_ptr<grpc::ClientReaderWriter<Req, Resp>> (
                                          Stub::*rpc)(grpc::ClientContext*)) {
  grpc::ClientContext ctx;
  auto stream = (stub.*rpc)(&ctx);
  stream->WritesDone();
  return stream->Finish().error_code();
}

TEST(ServiceTest, GeneratedStubsCallTheExpectedPaths) {
  // A server with the generated services, whose default handlers answer
  // UNIMPLEMENTED, reached over an in-process channel.
  cdcpb::ChangeData::Service change_data;
  pdpb::PD::Service pd;
  tikvpb::Tikv::Service tikv;
  etcdserverpb::KV::Service kv;
  etcdserverpb::Watch::Service watch;
  etcdserverpb::Lease::Service lease;
  grpc::ServerBuilder builder;
  builder.RegisterService(&change_data).RegisterService(&pd).RegisterService(&tikv);
  builder.RegisterService(&kv);
  builder.RegisterService(&watch).RegisterService(&lease);
  std::vector<std::string> server_paths;
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
      server_recorders;
  server_recorders.push_back(std::make_unique<ServerPathRecorder>(&server_paths));
  builder.experimental().SetInterceptorCreators(std::move(server_recorders));
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);

  std::vector<std::string> paths;
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> recorders;
  recorders.push_back(std::make_unique<PathRecorder>(&paths));
  auto channel = server->experimental().InProcessChannelWithInterceptors(grpc::ChannelArguments(),
                                                                         std::move(recorders));
  auto cdc = cdcpb::ChangeData::NewStub(channel);
  auto pd_stub = pdpb::PD::NewStub(channel);
  auto tikv_stub = tikvpb::Tikv::NewStub(channel);
  auto kv_stub = etcdserverpb::KV::NewStub(channel);
  auto watch_stub = etcdserverpb::Watch::NewStub(channel);
  auto lease_stub = etcdserverpb::Lease::NewStub(channel);
  const std::vector<grpc::StatusCode> codes = {
      CallBidi(*cdc, &cdcpb::ChangeData::Stub::EventFeed),
      CallBidi(*cdc, &cdcpb::ChangeData::Stub::EventFeedV2),
      CallUnary(*pd_stub, &pdpb::PD::Stub::GetMembers),
      CallBidi(*pd_stub, &pdpb::PD::Stub::Tso),
      CallUnary(*pd_stub, &pdpb::PD::Stub::GetRegion),
      CallUnary(*pd_stub, &pdpb::PD::Stub::GetRegionByID),
      CallUnary(*pd_stub, &pdpb::PD::Stub::ScanRegions),
      CallUnary(*pd_stub, &pdpb::PD::Stub::BatchScanRegions),
      CallUnary(*pd_stub, &pdpb::PD::Stub::GetStore),
      CallUnary(*pd_stub, &pdpb::PD::Stub::GetAllStores),
      CallUnary(*pd_stub, &pdpb::PD::Stub::UpdateServiceGCSafePoint),
      CallUnary(*pd_stub, &pdpb::PD::Stub::GetGCSafePoint),
      CallUnary(*tikv_stub, &tikvpb::Tikv::Stub::KvGet),
      CallUnary(*tikv_stub, &tikvpb::Tikv::Stub::KvScan),
      CallUnary(*tikv_stub, &tikvpb::Tikv::Stub::KvScanLock),
      CallUnary(*tikv_stub, &tikvpb::Tikv::Stub::KvResolveLock),
      CallUnary(*tikv_stub, &tikvpb::Tikv::Stub::KvCheckTxnStatus),
      CallUnary(*kv_stub, &etcdserverpb::KV::Stub::Range),
      CallUnary(*kv_stub, &etcdserverpb::KV::Stub::Put),
      CallUnary(*kv_stub, &etcdserverpb::KV::Stub::DeleteRange),
      CallUnary(*kv_stub, &etcdserverpb::KV::Stub::Txn),
      CallUnary(*kv_stub, &etcdserverpb::KV::Stub::Compact),
      CallBidi(*watch_stub, &etcdserverpb::Watch::Stub::Watch),
      CallUnary(*lease_stub, &etcdserverpb::Lease::Stub::LeaseGrant),
      CallUnary(*lease_stub, &etcdserverpb::Lease::Stub::LeaseRevoke),
      CallBidi(*lease_stub, &etcdserverpb::Lease::Stub::LeaseKeepAlive),
      CallUnary(*lease_stub, &etcdserverpb::Lease::Stub::LeaseTimeToLive),
  };
  server->Shutdown();

  // The default handlers answer UNIMPLEMENTED; the server saw the same path
  // as the client, so each call was dispatched to its registered method.
  EXPECT_THAT(codes, ::testing::Each(grpc::StatusCode::UNIMPLEMENTED));
  std::vector<std::string> expected;
  for (const Rpc& rpc : kRpcs) expected.push_back(rpc.path);
  EXPECT_EQ(paths, expected);
  EXPECT_EQ(server_paths, expected);
}

}  // namespace
}  // namespace sluice
