// The whole changefeed data path on the shipping node (the real maintainer,
// dispatcher orchestrator and changefeed path) against simkv under its TiDB-like workload
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

#include <random>
#include <sstream>

#include "checker/storage_state.h"
#include "datapath/scenario_fixture.h"
#include "eventstore/fault_file_system.h"
#include "logpuller/puller_workload.h"
#include "sink/storage/storage_sink.h"

namespace sluice {
namespace {

using testing::CheckMysql;
using testing::DataPathScenario;
constexpr auto kWait = std::chrono::seconds(90);
const char kDatabase[] = "workload";

TEST(DataPathScenarioTest, MysqlUnderFaultsMatchesGroundTruth) {
  const char* uri = std::getenv("SLUICE_TEST_MYSQL");
  if (uri == nullptr) GTEST_SKIP() << "SLUICE_TEST_MYSQL is not set";
  for (uint64_t seed : logpuller::testing::ScenarioSeeds()) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    DataPathScenario sc(seed, testing::ScenarioWorkload(seed, kDatabase));
    sc.SetUpCluster();
    ASSERT_TRUE(sc.PrepareMysql(uri).ok());
    auto path = sc.StartPath(uri, sc.start());
    ASSERT_TRUE(path.ok()) << path.status().ToString();
    const uint64_t ddls_at_start = sc.workload().stats().ddls;
    sc.RunWorkload(120, nullptr);
    // DDLs ran while the changefeed did: its barriers carried them (the
    // check below finds the tables they created, with their rows).
    EXPECT_GT(sc.workload().stats().ddls, ddls_at_start);
    auto ckpt = sc.WaitCaughtUp(**path, kWait);
    ASSERT_TRUE(ckpt.ok()) << ckpt.status().ToString();
    (*path)->Stop();
    CheckMysql(sc, uri, *ckpt);
    sc.TearDown();
  }
}

// The event store's disk fails for a while mid-run: writes refused after
// failed flushes reach the puller as failures, the affected subscriptions
// restart from their last published resolved ts, and once the disk works
// again everything arrives, exactly once in effect, in MariaDB.
TEST(DataPathScenarioTest, MysqlOnAFailingEventStoreDiskMatchesGroundTruth) {
  const char* uri = std::getenv("SLUICE_TEST_MYSQL");
  if (uri == nullptr) GTEST_SKIP() << "SLUICE_TEST_MYSQL is not set";
  uint64_t seed = logpuller::testing::ScenarioSeeds().front() + 200;
  DataPathScenario sc(seed, testing::ScenarioWorkload(seed, kDatabase));
  sc.SetUpCluster();
  ASSERT_TRUE(sc.PrepareMysql(uri).ok());
  auto disk = std::make_shared<eventstore::testing::FaultFileSystem>();
  auto path = sc.StartPath(uri, sc.start(), eventstore::testing::FaultFileSystem::NewEnv(disk));
  ASSERT_TRUE(path.ok()) << path.status().ToString();
  sc.RunWorkload(
      60, [&] { disk->Arm(); }, /*faults=*/false);
  // Writes go on while the disk fails, until the store has refused some.
  for (int i = 0; i < 200 && (*path)->store_stats().write_failures == 0; ++i) {
    sc.RunWorkload(10, nullptr, /*faults=*/false);
  }
  EXPECT_GT(disk->failures(), 0u);
  EXPECT_GT((*path)->store_stats().write_failures, 0u);
  disk->Disarm();
  sc.RunWorkload(60, nullptr);
  auto ckpt = sc.WaitCaughtUp(**path, kWait);
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().ToString();
  EXPECT_TRUE((*path)->status().ok()) << (*path)->status().ToString();
  (*path)->Stop();
  CheckMysql(sc, uri, *ckpt);
  sc.TearDown();
}

// Writers die between prewrite and commit while the workload goes on, half
// of them right after committing their primary: their locks hold the spans'
// resolved ts until the puller finds them stuck and resolves the locks
// (rolling back or committing each transaction as its primary says);
// replication then resumes and MariaDB matches the store.
TEST(DataPathScenarioTest, MysqlWithWritersThatDieMatchesGroundTruth) {
  const char* uri = std::getenv("SLUICE_TEST_MYSQL");
  if (uri == nullptr) GTEST_SKIP() << "SLUICE_TEST_MYSQL is not set";
  uint64_t seed = logpuller::testing::ScenarioSeeds().front() + 300;
  DataPathScenario sc(seed, testing::PlainScenarioWorkload(seed, kDatabase));
  sc.puller.resolve_lock_check_interval = std::chrono::milliseconds(200);
  sc.puller.stuck.resolve_lock_after = std::chrono::seconds(1);
  sc.puller.stuck.resolve_lock_interval = std::chrono::seconds(1);
  sc.SetUpCluster();
  ASSERT_TRUE(sc.PrepareMysql(uri).ok());
  auto path = sc.StartPath(uri, sc.start());
  ASSERT_TRUE(path.ok()) << path.status().ToString();
  sc.RunWorkload(60, [&] {
    for (int i = 0; i < 6; ++i) {
      Result<Ts> orphan = sc.workload().AbandonTxn(/*commit_primary=*/i % 2 == 1, 300);
      ASSERT_TRUE(orphan.ok()) << orphan.status().ToString();
    }
  });
  EXPECT_EQ(sc.workload().stats().abandoned, 6u);
  // Resolution within seconds of being stuck, not the scenario's long wait.
  auto ckpt = sc.WaitCaughtUp(**path, std::chrono::seconds(30));
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().ToString();
  const logpuller::SubscriptionClient::Stats stats = sc.env().client->stats();
  EXPECT_GE(stats.txns_resolved, 6u);
  EXPECT_EQ(sc.env().cluster->mvcc().Stats().locks, 0u);
  (*path)->Stop();
  CheckMysql(sc, uri, *ckpt, /*min_tables=*/2);
  sc.TearDown();
}

TEST(DataPathScenarioTest, MysqlRestartFromCheckpointMatchesGroundTruth) {
  const char* uri = std::getenv("SLUICE_TEST_MYSQL");
  if (uri == nullptr) GTEST_SKIP() << "SLUICE_TEST_MYSQL is not set";
  uint64_t seed = logpuller::testing::ScenarioSeeds().front() + 100;
  DataPathScenario sc(seed, testing::ScenarioWorkload(seed, kDatabase));
  sc.SetUpCluster();
  ASSERT_TRUE(sc.PrepareMysql(uri).ok());
  auto path = sc.StartPath(uri, sc.start());
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
    path = sc.StartPath(uri, restart_at);
    ASSERT_TRUE(path.ok()) << path.status().ToString();
  });
  ASSERT_TRUE(path.ok());
  ASSERT_GE(restart_at, sc.start());
  auto ckpt = sc.WaitCaughtUp(**path, kWait);
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().ToString();
  (*path)->Stop();
  CheckMysql(sc, uri, *ckpt);
  sc.TearDown();
}

// A restart from a checkpoint older than DDLs the downstream already ran
// (the checkpoint is the minimum over tables, so one table can be far ahead):
// the sink's ddl_ts records move each table, and the table trigger, past
// them, so rows from before a DROP COLUMN are not replayed against the new
// table, and a table created after the checkpoint is still replicated.
TEST(DataPathScenarioTest, MysqlRestartBehindExecutedDdlsSkipsTheirOldRows) {
  const char* uri = std::getenv("SLUICE_TEST_MYSQL");
  if (uri == nullptr) GTEST_SKIP() << "SLUICE_TEST_MYSQL is not set";
  DataPathScenario sc(11, testing::PlainScenarioWorkload(11, kDatabase));
  sc.SetUpCluster();
  ASSERT_TRUE(sc.PrepareMysql(uri).ok());
  auto path = sc.StartPath(uri, sc.start());
  ASSERT_TRUE(path.ok()) << path.status().ToString();
  sc.RunWorkload(20, nullptr, /*faults=*/false);
  const std::string table = sc.workload().Tables().front().info.name.original;
  simkv::DdlRequest drop;
  drop.kind = simkv::DdlKind::kDropColumn;
  drop.table = table;
  drop.column = "c";
  ASSERT_TRUE(sc.workload().RunDdl(drop).ok());
  simkv::DdlRequest create;
  create.kind = simkv::DdlKind::kCreateTable;
  create.shape = simkv::TableShape::kNarrow;
  ASSERT_TRUE(sc.workload().RunDdl(create).ok());
  sc.RunWorkload(20, nullptr, /*faults=*/false);
  ASSERT_TRUE(sc.WaitCaughtUp(**path, kWait).ok());
  (*path)->Stop();

  // As if the checkpoint had not been persisted past the start.
  path = sc.StartPath(uri, sc.start());
  ASSERT_TRUE(path.ok()) << path.status().ToString();
  sc.RunWorkload(20, nullptr, /*faults=*/false);
  auto ckpt = sc.WaitCaughtUp(**path, kWait);
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().ToString();
  (*path)->Stop();
  CheckMysql(sc, uri, *ckpt);
  sc.TearDown();
}

// A restart from behind a DDL the downstream already ran, with a barrier
// DDL (TRUNCATE TABLE) right after it: the table trigger resumes past the
// checkpoint, so the maintainer finishes its bootstrap only once the schema
// store has the tables at the trigger's start, and the trigger reaches the
// barrier before that. The WAITING status it reported then was dropped; the
// node resends it until the barrier runs, so the changefeed goes on.
TEST(DataPathScenarioTest, MysqlRestartRightBeforeABarrierDdlGoesOn) {
  const char* uri = std::getenv("SLUICE_TEST_MYSQL");
  if (uri == nullptr) GTEST_SKIP() << "SLUICE_TEST_MYSQL is not set";
  DataPathScenario sc(13, testing::PlainScenarioWorkload(13, kDatabase));
  sc.SetUpCluster();
  ASSERT_TRUE(sc.PrepareMysql(uri).ok());
  simkv::DdlRequest create;
  create.kind = simkv::DdlKind::kCreateTable;
  create.shape = simkv::TableShape::kNarrow;
  ASSERT_TRUE(sc.workload().RunDdl(create).ok());
  auto path = sc.StartPath(uri, sc.start());
  ASSERT_TRUE(path.ok()) << path.status().ToString();
  ASSERT_TRUE(sc.WaitCaughtUp(**path, kWait).ok());
  (*path)->Stop();

  simkv::DdlRequest truncate;
  truncate.kind = simkv::DdlKind::kTruncateTable;
  truncate.table = sc.workload().Tables().front().info.name.original;
  ASSERT_TRUE(sc.workload().RunDdl(truncate).ok());
  path = sc.StartPath(uri, sc.start());
  ASSERT_TRUE(path.ok()) << path.status().ToString();
  sc.RunWorkload(20, nullptr, /*faults=*/false);
  auto ckpt = sc.WaitCaughtUp(**path, std::chrono::seconds(30));
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().ToString();
  (*path)->Stop();
  CheckMysql(sc, uri, *ckpt, /*min_tables=*/3);
  sc.TearDown();
}

void RunStorage(const std::string& protocol) {
  for (uint64_t seed : logpuller::testing::ScenarioSeeds()) {
    SCOPED_TRACE("seed " + std::to_string(seed) + " " + protocol);
    DataPathScenario sc(seed, testing::ScenarioWorkload(seed, kDatabase));
    sc.SetUpCluster();
    std::string root = sc.dir() + "/out-" + protocol;
    const std::string sink_uri =
        "file://" + root + "?protocol=" + protocol + "&flush-interval=200ms&file-size=4KB";
    auto uri = sink::SinkUri::Parse(sink_uri);
    ASSERT_TRUE(uri.ok());
    auto options = sink::storage::StorageSinkOptions::FromUri(*uri);
    ASSERT_TRUE(options.ok()) << options.status().ToString();
    auto path = sc.StartPath(sink_uri, sc.start());
    ASSERT_TRUE(path.ok()) << path.status().ToString();
    sc.RunWorkload(120, nullptr);
    auto ckpt = sc.WaitCaughtUp(**path, kWait);
    ASSERT_TRUE(ckpt.ok()) << ckpt.status().ToString();
    (*path)->Stop();
    auto expected = sc.Expected(*ckpt);
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
    auto at_start = sc.Expected(sc.start());
    ASSERT_TRUE(at_start.ok());
    EXPECT_FALSE(checker::Compare(*at_start, *actual).ok());
    sc.TearDown();
  }
}

TEST(DataPathScenarioTest, CsvFilesUnderFaultsMatchGroundTruth) { RunStorage("csv"); }

TEST(DataPathScenarioTest, CanalJsonFilesUnderFaultsMatchGroundTruth) { RunStorage("canal-json"); }

}  // namespace
}  // namespace sluice
