// OperatorController: the in-flight schedule operators of one changefeed
// (TiCDC maintainer/operator): add (create a dispatcher on a node; done when
// the node reports it working), remove (done when the node reports it
// stopped, or the node is gone) and move (remove on the origin, then add on
// the destination from the checkpoint the origin reached; the span is never
// on two nodes). At most one operator per dispatcher. Unacknowledged requests
// are resent on Tick(). An operator whose node goes away is cancelled: an
// add leaves its span absent for the scheduler, a remove is done.
//
// Thread-compatible: owned by the Maintainer and used from its thread only.
// The SpanController is borrowed and must outlive this object.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>

#include "common/clock.h"
#include "common/status.h"
#include "common/strong_id.h"
#include "dispatchermanager/messages.h"
#include "maintainer/messages.h"
#include "maintainer/span_controller.h"

namespace sluice::maintainer {

enum class OperatorKind : uint8_t { kAdd, kRemove, kMove };

class OperatorController {
 public:
  // Sends one schedule request; the caller stamps changefeed, node and epoch.
  using SendFn = std::function<void(const NodeId& to, dispatchermanager::ScheduleAction action,
                                    const dispatchermanager::DispatcherConfig& config)>;

  OperatorController(SpanController* spans, SendFn send, Clock::Duration resend_interval);

  // Creates the absent replica `id` on `node`, starting at its checkpoint.
  // kAlreadyExists if it has an operator; kInvalidArgument if it is unknown
  // or not absent.
  [[nodiscard]] Status Add(DispatcherId id, const NodeId& node, Clock::TimePoint now);
  // Removes the replica from its node. With `erase` the replica then leaves
  // the controller (a dropped table); otherwise it becomes absent.
  [[nodiscard]] Status Remove(DispatcherId id, bool erase, Clock::TimePoint now);
  // Moves a working replica to `dest`.
  [[nodiscard]] Status Move(DispatcherId id, const NodeId& dest, Clock::TimePoint now);
  // Removes a dispatcher the controller does not track (a duplicate or a
  // table outside the changefeed, found at bootstrap).
  void RemoveStray(const NodeId& node, const dispatchermanager::DispatcherConfig& config,
                   Clock::TimePoint now);
  // Adopts a create that a node reported in flight at bootstrap: the replica
  // is scheduling on `node`; the create is resent only after an interval.
  [[nodiscard]] Status AdoptAdd(DispatcherId id, const NodeId& node, Ts start,
                                Clock::TimePoint now);
  // Drops the operator of `id` (if any) without touching its replica.
  void Cancel(DispatcherId id);

  // A node reported a dispatcher's state (heartbeat or schedule response).
  void OnStatus(const NodeId& node, const SpanStatus& status, Clock::TimePoint now);
  void OnNodeRemoved(const NodeId& node, Clock::TimePoint now);
  // Resends requests not acknowledged for the resend interval.
  void Tick(Clock::TimePoint now);

  bool Has(DispatcherId id) const { return ops_.count(id) > 0; }
  std::optional<OperatorKind> KindOf(DispatcherId id) const;
  size_t size() const { return ops_.size(); }
  // The checkpoint the operators hold the changefeed at: an adding span's
  // start ts, a span being moved or made absent at its last checkpoint.
  std::optional<Ts> MinCheckpoint() const;

 private:
  enum class Phase : uint8_t { kRemove, kAdd };
  struct Op {
    OperatorKind kind = OperatorKind::kAdd;
    Phase phase = Phase::kAdd;
    NodeId origin;  // Remove phase.
    NodeId dest;    // Add phase.
    dispatchermanager::DispatcherConfig config;
    bool erase = false;  // Remove: drop the replica afterwards.
    bool stray = false;  // Not in the span controller.
    Clock::TimePoint last_sent;
  };

  static dispatchermanager::DispatcherConfig ConfigOf(const Replica& r);
  void SendAdd(Op* op, Clock::TimePoint now);
  void SendRemove(Op* op, Clock::TimePoint now);
  // The remove phase finished (stopped, or the node is gone). Returns true
  // if the operator is done.
  bool FinishRemove(Op* op, Ts checkpoint, Clock::TimePoint now);

  SpanController* const spans_;
  const SendFn send_;
  const Clock::Duration resend_interval_;
  std::map<DispatcherId, Op> ops_;
};

}  // namespace sluice::maintainer
