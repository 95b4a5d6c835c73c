#include "maintainer/operator_controller.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "common/logging.h"

namespace sluice::maintainer {

using dispatchermanager::ComponentState;
using dispatchermanager::DispatcherConfig;
using dispatchermanager::IdString;
using dispatchermanager::ScheduleAction;

OperatorController::OperatorController(SpanController* spans, SendFn send,
                                       Clock::Duration resend_interval)
    : spans_(spans), send_(std::move(send)), resend_interval_(resend_interval) {}

DispatcherConfig OperatorController::ConfigOf(const Replica& r) {
  DispatcherConfig c;
  c.id = r.id;
  c.table_id = TableId(r.table.table_id);
  c.schema_id = r.table.schema_id;
  c.span = r.span;
  c.start_ts = r.checkpoint;
  return c;
}

Status OperatorController::Add(DispatcherId id, const NodeId& node, Clock::TimePoint now) {
  if (Has(id)) return AlreadyExists("operator in flight for " + IdString(id));
  const Replica* r = spans_->Find(id);
  if (r == nullptr || r->state != ReplicaState::kAbsent) {
    return InvalidArgument("add of a replica that is unknown or not absent: " + IdString(id));
  }
  Op op;
  op.kind = OperatorKind::kAdd;
  op.phase = Phase::kAdd;
  op.dest = node;
  op.config = ConfigOf(*r);
  auto [it, inserted] = ops_.emplace(id, std::move(op));
  SendAdd(&it->second, now);
  return Status::Ok();
}

Status OperatorController::AdoptAdd(DispatcherId id, const NodeId& node, Ts start,
                                    Clock::TimePoint now) {
  if (Has(id)) return AlreadyExists("operator in flight for " + IdString(id));
  const Replica* r = spans_->Find(id);
  if (r == nullptr) return InvalidArgument("adopted add of unknown replica " + IdString(id));
  Op op;
  op.kind = OperatorKind::kAdd;
  op.phase = Phase::kAdd;
  op.dest = node;
  op.config = ConfigOf(*r);
  op.config.start_ts = start;
  op.last_sent = now;
  ops_.emplace(id, std::move(op));
  spans_->SetState(id, ReplicaState::kScheduling, node);
  return Status::Ok();
}

Status OperatorController::Remove(DispatcherId id, bool erase, Clock::TimePoint now) {
  if (Has(id)) return AlreadyExists("operator in flight for " + IdString(id));
  const Replica* r = spans_->Find(id);
  if (r == nullptr) return InvalidArgument("remove of unknown replica " + IdString(id));
  if (r->state == ReplicaState::kAbsent) {
    if (erase) spans_->Erase(id);
    return Status::Ok();
  }
  Op op;
  op.kind = OperatorKind::kRemove;
  op.phase = Phase::kRemove;
  op.origin = r->node;
  op.config = ConfigOf(*r);
  op.erase = erase;
  auto [it, inserted] = ops_.emplace(id, std::move(op));
  SendRemove(&it->second, now);
  return Status::Ok();
}

Status OperatorController::Move(DispatcherId id, const NodeId& dest, Clock::TimePoint now) {
  if (Has(id)) return AlreadyExists("operator in flight for " + IdString(id));
  const Replica* r = spans_->Find(id);
  if (r == nullptr || r->state != ReplicaState::kWorking) {
    return InvalidArgument("move of a replica that is not working: " + IdString(id));
  }
  if (r->node == dest) return Status::Ok();
  Op op;
  op.kind = OperatorKind::kMove;
  op.phase = Phase::kRemove;
  op.origin = r->node;
  op.dest = dest;
  op.config = ConfigOf(*r);
  auto [it, inserted] = ops_.emplace(id, std::move(op));
  SendRemove(&it->second, now);
  return Status::Ok();
}

void OperatorController::RemoveStray(const NodeId& node, const DispatcherConfig& config,
                                     Clock::TimePoint now) {
  if (Has(config.id)) return;
  Op op;
  op.kind = OperatorKind::kRemove;
  op.phase = Phase::kRemove;
  op.origin = node;
  op.config = config;
  op.stray = true;
  auto [it, inserted] = ops_.emplace(config.id, std::move(op));
  SendRemove(&it->second, now);
}

void OperatorController::Cancel(DispatcherId id) { ops_.erase(id); }

void OperatorController::SendAdd(Op* op, Clock::TimePoint now) {
  op->last_sent = now;
  spans_->SetState(op->config.id, ReplicaState::kScheduling, op->dest);
  send_(op->dest, ScheduleAction::kCreate, op->config);
}

void OperatorController::SendRemove(Op* op, Clock::TimePoint now) {
  op->last_sent = now;
  if (!op->stray) spans_->SetState(op->config.id, ReplicaState::kRemoving, op->origin);
  send_(op->origin, ScheduleAction::kRemove, op->config);
}

bool OperatorController::FinishRemove(Op* op, Ts checkpoint, Clock::TimePoint now) {
  DispatcherId id = op->config.id;
  if (op->stray) return true;
  spans_->AdvanceCheckpoint(id, checkpoint);
  if (op->kind == OperatorKind::kMove) {
    const Replica* r = spans_->Find(id);
    if (r == nullptr) return true;
    op->phase = Phase::kAdd;
    op->config.start_ts = r->checkpoint;  // The checkpoint travels with the span.
    SendAdd(op, now);
    return false;
  }
  if (op->erase) {
    spans_->Erase(id);
  } else {
    spans_->SetState(id, ReplicaState::kAbsent, NodeId());
  }
  return true;
}

void OperatorController::OnStatus(const NodeId& node, const SpanStatus& status,
                                  Clock::TimePoint now) {
  auto it = ops_.find(status.id);
  if (it == ops_.end()) return;
  Op& op = it->second;
  bool done = false;
  if (op.phase == Phase::kAdd && node == op.dest && status.state == ComponentState::kWorking) {
    spans_->SetState(status.id, ReplicaState::kWorking, node);
    spans_->AdvanceCheckpoint(status.id, status.checkpoint_ts);
    done = true;
  } else if (op.phase == Phase::kRemove && node == op.origin &&
             status.state == ComponentState::kStopped) {
    done = FinishRemove(&op, status.checkpoint_ts, now);
  }
  if (done) {
    LOG_DEBUG("maintainer operator finished; dispatcher={} node={}", IdString(status.id),
              node.value());
    ops_.erase(it);
  }
}

void OperatorController::OnNodeRemoved(const NodeId& node, Clock::TimePoint now) {
  std::vector<DispatcherId> done;
  for (auto& [id, op] : ops_) {
    if (op.phase == Phase::kAdd && op.dest == node) {
      // The destination is gone: the span waits, absent, for the scheduler.
      spans_->SetState(id, ReplicaState::kAbsent, NodeId());
      done.push_back(id);
    } else if (op.phase == Phase::kRemove && op.origin == node) {
      if (op.kind == OperatorKind::kMove && op.dest == node) op.kind = OperatorKind::kRemove;
      if (FinishRemove(&op, Ts(0), now)) done.push_back(id);
    } else if (op.kind == OperatorKind::kMove && op.dest == node) {
      op.kind = OperatorKind::kRemove;  // Abort the move: absent once removed.
    }
  }
  for (DispatcherId id : done) ops_.erase(id);
}

void OperatorController::Tick(Clock::TimePoint now) {
  for (auto& [id, op] : ops_) {
    if (now - op.last_sent < resend_interval_) continue;
    if (op.phase == Phase::kAdd) {
      SendAdd(&op, now);
    } else {
      SendRemove(&op, now);
    }
  }
}

std::optional<OperatorKind> OperatorController::KindOf(DispatcherId id) const {
  auto it = ops_.find(id);
  if (it == ops_.end()) return std::nullopt;
  return it->second.kind;
}

std::optional<Ts> OperatorController::MinCheckpoint() const {
  std::optional<Ts> min;
  auto take = [&min](Ts ts) {
    if (!min || ts < *min) min = ts;
  };
  for (const auto& [id, op] : ops_) {
    if (op.stray || op.erase) continue;
    if (op.phase == Phase::kAdd) {
      take(op.config.start_ts);
    } else if (const Replica* r = spans_->Find(id); r != nullptr) {
      take(r->checkpoint);
    }
  }
  return min;
}

}  // namespace sluice::maintainer
