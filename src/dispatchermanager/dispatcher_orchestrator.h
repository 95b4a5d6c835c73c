// DispatcherOrchestrator: the node's entry point for maintainer control
// requests (TiCDC downstreamadapter/dispatcherorchestrator). It keeps one
// DispatcherManager per changefeed, creates it on the first admitted
// bootstrap, and applies the closed-epoch tombstones.
//
// Promises:
//  - Requests of one changefeed are handled one at a time, in call order
//    (a per-changefeed request lock); different changefeeds proceed in
//    parallel.
//  - A bootstrap with an epoch at or below a closed one (or epoch 0 after a
//    close) never recreates the manager; it gets kStaleOwner.
//  - Every request gets a typed answer or, when the write path is closed
//    (shutdown, local fence), none: std::nullopt, logged at info. Bad input
//    (missing ids, unknown changefeed, a stale epoch) is an error in the
//    response, never a crash.
//
// Ownership: owns the managers (shared with callers of manager()); the
// FactoryProvider is not owned and must outlive the orchestrator.
// Threads: every method may be called from any thread.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/thread_annotations.h"
#include "dispatchermanager/dispatcher_factory.h"
#include "dispatchermanager/dispatcher_manager.h"
#include "dispatchermanager/maintainer_fence.h"
#include "dispatchermanager/messages.h"

namespace sluice::dispatchermanager {

class DispatcherOrchestrator {
 public:
  explicit DispatcherOrchestrator(FactoryProvider* provider);
  DispatcherOrchestrator(const DispatcherOrchestrator&) = delete;
  DispatcherOrchestrator& operator=(const DispatcherOrchestrator&) = delete;

  [[nodiscard]] std::optional<BootstrapResponse> HandleBootstrap(const BootstrapRequest& request)
      EXCLUDES(mu_);
  [[nodiscard]] std::optional<PostBootstrapResponse> HandlePostBootstrap(
      const PostBootstrapRequest& request) EXCLUDES(mu_);
  [[nodiscard]] std::optional<ScheduleResponse> HandleSchedule(const ScheduleRequest& request)
      EXCLUDES(mu_);
  // A close of an unknown changefeed succeeds and records the tombstone; a
  // close from a superseded maintainer succeeds without closing anything.
  [[nodiscard]] std::optional<CloseResponse> HandleClose(const CloseRequest& request) EXCLUDES(mu_);

  // Node-level fence (the node lost its session): closes every manager's
  // write path now and drops every later request. Idempotent. Never waits
  // for a request in progress.
  void LocalFence() EXCLUDES(mu_);
  bool fenced() const { return fenced_.load(std::memory_order_acquire); }

  // The manager of a changefeed, or null.
  std::shared_ptr<DispatcherManager> manager(const std::string& changefeed_id) const EXCLUDES(mu_);
  // Every live manager (for the node's heartbeats).
  std::vector<std::shared_ptr<DispatcherManager>> managers() const EXCLUDES(mu_);
  std::optional<MaintainerEpoch> closed_epoch(const std::string& changefeed_id) const EXCLUDES(mu_);

 private:
  // Serializes the requests of one changefeed. Lock order: a slot's
  // request_mu, then mu_.
  struct Slot {
    Mutex request_mu;
  };

  std::shared_ptr<Slot> SlotFor(const std::string& changefeed_id) EXCLUDES(mu_);
  Result<std::shared_ptr<DispatcherManager>> NewManager(const BootstrapRequest& request)
      EXCLUDES(mu_);
  // Publishes a new manager unless the node is fenced; returns whether it did.
  bool Install(const std::shared_ptr<DispatcherManager>& manager) EXCLUDES(mu_);
  void Uninstall(const std::string& changefeed_id, MaintainerEpoch epoch, bool removed)
      EXCLUDES(mu_);
  // Whether a failed request is a clean shutdown outcome (no response).
  bool IsQuiet(const Status& status) const;
  void LogDropped(std::string_view request, const std::string& changefeed_id) const;

  FactoryProvider* const provider_;
  std::atomic<bool> fenced_{false};

  mutable Mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<Slot>> slots_ GUARDED_BY(mu_);
  std::unordered_map<std::string, std::shared_ptr<DispatcherManager>> managers_ GUARDED_BY(mu_);
  ClosedEpochs closed_epochs_ GUARDED_BY(mu_);
};

}  // namespace sluice::dispatchermanager
