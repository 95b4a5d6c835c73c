// DispatcherManager: one per (changefeed, node) (TiCDC
// downstreamadapter/dispatchermanager). It owns the changefeed's dispatcher
// factory (and through it the sink), every dispatcher of the changefeed on
// this node, the ids of the table-trigger and redo-trigger dispatchers, the
// in-flight schedule operators with the (node, epoch) that issued them, and
// the maintainer fence.
//
// Promises:
//  - Every request is checked against the fence under one mutex, and its
//    effects happen under that same mutex: once a bootstrap of a newer
//    maintainer returns, no request of an older one changes anything.
//  - A reused manager never replaces its table-trigger (or redo-trigger)
//    dispatcher in place: a bootstrap naming another trigger id, or naming
//    none while a trigger exists, is refused with kAborted before ownership
//    moves (never two DDL owners). Only a bootstrap of a newer epoch than
//    the one that created or adopted the trigger, naming it in
//    replace_trigger_id, replaces it: the fence moves to the new owner
//    first (the old one is stale from then on), the old trigger is closed,
//    and the bootstrap is refused with kAborted until it has closed; only
//    then is a new trigger created.
//  - A bootstrap snapshot reports the owner's in-flight operators, and stale
//    remove operators whose dispatcher it still reports.
//  - Write path closed (local fence, shutdown) is returned as
//    WritePathClosed() and logged at info, never at error.
//
// Threads: every method may be called from any thread. Requests are
// serialized by the fence mutex (the orchestrator also serializes them per
// changefeed). LocalFence() never takes the fence mutex, so it may be called
// while a request is running, also from inside a factory call.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/thread_annotations.h"
#include "dispatchermanager/dispatcher_factory.h"
#include "dispatchermanager/maintainer_fence.h"
#include "dispatchermanager/messages.h"

namespace sluice::dispatchermanager {

class DispatcherManager {
 public:
  // A manager with no owner (epoch 0) and no dispatchers; the first
  // Bootstrap() takes ownership.
  DispatcherManager(std::string changefeed_id, bool redo_enabled,
                    std::unique_ptr<DispatcherFactory> factory);
  DispatcherManager(const DispatcherManager&) = delete;
  DispatcherManager& operator=(const DispatcherManager&) = delete;

  // Takes ownership for (from, epoch) if the fence allows it, checks and
  // creates the requested trigger dispatchers, and returns the snapshot.
  // Errors: kStaleOwner (fenced), kAborted (another trigger is present),
  // kInvalidArgument, WritePathClosed(), or the creation error.
  Result<BootstrapResponse> Bootstrap(const BootstrapRequest& request) EXCLUDES(fence_mu_);

  // Initializes the trigger dispatchers with the initial tables. Errors:
  // kStaleOwner, kNotFound (no table trigger), kAborted (another trigger id),
  // WritePathClosed() (also when the node is fenced meanwhile), or the
  // initialization error.
  Status PostBootstrap(const PostBootstrapRequest& request) EXCLUDES(fence_mu_);

  // Applies one create or remove operator of the owner. A stale operator
  // of an older owner for the same dispatcher is replaced. Errors:
  // kStaleOwner, kInvalidArgument, WritePathClosed(), or the creation error.
  Result<ScheduleResponse> Schedule(const ScheduleRequest& request) EXCLUDES(fence_mu_);

  // Closes every dispatcher for the owner. Returns true once all are closed
  // (the manager then refuses everything), false while some are still
  // closing. kStaleOwner if the request is not from the owner.
  Result<bool> Close(const CloseRequest& request) EXCLUDES(fence_mu_);

  // Statuses of all dispatchers (the heartbeat); finishes removals whose
  // dispatcher has closed meanwhile.
  std::vector<DispatcherStatus> CollectStatuses() EXCLUDES(fence_mu_);
  // The WAITING statuses of the working dispatchers held at a barrier.
  std::vector<dispatcher::BlockStatus> PendingBlockStatuses() const EXCLUDES(fence_mu_);

  // Closes the write path now, without draining. Idempotent. Never takes
  // the fence mutex.
  void LocalFence();
  bool fenced() const { return fenced_.load(std::memory_order_acquire); }

  const std::string& changefeed_id() const { return changefeed_id_; }
  NodeId owner() const EXCLUDES(fence_mu_);
  MaintainerEpoch epoch() const EXCLUDES(fence_mu_);
  std::optional<DispatcherId> trigger_id(DispatcherMode mode) const EXCLUDES(fence_mu_);
  // In-flight operators, keyed by dispatcher id.
  std::vector<ScheduleRequest> operators() const EXCLUDES(fence_mu_);
  // Whether the fence mutex is free right now. For tests that check that no
  // path leaks it.
  bool FenceLockIsFree() const EXCLUDES(fence_mu_);

 private:
  struct Entry {
    DispatcherConfig config;
    std::unique_ptr<DispatcherHandle> handle;
    bool removing = false;
  };

  Status Admit(const NodeId& from, MaintainerEpoch epoch, std::string_view request) const
      REQUIRES(fence_mu_);
  std::optional<DispatcherId>& TriggerSlot(DispatcherMode mode) REQUIRES(fence_mu_);
  Status ValidateTrigger(DispatcherMode mode, const std::optional<DispatcherId>& requested) const
      REQUIRES(fence_mu_);
  // Whether `request` may replace the existing trigger of `mode`.
  bool MayReplaceTrigger(DispatcherMode mode, const BootstrapRequest& request) const
      REQUIRES(fence_mu_);
  // A trigger being closed (replaced) is never adopted: kAborted until it
  // has closed, after which the slot is free for a fresh one.
  Status AwaitClosingTriggers() REQUIRES(fence_mu_);
  // Closes the replaced triggers; OK once every one has closed.
  Status CloseReplacedTriggers(const BootstrapRequest& request) REQUIRES(fence_mu_);
  MaintainerEpoch& TriggerEpoch(DispatcherMode mode) REQUIRES(fence_mu_);
  Status EnsureTrigger(DispatcherMode mode, const std::optional<DispatcherId>& requested,
                       Ts start_ts) REQUIRES(fence_mu_);
  Status InitializeTrigger(DispatcherMode mode, const std::vector<SchemaInfo>& schemas)
      REQUIRES(fence_mu_);
  BootstrapResponse Snapshot() const REQUIRES(fence_mu_);
  std::vector<ScheduleRequest> SnapshotOperators() const REQUIRES(fence_mu_);
  void DropStaleOperator(DispatcherId id) REQUIRES(fence_mu_);
  Result<ScheduleResponse> ScheduleCreate(const ScheduleRequest& request) REQUIRES(fence_mu_);
  ScheduleResponse ScheduleRemove(const ScheduleRequest& request) REQUIRES(fence_mu_);
  // Closes every dispatcher; once all have closed, forgets them, their
  // operators and the trigger ids and returns true.
  bool FinishClosing() REQUIRES(fence_mu_);
  // Erases the dispatcher if it has closed; returns whether it did.
  bool FinishRemoveIfClosed(DispatcherId id) REQUIRES(fence_mu_);
  DispatcherStatus StatusOf(const Entry& entry) const REQUIRES(fence_mu_);
  ScheduleResponse ScheduleReply(const ScheduleRequest& request, ComponentState state) const;

  // Constant after construction.
  const std::string changefeed_id_;
  const bool redo_enabled_;
  // Thread-safe for CloseWritePath(); everything else under fence_mu_.
  const std::unique_ptr<DispatcherFactory> factory_;

  std::atomic<bool> fenced_{false};

  mutable Mutex fence_mu_;
  MaintainerFence fence_ GUARDED_BY(fence_mu_);
  std::map<DispatcherId, Entry> dispatchers_ GUARDED_BY(fence_mu_);
  std::optional<DispatcherId> table_trigger_id_ GUARDED_BY(fence_mu_);
  std::optional<DispatcherId> redo_trigger_id_ GUARDED_BY(fence_mu_);
  // The epoch that created or last adopted each trigger.
  MaintainerEpoch table_trigger_epoch_ GUARDED_BY(fence_mu_);
  MaintainerEpoch redo_trigger_epoch_ GUARDED_BY(fence_mu_);
  std::map<DispatcherId, ScheduleRequest> operators_ GUARDED_BY(fence_mu_);
  bool closed_ GUARDED_BY(fence_mu_) = false;
  // A close began but some dispatcher has not closed yet.
  bool closing_ GUARDED_BY(fence_mu_) = false;
};

}  // namespace sluice::dispatchermanager
