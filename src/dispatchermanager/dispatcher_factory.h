// The seams between a dispatcher manager and the dispatchers and sink it
// owns. The production implementation wraps dispatcher::EventDispatcher and
// dispatcher::TableTriggerDispatcher over the changefeed's sink; tests use a
// stateful fake that records what it created and fails on command.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "common/status.h"
#include "common/strong_id.h"
#include "dispatcher/block_status.h"
#include "dispatchermanager/messages.h"

namespace sluice::dispatchermanager {

// One live dispatcher, owned by its DispatcherManager. The manager calls it
// only while holding its fence mutex, so implementations need no locking of
// their own for these calls; they must not call back into the manager.
// Destroying a handle that has not finished closing closes the dispatcher
// without draining (a manager dropped after a failed bootstrap).
class DispatcherHandle {
 public:
  virtual ~DispatcherHandle() = default;

  virtual ComponentState state() const = 0;
  virtual Ts checkpoint_ts() const = 0;
  // Where the dispatcher started: above the requested start ts when the
  // sink already had what came before (a MySQL downstream's ddl_ts). The
  // default is the requested start ts.
  virtual Ts effective_start_ts() const { return Ts(); }

  // Table-trigger dispatchers only: installs the initial schemas and tables
  // (post-bootstrap). Returns WritePathClosed() once the write path is closed.
  virtual Status InitializeTables(const std::vector<SchemaInfo>& schemas) = 0;

  // Starts closing the dispatcher if it is not closing yet. Never blocks.
  // Returns true once it is fully closed and may be destroyed.
  virtual bool TryClose() = 0;

  // The WAITING status of the barrier event the dispatcher is held at, if
  // any (it is resent until the maintainer answers). Default: none.
  virtual std::optional<dispatcher::BlockStatus> pending_block_status() const {
    return std::nullopt;
  }
};

// Creates the dispatchers of one changefeed on this node over its sink.
// Owned by the DispatcherManager. Create() and OnOwnerChanged() are called
// under the manager's fence mutex; CloseWritePath() may be called from any
// thread at any time, including while another call is running.
class DispatcherFactory {
 public:
  virtual ~DispatcherFactory() = default;

  // Creates a table, table-trigger or redo dispatcher. Returns
  // WritePathClosed() once the write path is closed, or the creation error.
  virtual Result<std::unique_ptr<DispatcherHandle>> Create(const DispatcherConfig& config) = 0;

  // Local fence: stop writing downstream now, without draining. Later
  // creations fail with WritePathClosed(). Idempotent; must not block on the
  // manager.
  virtual void CloseWritePath() = 0;

  // The manager's owner is about to change to (owner, epoch): a bootstrap
  // of that generation was admitted. The sink moves its downstream fence to
  // `epoch` here; an error refuses the bootstrap (the maintainer retries)
  // and leaves the owner as it was. The default does nothing.
  virtual Status OnOwnerChanged(const NodeId& owner, MaintainerEpoch epoch) { return Status::Ok(); }
};

// Opens the sink of a changefeed on this node, once per dispatcher manager.
// Called by the orchestrator with the changefeed's request lock held;
// implementations must be thread-safe across changefeeds.
class FactoryProvider {
 public:
  virtual ~FactoryProvider() = default;

  // Returns WritePathClosed() if the node is shutting down, or the error of
  // opening the sink.
  virtual Result<std::unique_ptr<DispatcherFactory>> Open(const BootstrapRequest& request) = 0;
};

}  // namespace sluice::dispatchermanager
