// Coordinator: owns the lifecycle of every changefeed of the cluster and
// places one maintainer per running changefeed on the least-loaded alive
// node (docs/architecture.md, "Control plane"; TiCDC coordinator/).
//
// Promises:
//  - every state change and every new maintainer epoch is persisted in the
//    metastore with a compare-and-swap on the info key BEFORE the request
//    that depends on it is sent; a lost CAS is Code::kAborted (retryable:
//    someone else moved the changefeed), the in-memory copy is re-read from
//    the store and nothing is overwritten;
//  - each maintainer generation (create, resume, move, restart after an
//    error or a failed send) gets an epoch strictly greater than every
//    persisted one; statuses carrying another epoch or node are dropped and
//    counted (docs/architecture.md, "Invariants": one owner per changefeed);
//  - checkpoints of current-generation statuses are persisted and never go
//    back, except on an explicit resume with a checkpoint
//    (docs/architecture.md, "Invariants": progress never goes back);
//  - the service GC safepoint follows min checkpoint - 1 (GcManager); a
//    failed update is counted and retried, never fatal;
//  - a retryable maintainer error puts the changefeed into `warning` and
//    restarts it after an exponential backoff; errors that last longer than
//    its bound (`error_bound_of`, else `error_bound`), or a fatal error, make it `failed` (stopped,
//    error kept) until resumed.
//
// Threads: every public method may be called from any thread; they are
// serialized by one mutex, held also while calling the metastore, PD and the
// maintainer client (which must not call back in). Time comes from the
// injected Clock; nothing here sleeps or owns a thread. The owner calls
// Tick() periodically (e.g. every 100 ms) to place, retry and update GC.
//
// Ownership: every pointer in CoordinatorOptions is borrowed and must
// outlive the coordinator.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "coordinator/gc_manager.h"
#include "coordinator/interfaces.h"
#include "meta/meta_client.h"

namespace sluice::coordinator {

struct CoordinatorOptions {
  Clock* clock = nullptr;
  meta::MetaClient* meta = nullptr;
  MaintainerManagerClient* maintainers = nullptr;
  NodeMembership* nodes = nullptr;
  TsoSource* tso = nullptr;
  GcSafepointUpdater* gc_updater = nullptr;
  GcOptions gc;
  std::string self_addr;  // Recorded in RunningError.addr.
  // Retry backoff after a retryable error (TiCDC: 10 s doubling to 10 min)
  // and how long errors may last before the changefeed fails (TiCDC 30 min).
  Clock::Duration backoff_initial = std::chrono::seconds(10);
  Clock::Duration backoff_max = std::chrono::minutes(10);
  Clock::Duration error_bound = std::chrono::minutes(30);
  // A changefeed's own bound (its changefeed-error-stuck-duration); null or
  // a non-positive answer: error_bound. Called under the coordinator's lock.
  std::function<Clock::Duration(const meta::ChangefeedInfo&)> error_bound_of;
};

// What the API sees of one changefeed.
struct ChangefeedView {
  meta::ChangefeedInfo info;  // Includes state, error, warning, epoch.
  meta::ChangefeedStatus status;
  std::optional<NodeId> node;  // Where the current generation runs, if placed.
};

// Fields an update may change; unset ones keep their value.
struct ChangefeedUpdate {
  std::optional<std::string> sink_uri;
  std::optional<Ts> target_ts;
  std::optional<std::string> config_json;
};

struct CoordinatorStats {
  uint64_t stale_statuses_dropped = 0;
  uint64_t unknown_statuses_dropped = 0;
  uint64_t cas_conflicts = 0;
  uint64_t generations_started = 0;
  uint64_t gc_updates = 0;
  uint64_t gc_failures = 0;
  Status last_gc_error;
  Ts gc_safepoint;
};

class Coordinator final : public MaintainerStatusListener {
 public:
  // Loads every changefeed from the metastore; running ones are placed with
  // new epochs by the next Tick(). A corrupt changefeed is skipped (logged).
  static Result<std::unique_ptr<Coordinator>> Open(CoordinatorOptions options);

  // Validates and persists a new changefeed (state normal, checkpoint =
  // start ts; start ts 0 means the current TSO), then starts its first
  // maintainer generation if a node is alive. kInvalidArgument for a bad
  // id, sink URI, target ts or a start ts beyond the TSO;
  // kGcSafepointExceeded when GC has passed the start ts; kAlreadyExists.
  Status CreateChangefeed(meta::ChangefeedInfo info) EXCLUDES(mu_);
  // Stops a changefeed (state stopped); its maintainer is removed and its
  // epoch closed. Idempotent.
  Status PauseChangefeed(const meta::ChangefeedId& id) EXCLUDES(mu_);
  // Restarts a stopped, failed or warning changefeed with a new generation,
  // clearing its error; optionally from `overwrite_checkpoint` (checked
  // against GC and the TSO). kInvalidArgument if it is running normally.
  Status ResumeChangefeed(const meta::ChangefeedId& id, std::optional<Ts> overwrite_checkpoint)
      EXCLUDES(mu_);
  // Changes a stopped or failed changefeed; kInvalidArgument otherwise.
  Status UpdateChangefeed(const meta::ChangefeedId& id, const ChangefeedUpdate& update)
      EXCLUDES(mu_);
  // Deletes the changefeed and removes its maintainer (cascade).
  Status RemoveChangefeed(const meta::ChangefeedId& id) EXCLUDES(mu_);
  // Moves one table of a running changefeed to node `target` (see
  // MaintainerManagerClient::MoveTable). kNotFound for an unknown
  // changefeed; kUnavailable while it has no working maintainer.
  Status MoveTable(const meta::ChangefeedId& id, int64_t table_id, const NodeId& target)
      EXCLUDES(mu_);
  std::vector<ChangefeedView> ListChangefeeds() const EXCLUDES(mu_);
  Result<ChangefeedView> GetChangefeed(const meta::ChangefeedId& id) const EXCLUDES(mu_);

  // A status from the maintainer manager of `node`.
  void OnMaintainerStatus(const NodeId& node, const MaintainerStatus& status) override
      EXCLUDES(mu_);
  // `node` left: its maintainers move to other nodes with new epochs.
  void OnNodeRemoved(const NodeId& node) EXCLUDES(mu_);
  // Places unplaced running changefeeds (and those due for a retry), moves
  // maintainers off dead nodes, and updates the GC safepoint when due.
  void Tick() EXCLUDES(mu_);

  CoordinatorStats Stats() const EXCLUDES(mu_);

 private:
  struct Feed {
    meta::ChangefeedInfo info;
    meta::Revision info_rev = 0;
    meta::ChangefeedStatus status;
    meta::Revision status_rev = 0;
    std::optional<NodeId> node;  // The placed generation's node.
    MaintainerEpoch node_epoch;  // The placed generation's epoch.
    bool is_new = false;         // First generation not started yet.
    Clock::TimePoint retry_at{};
    std::optional<Clock::TimePoint> first_error_at;
    Clock::Duration next_backoff{};
  };

  explicit Coordinator(CoordinatorOptions options);

  Status Load() REQUIRES(mu_);
  Result<Feed*> Find(const meta::ChangefeedId& id) REQUIRES(mu_);
  Status CheckStartTs(Ts ts, Ts now_ts) REQUIRES(mu_);

  // Writes `info` (CAS on the feed's info revision) and adopts it; on a lost
  // CAS re-reads the feed and returns kAborted.
  Status PersistInfo(Feed* feed, meta::ChangefeedInfo info) REQUIRES(mu_);
  // Persists a checkpoint above the current one (or any, if `allow_back`).
  Status PersistCheckpoint(Feed* feed, Ts checkpoint, bool allow_back) REQUIRES(mu_);
  void Reload(Feed* feed) REQUIRES(mu_);
  // Persists a new epoch, then sends AddMaintainer to the least-loaded node.
  Status StartGeneration(Feed* feed) REQUIRES(mu_);
  // Sends RemoveMaintainer for the placed generation and forgets the node.
  void StopGeneration(Feed* feed, bool removed) REQUIRES(mu_);
  // Persists `state`/`error` with a closed (bumped) epoch, then stops the
  // running generation.
  Status StopWithState(Feed* feed, meta::FeedState state, std::optional<meta::RunningError> error,
                       std::optional<meta::RunningError> warning) REQUIRES(mu_);
  void HandleError(Feed* feed, const Status& error) REQUIRES(mu_);
  void HandleProgress(Feed* feed, const MaintainerStatus& status) REQUIRES(mu_);
  std::optional<NodeId> PickNode() REQUIRES(mu_);
  void MoveOffDeadNodes() REQUIRES(mu_);
  void UpdateGc(bool force) REQUIRES(mu_);
  meta::RunningError ToRunningError(const Status& error) const;
  static bool ShouldRun(const Feed& feed);
  static ChangefeedView View(const Feed& feed);

  const CoordinatorOptions options_;
  mutable Mutex mu_;
  GcManager gc_ GUARDED_BY(mu_);
  std::map<meta::ChangefeedId, Feed> feeds_ GUARDED_BY(mu_);
  CoordinatorStats stats_ GUARDED_BY(mu_);
};

}  // namespace sluice::coordinator
