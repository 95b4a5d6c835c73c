// Internal to the event service: what it keeps per registered dispatcher and
// the queue of each worker thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/strong_id.h"
#include "common/thread_annotations.h"
#include "event/events.h"
#include "eventservice/event_service.h"
#include "eventstore/event_store.h"

namespace sluice::eventservice {

struct ServiceCounters {
  std::atomic<uint64_t> scans{0};
  std::atomic<uint64_t> dml_events{0};
  std::atomic<uint64_t> ddl_events{0};
  std::atomic<uint64_t> resolved_events{0};
  std::atomic<uint64_t> rows{0};
  std::atomic<uint64_t> rows_filtered{0};
  std::atomic<uint64_t> rows_skipped_at_start{0};
  std::atomic<uint64_t> rows_of_dropped_tables{0};
  std::atomic<uint64_t> split_updates{0};
};

// Where a scan starts: GetIterator(from, end, cursor).
struct ScanStart {
  Ts from;
  std::optional<eventstore::ScanCursor> cursor;
};

// A transaction partly delivered (or about to be): its rows are read in one
// pass, or two when an update changes a unique key (pass 1 delivers every
// row with such updates replaced by their delete half; pass 2 reads the
// transaction's updates again and delivers their insert halves, so every
// delete precedes every insert, as TiCDC orders them).
struct OpenTxn {
  Ts commit_ts;
  Ts start_ts;
  event::TableSchemaPtr schema;  // Null: the table did not exist; rows are skipped.
  std::vector<int> uk_columns;
  ScanStart begin;  // Where the transaction's first row is read from.
  int pass = 1;
  bool has_split = false;
  uint32_t next_piece = 0;
  // The next piece, never empty when set: a piece goes out once the row
  // after it is known to belong to the same transaction (or the transaction
  // ends), so the last piece is never empty.
  event::DmlEventPtr pending;
  size_t pending_bytes = 0;
};

// Scan position of one dispatcher. Only its worker touches it.
struct ScanProgress {
  // Every event with commit ts <= sent_ts has been delivered. While a
  // transaction at commit ts c is open, or the scan stopped between
  // transactions sharing c, sent_ts is c - 1 and `resume` says where to go on.
  Ts sent_ts;
  std::optional<eventstore::ScanCursor> resume;
  std::optional<OpenTxn> txn;
  Ts last_resolved;  // Last resolved mark delivered.
  Clock::TimePoint last_resolved_time;
  bool failed = false;
  // Cache of UniqueKeyColumns() for the last schema seen.
  event::TableSchemaPtr uk_schema;
  std::vector<int> uk_columns;
};

class WorkerQueue;

struct DispatcherState {
  DispatcherState(DispatcherId id_in, bool trigger, int64_t table, RowFilter filter_in,
                  size_t budget_in, EventConsumer* consumer_in, std::shared_ptr<WorkerQueue> q)
      : id(id_in),
        table_trigger(trigger),
        table_id(table),
        filter(std::move(filter_in)),
        budget(budget_in),
        consumer(consumer_in),
        queue(std::move(q)) {}

  const DispatcherId id;
  const bool table_trigger;
  const int64_t table_id;
  const RowFilter filter;
  // DML with this commit ts is dropped; zero: none. Set before the state is
  // published to the workers.
  Ts skip_dml_at;
  const size_t budget;
  EventConsumer* const consumer;
  const std::shared_ptr<WorkerQueue> queue;

  // Every flag and counter below uses sequentially consistent operations:
  // the wake-up protocols (queued / store_resolved between notify and
  // worker, waiting_credit / unacked between Ack and worker) are
  // store-then-load on both sides and lose wake-ups under weaker orders.
  // Written by the event store's notify (max commit first, then resolved).
  std::atomic<uint64_t> store_resolved{0};
  std::atomic<uint64_t> store_max_commit{0};
  std::atomic<size_t> unacked{0};
  std::atomic<bool> queued{false};
  std::atomic<bool> removed{false};
  std::atomic<bool> waiting_credit{false};

  bool HasCredit() const { return unacked.load() < budget; }
  // Returns the bytes still unacked (never below zero).
  size_t Release(size_t bytes) {
    size_t cur = unacked.load();
    while (!unacked.compare_exchange_weak(cur, cur > bytes ? cur - bytes : 0)) {
    }
    return cur > bytes ? cur - bytes : 0;
  }

  // Held by the worker while it scans or delivers to this dispatcher;
  // RemoveDispatcher takes it to wait for a delivery in progress.
  Mutex run_mu;
  ScanProgress progress GUARDED_BY(run_mu);
};

using DispatcherStatePtr = std::shared_ptr<DispatcherState>;

// The run queue of one worker thread and the dispatchers it serves. Shared
// with the notify callbacks (which may outlive the service by a moment), so
// it is reference-counted. Thread-safe.
class WorkerQueue {
 public:
  enum class Wakeup { kDispatcher, kTick, kSchema, kStop };

  // Queues `d` unless it is already queued.
  void Wake(const DispatcherStatePtr& d) EXCLUDES(mu_);
  // The schema store's resolved ts advanced: the worker looks at every member.
  void SchemaAdvanced() EXCLUDES(mu_);
  void Stop() EXCLUDES(mu_);

  void AddMember(const DispatcherStatePtr& d) EXCLUDES(mu_);
  void RemoveMember(DispatcherId id) EXCLUDES(mu_);
  std::vector<DispatcherStatePtr> Members() const EXCLUDES(mu_);

  // Worker side: waits for a queued dispatcher (returned in *out), the tick
  // deadline, a schema advance or Stop().
  Wakeup Wait(Clock* clock, Clock::TimePoint tick_deadline, DispatcherStatePtr* out) EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  CondVar cv_;
  std::deque<DispatcherStatePtr> ready_ GUARDED_BY(mu_);
  std::unordered_map<DispatcherId, DispatcherStatePtr> members_ GUARDED_BY(mu_);
  bool schema_advanced_ GUARDED_BY(mu_) = false;
  bool stop_ GUARDED_BY(mu_) = false;
};

}  // namespace sluice::eventservice
