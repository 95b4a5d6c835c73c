// The transaction-status side of TiKV's lock resolution over an MvccStore,
// as TiKV's storage commands do it (the Tikv service's KvScanLock,
// KvCheckTxnStatus and KvResolveLock answer with these):
//  - ScanLocks: the locks of a range with start ts <= max_version;
//  - CheckTxnStatus: the state of a transaction at its primary key; a
//    primary lock whose TTL has run out by `current_ts` (start ts's physical
//    time + TTL < current ts's physical time, in ms) is rolled back, and a
//    transaction with no trace is rolled back when asked (so that a late
//    prewrite cannot commit it afterwards);
//  - ResolveTxnLocks: commits (commit ts > 0) or rolls back (0) one
//    transaction's locks in a range, or on the keys given.
// Each store call is atomic; observers (the CDC service) see the commits
// and rollbacks as they see the writer's own. Thread-safe as the store is.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/strong_id.h"
#include "simkv/mvcc_store.h"
#include "simkv/mvcc_types.h"

namespace sluice::simkv {

// kvrpcpb.Action values.
enum class TxnAction : uint8_t {
  kNoAction = 0,
  kTtlExpireRollback = 1,
  kLockNotExistRollback = 2,
};

// What CheckTxnStatus answers: locked (lock_ttl > 0, with the lock),
// committed (commit_ts set) or rolled back (neither); or not found.
struct TxnStatusAnswer {
  TxnAction action = TxnAction::kNoAction;
  uint64_t lock_ttl_ms = 0;
  Ts commit_ts;
  std::optional<LockInfo> lock;
  bool not_found = false;  // No lock and no record, and not asked to roll back.
};

// Up to `limit` (0: all) locks of [start, end) (raw keys; empty end is
// unbounded) with start ts <= max_version, in key order.
std::vector<LockInfo> ScanLocks(const MvccStore& store, std::string_view start,
                                std::string_view end, Ts max_version, size_t limit);

TxnResult<TxnStatusAnswer> CheckTxnStatus(MvccStore& store, std::string_view primary, Ts lock_ts,
                                          Ts current_ts, bool rollback_if_not_exist);

// Resolves transaction `start_ts`'s locks on `keys`, or, with no keys, in
// [start, end). kInvalidArgument for a commit ts at or below the start ts.
TxnStatus ResolveTxnLocks(MvccStore& store, std::string_view start, std::string_view end,
                          Ts start_ts, Ts commit_ts, std::span<const std::string> keys);

}  // namespace sluice::simkv
