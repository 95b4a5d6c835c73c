// Event store GC: on every pass (each gc_interval on the clock, or at once
// after a removal) delete each subscription's changes with commit ts <= its
// checkpoint, delete the whole key prefix of removed subscriptions whose
// writes have drained, and now and then compact what was deleted.
#include <algorithm>
#include <limits>

#include "common/logging.h"
#include "eventstore/key_format.h"
#include "eventstore/store_impl.h"

namespace sluice::eventstore {
namespace {

constexpr uint64_t kMaxTs = std::numeric_limits<uint64_t>::max();

// Grows `*dirty` to cover [begin, end); an empty end is +infinity.
void Cover(Span* dirty, const std::string& begin, const std::string& end) {
  if (dirty->start.empty()) {
    *dirty = Span{begin, end};
    return;
  }
  dirty->start = std::min(dirty->start, begin);
  if (CompareEndKeys(end, dirty->end) > 0) dirty->end = end;
}

}  // namespace

void EventStore::Impl::KickGc() {
  MutexLock lock(&gc_mu_);
  gc_kicked_ = true;
  gc_cv_.SignalAll();
}

void EventStore::Impl::GcLoop(const StopToken& token) {
  // Declared before any lock on gc_mu_: see CancelCallback.
  CancelCallback on_cancel(token, [this] {
    MutexLock lock(&gc_mu_);
    gc_cv_.SignalAll();
  });
  Clock* clock = options_.clock;
  Clock::TimePoint next = clock->Now() + options_.gc_interval;
  while (true) {
    bool due;
    {
      MutexLock lock(&gc_mu_);
      while (!token.cancelled() && !gc_kicked_ && clock->Now() < next) {
        clock->WaitUntil(&gc_cv_, &gc_mu_, next);
      }
      if (token.cancelled()) return;
      gc_kicked_ = false;
      due = clock->Now() >= next;
    }
    RunGcPass();
    if (due) next = clock->Now() + options_.gc_interval;
  }
}

void EventStore::Impl::RunGcPass() {
  std::vector<DeleteItem> items;
  {
    MutexLock lock(&mu_);
    CollectCheckpointDeletes(&items);
    CollectRemovals(&items);
  }
  ApplyDeletes(items);
  // Only this thread counts passes; the count moves once the pass, and its
  // compaction if any, is complete.
  uint64_t passes = counters_->gc_passes.load() + 1;
  if (options_.compact_every_gc_passes > 0 && passes % options_.compact_every_gc_passes == 0) {
    CompactDirtyRanges();
  }
  counters_->gc_passes.store(passes);
}

void EventStore::Impl::CollectCheckpointDeletes(std::vector<DeleteItem>* items) {
  for (auto& [store_id, entry] : subs_) {
    SubscriptionState& sub = *entry.state;
    Ts checkpoint{kMaxTs};
    {
      MutexLock lock(&sub.mu);
      if (sub.readers_.empty()) continue;
      for (const auto& [id, reader] : sub.readers_) {
        checkpoint = std::min(checkpoint, reader.checkpoint);
      }
    }
    checkpoint = std::min(checkpoint, Ts(sub.resolved_ts.load(std::memory_order_acquire)));
    if (checkpoint < sub.gc_next) continue;
    items->push_back(DeleteItem{sub.db_index, CommitTsBound(store_id, sub.table_id, sub.gc_next),
                                CommitTsUpperBound(store_id, sub.table_id, checkpoint)});
    // Everything up to the checkpoint is gone (or about to be) for good.
    sub.gc_next = Ts(checkpoint.value() == kMaxTs ? kMaxTs : checkpoint.value() + 1);
  }
}

void EventStore::Impl::CollectRemovals(std::vector<DeleteItem>* items) {
  auto drained = [](const std::shared_ptr<SubscriptionState>& sub) {
    MutexLock lock(&sub->mu);
    return sub->pending_writes_ == 0;
  };
  auto it = removing_.begin();
  while (it != removing_.end()) {
    if (!drained(*it)) {
      ++it;
      continue;
    }
    const SubscriptionState& sub = **it;
    items->push_back(
        DeleteItem{sub.db_index, SubscriptionPrefix(sub.store_id), SubscriptionEnd(sub.store_id)});
    it = removing_.erase(it);
  }
}

void EventStore::Impl::ApplyDeletes(const std::vector<DeleteItem>& items) {
  if (items.empty()) return;
  std::vector<rocksdb::WriteBatch> batches(dbs_.size());
  for (const DeleteItem& item : items) {
    // An empty end (the last possible prefix) is never produced for ids the
    // store allocates; skip it rather than delete an unbounded range.
    if (item.end.empty()) continue;
    rocksdb::Status st = batches[item.db_index].DeleteRange(item.begin, item.end);
    if (!st.ok()) {
      LOG_ERROR("event store GC: {}", st.ToString());
      continue;
    }
    Cover(&dirty_[item.db_index], item.begin, item.end);
  }
  for (size_t i = 0; i < dbs_.size(); ++i) {
    if (batches[i].Count() == 0) continue;
    rocksdb::Status st = dbs_[i]->db->Write(dbs_[i]->write_options, &batches[i]);
    if (!st.ok()) {
      LOG_ERROR("event store GC: delete on instance {} failed: {}", i, st.ToString());
      continue;
    }
    counters_->AddDeleteRanges(static_cast<uint64_t>(batches[i].Count()));
  }
}

void EventStore::Impl::CompactDirtyRanges() {
  for (size_t i = 0; i < dbs_.size(); ++i) {
    Span& dirty = dirty_[i];
    if (dirty.start.empty()) continue;
    rocksdb::Slice begin(dirty.start);
    rocksdb::Slice end(dirty.end);
    rocksdb::CompactRangeOptions options;
    rocksdb::Status st =
        dbs_[i]->db->CompactRange(options, &begin, dirty.end.empty() ? nullptr : &end);
    if (!st.ok()) {
      // Stop() disables manual compaction; anything else is worth a line.
      if (!st.IsIncomplete()) LOG_WARN("event store compaction: {}", st.ToString());
      continue;
    }
    counters_->compactions.fetch_add(1);
    dirty = Span{};
  }
}

}  // namespace sluice::eventstore
