// A fixture for tests that run the real binaries as processes: simkv (the
// upstream, with its workload and ground truth), one or more `sluice server`
// nodes and `sluice cli`, and `sluice-checker` for the verdict. MariaDB comes
// from scripts/services.sh (SLUICE_TEST_MYSQL); without it the tests skip.
//
// Threads: the test thread calls everything; the static helpers (API reads)
// may also be called from a monitor thread.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/tso.h"
#include "process/child_process.h"

namespace sluice::testing {

// One `sluice server` process.
struct ServerProcess {
  std::unique_ptr<ChildProcess> child;
  std::string api;      // "host:port" it printed.
  std::string name;     // Its data dir and log are named after it.
  std::string node_id;  // The node id it printed.
};

class E2eFixture : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // simkv, paused, with a fault schedule; `extra` flags are appended.
  void StartSimkv(std::vector<std::string> extra = {});
  // `sluice server --pd ... --data-dir <dir>/<name> extra...`; waits for
  // its "serving the API" line. Restarting a ServerProcess reuses its name.
  void StartServer(ServerProcess* server, const std::string& name,
                   std::vector<std::string> extra = {});
  // SIGTERM; the server must exit with 0 after its graceful shutdown.
  void StopServer(ServerProcess* server);

  // `sluice cli ARGS --server http://API`; expects exit code 0; stdout.
  std::string Cli(const std::string& api, std::vector<std::string> args);
  Ts Tso();

  // GET http://api/path as JSON; null when unreachable or not 200.
  static nlohmann::json GetJson(const std::string& api, const std::string& path);
  static nlohmann::json FeedStatus(const std::string& api, const std::string& id) {
    return GetJson(api, "/api/v2/changefeeds/" + id + "/status");
  }
  // Waits until the changefeed's checkpoint (read through `api`) reaches
  // `ts`; returns it (zero and a failure after `timeout`).
  Ts WaitCheckpoint(const std::string& api, const std::string& id, Ts ts,
                    std::chrono::seconds timeout = std::chrono::seconds(90));

  // Creates the workload's tables in MariaDB as they are at `ts`.
  void PrepareMysql(Ts ts);
  void StartWorkload();
  // Stops the workload and saves its ground truth for Check().
  void StopWorkload();
  // sluice-checker against the ground truth; expects 0 differences.
  void Check(const std::vector<std::string>& target, Ts ts);

  std::string database_ = "e2e";
  std::vector<int64_t> table_ids_;  // database_'s tables, set by PrepareMysql.
  std::string mysql_;
  std::string dir_;
  std::string pd_;
  std::string control_;
  std::unique_ptr<ChildProcess> simkv_;
};

}  // namespace sluice::testing
