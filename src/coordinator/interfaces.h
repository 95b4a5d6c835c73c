// The coordinator's view of the rest of the cluster, as small abstract
// interfaces so that the coordinator does not depend on messaging, protobuf
// or PD: the maintainer managers of the nodes (where maintainers are added
// and removed), node membership, a TSO source, and the maintainer statuses
// that come back. Adapters over the real transports live with them; tests
// use fakes.
//
// Threads: the coordinator calls these interfaces while holding its own
// lock, so an implementation must not call back into the coordinator from
// inside a call (queue the work instead).
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "common/strong_id.h"
#include "meta/model.h"

namespace sluice::coordinator {

// Starts one maintainer generation of a changefeed on a node (TiCDC
// AddMaintainerRequest). The epoch was persisted before this is sent.
struct AddMaintainerRequest {
  meta::ChangefeedId id;
  meta::ChangefeedInfo info;
  Ts checkpoint_ts;
  MaintainerEpoch epoch;
  bool is_new_changefeed = false;  // Created just now (not resumed/moved).
};

// Stops the maintainer generation `epoch` of a changefeed on a node (TiCDC
// RemoveMaintainerRequest). `cascade` also removes the dispatchers on every
// node; `removed` says the changefeed itself is gone.
struct RemoveMaintainerRequest {
  meta::ChangefeedId id;
  MaintainerEpoch epoch;
  bool cascade = false;
  bool removed = false;
};

// Moves one table of a changefeed to another node (TiCDC move_table): the
// maintainer generation `epoch` closes the table's dispatcher and creates it
// on `target` from its checkpoint.
struct MoveTableRequest {
  meta::ChangefeedId id;
  MaintainerEpoch epoch;
  int64_t table_id = 0;
  NodeId target;
};

// Sends maintainer requests to the maintainer manager of a node. A non-OK
// result means the request was not delivered; the coordinator then tries
// again with a new generation. Add and Remove are called with the
// coordinator's lock held.
class MaintainerManagerClient {
 public:
  virtual ~MaintainerManagerClient() = default;
  virtual Status AddMaintainer(const NodeId& node, const AddMaintainerRequest& request) = 0;
  virtual Status RemoveMaintainer(const NodeId& node, const RemoveMaintainerRequest& request) = 0;
  // Called without the coordinator's lock; may wait for the maintainer's
  // answer: OK once the move started; kNotFound (no such table or
  // generation), kInvalidArgument (the target is not a live node),
  // kAlreadyExists (the table is being moved or scheduled already).
  virtual Status MoveTable(const NodeId& node, const MoveTableRequest& request) {
    return NotSupported("move_table is not supported by this maintainer manager");
  }
};

// The nodes that may host maintainers. The owner of the membership also
// calls Coordinator::OnNodeRemoved when a node leaves; the coordinator
// re-reads AliveNodes() on every Tick as well, so a missed call only delays
// the move. Called with the coordinator's lock held.
class NodeMembership {
 public:
  virtual ~NodeMembership() = default;
  virtual std::vector<NodeId> AliveNodes() const = 0;
};

// The upstream TSO (PD). Called with the coordinator's lock held.
class TsoSource {
 public:
  virtual ~TsoSource() = default;
  virtual Result<Ts> GetTs() = 0;
};

// What a maintainer reports about itself (one entry of TiCDC's
// MaintainerHeartbeat).
enum class MaintainerState { kWorking, kStopped };

struct MaintainerStatus {
  meta::ChangefeedId id;
  MaintainerEpoch epoch;
  MaintainerState state = MaintainerState::kWorking;
  Ts checkpoint_ts;
  // Not OK: the changefeed hit an error. Retryable codes put it into the
  // warning state and retry with backoff; fatal codes fail it.
  Status error;
  bool bootstrap_done = false;
};

// Where a node's maintainer manager reports its maintainers' statuses (the
// coordinator). Called from the manager's thread; must not block.
class MaintainerStatusListener {
 public:
  virtual ~MaintainerStatusListener() = default;
  virtual void OnMaintainerStatus(const NodeId& node, const MaintainerStatus& status) = 0;
};

}  // namespace sluice::coordinator
