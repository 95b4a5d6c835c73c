// MaintainerHost: this node's maintainer manager (TiCDC
// maintainer/maintainer_manager.go) plus the in-process delivery between
// the maintainers and the node's DispatcherOrchestrator.
//
//  - The coordinator's AddMaintainer/RemoveMaintainer requests are queued
//    (never blocking, never calling back) and applied on the host thread: a
//    new generation first opens its data path and reads the changefeed's
//    tables at its checkpoint (retried each tick until the schema store has
//    reached it), then bootstraps.
//  - Maintainer requests go through a delivery thread to the orchestrator;
//    the responses come back to the host thread stamped with the epoch that
//    sent them, so a response never reaches another generation.
//  - Each tick the host sends every maintainer a heartbeat built from its
//    changefeed's dispatcher manager (statuses and a watermark whose seq
//    grows when the dispatcher set changes), ticks it, and reports its
//    checkpoint, state and the data path's first error to the coordinator.
//
// Threads: two owned threads (host, delivery), joined in Stop(). The public
// methods are thread-safe. The coordinator is called only from the host
// thread and never with the host's lock held.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "common/clock.h"
#include "common/lifecycle.h"
#include "common/metrics.h"
#include "common/thread_annotations.h"
#include "coordinator/coordinator.h"
#include "coordinator/interfaces.h"
#include "dispatchermanager/dispatcher_orchestrator.h"
#include "maintainer/maintainer.h"
#include "server/changefeed_path.h"

namespace sluice::server {

struct MaintainerHostOptions {
  NodeId self;
  Clock* clock = Clock::Real();
  PathRegistry* registry = nullptr;                                   // Borrowed.
  dispatchermanager::DispatcherOrchestrator* orchestrator = nullptr;  // Borrowed.
  std::chrono::milliseconds tick_interval{50};
  Registry* metrics = Registry::Default();  // Borrowed.
};

class MaintainerHost final : public coordinator::MaintainerManagerClient {
 public:
  explicit MaintainerHost(MaintainerHostOptions options);
  ~MaintainerHost() override;  // Stop()s.

  // The coordinator statuses go to; set before Start().
  void SetCoordinator(coordinator::Coordinator* coordinator) { coordinator_ = coordinator; }
  void Start();
  // Reports every maintainer's checkpoint one last time (graceful
  // shutdown), then stops and joins the threads and drops the maintainers.
  void Stop() EXCLUDES(mu_);

  Status AddMaintainer(const NodeId& node,
                       const coordinator::AddMaintainerRequest& request) override EXCLUDES(mu_);
  Status RemoveMaintainer(const NodeId& node,
                          const coordinator::RemoveMaintainerRequest& request) override
      EXCLUDES(mu_);

  // A dispatcher's block status (from a data path).
  void OnBlockStatus(const std::string& changefeed, const dispatcher::BlockStatus& status)
      EXCLUDES(mu_);

  // Runs one host round now on the caller's thread (tests, final report).
  void RunOnce();

 private:
  class Outbox;
  struct Hosted {
    coordinator::AddMaintainerRequest request;
    std::shared_ptr<ChangefeedPath> path;
    std::unique_ptr<Outbox> outbox;
    std::unique_ptr<maintainer::Maintainer> maintainer;  // Null until created.
    Status start_error;
    std::set<DispatcherId> last_ids;  // For the watermark seq.
    uint64_t seq = 0;
    bool closing = false;
    bool opening = false;  // The path is being opened on the delivery thread.
    // A newer generation waits until this one has closed its dispatchers,
    // so two generations never write downstream at once.
    std::optional<coordinator::AddMaintainerRequest> next;
  };
  using Task = std::function<void()>;

  void Post(Task task) EXCLUDES(mu_);
  void Deliver(Task task) EXCLUDES(mu_);
  void HostLoop(const StopToken& token);
  void DeliveryLoop(const StopToken& token);
  void RunTasks() EXCLUDES(mu_);
  void TryCreate(Hosted* h);
  void Heartbeat(const std::string& changefeed, Hosted* h);
  void Report(const std::string& changefeed, Hosted* h);
  void Export(const coordinator::MaintainerStatus& status);
  Hosted* Find(const std::string& changefeed, MaintainerEpoch epoch);

  const MaintainerHostOptions options_;
  coordinator::Coordinator* coordinator_ = nullptr;
  // TiCDC's names, so that existing dashboards read them:
  // ticdc_owner_checkpoint_ts{namespace,changefeed} (physical ms) and
  // ticdc_owner_checkpoint_ts_lag{namespace,changefeed} (seconds).
  GaugeFamily* checkpoint_gauge_;
  GaugeFamily* lag_gauge_;
  std::shared_ptr<Gauge> maintainers_gauge_;

  mutable Mutex mu_;
  CondVar cv_;
  std::deque<Task> tasks_ GUARDED_BY(mu_);       // For the host thread.
  std::deque<Task> deliveries_ GUARDED_BY(mu_);  // For the delivery thread.
  bool stopped_ GUARDED_BY(mu_) = false;

  // Host thread only (and RunOnce, which the owner calls only while the
  // host thread is not running).
  std::map<std::string, Hosted> hosted_;

  OwnedThread host_thread_;
  OwnedThread delivery_thread_;
};

}  // namespace sluice::server
