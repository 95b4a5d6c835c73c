// The changefeed checkpoint: the minimum over the nodes' watermarks, held
// back by the operators, the barrier and the absent spans, and never moved
// back (TiCDC maintainer.calculateNewCheckpointTs).
//
// Thread-compatible: owned by the Maintainer and used from its thread only.
#pragma once

#include <map>
#include <optional>
#include <vector>

#include "common/strong_id.h"
#include "maintainer/messages.h"

namespace sluice::maintainer {

// The last accepted watermark of each node. A watermark with a newer seq
// replaces the old one even if its checkpoint is lower (the node's
// dispatcher set changed); one with the same seq only raises it; one with
// an older seq is stale and ignored.
class WatermarkTracker {
 public:
  // Returns whether `watermark` was accepted.
  bool Update(const NodeId& node, const Watermark& watermark);
  void Remove(const NodeId& node);
  // The minimum checkpoint over `required`; nullopt if one of them has not
  // reported a watermark yet.
  std::optional<Ts> Min(const std::vector<NodeId>& required) const;
  const Watermark* Find(const NodeId& node) const;

 private:
  std::map<NodeId, Watermark> marks_;
};

// The limits besides the node watermarks.
struct CheckpointLimits {
  std::optional<Ts> operators;  // OperatorController::MinCheckpoint().
  std::optional<Ts> barrier;    // Barrier::MinCheckpoint().
  std::optional<Ts> absent;     // SpanController::MinAbsentCheckpoint().
};

// The new changefeed checkpoint: min(nodes, limits), but never below
// `current`. `nodes` nullopt (a node has not reported) keeps `current`.
Ts NextCheckpoint(Ts current, std::optional<Ts> nodes, const CheckpointLimits& limits);

}  // namespace sluice::maintainer
