#include "maintainer/span_controller.h"

#include <algorithm>
#include <set>
#include <utility>

namespace sluice::maintainer {

std::string_view ReplicaStateName(ReplicaState state) {
  switch (state) {
    case ReplicaState::kAbsent:
      return "absent";
    case ReplicaState::kScheduling:
      return "scheduling";
    case ReplicaState::kWorking:
      return "working";
    case ReplicaState::kRemoving:
      return "removing";
  }
  return "unknown";
}

bool SpanController::AddAbsent(DispatcherId id, const event::TableRef& table, Ts start) {
  Replica r;
  r.id = id;
  r.table = table;
  r.span = TableRecordSpan(TableId(table.table_id));
  r.state = ReplicaState::kAbsent;
  r.checkpoint = start;
  return Add(std::move(r));
}

bool SpanController::Add(Replica replica) {
  if (replicas_.count(replica.id) > 0 || by_table_.count(replica.table.table_id) > 0) {
    return false;
  }
  by_table_[replica.table.table_id] = replica.id;
  DispatcherId id = replica.id;
  replicas_.emplace(id, std::move(replica));
  return true;
}

void SpanController::Erase(DispatcherId id) {
  auto it = replicas_.find(id);
  if (it == replicas_.end()) return;
  by_table_.erase(it->second.table.table_id);
  replicas_.erase(it);
}

Replica* SpanController::Find(DispatcherId id) {
  auto it = replicas_.find(id);
  return it == replicas_.end() ? nullptr : &it->second;
}

const Replica* SpanController::Find(DispatcherId id) const {
  auto it = replicas_.find(id);
  return it == replicas_.end() ? nullptr : &it->second;
}

const Replica* SpanController::FindTable(int64_t table_id) const {
  auto it = by_table_.find(table_id);
  return it == by_table_.end() ? nullptr : Find(it->second);
}

void SpanController::SetState(DispatcherId id, ReplicaState state, const NodeId& node) {
  Replica* r = Find(id);
  if (r == nullptr) return;
  r->state = state;
  r->node = state == ReplicaState::kAbsent ? NodeId() : node;
}

void SpanController::AdvanceCheckpoint(DispatcherId id, Ts checkpoint) {
  if (Replica* r = Find(id); r != nullptr) r->checkpoint = std::max(r->checkpoint, checkpoint);
}

std::vector<DispatcherId> SpanController::Absent() const {
  std::vector<DispatcherId> out;
  for (const auto& [id, r] : replicas_) {
    if (r.state == ReplicaState::kAbsent) out.push_back(id);
  }
  return out;
}

std::vector<DispatcherId> SpanController::OnNode(const NodeId& node) const {
  std::vector<DispatcherId> out;
  for (const auto& [id, r] : replicas_) {
    if (r.state != ReplicaState::kAbsent && r.node == node) out.push_back(id);
  }
  return out;
}

std::vector<DispatcherId> SpanController::OfSchema(int64_t schema_id) const {
  std::vector<DispatcherId> out;
  for (const auto& [id, r] : replicas_) {
    if (r.state != ReplicaState::kRemoving && r.table.schema_id == schema_id) out.push_back(id);
  }
  return out;
}

std::vector<DispatcherId> SpanController::All() const {
  std::vector<DispatcherId> out;
  for (const auto& [id, r] : replicas_) {
    if (r.state != ReplicaState::kRemoving) out.push_back(id);
  }
  return out;
}

std::vector<NodeId> SpanController::Nodes() const {
  std::set<NodeId> nodes;
  for (const auto& [id, r] : replicas_) {
    if (r.state == ReplicaState::kWorking) nodes.insert(r.node);
  }
  return {nodes.begin(), nodes.end()};
}

std::optional<Ts> SpanController::MinAbsentCheckpoint() const {
  std::optional<Ts> min;
  for (const auto& [id, r] : replicas_) {
    if (r.state == ReplicaState::kAbsent && (!min || r.checkpoint < *min)) min = r.checkpoint;
  }
  return min;
}

size_t SpanController::CountInState(ReplicaState state) const {
  return std::count_if(replicas_.begin(), replicas_.end(),
                       [state](const auto& e) { return e.second.state == state; });
}

void SpanController::SetTrigger(DispatcherId id, const NodeId& node) {
  trigger_id_ = id;
  trigger_node_ = node;
}

}  // namespace sluice::maintainer
