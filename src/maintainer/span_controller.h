// SpanController: the changefeed's tables and the replica (dispatcher) that
// copies each one, with its state, node and last known checkpoint, plus the
// table-trigger dispatcher. One span per table: the table's whole record
// span (split and merge of a table's span are not supported yet).
//
// Thread-compatible: owned by the Maintainer and used from its thread only.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "common/span.h"
#include "common/strong_id.h"
#include "event/events.h"

namespace sluice::maintainer {

// kAbsent: no dispatcher anywhere (to be scheduled); kScheduling: a create
// was sent to `node`; kWorking: `node` reported it working; kRemoving: a
// remove was sent to `node`.
enum class ReplicaState : uint8_t { kAbsent, kScheduling, kWorking, kRemoving };
std::string_view ReplicaStateName(ReplicaState state);

struct Replica {
  DispatcherId id;
  event::TableRef table;
  Span span;  // Raw record span of the table.
  ReplicaState state = ReplicaState::kAbsent;
  NodeId node;    // Empty when absent.
  Ts checkpoint;  // Last known; a new dispatcher starts here.
};

class SpanController {
 public:
  // Adds `table` as an absent replica with id `id` starting at `start`.
  // Returns false (and changes nothing) if the table or id is present.
  bool AddAbsent(DispatcherId id, const event::TableRef& table, Ts start);
  // Adds a replica as reported by a node (bootstrap). Same rule as above.
  bool Add(Replica replica);
  void Erase(DispatcherId id);

  Replica* Find(DispatcherId id);
  const Replica* Find(DispatcherId id) const;
  const Replica* FindTable(int64_t table_id) const;

  // Moves a replica to `state` on `node` (cleared for kAbsent).
  void SetState(DispatcherId id, ReplicaState state, const NodeId& node);
  // Raises the replica's checkpoint; never lowers it.
  void AdvanceCheckpoint(DispatcherId id, Ts checkpoint);

  std::vector<DispatcherId> Absent() const;
  // Replicas with `node` (scheduling, working or removing there).
  std::vector<DispatcherId> OnNode(const NodeId& node) const;
  // Replicas of a schema (or of every schema), not being removed.
  std::vector<DispatcherId> OfSchema(int64_t schema_id) const;
  std::vector<DispatcherId> All() const;
  // Nodes that host at least one working replica (the others are held by
  // their operators).
  std::vector<NodeId> Nodes() const;
  // The lowest checkpoint among absent replicas; nullopt if none.
  std::optional<Ts> MinAbsentCheckpoint() const;
  size_t size() const { return replicas_.size(); }
  size_t CountInState(ReplicaState state) const;

  // The table-trigger dispatcher: always on the maintainer's node.
  void SetTrigger(DispatcherId id, const NodeId& node);
  DispatcherId trigger_id() const { return trigger_id_; }
  const NodeId& trigger_node() const { return trigger_node_; }

 private:
  std::map<DispatcherId, Replica> replicas_;
  std::map<int64_t, DispatcherId> by_table_;
  DispatcherId trigger_id_;
  NodeId trigger_node_;
};

}  // namespace sluice::maintainer
