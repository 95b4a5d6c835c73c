// Tests of `sluice cli`: the exact requests each command sends to a fake
// API v2 server, what it prints, and how it fails.
#include "cli/cli.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/tso.h"
#include "simkv/sim_cluster.h"

namespace sluice::cli {
namespace {

using nlohmann::json;

struct Request {
  std::string method;
  std::string target;  // path and query, "/api/v2/changefeeds?namespace=default"
  std::string body;
};

// A tiny API v2 server on loopback that records every request and answers
// with canned bodies keyed by "METHOD target" (404 for anything else).
class FakeServer {
 public:
  FakeServer() {
    auto handler = [this](const httplib::Request& req, httplib::Response& res) {
      Handle(req, res);
    };
    server_.Get(".*", handler);
    server_.Post(".*", handler);
    server_.Put(".*", handler);
    server_.Delete(".*", handler);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!server_.is_running() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
  }
  ~FakeServer() { Stop(); }

  void Stop() {
    if (!thread_.joinable()) return;
    server_.stop();
    thread_.join();
  }

  bool running() { return server_.is_running(); }
  std::string address() const { return "http://127.0.0.1:" + std::to_string(port_); }

  void Reply(const std::string& method, const std::string& target, int status, std::string body) {
    std::lock_guard<std::mutex> lock(mu_);
    replies_[method + " " + target] = {status, std::move(body)};
  }

  std::vector<Request> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  void Handle(const httplib::Request& req, httplib::Response& res) {
    std::string target = req.path;
    char sep = '?';
    for (const auto& [key, value] : req.params) {
      target += sep + key + "=" + value;
      sep = '&';
    }
    std::lock_guard<std::mutex> lock(mu_);
    requests_.push_back({req.method, target, req.body});
    auto it = replies_.find(req.method + " " + target);
    if (it == replies_.end()) {
      res.status = 404;
      res.set_content(R"({"error_msg":"no route","error_code":"CDC:ErrTest"})", "application/json");
      return;
    }
    res.status = it->second.first;
    res.set_content(it->second.second, "application/json");
  }

  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::map<std::string, std::pair<int, std::string>> replies_;
  std::vector<Request> requests_;
};

constexpr char kInfo[] =
    R"({"upstream_id":7,"id":"cf-1","namespace":"default","sink_uri":"blackhole://",)"
    R"("create_time":"2024-05-01T12:00:00.123Z","start_ts":100,"target_ts":0,)"
    R"("config":{"memory_quota":1073741824},"state":"normal","creator_version":"v0.1.0",)"
    R"("resolved_ts":120,"checkpoint_ts":110,"checkpoint_time":"2024-05-01 12:00:01.000"})";

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.running());
    dir_ = std::filesystem::temp_directory_path() /
           ("cli_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Runs `sluice cli <args> --server <fake>`.
  int Run(std::vector<std::string> args) {
    args.push_back("--server");
    args.push_back(server_.address());
    return RunRaw(args);
  }
  int RunRaw(const std::vector<std::string>& args) {
    out_.str("");
    err_.str("");
    return RunCli(args, out_, err_);
  }

  std::string WriteFile(const std::string& name, const std::string& text) {
    std::filesystem::path path = dir_ / name;
    std::ofstream(path) << text;
    return path.string();
  }

  FakeServer server_;
  std::filesystem::path dir_;
  std::ostringstream out_;
  std::ostringstream err_;
};

TEST_F(CliTest, CreateSendsChangefeedConfigWithReplicaConfigFromToml) {
  server_.Reply("POST", "/api/v2/changefeeds", 200, kInfo);
  std::string config = WriteFile("cf.toml",
                                 "force-replicate = true\n"
                                 "[filter]\n"
                                 "rules = [\"test.*\"]\n"
                                 "[sink]\n"
                                 "protocol = \"canal-json\"\n"
                                 "date-separator = \"none\"\n");
  int code = Run({"changefeed", "create", "--sink-uri", "file:///tmp/out", "-c", "cf-1",
                  "--start-ts", "100", "--target-ts", "200", "--config", config});
  ASSERT_EQ(code, 0) << err_.str();
  std::vector<Request> requests = server_.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].target, "/api/v2/changefeeds");
  json body = json::parse(requests[0].body);
  EXPECT_EQ(body["namespace"], "default");
  EXPECT_EQ(body["changefeed_id"], "cf-1");
  EXPECT_EQ(body["start_ts"], 100);
  EXPECT_EQ(body["target_ts"], 200);
  EXPECT_EQ(body["sink_uri"], "file:///tmp/out");
  const json& rc = body["replica_config"];
  EXPECT_EQ(rc["force_replicate"], true);
  EXPECT_EQ(rc["filter"]["rules"], json::array({"test.*"}));
  EXPECT_EQ(rc["sink"]["protocol"], "canal-json");
  EXPECT_EQ(rc["sink"]["date_separator"], "none");
  EXPECT_EQ(rc["ignore_ineligible_table"], false);
  EXPECT_EQ(out_.str(),
            "Create changefeed successfully!\nID: cf-1\nInfo: " + std::string(kInfo) + "\n");
  EXPECT_EQ(err_.str(), "");
}

TEST_F(CliTest, CreateWithoutConfigSendsDefaultsAndNoConfirm) {
  server_.Reply("POST", "/api/v2/changefeeds", 200, kInfo);
  ASSERT_EQ(
      Run({"changefeed", "create", "--sink-uri", "blackhole://", "--no-confirm", "-n", "ns1"}), 0)
      << err_.str();
  ASSERT_EQ(server_.requests().size(), 1u);
  json body = json::parse(server_.requests()[0].body);
  EXPECT_EQ(body["namespace"], "ns1");
  EXPECT_EQ(body["changefeed_id"], "");
  EXPECT_EQ(body["start_ts"], 0);
  EXPECT_EQ(body["replica_config"]["ignore_ineligible_table"], true);
  EXPECT_EQ(body["replica_config"]["memory_quota"], 1073741824);
}

TEST_F(CliTest, CreateRefusesBadSinkUriBeforeAnyRequest) {
  EXPECT_EQ(Run({"changefeed", "create", "--sink-uri", "mysql://root@127.0.0.1:notaport/"}), 1);
  EXPECT_TRUE(server_.requests().empty());
  EXPECT_NE(err_.str().find("Error: invalid sink URI"), std::string::npos) << err_.str();
  EXPECT_EQ(out_.str(), "");

  // A file sink without a protocol fails TiCDC's sink checks.
  EXPECT_EQ(Run({"changefeed", "create", "--sink-uri", "file:///tmp/out"}), 1);
  EXPECT_TRUE(server_.requests().empty());
  EXPECT_NE(err_.str().find("protocol"), std::string::npos) << err_.str();

  EXPECT_EQ(Run({"changefeed", "create"}), 1);
  EXPECT_TRUE(server_.requests().empty());
  EXPECT_NE(err_.str().find("--sink-uri"), std::string::npos) << err_.str();
}

TEST_F(CliTest, CreateRefusesBadTomlNamingFileKeyAndLine) {
  std::string config = WriteFile("bad.toml",
                                 "force-replicate = true\n"
                                 "[sink]\n"
                                 "protocl = \"canal-json\"\n");
  EXPECT_EQ(Run({"changefeed", "create", "--sink-uri", "blackhole://", "--config", config}), 1);
  EXPECT_TRUE(server_.requests().empty());
  EXPECT_NE(err_.str().find(config), std::string::npos) << err_.str();
  EXPECT_NE(err_.str().find("unknown key \"sink.protocl\" at line 3"), std::string::npos)
      << err_.str();

  std::string syntax = WriteFile("syntax.toml", "[sink\n");
  EXPECT_EQ(Run({"changefeed", "create", "--sink-uri", "blackhole://", "--config", syntax}), 1);
  EXPECT_TRUE(server_.requests().empty());
  EXPECT_NE(err_.str().find("line 1"), std::string::npos) << err_.str();

  EXPECT_EQ(Run({"changefeed", "create", "--sink-uri", "blackhole://", "--config",
                 (dir_ / "missing.toml").string()}),
            1);
  EXPECT_NE(err_.str().find("cannot read config file"), std::string::npos) << err_.str();
  EXPECT_TRUE(server_.requests().empty());
}

TEST_F(CliTest, ServerErrorBodyIsPrinted) {
  server_.Reply(
      "POST", "/api/v2/changefeeds", 400,
      R"({"error_msg":"changefeed already exists","error_code":"CDC:ErrChangeFeedAlreadyExists"})");
  EXPECT_EQ(Run({"changefeed", "create", "--sink-uri", "blackhole://", "-c", "cf-1"}), 1);
  EXPECT_EQ(err_.str(), "Error: [CDC:ErrChangeFeedAlreadyExists]changefeed already exists\n");
  EXPECT_EQ(out_.str(), "");

  // A message that already carries its code is not prefixed twice.
  server_.Reply(
      "POST", "/api/v2/changefeeds/cf-1/pause?namespace=default", 400,
      R"({"error_msg":"[CDC:ErrChangeFeedNotExists]changefeed not exists","error_code":"CDC:ErrChangeFeedNotExists"})");
  EXPECT_EQ(Run({"changefeed", "pause", "-c", "cf-1"}), 1);
  EXPECT_EQ(err_.str(), "Error: [CDC:ErrChangeFeedNotExists]changefeed not exists\n");
}

TEST_F(CliTest, UnreachableServerNamesItsAddress) {
  FakeServer gone;
  std::string address = gone.address();
  gone.Stop();
  EXPECT_EQ(RunRaw({"changefeed", "list", "--server", address}), 1);
  EXPECT_NE(err_.str().find("Error: failed to reach the server at " + address), std::string::npos)
      << err_.str();
}

TEST_F(CliTest, FlagErrors) {
  EXPECT_EQ(Run({"changefeed", "list", "--bogus"}), 1);
  EXPECT_NE(err_.str().find("Error: "), std::string::npos);
  EXPECT_NE(err_.str().find("--bogus"), std::string::npos) << err_.str();

  EXPECT_EQ(Run({"changefeed", "query"}), 1);
  EXPECT_NE(err_.str().find("--changefeed-id is required"), std::string::npos) << err_.str();
  EXPECT_EQ(Run({"changefeed", "pause"}), 1);
  EXPECT_NE(err_.str().find("--changefeed-id"), std::string::npos) << err_.str();

  EXPECT_EQ(Run({"changefeed", "create", "--sink-uri", "blackhole://", "--start-ts", "abc"}), 1);
  EXPECT_NE(err_.str().find("--start-ts"), std::string::npos) << err_.str();
  EXPECT_EQ(Run({"changefeed", "create", "--sink-uri", "blackhole://", "--target-ts", "-5"}), 1);
  EXPECT_NE(err_.str().find("--target-ts"), std::string::npos) << err_.str();
  EXPECT_EQ(Run({"changefeed", "create", "--sink-uri", "blackhole://", "--start-ts",
                 "99999999999999999999"}),
            1);
  EXPECT_NE(err_.str().find("--start-ts"), std::string::npos) << err_.str();

  EXPECT_EQ(Run({"changefeed"}), 1);
  EXPECT_EQ(Run({"nonsense"}), 1);
  EXPECT_EQ(Run({"changefeed", "query", "-c", "bad/id"}), 1);
  EXPECT_NE(err_.str().find("[CDC:ErrInvalidChangefeedID]"), std::string::npos) << err_.str();
  EXPECT_EQ(Run({"changefeed", "resume", "-c", "cf-1", "--overwrite-checkpoint-ts", "x"}), 1);
  EXPECT_NE(err_.str().find("[CDC:ErrCliInvalidCheckpointTs]"), std::string::npos) << err_.str();
  EXPECT_TRUE(server_.requests().empty());

  EXPECT_EQ(RunRaw({"--help"}), 0);
  EXPECT_NE(out_.str().find("changefeed"), std::string::npos);
}

TEST_F(CliTest, ListPrintsSummariesWithoutFinishedUnlessAll) {
  server_.Reply("GET", "/api/v2/changefeeds?namespace=default&state=all", 200,
                R"({"total":2,"items":[
                  {"upstream_id":7,"namespace":"default","id":"a","state":"normal",
                   "checkpoint_tso":449,"checkpoint_time":"2024-05-01 12:00:01.000",
                   "error":{"time":"t","addr":"x","code":"c","message":"m"}},
                  {"upstream_id":7,"namespace":"default","id":"b","state":"finished",
                   "checkpoint_tso":450,"checkpoint_time":"2024-05-01 12:00:02.000",
                   "error":null}]})");
  ASSERT_EQ(Run({"changefeed", "list"}), 0) << err_.str();
  EXPECT_EQ(out_.str(),
            "[\n"
            "  {\n"
            "    \"id\": \"a\",\n"
            "    \"namespace\": \"default\",\n"
            "    \"summary\": {\n"
            "      \"state\": \"normal\",\n"
            "      \"tso\": 449,\n"
            "      \"checkpoint\": \"2024-05-01 12:00:01.000\",\n"
            "      \"error\": null\n"
            "    }\n"
            "  }\n"
            "]\n");
  ASSERT_EQ(Run({"changefeed", "list", "--all"}), 0) << err_.str();
  json all = json::parse(out_.str());
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1]["id"], "b");
  EXPECT_EQ(all[1]["summary"]["state"], "finished");
  std::vector<Request> requests = server_.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[1].method, "GET");
  EXPECT_EQ(requests[1].target, "/api/v2/changefeeds?namespace=default&state=all");
}

TEST_F(CliTest, QueryPrintsDetailAndSimpleStatus) {
  server_.Reply("GET", "/api/v2/changefeeds/cf-1?namespace=default", 200, kInfo);
  server_.Reply("GET", "/api/v2/changefeeds/cf-1/status?namespace=default", 200,
                R"({"state":"normal","resolved_ts":120,"checkpoint_ts":110})");
  ASSERT_EQ(Run({"changefeed", "query", "-c", "cf-1"}), 0) << err_.str();
  json detail = json::parse(out_.str());
  EXPECT_EQ(detail["id"], "cf-1");
  EXPECT_EQ(detail["upstream_id"], 7);
  EXPECT_EQ(detail["checkpoint_tso"], 110);
  EXPECT_EQ(detail["resolved_ts"], 120);
  EXPECT_EQ(detail["config"]["memory_quota"], 1073741824);
  EXPECT_FALSE(detail.contains("error"));
  EXPECT_EQ(detail["create_time"].get<std::string>().size(), 23u);  // "2024-05-01 hh:mm:ss.123"

  ASSERT_EQ(Run({"changefeed", "query", "-s", "-c", "cf-1"}), 0) << err_.str();
  EXPECT_EQ(out_.str(),
            "{\n  \"state\": \"normal\",\n  \"resolved_ts\": 120,\n  \"checkpoint_ts\": 110\n}\n");
  std::vector<Request> requests = server_.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[1].target, "/api/v2/changefeeds/cf-1/status?namespace=default");
}

TEST_F(CliTest, PauseResumeRemove) {
  server_.Reply("POST", "/api/v2/changefeeds/cf-1/pause?namespace=default", 200, "{}");
  server_.Reply("GET", "/api/v2/changefeeds/cf-1?namespace=default", 200, kInfo);
  server_.Reply("POST", "/api/v2/changefeeds/cf-1/resume?namespace=default", 200, "{}");
  server_.Reply("POST", "/api/v2/tso", 200, R"({"timestamp":1000,"logic_time":3})");
  server_.Reply("DELETE", "/api/v2/changefeeds/cf-1?namespace=default", 200, "{}");

  ASSERT_EQ(Run({"changefeed", "pause", "-c", "cf-1"}), 0) << err_.str();
  ASSERT_EQ(Run({"changefeed", "resume", "-c", "cf-1"}), 0) << err_.str();
  ASSERT_EQ(Run({"changefeed", "resume", "-c", "cf-1", "--overwrite-checkpoint-ts", "now"}), 0)
      << err_.str();
  EXPECT_EQ(Run({"changefeed", "resume", "-c", "cf-1", "--overwrite-checkpoint-ts",
                 std::to_string((uint64_t{1000} << 18) + 4)}),
            1);
  EXPECT_NE(err_.str().find("[CDC:ErrCliCheckpointTsIsInFuture]"), std::string::npos) << err_.str();
  ASSERT_EQ(Run({"changefeed", "remove", "-c", "cf-1"}), 0) << err_.str();
  EXPECT_EQ(
      out_.str(),
      "Changefeed remove successfully.\nID: cf-1\nCheckpointTs: 110\nSinkURI: blackhole://\n");

  std::vector<Request> r = server_.requests();
  ASSERT_EQ(r.size(), 10u);
  EXPECT_EQ(r[0].method + " " + r[0].target,
            "POST /api/v2/changefeeds/cf-1/pause?namespace=default");
  EXPECT_EQ(r[1].method + " " + r[1].target, "GET /api/v2/changefeeds/cf-1?namespace=default");
  EXPECT_EQ(r[2].method + " " + r[2].target,
            "POST /api/v2/changefeeds/cf-1/resume?namespace=default");
  EXPECT_EQ(json::parse(r[2].body)["overwrite_checkpoint_ts"], 0);
  EXPECT_EQ(r[4].method + " " + r[4].target, "POST /api/v2/tso");
  EXPECT_EQ(json::parse(r[4].body)["id"], 7);
  EXPECT_EQ(json::parse(r[5].body)["overwrite_checkpoint_ts"], (uint64_t{1000} << 18) | 3);
  EXPECT_EQ(r[7].target, "/api/v2/tso");  // the refused overwrite sent no resume
  EXPECT_EQ(r[8].method + " " + r[8].target, "GET /api/v2/changefeeds/cf-1?namespace=default");
  EXPECT_EQ(r[9].method + " " + r[9].target, "DELETE /api/v2/changefeeds/cf-1?namespace=default");
}

TEST_F(CliTest, RemoveOfMissingChangefeedSaysNotFound) {
  server_.Reply(
      "GET", "/api/v2/changefeeds/cf-2?namespace=default", 400,
      R"({"error_msg":"changefeed not exists","error_code":"CDC:ErrChangeFeedNotExists"})");
  ASSERT_EQ(Run({"changefeed", "remove", "-c", "cf-2"}), 0) << err_.str();
  EXPECT_EQ(out_.str(), "Changefeed not found.\nID: cf-2\n");
  EXPECT_EQ(server_.requests().size(), 1u);
}

TEST_F(CliTest, UpdatePutsChangedFields) {
  server_.Reply("GET", "/api/v2/changefeeds/cf-1?namespace=default", 200, kInfo);
  server_.Reply("PUT", "/api/v2/changefeeds/cf-1?namespace=default", 200, kInfo);
  ASSERT_EQ(Run({"changefeed", "update", "-c", "cf-1"}), 0) << err_.str();
  EXPECT_EQ(out_.str(), "changefeed config is the same with the old one, do nothing\n");

  std::string config = WriteFile("u.toml", "[mounter]\nworker-num = 4\n");
  ASSERT_EQ(Run({"changefeed", "update", "-c", "cf-1", "--target-ts", "900", "--config", config}),
            0)
      << err_.str();
  EXPECT_EQ(out_.str().rfind("Update changefeed config successfully! \nID: cf-1\nInfo: ", 0), 0u)
      << out_.str();
  std::vector<Request> r = server_.requests();
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[2].method + " " + r[2].target, "PUT /api/v2/changefeeds/cf-1?namespace=default");
  json body = json::parse(r[2].body);
  EXPECT_EQ(body["target_ts"], 900);
  EXPECT_EQ(body["sink_uri"], "");
  EXPECT_EQ(body["replica_config"]["mounter"]["worker_num"], 4);

  // A bad TOML is refused before the GET.
  std::string bad = WriteFile("bad.toml", "[mounter]\nworker-num = \"four\"\n");
  EXPECT_EQ(Run({"changefeed", "update", "-c", "cf-1", "--config", bad}), 1);
  EXPECT_NE(err_.str().find("mounter.worker-num"), std::string::npos) << err_.str();
  EXPECT_EQ(server_.requests().size(), 3u);
}

TEST_F(CliTest, CaptureListPrintsTiCdcShape) {
  server_.Reply("GET", "/api/v2/captures", 200,
                R"({"total":1,"items":[{"id":"n1","is_owner":true,"address":"127.0.0.1:8300",)"
                R"("cluster_id":"default"}]})");
  ASSERT_EQ(Run({"capture", "list"}), 0) << err_.str();
  EXPECT_EQ(out_.str(),
            "[\n  {\n    \"id\": \"n1\",\n    \"is-owner\": true,\n    \"address\": "
            "\"127.0.0.1:8300\",\n    \"cluster-id\": \"default\"\n  }\n]\n");
}

TEST_F(CliTest, MalformedResponseIsAnError) {
  server_.Reply("GET", "/api/v2/captures", 200, "not json");
  EXPECT_EQ(Run({"capture", "list"}), 1);
  EXPECT_NE(err_.str().find("Error: unexpected response"), std::string::npos) << err_.str();
  server_.Reply("GET", "/api/v2/captures", 200, R"({"items":[{"id":5}]})");
  EXPECT_EQ(Run({"capture", "list"}), 1);
  EXPECT_NE(err_.str().find("\"id\""), std::string::npos) << err_.str();
}

TEST(CliTsoTest, QueryPrintsTsoFromPd) {
  simkv::SimClusterOptions options;
  options.num_stores = 1;
  options.replicas = 1;
  options.resolved_ts_interval = std::chrono::milliseconds(0);
  Result<std::unique_ptr<simkv::SimCluster>> cluster = simkv::SimCluster::Start(options);
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  std::ostringstream out, err;
  ASSERT_EQ(RunCli({"tso", "query", "--pd", (*cluster)->pd_address()}, out, err), 0) << err.str();
  uint64_t ts = std::stoull(out.str());
  EXPECT_EQ(out.str(), std::to_string(ts) + "\n");
  int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  EXPECT_LT(std::abs(tso::Physical(Ts(ts)) - now_ms), 60'000);
}

TEST(CliTsoTest, QueryFailsOnUnreachablePdAndBadFlags) {
  FakeServer gone;
  std::string address = gone.address().substr(std::string("http://").size());
  gone.Stop();
  std::ostringstream out, err;
  EXPECT_EQ(RunCli({"tso", "query", "--pd", address}, out, err), 1);
  EXPECT_NE(err.str().find("Error: failed to reach PD at " + address), std::string::npos)
      << err.str();
  err.str("");
  EXPECT_EQ(RunCli({"tso", "query", "--pd", ""}, out, err), 1);
  EXPECT_NE(err.str().find("--pd"), std::string::npos) << err.str();
  err.str("");
  EXPECT_EQ(RunCli({"tso", "query", "--bogus"}, out, err), 1);
  EXPECT_NE(err.str().find("--bogus"), std::string::npos) << err.str();
  EXPECT_EQ(out.str(), "");
}

}  // namespace
}  // namespace sluice::cli
