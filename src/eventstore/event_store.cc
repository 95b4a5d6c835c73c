#include "eventstore/event_store.h"

#include <rocksdb/cache.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/table.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <memory>
#include <utility>

#include "common/logging.h"
#include "eventstore/key_format.h"
#include "eventstore/store_impl.h"

namespace sluice::eventstore {
namespace {

constexpr uint64_t kMaxTs = std::numeric_limits<uint64_t>::max();

// The memtable insert hint's prefix: (subscription, table), the first 16
// bytes of a change's store key. Only change keys (longer than the fixed
// header) are in its domain. RocksDB 7.8 keeps one hint map per memtable
// for its point and range-deletion skip lists alike, so a DeleteRange whose
// begin key had a hint would leave a splice of the other list behind; the
// GC's and removal's range bounds are header prefixes (at most 24 bytes)
// and so never get one.
class HintPrefix final : public rocksdb::SliceTransform {
 public:
  const char* Name() const override { return "sluice.eventstore.HintPrefix"; }
  rocksdb::Slice Transform(const rocksdb::Slice& key) const override {
    return rocksdb::Slice(key.data(), kStoreKeyTablePrefixLength);
  }
  bool InDomain(const rocksdb::Slice& key) const override {
    return key.size() > kStoreKeyHeaderLength;
  }
};

rocksdb::Options DbOptions(const EventStoreOptions& options,
                           const std::shared_ptr<rocksdb::Cache>& cache) {
  rocksdb::Options db;
  db.create_if_missing = true;
  db.error_if_exists = true;
  db.write_buffer_size = options.memtable_bytes;
  if (options.env != nullptr) db.env = options.env.get();
  // Without a WAL the memtable is lost on close anyway; the store is wiped
  // on the next Open, so flushing it at shutdown would be wasted work.
  db.avoid_flush_during_shutdown = true;
  db.level0_file_num_compaction_trigger = 8;
  // A memtable insert starts from the previous insert of the same
  // (subscription, table) instead of the skip list's top; the writers put
  // each batch in key order so consecutive inserts land close together.
  db.memtable_insert_with_hint_prefix_extractor = std::make_shared<HintPrefix>();
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = cache;
  table.block_size = 32 << 10;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  db.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return db;
}

Status ValidateOptions(const EventStoreOptions& options, logpuller::SpanSubscriber* puller) {
  if (puller == nullptr) return InvalidArgument("event store: no puller");
  if (options.data_dir.empty()) return InvalidArgument("event store: empty data_dir");
  if (options.num_dbs == 0) return InvalidArgument("event store: num_dbs must be > 0");
  if (options.write_workers_per_db == 0) {
    return InvalidArgument("event store: write_workers_per_db must be > 0");
  }
  if (options.max_batch_entries == 0) {
    return InvalidArgument("event store: max_batch_entries must be > 0");
  }
  if (options.clock == nullptr) return InvalidArgument("event store: no clock");
  if (options.gc_interval <= std::chrono::milliseconds::zero()) {
    return InvalidArgument("event store: gc_interval must be > 0");
  }
  return Status::Ok();
}

}  // namespace

// ---- EventStore (forwarding) ----

EventStore::EventStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EventStore::~EventStore() { Stop(); }

Result<std::unique_ptr<EventStore>> EventStore::Open(EventStoreOptions options,
                                                     logpuller::SpanSubscriber* puller) {
  RETURN_IF_ERROR(ValidateOptions(options, puller));
  auto impl = std::make_unique<Impl>(std::move(options), puller);
  RETURN_IF_ERROR(impl->Open());
  return std::unique_ptr<EventStore>(new EventStore(std::move(impl)));
}

void EventStore::Stop() { impl_->Stop(); }

Status EventStore::RegisterDispatcher(DispatcherId id, TableId table_id,
                                      const Span& comparable_span, Ts start_ts, NotifyFn notify) {
  return impl_->Register(id, table_id, comparable_span, start_ts, std::move(notify));
}

void EventStore::UnregisterDispatcher(DispatcherId id) { impl_->Unregister(id); }

void EventStore::UpdateDispatcherCheckpoint(DispatcherId id, Ts checkpoint) {
  impl_->UpdateCheckpoint(id, checkpoint);
}

Result<std::unique_ptr<EventIterator>> EventStore::GetIterator(DispatcherId id, Ts from, Ts to,
                                                               std::optional<ScanCursor> cursor) {
  return impl_->GetIterator(id, from, to, cursor);
}

Status EventStore::SubscriptionStatus(DispatcherId id) const {
  return impl_->SubscriptionStatus(id);
}

EventStoreStats EventStore::stats() const { return impl_->stats(); }

Result<size_t> EventStore::CountKeysForTesting(std::optional<DispatcherId> id) const {
  return impl_->CountKeys(id);
}

Status EventStore::PutRawForTesting(DispatcherId id, const RawKvEntry& entry,
                                    std::string_view value_bytes) {
  return impl_->PutRaw(id, entry, value_bytes);
}

// ---- Impl: lifecycle ----

EventStore::Impl::Impl(EventStoreOptions options, logpuller::SpanSubscriber* puller)
    : options_(std::move(options)), puller_(puller), counters_(std::make_shared<StoreCounters>()) {}

EventStore::Impl::~Impl() { Stop(); }

Status EventStore::Impl::Open() {
  namespace fs = std::filesystem;
  fs::path root = fs::path(options_.data_dir) / "event_store";
  std::error_code ec;
  fs::remove_all(root, ec);
  if (ec) return IoError("event store: wipe " + root.string() + ": " + ec.message());
  fs::create_directories(root, ec);
  if (ec) return IoError("event store: create " + root.string() + ": " + ec.message());

  std::shared_ptr<rocksdb::Cache> cache = rocksdb::NewLRUCache(options_.block_cache_bytes);
  rocksdb::Options db_options = DbOptions(options_, cache);
  for (size_t i = 0; i < options_.num_dbs; ++i) {
    std::string path = (root / ("db-" + std::to_string(i))).string();
    rocksdb::DB* raw = nullptr;
    RETURN_IF_ERROR(FromRocks(rocksdb::DB::Open(db_options, path, &raw), "event store open"));
    auto handle = std::make_shared<DbHandle>();
    handle->db.reset(raw);
    handle->write_options.disableWAL = true;
    handle->write_options.sync = false;
    dbs_.push_back(handle);
  }
  for (size_t i = 0; i < dbs_.size(); ++i) {
    writers_.push_back(std::make_unique<DbWriter>(dbs_[i], options_.max_batch_entries, counters_,
                                                  options_.before_write_round_for_testing));
    writers_.back()->Start(options_.write_workers_per_db, "es-write-" + std::to_string(i));
  }
  dirty_.assign(dbs_.size(), Span{});
  gc_thread_.Start("es-gc", [this](StopToken token) { GcLoop(token); });
  LOG_INFO("event store opened at {} with {} instances", root.string(), dbs_.size());
  return Status::Ok();
}

void EventStore::Impl::Stop() {
  MutexLock stop_lock(&stop_mu_);
  if (stopped_) return;
  stopped_ = true;
  std::vector<SubscriptionId> to_unsubscribe;
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    std::vector<uint64_t> ids;
    for (const auto& [store_id, entry] : subs_) ids.push_back(store_id);
    for (uint64_t store_id : ids) {
      if (std::optional<SubscriptionId> pid = RemoveLocked(store_id))
        to_unsubscribe.push_back(*pid);
    }
    dispatchers_.clear();
  }
  for (SubscriptionId pid : to_unsubscribe) puller_->Unsubscribe(pid);
  // Every subscription is closed, so the writers only run callbacks now.
  for (auto& writer : writers_) writer->Stop();
  for (auto& db : dbs_) db->db->DisableManualCompaction();
  gc_thread_.Stop();
  LOG_INFO("event store stopped");
}

// ---- Impl: registry ----

std::shared_ptr<SubscriptionState> EventStore::Impl::FindLocked(DispatcherId id) const {
  auto it = dispatchers_.find(id);
  if (it == dispatchers_.end()) return nullptr;
  auto sub = subs_.find(it->second);
  return sub == subs_.end() ? nullptr : sub->second.state;
}

std::optional<SubscriptionId> EventStore::Impl::RemoveLocked(uint64_t store_id) {
  auto it = subs_.find(store_id);
  if (it == subs_.end()) return std::nullopt;
  SubEntry entry = std::move(it->second);
  subs_.erase(it);
  {
    MutexLock lock(&entry.state->mu);
    entry.state->closed_ = true;
    entry.state->readers_.clear();
    entry.state->SetPersistUrgentLocked(false);
  }
  removing_.push_back(std::move(entry.state));
  return entry.puller_id;
}

Status EventStore::Impl::Register(DispatcherId id, TableId table_id, const Span& comparable_span,
                                  Ts start_ts, NotifyFn notify) {
  std::shared_ptr<SubscriptionState> sub;
  {
    MutexLock lock(&mu_);
    if (stopping_) return Cancelled("event store stopped");
    if (dispatchers_.contains(id)) return AlreadyExists("event store: dispatcher registered");
    uint64_t store_id = next_store_id_++;
    size_t db_index = store_id % dbs_.size();
    sub = std::make_shared<SubscriptionState>(store_id, table_id, db_index, start_ts,
                                              writers_[db_index].get());
    {
      MutexLock sub_lock(&sub->mu);
      sub->readers_[id] = Reader{std::move(notify), start_ts};
    }
    subs_[store_id] = SubEntry{sub, std::nullopt};
    dispatchers_[id] = store_id;
  }
  auto consumer = std::make_shared<SubscriptionConsumer>(sub, counters_);
  Result<SubscriptionId> pid =
      puller_->Subscribe(comparable_span, start_ts, std::move(consumer), options_.subscribe);
  bool removed_meanwhile = false;
  {
    MutexLock lock(&mu_);
    auto it = subs_.find(sub->store_id);
    removed_meanwhile = it == subs_.end();
    if (!pid.ok()) {
      if (!removed_meanwhile) {
        RemoveLocked(sub->store_id);
        auto d = dispatchers_.find(id);
        if (d != dispatchers_.end() && d->second == sub->store_id) dispatchers_.erase(d);
      }
    } else if (!removed_meanwhile) {
      it->second.puller_id = *pid;
    }
  }
  if (!pid.ok()) return pid.status().WithContext("event store: subscribe");
  if (removed_meanwhile) {
    // Unregistered or stopped while subscribing: nobody else knows the id.
    puller_->Unsubscribe(*pid);
    return Cancelled("event store: dispatcher removed while registering");
  }
  LOG_INFO("event store: dispatcher {}-{} table {} subscribed as {} (puller {}) from ts {}",
           id.high, id.low, table_id.value(), sub->store_id, pid->value(), start_ts.value());
  return Status::Ok();
}

void EventStore::Impl::Unregister(DispatcherId id) {
  std::optional<SubscriptionId> pid;
  {
    MutexLock lock(&mu_);
    auto it = dispatchers_.find(id);
    if (it == dispatchers_.end()) return;
    uint64_t store_id = it->second;
    dispatchers_.erase(it);
    auto sub = subs_.find(store_id);
    if (sub == subs_.end()) return;
    bool last;
    {
      MutexLock sub_lock(&sub->second.state->mu);
      sub->second.state->readers_.erase(id);
      last = sub->second.state->readers_.empty();
    }
    if (!last) return;
    pid = RemoveLocked(store_id);
  }
  if (pid.has_value()) puller_->Unsubscribe(*pid);
  KickGc();
}

void EventStore::Impl::UpdateCheckpoint(DispatcherId id, Ts checkpoint) {
  MutexLock lock(&mu_);
  std::shared_ptr<SubscriptionState> sub = FindLocked(id);
  if (sub == nullptr) return;
  MutexLock sub_lock(&sub->mu);
  auto it = sub->readers_.find(id);
  if (it != sub->readers_.end() && checkpoint > it->second.checkpoint) {
    it->second.checkpoint = checkpoint;
  }
}

// ---- Impl: reads ----

Status EventStore::Impl::ValidateScan(const SubscriptionState& sub, Ts from, Ts to,
                                      const std::optional<ScanCursor>& cursor, std::string* lower,
                                      bool* has_prev, ScanCursor* start) const {
  Ts checkpoint{kMaxTs};
  {
    MutexLock lock(&sub.mu);
    for (const auto& [id, reader] : sub.readers_)
      checkpoint = std::min(checkpoint, reader.checkpoint);
  }
  Ts resolved(sub.resolved_ts.load(std::memory_order_acquire));
  checkpoint = std::min(checkpoint, resolved);
  if (from > to || to > resolved || from < checkpoint) {
    return InvalidArgument("event store scan (" + std::to_string(from.value()) + ", " +
                           std::to_string(to.value()) + "] outside [checkpoint " +
                           std::to_string(checkpoint.value()) + ", resolved " +
                           std::to_string(resolved.value()) + "]");
  }
  if (!cursor.has_value()) {
    *lower = CommitTsUpperBound(sub.store_id, sub.table_id, from);
    *has_prev = false;
    *start = ScanCursor{from, Ts(kMaxTs), ""};
    return Status::Ok();
  }
  if (cursor->commit_ts != from || from == checkpoint) {
    return InvalidArgument("event store: cursor must be at commit ts == from > checkpoint");
  }
  *has_prev = true;
  *start = *cursor;
  if (cursor->position.empty()) {
    *lower = StartTsUpperBound(sub.store_id, sub.table_id, from, cursor->start_ts);
    return Status::Ok();
  }
  Result<StoreKey> key = DecodeStoreKey(cursor->position);
  if (!key.ok() || key->store_sub_id != sub.store_id || key->table_id != sub.table_id ||
      key->commit_ts != from) {
    return InvalidArgument("event store: cursor position is not in this scan");
  }
  start->start_ts = key->start_ts;
  // The first key after the position.
  *lower = cursor->position;
  lower->push_back('\0');
  return Status::Ok();
}

Result<std::unique_ptr<EventIterator>> EventStore::Impl::GetIterator(
    DispatcherId id, Ts from, Ts to, const std::optional<ScanCursor>& cursor) {
  std::shared_ptr<SubscriptionState> sub;
  {
    MutexLock lock(&mu_);
    if (stopping_) return Cancelled("event store stopped");
    sub = FindLocked(id);
  }
  if (sub == nullptr) return NotFound("event store: unknown dispatcher");
  std::string lower;
  bool has_prev = false;
  ScanCursor start;
  RETURN_IF_ERROR(ValidateScan(*sub, from, to, cursor, &lower, &has_prev, &start));
  std::string upper = CommitTsUpperBound(sub->store_id, sub->table_id, to);
  auto impl = std::make_unique<EventIterator::Impl>(dbs_[sub->db_index], std::move(lower),
                                                    std::move(upper), std::move(start), has_prev);
  return std::make_unique<EventIterator>(std::move(impl));
}

Status EventStore::Impl::SubscriptionStatus(DispatcherId id) const {
  std::shared_ptr<SubscriptionState> sub;
  {
    MutexLock lock(&mu_);
    sub = FindLocked(id);
  }
  if (sub == nullptr) return NotFound("event store: unknown dispatcher");
  MutexLock lock(&sub->mu);
  return sub->puller_error_;
}

EventStoreStats EventStore::Impl::stats() const {
  EventStoreStats s;
  s.entries_written = counters_->entries_written.load();
  s.entries_dropped_late = counters_->entries_dropped_late.load();
  s.entries_dropped_closed = counters_->entries_dropped_closed.load();
  s.write_failures = counters_->write_failures.load();
  s.gc_delete_ranges = counters_->gc_delete_ranges.load();
  s.gc_passes = counters_->gc_passes.load();
  s.compactions = counters_->compactions.load();
  MutexLock lock(&mu_);
  s.subscriptions = subs_.size();
  return s;
}

// ---- Impl: test hooks ----

Result<size_t> EventStore::Impl::CountKeys(std::optional<DispatcherId> id) const {
  std::vector<std::pair<size_t, uint64_t>> ranges;  // (db, store id); id 0: everything.
  if (id.has_value()) {
    MutexLock lock(&mu_);
    std::shared_ptr<SubscriptionState> sub = FindLocked(*id);
    if (sub == nullptr) return NotFound("event store: unknown dispatcher");
    ranges.emplace_back(sub->db_index, sub->store_id);
  } else {
    for (size_t i = 0; i < dbs_.size(); ++i) ranges.emplace_back(i, 0);
  }
  size_t count = 0;
  for (const auto& [db_index, store_id] : ranges) {
    std::string begin = store_id == 0 ? std::string() : SubscriptionPrefix(store_id);
    std::string end = store_id == 0 ? std::string() : SubscriptionEnd(store_id);
    rocksdb::Slice end_slice(end);
    rocksdb::ReadOptions read;
    if (!end.empty()) read.iterate_upper_bound = &end_slice;
    std::unique_ptr<rocksdb::Iterator> it(dbs_[db_index]->db->NewIterator(read));
    for (it->Seek(begin); it->Valid(); it->Next()) ++count;
    RETURN_IF_ERROR(FromRocks(it->status(), "event store count"));
  }
  return count;
}

Status EventStore::Impl::PutRaw(DispatcherId id, const RawKvEntry& entry,
                                std::string_view value_bytes) {
  std::shared_ptr<SubscriptionState> sub;
  {
    MutexLock lock(&mu_);
    sub = FindLocked(id);
  }
  if (sub == nullptr) return NotFound("event store: unknown dispatcher");
  std::string key;
  AppendStoreKey(sub->store_id, EntryTableId(entry.key, sub->table_id), entry, &key);
  const DbHandle& db = *dbs_[sub->db_index];
  return FromRocks(
      db.db->Put(db.write_options, key, rocksdb::Slice(value_bytes.data(), value_bytes.size())),
      "event store put");
}

}  // namespace sluice::eventstore
