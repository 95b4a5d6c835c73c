#include "datapath/scenario_fixture.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <mysql.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <sstream>
#include <thread>

#include "checker/expected.h"
#include "checker/mysql_reader.h"
#include "logpuller/puller_workload.h"
#include "simkv/sql_render.h"
#include "simkv/workload_test_util.h"
#include "sink/sink_uri.h"

namespace sluice::testing {

namespace {

const logpuller::testing::ScenarioShape kFaultShape{40, 100, 300};

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

std::string UniqueChangefeedId(uint64_t seed) {
  static std::atomic<uint64_t> counter{0};
  return fmt::format("default/scenario-{}-{}-{}", getpid(), seed, counter.fetch_add(1));
}

}  // namespace

simkv::WorkloadOptions ScenarioWorkload(uint64_t seed, const std::string& database) {
  simkv::WorkloadOptions w;
  w.seed = seed;
  w.database = database + logpuller::testing::ScenarioTagSuffix();
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

simkv::WorkloadOptions PlainScenarioWorkload(uint64_t seed, const std::string& database) {
  simkv::WorkloadOptions w = ScenarioWorkload(seed, database);
  w.kitchen_sink_table = false;
  w.clustered_table = false;
  w.ddl_every = 0;
  w.ddl_list.clear();
  return w;
}

DataPathScenario::DataPathScenario(uint64_t seed, simkv::WorkloadOptions workload)
    : seed_(seed), options_(std::move(workload)), changefeed_id_(UniqueChangefeedId(seed)) {}

void DataPathScenario::SetUpCluster() {
  logpuller::testing::PullerEnvOptions options;
  options.client = puller;
  auto env = logpuller::testing::PullerEnv::Start(options);
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  env_ = std::move(env).value();
  workload_ =
      std::make_unique<simkv::Workload>(&env_->cluster->mvcc(), &env_->cluster->tso(), options_);
  ASSERT_TRUE(workload_->Setup().ok());
  auto start = env_->pd->GetTs();
  ASSERT_TRUE(start.ok());
  start_ = *start;
  // The database name carries the registration's tag, so the directory is
  // apart too.
  dir_ = ::testing::TempDir() + "/datapath_" + options_.database + "_" + std::to_string(seed_);
  std::filesystem::remove_all(dir_);
}

Status DataPathScenario::PrepareMysql(const std::string& uri) {
  std::vector<std::string> sql = {"DROP DATABASE IF EXISTS " + simkv::QuoteName(options_.database),
                                  "CREATE DATABASE " + simkv::QuoteName(options_.database)};
  for (const simkv::WorkloadTable& t : workload_->Tables()) {
    sql.push_back("USE " + simkv::QuoteName(t.database));
    sql.push_back(simkv::CreateTableSql(t.info));
  }
  return checker::ExecSql(uri, sql);
}

Result<std::unique_ptr<ChangefeedRunner>> DataPathScenario::StartPath(
    const std::string& sink_uri, Ts start, std::shared_ptr<rocksdb::Env> store_env) {
  RunnerOptions o;
  if (store_env != nullptr) {
    o.store_env = std::move(store_env);
    o.store_memtable_bytes = 256 << 10;  // Flushes, and so disk writes, come often.
  }
  o.data_dir = dir_;
  o.changefeed = changefeed_id_;
  o.sink_uri = sink_uri;
  o.start_ts = start;
  o.pd = env_->pd.get();
  o.cache = env_->cache.get();
  o.puller = env_->client.get();
  return ChangefeedRunner::Start(std::move(o));
}

void DataPathScenario::RunWorkload(int steps, const std::function<void()>& mid, bool faults) {
  logpuller::testing::Progress progress;
  std::thread fault_thread;
  if (faults) {
    fault_thread = std::thread(
        [&] { logpuller::testing::RunFaults(*env_->cluster, kFaultShape, seed_, progress); });
  }
  for (int i = 0; i < steps; ++i) {
    Status s = workload_->Step();
    ASSERT_TRUE(s.ok()) << s.ToString();
    progress.Add();
    if (i == steps / 2 && mid) mid();
  }
  progress.Done();
  if (fault_thread.joinable()) fault_thread.join();
  ASSERT_TRUE(logpuller::testing::HealCluster(*env_->cluster).ok());
  ASSERT_TRUE(workload_->CommitLongTxns().ok());
}

Result<Ts> DataPathScenario::WaitCaughtUp(ChangefeedRunner& path,
                                          std::chrono::milliseconds timeout) {
  ASSIGN_OR_RETURN(Ts now, env_->pd->GetTs());
  RETURN_IF_ERROR(path.WaitCheckpoint(now, timeout));
  return path.checkpoint();
}

Result<checker::DatabaseState> DataPathScenario::Expected(Ts ts) {
  ASSIGN_OR_RETURN(kvclient::MetaSnapshot meta, MetaAt(env_->cluster->mvcc(), ts));
  return checker::ExpectedState(env_->truth, meta, ts);
}

Result<checker::DatabaseState> DataPathScenario::ExpectedTables(
    Ts ts, const std::function<bool(const checker::TableName&)>& keep) {
  ASSIGN_OR_RETURN(checker::DatabaseState all, Expected(ts));
  checker::DatabaseState out;
  for (auto& [name, data] : all) {
    if (keep(name)) out.emplace(name, std::move(data));
  }
  return out;
}

void DataPathScenario::TearDown() {
  workload_.reset();
  if (env_ != nullptr) env_->Stop();
}

void CheckMysql(DataPathScenario& sc, const std::string& uri, Ts ts, size_t min_tables) {
  auto expected = sc.Expected(ts);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  auto actual = checker::ReadMysqlState(uri, *expected, {sc.database()});
  ASSERT_TRUE(actual.ok()) << actual.status().ToString();
  checker::DiffReport report = checker::Compare(*expected, *actual);
  std::ostringstream out;
  report.Print(out);
  EXPECT_TRUE(report.ok()) << out.str();
  EXPECT_GE(report.tables_compared, min_tables);
  EXPECT_GT(report.rows_compared, 0u);
  auto at_start = sc.Expected(sc.start());
  ASSERT_TRUE(at_start.ok());
  EXPECT_FALSE(checker::Compare(*at_start, *actual).ok());
}

}  // namespace sluice::testing
