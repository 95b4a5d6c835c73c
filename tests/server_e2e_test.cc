// The real binaries end to end: `simkv` (upstream, workload with faults),
// `sluice server` and `sluice cli` as child processes. Two changefeeds (to
// MariaDB and to csv files) are created, paused, resumed (a new maintainer
// epoch), updated while stopped, the server is killed with SIGKILL mid-run
// and restarted on the same data dir, the workload stops, both changefeeds
// catch up, `sluice-checker` finds zero differences against simkv's ground
// truth, the changefeeds are removed and SIGTERM stops the server cleanly.
// A monitor polls the API throughout: no checkpoint ever goes back.
#include <httplib.h>
#include <signal.h>

#include <map>

#include "common/clock.h"
#include "common/lifecycle.h"
#include "common/thread_annotations.h"
#include "e2e/e2e_fixture.h"

namespace sluice::testing {
namespace {

using namespace std::chrono_literals;

class ServerE2eTest : public E2eFixture {
 protected:
  void SetUp() override {
    database_ = "server_e2e";
    E2eFixture::SetUp();
  }
  void TearDown() override {
    monitor_.Stop();
    server_.child.reset();
    E2eFixture::TearDown();
  }

  void StartServer() {
    E2eFixture::StartServer(&server_, "data");
    MutexLock lock(&mu_);
    api_ = server_.api;
  }
  void StopServer() { E2eFixture::StopServer(&server_); }
  std::string Api() const {
    MutexLock lock(&mu_);
    return api_;
  }
  std::string Cli(std::vector<std::string> args) { return E2eFixture::Cli(Api(), std::move(args)); }
  nlohmann::json FeedStatus(const std::string& id) { return E2eFixture::FeedStatus(Api(), id); }
  Ts WaitCheckpoint(const std::string& id, Ts ts) {
    return E2eFixture::WaitCheckpoint(Api(), id, ts);
  }

  // Polls every changefeed's checkpoint; any step back is a failure.
  void StartMonitor(std::vector<std::string> ids) {
    monitor_.Start("ckpt-monitor", [this, ids](const StopToken& token) {
      while (!token.cancelled()) {
        for (const std::string& id : ids) {
          nlohmann::json s = FeedStatus(id);
          if (!s.is_object() || !s.contains("checkpoint_ts")) continue;
          const uint64_t ts = s["checkpoint_ts"].get<uint64_t>();
          MutexLock lock(&mu_);
          uint64_t& seen = max_checkpoint_[id];
          if (ts < seen)
            went_back_.push_back(id + ": " + std::to_string(seen) + " -> " + std::to_string(ts));
          seen = std::max(seen, ts);
        }
        Clock::Real()->SleepFor(50ms, token);
      }
    });
  }

  ServerProcess server_;
  mutable Mutex mu_;
  std::string api_ GUARDED_BY(mu_);
  std::map<std::string, uint64_t> max_checkpoint_ GUARDED_BY(mu_);
  std::vector<std::string> went_back_ GUARDED_BY(mu_);
  OwnedThread monitor_;
};

TEST_F(ServerE2eTest, LifecycleThroughTheBinariesEndsWithZeroDifferences) {
  ASSERT_NO_FATAL_FAILURE(StartSimkv());
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const Ts start = Tso();
  ASSERT_NO_FATAL_FAILURE(PrepareMysql(start));
  const std::string files = dir_ + "/out";
  const std::string file_uri = "file://" + files + "?protocol=csv&flush-interval=200ms";
  Cli({"changefeed", "create", "--sink-uri", mysql_, "-c", "e2e-mysql", "--start-ts",
       std::to_string(start.value())});
  Cli({"changefeed", "create", "--sink-uri", file_uri, "-c", "e2e-file", "--start-ts",
       std::to_string(start.value())});
  StartMonitor({"e2e-mysql", "e2e-file"});
  // DML starts after the start ts: the downstream tables start empty.
  ASSERT_NO_FATAL_FAILURE(StartWorkload());
  EXPECT_GT(WaitCheckpoint("e2e-mysql", Tso()), start);
  WaitCheckpoint("e2e-file", Tso());

  // Pause and resume: the resumed generation has a new epoch.
  Cli({"changefeed", "pause", "-c", "e2e-mysql"});
  EXPECT_EQ(FeedStatus("e2e-mysql").value("state", ""), "stopped");
  Cli({"changefeed", "resume", "-c", "e2e-mysql"});
  EXPECT_EQ(FeedStatus("e2e-mysql").value("state", ""), "normal");
  WaitCheckpoint("e2e-mysql", Tso());

  // Update while stopped.
  const std::string updated_uri = "file://" + files + "?protocol=csv&flush-interval=300ms";
  Cli({"changefeed", "pause", "-c", "e2e-file"});
  Cli({"changefeed", "update", "-c", "e2e-file", "--sink-uri", updated_uri});
  EXPECT_NE(Cli({"changefeed", "query", "-c", "e2e-file"}).find("flush-interval=300ms"),
            std::string::npos);
  Cli({"changefeed", "resume", "-c", "e2e-file"});
  WaitCheckpoint("e2e-file", Tso());

  // kill -9 mid-run, restart on the same data dir.
  server_.child->Signal(SIGKILL);
  ASSERT_TRUE(server_.child->Wait(10s).ok());
  ASSERT_NO_FATAL_FAILURE(StartServer());
  WaitCheckpoint("e2e-mysql", Tso());
  WaitCheckpoint("e2e-file", Tso());

  // The workload stops; both catch up to a ts after its last commit.
  ASSERT_NO_FATAL_FAILURE(StopWorkload());
  const Ts end = Tso();
  const Ts mysql_checkpoint = WaitCheckpoint("e2e-mysql", end);
  const Ts file_checkpoint = WaitCheckpoint("e2e-file", end);
  Check({"--mysql", mysql_, "--schemas", database_}, mysql_checkpoint);
  Check({"--storage", files, "--protocol", "csv"}, file_checkpoint);

  // /metrics carries each changefeed's checkpoint under TiCDC's name.
  httplib::Client api("http://" + Api());
  auto metrics = api.Get("/metrics");
  ASSERT_TRUE(metrics && metrics->status == 200);
  EXPECT_NE(metrics->body.find(
                "ticdc_owner_checkpoint_ts{namespace=\"default\",changefeed=\"e2e-mysql\"}"),
            std::string::npos)
      << metrics->body;

  // SIGTERM is a clean stop; after a restart no checkpoint is below what
  // the API showed before.
  monitor_.Stop();
  StopServer();
  ASSERT_NO_FATAL_FAILURE(StartServer());
  for (const std::string id : {"e2e-mysql", "e2e-file"}) {
    nlohmann::json s = FeedStatus(id);
    ASSERT_TRUE(s.is_object()) << id;
    MutexLock lock(&mu_);
    EXPECT_GE(s.value("checkpoint_ts", uint64_t{0}), max_checkpoint_[id]) << id;
  }

  Cli({"changefeed", "remove", "-c", "e2e-mysql"});
  Cli({"changefeed", "remove", "-c", "e2e-file"});
  const std::string list = Cli({"changefeed", "list"});
  EXPECT_EQ(list.find("e2e-"), std::string::npos) << list;
  StopServer();
  MutexLock lock(&mu_);
  EXPECT_TRUE(went_back_.empty()) << went_back_.front();
  EXPECT_GT(max_checkpoint_["e2e-mysql"], start.value());
}

}  // namespace
}  // namespace sluice::testing
