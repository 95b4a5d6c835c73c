// Internals shared by the event store's source files: the RocksDB instance
// handle, per-subscription state, the write queue and its workers, and the
// iterator implementation. Not part of the public API.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/kv_entry.h"
#include "common/lifecycle.h"
#include "common/metrics.h"
#include "common/queue.h"
#include "common/status.h"
#include "common/strong_id.h"
#include "common/thread_annotations.h"
#include "eventstore/event_store.h"
#include "eventstore/write_queue.h"
#include "logpuller/consumer.h"

namespace sluice::eventstore {

// Counters of one store, shared with consumers that may outlive it. Each
// also feeds a process-wide Prometheus counter.
struct StoreCounters {
  StoreCounters();

  void AddWritten(uint64_t n);
  void AddDroppedLate(uint64_t n);
  void AddDroppedClosed(uint64_t n);
  void AddDeleteRanges(uint64_t n);

  std::atomic<uint64_t> entries_written{0};
  std::atomic<uint64_t> entries_dropped_late{0};
  std::atomic<uint64_t> entries_dropped_closed{0};
  std::atomic<uint64_t> write_failures{0};
  std::atomic<uint64_t> gc_delete_ranges{0};
  std::atomic<uint64_t> gc_passes{0};
  std::atomic<uint64_t> compactions{0};

 private:
  std::shared_ptr<Counter> written_metric_;
  std::shared_ptr<Counter> dropped_late_metric_;
  std::shared_ptr<Counter> delete_ranges_metric_;
};

// One open RocksDB instance. Shared by the store, its writer and every
// iterator on it; closed when the last holder lets go. The write options
// are the store's: no WAL, no sync.
struct DbHandle {
  std::unique_ptr<rocksdb::DB> db;
  rocksdb::WriteOptions write_options;
};

// Converts a RocksDB status to ours (kIoError or kCorruption).
Status FromRocks(const rocksdb::Status& status, std::string_view what);

class DbWriter;

struct Reader {
  NotifyFn notify;
  Ts checkpoint;
};

// One puller subscription. The immutable fields are set at creation; the
// atomics are written by the puller's (serialised) consumer calls; the rest
// is guarded by `mu`.
struct SubscriptionState {
  SubscriptionState(uint64_t store_id, TableId table_id, size_t db_index, Ts start_ts,
                    DbWriter* writer)
      : store_id(store_id),
        table_id(table_id),
        db_index(db_index),
        resolved_ts(start_ts.value()),
        max_commit_ts(start_ts.value()),
        writer(writer),
        gc_next(start_ts.value() + (start_ts.value() == UINT64_MAX ? 0 : 1)) {}

  bool closed() const EXCLUDES(mu) {
    MutexLock lock(&mu);
    return closed_;
  }
  // Called by a write worker once a task of this subscription is done
  // (written, or skipped because the subscription closed). A failed write
  // is remembered as the subscription's write error (the first one wins).
  // A queued write is done (written, failed or dropped).
  void FinishWrite() EXCLUDES(mu);
  // Sets `persist_urgent`, keeping the writer's count of urgent
  // subscriptions in step.
  void SetPersistUrgentLocked(bool urgent) REQUIRES(mu);

  const uint64_t store_id;  // The key prefix; allocated by the store.
  const TableId table_id;
  const size_t db_index;
  std::atomic<uint64_t> resolved_ts;    // Last published resolved ts.
  std::atomic<uint64_t> max_commit_ts;  // Largest commit ts accepted.
  DbWriter* const writer;               // Used only while !closed_.
  // A resolved ts waits for this subscription's queued writes: the writer
  // takes them first (see WriteQueue). Changed under `mu`, together with
  // the writer's count of urgent subscriptions, and cleared on close.
  std::atomic<bool> persist_urgent{false};

  mutable Mutex mu;
  bool closed_ GUARDED_BY(mu) = false;        // No more writes are queued.
  size_t pending_writes_ GUARDED_BY(mu) = 0;  // Queued or being written.
  std::map<DispatcherId, Reader> readers_ GUARDED_BY(mu);
  // A failed write is not kept here: its batch's persisted callback carries
  // the error, so the puller never publishes a resolved ts over it (it
  // restarts the subscription from the last published one, or fails it).
  Status puller_error_ GUARDED_BY(mu);
  // GC thread only: the smallest commit ts GC has not deleted (nothing
  // <= start ts is ever written).
  Ts gc_next;
};

// The KvConsumer the puller gets for one subscription. Holds only shared
// state, so it stays safe to call after the store has stopped.
class SubscriptionConsumer final : public logpuller::KvConsumer {
 public:
  SubscriptionConsumer(std::shared_ptr<SubscriptionState> sub,
                       std::shared_ptr<StoreCounters> counters)
      : sub_(std::move(sub)), counters_(std::move(counters)) {}

  void ConsumeKvEvents(KvBatch batch, logpuller::PersistedCallback persisted) override;
  void AdvanceResolvedTs(Ts ts) override;
  void SetPersistUrgent(bool urgent) override;
  void OnSubscriptionError(const Status& status) override;

 private:
  const std::shared_ptr<SubscriptionState> sub_;
  const std::shared_ptr<StoreCounters> counters_;
};

// A batch queued for writing.
struct WriteTask {
  std::shared_ptr<SubscriptionState> sub;
  KvBatch entries;
  logpuller::PersistedCallback persisted;
};

// The write queue of one RocksDB instance and its workers. Each worker takes
// queued tasks up to max_batch_entries (urgent subscriptions' first), writes
// them in RocksDB write batches of at most that many entries, then runs their
// persisted callbacks. Enqueue() is thread-safe and never blocks on the
// workers; Start() and Stop() are for the owner.
class DbWriter {
 public:
  DbWriter(std::shared_ptr<DbHandle> db, size_t max_batch_entries,
           std::shared_ptr<StoreCounters> counters, std::function<void()> before_round);

  void Start(size_t workers, const std::string& name);
  // False (and `*task` untouched) once the writer is stopping.
  bool Enqueue(WriteTask* task);
  // A subscription of this instance became urgent (+1) or stopped being so
  // (-1); see WriteQueue::AddUrgent.
  void AddUrgent(int delta) { queue_.AddUrgent(delta); }
  // Closes the queue, lets the workers finish it (tasks of closed
  // subscriptions only run their callbacks) and joins them.
  void Stop();

 private:
  // One worker's reused write buffers: the encoded entries of the pending
  // RocksDB batch (`bytes`, with each entry's offsets in `puts`), written in
  // key order by WriteSorted().
  struct PendingPut {
    size_t key_at;
    size_t value_at;
    size_t end;
  };
  struct SortedBatch {
    std::string bytes;
    std::vector<PendingPut> puts;
    rocksdb::WriteBatch batch;
  };
  // A write's encoded entries and its WriteBatch, when larger than this, are
  // freed after the write rather than kept for the next one.
  static constexpr size_t kMaxKeptBuffer = 8 << 20;

  void WorkerLoop();
  void WriteTasks(std::vector<WriteTask>* tasks, SortedBatch* sorted);
  Status WriteSorted(SortedBatch* sorted);
  // Clears RocksDB's background error after a failed write, if it can;
  // true if the store accepts writes again.
  bool TryResume(const Status& write_error);

  const std::shared_ptr<DbHandle> db_;
  const size_t max_batch_entries_;
  const std::shared_ptr<StoreCounters> counters_;
  const std::function<void()> before_round_;
  WriteQueue<WriteTask> queue_;
  ThreadGroup workers_;
};

class EventIterator::Impl {
 public:
  // Scans [lower, upper) (an empty upper: to the end of the instance).
  // `prev` is the transaction before the first row, if any.
  Impl(std::shared_ptr<DbHandle> db, std::string lower, std::string upper, ScanCursor start,
       bool has_prev);

  bool Next(RawKvEntry* out, bool* new_txn);
  const Status& status() const { return status_; }
  const ScanCursor& cursor() const { return cursor_; }

 private:
  const std::shared_ptr<DbHandle> db_;  // Outlives it_ (declared first).
  const std::string lower_;
  const std::string upper_;
  rocksdb::Slice lower_slice_;
  rocksdb::Slice upper_slice_;
  std::unique_ptr<rocksdb::Iterator> it_;
  bool started_ = false;
  bool done_ = false;
  bool has_prev_;
  ScanCursor cursor_;
  Status status_;
};

}  // namespace sluice::eventstore
