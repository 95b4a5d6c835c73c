// NodeControl: this node's dispatcher-manager side of the control protocol
// over the MessageCenter (TiCDC's HeartBeatCollector and dispatcher
// orchestrator message handling). It
//  - handles the maintainers' requests on topic kDispatcherManagerTopic
//    (bootstrap, post-bootstrap, schedule, close, barrier actions) with the
//    DispatcherOrchestrator and answers each to the sender's
//    kMaintainerManagerTopic;
//  - sends every dispatcher manager's heartbeat (statuses and a watermark
//    whose seq grows when the manager's dispatcher set changes) to its
//    owner's node every `heartbeat_interval`;
//  - forwards the dispatchers' block statuses to the owner's node, and
//    resends the WAITING status of every dispatcher still held at a barrier
//    every `block_resend_interval` (as TiCDC's dispatchers resend until
//    answered): a status sent before the owner finished its bootstrap, or
//    lost, would otherwise hold the barrier forever.
// A barrier action is applied only if the manager's owner sent it.
//
// Threads: requests run on the topic's delivery thread; heartbeats on an
// owned thread joined in Stop(); block statuses on the dispatchers'
// threads. Every method is thread-safe.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>

#include "common/clock.h"
#include "common/lifecycle.h"
#include "common/metrics.h"
#include "common/thread_annotations.h"
#include "dispatcher/block_status.h"
#include "dispatchermanager/dispatcher_orchestrator.h"
#include "messaging/message_center.h"
#include "node/changefeed_path.h"

namespace sluice::node {

// Where the maintainers' requests go, and where their answers go.
inline constexpr std::string_view kDispatcherManagerTopic = "dispatcher-manager";
inline constexpr std::string_view kMaintainerManagerTopic = "maintainer-manager";

struct NodeControlOptions {
  messaging::MessageCenter* center = nullptr;                         // Borrowed.
  dispatchermanager::DispatcherOrchestrator* orchestrator = nullptr;  // Borrowed.
  PathRegistry* registry = nullptr;                                   // Borrowed.
  Clock* clock = Clock::Real();
  std::chrono::milliseconds heartbeat_interval{50};
  std::chrono::milliseconds block_resend_interval{1000};
};

class NodeControl {
 public:
  explicit NodeControl(NodeControlOptions options);
  ~NodeControl();  // Stop()s.

  // Registers the request handler and starts the heartbeats.
  Status Start();
  // Stops the heartbeats and removes the handler. Idempotent.
  void Stop();

  // A dispatcher's block status, forwarded to its manager's owner; dropped
  // once Stop() has begun.
  void OnBlockStatus(const std::string& changefeed, const dispatcher::BlockStatus& status);

  // Sends one round of heartbeats now (also the final round at shutdown).
  void SendHeartbeats() EXCLUDES(mu_);

 private:
  struct Seq {
    std::set<DispatcherId> ids;
    uint64_t seq = 0;
    Clock::TimePoint last_resend;  // Of the pending block statuses.
  };

  Status Handle(const messaging::TargetMessage& msg);
  Status HandleBarrierAction(const messaging::TargetMessage& msg);
  // Resends the WAITING statuses of the manager's dispatchers held at a
  // barrier, if `block_resend_interval` passed since the last resend.
  void ResendPendingBlocks(const dispatchermanager::DispatcherManager& manager) EXCLUDES(mu_);
  void ExportDispatchers(const std::map<std::string, size_t>& counts) EXCLUDES(mu_);
  template <typename Pb, typename Response>
  Status Answer(const messaging::TargetMessage& request, const std::optional<Response>& response);

  const NodeControlOptions options_;
  // Forwards one block status (OnBlockStatus, inside the gate).
  void Forward(const std::string& changefeed, const dispatcher::BlockStatus& status);

  Mutex mu_;
  // The gate of OnBlockStatus: Stop() closes it and waits for the calls in
  // flight, which run on the dispatchers' threads.
  Mutex gate_mu_;
  CondVar gate_cv_;
  bool accepting_ GUARDED_BY(gate_mu_) = true;
  int forwarding_ GUARDED_BY(gate_mu_) = 0;
  std::map<std::string, Seq> seqs_ GUARDED_BY(mu_);  // By changefeed.
  // sluice_table_dispatchers{namespace,changefeed}: the working table
  // dispatchers on this node; the changefeeds exported last round.
  GaugeFamily* const dispatchers_gauge_;
  std::set<std::string> exported_ GUARDED_BY(mu_);
  OwnedThread heartbeat_thread_;
  bool started_ = false;
};

}  // namespace sluice::node
