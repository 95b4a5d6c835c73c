// Maintainer epoch fencing (TiCDC dispatcher_manager_info.go and the
// orchestrator's closed-epoch tombstones;
// docs/design/maintainer-epoch-fencing.md).
//
// MaintainerFence is the (owner node, epoch) of one dispatcher manager and
// the rules that decide which maintainer may act on it:
//
//   bootstrap (take ownership)  epoch > known, or epoch == known from the
//                               same node (or while no node is known);
//                               epoch 0 only while the known epoch is 0
//   any other request           exactly the known (node, epoch); epoch 0
//                               only while the known epoch is 0 and the node
//                               is the owner (or none is known yet)
//
// ClosedEpochs remembers, per changefeed, the highest epoch whose manager was
// closed on this node, so that a late bootstrap of a closed generation cannot
// bring a manager back.
//
// Both are values with no locking of their own: MaintainerFence lives under
// its manager's fence mutex, ClosedEpochs under the orchestrator's mutex.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>

#include "common/strong_id.h"

namespace sluice::dispatchermanager {

// The non-bootstrap admission rule applied to a snapshot of the owner.
bool RequestAllowedBySnapshot(const NodeId& owner, MaintainerEpoch owner_epoch, const NodeId& from,
                              MaintainerEpoch epoch);

class MaintainerFence {
 public:
  // No owner yet, epoch 0 (compatibility mode).
  MaintainerFence() = default;

  const NodeId& owner() const { return owner_; }
  MaintainerEpoch epoch() const { return epoch_; }

  // Whether a bootstrap from (from, epoch) may take ownership. Pure.
  bool CanTakeOwnership(const NodeId& from, MaintainerEpoch epoch) const;

  // Takes ownership if CanTakeOwnership; returns whether it did.
  bool TryTakeOwnership(const NodeId& from, MaintainerEpoch epoch);

  // Whether a non-bootstrap request from (from, epoch) belongs to the owner.
  bool Allows(const NodeId& from, MaintainerEpoch epoch) const {
    return RequestAllowedBySnapshot(owner_, epoch_, from, epoch);
  }

 private:
  NodeId owner_;
  MaintainerEpoch epoch_;
};

class ClosedEpochs {
 public:
  // Records that the manager of `changefeed_id` was closed by `epoch`. Keeps
  // the highest epoch. Epoch 0 carries no order and is kept only for a
  // removal (so a paused pre-epoch changefeed may still be resumed).
  void Record(const std::string& changefeed_id, MaintainerEpoch epoch, bool removed);

  // Whether a bootstrap with `epoch` must not create a manager: a closed
  // epoch is known and `epoch` is 0 or not above it.
  bool BlocksBootstrap(const std::string& changefeed_id, MaintainerEpoch epoch) const;

  std::optional<MaintainerEpoch> Get(const std::string& changefeed_id) const;

 private:
  std::unordered_map<std::string, MaintainerEpoch> closed_;
};

}  // namespace sluice::dispatchermanager
