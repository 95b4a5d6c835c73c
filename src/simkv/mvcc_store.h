// MvccStore: the in-memory multi-version store behind simkv, with Percolator
// transactions (prewrite, commit, rollback, one-phase commit) over raw keys.
//
// Thread-safe: one mutex guards the data, so every operation is atomic and
// all-or-nothing (a failed Prewrite or Commit changes nothing); the list of
// locks has a second one, for resolved ts (see MinLockStartTs). Observers are
// called synchronously while the first is held, in apply order; each change
// batch carries a store-wide apply index (like a raft index) so that a reader
// can stitch an incremental scan (taken at some index) to live events after it.
// Observers must not call back into the store and must not block.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/node_hash_map.h"
#include "absl/functional/function_ref.h"
#include "common/hash.h"
#include "common/status.h"
#include "common/strong_id.h"
#include "common/thread_annotations.h"
#include "simkv/mvcc_types.h"

namespace sluice::simkv {

inline constexpr Ts kMaxTs{std::numeric_limits<uint64_t>::max()};

// Events handed to observers. The views point into the store and are valid
// until the OnApplied() call that ends their batch returns; copy what you keep.
struct PrewriteEvent {
  uint64_t apply_index = 0;
  std::string_view key;
  std::string_view primary;
  Ts start_ts;
  MutationOp op = MutationOp::kPut;
  std::string_view value;
  std::optional<std::string_view> old_value;  // Newest committed value.
};

struct CommitEvent {
  uint64_t apply_index = 0;
  std::string_view key;
  Ts start_ts;
  Ts commit_ts;
  WriteKind kind = WriteKind::kPut;  // kPut, kDelete or kLock.
  std::string_view value;
  std::optional<std::string_view> old_value;  // Visible just before commit_ts.
  bool one_pc = false;  // Committed without a lock (TiKV sends these as COMMITTED).
};

struct RollbackEvent {
  uint64_t apply_index = 0;
  std::string_view key;
  Ts start_ts;
  bool removed_lock = false;              // A lock of this transaction was removed.
  MutationOp lock_op = MutationOp::kPut;  // Its op, when removed_lock.
};

// Receives every change of the store, synchronously and in apply order.
class MvccObserver {
 public:
  virtual ~MvccObserver() = default;
  virtual void OnPrewrite(const PrewriteEvent& event) {}
  virtual void OnCommit(const CommitEvent& event) {}
  virtual void OnRollback(const RollbackEvent& event) {}
  // Ends the events of one batch (one apply index), still in apply order.
  virtual void OnApplied(uint64_t apply_index) {}
};

// What an incremental scan returns: committed rows in key order then commit-ts
// order, the put/delete locks present in the range (key, start ts, op and
// value), and the apply index the snapshot was taken at (live events with a
// larger index come after it).
struct CommittedScan {
  std::vector<CommittedRow> rows;
  std::vector<PrewriteRow> prewrites;
  uint64_t applied_index = 0;
};

// One row of an incremental scan, as views into the store that are valid
// only while the visitor runs: a put/delete lock present at the snapshot (sent
// as a PREWRITE row), or a committed put/delete.
struct ScannedRow {
  bool is_lock = false;
  std::string_view key;
  Ts start_ts;
  Ts commit_ts;                           // Committed writes only.
  MutationOp lock_op = MutationOp::kPut;  // Locks only.
  WriteKind kind = WriteKind::kPut;       // Committed writes only.
  std::string_view value;
  std::optional<std::string_view> old_value;
};

struct GcStats {
  size_t removed_versions = 0;
  size_t removed_keys = 0;
};

struct MvccStats {
  size_t keys = 0;
  size_t versions = 0;
  size_t locks = 0;
};

class MvccStore {
 public:
  MvccStore() = default;
  MvccStore(const MvccStore&) = delete;
  MvccStore& operator=(const MvccStore&) = delete;

  // Observers are not owned and must outlive their registration.
  void AddObserver(MvccObserver* observer);
  void RemoveObserver(MvccObserver* observer);

  // Locks every key of `mutations` for the transaction `start_ts`. Fails with
  // kWriteConflict, kKeyIsLocked (carrying the lock), kTxnRolledBack or
  // kBelowGcSafePoint. Keys this transaction already locked or committed are
  // skipped, so a retried prewrite is harmless.
  TxnStatus Prewrite(const std::vector<Mutation>& mutations, std::string_view primary, Ts start_ts,
                     uint64_t lock_ttl_ms);

  // Commits the locks of `start_ts` at `commit_ts`. Callers commit the primary
  // first, then the secondaries. A key already committed by this transaction
  // is skipped (a secondary resolved by someone else); a key rolled back
  // fails with kTxnRolledBack; a key with neither fails with kTxnLockNotFound.
  TxnStatus Commit(std::span<const std::string_view> keys, Ts start_ts, Ts commit_ts);
  TxnStatus Commit(const std::vector<std::string>& keys, Ts start_ts, Ts commit_ts);

  // Removes the locks of `start_ts` and leaves rollback records, so a late
  // prewrite of the same transaction is refused. Fails with kAlreadyCommitted
  // if a key was committed. Rolling back twice is harmless.
  TxnStatus Rollback(const std::vector<std::string>& keys, Ts start_ts);

  // One-phase commit: the conflict checks of Prewrite, then write records at
  // `commit_ts` without ever taking locks. Observers see commits with one_pc.
  // The caller took `commit_ts`, so a resolved ts may pass it before the
  // apply; for tests that choose their ts.
  TxnStatus CommitOnePc(const std::vector<Mutation>& mutations, Ts start_ts, Ts commit_ts);
  // The same with the commit ts read from `next_ts` (the TSO) after the
  // checks, holding the lock list's mutex until the commit reaches the
  // observers. A one-phase commit lists no lock, so this is what keeps a
  // resolved ts below it: a bound read through ReadResolvedBound comes
  // before the commit ts or after the hand-over (TiKV gets the same from its
  // concurrency manager's max ts). If `next_ts` returns nullopt, fails with
  // kInvalidArgument and changes nothing. Sets *commit_ts once read, even if
  // nothing is applied. `next_ts` runs under the store's mutexes: it must
  // not call into the store, and every writer and round waits for it.
  TxnStatus CommitOnePc(const std::vector<Mutation>& mutations, Ts start_ts,
                        absl::FunctionRef<std::optional<Ts>()> next_ts, Ts* commit_ts);
  // Returns `read_ts()` (a resolved-ts round's TSO read), run holding the
  // lock list's mutex; see CommitOnePc. `read_ts` must not call into the store.
  Result<Ts> ReadResolvedBound(absl::FunctionRef<Result<Ts>()> read_ts) const EXCLUDES(locks_mu_);

  // The value visible at `ts` (nullopt if none or deleted). kKeyIsLocked if a
  // put/delete lock with start_ts <= ts exists; kBelowGcSafePoint if ts is
  // below the GC safe point.
  TxnResult<std::optional<std::string>> Get(std::string_view key, Ts ts) const;

  // Up to `limit` (0 = no limit) visible pairs in [start, end) at `ts`, in key
  // order; an empty `end` is unbounded. Lock errors as in Get.
  TxnResult<std::vector<KvPair>> Scan(std::string_view start, std::string_view end, Ts ts,
                                      size_t limit) const;

  // The incremental scan for CDC: every committed put/delete with
  // after_ts < commit_ts <= snapshot_ts in [start, end), each with its old
  // value, plus the locks in range. GcSafepointExceeded if after_ts is below
  // the GC safe point (history there may be gone).
  Result<CommittedScan> ScanCommitted(std::string_view start, std::string_view end, Ts after_ts,
                                      Ts snapshot_ts) const;
  // The same rows, visited in the order TiKV sends them (key order; a key's
  // lock before its writes, writes oldest first) under the store's lock, so
  // that the caller copies each byte once. Returns the snapshot's apply index.
  // `visit` must not call back into the store.
  Result<uint64_t> VisitCommitted(std::string_view start, std::string_view end, Ts after_ts,
                                  Ts snapshot_ts,
                                  absl::FunctionRef<void(const ScannedRow&)> visit) const;

  // The smallest start ts of any lock in [start, end), for resolved ts.
  // Neither waits for the store's main lock, so a resolved-ts tick never
  // queues behind a scan that holds it (TiKV's resolver also tracks locks
  // apart from the engine's snapshots).
  std::optional<Ts> MinLockStartTs(std::string_view start, std::string_view end) const;
  std::vector<LockInfo> Locks(std::string_view start, std::string_view end) const;

  // The state of transaction `start_ts` at its primary key (lock resolving).
  TxnState CheckTxn(std::string_view primary, Ts start_ts) const;

  // Removes versions no longer visible at `safe_point`: per key it keeps every
  // version above the safe point and the newest put at or below it. Locks are
  // untouched. A safe point at or below the current one is a no-op.
  GcStats Gc(Ts safe_point);

  Ts gc_safe_point() const;
  uint64_t applied_index() const;
  MvccStats Stats() const;

 private:
  struct StoredLock {
    std::shared_ptr<const std::string> primary;  // Shared by one prewrite's locks.
    Ts start_ts;
    MutationOp op = MutationOp::kPut;
    std::string value;
    uint64_t ttl_ms = 0;
    Ts min_commit_ts;
  };
  struct WriteRecord {
    Ts commit_ts;
    Ts start_ts;
    WriteKind kind = WriteKind::kPut;
    std::string value;
  };
  // A key's write records by commit ts, oldest first: commits append.
  using Versions = std::vector<WriteRecord>;
  struct KeyEntry {
    std::unique_ptr<StoredLock> lock;  // Boxed: most keys are unlocked most of the time.
    Versions writes;
  };
  // Point lookups go through the hash map (looked up by string_view); its
  // nodes never move, so the ordered indexes below hold pointers to them.
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(std::string_view key) const { return HashBytes(key); }
  };
  using KeyMap = absl::node_hash_map<std::string, KeyEntry, KeyHash, std::equal_to<>>;
  using Node = KeyMap::value_type;
  // Outcome of checking one mutation or key before applying a batch.
  enum class Check : uint8_t { kApply, kSkip };
  // A key of a batch after its check: its node (null if new) and whether the
  // batch changes it.
  struct Target {
    Node* node = nullptr;
    bool apply = false;
  };

  static Versions::const_iterator FirstAfter(const Versions& writes, Ts ts);
  static bool HasWriteAt(const Versions& writes, Ts commit_ts);
  static std::optional<std::string_view> ValueAt(const Versions& writes, Ts ts);
  static const WriteRecord* FindOwnRecord(const Versions& writes, Ts start_ts);
  static LockInfo ToLockInfo(std::string_view key, const StoredLock& lock);
  static bool ReadBlockedBy(const std::unique_ptr<StoredLock>& lock, Ts ts);
  static bool AnyToApply(const std::vector<Target>& targets);

  const KeyEntry* FindEntry(std::string_view key) const REQUIRES(mu_);
  Node* FindNode(std::string_view key) REQUIRES(mu_);
  Node& Insert(std::string_view key) REQUIRES(mu_);  // A key not in keys_.
  Node& Upsert(std::string_view key) REQUIRES(mu_);
  TxnResult<Check> CheckWrite(std::string_view key, const KeyEntry* entry, Ts start_ts) const
      REQUIRES(mu_);
  TxnResult<Check> CheckCommit(std::string_view key, const KeyEntry* entry, Ts start_ts,
                               Ts commit_ts) const REQUIRES(mu_);
  TxnResult<Check> CheckRollback(std::string_view key, Ts start_ts) const REQUIRES(mu_);
  TxnStatus ValidateMutations(const std::vector<Mutation>& mutations, Ts start_ts,
                              std::vector<Target>* targets) REQUIRES(mu_);
  void ApplyPrewrite(Node& node, const Mutation& m,
                     const std::shared_ptr<const std::string>& primary, Ts start_ts,
                     uint64_t ttl_ms) REQUIRES(mu_, locks_mu_);
  void ApplyCommit(KeyEntry& entry, std::string_view key, Ts start_ts, Ts commit_ts, WriteKind kind,
                   std::string value, bool one_pc) REQUIRES(mu_);
  void ApplyRollback(std::string_view key, Ts start_ts) REQUIRES(mu_, locks_mu_);
  // Drops `key` from locked_; call before freeing its StoredLock. The caller
  // holds locks_mu_ from there until NotifyApplied() has run: a resolved-ts
  // round that no longer finds the lock must find the commit (or rollback)
  // already handed to the observers, or its resolved ts could overtake it.
  void Unlist(std::string_view key) REQUIRES(mu_, locks_mu_);
  static size_t GcKey(Versions& writes, Ts safe_point);
  void NotifyApplied() REQUIRES(mu_);
  // Merges the keys created since the last ordered read into ordered_.
  void SortNewKeys() const REQUIRES(mu_);
  template <typename Fn>
  void ForRange(std::string_view start, std::string_view end, Fn&& fn) const REQUIRES(mu_);

  // mu_ guards everything below but locked_ (and serialises observer
  // callbacks).
  mutable Mutex mu_;
  KeyMap keys_ GUARDED_BY(mu_);
  // Every key in key order once new_keys_ is merged in (ordered reads do so).
  mutable std::vector<Node*> ordered_ GUARDED_BY(mu_);
  mutable std::vector<Node*> new_keys_ GUARDED_BY(mu_);
  // The locked keys in key order (resolved ts reads only these), under
  // their own mutex, taken inside mu_ by writers for a whole apply batch
  // and alone by readers. A writer removes a lock from locked_ before it
  // frees the StoredLock, and a key with a lock is never garbage collected,
  // so both views stay valid while locks_mu_ is held.
  mutable Mutex locks_mu_ ACQUIRED_AFTER(mu_);
  std::map<std::string_view, const StoredLock*, std::less<>> locked_ GUARDED_BY(locks_mu_);
  std::vector<MvccObserver*> observers_ GUARDED_BY(mu_);
  std::vector<Target> targets_ GUARDED_BY(mu_);  // Scratch of the batch being applied.
  Ts gc_safe_point_ GUARDED_BY(mu_);
  uint64_t applied_index_ GUARDED_BY(mu_) = 0;
};

}  // namespace sluice::simkv
