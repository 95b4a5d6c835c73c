// The real binaries end to end: `simkv` (upstream, workload with faults),
// `sluice server` and `sluice cli` as child processes. Two changefeeds (to
// MariaDB and to csv files) are created, paused, resumed (a new maintainer
// epoch), updated while stopped, the server is killed with SIGKILL mid-run
// and restarted on the same data dir, the workload stops, both changefeeds
// catch up, `sluice-checker` finds zero differences against simkv's ground
// truth, the changefeeds are removed and SIGTERM stops the server cleanly.
// A monitor polls the API throughout: no checkpoint ever goes back.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "checker/mysql_reader.h"
#include "common/lifecycle.h"
#include "kvclient/meta_reader.h"
#include "kvclient/snapshot_reader.h"
#include "pd/pd_client.h"
#include "pd/region_cache.h"
#include "process/child_process.h"
#include "simkv/sql_render.h"

namespace sluice::testing {
namespace {

using namespace std::chrono_literals;

constexpr const char* kDatabase = "server_e2e";

class ServerE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* uri = std::getenv("SLUICE_TEST_MYSQL");
    if (uri == nullptr) GTEST_SKIP() << "SLUICE_TEST_MYSQL is not set";
    mysql_ = uri;
    dir_ = ::testing::TempDir() + "/server_e2e_" + std::to_string(getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }

  void TearDown() override {
    monitor_.Stop();
    server_.reset();
    simkv_.reset();
    // A failed run keeps its logs and data for inspection.
    if (!HasFailure() && !dir_.empty()) std::filesystem::remove_all(dir_);
  }

  void StartSimkv() {
    auto child =
        ChildProcess::Start({SLUICE_SIMKV_BIN, "--txns-per-s", "150", "--tables", "2", "--database",
                             kDatabase, "--regions", "4", "--tick", "100ms", "--seed", "11",
                             "--paused", "--faults", "split=1,leader=1,busy=1;interval=700ms"},
                            dir_ + "/simkv.log");
    ASSERT_TRUE(child.ok()) << child.status().ToString();
    simkv_ = std::move(child).value();
    auto pd = simkv_->WaitForLine(std::regex("^pd (\\S+)"), 20s);
    ASSERT_TRUE(pd.ok()) << pd.status().ToString() << simkv_->Output();
    pd_ = *pd;
    auto control = simkv_->WaitForLine(std::regex("^control http://(\\S+)"), 20s);
    ASSERT_TRUE(control.ok()) << control.status().ToString();
    control_ = *control;
  }

  void StartServer() {
    auto child = ChildProcess::Start(
        {SLUICE_BIN, "server", "--pd", pd_, "--addr", "127.0.0.1:0", "--data-dir", dir_ + "/data"},
        dir_ + "/server.log");
    ASSERT_TRUE(child.ok()) << child.status().ToString();
    server_ = std::move(child).value();
    auto api = server_->WaitForLine(std::regex("serving the API on (\\S+)"), 30s);
    ASSERT_TRUE(api.ok()) << api.status().ToString() << server_->Output();
    MutexLock lock(&mu_);
    api_ = *api;
  }

  // SIGTERM; the server must exit with 0 after its graceful shutdown.
  void StopServer() {
    server_->Signal(SIGTERM);
    auto status = server_->Wait(30s);
    ASSERT_TRUE(status.ok()) << status.status().ToString();
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << *status << server_->Output();
  }

  std::string Api() const {
    MutexLock lock(&mu_);
    return api_;
  }

  // `sluice cli ARGS --server API`; expects exit code 0 and returns stdout.
  std::string Cli(std::vector<std::string> args) {
    std::vector<std::string> argv = {SLUICE_BIN, "cli"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back("--server");
    argv.push_back("http://" + Api());
    auto r = RunProcess(argv, 60s);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return "";
    EXPECT_EQ(r->first, 0) << r->second;
    return r->second;
  }

  Ts Tso() {
    auto r = RunProcess({SLUICE_BIN, "cli", "tso", "query", "--pd", pd_}, 30s);
    EXPECT_TRUE(r.ok() && r->first == 0) << (r.ok() ? r->second : r.status().ToString());
    std::smatch m;
    // The number is alone on its line (the log goes to the same pipe).
    if (!r.ok() || !std::regex_search(r->second, m, std::regex("(^|\\n)([0-9]+)\\n"))) {
      ADD_FAILURE() << "no TSO printed";
      return Ts();
    }
    return Ts(std::stoull(m[2].str()));
  }

  // GET /api/v2/changefeeds/{id}/status as JSON; null when unreachable.
  nlohmann::json FeedStatus(const std::string& id) {
    httplib::Client client("http://" + Api());
    client.set_connection_timeout(1);
    auto res = client.Get("/api/v2/changefeeds/" + id + "/status");
    if (!res || res->status != 200) return nullptr;
    return nlohmann::json::parse(res->body, nullptr, false);
  }

  // Waits until the changefeed's checkpoint reaches `ts`; returns it.
  Ts WaitCheckpoint(const std::string& id, Ts ts, std::chrono::seconds timeout = 90s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    nlohmann::json last;
    while (std::chrono::steady_clock::now() < deadline) {
      last = FeedStatus(id);
      if (last.is_object() && last.value("checkpoint_ts", uint64_t{0}) >= ts.value()) {
        return Ts(last["checkpoint_ts"].get<uint64_t>());
      }
      std::this_thread::sleep_for(100ms);  // Polling the API.
    }
    ADD_FAILURE() << id << " did not reach " << ts.value() << "; last status " << last.dump();
    return Ts();
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

  // Creates the workload's tables downstream as they are at `ts`.
  void PrepareMysql(Ts ts) {
    pd::PdClientOptions options;
    options.endpoints = {pd_};
    auto pd = pd::PdClient::Connect(options);
    ASSERT_TRUE(pd.ok()) << pd.status().ToString();
    pd::RegionCache cache(pd->get());
    kvclient::SnapshotReader reader(pd->get(), &cache, kvclient::SnapshotReaderOptions{});
    kvclient::KvMetaReader meta(pd->get(), &reader);
    auto snapshot = meta.Read(ts);
    ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
    const std::string db = simkv::QuoteName(kDatabase);
    std::vector<std::string> sql = {"DROP DATABASE IF EXISTS " + db, "CREATE DATABASE " + db,
                                    "USE " + db};
    size_t tables = 0;
    for (const auto& [id, entry] : snapshot->tables) {
      if (snapshot->dbs.at(entry.first).name.original != kDatabase) continue;
      sql.push_back(simkv::CreateTableSql(entry.second));
      ++tables;
    }
    EXPECT_GE(tables, 2u);
    ASSERT_TRUE(checker::ExecSql(mysql_, sql).ok());
    reader.Stop();
    (*pd)->Stop();
  }

  void Check(const std::vector<std::string>& target, Ts ts) {
    std::vector<std::string> argv = {
        SLUICE_CHECKER_BIN,        "--pd", pd_, "--truth", dir_ + "/truth", "--ts",
        std::to_string(ts.value())};
    argv.insert(argv.end(), target.begin(), target.end());
    auto r = RunProcess(argv, 120s);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->first, 0) << r->second;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(
        r->second, m, std::regex("checker: 0 differences \\(([0-9]+) tables, ([0-9]+) rows")))
        << r->second;
    EXPECT_GE(std::stoi(m[1].str()), 2);
    EXPECT_GE(std::stoi(m[2].str()), 100) << "too few rows to tell anything";
  }

  std::string mysql_;
  std::string dir_;
  std::string pd_;
  std::string control_;
  std::unique_ptr<ChildProcess> simkv_;
  std::unique_ptr<ChildProcess> server_;
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
  httplib::Client control("http://" + control_);
  control.set_read_timeout(60);  // The ground truth of a whole run, from a sanitizer build.
  auto started = control.Post("/workload/start", "{}", "application/json");
  ASSERT_TRUE(started && started->status == 200);
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
  server_->Signal(SIGKILL);
  ASSERT_TRUE(server_->Wait(10s).ok());
  ASSERT_NO_FATAL_FAILURE(StartServer());
  WaitCheckpoint("e2e-mysql", Tso());
  WaitCheckpoint("e2e-file", Tso());

  // The workload stops; both catch up to a ts after its last commit.
  auto stopped = control.Post("/workload/stop");
  ASSERT_TRUE(stopped && stopped->status == 200);
  const Ts end = Tso();
  const Ts mysql_checkpoint = WaitCheckpoint("e2e-mysql", end);
  const Ts file_checkpoint = WaitCheckpoint("e2e-file", end);
  auto truth = control.Get("/ground-truth");
  ASSERT_TRUE(truth && truth->status == 200);
  std::ofstream(dir_ + "/truth") << truth->body;
  Check({"--mysql", mysql_, "--schemas", kDatabase}, mysql_checkpoint);
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
