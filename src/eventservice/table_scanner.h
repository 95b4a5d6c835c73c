// Internal to the event service: one scan task of one dispatcher, run by its
// worker while holding the dispatcher's run_mu. A task reads as far as the
// range, the dispatcher's credit and the per-task byte limit allow, delivers
// what it read and leaves the position in ScanProgress.
#pragma once

#include <optional>

#include "common/clock.h"
#include "eventservice/dispatcher_state.h"
#include "eventservice/event_service.h"
#include "eventstore/event_store.h"
#include "schemastore/schema_reader.h"

namespace sluice::eventservice {

enum class ScanOutcome {
  kCaughtUp,    // Everything up to the current bound is delivered.
  kYield,       // Stopped at the per-task limit; more to read now.
  kNoCredit,    // Stopped: unacked bytes reached the budget.
  kRetryLater,  // The schema store could not answer yet.
  kFailed,      // OnError was delivered; the dispatcher is done.
};

struct ScanContext {
  eventstore::EventStore* store;
  schemastore::SchemaReader* schema;
  const EventServiceOptions* options;
  ServiceCounters* counters;
};

// A table-span dispatcher: (sent, min(store resolved, schema resolved)].
ScanOutcome ScanTable(const ScanContext& ctx, DispatcherState& d, ScanProgress& p);
// The table-trigger dispatcher: every DDL in (sent, schema resolved].
ScanOutcome ScanTableTrigger(const ScanContext& ctx, DispatcherState& d, ScanProgress& p);

// Delivers a resolved mark if `ts` is above the last one.
void DeliverResolved(const ScanContext& ctx, DispatcherState& d, ScanProgress& p, Ts ts);
// Marks the dispatcher failed and delivers OnError.
// `failing_ts` defaults to the first ts not yet delivered (sent_ts + 1).
ScanOutcome FailDispatcher(DispatcherState& d, ScanProgress& p, const Status& status,
                           std::optional<Ts> failing_ts = std::nullopt);

}  // namespace sluice::eventservice
