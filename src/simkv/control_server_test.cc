#include "simkv/control_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "common/clock.h"

namespace sluice::simkv {
namespace {

using nlohmann::json;

class ControlServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SimClusterOptions options;
    options.raw_split_keys = {"b", "m"};
    options.clock = &clock_;
    options.resolved_ts_interval = std::chrono::milliseconds(0);
    auto cluster = SimCluster::Start(options);
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    cluster_ = std::move(cluster).value();
    cluster_->mvcc().AddObserver(&truth_);
    WorkloadOptions wo;
    wo.clock = &clock_;
    workload_ = std::make_unique<Workload>(&cluster_->mvcc(), &cluster_->tso(), wo);
    FaultScheduleOptions fo;
    fo.clock = &clock_;
    faults_ = std::make_unique<FaultSchedule>(cluster_.get(), fo);
    server_ =
        std::make_unique<ControlServer>(cluster_.get(), workload_.get(), &truth_, faults_.get());
    ASSERT_TRUE(server_->Start({}).ok());
    client_ = std::make_unique<httplib::Client>("http://" + server_->address());
  }
  void TearDown() override {
    server_->Stop();
    faults_->Stop();
    cluster_->Stop();
    cluster_->mvcc().RemoveObserver(&truth_);
  }

  json Regions() {
    auto res = client_->Get("/regions");
    EXPECT_TRUE(res && res->status == 200);
    return res ? json::parse(res->body)["regions"] : json();
  }
  // Posts `body` and checks the error shape of a 4xx answer.
  void ExpectError(const std::string& path, const std::string& body, int status) {
    auto res = client_->Post(path, body, "application/json");
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, status) << path << " " << body << " -> " << res->body;
    json j = json::parse(res->body, nullptr, false);
    ASSERT_TRUE(j.is_object()) << res->body;
    EXPECT_TRUE(j["error_code"].is_string());
    EXPECT_TRUE(j["error_msg"].is_string());
  }

  ManualClock clock_;
  GroundTruth truth_;
  std::unique_ptr<SimCluster> cluster_;
  std::unique_ptr<Workload> workload_;
  std::unique_ptr<FaultSchedule> faults_;
  std::unique_ptr<ControlServer> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(ControlServerTest, StatusShape) {
  auto res = client_->Get("/status");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  json j = json::parse(res->body);
  EXPECT_EQ(j["cluster_id"].get<uint64_t>(), cluster_->cluster_id());
  EXPECT_EQ(j["pd_address"], cluster_->pd_address());
  EXPECT_EQ(j["stores"].size(), 3u);
  EXPECT_EQ(j["region_count"], 3);
  EXPECT_TRUE(j["workload"].is_object());
  EXPECT_TRUE(j.contains("ground_truth_size"));
  EXPECT_TRUE(j.contains("tso"));
}

TEST_F(ControlServerTest, SplitMergeTransferReflectedInRegions) {
  json regions = Regions();
  ASSERT_EQ(regions.size(), 3u);
  uint64_t last = regions[2]["id"];
  auto res = client_->Post("/regions/split", json{{"region_id", last}, {"key_hex", "7a"}}.dump(),
                           "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  uint64_t right = json::parse(res->body)["right"]["id"];
  EXPECT_EQ(Regions().size(), 4u);
  res = client_->Post("/regions/merge", json{{"left", last}, {"right", right}}.dump(),
                      "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(Regions().size(), 3u);
  json region = Regions()[0];
  uint64_t target = 0;
  for (const json& p : region["peers"]) {
    if (p["store_id"] != region["leader"]) target = p["store_id"];
  }
  res = client_->Post("/regions/transfer-leader",
                      json{{"region_id", region["id"]}, {"store_id", target}}.dump(),
                      "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(Regions()[0]["leader"], target);
}

TEST_F(ControlServerTest, FaultInjection) {
  auto res = client_->Post("/faults", json{{"kind", "restart"}, {"store_id", 2}}.dump(),
                           "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_FALSE(cluster_->StoreIsUp(StoreId(2)));
  clock_.Advance(std::chrono::seconds(2));
  faults_->Tick();
  EXPECT_TRUE(cluster_->StoreIsUp(StoreId(2)));
}

TEST_F(ControlServerTest, GroundTruthExportHasChanges) {
  ASSERT_TRUE(workload_->Step().ok());
  ASSERT_TRUE(workload_->Step().ok());
  auto res = client_->Get("/ground-truth");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  std::istringstream in(res->body);
  auto changes = GroundTruth::Read(in);
  ASSERT_TRUE(changes.ok()) << changes.status().ToString();
  EXPECT_EQ(changes->size(), truth_.size());
  EXPECT_GT(changes->size(), 0u);
}

// A run limited to some steps ends by itself: the status says so, and the
// next start runs again.
TEST_F(ControlServerTest, StepLimitedRunEndsAndCanStartAgain) {
  auto running = [&] {
    auto res = client_->Get("/status");
    EXPECT_TRUE(res && res->status == 200);
    return res ? json::parse(res->body) : json();
  };
  uint64_t want = 0;
  for (uint64_t steps : {5u, 7u}) {
    want += steps;
    auto started =
        client_->Post("/workload/start", json{{"steps", steps}}.dump(), "application/json");
    ASSERT_TRUE(started && started->status == 200);
    json s = running();
    for (int i = 0; i < 1000 && s["workload_running"].get<bool>(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      s = running();
    }
    EXPECT_FALSE(s["workload_running"].get<bool>());
    EXPECT_EQ(s["workload"]["steps"].get<uint64_t>(), want);
  }
}

TEST_F(ControlServerTest, BadInputAnswersErrorShapeAndChangesNothing) {
  json before = Regions();
  ExpectError("/regions/split", "{not json", 400);
  ExpectError("/regions/split", "[1,2]", 400);
  ExpectError("/regions/split", R"({"region_id":"1","key_hex":"7a"})", 400);
  ExpectError("/regions/split", R"({"region_id":1,"key_hex":"zz"})", 400);
  ExpectError("/regions/split", R"({"region_id":1,"key_hex":"7a","extra":1})", 400);
  ExpectError("/regions/split", R"({"region_id":999,"key_hex":"7a"})", 404);
  ExpectError("/regions/merge", R"({"left":999,"right":1})", 404);
  ExpectError("/regions/merge", R"({"left":-1,"right":1})", 400);
  ExpectError("/regions/transfer-leader", R"({"region_id":999,"store_id":1})", 404);
  ExpectError("/faults", R"({"kind":"meteor"})", 400);
  ExpectError("/faults", R"({"kind":"split","region_id":999})", 404);
  ExpectError("/faults", R"({"kind":"restart","store_id":99})", 404);
  ExpectError("/workload/start", R"({"steps":"many"})", 400);
  EXPECT_EQ(Regions(), before);
  for (StoreId id : cluster_->store_ids()) EXPECT_TRUE(cluster_->StoreIsUp(id));
}

}  // namespace
}  // namespace sluice::simkv
