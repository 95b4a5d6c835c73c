// MaintainerHost: this node's maintainer manager (TiCDC
// maintainer/maintainer_manager.go).
//
//  - The coordinator's AddMaintainer/RemoveMaintainer requests are queued
//    (never blocking, never calling back) and applied on the host thread: a
//    new generation first opens its data path (on the opener thread: it
//    connects to the sink) and reads the changefeed's tables at its
//    checkpoint (retried each tick until the schema store has reached it),
//    then bootstraps. A newer generation of a changefeed starts only once
//    the older one has closed its dispatchers.
//  - Maintainer requests go out through the MessageCenter to the
//    dispatcher-manager topic of their node (NodeControl); answers,
//    heartbeats and block statuses come back on the maintainer-manager topic
//    and are applied on the host thread to the generation (changefeed,
//    epoch) they are for.
//  - Each tick the host ticks every maintainer and reports its checkpoint,
//    state and the data path's first error to the coordinator.
//
// Threads: two owned threads (host, opener), joined in Stop(); the topic
// handler runs on the MessageCenter's delivery thread and only queues work.
// The public methods are thread-safe. The coordinator is called only from
// the host thread and never with the host's lock held.
#pragma once

#include <atomic>
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
#include "coordinator/interfaces.h"
#include "dispatchermanager/dispatcher_orchestrator.h"
#include "maintainer/maintainer.h"
#include "messaging/message_center.h"
#include "node/changefeed_path.h"

namespace sluice::node {

struct MaintainerHostOptions {
  NodeId self;
  messaging::MessageCenter* center = nullptr;  // Borrowed.
  Clock* clock = Clock::Real();
  PathRegistry* registry = nullptr;                                   // Borrowed.
  dispatchermanager::DispatcherOrchestrator* orchestrator = nullptr;  // Borrowed.
  std::chrono::milliseconds tick_interval{50};
  std::chrono::milliseconds move_timeout{5000};
  // The live nodes the maintainers may place dispatchers on (the registered
  // captures); read every round, must not block. Null: this node only.
  std::function<std::vector<NodeId>()> alive_nodes;
  Registry* metrics = Registry::Default();  // Borrowed.
};

class MaintainerHost final : public coordinator::MaintainerManagerClient {
 public:
  explicit MaintainerHost(MaintainerHostOptions options);
  ~MaintainerHost() override;  // Stop()s.

  // Where the maintainers' statuses go (the coordinator); set before
  // Start().
  void SetStatusListener(coordinator::MaintainerStatusListener* listener) { statuses_ = listener; }
  // Registers the maintainer-manager topic and starts the threads.
  Status Start();
  // Reports every maintainer's checkpoint one last time (graceful
  // shutdown), then stops and joins the threads and drops the maintainers.
  void Stop() EXCLUDES(mu_);

  Status AddMaintainer(const NodeId& node,
                       const coordinator::AddMaintainerRequest& request) override EXCLUDES(mu_);
  Status RemoveMaintainer(const NodeId& node,
                          const coordinator::RemoveMaintainerRequest& request) override
      EXCLUDES(mu_);
  // Runs the move on the host thread and waits (up to `move_timeout`) for
  // the maintainer's answer. Not to be called from the host thread.
  Status MoveTable(const NodeId& node, const coordinator::MoveTableRequest& request) override
      EXCLUDES(mu_);

  // Runs one host round now on the caller's thread (tests, final report).
  void RunOnce();

  // The node lost its session: from now on no maintainer ticks, sends or
  // reports anything, and incoming messages are dropped. Idempotent; any
  // thread; never blocks.
  void Fence() { fenced_.store(true, std::memory_order_release); }
  bool fenced() const { return fenced_.load(std::memory_order_acquire); }

 private:
  class Outbox;
  struct Hosted {
    coordinator::AddMaintainerRequest request;
    std::shared_ptr<ChangefeedPath> path;
    std::unique_ptr<Outbox> outbox;
    std::unique_ptr<maintainer::Maintainer> maintainer;  // Null until created.
    Status start_error;
    // The first error a dispatcher manager on another node reported for
    // this generation's data path there.
    Status remote_error;
    bool closing = false;
    bool opening = false;  // The path is being opened on the opener thread.
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
  // The maintainer-manager topic: answers, heartbeats and block statuses
  // from the dispatcher managers, applied on the host thread to the
  // generation they are for.
  Status Handle(const messaging::TargetMessage& msg);
  // Decodes `msg` as Pb and applies `apply` (a Maintainer member taking
  // the sender and the decoded message) on the host thread.
  template <typename Pb, typename Apply>
  Status Route(const messaging::TargetMessage& msg, Apply apply);
  void Report(const std::string& changefeed, Hosted* h);
  // Tells every maintainer about nodes that joined or left since the last
  // round.
  void SyncNodes();
  void Export(const coordinator::MaintainerStatus& status);
  Hosted* Find(const std::string& changefeed, MaintainerEpoch epoch);

  const MaintainerHostOptions options_;
  coordinator::MaintainerStatusListener* statuses_ = nullptr;
  // TiCDC's names, so that existing dashboards read them:
  // ticdc_owner_checkpoint_ts{namespace,changefeed} (physical ms) and
  // ticdc_owner_checkpoint_ts_lag{namespace,changefeed} (seconds).
  GaugeFamily* checkpoint_gauge_;
  GaugeFamily* lag_gauge_;
  std::shared_ptr<Gauge> maintainers_gauge_;

  mutable Mutex mu_;
  CondVar cv_;
  std::deque<Task> tasks_ GUARDED_BY(mu_);       // For the host thread.
  std::deque<Task> deliveries_ GUARDED_BY(mu_);  // For the opener thread.
  bool stopped_ GUARDED_BY(mu_) = false;
  std::atomic<bool> fenced_{false};

  // Host thread only (and RunOnce, which the owner calls only while the
  // host thread is not running).
  std::map<std::string, Hosted> hosted_;
  std::set<NodeId> nodes_;  // The live nodes as of the last round.

  OwnedThread host_thread_;
  OwnedThread delivery_thread_;
};

}  // namespace sluice::node
