// The write path: the per-subscription consumer the puller calls, and the
// per-instance write queue with its workers.
#include <algorithm>
#include <utility>

#include "common/logging.h"
#include "eventstore/key_format.h"
#include "eventstore/store_internal.h"

namespace sluice::eventstore {

StoreCounters::StoreCounters() {
  Registry* reg = Registry::Default();
  written_metric_ = reg->AddCounter("sluice_eventstore_entries_written_total",
                                    "Changes written to the event store.");
  dropped_late_metric_ =
      reg->AddCounter("sluice_eventstore_entries_dropped_late_total",
                      "Changes dropped because their commit ts was <= the published resolved ts.");
  delete_ranges_metric_ = reg->AddCounter("sluice_eventstore_gc_delete_ranges_total",
                                          "Key ranges deleted by event store GC and removals.");
}

void StoreCounters::AddWritten(uint64_t n) {
  entries_written.fetch_add(n, std::memory_order_relaxed);
  written_metric_->Add(static_cast<double>(n));
}

void StoreCounters::AddDroppedLate(uint64_t n) {
  entries_dropped_late.fetch_add(n, std::memory_order_relaxed);
  dropped_late_metric_->Add(static_cast<double>(n));
}

void StoreCounters::AddDroppedClosed(uint64_t n) {
  entries_dropped_closed.fetch_add(n, std::memory_order_relaxed);
}

void StoreCounters::AddDeleteRanges(uint64_t n) {
  gc_delete_ranges.fetch_add(n, std::memory_order_relaxed);
  delete_ranges_metric_->Add(static_cast<double>(n));
}

Status FromRocks(const rocksdb::Status& status, std::string_view what) {
  if (status.ok()) return Status::Ok();
  std::string msg = std::string(what) + ": " + status.ToString();
  if (status.IsCorruption()) return Corruption(std::move(msg));
  if (status.IsNoSpace()) return ResourceExhausted("disk full: " + msg);
  return IoError(std::move(msg));
}

void SubscriptionState::SetPersistUrgentLocked(bool urgent) {
  if (persist_urgent.exchange(urgent, std::memory_order_relaxed) != urgent) {
    writer->AddUrgent(urgent ? 1 : -1);
  }
}

void SubscriptionState::FinishWrite() {
  MutexLock lock(&mu);
  --pending_writes_;
}

// ---- SubscriptionConsumer ----

void SubscriptionConsumer::ConsumeKvEvents(KvBatch batch, logpuller::PersistedCallback persisted) {
  const uint64_t resolved = sub_->resolved_ts.load(std::memory_order_acquire);
  auto late = [resolved](const RawKvEntry& e) { return e.commit_ts.value() <= resolved; };
  size_t before = batch.size();
  batch.erase(std::remove_if(batch.begin(), batch.end(), late), batch.end());
  if (size_t dropped = before - batch.size(); dropped > 0) {
    counters_->AddDroppedLate(dropped);
    LOG_WARN("event store subscription {}: dropped {} changes with commit ts <= resolved ts {}",
             sub_->store_id, dropped, resolved);
  }
  uint64_t max_commit = 0;
  for (const RawKvEntry& e : batch) max_commit = std::max(max_commit, e.commit_ts.value());
  uint64_t seen = sub_->max_commit_ts.load(std::memory_order_relaxed);
  while (max_commit > seen &&
         !sub_->max_commit_ts.compare_exchange_weak(seen, max_commit, std::memory_order_relaxed)) {
  }

  if (!batch.empty()) {
    WriteTask task{sub_, std::move(batch), std::move(persisted)};
    {
      MutexLock lock(&sub_->mu);
      if (!sub_->closed_) {
        ++sub_->pending_writes_;
        if (sub_->writer->Enqueue(&task)) return;
        --sub_->pending_writes_;
      }
    }
    counters_->AddDroppedClosed(task.entries.size());
    persisted = std::move(task.persisted);
  }
  persisted();
}

void SubscriptionConsumer::AdvanceResolvedTs(Ts ts) {
  // Calls are serialised by the puller, so a plain load/store is enough.
  uint64_t prev = sub_->resolved_ts.load(std::memory_order_relaxed);
  if (ts.value() <= prev) return;
  sub_->resolved_ts.store(ts.value(), std::memory_order_release);
  std::vector<NotifyFn> notify;
  {
    MutexLock lock(&sub_->mu);
    if (sub_->closed_) return;
    notify.reserve(sub_->readers_.size());
    for (const auto& [id, reader] : sub_->readers_) notify.push_back(reader.notify);
  }
  Ts max_commit(sub_->max_commit_ts.load(std::memory_order_relaxed));
  for (const NotifyFn& fn : notify) {
    if (fn) fn(ts, max_commit);
  }
}

void SubscriptionConsumer::SetPersistUrgent(bool urgent) {
  MutexLock lock(&sub_->mu);
  if (!sub_->closed_) sub_->SetPersistUrgentLocked(urgent);
}

void SubscriptionConsumer::OnSubscriptionError(const Status& status) {
  LOG_WARN("event store subscription {}: puller reported {}", sub_->store_id, status.ToString());
  MutexLock lock(&sub_->mu);
  if (sub_->puller_error_.ok()) {
    sub_->puller_error_ = status.ok() ? Cancelled("subscription closed by the puller") : status;
  }
}

// ---- DbWriter ----

Status DbWriter::WriteSorted(SortedBatch* sorted) {
  std::string& buffer = sorted->bytes;
  std::vector<PendingPut>& pending = sorted->puts;
  rocksdb::WriteBatch& batch = sorted->batch;
  const char* base = buffer.data();
  auto key_of = [base](const PendingPut& p) {
    return rocksdb::Slice(base + p.key_at, p.value_at - p.key_at);
  };
  // Equal keys stay in arrival order (their offsets grow with it).
  std::sort(pending.begin(), pending.end(), [&](const PendingPut& a, const PendingPut& b) {
    const int c = key_of(a).compare(key_of(b));
    return c != 0 ? c < 0 : a.key_at < b.key_at;
  });
  batch.Clear();
  Status st;
  for (const PendingPut& p : pending) {
    rocksdb::Slice value(base + p.value_at, p.end - p.value_at);
    st = FromRocks(batch.Put(key_of(p), value), "event store batch put");
    if (!st.ok()) break;
  }
  // A refused write (a background error, e.g. a failed flush) is tried once
  // more if RocksDB resumes; otherwise the batch's callbacks get the error.
  // A batch that could not be built is never written.
  if (st.ok()) {
    st = FromRocks(db_->db->Write(db_->write_options, &batch), "event store write");
    if (!st.ok() && TryResume(st)) {
      st = FromRocks(db_->db->Write(db_->write_options, &batch), "event store write");
    }
  }
  // Both copies of a large batch are freed rather than kept for the next.
  if (batch.GetDataSize() > kMaxKeptBuffer) {
    batch = rocksdb::WriteBatch();
  } else {
    batch.Clear();
  }
  pending.clear();
  if (buffer.capacity() > kMaxKeptBuffer) {
    std::string().swap(buffer);
  } else {
    buffer.clear();
  }
  return st;
}

// After a failed write RocksDB refuses writes until its background error is
// cleared: Resume() retries the failed flush. If the fault is still there
// the next write fails again, and its subscription restarts later (with
// backoff) to try once more.
bool DbWriter::TryResume(const Status& write_error) {
  rocksdb::Status resumed = db_->db->Resume();
  if (resumed.ok()) {
    LOG_WARN("event store: write failed ({}); the store resumed", write_error.ToString());
    return true;
  }
  if (resumed.IsBusy()) {
    // RocksDB's own recovery (a full disk) is running; it resumes by itself.
    LOG_DEBUG("event store: write failed ({}); recovery in progress", write_error.ToString());
  } else {
    LOG_WARN("event store: write failed ({}); resume failed: {}", write_error.ToString(),
             resumed.ToString());
  }
  return false;
}

DbWriter::DbWriter(std::shared_ptr<DbHandle> db, size_t max_batch_entries,
                   std::shared_ptr<StoreCounters> counters, std::function<void()> before_round)
    : db_(std::move(db)),
      max_batch_entries_(max_batch_entries),
      counters_(std::move(counters)),
      before_round_(std::move(before_round)),
      queue_([](const WriteTask& task) { return task.entries.size(); },
             [](const WriteTask& task) -> const void* { return task.sub.get(); },
             [](const WriteTask& task) {
               return task.sub->persist_urgent.load(std::memory_order_relaxed);
             }) {}

void DbWriter::Start(size_t workers, const std::string& name) {
  for (size_t i = 0; i < workers; ++i) {
    workers_.Start(name + "-" + std::to_string(i), [this](StopToken) { WorkerLoop(); });
  }
}

bool DbWriter::Enqueue(WriteTask* task) { return queue_.Push(task); }

void DbWriter::Stop() {
  queue_.Close();
  workers_.Join();
  // With no workers (or if one never ran), finish what is left here.
  std::vector<WriteTask> rest;
  queue_.TakeAll(&rest);
  for (WriteTask& task : rest) {
    task.sub->FinishWrite();
    counters_->AddDroppedClosed(task.entries.size());
    task.persisted();
  }
}

void DbWriter::WorkerLoop() {
  // Pops without a stop token: the loop ends when the queue is closed and
  // drained, so every queued task gets its callback.
  std::vector<WriteTask> tasks;
  SortedBatch sorted;
  while (true) {
    tasks.clear();
    if (!queue_.PopRound(max_batch_entries_, &tasks)) return;
    if (before_round_) before_round_();
    WriteTasks(&tasks, &sorted);
  }
}

// Each RocksDB write batch holds its entries in key order: the memtable
// then inserts them with a per-prefix hint (see DbOptions), moving from the
// previous insert instead of searching the skip list from its top, which
// matters for an incremental scan's rows (key order upstream, commit ts
// order here, so they land all over the memtable). Entries with equal keys
// keep their arrival order, so the later one still wins.
void DbWriter::WriteTasks(std::vector<WriteTask>* tasks, SortedBatch* sorted) {
  const size_t n = tasks->size();
  std::vector<Status> results(n);
  std::vector<bool> skipped(n, false);
  std::vector<size_t> contributors;  // Tasks with entries in the pending batch.
  auto flush = [&] {
    Status st = WriteSorted(sorted);
    for (size_t i : contributors) {
      if (!st.ok() && results[i].ok()) results[i] = st;
    }
    contributors.clear();
  };
  for (size_t i = 0; i < n; ++i) {
    const WriteTask& task = (*tasks)[i];
    const SubscriptionState& sub = *task.sub;
    if (sub.closed()) {
      skipped[i] = true;
      continue;
    }
    std::string& bytes = sorted->bytes;
    for (const RawKvEntry& entry : task.entries) {
      const size_t key_at = bytes.size();
      AppendStoreKey(sub.store_id, EntryTableId(entry.key, sub.table_id), entry, &bytes);
      const size_t value_at = bytes.size();
      AppendStoreValue(entry, &bytes);
      sorted->puts.push_back(PendingPut{key_at, value_at, bytes.size()});
      if (contributors.empty() || contributors.back() != i) contributors.push_back(i);
      if (sorted->puts.size() >= max_batch_entries_) flush();
    }
  }
  if (!sorted->puts.empty()) flush();

  uint64_t written = 0;
  uint64_t dropped = 0;
  for (size_t i = 0; i < n; ++i) {
    const WriteTask& task = (*tasks)[i];
    if (skipped[i]) {
      dropped += task.entries.size();
    } else if (results[i].ok()) {
      written += task.entries.size();
    } else {
      counters_->write_failures.fetch_add(1, std::memory_order_relaxed);
      LOG_ERROR("event store subscription {}: write failed: {}", task.sub->store_id,
                results[i].ToString());
    }
  }
  counters_->AddWritten(written);
  counters_->AddDroppedClosed(dropped);
  // Callbacks run after every write of this round and outside any lock.
  for (size_t i = 0; i < n; ++i) {
    WriteTask& task = (*tasks)[i];
    task.sub->FinishWrite();
    task.persisted(results[i]);
  }
}

}  // namespace sluice::eventstore
