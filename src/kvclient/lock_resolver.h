// LockResolver: clears the locks that hold a region's resolved ts back, the
// way TiCDC's lock resolver does with tikv client-go: ScanLock the region
// (pages of `scan_limit` locks with start ts <= max_version), then for each
// transaction found ask its primary's region for its state
// (CheckTxnStatus, with a fresh TSO as current ts) and, when it is settled,
// ResolveLock it in the scanned region: commit at the primary's commit ts,
// or roll back (a primary whose TTL ran out is rolled back by
// CheckTxnStatus). A transaction whose primary lock is still alive is left
// alone; the next attempt will find it again. A transaction that left no
// trace at its primary is rolled back once its TTL is over (client-go's
// rollback_if_not_exist retry).
//
// Region errors, unreachable stores and busy stores are retried as
// RegionRpc says, each operation within its deadline; a key error is
// returned (kAborted / kProtocolViolation), never retried blindly.
//
// Ownership: borrows the PdClient and the RegionCache (both must outlive
// the resolver). Thread-safe; Stop() (any thread) fails calls in progress
// and later ones with kCancelled.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "common/strong_id.h"
#include "kvclient/region_rpc.h"
#include "pd/pd_client.h"
#include "pd/region_cache.h"

namespace sluice::kvclient {

struct LockResolverOptions {
  RegionRpcOptions rpc;
  uint32_t scan_limit = 1024;  // Locks per ScanLock page (TiCDC's scanLockLimit).
};

// What one ResolveRegion did.
struct LockResolveResult {
  size_t locks_scanned = 0;
  size_t txns_committed = 0;    // Transactions whose locks were committed.
  size_t txns_rolled_back = 0;  // ...rolled back.
  size_t txns_alive = 0;        // Left alone: their primary lock is alive.
};

class LockResolver {
 public:
  LockResolver(pd::PdClient* pd, pd::RegionCache* cache, LockResolverOptions options);
  LockResolver(const LockResolver&) = delete;
  LockResolver& operator=(const LockResolver&) = delete;

  // Resolves the locks with start ts <= max_version in the region that
  // holds `comparable_key` (a memcomparable key, as PD's region boundaries
  // and the log puller's spans are).
  Result<LockResolveResult> ResolveRegion(std::string_view comparable_key, Ts max_version);

  void Stop() { rpc_.Stop(); }
  RegionRpcStats stats() const { return rpc_.stats(); }

 private:
  // A transaction's state at its primary: alive, or settled at commit_ts
  // (0: rolled back).
  struct TxnStatus {
    bool alive = false;
    Ts commit_ts;
  };

  // One page of ScanLock from `cursor` (raw) in the region of
  // `comparable_key`.
  Result<std::vector<kvrpcpb::LockInfo>> ScanPage(std::string_view comparable_key,
                                                  const std::string& cursor, Ts max_version);
  // The state of the lock's transaction at its primary, at ts `now`.
  Result<TxnStatus> CheckTxn(const kvrpcpb::LockInfo& lock, Ts now);
  // One CheckTxnStatus at the primary; *not_found when it left no trace.
  RpcAttempt CheckOnce(const RpcCall& call, const kvrpcpb::LockInfo& lock, Ts current_ts,
                       bool rollback_if_not_exist, TxnStatus* status, bool* not_found);
  // ResolveLock of the lock's transaction in the region that holds its key.
  Status Resolve(const kvrpcpb::LockInfo& lock, Ts commit_ts);

  pd::PdClient* const pd_;
  const uint32_t scan_limit_;
  RegionRpc rpc_;
};

}  // namespace sluice::kvclient
