#include "dispatchermanager/maintainer_fence.h"

namespace sluice::dispatchermanager {

bool RequestAllowedBySnapshot(const NodeId& owner, MaintainerEpoch owner_epoch, const NodeId& from,
                              MaintainerEpoch epoch) {
  if (epoch.value() == 0) {
    return owner_epoch.value() == 0 && (owner.empty() || owner == from);
  }
  return owner_epoch == epoch && owner == from;
}

bool MaintainerFence::CanTakeOwnership(const NodeId& from, MaintainerEpoch epoch) const {
  if (epoch.value() == 0) return epoch_.value() == 0;
  if (epoch < epoch_) return false;
  if (epoch == epoch_ && !owner_.empty() && owner_ != from) return false;
  return true;
}

bool MaintainerFence::TryTakeOwnership(const NodeId& from, MaintainerEpoch epoch) {
  if (!CanTakeOwnership(from, epoch)) return false;
  owner_ = from;
  epoch_ = epoch;
  return true;
}

void ClosedEpochs::Record(const std::string& changefeed_id, MaintainerEpoch epoch, bool removed) {
  if (epoch.value() == 0 && !removed) return;
  auto [it, inserted] = closed_.try_emplace(changefeed_id, epoch);
  if (!inserted && it->second < epoch) it->second = epoch;
}

bool ClosedEpochs::BlocksBootstrap(const std::string& changefeed_id, MaintainerEpoch epoch) const {
  auto it = closed_.find(changefeed_id);
  if (it == closed_.end()) return false;
  return epoch.value() == 0 || epoch <= it->second;
}

std::optional<MaintainerEpoch> ClosedEpochs::Get(const std::string& changefeed_id) const {
  auto it = closed_.find(changefeed_id);
  if (it == closed_.end()) return std::nullopt;
  return it->second;
}

}  // namespace sluice::dispatchermanager
