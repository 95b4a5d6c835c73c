// TxnExecutor: runs workload transactions against an MvccStore the way a TiDB
// client does: timestamps from the TsoAllocator, Percolator prewrite of every
// key (the first key is the primary), commit of the primary, then of the
// secondaries; or one-phase commit. A write conflict or a lock in the way is
// retried with a new start ts, up to a bound. It also holds transactions open
// (prewritten, not committed) for the long-transaction workload.
//
// MutationSet: the writes of one transaction, last write per key wins.
//
// Thread-compatible: one owner calls it (the Workload, under its mutex). The
// store and the allocator are thread-safe and shared; they are not owned and
// must outlive the executor.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "common/strong_id.h"
#include "simkv/mvcc_store.h"
#include "simkv/mvcc_types.h"
#include "simkv/tso_allocator.h"

namespace sluice::simkv {

// The writes of one transaction in first-write order; writing a key again
// replaces its earlier mutation in place.
class MutationSet {
 public:
  void Put(std::string key, std::string value);
  void Delete(std::string key);
  bool empty() const { return mutations_.empty(); }
  size_t size() const { return mutations_.size(); }
  const std::vector<Mutation>& mutations() const { return mutations_; }
  std::vector<Mutation> Take();

 private:
  void Set(Mutation m);

  std::vector<Mutation> mutations_;
  std::unordered_map<std::string, size_t> index_;
};

struct TxnOptions {
  bool one_pc = false;
  uint64_t lock_ttl_ms = 3000;
};

// What a committed transaction got.
struct TxnOutcome {
  Ts start_ts;
  Ts commit_ts;
  int attempts = 1;  // 1 + the number of conflict retries.
};

// A transaction left prewritten (its locks held) until committed or rolled
// back through the executor.
struct OpenTxn {
  Ts start_ts;
  std::vector<std::string> keys;  // keys[0] is the primary.
};

struct TxnExecutorStats {
  uint64_t committed = 0;
  uint64_t one_pc = 0;
  uint64_t conflict_retries = 0;  // Attempts that met a conflict or a lock.
  uint64_t rolled_back = 0;
};

class TxnExecutor {
 public:
  // Called with the start ts and the mutations right before every prewrite
  // (or one-phase commit) attempt. A test seam for injecting conflicts.
  using BeforePrewriteHook = std::function<void(Ts start_ts, const std::vector<Mutation>&)>;

  TxnExecutor(MvccStore* store, TsoAllocator* tso, int max_attempts);
  TxnExecutor(const TxnExecutor&) = delete;
  TxnExecutor& operator=(const TxnExecutor&) = delete;

  void set_before_prewrite_hook(BeforePrewriteHook hook) { hook_ = std::move(hook); }

  // A fresh timestamp.
  Result<Ts> NextTs();

  // Commits `mutations` (non-empty, distinct keys). The first attempt uses
  // `start_ts` when given (callers that embed it in values), later attempts
  // a fresh one. Aborted when every attempt met a conflict; other errors
  // (a lost primary, a bad request) are returned as they are.
  Result<TxnOutcome> Commit(const std::vector<Mutation>& mutations, const TxnOptions& options,
                            std::optional<Ts> start_ts = std::nullopt);

  // Prewrites and returns the open transaction (conflicts retried as above).
  Result<OpenTxn> PrewriteOnly(const std::vector<Mutation>& mutations, uint64_t lock_ttl_ms);
  // Commits an open transaction at a fresh ts: primary, then secondaries.
  Result<TxnOutcome> CommitOpen(const OpenTxn& txn);
  // Commits only the primary of an open transaction at a fresh ts, as a
  // writer that dies right after does: the transaction is committed, its
  // secondaries stay locked until someone resolves them.
  Result<Ts> CommitPrimaryOnly(const OpenTxn& txn);
  // Rolls an open transaction back.
  Status RollbackOpen(const OpenTxn& txn);

  const TxnExecutorStats& stats() const { return stats_; }

 private:
  // One attempt; sets *conflict when the failure is worth a retry.
  Status TryPrewrite(const std::vector<Mutation>& mutations, Ts start_ts, uint64_t ttl_ms,
                     bool* conflict);
  Status TryOnePc(const std::vector<Mutation>& mutations, Ts start_ts, Ts* commit_ts,
                  bool* conflict);
  // Commits the primary (keys[0]) and then the secondaries.
  Result<Ts> CommitKeys(std::span<const std::string_view> keys, Ts start_ts);
  Status Prewrite(const std::vector<Mutation>& mutations, uint64_t ttl_ms,
                  std::optional<Ts> first_start_ts, Ts* start_ts, int* attempts);

  MvccStore* store_;
  TsoAllocator* tso_;
  int max_attempts_;
  BeforePrewriteHook hook_;
  TxnExecutorStats stats_;
};

// Whether a transaction error means "try again with a new start ts".
bool IsRetryableTxnError(TxnErrorKind kind);

}  // namespace sluice::simkv
