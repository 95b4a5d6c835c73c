// The whole changefeed data path against simkv under its TiDB-like workload
// (tables of every column type, a clustered table, DDL: create, add/drop
// column, truncate, drop) with region and store faults: puller -> event
// store -> schema store -> event service -> dispatchers -> sink. After the
// workload stops and the checkpoint passes its last commit, the checker must
// find the downstream equal to simkv's ground truth. Downstreams: a real
// MariaDB (SLUICE_TEST_MYSQL) and the file sink in both protocols. The
// restart case stops the path at a random point and starts a new one from
// the recorded checkpoint (safe mode absorbs the replayed rows).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <mysql.h>

#include <filesystem>
#include <random>
#include <thread>

#include "checker/expected.h"
#include "checker/mysql_reader.h"
#include "checker/storage_state.h"
#include "datapath/datapath_driver.h"
#include "logpuller/puller_test_util.h"
#include "logpuller/puller_workload.h"
#include "simkv/sql_render.h"
#include "simkv/workload.h"
#include "simkv/workload_test_util.h"
#include "sink/mysql/mysql_sink.h"
#include "sink/storage/storage_sink.h"

namespace sluice {
namespace {

using logpuller::testing::PullerEnv;
constexpr auto kWait = std::chrono::seconds(90);
const logpuller::testing::ScenarioShape kFaultShape{40, 100, 300};

simkv::WorkloadOptions Workload(uint64_t seed) {
  simkv::WorkloadOptions w;
  w.seed = seed;
  w.narrow_tables = 2;
  w.kitchen_sink_table = true;
  w.clustered_table = true;
  w.dml.rows_per_txn = 4;
  w.ddl_every = 6;
  using simkv::DdlKind;
  for (DdlKind kind :
       {DdlKind::kCreateTable, DdlKind::kAddColumn, DdlKind::kDropColumn, DdlKind::kTruncateTable,
        DdlKind::kAddColumn, DdlKind::kCreateTable, DdlKind::kDropTable}) {
    simkv::DdlRequest r;
    r.kind = kind;
    w.ddl_list.push_back(r);
  }
  w.ddl_weights.fill(0);  // Only the list above.
  return w;
}

// Runs `sql` on the downstream named by `uri`.
Status Exec(const std::string& uri, const std::vector<std::string>& sql);

Result<kvclient::MetaSnapshot> MetaAt(const simkv::MvccStore& store, Ts ts) {
  ASSIGN_OR_RETURN(simkv::testutil::MetaSnapshot snap,
                   simkv::testutil::ReadMetaSnapshot(store, ts));
  kvclient::MetaSnapshot out;
  out.ts = ts;
  out.schema_version = snap.schema_version;
  out.dbs = std::move(snap.dbs);
  out.tables = std::move(snap.tables);
  return out;
}

class DataPathScenario {
 public:
  explicit DataPathScenario(uint64_t seed) : seed_(seed) {}

  void SetUpCluster() {
    logpuller::testing::PullerEnvOptions options;
    auto env = PullerEnv::Start(options);
    ASSERT_TRUE(env.ok()) << env.status().ToString();
    env_ = std::move(env).value();
    workload_ = std::make_unique<simkv::Workload>(&env_->cluster->mvcc(), &env_->cluster->tso(),
                                                  Workload(seed_));
    ASSERT_TRUE(workload_->Setup().ok());
    auto start = env_->pd->GetTs();
    ASSERT_TRUE(start.ok());
    start_ = *start;
    dir_ = ::testing::TempDir() + "/datapath_" + std::to_string(seed_);
    std::filesystem::remove_all(dir_);
  }

  // The downstream schema at the start ts, as a user loads it before a
  // changefeed starts.
  std::vector<std::string> InitialSchemaSql() {
    std::vector<std::string> sql = {"CREATE DATABASE workload"};
    for (const simkv::WorkloadTable& t : workload_->Tables()) {
      sql.push_back("USE " + simkv::QuoteName(t.database));
      sql.push_back(simkv::CreateTableSql(t.info));
    }
    return sql;
  }

  Result<std::unique_ptr<testing::DataPathDriver>> StartPath(sink::Sink* sink, Ts start) {
    testing::DataPathOptions o;
    o.data_dir = dir_;
    o.start_ts = start;
    o.pd = env_->pd.get();
    o.cache = env_->cache.get();
    o.puller = env_->client.get();
    o.sink = sink;
    return testing::DataPathDriver::Start(o);
  }

  // Runs `steps` workload steps with faults alongside; `mid` (if set) runs
  // once halfway.
  void RunWorkload(int steps, const std::function<void()>& mid) {
    logpuller::testing::Progress progress;
    std::thread faults(
        [&] { logpuller::testing::RunFaults(*env_->cluster, kFaultShape, seed_, progress); });
    for (int i = 0; i < steps; ++i) {
      Status s = workload_->Step();
      ASSERT_TRUE(s.ok()) << s.ToString();
      progress.Add();
      if (i == steps / 2 && mid) mid();
    }
    progress.Done();
    faults.join();
    ASSERT_TRUE(logpuller::testing::HealCluster(*env_->cluster).ok());
    ASSERT_TRUE(workload_->CommitLongTxns().ok());
  }

  Result<checker::DatabaseState> Expected(Ts ts) {
    ASSIGN_OR_RETURN(kvclient::MetaSnapshot meta, MetaAt(env_->cluster->mvcc(), ts));
    return checker::ExpectedState(env_->truth, meta, ts);
  }

  void TearDown() {
    workload_.reset();
    if (env_ != nullptr) env_->Stop();
  }

  uint64_t seed_;
  std::unique_ptr<PullerEnv> env_;
  std::unique_ptr<simkv::Workload> workload_;
  Ts start_;
  std::string dir_;
};

Status Exec(const std::string& uri, const std::vector<std::string>& sql) {
  ASSIGN_OR_RETURN(sink::SinkUri u, sink::SinkUri::Parse(uri));
  MYSQL* m = mysql_init(nullptr);
  if (mysql_real_connect(m, u.host.c_str(), u.user.c_str(), u.password.c_str(), nullptr,
                         u.port.value_or(3306), nullptr, 0) == nullptr) {
    Status s = Unavailable(mysql_error(m));
    mysql_close(m);
    return s;
  }
  std::vector<std::string> statements;
  if (sql.empty()) {  // Drops every user database: a clean downstream.
    if (mysql_query(m, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA") == 0) {
      MYSQL_RES* res = mysql_store_result(m);
      while (MYSQL_ROW row = res != nullptr ? mysql_fetch_row(res) : nullptr) {
        std::string name = row[0];
        if (name != "mysql" && name != "information_schema" && name != "performance_schema" &&
            name != "sys") {
          statements.push_back("DROP DATABASE " + simkv::QuoteName(name));
        }
      }
      if (res != nullptr) mysql_free_result(res);
    }
  }
  statements.insert(statements.end(), sql.begin(), sql.end());
  for (const std::string& q : statements) {
    if (mysql_query(m, q.c_str()) != 0) {
      Status s = Internal(fmt::format("{}: {}", q, mysql_error(m)));
      mysql_close(m);
      return s;
    }
  }
  mysql_close(m);
  return Status::Ok();
}

Result<std::unique_ptr<sink::Sink>> MysqlSink(const std::string& uri, Ts start) {
  ASSIGN_OR_RETURN(sink::SinkUri u, sink::SinkUri::Parse(uri));
  sink::MysqlSinkOptions o;
  o.changefeed_id = "default/scenario";
  o.start_ts = start;
  o.clock = Clock::Real();
  ASSIGN_OR_RETURN(auto s, sink::MysqlSink::Create(u, o));
  return std::unique_ptr<sink::Sink>(std::move(s));
}

void CheckMysql(DataPathScenario& sc, const std::string& uri, Ts ts) {
  auto expected = sc.Expected(ts);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  auto actual = checker::ReadMysqlState(uri, *expected);
  ASSERT_TRUE(actual.ok()) << actual.status().ToString();
  checker::DiffReport report = checker::Compare(*expected, *actual);
  std::ostringstream out;
  report.Print(out);
  EXPECT_TRUE(report.ok()) << out.str();
  EXPECT_GE(report.tables_compared, 3u);
  EXPECT_GT(report.rows_compared, 0u);
  auto at_start = sc.Expected(sc.start_);
  ASSERT_TRUE(at_start.ok());
  EXPECT_FALSE(checker::Compare(*at_start, *actual).ok());
}

TEST(DataPathScenarioTest, MysqlUnderFaultsMatchesGroundTruth) {
  const char* uri = std::getenv("SLUICE_TEST_MYSQL");
  if (uri == nullptr) GTEST_SKIP() << "SLUICE_TEST_MYSQL is not set";
  for (uint64_t seed : logpuller::testing::ScenarioSeeds()) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    DataPathScenario sc(seed);
    sc.SetUpCluster();
    ASSERT_TRUE(Exec(uri, {}).ok());
    ASSERT_TRUE(Exec(uri, sc.InitialSchemaSql()).ok());
    auto sink = MysqlSink(uri, sc.start_);
    ASSERT_TRUE(sink.ok()) << sink.status().ToString();
    auto path = sc.StartPath(sink->get(), sc.start_);
    ASSERT_TRUE(path.ok()) << path.status().ToString();
    sc.RunWorkload(120, nullptr);
    auto end = sc.env_->pd->GetTs();
    ASSERT_TRUE(end.ok());
    Status s = (*path)->WaitCheckpoint(*end, kWait);
    ASSERT_TRUE(s.ok()) << s.ToString();
    Ts ckpt = (*path)->checkpoint();
    EXPECT_GT((*path)->stats().barriers, 0u);
    (*path)->Stop();
    (*sink)->Close();
    CheckMysql(sc, uri, ckpt);
    sc.TearDown();
  }
}

TEST(DataPathScenarioTest, MysqlRestartFromCheckpointMatchesGroundTruth) {
  const char* uri = std::getenv("SLUICE_TEST_MYSQL");
  if (uri == nullptr) GTEST_SKIP() << "SLUICE_TEST_MYSQL is not set";
  uint64_t seed = logpuller::testing::ScenarioSeeds().front() + 100;
  DataPathScenario sc(seed);
  sc.SetUpCluster();
  ASSERT_TRUE(Exec(uri, {}).ok());
  ASSERT_TRUE(Exec(uri, sc.InitialSchemaSql()).ok());
  auto sink = MysqlSink(uri, sc.start_);
  ASSERT_TRUE(sink.ok());
  auto path = sc.StartPath(sink->get(), sc.start_);
  ASSERT_TRUE(path.ok()) << path.status().ToString();
  Ts restart_at;
  std::mt19937_64 rng(seed);
  sc.RunWorkload(120, [&] {
    // Stop at a random point (after some progress), as a crash would.
    (*path)
        ->WaitCheckpoint(Ts((*path)->checkpoint().value() + 1),
                         std::chrono::milliseconds(200 + rng() % 800))
        .IgnoreError();
    restart_at = (*path)->checkpoint();
    (*path)->Stop();
    (*sink)->Close();
    sink = MysqlSink(uri, restart_at);
    ASSERT_TRUE(sink.ok());
    path = sc.StartPath(sink->get(), restart_at);
    ASSERT_TRUE(path.ok()) << path.status().ToString();
  });
  ASSERT_TRUE(sink.ok() && path.ok());
  ASSERT_GE(restart_at, sc.start_);
  auto end = sc.env_->pd->GetTs();
  ASSERT_TRUE(end.ok());
  Status s = (*path)->WaitCheckpoint(*end, kWait);
  ASSERT_TRUE(s.ok()) << s.ToString();
  Ts ckpt = (*path)->checkpoint();
  (*path)->Stop();
  (*sink)->Close();
  CheckMysql(sc, uri, ckpt);
  sc.TearDown();
}

void RunStorage(const std::string& protocol) {
  for (uint64_t seed : logpuller::testing::ScenarioSeeds()) {
    SCOPED_TRACE("seed " + std::to_string(seed) + " " + protocol);
    DataPathScenario sc(seed);
    sc.SetUpCluster();
    std::string root = sc.dir_ + "/out-" + protocol;
    auto uri = sink::SinkUri::Parse("file://" + root + "?protocol=" + protocol +
                                    "&flush-interval=200ms&file-size=4KB");
    ASSERT_TRUE(uri.ok());
    auto options = sink::storage::StorageSinkOptions::FromUri(*uri);
    ASSERT_TRUE(options.ok()) << options.status().ToString();
    auto sink = sink::storage::StorageSink::Create(*options, Clock::Real());
    ASSERT_TRUE(sink.ok()) << sink.status().ToString();
    auto path = sc.StartPath(sink->get(), sc.start_);
    ASSERT_TRUE(path.ok()) << path.status().ToString();
    sc.RunWorkload(120, nullptr);
    auto end = sc.env_->pd->GetTs();
    ASSERT_TRUE(end.ok());
    Status s = (*path)->WaitCheckpoint(*end, kWait);
    ASSERT_TRUE(s.ok()) << s.ToString();
    Ts ckpt = (*path)->checkpoint();
    (*path)->Stop();
    (*sink)->Close();
    auto expected = sc.Expected(ckpt);
    ASSERT_TRUE(expected.ok()) << expected.status().ToString();
    auto actual = checker::ReadStorageState(
        root, sink::storage::ReaderOptions::FromSinkOptions(*options), *expected);
    ASSERT_TRUE(actual.ok()) << actual.status().ToString();
    checker::DiffReport report = checker::Compare(*expected, *actual);
    std::ostringstream out;
    report.Print(out);
    EXPECT_TRUE(report.ok()) << out.str();
    EXPECT_GE(report.tables_compared, 3u);
    EXPECT_GT(report.rows_compared, 0u);
    // The same files against the state at the start must differ: the check
    // sees the rows the workload wrote.
    auto at_start = sc.Expected(sc.start_);
    ASSERT_TRUE(at_start.ok());
    EXPECT_FALSE(checker::Compare(*at_start, *actual).ok());
    sc.TearDown();
  }
}

TEST(DataPathScenarioTest, CsvFilesUnderFaultsMatchGroundTruth) { RunStorage("csv"); }

TEST(DataPathScenarioTest, CanalJsonFilesUnderFaultsMatchGroundTruth) { RunStorage("canal-json"); }

}  // namespace
}  // namespace sluice
