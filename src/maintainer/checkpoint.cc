#include "maintainer/checkpoint.h"

#include <algorithm>

namespace sluice::maintainer {

bool WatermarkTracker::Update(const NodeId& node, const Watermark& watermark) {
  auto [it, created] = marks_.try_emplace(node, watermark);
  if (created) return true;
  Watermark& old = it->second;
  if (watermark.seq < old.seq) return false;
  if (watermark.seq > old.seq) {
    old = watermark;
    return true;
  }
  old.checkpoint_ts = std::max(old.checkpoint_ts, watermark.checkpoint_ts);
  old.resolved_ts = std::max(old.resolved_ts, watermark.resolved_ts);
  return true;
}

void WatermarkTracker::Remove(const NodeId& node) { marks_.erase(node); }

std::optional<Ts> WatermarkTracker::Min(const std::vector<NodeId>& required) const {
  std::optional<Ts> min;
  for (const NodeId& node : required) {
    auto it = marks_.find(node);
    if (it == marks_.end()) return std::nullopt;
    if (!min || it->second.checkpoint_ts < *min) min = it->second.checkpoint_ts;
  }
  return min;
}

const Watermark* WatermarkTracker::Find(const NodeId& node) const {
  auto it = marks_.find(node);
  return it == marks_.end() ? nullptr : &it->second;
}

Ts NextCheckpoint(Ts current, std::optional<Ts> nodes, const CheckpointLimits& limits) {
  if (!nodes.has_value()) return current;
  Ts next = *nodes;
  for (const std::optional<Ts>& limit : {limits.operators, limits.barrier, limits.absent}) {
    if (limit.has_value()) next = std::min(next, *limit);
  }
  return std::max(current, next);
}

}  // namespace sluice::maintainer
