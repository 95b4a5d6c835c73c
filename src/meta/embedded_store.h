// EmbeddedMetaStore: the single-node metastore, persisted in RocksDB under
// `<data-dir>/meta`. Every committed transaction is one synced RocksDB write
// batch that carries the new store revision with the keys and the watch
// history entry, so after a crash (kill -9 at any point) reopening yields
// exactly the last committed state.
//
// Lifecycle: Open() loads the state and starts the lease thread; Stop() (or
// the destructor) wakes every waiting watch with kCancelled, joins the
// thread and closes the database. Calls after Stop() return kCancelled.
// Concurrency: every method is thread-safe. Writers are serialized (one
// synced write at a time); reads are served from memory and do not wait for
// a write's fsync. Watch cursors read history from RocksDB and must be
// destroyed before the store.
// Limitations: the whole key space is held in memory (metadata is small);
// watch history keeps the last `history_revisions` revisions. Leases are
// restored on reopen with their full TTL counted from the reopen, as etcd
// does after a leader change, so a key of a dead node vanishes one TTL after
// the restart unless someone keeps the lease alive.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/lifecycle.h"
#include "common/thread_annotations.h"
#include "meta/metastore.h"

namespace rocksdb {
class DB;
}

namespace sluice::meta {

struct EmbeddedStoreOptions {
  // The directory of the store, normally `<data-dir>/meta`. Created if absent.
  std::string dir;
  // Drives lease expiry and watch deadlines. Not owned; must outlive the store.
  Clock* clock = Clock::Real();
  // Revisions of watch history kept on disk. Default: 10000.
  int64_t history_revisions = 10000;
  // Whether each commit waits for fsync. Only tests that measure something
  // else turn it off; the crash-safety promise needs it. Default: true.
  bool sync = true;
};

class EmbeddedMetaStore final : public MetaStore {
 public:
  static Result<std::unique_ptr<EmbeddedMetaStore>> Open(EmbeddedStoreOptions options);
  ~EmbeddedMetaStore() override;
  EmbeddedMetaStore(const EmbeddedMetaStore&) = delete;
  EmbeddedMetaStore& operator=(const EmbeddedMetaStore&) = delete;

  // Idempotent. Not from a watch consumer's own Next().
  void Stop() EXCLUDES(write_mu_, mu_);

  Result<std::optional<KeyValue>> Get(const std::string& key) override EXCLUDES(mu_);
  Result<RangeResult> GetPrefix(const std::string& prefix) override EXCLUDES(mu_);
  Result<TxnResponse> Txn(const TxnRequest& txn) override EXCLUDES(write_mu_, mu_);
  Result<Revision> CurrentRevision() override EXCLUDES(mu_);
  Result<std::unique_ptr<WatchCursor>> Watch(const std::string& prefix,
                                             Revision from_revision) override EXCLUDES(mu_);
  Result<LeaseGrant> GrantLease(Clock::Duration ttl) override EXCLUDES(write_mu_, mu_);
  Status KeepAlive(LeaseId lease) override EXCLUDES(mu_);
  Status RevokeLease(LeaseId lease) override EXCLUDES(write_mu_, mu_);
  Result<Clock::Duration> LeaseTimeToLive(LeaseId lease) override EXCLUDES(mu_);

  // Revokes every lease whose deadline has passed on the clock. The lease
  // thread calls it whenever the earliest deadline passes; tests may call it
  // to reap at once after moving a ManualClock.
  Status ExpireDueLeases() EXCLUDES(write_mu_, mu_);

  // Watches from revisions <= this fail with kNotFound ("compacted").
  Revision compacted_revision() const EXCLUDES(mu_);

 private:
  class Cursor;
  struct Lease {
    Clock::Duration ttl{};
    Clock::TimePoint deadline{};
    std::set<std::string> keys;  // Keys attached to the lease.
  };
  // What a commit changes: the events of the new revision and the leases
  // whose records it deletes.
  struct Mutation {
    std::vector<WatchEvent> events;
    std::vector<LeaseId> removed_leases;
  };

  EmbeddedMetaStore(EmbeddedStoreOptions options, std::unique_ptr<rocksdb::DB> db);
  Status Load() EXCLUDES(mu_);
  Status LoadLeases() REQUIRES(write_mu_, mu_);
  Status LoadKeys() REQUIRES(mu_);
  void LeaseLoop(const StopToken& token) EXCLUDES(write_mu_, mu_);

  // Evaluates the compares and builds the events of the chosen branch.
  Result<bool> PlanTxn(const TxnRequest& txn, Mutation* m) REQUIRES(mu_);
  bool CompareHolds(const Compare& c) const REQUIRES(mu_);
  // Adds the deletes of `lease`'s keys and the lease itself to `m`.
  void PlanRevoke(LeaseId lease, Mutation* m) REQUIRES(mu_);
  // Writes `m` durably at revision_ + 1 (if it has events) and applies it.
  Result<Revision> Commit(Mutation m) REQUIRES(write_mu_) EXCLUDES(mu_);
  void Apply(const Mutation& m, Revision revision) REQUIRES(mu_);

  // Constant after construction.
  const EmbeddedStoreOptions options_;
  Clock* const clock_;
  const std::unique_ptr<rocksdb::DB> db_;

  Mutex write_mu_ ACQUIRED_BEFORE(mu_);  // Serializes commits (held over the fsync).
  mutable Mutex mu_;
  CondVar changed_;  // A commit, a lease change or Stop().
  bool stopped_ GUARDED_BY(mu_) = false;
  Revision revision_ GUARDED_BY(mu_) = 0;
  Revision compacted_ GUARDED_BY(mu_) = 0;
  int64_t next_lease_ GUARDED_BY(write_mu_) = 1;
  std::map<std::string, KeyValue> kvs_ GUARDED_BY(mu_);
  std::map<LeaseId, Lease> leases_ GUARDED_BY(mu_);

  OwnedThread lease_thread_;
};

}  // namespace sluice::meta
