// ApiServer end to end: a real server on 127.0.0.1:0 over a real
// Coordinator (embedded metastore, fake maintainers/nodes/TSO/GC), driven
// with httplib::Client. Every rejected request also checks that the
// metastore did not change.
#include <gtest/gtest.h>
#include <httplib.h>

#include <random>
#include <regex>
#include <string>

#include "api/api_json.h"
#include "api/api_server.h"
#include "common/test_util.h"
#include "common/tso.h"
#include "coordinator/coordinator_test_util.h"

namespace sluice::api {
namespace {

using coordinator::CoordinatorTest;
using meta::FeedState;

class FakeCluster final : public ClusterInfo {
 public:
  std::vector<meta::CaptureInfo> Captures() override {
    MutexLock lock(&mu_);
    return captures_;
  }
  std::optional<NodeId> Owner() override {
    MutexLock lock(&mu_);
    return owner_;
  }
  std::string ClusterId() override { return "default"; }
  Liveness SelfLiveness() override {
    MutexLock lock(&mu_);
    return liveness_;
  }
  void SetLiveness(Liveness l) {
    MutexLock lock(&mu_);
    liveness_ = l;
  }
  std::optional<std::string> OwnerAddress() override {
    MutexLock lock(&mu_);
    return owner_address_;
  }
  Status ResignOwner() override {
    ++resigns;
    return Status::Ok();
  }
  std::atomic<int> resigns{0};
  void SetOwnerAddress(std::optional<std::string> address) {
    MutexLock lock(&mu_);
    owner_address_ = std::move(address);
  }

 private:
  Mutex mu_;
  std::vector<meta::CaptureInfo> captures_ GUARDED_BY(mu_) = {
      {NodeId("node-a"), "10.0.0.1:8300", "v8.5.0", "abc", "/opt", 1, ""},
      {NodeId("node-b"), "10.0.0.2:8300", "v8.5.0", "abc", "/opt", 2, ""}};
  std::optional<NodeId> owner_ GUARDED_BY(mu_) = NodeId("node-a");
  Liveness liveness_ GUARDED_BY(mu_) = Liveness::kAlive;
  std::optional<std::string> owner_address_ GUARDED_BY(mu_);
};

// PD's TSO for the API's workers: thread-safe, fails on command. (The
// fixture's FakeTso is for the coordinator, which calls it under its lock.)
class LockedTso final : public coordinator::TsoSource {
 public:
  Result<Ts> GetTs() override {
    MutexLock lock(&mu_);
    ++calls_;
    if (fail_) return Unavailable("pd is down");
    return next_;
  }
  void Set(Ts next, bool fail) {
    MutexLock lock(&mu_);
    next_ = next;
    fail_ = fail;
  }
  int calls() {
    MutexLock lock(&mu_);
    return calls_;
  }

 private:
  Mutex mu_;
  Ts next_ GUARDED_BY(mu_) = tso::Compose(1714564800000, 5);
  bool fail_ GUARDED_BY(mu_) = false;
  int calls_ GUARDED_BY(mu_) = 0;
};

struct Resp {
  int status = 0;
  Json body;
  std::string raw;
  std::string content_type;
};

class ApiTest : public CoordinatorTest {
 protected:
  void SetUp() override {
    CoordinatorTest::SetUp();
    registry_.AddCounter("sluice_api_test_marker_total", "A metric the test looks for.")->Inc();
    Result<std::unique_ptr<ApiServer>> server = ApiServer::Start(ServerOptions());
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  }
  void TearDown() override {
    client_.reset();
    if (server_) server_->Stop();
    server_.reset();
    CoordinatorTest::TearDown();
  }

  ApiOptions ServerOptions() {
    ApiOptions o;
    o.host = "127.0.0.1";
    o.port = 0;
    o.coordinator = coord_.get();
    o.cluster = &cluster_;
    o.tso = &pd_tso_;
    o.self = {NodeId("node-a"), "10.0.0.1:8300", "v8.5.0-sluice", "deadbeef", 4242};
    o.metrics = &registry_;
    o.upstream_id = 7;
    o.max_body_bytes = 64 * 1024;
    return o;
  }

  // The coordinator's lock orders the test thread's accesses to the fakes
  // before and after the server's workers' (they run under that lock).
  void Sync() { (void)coord_->Stats(); }

  Resp Call(const std::string& method, const std::string& path, const std::string& body = "") {
    Sync();
    httplib::Result r = method == "GET"    ? client_->Get(path)
                        : method == "POST" ? client_->Post(path, body, "application/json")
                        : method == "PUT"  ? client_->Put(path, body, "application/json")
                                           : client_->Delete(path);
    Sync();
    Resp out;
    if (!r) {
      ADD_FAILURE() << method << " " << path << ": no response";
      return out;
    }
    out.status = r->status;
    out.raw = r->body;
    out.content_type = r->get_header_value("Content-Type");
    out.body = Json::parse(r->body, nullptr, /*allow_exceptions=*/false);
    return out;
  }

  static void ExpectError(const Resp& r, int status, std::string_view code) {
    EXPECT_EQ(r.status, status) << r.raw;
    ASSERT_TRUE(r.body.is_object()) << r.raw;
    EXPECT_EQ(r.body.value("error_code", ""), code) << r.raw;
    EXPECT_EQ(r.body.value("error_msg", "").rfind("[" + std::string(code) + "]", 0), 0u) << r.raw;
  }

  // Every changefeed key of the store with its revision, plus the store
  // revision: equal snapshots mean nothing was written.
  std::string Snapshot() {
    Sync();
    Result<meta::ChangefeedList> list = meta_->ListChangefeeds();
    EXPECT_TRUE(list.ok());
    if (!list.ok()) return "";
    std::string out = "rev=" + std::to_string(list->revision) + "\n";
    for (const auto& v : list->feeds) {
      out += meta::EncodeChangefeedInfo(v.value) + "@" + std::to_string(v.mod_revision) + "\n";
      Result<meta::Versioned<meta::ChangefeedStatus>> st = meta_->GetChangefeedStatus(v.value.id);
      if (st.ok()) {
        out += meta::EncodeChangefeedStatus(st->value) + "@" + std::to_string(st->mod_revision);
      }
      out += "\n";
    }
    return out;
  }

  static std::string CreateBody(const std::string& id, uint64_t start_ts = 2000,
                                const std::string& sink = "blackhole://") {
    return Dump(Json{{"changefeed_id", id}, {"start_ts", start_ts}, {"sink_uri", sink}});
  }

  void CreateOk(const std::string& id) {
    Resp r = Call("POST", "/api/v2/changefeeds", CreateBody(id));
    ASSERT_EQ(r.status, 200) << r.raw;
  }

  void PauseOk(const std::string& id) {
    Resp r = Call("POST", "/api/v2/changefeeds/" + id + "/pause");
    ASSERT_EQ(r.status, 200) << r.raw;
  }

  Registry registry_;
  FakeCluster cluster_;
  LockedTso pd_tso_;
  std::unique_ptr<ApiServer> server_;
  std::unique_ptr<httplib::Client> client_;
};

// --- server routes -------------------------------------------------------

TEST_F(ApiTest, ServerStatus) {
  for (const char* path : {"/api/v2/status", "/status"}) {
    Resp r = Call("GET", path);
    ASSERT_EQ(r.status, 200) << r.raw;
    EXPECT_EQ(r.body["version"], "v8.5.0-sluice");
    EXPECT_EQ(r.body["git_hash"], "deadbeef");
    EXPECT_EQ(r.body["id"], "node-a");
    EXPECT_EQ(r.body["cluster_id"], "default");
    EXPECT_EQ(r.body["pid"], 4242);
    EXPECT_EQ(r.body["is_owner"], true);
    EXPECT_EQ(r.body["liveness"], 0);
  }
}

TEST_F(ApiTest, HealthFollowsLiveness) {
  Resp ok = Call("GET", "/api/v2/health");
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(ok.body, Json::object());
  cluster_.SetLiveness(Liveness::kStopping);
  ExpectError(Call("GET", "/api/v2/health"), 500, kErrClusterIsUnhealthy);
  EXPECT_EQ(Call("GET", "/api/v2/status").body["liveness"], 2);
}

TEST_F(ApiTest, Captures) {
  Resp r = Call("GET", "/api/v2/captures");
  ASSERT_EQ(r.status, 200) << r.raw;
  EXPECT_EQ(r.body["total"], 2);
  ASSERT_EQ(r.body["items"].size(), 2u);
  EXPECT_EQ(r.body["items"][0], (Json{{"id", "node-a"},
                                      {"is_owner", true},
                                      {"address", "10.0.0.1:8300"},
                                      {"cluster_id", "default"}}));
  EXPECT_EQ(r.body["items"][1]["is_owner"], false);
}

TEST_F(ApiTest, MetricsExposeTheRegistry) {
  constexpr char kStatusOk[] = R"(sluice_api_requests_total{method="GET",status="200"} 1)";
  Call("GET", "/api/v2/status");
  // A request is counted once its response is written, which the client
  // may see first: wait for the count before asking for the exposition.
  ASSERT_TRUE(PollUntil([&] { return registry_.Expose().find(kStatusOk) != std::string::npos; }))
      << registry_.Expose();
  Resp r = Call("GET", "/metrics");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, kPrometheusTextContentType);
  EXPECT_NE(r.raw.find("sluice_api_test_marker_total 1"), std::string::npos) << r.raw;
  EXPECT_NE(r.raw.find(kStatusOk), std::string::npos) << r.raw;
}

TEST_F(ApiTest, UnknownRouteIsJson404) {
  ExpectError(Call("GET", "/api/v2/nothing"), 404, kErrApiInvalidParam);
}

// --- changefeed happy paths ----------------------------------------------

TEST_F(ApiTest, CreateReturnsChangefeedInfoAndPersists) {
  Json body = {{"changefeed_id", "cf-1"},
               {"start_ts", 2000},
               {"target_ts", 900000},
               {"sink_uri", "file:///data/out?protocol=canal-json"},
               {"replica_config", {{"filter", {{"rules", {"test.*"}}}}}},
               {"unknown_field", 1}};
  Resp r = Call("POST", "/api/v2/changefeeds", Dump(body));
  ASSERT_EQ(r.status, 200) << r.raw;
  EXPECT_EQ(r.body["id"], "cf-1");
  EXPECT_EQ(r.body["namespace"], "default");
  EXPECT_EQ(r.body["upstream_id"], 7);
  EXPECT_EQ(r.body["sink_uri"], "file:///data/out?protocol=canal-json");
  EXPECT_EQ(r.body["start_ts"], 2000);
  EXPECT_EQ(r.body["target_ts"], 900000);
  EXPECT_EQ(r.body["checkpoint_ts"], 2000);
  EXPECT_EQ(r.body["resolved_ts"], 2000);
  EXPECT_EQ(r.body["state"], "normal");
  EXPECT_EQ(r.body["creator_version"], "v8.5.0-sluice");
  EXPECT_EQ(r.body["maintainer_addr"], "10.0.0.1:8300");
  EXPECT_FALSE(r.body.contains("error"));
  EXPECT_EQ(r.body["config"]["filter"]["rules"], Json({"test.*"}));
  EXPECT_EQ(r.body["config"]["sink"]["protocol"], "canal-json");  // Adjusted from the URI.
  EXPECT_TRUE(std::regex_match(r.body.value("checkpoint_time", ""),
                               std::regex(R"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3})")))
      << r.body["checkpoint_time"];
  EXPECT_TRUE(r.body["create_time"].is_string());

  meta::ChangefeedInfo stored = StoredInfo("cf-1");
  EXPECT_EQ(stored.sink_uri, "file:///data/out?protocol=canal-json");
  EXPECT_EQ(stored.target_ts, Ts(900000));
  EXPECT_EQ(stored.upstream_id, 7u);
  Result<config::ReplicaConfig> cfg = config::ReplicaConfigFromJson(stored.config_json);
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->filter.rules, std::vector<std::string>{"test.*"});
  EXPECT_EQ(StoredCheckpoint("cf-1"), Ts(2000));

  Resp got = Call("GET", "/api/v2/changefeeds/cf-1");
  ASSERT_EQ(got.status, 200);
  EXPECT_EQ(got.body, r.body);
}

TEST_F(ApiTest, CreateDefaultsIdStartTsAndNamespace) {
  Resp r = Call("POST", "/api/v2/changefeeds?namespace=team-a",
                Dump(Json{{"sink_uri", "blackhole://"}}));
  ASSERT_EQ(r.status, 200) << r.raw;
  const std::string id = r.body.value("id", "");
  EXPECT_TRUE(
      std::regex_match(id, std::regex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-"
                                      "[0-9a-f]{12}")))
      << id;
  EXPECT_EQ(r.body["namespace"], "team-a");
  EXPECT_GE(r.body.value("start_ts", 0ULL), 1000000ULL);  // The TSO.
  ExpectError(Call("GET", "/api/v2/changefeeds/" + id), 400, kErrChangefeedNotExists);
  EXPECT_EQ(Call("GET", "/api/v2/changefeeds/" + id + "?namespace=team-a").status, 200);
  EXPECT_EQ(Call("GET", "/api/v2/changefeeds").body["total"], 0);
  EXPECT_EQ(Call("GET", "/api/v2/changefeeds?keyspace=team-a").body["total"], 1);
}

TEST_F(ApiTest, ListWithStateFilter) {
  CreateOk("cf-a");
  CreateOk("cf-b");
  PauseOk("cf-b");
  Resp all = Call("GET", "/api/v2/changefeeds");
  ASSERT_EQ(all.status, 200) << all.raw;
  EXPECT_EQ(all.body["total"], 2);
  const Json& item = all.body["items"][0];
  EXPECT_EQ(item["id"], "cf-a");
  EXPECT_EQ(item["namespace"], "default");
  EXPECT_EQ(item["upstream_id"], 7);
  EXPECT_EQ(item["state"], "normal");
  EXPECT_EQ(item["checkpoint_tso"], 2000);
  EXPECT_TRUE(item["checkpoint_time"].is_string());
  EXPECT_TRUE(item["error"].is_null());

  Resp stopped = Call("GET", "/api/v2/changefeeds?state=stopped");
  ASSERT_EQ(stopped.body["total"], 1);
  EXPECT_EQ(stopped.body["items"][0]["id"], "cf-b");
  EXPECT_EQ(Call("GET", "/api/v2/changefeeds?state=finished").body["total"], 0);
  EXPECT_EQ(Call("GET", "/api/v2/changefeeds?state=all").body["total"], 2);
}

TEST_F(ApiTest, MoveTableGoesToTheMaintainersNodeAndGeneration) {
  CreateOk("cf-1");
  ASSERT_FALSE(maintainers_->adds.empty());
  const coordinator::SentAdd placed = maintainers_->adds.back();
  Resp moved = Call("POST", "/api/v2/changefeeds/cf-1/move_table?tableID=104&targetNodeID=node-b");
  ASSERT_EQ(moved.status, 200) << moved.raw;
  ASSERT_EQ(maintainers_->moves.size(), 1u);
  EXPECT_EQ(maintainers_->moves[0].first, placed.node);
  EXPECT_EQ(maintainers_->moves[0].second.epoch, placed.request.epoch);
  EXPECT_EQ(maintainers_->moves[0].second.table_id, 104);
  EXPECT_EQ(maintainers_->moves[0].second.target, NodeId("node-b"));
  // The maintainer's refusal comes back as an error.
  maintainers_->move_result = InvalidArgument("node node-x is not a live node of changefeed");
  Resp refused =
      Call("POST", "/api/v2/changefeeds/cf-1/move_table?tableID=104&targetNodeID=node-x");
  EXPECT_EQ(refused.status, 400) << refused.raw;
  EXPECT_NE(refused.raw.find("not a live node"), std::string::npos) << refused.raw;
  // A table the changefeed does not replicate: a bad parameter, not a
  // missing changefeed.
  maintainers_->move_result = NotFound("table 999 is not replicated by changefeed default/cf-1");
  Resp unknown =
      Call("POST", "/api/v2/changefeeds/cf-1/move_table?tableID=999&targetNodeID=node-b");
  EXPECT_EQ(unknown.status, 400) << unknown.raw;
  EXPECT_EQ(unknown.body.value("error_code", ""), "CDC:ErrAPIInvalidParam") << unknown.raw;
  // Bad parameters never reach it.
  for (const char* query : {"tableID=abc&targetNodeID=node-b", "tableID=-3&targetNodeID=node-b",
                            "tableID=104", "targetNodeID=node-b", "tableID=1x&targetNodeID=n"}) {
    Resp bad = Call("POST", std::string("/api/v2/changefeeds/cf-1/move_table?") + query);
    EXPECT_EQ(bad.status, 400) << query << " " << bad.raw;
    EXPECT_EQ(bad.body.value("error_code", ""), "CDC:ErrAPIInvalidParam") << bad.raw;
  }
  EXPECT_EQ(maintainers_->moves.size(), 3u);
  Resp missing = Call("POST", "/api/v2/changefeeds/nope/move_table?tableID=1&targetNodeID=node-b");
  EXPECT_EQ(missing.status, 400) << missing.raw;
  EXPECT_EQ(missing.body.value("error_code", ""), "CDC:ErrChangeFeedNotExists") << missing.raw;
}

TEST_F(ApiTest, PauseUpdateResumeDelete) {
  CreateOk("cf-1");
  PauseOk("cf-1");
  EXPECT_EQ(StoredInfo("cf-1").state, FeedState::kStopped);
  EXPECT_EQ(Call("GET", "/api/v2/changefeeds/cf-1/status").body["state"], "stopped");

  Json update = {{"target_ts", 800000},
                 {"sink_uri", "file:///data/new?protocol=csv"},
                 {"replica_config", {{"filter", {{"rules", {"db.*"}}}}}}};
  Resp u = Call("PUT", "/api/v2/changefeeds/cf-1", Dump(update));
  ASSERT_EQ(u.status, 200) << u.raw;
  EXPECT_EQ(u.body["target_ts"], 800000);
  EXPECT_EQ(u.body["sink_uri"], "file:///data/new?protocol=csv");
  EXPECT_EQ(u.body["config"]["filter"]["rules"], Json({"db.*"}));
  meta::ChangefeedInfo stored = StoredInfo("cf-1");
  EXPECT_EQ(stored.target_ts, Ts(800000));
  EXPECT_EQ(stored.sink_uri, "file:///data/new?protocol=csv");
  EXPECT_EQ(config::ReplicaConfigFromJson(stored.config_json)->sink.protocol, "csv");

  Resp resumed = Call("POST", "/api/v2/changefeeds/cf-1/resume",
                      Dump(Json{{"overwrite_checkpoint_ts", 3000}}));
  ASSERT_EQ(resumed.status, 200) << resumed.raw;
  EXPECT_EQ(resumed.body, Json::object());
  EXPECT_EQ(StoredInfo("cf-1").state, FeedState::kNormal);
  EXPECT_EQ(StoredCheckpoint("cf-1"), Ts(3000));

  PauseOk("cf-1");
  Resp plain = Call("POST", "/api/v2/changefeeds/cf-1/resume");  // Empty body.
  ASSERT_EQ(plain.status, 200) << plain.raw;
  EXPECT_EQ(StoredInfo("cf-1").state, FeedState::kNormal);

  Resp del = Call("DELETE", "/api/v2/changefeeds/cf-1");
  ASSERT_EQ(del.status, 200) << del.raw;
  EXPECT_EQ(del.body, Json::object());
  EXPECT_EQ(meta_->GetChangefeedInfo(Id("cf-1")).status().code(), Code::kNotFound);
  Resp again = Call("DELETE", "/api/v2/changefeeds/cf-1");  // Idempotent, as TiCDC.
  EXPECT_EQ(again.status, 200);
  EXPECT_EQ(again.raw, "null");
}

TEST_F(ApiTest, StatusShowsCheckpointAndLastError) {
  CreateOk("cf-1");
  coord_->OnMaintainerStatus(NodeId("node-a"), Working("cf-1", 5000));
  Resp ok = Call("GET", "/api/v2/changefeeds/cf-1/status");
  ASSERT_EQ(ok.status, 200) << ok.raw;
  EXPECT_EQ(ok.body, (Json{{"state", "normal"}, {"resolved_ts", 5000}, {"checkpoint_ts", 5000}}));

  coordinator::MaintainerStatus failed = Working("cf-1", 5000);
  failed.error = Internal("sink exploded");
  coord_->OnMaintainerStatus(NodeId("node-a"), failed);
  Resp r = Call("GET", "/api/v2/changefeeds/cf-1/status");
  EXPECT_EQ(r.body["state"], "failed");
  ASSERT_TRUE(r.body.contains("last_error")) << r.raw;
  EXPECT_NE(r.body["last_error"].value("message", "").find("sink exploded"), std::string::npos);
  Resp info = Call("GET", "/api/v2/changefeeds/cf-1");
  EXPECT_TRUE(info.body.contains("error")) << info.raw;
  EXPECT_FALSE(Call("GET", "/api/v2/changefeeds").body["items"][0]["error"].is_null());
}

// --- tso ------------------------------------------------------------------------

TEST_F(ApiTest, QueryTsoReturnsPhysicalAndLogical) {
  const Ts ts = tso::Compose(1714564800123, 77);
  pd_tso_.Set(ts, /*fail=*/false);
  // The body `cli changefeed resume --overwrite-checkpoint-ts` sends, the
  // default upstream, null and TiCDC's PD fields.
  for (const std::string& body :
       {std::string(R"({"id":7,"ca_path":"","cert_path":"","key_path":""})"), std::string("{}"),
        std::string("null"), std::string(R"({"id":0})"),
        Dump(Json{{"id", 7}, {"pd_addrs", {"10.0.0.9:2379"}}, {"cert_allowed_cn", Json::array()}}),
        std::string(R"({"id":7,"unknown":[1,2]})")}) {
    Resp r = Call("POST", "/api/v2/tso", body);
    ASSERT_EQ(r.status, 200) << body << ": " << r.raw;
    EXPECT_EQ(r.content_type, "application/json");
    EXPECT_EQ(r.body, Json({{"timestamp", 1714564800123}, {"logic_time", 77}})) << r.raw;
    // The CLI composes the TSO back from the two fields.
    const uint64_t composed = (r.body["timestamp"].get<uint64_t>() << tso::kLogicalBits) |
                              r.body["logic_time"].get<uint64_t>();
    EXPECT_EQ(composed, ts.value());
  }
  EXPECT_EQ(Call("POST", "/api/v2/tso/", "{}").status, 200);
  EXPECT_EQ(pd_tso_.calls(), 7);
}

TEST_F(ApiTest, QueryTsoRejectsMalformedBodyWithoutAskingPd) {
  for (const std::string& body : {
           std::string(""),
           std::string("{"),
           std::string("not json"),
           std::string("[1]"),
           std::string("42"),
           Dump(Json{{"id", "7"}}),
           Dump(Json{{"id", -7}}),
           Dump(Json{{"id", 7.5}}),
           Dump(Json{{"pd_addrs", "10.0.0.9:2379"}}),
           Dump(Json{{"pd_addrs", {1, 2}}}),
           Dump(Json{{"ca_path", 3}}),
           // Without an id, pd_addrs names another cluster's PD.
           Dump(Json{{"pd_addrs", {"10.0.0.9:2379"}}}),
       }) {
    ExpectError(Call("POST", "/api/v2/tso", body), 400, kErrApiInvalidParam);
  }
  ExpectError(Call("POST", "/api/v2/tso", R"({"id":8})"), 500, kErrUpstreamNotFound);
  EXPECT_EQ(pd_tso_.calls(), 0);
}

TEST_F(ApiTest, QueryTsoPdFailureIsInternalError) {
  pd_tso_.Set(Ts(1), /*fail=*/true);
  Resp r = Call("POST", "/api/v2/tso", R"({"id":7})");
  ExpectError(r, 500, kErrInternalServerError);
  EXPECT_NE(r.body.value("error_msg", "").find("pd is down"), std::string::npos) << r.raw;
  EXPECT_EQ(pd_tso_.calls(), 1);

  pd_tso_.Set(tso::Compose(5, 1), /*fail=*/false);
  EXPECT_EQ(Call("POST", "/api/v2/tso", R"({"id":7})").status, 200);
}

TEST_F(ApiTest, QueryTsoWithoutTsoSourceIsUnavailable) {
  ApiOptions options = ServerOptions();
  options.tso = nullptr;
  Result<std::unique_ptr<ApiServer>> other = ApiServer::Start(options);
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  httplib::Client client("127.0.0.1", (*other)->port());
  httplib::Result r = client.Post("/api/v2/tso", R"({"id":7})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  Json body = Json::parse(r->body, nullptr, /*allow_exceptions=*/false);
  EXPECT_EQ(body.value("error_code", ""), kErrInternalServerError) << r->body;
  (*other)->Stop();
}

// --- rejected requests leave the metastore as it was --------------------------

TEST_F(ApiTest, MalformedJsonIsInvalidParam) {
  CreateOk("cf-1");
  const std::string before = Snapshot();
  for (const std::string& body :
       {std::string("{"), std::string("not json"), std::string(""), std::string("[1,2]"),
        std::string("\"text\""), std::string("{\"changefeed_id\": \"x\",}"),
        std::string("{\"sink_uri\": \"\xff\xfe\"")}) {
    ExpectError(Call("POST", "/api/v2/changefeeds", body), 400, kErrApiInvalidParam);
  }
  PauseOk("cf-1");
  const std::string paused = Snapshot();
  ExpectError(Call("PUT", "/api/v2/changefeeds/cf-1", "{oops"), 400, kErrApiInvalidParam);
  ExpectError(Call("POST", "/api/v2/changefeeds/cf-1/resume", "{oops"), 400, kErrApiInvalidParam);
  EXPECT_EQ(Snapshot(), paused);
  EXPECT_NE(before, paused);
}

TEST_F(ApiTest, WrongFieldTypesAreInvalidParam) {
  const std::string before = Snapshot();
  for (const Json& body : {
           Json{{"changefeed_id", "cf-1"}, {"start_ts", "2000"}, {"sink_uri", "blackhole://"}},
           Json{{"changefeed_id", "cf-1"}, {"start_ts", -5}, {"sink_uri", "blackhole://"}},
           Json{{"changefeed_id", "cf-1"}, {"start_ts", 1.5}, {"sink_uri", "blackhole://"}},
           Json{{"changefeed_id", 12}, {"sink_uri", "blackhole://"}},
           Json{{"changefeed_id", "cf-1"}, {"sink_uri", Json::array()}},
           Json{{"changefeed_id", "cf-1"}, {"sink_uri", "blackhole://"}, {"pd_addrs", "x"}},
           Json{{"changefeed_id", "cf-1"}, {"sink_uri", "blackhole://"}, {"replica_config", 3}},
           Json{{"changefeed_id", "cf-1"},
                {"sink_uri", "blackhole://"},
                {"replica_config", {{"filter", {{"rules", "test.*"}}}}}},
       }) {
    ExpectError(Call("POST", "/api/v2/changefeeds", Dump(body)), 400, kErrApiInvalidParam);
  }
  ExpectError(Call("POST", "/api/v2/changefeeds", CreateBody("bad_id!")), 400, kErrApiInvalidParam);
  EXPECT_EQ(Snapshot(), before);
}

TEST_F(ApiTest, UnknownChangefeed) {
  CreateOk("cf-1");
  const std::string before = Snapshot();
  ExpectError(Call("GET", "/api/v2/changefeeds/nope"), 400, kErrChangefeedNotExists);
  ExpectError(Call("GET", "/api/v2/changefeeds/nope/status"), 400, kErrChangefeedNotExists);
  ExpectError(Call("POST", "/api/v2/changefeeds/nope/pause"), 400, kErrChangefeedNotExists);
  ExpectError(Call("POST", "/api/v2/changefeeds/nope/resume"), 400, kErrChangefeedNotExists);
  ExpectError(Call("PUT", "/api/v2/changefeeds/nope", "{\"target_ts\": 5}"), 400,
              kErrChangefeedNotExists);
  ExpectError(Call("GET", "/api/v2/changefeeds/cf-1?namespace=other"), 400,
              kErrChangefeedNotExists);
  EXPECT_EQ(Snapshot(), before);
}

TEST_F(ApiTest, InvalidSinkUri) {
  const std::string before = Snapshot();
  ExpectError(Call("POST", "/api/v2/changefeeds", CreateBody("cf-1", 2000, "")), 400,
              kErrSinkUriInvalid);
  ExpectError(Call("POST", "/api/v2/changefeeds", CreateBody("cf-1", 2000, "nosuch://x")), 400,
              kErrSinkUriInvalid);
  ExpectError(Call("POST", "/api/v2/changefeeds", CreateBody("cf-1", 2000, "mysql://h:notaport/")),
              400, kErrSinkUriInvalid);
  // A storage sink needs a protocol: the replica config check fails.
  ExpectError(Call("POST", "/api/v2/changefeeds", CreateBody("cf-1", 2000, "file:///data/x")), 400,
              kErrInvalidReplicaConfig);
  EXPECT_EQ(Snapshot(), before);

  CreateOk("cf-2");
  PauseOk("cf-2");
  const std::string paused = Snapshot();
  ExpectError(Call("PUT", "/api/v2/changefeeds/cf-2", Dump(Json{{"sink_uri", "nosuch://x"}})), 400,
              kErrSinkUriInvalid);
  EXPECT_EQ(Snapshot(), paused);
}

TEST_F(ApiTest, StartTsBelowGcSafepoint) {
  gc_.gc_safepoint = Ts(5000);
  Sync();
  const std::string before = Snapshot();
  ExpectError(Call("POST", "/api/v2/changefeeds", CreateBody("cf-1", 2000)), 400,
              kErrStartTsBeforeGc);
  EXPECT_EQ(meta_->GetChangefeedInfo(Id("cf-1")).status().code(), Code::kNotFound);
  EXPECT_EQ(Snapshot(), before);

  // Start ts 0 means the current TSO, which is above the safepoint.
  Resp ok = Call("POST", "/api/v2/changefeeds",
                 Dump(Json{{"changefeed_id", "cf-2"}, {"sink_uri", "blackhole://"}}));
  EXPECT_EQ(ok.status, 200) << ok.raw;
}

TEST_F(ApiTest, ResumeBelowGcSafepointAndOtherTsErrors) {
  CreateOk("cf-1");
  PauseOk("cf-1");
  gc_.gc_safepoint = Ts(5000);
  Sync();
  const std::string before = Snapshot();
  ExpectError(Call("POST", "/api/v2/changefeeds/cf-1/resume",
                   Dump(Json{{"overwrite_checkpoint_ts", 4000}})),
              400, kErrStartTsBeforeGc);
  ExpectError(Call("POST", "/api/v2/changefeeds", CreateBody("cf-2", 999999999999)), 400,
              kErrApiInvalidParam);  // Beyond the TSO.
  ExpectError(Call("POST", "/api/v2/changefeeds",
                   Dump(Json{{"changefeed_id", "cf-2"},
                             {"start_ts", 6000},
                             {"target_ts", 6000},
                             {"sink_uri", "blackhole://"}})),
              400, kErrTargetTsBeforeStartTs);
  ExpectError(Call("PUT", "/api/v2/changefeeds/cf-1", Dump(Json{{"target_ts", 1500}})), 400,
              kErrChangefeedUpdateRefused);
  ExpectError(Call("PUT", "/api/v2/changefeeds/cf-1", Dump(Json{{"start_ts", 9000}})), 400,
              kErrApiInvalidParam);
  EXPECT_EQ(Snapshot(), before);
}

TEST_F(ApiTest, DuplicateIdKeepsTheFirst) {
  CreateOk("cf-1");
  const std::string before = Snapshot();
  const meta::ChangefeedInfo first = StoredInfo("cf-1");
  ExpectError(Call("POST", "/api/v2/changefeeds",
                   CreateBody("cf-1", 3000, "file:///data/other?protocol=csv")),
              400, kErrChangefeedAlreadyExists);
  EXPECT_EQ(StoredInfo("cf-1"), first);
  EXPECT_EQ(Snapshot(), before);
}

TEST_F(ApiTest, UpdateOrResumeWhileRunningIsRefused) {
  CreateOk("cf-1");
  const std::string before = Snapshot();
  ExpectError(Call("PUT", "/api/v2/changefeeds/cf-1", Dump(Json{{"target_ts", 900000}})), 400,
              kErrChangefeedUpdateRefused);
  ExpectError(Call("POST", "/api/v2/changefeeds/cf-1/resume"), 400, kErrChangefeedUpdateRefused);
  EXPECT_EQ(Snapshot(), before);
  EXPECT_EQ(StoredInfo("cf-1").target_ts, Ts(0));
}

TEST_F(ApiTest, OversizeBodyIs413) {
  const std::string before = Snapshot();
  std::string big = CreateBody("cf-1");
  big.insert(1, "\"pad\": \"" + std::string(100 * 1024, 'x') + "\", ");
  ExpectError(Call("POST", "/api/v2/changefeeds", big), 413, kErrApiInvalidParam);
  EXPECT_EQ(Snapshot(), before);
  EXPECT_EQ(Call("GET", "/api/v2/status").status, 200);  // Still serving.
}

TEST_F(ApiTest, InvalidIdInPathIsInvalidParam) {
  ExpectError(Call("POST", "/api/v2/changefeeds/bad_id/pause"), 400, kErrApiInvalidParam);
  ExpectError(Call("DELETE", "/api/v2/changefeeds/bad_id"), 400, kErrApiInvalidParam);
}

// --- lifecycle -------------------------------------------------------------

TEST_F(ApiTest, StartFailsWithTypedErrors) {
  ApiOptions taken = ServerOptions();
  taken.port = server_->port();
  Result<std::unique_ptr<ApiServer>> dup = ApiServer::Start(taken);
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.status().code(), Code::kUnavailable);

  ApiOptions bad_port = ServerOptions();
  bad_port.port = 70000;
  EXPECT_EQ(ApiServer::Start(bad_port).status().code(), Code::kInvalidArgument);
  ApiOptions no_cluster = ServerOptions();
  no_cluster.cluster = nullptr;
  EXPECT_EQ(ApiServer::Start(no_cluster).status().code(), Code::kInvalidArgument);
  ApiOptions bad_host = ServerOptions();
  bad_host.host = "256.1.1.1";
  EXPECT_EQ(ApiServer::Start(bad_host).status().code(), Code::kUnavailable);
}

// A node without the coordinator forwards the changefeed routes to the
// owner, one hop at most, and serves them itself once it has one.
TEST_F(ApiTest, AStandbyForwardsChangefeedRoutesToTheOwner) {
  ApiOptions standby_options = ServerOptions();
  standby_options.coordinator = nullptr;
  standby_options.self.id = NodeId("node-b");
  std::unique_ptr<ApiServer> standby = std::move(ApiServer::Start(standby_options)).value();
  httplib::Client client("127.0.0.1", standby->port());
  auto call = [&](const std::string& method, const std::string& path, const std::string& body,
                  const httplib::Headers& headers = {}) {
    Sync();
    httplib::Result r = method == "GET"
                            ? client.Get(path.c_str(), headers)
                            : client.Post(path.c_str(), headers, body, "application/json");
    Sync();
    Resp out;
    if (!r) return out;
    out.status = r->status;
    out.raw = r->body;
    out.body = Json::parse(r->body, nullptr, false);
    return out;
  };

  // No owner known: typed 503, retryable.
  ExpectError(call("GET", "/api/v2/changefeeds", ""), 503, kErrOwnerNotFound);
  // Through the standby to the owner, and back.
  cluster_.SetOwnerAddress(server_->address());
  Resp created = call("POST", "/api/v2/changefeeds", CreateBody("via-standby"));
  EXPECT_EQ(created.status, 200) << created.raw;
  EXPECT_TRUE(coord_->GetChangefeed(meta::ChangefeedId{"default", "via-standby"}).ok());
  Resp listed = call("GET", "/api/v2/changefeeds", "");
  EXPECT_EQ(listed.status, 200) << listed.raw;
  EXPECT_EQ(listed.body.value("total", 0), 1) << listed.raw;
  ExpectError(call("GET", "/api/v2/changefeeds/nobody", ""), 400, kErrChangefeedNotExists);
  // The owner's resign, asked of the standby, reaches the owner.
  Resp resigned = call("POST", "/api/v2/owner/resign", "");
  EXPECT_EQ(resigned.status, 200) << resigned.raw;
  EXPECT_EQ(cluster_.resigns.load(), 1);
  // A request already forwarded once is not forwarded again.
  ExpectError(call("GET", "/api/v2/changefeeds", "", {{"X-Sluice-Forwarded-From", "node-c"}}), 503,
              kErrOwnerNotFound);
  // The owner unreachable: typed 503.
  cluster_.SetOwnerAddress("127.0.0.1:1");
  ExpectError(call("GET", "/api/v2/changefeeds", ""), 503, kErrOwnerNotFound);
  // The standby becomes the owner: it answers itself; then loses it again.
  standby->SetCoordinator(coord_.get());
  Resp local = call("GET", "/api/v2/changefeeds/via-standby", "");
  EXPECT_EQ(local.status, 200) << local.raw;
  standby->SetCoordinator(nullptr);
  ExpectError(call("GET", "/api/v2/changefeeds", ""), 503, kErrOwnerNotFound);
  standby->Stop();
}

TEST_F(ApiTest, StopRightAfterStartAndTwice) {
  for (int i = 0; i < 20; ++i) {
    Result<std::unique_ptr<ApiServer>> s = ApiServer::Start(ServerOptions());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    (*s)->Stop();
    (*s)->Stop();
  }
  server_->Stop();
  EXPECT_FALSE(client_->Get("/api/v2/status"));
}

// --- parsing never throws -------------------------------------------------------

TEST(ApiJsonTest, MutatedBodiesNeverThrow) {
  const std::string seed = Dump(Json{
      {"changefeed_id", "cf-1"},
      {"start_ts", 1},
      {"sink_uri", "blackhole://"},
      {"replica_config", {{"filter", {{"rules", {"a.*"}}}}, {"sink", {{"protocol", "csv"}}}}}});
  std::mt19937 gen(42);
  for (int i = 0; i < 3000; ++i) {
    std::string s = seed;
    for (int k = 0; k < 1 + i % 4; ++k) {
      s[gen() % s.size()] = static_cast<char>(gen() % 256);
    }
    ApiOr<ChangefeedConfigRequest> req = ParseChangefeedConfig(s);
    if (!req.ok()) {
      EXPECT_EQ(req.error().http_status, 400) << s;
    }
    ApiOr<ResumeRequest> resume = ParseResume(s);
    if (!resume.ok()) {
      EXPECT_EQ(resume.error().http_status, 400);
    }
    ApiOr<UpstreamRequest> upstream = ParseUpstream(s);
    if (!upstream.ok()) {
      EXPECT_EQ(upstream.error().http_status, 400);
    }
  }
}

}  // namespace
}  // namespace sluice::api
