// EventStore: the node's on-disk cache of committed row changes, on RocksDB
// (TiCDC's logservice/eventstore). Readers (dispatchers) register a table span
// from a start ts; the store opens one log puller subscription per reader,
// persists the puller's batches, tells the reader when the resolved ts
// advances, serves ordered scans of (from, to] and deletes what every reader
// has passed (GC).
//
// Ownership: the store owns its RocksDB instances (under
// <data_dir>/event_store, wiped on Open), one write queue and its workers per
// instance, and a GC thread. `puller` is borrowed and must outlive the store.
// Iterators keep their RocksDB instance alive until they are destroyed.
//
// Threads: every EventStore method is thread-safe. NotifyFn runs on the
// puller's thread that advanced the resolved ts and must not block.
// Persisted callbacks run on the write workers (or on the caller of
// ConsumeKvEvents / Stop for batches that are never written), never under a
// store lock. An EventIterator belongs to one reader thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/kv_entry.h"
#include "common/span.h"
#include "common/status.h"
#include "common/strong_id.h"
#include "logpuller/consumer.h"

namespace rocksdb {
class Env;
}  // namespace rocksdb

namespace sluice::eventstore {

struct EventStoreOptions {
  // The store lives in <data_dir>/event_store, which Open() wipes: the store
  // is a cache, rebuilt from the readers' checkpoints after a restart.
  std::string data_dir;
  size_t num_dbs = 2;  // RocksDB instances; subscriptions are spread by id.
  size_t write_workers_per_db = 1;
  // Entries per RocksDB write batch (and per round of a write worker).
  size_t max_batch_entries = 16384;
  size_t block_cache_bytes = 256 << 20;  // Shared by all instances.
  size_t memtable_bytes = 64 << 20;      // Per instance.
  // A GC pass runs every interval on `clock` (and at once when a
  // subscription is removed).
  std::chrono::milliseconds gc_interval{1000};
  // Every this many GC passes, ranges deleted since the last compaction are
  // compacted so their space is reclaimed. 0: never.
  size_t compact_every_gc_passes = 60;
  Clock* clock = Clock::Real();
  logpuller::SubscribeOptions subscribe;  // Passed to the puller.
  // The RocksDB environment (file system) the instances run on; null: the
  // default. Tests pass one that fails writes on command.
  std::shared_ptr<rocksdb::Env> env;
  // Test hook: runs on a write worker before each round of writes.
  std::function<void()> before_write_round_for_testing;
};

// Called on every resolved ts advance of the reader's subscription with the
// new resolved ts and the largest commit ts stored so far. Must not block.
using NotifyFn = std::function<void(Ts resolved_ts, Ts max_commit_ts)>;

// Where a scan stopped, to resume inside a large transaction. `position` is
// the store key of the last row returned (opaque to callers); when it is
// empty, the scan resumes after every row of transaction (commit_ts,
// start_ts).
struct ScanCursor {
  Ts commit_ts;
  Ts start_ts;
  std::string position;
};

// An ordered scan over one subscription's changes. Holds a RocksDB iterator
// (a consistent view taken when it was created). Owned by one thread.
class EventIterator {
 public:
  class Impl;
  explicit EventIterator(std::unique_ptr<Impl> impl);
  ~EventIterator();
  EventIterator(const EventIterator&) = delete;
  EventIterator& operator=(const EventIterator&) = delete;

  // The next change in (commit ts, start ts, dml order, key) order; false at
  // the end of the range or on an error (see status()). `*new_txn` is true
  // when (commit ts, start ts) differs from the previous row's (the row
  // before the resume position counts as previous).
  bool Next(RawKvEntry* out, bool* new_txn);
  // OK, kCorruption for undecodable bytes, kIoError for a RocksDB failure.
  Status status() const;
  // The position after the last row returned (or the starting position).
  ScanCursor cursor() const;

 private:
  std::unique_ptr<Impl> impl_;
};

// Counters for tests and benchmarks; they only grow, except subscriptions.
struct EventStoreStats {
  uint64_t entries_written = 0;
  uint64_t entries_dropped_late = 0;    // commit ts <= published resolved ts
  uint64_t entries_dropped_closed = 0;  // subscription removed before the write
  uint64_t write_failures = 0;          // batches whose RocksDB write failed
  uint64_t gc_delete_ranges = 0;        // DeleteRange calls (GC and removals)
  uint64_t gc_passes = 0;
  uint64_t compactions = 0;
  size_t subscriptions = 0;  // Live (registered, not yet removed).
};

class EventStore {
 public:
  // Validates options, wipes and opens the instances, starts the threads.
  static Result<std::unique_ptr<EventStore>> Open(EventStoreOptions options,
                                                  logpuller::SpanSubscriber* puller);
  ~EventStore();  // Stop()s.
  EventStore(const EventStore&) = delete;
  EventStore& operator=(const EventStore&) = delete;

  // Unsubscribes every subscription, finishes the write queues (batches not
  // yet written are dropped, their persisted callbacks still run), stops
  // the GC thread. Idempotent; later calls of other methods fail with
  // kCancelled or do nothing.
  void Stop();

  // Registers reader `id` for table `table_id`'s `comparable_span` from
  // `start_ts` (changes with commit ts > start_ts). Opens a new puller
  // subscription (no sharing between readers). kAlreadyExists if `id` is
  // registered; the puller's error if it refuses.
  Status RegisterDispatcher(DispatcherId id, TableId table_id, const Span& comparable_span,
                            Ts start_ts, NotifyFn notify);
  // Removes the reader; a subscription left without readers is
  // unsubscribed and its data deleted (asynchronously, by the GC thread).
  // Unknown ids: no-op.
  void UnregisterDispatcher(DispatcherId id);
  // The reader has delivered everything with commit ts <= checkpoint. GC
  // deletes below the minimum over the subscription's readers (capped at its
  // resolved ts). Non-increasing values and unknown ids are ignored.
  void UpdateDispatcherCheckpoint(DispatcherId id, Ts checkpoint);

  // Changes with commit ts in (from, to]. Needs checkpoint <= from <= to <=
  // resolved ts, else kInvalidArgument. With a cursor, the scan resumes
  // after the cursor inside commit ts == from (cursor->commit_ts must equal
  // from, and from must be > checkpoint since those rows must still exist).
  // kNotFound for an unknown reader.
  Result<std::unique_ptr<EventIterator>> GetIterator(
      DispatcherId id, Ts from, Ts to, std::optional<ScanCursor> cursor = std::nullopt);

  // OK, the subscription's error (reported by the puller, which includes
  // writes that kept failing), or kNotFound for an unknown reader.
  Status SubscriptionStatus(DispatcherId id) const;

  EventStoreStats stats() const;

  // Test hooks. Number of keys stored (in all instances, or in `id`'s
  // subscription from commit ts 0).
  Result<size_t> CountKeysForTesting(std::optional<DispatcherId> id = std::nullopt) const;
  // Stores `value_bytes` as the value of `entry`'s store key in `id`'s
  // subscription, bypassing the write queue (to plant corrupt values).
  Status PutRawForTesting(DispatcherId id, const RawKvEntry& entry, std::string_view value_bytes);

  class Impl;

 private:
  explicit EventStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice::eventstore
