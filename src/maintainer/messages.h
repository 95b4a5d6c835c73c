// What the maintainer of one changefeed receives from the dispatcher managers
// (heartbeats, block statuses) beyond the dispatchermanager request and
// response structs, what it sends for the DDL/syncpoint barrier, and the
// MaintainerOutbox through which every outgoing message leaves. Mirrors
// TiCDC's heartbeatpb HeartBeatRequest, TableSpanStatus, Watermark,
// TableSpanBlockStatus and DispatcherStatus; an adapter maps the wire
// messages onto these values.
//
// Value types with no threading concerns, except MaintainerOutbox (see there).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/strong_id.h"
#include "dispatcher/block_status.h"
#include "dispatchermanager/messages.h"
#include "event/events.h"

namespace sluice::maintainer {

// A node's aggregate progress: the minimum checkpoint and resolved ts over
// its dispatchers. `seq` grows whenever the node's dispatcher set changes, so
// a lower checkpoint with a newer seq is real (a dispatcher was added) while
// one with an older seq is a reordered, stale heartbeat.
struct Watermark {
  Ts checkpoint_ts;
  Ts resolved_ts;
  uint64_t seq = 0;
};

// One dispatcher's state as a heartbeat reports it.
struct SpanStatus {
  DispatcherId id;
  dispatchermanager::ComponentState state = dispatchermanager::ComponentState::kWorking;
  Ts checkpoint_ts;
};

// A dispatcher manager's periodic report. `statuses` may be partial (only
// the dispatchers that changed); `watermark` is absent until the node has
// computed one.
struct HeartbeatRequest {
  std::string changefeed_id;
  std::vector<SpanStatus> statuses;
  std::optional<Watermark> watermark;
  // The first error of the node's data path of this changefeed (its sink,
  // schema store or a dispatcher); OK while it works.
  Status error;
};

// One dispatcher's report about a block event (DDL or syncpoint). A DDL and
// a syncpoint at the same ts are different events, told apart by
// `is_syncpoint`.
struct BlockReport {
  DispatcherId dispatcher_id;
  Ts block_ts;
  bool is_syncpoint = false;
  dispatcher::BlockStage stage = dispatcher::BlockStage::kNone;
  event::BlockedTables blocked_tables;
  std::vector<event::TableRef> tables_to_add;
  std::vector<int64_t> tables_to_drop;
};

// The report of a dispatcher's BlockStatus (which names no syncpoints yet).
BlockReport ToBlockReport(const dispatcher::BlockStatus& status, bool is_syncpoint = false);

// The maintainer's decision for a block event, for the listed dispatchers of
// one node: write it (exactly one dispatcher per event) or pass it.
struct BarrierActionRequest {
  std::string changefeed_id;
  NodeId from;
  MaintainerEpoch epoch;
  Ts block_ts;
  bool is_syncpoint = false;
  dispatcher::BarrierAction action = dispatcher::BarrierAction::kPass;
  std::vector<DispatcherId> dispatchers;
};

// Where the maintainer's messages go. Send() must not block and must not call
// back into the maintainer (delivery is asynchronous; the maintainer resends
// what is not acknowledged). Called only from the maintainer's thread; the
// outbox is borrowed and must outlive the maintainer.
class MaintainerOutbox {
 public:
  virtual ~MaintainerOutbox() = default;
  virtual void Send(const NodeId& to, const dispatchermanager::BootstrapRequest& request) = 0;
  virtual void Send(const NodeId& to, const dispatchermanager::PostBootstrapRequest& request) = 0;
  virtual void Send(const NodeId& to, const dispatchermanager::ScheduleRequest& request) = 0;
  virtual void Send(const NodeId& to, const dispatchermanager::CloseRequest& request) = 0;
  virtual void Send(const NodeId& to, const BarrierActionRequest& request) = 0;
};

}  // namespace sluice::maintainer
