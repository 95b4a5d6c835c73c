// Maintainer: the control-plane core of one changefeed (TiCDC
// maintainer/maintainer.go). It bootstraps the dispatcher managers of every
// node (collects their dispatchers, checkpoints and in-flight operators,
// rebuilds the span controller, creates the spans no node has), post-
// bootstraps the table-trigger dispatcher on its own node with the schemas
// and tables, places absent spans on the live nodes (balancing by count),
// runs the add/remove/move operators, the DDL/syncpoint barrier, and
// computes the changefeed checkpoint. Every message it sends goes through
// the MaintainerOutbox and carries its (node, epoch).
//
// A single-threaded state machine: it owns no thread and takes no lock;
// every method must be called from the one thread that drives it (the
// maintainer's event loop), which also calls Tick() periodically (e.g. every
// 100 ms) so that unacknowledged requests are resent. Responses stamped with
// another epoch are dropped. A bootstrap refused with kStaleOwner fences
// this maintainer: status() turns into that error and it sends nothing more.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/strong_id.h"
#include "dispatchermanager/messages.h"
#include "event/events.h"
#include "maintainer/barrier.h"
#include "maintainer/checkpoint.h"
#include "maintainer/messages.h"
#include "maintainer/operator_controller.h"
#include "maintainer/span_controller.h"

namespace sluice::maintainer {

// The table-trigger dispatcher id used unless the options name another. It
// is stable across maintainer generations, so a newer generation on the
// same node re-adopts the existing trigger instead of being refused.
inline constexpr DispatcherId kDefaultTableTriggerId{0, 1};

struct MaintainerOptions {
  std::string changefeed_id;
  NodeId self;  // The maintainer's node; hosts the table trigger.
  MaintainerEpoch epoch;
  Ts checkpoint_ts;  // The changefeed checkpoint to start from.
  bool is_new_changefeed = false;
  // The changefeed's tables at `checkpoint_ts` (physical table ids; 0 is
  // reserved for the table trigger).
  std::vector<event::TableRef> tables;
  // The changefeed's tables at a later ts. When the table trigger resumes
  // past `checkpoint_ts` (the sink already ran DDLs up to there), the spans
  // are built from the tables at the trigger's start instead; kUnavailable
  // means "not yet", and the bootstrap finishes on a later Tick(). Unset:
  // `tables` are used as they are.
  std::function<Result<std::vector<event::TableRef>>(Ts)> tables_at;
  // True for a table the changefeed's filter leaves out: it gets no span
  // (no dispatcher) wherever tables are added: `tables`, `tables_at` and the
  // tables a DDL adds (CREATE TABLE, TRUNCATE's new id, partitions, ...). A
  // barrier event that blocks such a table waits only on the dispatchers
  // that exist. Called from the maintainer's thread. Unset: none ignored.
  std::function<bool(const event::TableRef&)> ignore_table;
  // The live nodes at start; `self` is added if missing.
  std::vector<NodeId> nodes;
  DispatcherId table_trigger_id = kDefaultTableTriggerId;
  // Unacknowledged requests are resent after this long.
  Clock::Duration resend_interval = std::chrono::milliseconds(500);
  // The scheduler keeps at most this many operators in flight.
  size_t max_operators = 256;
  Clock* clock = nullptr;              // Borrowed; must outlive the maintainer.
  MaintainerOutbox* outbox = nullptr;  // Borrowed; must outlive the maintainer.
};

class Maintainer {
 public:
  // kInvalidArgument for missing ids, clock or outbox, table id 0 or a
  // table listed twice.
  static Result<std::unique_ptr<Maintainer>> Create(MaintainerOptions options);

  // Sends the bootstrap request to every node.
  void Start();
  // Closes the changefeed's dispatcher managers on every live node (resent
  // until each one confirms). `removed`: the changefeed is removed.
  void Close(bool removed);

  void OnNodeAdded(const NodeId& node);
  // Moves the dispatcher of `table_id` to `dest` (TiCDC move_table).
  // kUnavailable before the bootstrap finished; kNotFound for a table this
  // changefeed does not replicate; kInvalidArgument if `dest` is not a live,
  // bootstrapped node; kAlreadyExists while the table has an operator in
  // flight. A count balance started by a node joining does not undo it.
  Status MoveTable(int64_t table_id, const NodeId& dest);
  void OnNodeRemoved(const NodeId& node);
  void OnBootstrapResponse(const NodeId& node, const dispatchermanager::BootstrapResponse& resp);
  void OnPostBootstrapResponse(const NodeId& node,
                               const dispatchermanager::PostBootstrapResponse& resp);
  void OnScheduleResponse(const NodeId& node, const dispatchermanager::ScheduleResponse& resp);
  void OnCloseResponse(const NodeId& node, const dispatchermanager::CloseResponse& resp);
  void OnHeartbeat(const NodeId& node, const HeartbeatRequest& heartbeat);
  void OnBlockStatus(const NodeId& node, const BlockReport& report);
  void OnBlockStatus(const NodeId& node, const dispatcher::BlockStatus& status) {
    OnBlockStatus(node, ToBlockReport(status));
  }
  // Resends what is unacknowledged, schedules absent spans, recomputes the
  // checkpoint.
  void Tick(Clock::TimePoint now);

  // OK, or the error that stopped this maintainer (kStaleOwner: fenced).
  const Status& status() const { return status_; }
  // Every node answered the bootstrap and the spans were rebuilt.
  bool bootstrapped() const { return bootstrapped_; }
  // The table trigger acknowledged the post-bootstrap.
  bool initialized() const { return initialized_; }
  // Every node confirmed the close.
  bool closed() const { return closing_ && close_pending_.empty(); }
  Ts checkpoint() const { return checkpoint_; }
  const SpanController& spans() const { return spans_; }
  const OperatorController& operators() const { return ops_; }
  const Barrier& barrier() const { return barrier_; }
  MaintainerEpoch epoch() const { return options_.epoch; }

 private:
  struct NodeState {
    bool answered = false;  // Bootstrap response accepted.
    bool sent = false;      // A bootstrap went out.
    Clock::TimePoint last_sent;
    // A trigger dispatcher the node refused over: ordered replaced.
    std::optional<DispatcherId> replace_trigger;
  };

  explicit Maintainer(MaintainerOptions options);
  bool Active() const { return status_.ok() && !closing_; }
  bool Ignored(const event::TableRef& table) const {
    return options_.ignore_table && options_.ignore_table(table);
  }
  Clock::TimePoint Now() const { return options_.clock->Now(); }
  template <typename T>
  T Stamped(T message) const {
    message.changefeed_id = options_.changefeed_id;
    message.from = options_.self;
    message.epoch = options_.epoch;
    return message;
  }

  // Bootstrap (maintainer_bootstrap.cc).
  void SendBootstrap(const NodeId& node, Clock::TimePoint now);
  // Moves one working span from the most to the least loaded node when
  // their span counts differ by more than one (a node joined), if nothing
  // else is in flight.
  void Rebalance(const std::map<NodeId, size_t>& load, Clock::TimePoint now);
  void MaybeFinishBootstrap();
  void RebuildFrom(const NodeId& node, const dispatchermanager::BootstrapResponse& resp);
  // Stopping dispatchers: their removal is adopted (see the README).
  void AdoptStopping(const NodeId& node, const dispatchermanager::BootstrapResponse& resp);
  void AdoptOperators(const NodeId& node, const dispatchermanager::BootstrapResponse& resp);
  // Adds a dispatcher a node reported as a working replica of its table;
  // false (nothing added) for a table outside the changefeed or one that
  // has a replica already.
  bool AddReported(const NodeId& node, const dispatchermanager::DispatcherStatus& status);
  // Whether every node but this one answered its bootstrap: this node's
  // bootstrap (which creates the trigger) waits for it, so that an old
  // trigger elsewhere is closed before the new one exists.
  bool OthersAnswered() const;
  // After a kAborted refusal naming the node's trigger: orders an older
  // generation's trigger replaced and resends at once.
  void MaybeReplaceTrigger(const NodeId& node, const dispatchermanager::BootstrapResponse& resp);
  // Sends the bootstraps that are due at `now` (first ones and resends).
  void SendDueBootstraps(Clock::TimePoint now);
  // Not the table trigger nor a redo dispatcher.
  bool IsTableSpan(const dispatchermanager::DispatcherConfig& config) const;
  void AdoptLateNode(const NodeId& node, const dispatchermanager::BootstrapResponse& resp);
  void SendPostBootstrap(Clock::TimePoint now);
  std::vector<dispatchermanager::SchemaInfo> Schemas() const;

  // Running.
  DispatcherId NewDispatcherId();
  void OnSpanStatus(const NodeId& node, const SpanStatus& status);
  void ApplyTableChanges(Ts ts, const std::vector<int64_t>& drops,
                         const std::vector<event::TableRef>& adds);
  void Schedule();
  void UpdateCheckpoint();
  void SendSchedule(const NodeId& to, dispatchermanager::ScheduleAction action,
                    const dispatchermanager::DispatcherConfig& config);
  void SendBarrierAction(const NodeId& to, const BlockEventKey& key,
                         dispatcher::BarrierAction action, const std::vector<DispatcherId>& ids);
  void SendClose(const NodeId& node);

  const MaintainerOptions options_;
  std::map<int64_t, event::TableRef> tables_;  // The changefeed's tables by id.
  std::map<NodeId, NodeState> nodes_;          // Live nodes.
  std::map<NodeId, dispatchermanager::BootstrapResponse> responses_;
  SpanController spans_;
  OperatorController ops_;
  Barrier barrier_;
  WatermarkTracker watermarks_;
  std::set<std::pair<Ts, DispatcherId>> applied_none_;  // Stage-NONE changes applied.
  // Table changes (stage NONE: a DDL the trigger wrote on its own) reported
  // before the bootstrap finished; applied right after it. They are sent
  // once, so dropping them would lose the tables a DDL created.
  std::vector<BlockReport> early_table_changes_;
  Status status_;
  Ts start_ts_;
  Ts checkpoint_;
  uint64_t next_id_ = 1;
  bool bootstrapped_ = false;
  // A node joined: spans move to balance the counts until they differ by
  // at most one (then the flag clears, so manual moves stay).
  bool balance_pending_ = false;
  bool initialized_ = false;
  Clock::TimePoint post_bootstrap_sent_;
  bool closing_ = false;
  bool close_removed_ = false;
  std::set<NodeId> close_pending_;
  Clock::TimePoint close_sent_;
};

}  // namespace sluice::maintainer
