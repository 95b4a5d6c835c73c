// One sluice node in-process against an in-process simkv: a changefeed into
// csv files through create, progress, pause, resume (a new epoch), remove
// and a graceful stop. Small enough for the sanitizer builds, so the node's
// threads (maintainer host, node control, message center, data paths,
// coordinator ticker, API) run under ASan and TSan.
#include "server/server.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/test_util.h"
#include "simkv/sim_cluster.h"
#include "simkv/workload.h"

namespace sluice::server {
namespace {

using namespace std::chrono_literals;

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/server_test_" + std::to_string(getpid());
    std::filesystem::remove_all(dir_);
    simkv::SimClusterOptions cluster_options;
    cluster_options.resolved_ts_interval = 50ms;
    auto cluster = simkv::SimCluster::Start(cluster_options);
    ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
    cluster_ = std::move(cluster).value();
    simkv::WorkloadOptions w;
    w.seed = 3;
    w.database = "srv";
    w.narrow_tables = 2;
    workload_ = std::make_unique<simkv::Workload>(&cluster_->mvcc(), &cluster_->tso(), w);
    ASSERT_TRUE(workload_->Setup().ok());
    ServerOptions options;
    options.pd_endpoints = {cluster_->pd_address()};
    options.addr = "127.0.0.1:0";
    options.data_dir = dir_ + "/data";
    options.backoff_initial = 100ms;
    auto server = Server::Start(options);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
  }

  void TearDown() override {
    if (server_ != nullptr) server_->Stop();
    workload_.reset();
    if (cluster_ != nullptr) cluster_->Stop();
  }

  Ts Now() {
    Result<Ts> ts = cluster_->tso().Allocate();
    EXPECT_TRUE(ts.ok());
    return ts.ok() ? *ts : Ts();
  }

  coordinator::ChangefeedView View() {
    auto view = server_->coordinator()->GetChangefeed(id_);
    EXPECT_TRUE(view.ok()) << view.status().ToString();
    return view.ok() ? *view : coordinator::ChangefeedView{};
  }

  // Runs some workload steps, then waits until the checkpoint passes them.
  void ProgressPast() {
    for (int i = 0; i < 30; ++i) ASSERT_TRUE(workload_->Step().ok());
    const Ts target = Now();
    EXPECT_TRUE(PollUntil([&] { return View().status.checkpoint_ts >= target; }, 60s))
        << "checkpoint " << View().status.checkpoint_ts.value() << " below " << target.value();
  }

  std::string dir_;
  meta::ChangefeedId id_{"default", "srv-test"};
  std::unique_ptr<simkv::SimCluster> cluster_;
  std::unique_ptr<simkv::Workload> workload_;
  std::unique_ptr<Server> server_;
};

TEST_F(ServerTest, ChangefeedLifecycleInProcess) {
  meta::ChangefeedInfo info;
  info.id = id_;
  info.sink_uri = "file://" + dir_ + "/out?protocol=csv&flush-interval=100ms";
  info.start_ts = Now();
  ASSERT_TRUE(server_->coordinator()->CreateChangefeed(info).ok());
  ASSERT_NO_FATAL_FAILURE(ProgressPast());
  const MaintainerEpoch first = View().info.epoch;

  ASSERT_TRUE(server_->coordinator()->PauseChangefeed(id_).ok());
  EXPECT_EQ(View().info.state, meta::FeedState::kStopped);
  const Ts paused_at = View().status.checkpoint_ts;
  ASSERT_TRUE(server_->coordinator()->ResumeChangefeed(id_, std::nullopt).ok());
  EXPECT_GT(View().info.epoch, first);
  EXPECT_GE(View().status.checkpoint_ts, paused_at);
  ASSERT_NO_FATAL_FAILURE(ProgressPast());
  EXPECT_EQ(View().info.state, meta::FeedState::kNormal);
  EXPECT_FALSE(View().info.error.has_value());

  ASSERT_TRUE(server_->coordinator()->RemoveChangefeed(id_).ok());
  EXPECT_EQ(server_->coordinator()->GetChangefeed(id_).status().code(), Code::kNotFound);
  // The files hold rows of both generations.
  size_t files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir_ + "/out")) {
    if (e.path().extension() == ".csv") ++files;
  }
  EXPECT_GE(files, 2u);
  server_->Stop();
}

TEST_F(ServerTest, TheDataDirServesOneProcessAtATime) {
  ServerOptions options;
  options.pd_endpoints = {cluster_->pd_address()};
  options.addr = "127.0.0.1:0";
  options.data_dir = dir_ + "/data";
  auto second = Server::Start(options);
  EXPECT_EQ(second.status().code(), Code::kUnavailable) << second.status().ToString();
}

}  // namespace
}  // namespace sluice::server
