// Node: one Sluice node's data plane and its control endpoints, everything
// below the coordinator: the changefeed paths (PathRegistry), the dispatcher
// orchestrator with the production dispatcher factory, the message center,
// NodeControl (the dispatcher-manager side of the control protocol) and
// the MaintainerHost (the maintainer-manager side). The server puts the
// metastore, the coordinator and the API on top; tests and benchmarks run
// changefeeds through the same node by sending the coordinator's requests
// to host() themselves.
//
// Ownership: the PD client, region cache and puller in `deps` are borrowed
// and must outlive the node. Threads: those of its parts; Start() and
// Stop() from the owner's thread, the rest is thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/strong_id.h"
#include "common/thread_annotations.h"
#include "coordinator/interfaces.h"
#include "dispatchermanager/dispatcher_orchestrator.h"
#include "messaging/message_center_impl.h"
#include "node/changefeed_path.h"
#include "node/dispatcher_factory_impl.h"
#include "node/maintainer_host.h"
#include "node/node_control.h"

namespace sluice::node {

struct NodeOptions {
  NodeId self;
  PathDeps deps;
  // The changefeed's info by "<namespace>/<name>" (the metastore).
  ChangefeedLookup lookup;
  Clock* clock = Clock::Real();
  // Carries messages to the other nodes (borrowed; must outlive the node).
  // Null: a single node, messages to other nodes are refused.
  messaging::Transport* transport = nullptr;
  // The live nodes this node's maintainers spread dispatchers over (the
  // server's view of the registered captures); must not block. Null: this
  // node only.
  std::function<std::vector<NodeId>()> alive_nodes;
};

class Node {
 public:
  // Builds the parts and starts the message center. kInvalidArgument for a
  // missing id, lookup or upstream part.
  static Result<std::unique_ptr<Node>> Create(NodeOptions options);
  ~Node();  // Stop()s.
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // Starts the dispatcher-manager side only: maintainers on any node may
  // bootstrap and schedule dispatchers here. Idempotent.
  Status StartControl();
  // Starts the maintainer host, which reports to `statuses` (borrowed; must
  // outlive Stop()), and the node control.
  Status Start(coordinator::MaintainerStatusListener* statuses);
  // The maintainers report once more, the control endpoints stop, then the
  // dispatcher managers close their dispatchers and every data path closes
  // its sink. Idempotent.
  void Stop();

  // The node lost its session (local fence): at once, no dispatcher hands
  // another row or DDL to its sink (in-flight sink batches may finish), no
  // maintainer acts or reports, and later control requests are dropped.
  // Stop() still follows to release everything. Idempotent; any thread,
  // also while Stop() runs; never blocks on a request in progress.
  void LocalFence() EXCLUDES(parts_mu_);

  // Where the coordinator's add/remove maintainer requests go.
  MaintainerHost* host() const { return host_.get(); }
  PathRegistry* registry() const { return registry_.get(); }
  const NodeId& self() const { return options_.self; }

 private:
  explicit Node(NodeOptions options) : options_(std::move(options)) {}
  Status Init();

  const NodeOptions options_;
  std::unique_ptr<PathRegistry> registry_;
  std::unique_ptr<PathFactoryProvider> provider_;
  std::unique_ptr<dispatchermanager::DispatcherOrchestrator> orchestrator_;
  std::unique_ptr<messaging::MessageCenterImpl> center_;
  std::unique_ptr<NodeControl> control_;
  std::unique_ptr<MaintainerHost> host_;
  bool control_started_ = false;
  bool stopped_ = false;
  // Held by LocalFence() and by Stop() while it drops the parts, so that a
  // fence from another thread never meets a part being destroyed.
  Mutex parts_mu_;
};

}  // namespace sluice::node
