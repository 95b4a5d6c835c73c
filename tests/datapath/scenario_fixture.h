// Shared pieces of the data-path scenario tests: a simkv cluster with the
// TiDB-like workload, the data path started on it, the downstream MariaDB
// prepared and read back, and the ground truth at a ts.
//
// Each scenario owns one workload database (a different name per test
// binary, and per registration of a binary through SLUICE_SCENARIO_TAG, so
// tests can run side by side against one MariaDB), a scratch directory named
// after that database, and one
// changefeed id (unique per scenario, kept across its restarts, so the
// sink's ddl_ts rows of one run never leak into another).
//
// Not thread-safe: one test thread drives a scenario.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "checker/table_state.h"
#include "common/status.h"
#include "common/strong_id.h"
#include "datapath/changefeed_runner.h"
#include "logpuller/puller_test_util.h"
#include "simkv/workload.h"

namespace sluice::testing {

// The workload of the scenarios: two narrow tables, the kitchen-sink table
// of every column type, a clustered table and a fixed list of DDLs.
simkv::WorkloadOptions ScenarioWorkload(uint64_t seed, const std::string& database);

// ScenarioWorkload without the kitchen-sink and clustered tables and
// without scheduled DDLs: two plain tables and DML; a test runs its own DDLs.
simkv::WorkloadOptions PlainScenarioWorkload(uint64_t seed, const std::string& database);

class DataPathScenario {
 public:
  DataPathScenario(uint64_t seed, simkv::WorkloadOptions workload);

  // Starts the cluster, creates the workload's tables, takes the start ts.
  void SetUpCluster();
  // Drops the workload database downstream and creates the tables as they
  // are at the start ts, as a user loads them before a changefeed starts.
  Status PrepareMysql(const std::string& uri);
  // Runs the scenario's changefeed from `start` into `sink_uri` on the
  // shipping node. `store_env`: the event store's RocksDB environment (null:
  // the default); with one, the store also flushes often so that its disk
  // is used.
  Result<std::unique_ptr<ChangefeedRunner>> StartPath(const std::string& sink_uri, Ts start,
                                                      std::shared_ptr<rocksdb::Env> store_env = {});
  // Runs `steps` workload steps, with faults alongside when `faults`; `mid`
  // (if set) runs once halfway. Heals the cluster and commits long
  // transactions at the end.
  void RunWorkload(int steps, const std::function<void()>& mid, bool faults = true);
  // Waits until `path`'s checkpoint passes a ts taken now (every commit so
  // far is in the sink) and returns the checkpoint; the path's error, or
  // Timeout after `timeout`.
  Result<Ts> WaitCaughtUp(ChangefeedRunner& path, std::chrono::milliseconds timeout);
  // The ground truth of every user table at `ts`.
  Result<checker::DatabaseState> Expected(Ts ts);
  // The ground truth at `ts` of the tables `keep` accepts.
  Result<checker::DatabaseState> ExpectedTables(
      Ts ts, const std::function<bool(const checker::TableName&)>& keep);
  void TearDown();

  // The puller's options; set before SetUpCluster().
  logpuller::SubscriptionClientOptions puller;

  uint64_t seed() const { return seed_; }
  Ts start() const { return start_; }
  const std::string& dir() const { return dir_; }
  const std::string& changefeed_id() const { return changefeed_id_; }
  const std::string& database() const { return options_.database; }
  logpuller::testing::PullerEnv& env() { return *env_; }
  simkv::Workload& workload() { return *workload_; }

 private:
  const uint64_t seed_;
  const simkv::WorkloadOptions options_;
  const std::string changefeed_id_;
  std::unique_ptr<logpuller::testing::PullerEnv> env_;
  std::unique_ptr<simkv::Workload> workload_;
  Ts start_;
  std::string dir_;
};

// Compares the MariaDB at `uri` with the ground truth at `ts`: zero
// differences, at least three tables and some rows compared, and a
// different state at the start ts (the check sees the workload's rows).
void CheckMysql(DataPathScenario& sc, const std::string& uri, Ts ts, size_t min_tables = 3);

}  // namespace sluice::testing
