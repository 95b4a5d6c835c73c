// The metastore interface: a key-value store with revisions, compare-and-swap
// transactions, watches and leases, shaped after etcd v3 so that an embedded
// store (embedded_store.h) and an etcd client can both implement it.
//
// Error codes every implementation uses:
//   kAborted      never from Txn (a failed compare is TxnResponse::succeeded =
//                 false); typed layers turn lost compares into kAborted;
//   kNotFound     an unknown or expired lease; a watch from a compacted
//                 revision (message starts with "compacted");
//   kInvalidArgument  empty keys, non-positive TTLs, unknown lease on a put;
//   kIoError / kUnavailable  the store cannot be written or reached;
//   kCancelled    the store is stopped, or a wait was cancelled.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/cancel.h"
#include "common/clock.h"
#include "common/status.h"
#include "meta/types.h"

namespace sluice::meta {

// A pollable watch on a key prefix: yields every change to a key with that
// prefix, in revision order (within one revision, in the order of the
// transaction's ops), each exactly once, starting at the revision it was
// created from. Owned by one consumer thread; the store must outlive it.
class WatchCursor {
 public:
  virtual ~WatchCursor() = default;

  // The events committed since the last call, without blocking. Empty if
  // none. kNotFound if the cursor fell behind compacted history.
  virtual Result<std::vector<WatchEvent>> Poll() = 0;

  // Blocks until there are events (and returns them, non-empty), `token`
  // is cancelled or the store stops (kCancelled), or the store's clock
  // reaches `deadline` (kTimeout). Pass Clock::TimePoint::max() for no
  // deadline.
  virtual Result<std::vector<WatchEvent>> Next(const CancelToken& token,
                                               Clock::TimePoint deadline) = 0;

  // The revision the next event will have at least.
  virtual Revision next_revision() const = 0;
};

// A lease as granted.
struct LeaseGrant {
  LeaseId id;
  Clock::Duration ttl{};
};

// The store. Every method is thread-safe and may block on disk or network.
class MetaStore {
 public:
  virtual ~MetaStore() = default;

  // The key, if it exists (nullopt otherwise), read at one revision.
  virtual Result<std::optional<KeyValue>> Get(const std::string& key) = 0;
  // Every key starting with `prefix`, in key order. An empty prefix is every key.
  virtual Result<RangeResult> GetPrefix(const std::string& prefix) = 0;
  // Applies a transaction atomically and durably (see TxnRequest).
  virtual Result<TxnResponse> Txn(const TxnRequest& txn) = 0;
  // The current store revision (0 before the first write).
  virtual Result<Revision> CurrentRevision() = 0;

  // A cursor over changes of keys under `prefix` with revision >=
  // `from_revision`; 0 means "from the next write on".
  virtual Result<std::unique_ptr<WatchCursor>> Watch(const std::string& prefix,
                                                     Revision from_revision) = 0;

  // Leases. A lease expires `ttl` after its grant or last keep-alive; its
  // keys are then deleted in one revision, as by RevokeLease.
  virtual Result<LeaseGrant> GrantLease(Clock::Duration ttl) = 0;
  virtual Status KeepAlive(LeaseId lease) = 0;
  virtual Status RevokeLease(LeaseId lease) = 0;
  // Time left before `lease` expires; kNotFound if it does not exist.
  virtual Result<Clock::Duration> LeaseTimeToLive(LeaseId lease) = 0;

  // Convenience on top of Txn: unconditional put and delete. Return the
  // revision after the write.
  Result<Revision> Put(const std::string& key, const std::string& value, LeaseId lease = LeaseId());
  Result<Revision> Delete(const std::string& key);
};

}  // namespace sluice::meta
