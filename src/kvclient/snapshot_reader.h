// SnapshotReader: transactional snapshot reads on TiKV (tikvpb.Tikv KvScan
// and KvGet) at a ts, routed region by region through the PD region cache,
// the way tikv client-go's KVSnapshot reads.
//
// Promises:
//  - keys in and out are raw (TiKV's txn API); region boundaries from PD are
//    memcomparable, so a key is encoded to locate its region and a region's
//    end is decoded to bound a request;
//  - region errors are handled as client-go does: NotLeader with a leader
//    moves the cached leader and retries at once; EpochNotMatch,
//    RegionNotFound, KeyNotInRegion, StoreNotMatch, MismatchPeerId and the
//    other kinds drop the cached region (StoreNotMatch also the store's
//    address) and retry after a backoff; ServerIsBusy backs off at least
//    the time TiKV asks; an RPC failure drops the region and retries;
//  - a read blocked by a lock is retried after a backoff (locks are not
//    resolved here); if the lock is still there at the deadline the read
//    fails with kTimeout;
//  - every call ends by its deadline (options.timeout): with the last
//    retryable error (kUnavailable for an unreachable store, kTimeout for a
//    lock, kBusy, ...) if it never succeeded;
//  - KeyError.abort: kGcSafepointExceeded if the version is below PD's GC
//    safe point, kAborted otherwise; a malformed answer (keys out of order
//    or outside the request, more keys than asked, an unknown key error, a
//    region boundary that does not decode) is kProtocolViolation. Nothing
//    from the wire can crash the reader.
//
// Ownership: borrows the PdClient and the RegionCache (both must outlive the
// reader); owns one gRPC channel per store address. Thread-safe: any thread
// may read concurrently; Stop() (any thread) fails reads in progress and
// later ones with kCancelled.
#pragma once

#include <grpcpp/support/status.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/cancel.h"
#include "common/clock.h"
#include "common/status.h"
#include "common/strong_id.h"
#include "common/thread_annotations.h"
#include "errorpb.pb.h"
#include "kvclient/region_rpc.h"
#include "kvrpcpb.pb.h"
#include "pd/pd_client.h"
#include "pd/region_cache.h"

namespace sluice::kvclient {

using KvPairs = std::vector<std::pair<std::string, std::string>>;

struct SnapshotReaderOptions {
  Clock* clock = Clock::Real();  // Deadlines and backoff; must outlive the reader.
  // Deadline of one Scan or Get, retries included.
  std::chrono::milliseconds timeout{20000};
  // Deadline of each KvScan / KvGet RPC (cut to the call's deadline).
  std::chrono::milliseconds rpc_timeout{5000};
  BackoffOptions backoff{std::chrono::milliseconds(20), std::chrono::milliseconds(1000), 2.0, 0.2};
  uint32_t scan_batch = 256;  // Keys asked per KvScan (client-go's scanBatchSize).
};

// What the reader did, for tests and metrics.
struct SnapshotReaderStats {
  uint64_t rpcs = 0;           // KvScan / KvGet calls sent.
  uint64_t rpc_failures = 0;   // Calls that failed in gRPC (store unreachable, deadline).
  uint64_t region_errors = 0;  // Answers with a region error.
  uint64_t lock_waits = 0;     // Answers blocked by a lock.
};

class SnapshotReader {
 public:
  SnapshotReader(pd::PdClient* pd, pd::RegionCache* cache, SnapshotReaderOptions options);
  ~SnapshotReader();
  SnapshotReader(const SnapshotReader&) = delete;
  SnapshotReader& operator=(const SnapshotReader&) = delete;

  // The visible pairs of [start, end) at `version`, in key order, at most
  // `limit` of them (0: no limit). An empty `end` is unbounded.
  Result<KvPairs> Scan(std::string_view start, std::string_view end, Ts version, size_t limit);
  // The value of `key` at `version`, nullopt if there is none.
  Result<std::optional<std::string>> Get(std::string_view key, Ts version);

  // Fails reads in progress and later ones with kCancelled. Idempotent.
  void Stop();

  SnapshotReaderStats stats() const;

 private:
  // One KvScan of [cursor, end) in the target region, appended to `out`.
  RpcAttempt ScanOnce(const RpcCall& call, const RegionTarget& target, const std::string& cursor,
                      const std::string& end, uint32_t batch, Ts version, KvPairs* out);
  RpcAttempt GetOnce(const RpcCall& call, const RegionTarget& target, std::string_view key,
                     Ts version, std::optional<std::string>* out);
  RpcAttempt KeyError(const kvrpcpb::KeyError& error, Ts version);

  pd::PdClient* const pd_;
  const uint32_t scan_batch_;
  RegionRpc rpc_;
  std::atomic<uint64_t> lock_waits_{0};
};

}  // namespace sluice::kvclient
