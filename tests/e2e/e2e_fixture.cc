#include "e2e/e2e_fixture.h"

#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "checker/mysql_reader.h"
#include "kvclient/meta_reader.h"
#include "kvclient/snapshot_reader.h"
#include "pd/pd_client.h"
#include "pd/region_cache.h"
#include "simkv/sql_render.h"

namespace sluice::testing {

using namespace std::chrono_literals;

void E2eFixture::SetUp() {
  const char* uri = std::getenv("SLUICE_TEST_MYSQL");
  if (uri == nullptr) GTEST_SKIP() << "SLUICE_TEST_MYSQL is not set";
  mysql_ = uri;
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  dir_ = ::testing::TempDir() + "/" + info->test_suite_name() + "_" + info->name() + "_" +
         std::to_string(getpid());
  std::filesystem::remove_all(dir_);
  std::filesystem::create_directories(dir_);
}

void E2eFixture::TearDown() {
  simkv_.reset();
  // A failed run keeps its logs and data for inspection.
  if (!HasFailure() && !dir_.empty()) std::filesystem::remove_all(dir_);
}

void E2eFixture::StartSimkv(std::vector<std::string> extra) {
  std::vector<std::string> argv = {SLUICE_SIMKV_BIN,
                                   "--txns-per-s",
                                   "150",
                                   "--tables",
                                   "2",
                                   "--database",
                                   database_,
                                   "--regions",
                                   "4",
                                   "--tick",
                                   "100ms",
                                   "--seed",
                                   "11",
                                   "--paused",
                                   "--faults",
                                   "split=1,leader=1,busy=1;interval=700ms"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto child = ChildProcess::Start(argv, dir_ + "/simkv.log");
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  simkv_ = std::move(child).value();
  auto pd = simkv_->WaitForLine(std::regex("^pd (\\S+)"), 20s);
  ASSERT_TRUE(pd.ok()) << pd.status().ToString() << simkv_->Output();
  pd_ = *pd;
  auto control = simkv_->WaitForLine(std::regex("^control http://(\\S+)"), 20s);
  ASSERT_TRUE(control.ok()) << control.status().ToString();
  control_ = *control;
}

void E2eFixture::StartServer(ServerProcess* server, const std::string& name,
                             std::vector<std::string> extra) {
  server->name = name;
  std::vector<std::string> argv = {SLUICE_BIN, "server",      "--pd",       pd_,
                                   "--addr",   "127.0.0.1:0", "--data-dir", dir_ + "/" + name};
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto child = ChildProcess::Start(argv, dir_ + "/" + name + ".log");
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  server->child = std::move(child).value();
  auto line = server->child->WaitForLine(std::regex("(node \\S+ serving the API on \\S+)"), 60s);
  ASSERT_TRUE(line.ok()) << line.status().ToString() << server->child->Output();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(*line, m, std::regex("node (\\S+) serving the API on (\\S+)")));
  server->node_id = m[1].str();
  server->api = m[2].str();
}

void E2eFixture::StopServer(ServerProcess* server) {
  server->child->Signal(SIGTERM);
  auto status = server->child->Wait(60s);
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
      << *status << server->child->Output();
}

std::string E2eFixture::Cli(const std::string& api, std::vector<std::string> args) {
  std::vector<std::string> argv = {SLUICE_BIN, "cli"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("--server");
  argv.push_back("http://" + api);
  auto r = RunProcess(argv, 60s);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return "";
  EXPECT_EQ(r->first, 0) << r->second;
  return r->second;
}

Ts E2eFixture::Tso() {
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

nlohmann::json E2eFixture::GetJson(const std::string& api, const std::string& path) {
  httplib::Client client("http://" + api);
  client.set_connection_timeout(1);
  client.set_read_timeout(10);
  auto res = client.Get(path.c_str());
  if (!res || res->status != 200) return nullptr;
  return nlohmann::json::parse(res->body, nullptr, false);
}

Ts E2eFixture::WaitCheckpoint(const std::string& api, const std::string& id, Ts ts,
                              std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  nlohmann::json last;
  while (std::chrono::steady_clock::now() < deadline) {
    last = FeedStatus(api, id);
    if (last.is_object() && last.value("checkpoint_ts", uint64_t{0}) >= ts.value()) {
      return Ts(last["checkpoint_ts"].get<uint64_t>());
    }
    std::this_thread::sleep_for(100ms);  // Polling the API.
  }
  ADD_FAILURE() << id << " did not reach " << ts.value() << "; last status " << last.dump();
  return Ts();
}

void E2eFixture::PrepareMysql(Ts ts) {
  pd::PdClientOptions options;
  options.endpoints = {pd_};
  auto pd = pd::PdClient::Connect(options);
  ASSERT_TRUE(pd.ok()) << pd.status().ToString();
  pd::RegionCache cache(pd->get());
  kvclient::SnapshotReader reader(pd->get(), &cache, kvclient::SnapshotReaderOptions{});
  kvclient::KvMetaReader meta(pd->get(), &reader);
  auto snapshot = meta.Read(ts);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  const std::string db = simkv::QuoteName(database_);
  std::vector<std::string> sql = {"DROP DATABASE IF EXISTS " + db, "CREATE DATABASE " + db,
                                  "USE " + db};
  size_t tables = 0;
  for (const auto& [id, entry] : snapshot->tables) {
    if (snapshot->dbs.at(entry.first).name.original != database_) continue;
    sql.push_back(simkv::CreateTableSql(entry.second));
    table_ids_.push_back(id);
    ++tables;
  }
  EXPECT_GE(tables, 2u);
  ASSERT_TRUE(checker::ExecSql(mysql_, sql).ok());
  reader.Stop();
  (*pd)->Stop();
}

void E2eFixture::StartWorkload() {
  httplib::Client control("http://" + control_);
  auto started = control.Post("/workload/start", "{}", "application/json");
  ASSERT_TRUE(started && started->status == 200);
}

void E2eFixture::StopWorkload() {
  httplib::Client control("http://" + control_);
  control.set_read_timeout(60);  // The ground truth of a whole run, from a sanitizer build.
  auto stopped = control.Post("/workload/stop");
  ASSERT_TRUE(stopped && stopped->status == 200);
  auto truth = control.Get("/ground-truth");
  ASSERT_TRUE(truth && truth->status == 200);
  std::ofstream(dir_ + "/truth") << truth->body;
}

void E2eFixture::Check(const std::vector<std::string>& target, Ts ts) {
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

}  // namespace sluice::testing
