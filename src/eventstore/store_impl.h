// EventStore::Impl: the registry of subscriptions and readers, the RocksDB
// instances and their writers, and the GC thread. Shared by event_store.cc
// (registration, reads, lifecycle) and store_gc.cc (GC). Not public.
//
// Locks: stop_mu_ (held through Stop) before mu_ (the registry) before a
// subscription's mu before a queue's lock; gc_mu_ only guards the GC wake-up
// flag and is never held with another.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/lifecycle.h"
#include "common/thread_annotations.h"
#include "eventstore/event_store.h"
#include "eventstore/store_internal.h"

namespace sluice::eventstore {

class EventStore::Impl {
 public:
  Impl(EventStoreOptions options, logpuller::SpanSubscriber* puller);
  ~Impl();

  // Wipes the directory, opens the instances, starts writers and GC.
  Status Open();
  void Stop() EXCLUDES(stop_mu_, mu_);

  Status Register(DispatcherId id, TableId table_id, const Span& comparable_span, Ts start_ts,
                  NotifyFn notify) EXCLUDES(mu_);
  void Unregister(DispatcherId id) EXCLUDES(mu_);
  void UpdateCheckpoint(DispatcherId id, Ts checkpoint) EXCLUDES(mu_);
  Result<std::unique_ptr<EventIterator>> GetIterator(DispatcherId id, Ts from, Ts to,
                                                     const std::optional<ScanCursor>& cursor)
      EXCLUDES(mu_);
  Status SubscriptionStatus(DispatcherId id) const EXCLUDES(mu_);
  EventStoreStats stats() const EXCLUDES(mu_);

  Result<size_t> CountKeys(std::optional<DispatcherId> id) const EXCLUDES(mu_);
  Status PutRaw(DispatcherId id, const RawKvEntry& entry, std::string_view value_bytes)
      EXCLUDES(mu_);

 private:
  struct SubEntry {
    std::shared_ptr<SubscriptionState> state;
    std::optional<SubscriptionId> puller_id;  // Set once Subscribe returned.
  };
  struct DeleteItem {
    size_t db_index;
    std::string begin;
    std::string end;
  };

  std::shared_ptr<SubscriptionState> FindLocked(DispatcherId id) const REQUIRES(mu_);
  // Takes a subscription out of the registry: closes it, queues its data
  // for deletion and returns its puller id (if any) for the caller to
  // unsubscribe outside the lock.
  std::optional<SubscriptionId> RemoveLocked(uint64_t store_id) REQUIRES(mu_);
  Status ValidateScan(const SubscriptionState& sub, Ts from, Ts to,
                      const std::optional<ScanCursor>& cursor, std::string* lower, bool* has_prev,
                      ScanCursor* start) const;

  // GC (store_gc.cc).
  void GcLoop(const StopToken& token) EXCLUDES(gc_mu_);
  void KickGc() EXCLUDES(gc_mu_);
  void RunGcPass() EXCLUDES(mu_);
  void CollectCheckpointDeletes(std::vector<DeleteItem>* items) REQUIRES(mu_);
  void CollectRemovals(std::vector<DeleteItem>* items) REQUIRES(mu_);
  void ApplyDeletes(const std::vector<DeleteItem>& items);
  void CompactDirtyRanges();

  const EventStoreOptions options_;
  logpuller::SpanSubscriber* const puller_;
  const std::shared_ptr<StoreCounters> counters_;
  std::vector<std::shared_ptr<DbHandle>> dbs_;
  std::vector<std::unique_ptr<DbWriter>> writers_;

  Mutex stop_mu_ ACQUIRED_BEFORE(mu_);
  bool stopped_ GUARDED_BY(stop_mu_) = false;

  mutable Mutex mu_;
  bool stopping_ GUARDED_BY(mu_) = false;
  uint64_t next_store_id_ GUARDED_BY(mu_) = 1;
  std::map<uint64_t, SubEntry> subs_ GUARDED_BY(mu_);
  std::map<DispatcherId, uint64_t> dispatchers_ GUARDED_BY(mu_);
  // Removed subscriptions whose data is not deleted yet (it is deleted once
  // no write of theirs is queued or running).
  std::vector<std::shared_ptr<SubscriptionState>> removing_ GUARDED_BY(mu_);

  Mutex gc_mu_;
  CondVar gc_cv_;
  bool gc_kicked_ GUARDED_BY(gc_mu_) = false;
  // GC thread only: per instance, the span of keys deleted since the last
  // compaction (begin empty: nothing deleted).
  std::vector<Span> dirty_;
  OwnedThread gc_thread_;
};

}  // namespace sluice::eventstore
