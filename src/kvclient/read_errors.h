// How the snapshot reader reacts to what TiKV answers a KvScan / KvGet:
// region errors (errorpb.Error), key errors (kvrpcpb.KeyError) and the
// pairs of a scan, as pure functions so that every case can be tested
// without a network. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "common/status.h"
#include "common/strong_id.h"
#include "errorpb.pb.h"
#include "kvrpcpb.pb.h"

namespace sluice::kvclient {

// What to do about one region error before the next attempt.
struct RegionErrorPlan {
  Status status;  // The error to report if the read gives up on it.
  // NotLeader naming a leader: move the cached leader there and retry now.
  bool update_leader = false;
  StoreId leader_store;
  uint64_t leader_peer_id = 0;
  bool invalidate_region = false;            // Drop the cached region (reload from PD).
  bool invalidate_store = false;             // Drop the cached store address.
  bool retry_now = false;                    // No backoff before the next attempt.
  std::chrono::milliseconds min_backoff{0};  // Wait at least this long (ServerIsBusy).
};

// client-go's reaction to each region error kind; `region` names the
// region the request went to.
RegionErrorPlan PlanForRegionError(const errorpb::Error& error, RegionId region);

// The status of a key error met while reading at `version`: kTimeout for a
// lock (retry after a backoff; the lock may go away), kUnavailable for
// `retryable`, kAborted for `abort` (the caller checks the GC safe point),
// kProtocolViolation for the kinds a read never gets.
Status KeyErrorStatus(const kvrpcpb::KeyError& error);

// Whether a key error is a lock (retry) rather than a final answer.
inline bool IsLocked(const kvrpcpb::KeyError& error) { return error.has_locked(); }

// Checks the pairs of a KvScan of [start, end) (end empty = unbounded) with
// limit `batch`: at most `batch` pairs, keys strictly increasing inside the
// range. kProtocolViolation otherwise. Key errors are checked separately.
Status CheckScanPairs(const kvrpcpb::ScanResponse& response, const std::string& start,
                      const std::string& end, uint32_t batch);

}  // namespace sluice::kvclient
