// Two `sluice server` nodes on one etcd (a process of the test's own), simkv
// as its own process, MariaDB and csv files downstream, each run ending in
// the checker's "0 differences":
//  - the owner resigns (POST /api/v2/owner/resign through the standby) and
//    the other node leads; then that owner is killed with SIGKILL
//    mid-workload: the first takes over within the session TTL, every
//    changefeed resumes from its checkpoint, and the killed node comes back
//    as a standby;
//  - the owner is paused (SIGSTOP) past its session TTL while the other node
//    takes over, then resumed (SIGCONT): it fences itself, and MariaDB's
//    general log shows that none of its connections wrote anything after it
//    resumed; it then registers again as a new capture.
// The changefeeds are created through the standby, whose API forwards to the
// owner.
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <regex>
#include <set>
#include <thread>

#include "e2e/e2e_fixture.h"
#include "meta/etcd_store.h"
#include "meta/keys.h"
#include "process/etcd_process.h"
#include "sink/mysql/mysql_config.h"
#include "sink/mysql/mysql_conn.h"
#include "sink/sink_uri.h"

namespace sluice::testing {
namespace {

using namespace std::chrono_literals;

constexpr const char* kSessionTtl = "3";

// One row of a query result, NULL read as "".
struct SqlRowView {
  const sink::SqlRow& row;
  std::string Text(size_t i) const { return i < row.size() ? row[i].value_or("") : ""; }
};

class ClusterTest : public E2eFixture {
 protected:
  void SetUp() override {
    database_ = "cluster_e2e";
    E2eFixture::SetUp();
    if (IsSkipped()) return;
    if (::access(kEtcdBinary, X_OK) != 0) GTEST_SKIP() << kEtcdBinary << " is not installed";
    etcd_ = std::make_unique<EtcdProcess>(dir_ + "/etcd");
    ASSERT_TRUE(etcd_->Start().ok());
  }
  void TearDown() override {
    for (ServerProcess* s : {&a_, &b_, &c_}) {
      if (s->child != nullptr) s->child->Signal(SIGCONT);
      s->child.reset();
    }
    if (etcd_ != nullptr) etcd_->Kill();
    E2eFixture::TearDown();
  }

  void StartNode(ServerProcess* node, const std::string& name) {
    StartServer(node, name, {"--etcd", etcd_->endpoint(), "--capture-session-ttl", kSessionTtl});
  }
  static bool IsOwner(const std::string& api) {
    nlohmann::json status = GetJson(api, "/api/v2/status");
    return status.is_object() && status.value("is_owner", false);
  }
  // Waits (bounded) until the node at `api` is the owner; the time it took.
  std::chrono::milliseconds AwaitOwner(const std::string& api) {
    const auto start = std::chrono::steady_clock::now();
    while (!IsOwner(api)) {
      if (std::chrono::steady_clock::now() - start > 60s) {
        ADD_FAILURE() << api << " did not become the owner";
        break;
      }
      std::this_thread::sleep_for(50ms);  // Polling the API.
    }
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 start);
  }
  // Whether /metrics of the node at `api` shows its message stream to
  // `peer` as up (want true), or no stream to it at all (want false); waits
  // (bounded) for it.
  static bool AwaitPeer(const std::string& api, const std::string& peer, bool want) {
    const std::string up = "sluice_peer_connected{peer=\"" + peer + "\"} 1";
    const std::string listed = "sluice_peer_connected{peer=\"" + peer + "\"}";
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < deadline) {
      httplib::Client client("http://" + api);
      auto res = client.Get("/metrics");
      if (res && res->status == 200) {
        const bool now = want ? res->body.find(up) != std::string::npos
                              : res->body.find(listed) == std::string::npos;
        if (now) return true;
      }
      std::this_thread::sleep_for(100ms);  // Polling the API.
    }
    return false;
  }
  // Both nodes up, `a_` the owner; the database prepared at the start ts.
  Ts StartCluster() {
    StartSimkv();
    StartNode(&a_, "node-a");
    AwaitOwner(a_.api);
    StartNode(&b_, "node-b");
    EXPECT_FALSE(IsOwner(b_.api));
    const Ts start = Tso();
    PrepareMysql(start);
    return start;
  }

  std::unique_ptr<sink::MysqlConnection> ConnectMysql() {
    auto uri = sink::SinkUri::Parse(mysql_);
    EXPECT_TRUE(uri.ok());
    auto config = sink::MysqlSinkConfig::FromUri(*uri);
    EXPECT_TRUE(config.ok());
    auto conn = sink::MysqlConnection::Connect(config->connect);
    EXPECT_TRUE(conn.ok()) << conn.status().ToString();
    return conn.ok() ? std::move(conn).value() : nullptr;
  }

  // c-mysql (MariaDB) and c-file (csv files under `files`) from `start`,
  // created through the node at `api`.
  void CreateChangefeeds(const std::string& api, Ts start, const std::string& files) {
    Cli(api, {"changefeed", "create", "--sink-uri", mysql_, "-c", "c-mysql", "--start-ts",
              std::to_string(start.value())});
    Cli(api, {"changefeed", "create", "--sink-uri",
              "file://" + files + "?protocol=csv&flush-interval=200ms", "-c", "c-file",
              "--start-ts", std::to_string(start.value())});
  }
  // The working table dispatchers of changefeed `id` on the node at `api`
  // (its /metrics); -1 if it does not say.
  static int TableDispatchers(const std::string& api, const std::string& id) {
    httplib::Client client("http://" + api);
    auto res = client.Get("/metrics");
    if (!res || res->status != 200) return -1;
    const std::regex line("sluice_table_dispatchers\\{namespace=\"default\",changefeed=\"" + id +
                          "\"\\} (\\d+)");
    std::smatch m;
    if (!std::regex_search(res->body, m, line)) return 0;
    return std::stoi(m[1].str());
  }

  std::unique_ptr<EtcdProcess> etcd_;
  ServerProcess a_;
  ServerProcess b_;
  ServerProcess c_;
};

TEST_F(ClusterTest, TheOwnerResignsThenIsKilledAndTheOtherNodeTakesOver) {
  const Ts start = StartCluster();
  const std::string files = dir_ + "/out";
  // Created through the standby: its API forwards to the owner.
  CreateChangefeeds(b_.api, start, files);
  ASSERT_NO_FATAL_FAILURE(StartWorkload());
  EXPECT_GT(WaitCheckpoint(b_.api, "c-mysql", Tso()), start);
  WaitCheckpoint(b_.api, "c-file", Tso());
  // The two nodes found each other in etcd and opened their stream.
  EXPECT_TRUE(AwaitPeer(a_.api, b_.node_id, true));
  EXPECT_TRUE(AwaitPeer(b_.api, a_.node_id, true));

  // Foreign and corrupt documents under the cluster's prefix: logged and
  // skipped by every node, never a crash.
  {
    meta::EtcdStoreOptions options;
    options.endpoints = {etcd_->endpoint()};
    auto store = meta::EtcdMetaStore::Open(options);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    const meta::KeyLayout layout("default");
    ASSERT_TRUE((*store)->Put(layout.ChangefeedInfoKey({"default", "junk"}), "{oops").ok());
    ASSERT_TRUE((*store)->Put(layout.CapturePrefix() + "junk", "not json").ok());
  }

  // The owner resigns (asked through the standby): b_ leads, a_ stands by,
  // as `sluice cli capture list` shows.
  httplib::Client client("http://" + b_.api);
  auto resigned = client.Post("/api/v2/owner/resign");
  ASSERT_TRUE(resigned && resigned->status == 200);
  AwaitOwner(b_.api);
  EXPECT_FALSE(IsOwner(a_.api));
  const std::string list = Cli(a_.api, {"capture", "list"});
  EXPECT_NE(list.find(b_.node_id), std::string::npos) << list;
  EXPECT_NE(list.find(a_.node_id), std::string::npos) << list;
  WaitCheckpoint(a_.api, "c-mysql", Tso());
  WaitCheckpoint(a_.api, "c-file", Tso());

  // The new owner is killed: a_ takes over again.
  const std::string killed_id = b_.node_id;
  b_.child->Signal(SIGKILL);
  ASSERT_TRUE(b_.child->Wait(10s).ok());
  const Ts killed_at = Tso();
  const std::chrono::milliseconds takeover = AwaitOwner(a_.api);
  // It resumes both from their checkpoints and goes past the kill.
  WaitCheckpoint(a_.api, "c-mysql", killed_at);
  WaitCheckpoint(a_.api, "c-file", killed_at);
  std::cout << "takeover after kill -9: " << takeover.count() << " ms (session ttl " << kSessionTtl
            << " s)\n";
  EXPECT_LT(takeover, 30s);
  // Its registration expired: a_ no longer keeps a stream to it.
  EXPECT_TRUE(AwaitPeer(a_.api, killed_id, false));

  // The killed node comes back (same data dir) and stands by.
  StartNode(&b_, "node-b");
  EXPECT_FALSE(IsOwner(b_.api));
  nlohmann::json captures = GetJson(b_.api, "/api/v2/captures");
  ASSERT_TRUE(captures.is_object()) << captures.dump();
  EXPECT_EQ(captures.value("total", 0), 2) << captures.dump();
  EXPECT_TRUE(AwaitPeer(a_.api, b_.node_id, true));  // Its new capture.
  EXPECT_TRUE(AwaitPeer(b_.api, a_.node_id, true));

  // A third node claiming a live node's address is refused, clearly.
  auto clash = RunProcess({SLUICE_BIN, "server", "--pd", pd_, "--addr", "127.0.0.1:0",
                           "--advertise-addr", a_.api, "--data-dir", dir_ + "/node-c", "--etcd",
                           etcd_->endpoint(), "--capture-session-ttl", kSessionTtl},
                          60s);
  ASSERT_TRUE(clash.ok()) << clash.status().ToString();
  EXPECT_EQ(clash->first, 1) << clash->second;
  EXPECT_NE(clash->second.find("two nodes cannot share an address"), std::string::npos)
      << clash->second;

  ASSERT_NO_FATAL_FAILURE(StopWorkload());
  const Ts end = Tso();
  const Ts mysql_checkpoint = WaitCheckpoint(b_.api, "c-mysql", end);
  const Ts file_checkpoint = WaitCheckpoint(b_.api, "c-file", end);
  Check({"--mysql", mysql_, "--schemas", database_}, mysql_checkpoint);
  Check({"--storage", files, "--protocol", "csv"}, file_checkpoint);
  StopServer(&a_);
  StopServer(&b_);
}

TEST_F(ClusterTest, AnOwnerPausedPastItsTtlFencesItselfAndWritesNothingAfter) {
  const Ts start = StartCluster();
  std::unique_ptr<sink::MysqlConnection> db = ConnectMysql();
  ASSERT_NE(db, nullptr);
  ASSERT_TRUE(db->Execute("SET GLOBAL log_output = 'TABLE'").ok());
  ASSERT_TRUE(db->Execute("TRUNCATE TABLE mysql.general_log").ok());
  ASSERT_TRUE(db->Execute("SET GLOBAL general_log = 'ON'").ok());
  Cli(b_.api, {"changefeed", "create", "--sink-uri", mysql_, "-c", "c-mysql", "--start-ts",
               std::to_string(start.value())});
  ASSERT_NO_FATAL_FAILURE(StartWorkload());
  WaitCheckpoint(b_.api, "c-mysql", Tso());

  const std::string writes_predicate =
      "(argument REGEXP "
      "'^[[:space:]]*(BEGIN|INSERT|REPLACE|UPDATE|DELETE|COMMIT|CREATE|ALTER|DROP|TRUNCATE)' "
      "AND argument LIKE '%" +
      database_ + "%')";
  const std::string writes = "command_type = 'Query' AND " + writes_predicate;

  a_.child->Signal(SIGSTOP);
  const Ts paused_at = Tso();
  const std::chrono::milliseconds takeover = AwaitOwner(b_.api);
  WaitCheckpoint(b_.api, "c-mysql", paused_at);  // b_ writes now.
  auto resumed_at = db->Query("SELECT NOW(6)");
  ASSERT_TRUE(resumed_at.ok() && !resumed_at->empty());
  a_.child->Signal(SIGCONT);
  // It notices, fences, and comes back as a new capture.
  ASSERT_TRUE(a_.child->WaitForLine(std::regex("(session lost: fencing)"), 30s).ok())
      << a_.child->Output();
  ASSERT_TRUE(a_.child->WaitForLine(std::regex("capture registered; id=(\\S+)"), 30s).ok());
  WaitCheckpoint(b_.api, "c-mysql", Tso());
  std::cout << "takeover after SIGSTOP: " << takeover.count() << " ms\n";

  // The old owner's connections, as its log names them up to its fence (the
  // other node holds connections of its own, the tables being spread over
  // both, and so does the new capture this process registers after the
  // fence); they wrote before the pause.
  std::set<std::string> owner_threads;
  std::string a_log = a_.child->Output();
  const size_t fence_line = a_log.find("session lost: fencing");
  ASSERT_NE(fence_line, std::string::npos);
  a_log.resize(fence_line);
  const std::regex connection_id("connection_id=(\\d+)");
  for (auto it = std::sregex_iterator(a_log.begin(), a_log.end(), connection_id);
       it != std::sregex_iterator(); ++it) {
    owner_threads.insert((*it)[1].str());
  }
  ASSERT_FALSE(owner_threads.empty()) << a_log;
  std::string in;
  for (const std::string& t : owner_threads) in += (in.empty() ? "" : ",") + t;
  auto before =
      db->Query("SELECT COUNT(*) FROM mysql.general_log WHERE " + writes + " AND thread_id IN (" +
                in + ") AND event_time < '" + (*resumed_at)[0][0].value_or("") + "'");
  ASSERT_TRUE(before.ok() && !before->empty()) << before.status().ToString();
  EXPECT_GT(std::stoll((*before)[0][0].value_or("0")), 0);

  // Everything the old owner's connections sent after it resumed. A write
  // that reached MariaDB must have been refused there: it carries the epoch
  // fence's guard and its connection's next statement is the ROLLBACK.
  auto after = db->Query("SELECT thread_id, argument, " + writes_predicate +
                         " FROM mysql.general_log WHERE command_type = 'Query' AND thread_id IN (" +
                         in + ") AND event_time > '" + (*resumed_at)[0][0].value_or("") +
                         "' ORDER BY thread_id, event_time");
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  int refused = 0;
  for (size_t i = 0; i < after->size(); ++i) {
    const SqlRowView row{(*after)[i]};
    if (row.Text(2) != "1") continue;  // Not a write.
    const bool guarded = row.Text(1).find("changefeed_epoch_v1") != std::string::npos;
    const bool rolled_back = i + 1 < after->size() &&
                             SqlRowView{(*after)[i + 1]}.Text(0) == row.Text(0) &&
                             SqlRowView{(*after)[i + 1]}.Text(1) == "ROLLBACK";
    EXPECT_TRUE(guarded && rolled_back) << "the fenced node committed after it resumed: thread "
                                        << row.Text(0) << ": " << row.Text(1).substr(0, 200);
    ++refused;
  }
  std::cout << "writes refused downstream after the resume: " << refused << "\n";
  ASSERT_TRUE(db->Execute("SET GLOBAL general_log = 'OFF'").ok());

  ASSERT_NO_FATAL_FAILURE(StopWorkload());
  const Ts checkpoint = WaitCheckpoint(b_.api, "c-mysql", Tso());
  Check({"--mysql", mysql_, "--schemas", database_}, checkpoint);
  nlohmann::json captures = GetJson(b_.api, "/api/v2/captures");
  EXPECT_EQ(captures.value("total", 0), 2) << captures.dump();
  StopServer(&a_);
  StopServer(&b_);
}

// Three nodes: the owner's maintainers spread the tables over all of them.
// Every table is moved to one node on request, and that node, which has
// table dispatchers only, is killed (its tables move to the others) and
// comes back (tables are balanced onto it again), then the owner
// is killed (another node leads, takes over the surviving dispatchers under
// a new epoch and restarts the lost ones); MariaDB and the files end with
// zero differences.
TEST_F(ClusterTest, TablesSpreadOverThreeNodesSurviveTheLossOfAnyNode) {
  const Ts start = StartCluster();
  StartNode(&c_, "node-c");
  EXPECT_FALSE(IsOwner(c_.api));
  const std::string files = dir_ + "/out";
  CreateChangefeeds(c_.api, start, files);
  ASSERT_NO_FATAL_FAILURE(StartWorkload());
  WaitCheckpoint(a_.api, "c-mysql", Tso());
  WaitCheckpoint(a_.api, "c-file", Tso());
  for (ServerProcess* from : {&a_, &b_, &c_}) {
    for (ServerProcess* to : {&a_, &b_, &c_}) {
      if (from == to) continue;
      EXPECT_TRUE(AwaitPeer(from->api, to->node_id, true)) << from->name;
    }
  }
  // Every node runs table dispatchers of the changefeed (three tables,
  // balanced by count).
  ServerProcess* dispatchers_only = nullptr;
  const auto spread_deadline = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < spread_deadline) {
    if (TableDispatchers(b_.api, "c-mysql") > 0 && TableDispatchers(c_.api, "c-mysql") > 0) {
      dispatchers_only = &c_;
      break;
    }
    std::this_thread::sleep_for(100ms);  // Polling the API.
  }
  ASSERT_NE(dispatchers_only, nullptr) << "b " << TableDispatchers(b_.api, "c-mysql") << " c "
                                       << TableDispatchers(c_.api, "c-mysql");
  EXPECT_GT(TableDispatchers(a_.api, "c-mysql") + TableDispatchers(b_.api, "c-mysql"), 0);

  // Every table moves to c on request (`sluice cli changefeed move-table`,
  // asked through b).
  const int tables = static_cast<int>(table_ids_.size());
  ASSERT_GE(tables, 2);
  for (int64_t table : table_ids_) {
    Cli(b_.api, {"changefeed", "move-table", "-c", "c-mysql", "--table-id", std::to_string(table),
                 "--target-node-id", c_.node_id});
  }
  const auto move_deadline = std::chrono::steady_clock::now() + 60s;
  while (TableDispatchers(c_.api, "c-mysql") != tables &&
         std::chrono::steady_clock::now() < move_deadline) {
    std::this_thread::sleep_for(100ms);  // Polling the API.
  }
  EXPECT_EQ(TableDispatchers(c_.api, "c-mysql"), tables);
  EXPECT_EQ(TableDispatchers(a_.api, "c-mysql"), 0);
  EXPECT_EQ(TableDispatchers(b_.api, "c-mysql"), 0);
  WaitCheckpoint(a_.api, "c-mysql", Tso());

  // (c) A node with dispatchers only dies: its tables move to the others.
  c_.child->Signal(SIGKILL);
  ASSERT_TRUE(c_.child->Wait(10s).ok());
  const Ts c_killed = Tso();
  WaitCheckpoint(a_.api, "c-mysql", c_killed);
  WaitCheckpoint(a_.api, "c-file", c_killed);
  EXPECT_TRUE(AwaitPeer(a_.api, c_.node_id, false));

  // c comes back as a new capture: the tables are balanced onto it again.
  StartNode(&c_, "node-c");
  bool rebalanced = false;
  const auto rebalance_deadline = std::chrono::steady_clock::now() + 60s;
  while (!rebalanced && std::chrono::steady_clock::now() < rebalance_deadline) {
    rebalanced = TableDispatchers(c_.api, "c-mysql") > 0;
    if (!rebalanced) std::this_thread::sleep_for(100ms);  // Polling the API.
  }
  EXPECT_TRUE(rebalanced) << "no table moved to the node that joined";

  // (a) The owner, which hosts the maintainers and tables, dies: another
  // node leads, adopts its own surviving dispatchers and restarts the rest.
  a_.child->Signal(SIGKILL);
  ASSERT_TRUE(a_.child->Wait(10s).ok());
  const Ts a_killed = Tso();
  ServerProcess* owner = nullptr;
  const auto owner_deadline = std::chrono::steady_clock::now() + 60s;
  while (owner == nullptr && std::chrono::steady_clock::now() < owner_deadline) {
    if (IsOwner(b_.api)) owner = &b_;
    if (IsOwner(c_.api)) owner = &c_;
    if (owner == nullptr) std::this_thread::sleep_for(50ms);  // Polling the API.
  }
  ASSERT_NE(owner, nullptr);
  WaitCheckpoint(owner->api, "c-mysql", a_killed);
  WaitCheckpoint(owner->api, "c-file", a_killed);

  ASSERT_NO_FATAL_FAILURE(StopWorkload());
  const Ts end = Tso();
  const Ts mysql_checkpoint = WaitCheckpoint(owner->api, "c-mysql", end);
  const Ts file_checkpoint = WaitCheckpoint(owner->api, "c-file", end);
  Check({"--mysql", mysql_, "--schemas", database_}, mysql_checkpoint);
  Check({"--storage", files, "--protocol", "csv"}, file_checkpoint);
  StopServer(&b_);
  StopServer(&c_);
}

}  // namespace
}  // namespace sluice::testing
