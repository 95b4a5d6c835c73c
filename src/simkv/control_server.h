// ControlServer: simkv's HTTP control API on loopback (cpp-httplib, JSON
// bodies). Reports the cluster, starts and stops the workload, injects
// faults, splits, merges and moves leaders, and dumps the ground truth while
// the cluster runs. Errors answer 4xx/5xx with TiCDC's API error shape
// {"error_code": "...", "error_msg": "..."}; bad input never changes the
// cluster. README.md ("Control") lists the endpoints.
//
// Ownership: the cluster, workload (may be null), ground truth and fault
// schedule are not owned and must outlive the server. Threads: httplib's
// listener and worker threads, owned by Start() and joined by Stop(); the
// handlers call the (thread-safe) objects; the workload's run state is
// guarded by one mutex.
#pragma once

#include <memory>
#include <string>

#include "common/lifecycle.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "simkv/fault_schedule.h"
#include "simkv/ground_truth.h"
#include "simkv/sim_cluster.h"
#include "simkv/workload.h"

namespace httplib {
class Server;
}

namespace sluice::simkv {

struct ControlServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0 = ephemeral.
};

class ControlServer {
 public:
  ControlServer(SimCluster* cluster, Workload* workload, GroundTruth* truth, FaultSchedule* faults);
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  // Binds and starts listening; the bound "host:port" is address().
  Status Start(const ControlServerOptions& options);
  // Stops the listener and joins its thread; stops a running workload.
  void Stop() EXCLUDES(mu_);
  std::string address() const { return address_; }

  // Starts the workload on its owned thread (no-op if running).
  Status StartWorkload(RunLimit limit) EXCLUDES(mu_);
  // Stops it; returns its status.
  Status StopWorkload() EXCLUDES(mu_);
  bool workload_running() const EXCLUDES(mu_);

 private:
  void RegisterRoutes();

  SimCluster* const cluster_;
  Workload* const workload_;
  GroundTruth* const truth_;
  FaultSchedule* const faults_;
  std::unique_ptr<httplib::Server> server_;
  std::unique_ptr<OwnedThread> thread_;
  std::string address_;

  mutable Mutex mu_;
  bool running_ GUARDED_BY(mu_) = false;
};

}  // namespace sluice::simkv
