// PdClient against a simulated PD on loopback: cluster id, TSO batching and
// monotonicity, region and store lookups, GC safepoints, cluster-id
// refusals, PD restarts; and against a scripted PD for bad TSO answers.
#include "pd/pd_client.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <set>
#include <thread>
#include <vector>

#include "common/lifecycle.h"
#include "common/test_util.h"
#include "common/tso.h"
#include "pd/pd_test_util.h"
#include "simkv/grpc_util.h"

namespace sluice::pd::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

class PdClientTest : public PdTestBase {
 protected:
  void SetUp() override { StartCluster(); }
};

TEST_F(PdClientTest, ConnectLearnsClusterId) {
  auto client = Connect();
  ASSERT_NE(client, nullptr);
  EXPECT_EQ(client->cluster_id(), cluster_->cluster_id());
  EXPECT_EQ(client->connects(), 1u);
}

TEST_F(PdClientTest, ConnectRejectsBadOptions) {
  PdClientOptions no_endpoints = Options();
  no_endpoints.endpoints.clear();
  EXPECT_EQ(PdClient::Connect(no_endpoints).status().code(), Code::kInvalidArgument);
  PdClientOptions no_batch = Options();
  no_batch.tso_max_batch = 0;
  EXPECT_EQ(PdClient::Connect(no_batch).status().code(), Code::kInvalidArgument);
  PdClientOptions huge_batch = Options();
  huge_batch.tso_max_batch = (size_t{1} << 18) + 1;
  EXPECT_EQ(PdClient::Connect(huge_batch).status().code(), Code::kInvalidArgument);
}

TEST_F(PdClientTest, ConnectSkipsDeadEndpoints) {
  auto other = StartAnotherCluster({}, 99);
  const std::string dead = other->pd_address();
  other->Stop();
  PdClientOptions options = Options();
  options.endpoints = {dead, "http://" + cluster_->pd_address()};
  auto client = Connect(options);
  ASSERT_NE(client, nullptr);
  EXPECT_EQ(client->cluster_id(), cluster_->cluster_id());
}

TEST_F(PdClientTest, ConnectToDeadPdIsUnavailable) {
  ASSERT_TRUE(cluster_->PdDown().ok());
  const auto start = steady_clock::now();
  Result<std::unique_ptr<PdClient>> client = PdClient::Connect(Options());
  EXPECT_EQ(client.status().code(), Code::kUnavailable);
  EXPECT_LT(steady_clock::now() - start, Options().rpc_timeout);
}

TEST_F(PdClientTest, GetTsIsFreshAndIncreasing) {
  auto client = Connect();
  Result<Ts> first = client->GetTs();
  Result<Ts> second = client->GetTs();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(second.ok());
  EXPECT_LT(*first, *second);
  EXPECT_LE(*second, cluster_->tso().Max());
  const auto now_ms =
      std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  EXPECT_NEAR(static_cast<double>(tso::Physical(*first)), static_cast<double>(now_ms), 10000.0);
}

TEST_F(PdClientTest, ConcurrentGetTsIsUniqueIncreasingAndBatched) {
  auto client = Connect();
  constexpr int kThreads = 8;
  constexpr int kCalls = 1000;
  std::vector<std::vector<Ts>> got(kThreads);
  std::atomic<int> failures{0};
  {
    ThreadGroup threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.Start("tso-caller", [&, t](StopToken) {
        for (int i = 0; i < kCalls; ++i) {
          Result<Ts> ts = client->GetTs();
          if (!ts.ok()) {
            failures.fetch_add(1);
            return;
          }
          got[t].push_back(*ts);
        }
      });
    }
    threads.Join();
  }
  ASSERT_EQ(failures.load(), 0);
  std::vector<Ts> all;
  for (const std::vector<Ts>& mine : got) {
    ASSERT_EQ(mine.size(), static_cast<size_t>(kCalls));
    EXPECT_TRUE(std::is_sorted(mine.begin(), mine.end()));
    EXPECT_EQ(std::adjacent_find(mine.begin(), mine.end()), mine.end());
    all.insert(all.end(), mine.begin(), mine.end());
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end()) << "duplicate timestamp";
  EXPECT_LE(all.back(), cluster_->tso().Max());
  // Callers that wait together share one stream request.
  RecordProperty("tso_requests_sent", static_cast<int>(client->tso_requests_sent()));
  EXPECT_LT(client->tso_requests_sent(), static_cast<uint64_t>(kThreads * kCalls) / 2);
  EXPECT_EQ(client->tso_streams_opened(), 1u);
}

TEST_F(PdClientTest, ScanRegionsAfterSplitHonoursLimit) {
  auto client = Connect();
  RegionId middle = cluster_->regions().RegionForKey(Enc("c"))->id;
  ASSERT_TRUE(cluster_->Split(middle, "f").ok());

  Result<std::vector<Region>> all = client->ScanRegions(Span{}, 0);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 4u);
  const std::vector<std::string> bounds = {"", Enc("b"), Enc("f"), Enc("m"), ""};
  for (size_t i = 0; i < all->size(); ++i) {
    EXPECT_EQ((*all)[i].start_key, bounds[i]);
    EXPECT_EQ((*all)[i].end_key, bounds[i + 1]);
    EXPECT_TRUE((*all)[i].has_leader());
    EXPECT_EQ((*all)[i].peers.size(), 3u);
  }
  EXPECT_EQ((*all)[1].id, middle);
  EXPECT_GT((*all)[1].version, 1u);

  Result<std::vector<Region>> two = client->ScanRegions(Span{}, 2);
  ASSERT_TRUE(two.ok());
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ((*two)[1].end_key, Enc("f"));

  Result<std::vector<Region>> inner = client->ScanRegions(Span{Enc("c"), Enc("g")}, 10);
  ASSERT_TRUE(inner.ok());
  ASSERT_EQ(inner->size(), 2u);
  EXPECT_EQ((*inner)[0].start_key, Enc("b"));
  EXPECT_EQ((*inner)[1].end_key, Enc("m"));
  EXPECT_EQ(client->scan_regions_calls(), 3u);
}

TEST_F(PdClientTest, GetRegionByKeyAndById) {
  auto client = Connect();
  Result<Region> by_key = client->GetRegionByKey(Enc("x"));
  ASSERT_TRUE(by_key.ok()) << by_key.status().ToString();
  EXPECT_EQ(by_key->start_key, Enc("m"));
  EXPECT_TRUE(by_key->end_key.empty());
  simkv::RegionInfo truth = *cluster_->regions().RegionForKey(Enc("x"));
  EXPECT_EQ(by_key->leader_store, truth.leader);

  Result<Region> by_id = client->GetRegionById(by_key->id);
  ASSERT_TRUE(by_id.ok());
  EXPECT_EQ(by_id->start_key, by_key->start_key);
  EXPECT_EQ(by_id->leader_peer_id, by_key->leader_peer_id);
  EXPECT_EQ(client->GetRegionById(RegionId(987654)).status().code(), Code::kNotFound);
}

TEST_F(PdClientTest, StoresAndTheirAddresses) {
  auto client = Connect();
  Result<std::vector<Store>> stores = client->GetAllStores();
  ASSERT_TRUE(stores.ok()) << stores.status().ToString();
  ASSERT_EQ(stores->size(), 3u);
  for (const Store& store : *stores) {
    EXPECT_EQ(store.address, cluster_->store_address(store.id));
    EXPECT_TRUE(store.up);
  }
  Result<Store> one = client->GetStore(StoreId(2));
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->address, cluster_->store_address(StoreId(2)));
  EXPECT_EQ(client->GetStore(StoreId(99)).status().code(), Code::kNotFound);
}

TEST_F(PdClientTest, ServiceGcSafePoint) {
  auto client = Connect();
  Result<Ts> ts = client->GetTs();
  ASSERT_TRUE(ts.ok());
  // The implicit gc_worker entry (GC safe point 0) is still the minimum.
  Result<Ts> min = client->UpdateServiceGcSafePoint("cdc-test", 3600, *ts);
  ASSERT_TRUE(min.ok()) << min.status().ToString();
  EXPECT_EQ(*min, Ts(0));
  ASSERT_EQ(cluster_->pd().LiveServiceSafePoints().size(), 1u);
  EXPECT_EQ(cluster_->pd().LiveServiceSafePoints()[0].safe_point, *ts);

  // GC stops at the service safepoint.
  ASSERT_TRUE(cluster_->RunGc().ok());
  Result<Ts> gc = client->GetGcSafePoint();
  ASSERT_TRUE(gc.ok());
  EXPECT_EQ(*gc, *ts);
  // Below the minimum is refused; PD answers the higher minimum.
  min = client->UpdateServiceGcSafePoint("cdc-test", 3600, Ts(ts->value() - 5));
  ASSERT_TRUE(min.ok());
  EXPECT_EQ(*min, *ts);
}

TEST_F(PdClientTest, ForgedClusterIdIsIncompatible) {
  auto client = Connect();
  client->ForgeClusterIdForTesting(cluster_->cluster_id() + 1);
  EXPECT_EQ(client->GetRegionById(RegionId(1)).status().code(), Code::kIncompatible);
  EXPECT_EQ(client->ScanRegions(Span{}, 0).status().code(), Code::kIncompatible);
  EXPECT_EQ(client->GetTs().status().code(), Code::kIncompatible);
  // The refusal does not drop the connection.
  client->ForgeClusterIdForTesting(cluster_->cluster_id());
  EXPECT_TRUE(client->GetRegionById(RegionId(1)).ok());
  EXPECT_TRUE(client->GetTs().ok());
  EXPECT_EQ(client->connects(), 1u);
}

TEST_F(PdClientTest, EndpointOfAnotherClusterIsIncompatible) {
  auto other = StartAnotherCluster({}, 4242);
  ASSERT_NE(other, nullptr);
  PdClientOptions options = Options();
  options.endpoints = {cluster_->pd_address(), other->pd_address()};
  auto client = Connect(options);
  ASSERT_TRUE(cluster_->PdDown().ok());
  // The first call finds the connection gone; a later one reaches only the
  // other cluster's PD.
  EXPECT_TRUE(PollUntil(
      [&] { return client->GetRegionById(RegionId(1)).status().code() == Code::kIncompatible; }));
  ASSERT_TRUE(cluster_->PdRestart().ok());
  EXPECT_TRUE(PollUntil([&] { return client->GetRegionById(RegionId(1)).ok(); }));
  other->Stop();
}

TEST_F(PdClientTest, PdDownIsUnavailableAndRestartRecovers) {
  PdClientOptions options = Options();
  options.rpc_timeout = milliseconds(1000);
  auto client = Connect(options);
  Result<Ts> before = client->GetTs();
  ASSERT_TRUE(before.ok());
  ASSERT_TRUE(client->ScanRegions(Span{}, 0).ok());

  ASSERT_TRUE(cluster_->PdDown().ok());
  for (int i = 0; i < 3; ++i) {
    auto start = steady_clock::now();
    EXPECT_EQ(client->GetTs().status().code(), Code::kUnavailable);
    EXPECT_EQ(client->ScanRegions(Span{}, 0).status().code(), Code::kUnavailable);
    EXPECT_EQ(client->GetStore(StoreId(1)).status().code(), Code::kUnavailable);
    EXPECT_LT(steady_clock::now() - start, options.rpc_timeout + milliseconds(500));
  }

  ASSERT_TRUE(cluster_->PdRestart().ok());
  Result<Ts> after = Unavailable("not yet");
  EXPECT_TRUE(PollUntil(
      [&] {
        after = client->GetTs();
        return after.ok();
      },
      milliseconds(10000)));
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_GT(*after, *before);
  EXPECT_TRUE(client->ScanRegions(Span{}, 0).ok());
  EXPECT_GE(client->tso_streams_opened(), 2u);
  EXPECT_GE(client->connects(), 2u);
}

TEST_F(PdClientTest, StopFailsLaterCalls) {
  auto client = Connect();
  ASSERT_TRUE(client->GetTs().ok());
  client->Stop();
  EXPECT_EQ(client->GetTs().status().code(), Code::kCancelled);
  EXPECT_EQ(client->ScanRegions(Span{}, 0).status().code(), Code::kCancelled);
  client->Stop();  // Idempotent.
}

// A PD whose Tso answers are scripted: correct, stalled, or malformed.
class ScriptedPd final : public pdpb::PD::Service {
 public:
  enum class Mode { kNormal, kStall, kWrongCount, kGoBack };
  static constexpr uint64_t kClusterId = 4711;

  void set_mode(Mode mode) { mode_.store(mode); }
  void set_url(std::string url) { url_ = std::move(url); }
  int streams() const { return streams_.load(); }

  grpc::Status GetMembers(grpc::ServerContext*, const pdpb::GetMembersRequest*,
                          pdpb::GetMembersResponse* response) override {
    response->mutable_header()->set_cluster_id(kClusterId);
    response->mutable_leader()->add_client_urls(url_);
    return grpc::Status::OK;
  }

  grpc::Status Tso(grpc::ServerContext*,
                   grpc::ServerReaderWriter<pdpb::TsoResponse, pdpb::TsoRequest>* stream) override {
    streams_.fetch_add(1);
    pdpb::TsoRequest request;
    while (stream->Read(&request)) {
      Mode mode = mode_.load();
      if (mode == Mode::kStall) continue;  // Never answers; the next Read waits for a cancel.
      pdpb::TsoResponse response;
      response.mutable_header()->set_cluster_id(kClusterId);
      response.set_count(mode == Mode::kWrongCount ? request.count() + 1 : request.count());
      int64_t logical = mode == Mode::kGoBack ? 1000 : logical_.load() + request.count();
      logical_.store(logical);
      response.mutable_timestamp()->set_physical(1700000000000);
      response.mutable_timestamp()->set_logical(logical + 1000);
      if (!stream->Write(response)) break;
    }
    return grpc::Status::OK;
  }

 private:
  std::atomic<Mode> mode_{Mode::kNormal};
  std::atomic<int> streams_{0};
  std::string url_;
  std::atomic<int64_t> logical_{5000};
};

class ScriptedPdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<simkv::LoopbackServer> server = simkv::StartLoopbackServer({&pd_});
    ASSERT_TRUE(server.ok());
    server_ = std::move(server->server);
    address_ = server->address();
    pd_.set_url("http://" + address_);
    PdClientOptions options;
    options.endpoints = {address_};
    options.rpc_timeout = milliseconds(500);
    options.backoff_base = milliseconds(10);
    options.backoff_max = milliseconds(50);
    Result<std::unique_ptr<PdClient>> client = PdClient::Connect(options);
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    client_ = std::move(client).value();
  }
  void TearDown() override {
    if (client_) client_->Stop();
    simkv::ShutdownServer(server_.get());
  }

  ScriptedPd pd_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  std::unique_ptr<PdClient> client_;
};

TEST_F(ScriptedPdTest, BatchIsSplitBelowTheLastTimestamp) {
  Result<Ts> ts = client_->GetTs();
  ASSERT_TRUE(ts.ok()) << ts.status().ToString();
  // First request of count 1: logical 5001 + 1000; the batch is that one.
  EXPECT_EQ(*ts, tso::Compose(1700000000000, 6001));
  EXPECT_EQ(client_->cluster_id(), ScriptedPd::kClusterId);
}

TEST_F(ScriptedPdTest, WrongCountIsAProtocolViolationAndTheStreamReopens) {
  ASSERT_TRUE(client_->GetTs().ok());
  pd_.set_mode(ScriptedPd::Mode::kWrongCount);
  EXPECT_EQ(client_->GetTs().status().code(), Code::kProtocolViolation);
  pd_.set_mode(ScriptedPd::Mode::kNormal);
  EXPECT_TRUE(PollUntil([&] { return client_->GetTs().ok(); }));
  EXPECT_GE(client_->tso_streams_opened(), 2u);
}

TEST_F(ScriptedPdTest, TimestampGoingBackIsRefused) {
  ASSERT_TRUE(client_->GetTs().ok());
  ASSERT_TRUE(client_->GetTs().ok());
  pd_.set_mode(ScriptedPd::Mode::kGoBack);
  EXPECT_EQ(client_->GetTs().status().code(), Code::kProtocolViolation);
}

TEST_F(ScriptedPdTest, StalledStreamTimesOutAndIsReplaced) {
  ASSERT_TRUE(client_->GetTs().ok());
  pd_.set_mode(ScriptedPd::Mode::kStall);
  const auto start = steady_clock::now();
  EXPECT_EQ(client_->GetTs().status().code(), Code::kUnavailable);
  EXPECT_LT(steady_clock::now() - start, milliseconds(1500));
  pd_.set_mode(ScriptedPd::Mode::kNormal);
  EXPECT_TRUE(PollUntil([&] { return client_->GetTs().ok(); }));
  EXPECT_GE(pd_.streams(), 2);
}

}  // namespace
}  // namespace sluice::pd::testing
