// EventService: the node's reader of the event store and the schema store
// for its dispatchers (TiCDC pkg/eventservice). For each registered
// dispatcher it scans (last sent, min(store resolved, schema resolved)],
// decodes rows with the schema valid at each commit, merges the table's DDL
// events in commit-ts order (DML at ts T before a DDL at T), and pushes
// DmlEvents (one per transaction, or pieces of a large one), DdlEvents and
// resolved marks to the dispatcher's EventConsumer. A table-trigger
// registration receives every DDL of the upstream and resolved marks only.
//
// Back-pressure: each dispatcher has a memory budget; delivered DML bytes
// count as in flight until the consumer acks them (after the sink flushed
// them). The service scans no more for a dispatcher whose unacked bytes
// reached its budget; a transaction larger than the budget is delivered in
// pieces, resuming inside it from an event-store cursor, so it is never held
// in memory whole. Bytes in flight stay below budget + one row.
//
// Threads: `num_workers` owned worker threads, each serving the dispatchers
// whose id hashes to it; one worker scans a dispatcher at a time, so a
// consumer's callbacks never run concurrently and arrive in order. The event
// store's notify and the schema store's listener only mark a dispatcher and
// wake its worker. Public methods are thread-safe. Consumers are borrowed:
// a consumer must outlive its registration (RemoveDispatcher waits for a
// callback in progress, except when called from that dispatcher's own
// callback). The store and the schema reader are borrowed and must outlive
// the service.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "common/clock.h"
#include "common/span.h"
#include "common/status.h"
#include "common/strong_id.h"
#include "event/events.h"
#include "event/table_schema.h"

namespace sluice::eventstore {
class EventStore;
}
namespace sluice::schemastore {
class SchemaReader;
}

namespace sluice::eventservice {

// Receives one dispatcher's events in order, on a service worker thread.
// Callbacks should not block for long (they hold up the worker's other
// dispatchers); they may call Ack() and UpdateCheckpoint().
class EventConsumer {
 public:
  virtual ~EventConsumer() = default;
  // A transaction of the dispatcher's span, or one piece of it. Its bytes
  // (DmlEvent::ApproximateBytes()) are in flight until acked.
  virtual void OnDml(event::DmlEventPtr dml) = 0;
  virtual void OnDdl(event::DdlEventPtr ddl) = 0;
  // Every event with commit ts <= ts has been delivered. Also repeated,
  // unchanged, every resolved_interval while nothing else is sent.
  virtual void OnResolved(Ts ts) = 0;
  // The dispatcher cannot go on (undecodable row, schema or store failure,
  // filter error); nothing more is delivered to it. `failing_ts` is the
  // commit ts of the first event it could not deliver (for an undecodable
  // row, that row's commit ts).
  virtual void OnError(Status status, Ts failing_ts) = 0;
};

// The changefeed's row filter: true drops the row. Called with the schema
// the row was decoded with and the transaction's start ts; the halves of an
// update split into delete + insert are filtered as a delete and an insert.
// An error fails the dispatcher.
using RowFilter = std::function<Result<bool>(const event::TableSchema& schema,
                                             const event::RowChange& row, Ts start_ts)>;

struct DispatcherRegistration {
  DispatcherId id;
  int64_t table_id = 0;  // Physical table id (a partition id for a partition).
  // Memcomparable span inside the table; default: the table's record span.
  std::optional<Span> comparable_span;
  Ts start_ts;  // Events with commit ts > start_ts are delivered.
  // DML with commit ts start_ts + 1 is dropped (after a restart, a DDL at
  // that ts was cut short and its earlier rows are already downstream; the
  // MySQL sink's TableRecovery says so). The DDL itself is delivered.
  bool skip_dml_after_start_ts = false;
  RowFilter filter;
  size_t memory_budget = 0;  // 0: EventServiceOptions::default_memory_budget.
  EventConsumer* consumer = nullptr;
};

struct EventServiceOptions {
  size_t num_workers = 4;
  Clock* clock = Clock::Real();
  // How often each worker looks at all of its dispatchers (keep-alive
  // resolved marks, retries, subscription errors).
  std::chrono::milliseconds tick_interval{100};
  // A resolved mark is repeated when none was sent for this long.
  std::chrono::milliseconds resolved_interval{2000};
  size_t default_memory_budget = 64 << 20;
  // A DmlEvent (piece) holds at most about this many bytes of rows.
  size_t max_piece_bytes = 1 << 20;
  // A scan yields its worker at the next transaction boundary after reading
  // this many raw bytes, so one busy table cannot starve the others.
  size_t scan_bytes_per_task = 8 << 20;
};

// Counters for tests and benchmarks.
struct EventServiceStats {
  uint64_t scans = 0;
  uint64_t dml_events = 0;
  uint64_t ddl_events = 0;
  uint64_t resolved_events = 0;
  uint64_t rows = 0;
  uint64_t rows_filtered = 0;
  uint64_t rows_skipped_at_start = 0;   // skip_dml_after_start_ts
  uint64_t rows_of_dropped_tables = 0;  // Skipped: the table no longer existed.
  uint64_t split_updates = 0;           // Updates split into delete + insert.
};

class EventService {
 public:
  EventService(EventServiceOptions options, eventstore::EventStore* store,
               schemastore::SchemaReader* schema);
  ~EventService();  // Stop()s.
  EventService(const EventService&) = delete;
  EventService& operator=(const EventService&) = delete;

  // Starts the workers and listens to the schema store. InvalidArgument for
  // bad options.
  Status Start();
  // Stops and joins the workers, unregisters every dispatcher from the event
  // store and the schema listener. No callback runs after it returns.
  // Idempotent.
  void Stop();

  // Registers a table-span dispatcher and subscribes its span in the event
  // store. kAlreadyExists for a known id, kInvalidArgument for a missing
  // consumer, the store's error if it refuses, kCancelled after Stop().
  Status RegisterDispatcher(DispatcherRegistration registration);
  // Registers the changefeed's table-trigger dispatcher: every DDL with
  // finished ts > start_ts (SchemaReader::AllDdlEvents) and resolved marks.
  Status RegisterTableTrigger(DispatcherId id, Ts start_ts, EventConsumer* consumer);
  // Stops delivering to `id` and unregisters it. Unknown ids: no-op.
  void RemoveDispatcher(DispatcherId id);

  // The consumer hands back `bytes` of delivered DML (after flushing them).
  void Ack(DispatcherId id, size_t bytes);
  // The dispatcher's checkpoint, for event-store GC.
  void UpdateCheckpoint(DispatcherId id, Ts checkpoint);

  // Delivered, not yet acked bytes of `id` (0 for unknown ids).
  size_t UnackedBytes(DispatcherId id) const;
  EventServiceStats stats() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice::eventservice
