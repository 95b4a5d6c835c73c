// The etcd metastore against etcd processes of its own (Debian's
// etcd-server): a watch and the calls survive an etcd restart without losing
// or repeating an event, a watch from a compacted revision is typed, a dead
// endpoint is skipped, and an endpoint that is not etcd is refused. The
// contract tests (src/meta) run against the shared test etcd.
#include "meta/etcd_store.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>

#include "common/test_util.h"
#include "etcd/rpc.grpc.pb.h"
#include "process/etcd_process.h"

namespace sluice::meta {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

using testing::EtcdProcess;
using testing::FreePort;

class EtcdStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access(testing::kEtcdBinary, X_OK) != 0) {
      GTEST_SKIP() << testing::kEtcdBinary << " is not installed";
    }
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    etcd_ = std::make_unique<EtcdProcess>(::testing::TempDir() + "/etcd_" + info->name());
    ASSERT_TRUE(etcd_->Start().ok());
  }

  Result<std::unique_ptr<EtcdMetaStore>> Open(std::vector<std::string> endpoints) {
    EtcdStoreOptions options;
    options.endpoints = std::move(endpoints);
    options.key_prefix = "/t/";
    options.request_timeout = seconds(2);
    return EtcdMetaStore::Open(options);
  }

  std::unique_ptr<EtcdProcess> etcd_;
};

// Events from `cursor` until there are `n` or 20 s passed.
std::vector<WatchEvent> Collect(WatchCursor* cursor, size_t n) {
  std::vector<WatchEvent> out;
  const Clock::TimePoint deadline = Clock::Real()->Now() + seconds(20);
  while (out.size() < n) {
    Result<std::vector<WatchEvent>> got = cursor->Next(CancelToken(), deadline);
    if (!got.ok()) break;
    for (WatchEvent& e : *got) out.push_back(std::move(e));
  }
  return out;
}

TEST_F(EtcdStoreTest, WatchAndCallsSurviveAnEtcdRestart) {
  std::unique_ptr<EtcdMetaStore> store = std::move(Open({etcd_->endpoint()})).value();
  std::unique_ptr<EtcdMetaStore> writer = std::move(Open({etcd_->endpoint()})).value();
  std::unique_ptr<WatchCursor> cursor = std::move(store->Watch("k/", 0)).value();
  ASSERT_TRUE(writer->Put("k/1", "a").ok());
  ASSERT_TRUE(writer->Put("k/2", "b").ok());
  ASSERT_EQ(Collect(cursor.get(), 2).size(), 2u);

  etcd_->Kill();
  EXPECT_EQ(store->Put("k/x", "lost").status().code(), Code::kUnavailable);
  ASSERT_TRUE(etcd_->Start().ok());
  // Writes after the restart, from another client, before and while the
  // cursor reconnects: it must see each exactly once, in order.
  Revision last = 0;
  ASSERT_TRUE(PollUntil(
      [&] {
        Result<Revision> put = writer->Put("k/3", "c");
        if (put.ok()) last = *put;
        return put.ok();
      },
      seconds(20)));
  for (int i = 4; i < 10; ++i) last = *writer->Put("k/" + std::to_string(i), "v");
  std::vector<WatchEvent> events = Collect(cursor.get(), 7);
  ASSERT_EQ(events.size(), 7u);
  for (int i = 0; i < 7; ++i) EXPECT_EQ(events[i].kv.key, "k/" + std::to_string(i + 3));
  EXPECT_EQ(events.back().kv.mod_revision, last);
  EXPECT_TRUE(cursor->Poll()->empty());
  // The original client's calls work again too.
  ASSERT_TRUE(PollUntil([&] { return store->Get("k/3").ok(); }, seconds(20)));
  EXPECT_EQ((*store->Get("k/3"))->value, "c");
}

TEST_F(EtcdStoreTest, WatchFromACompactedRevisionIsTyped) {
  std::unique_ptr<EtcdMetaStore> store = std::move(Open({etcd_->endpoint()})).value();
  const Revision first = *store->Put("k", "1");
  Revision last = first;
  for (int i = 0; i < 5; ++i) last = *store->Put("k", std::to_string(i));
  // Compact through the wire, as an operator's etcdctl would.
  auto channel = grpc::CreateChannel(etcd_->endpoint(), grpc::InsecureChannelCredentials());
  auto kv = etcdserverpb::KV::NewStub(channel);
  etcdserverpb::CompactionRequest request;
  request.set_revision(last);
  etcdserverpb::CompactionResponse response;
  grpc::ClientContext context;
  ASSERT_TRUE(kv->Compact(&context, request, &response).ok());

  Result<std::unique_ptr<WatchCursor>> old = store->Watch("", first);
  EXPECT_EQ(old.status().code(), Code::kNotFound);
  EXPECT_TRUE(old.status().message().starts_with("compacted")) << old.status().ToString();
  Result<std::unique_ptr<WatchCursor>> recent = store->Watch("", last);
  ASSERT_TRUE(recent.ok()) << recent.status().ToString();
  std::vector<WatchEvent> events = Collect(recent->get(), 1);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kv.value, "4");
}

TEST_F(EtcdStoreTest, ADeadEndpointIsSkippedAndNoneAnsweringIsUnavailable) {
  const std::string dead = "127.0.0.1:" + std::to_string(FreePort());
  Result<std::unique_ptr<EtcdMetaStore>> store = Open({dead, etcd_->endpoint()});
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE((*store)->Put("k", "v").ok());
  EXPECT_EQ((*store)->current_endpoint(), etcd_->endpoint());

  Result<std::unique_ptr<EtcdMetaStore>> none = Open({dead});
  EXPECT_EQ(none.status().code(), Code::kUnavailable) << none.status().ToString();
  EXPECT_EQ(Open({}).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Open({"http://host-without-port"}).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Open({"https://127.0.0.1:2379"}).status().code(), Code::kNotSupported);
}

TEST_F(EtcdStoreTest, AnEndpointThatIsNotEtcdIsRefused) {
  // A gRPC server with etcd's Watch service only: KV calls are unimplemented.
  etcdserverpb::Watch::Service watch_only;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&watch_only);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  Result<std::unique_ptr<EtcdMetaStore>> store = Open({"127.0.0.1:" + std::to_string(port)});
  EXPECT_EQ(store.status().code(), Code::kNotSupported) << store.status().ToString();
  server->Shutdown();
}

}  // namespace
}  // namespace sluice::meta
