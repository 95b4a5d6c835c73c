// What a dispatcher reports to the maintainer about block (DDL) events, the
// maintainer's answers, and the error a dispatcher stops with. Plain values.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "common/strong_id.h"
#include "event/events.h"

namespace sluice::dispatcher {

// TiCDC heartbeatpb.BlockStage.
enum class BlockStage : uint8_t {
  kNone,     // A DDL written without the barrier that changes the table set.
  kWaiting,  // Earlier DML is flushed; waiting for the maintainer's action.
  kDone,     // The action was carried out.
};

// TiCDC heartbeatpb.TableSpanBlockStatus.
struct BlockStatus {
  DispatcherId dispatcher_id;
  Ts block_ts;  // The DDL's finished ts.
  BlockStage stage = BlockStage::kNone;
  bool is_blocked = false;  // The dispatcher holds its events until the action.
  event::BlockedTables blocked_tables;
  std::vector<event::TableRef> tables_to_add;
  std::vector<int64_t> tables_to_drop;
  event::DdlEventPtr ddl;
};

// The maintainer's answer to a WAITING block status: this dispatcher writes
// the DDL, or another one does and this one only moves past it.
enum class BarrierAction : uint8_t { kWrite, kPass };

// A dispatcher stopped. `failing_ts` is the commit ts it could not get past
// (the DDL's ts for a failed DDL, else the earliest commit ts not known to be
// written); the changefeed restarts from `checkpoint_ts` for retryable codes
// (status.retryable()) and fails for the others.
struct DispatcherError {
  DispatcherId dispatcher_id;
  Status status;
  Ts failing_ts;
  Ts checkpoint_ts;
};

}  // namespace sluice::dispatcher
