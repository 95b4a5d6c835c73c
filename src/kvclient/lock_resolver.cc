#include "kvclient/lock_resolver.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "common/logging.h"
#include "common/tso.h"
#include "kvclient/read_errors.h"

namespace sluice::kvclient {

namespace {

constexpr const char* kResolveWhat = "lock resolution";

Status KeyErrorOf(const kvrpcpb::KeyError& error, std::string_view during) {
  return KeyErrorStatus(error).WithContext(std::string(during));
}

}  // namespace

LockResolver::LockResolver(pd::PdClient* pd, pd::RegionCache* cache, LockResolverOptions options)
    : pd_(pd), scan_limit_(std::max<uint32_t>(options.scan_limit, 1)), rpc_(cache, options.rpc) {}

Result<std::vector<kvrpcpb::LockInfo>> LockResolver::ScanPage(std::string_view comparable_key,
                                                              const std::string& cursor,
                                                              Ts max_version) {
  RpcCall call = rpc_.NewCall(kResolveWhat);
  RegionTarget target;
  while (true) {
    RpcAttempt attempt = rpc_.LocateComparable(comparable_key, &target);
    if (attempt.status.ok()) {
      kvrpcpb::ScanLockRequest request;
      request.set_start_key(std::max(cursor, target.raw_start));
      request.set_end_key(target.raw_end);
      request.set_max_version(max_version.value());
      request.set_limit(scan_limit_);
      kvrpcpb::ScanLockResponse response;
      if (!target.raw_end.empty() && request.start_key() >= target.raw_end) {
        return std::vector<kvrpcpb::LockInfo>{};  // The region shrank below the cursor.
      }
      attempt = rpc_.Send(call, target, &RegionRpc::Stub::KvScanLock, &request, &response);
      if (attempt.status.ok()) {
        if (response.has_error()) return KeyErrorOf(response.error(), "ScanLock");
        if (static_cast<uint32_t>(response.locks_size()) > scan_limit_) {
          return ProtocolViolation("ScanLock answered more locks than its limit");
        }
        return std::vector<kvrpcpb::LockInfo>(std::make_move_iterator(response.locks().begin()),
                                              std::make_move_iterator(response.locks().end()));
      }
    }
    RETURN_IF_ERROR(call.Retry(attempt));
  }
}

RpcAttempt LockResolver::CheckOnce(const RpcCall& call, const kvrpcpb::LockInfo& lock,
                                   Ts current_ts, bool rollback_if_not_exist, TxnStatus* status,
                                   bool* not_found) {
  RegionTarget target;
  RpcAttempt attempt = rpc_.Locate(lock.primary_lock(), &target);
  if (!attempt.status.ok()) return attempt;
  kvrpcpb::CheckTxnStatusRequest request;
  request.set_primary_key(lock.primary_lock());
  request.set_lock_ts(lock.lock_version());
  request.set_current_ts(current_ts.value());
  request.set_rollback_if_not_exist(rollback_if_not_exist);
  request.set_verify_is_primary(true);
  kvrpcpb::CheckTxnStatusResponse response;
  attempt = rpc_.Send(call, target, &RegionRpc::Stub::KvCheckTxnStatus, &request, &response);
  if (!attempt.status.ok()) return attempt;
  *not_found = false;
  if (response.has_error()) {
    if (response.error().has_txn_not_found()) {
      *not_found = true;
      return {Status::Ok()};
    }
    return {KeyErrorOf(response.error(), "CheckTxnStatus"), false};
  }
  status->alive = response.lock_ttl() > 0;
  status->commit_ts = Ts(response.commit_version());
  if (!status->alive && status->commit_ts.value() != 0 &&
      status->commit_ts.value() <= lock.lock_version()) {
    return {ProtocolViolation("CheckTxnStatus answered a commit ts not above the start ts"), false};
  }
  return {Status::Ok()};
}

Result<LockResolver::TxnStatus> LockResolver::CheckTxn(const kvrpcpb::LockInfo& lock, Ts now) {
  RpcCall call = rpc_.NewCall(kResolveWhat);
  bool rollback_if_not_exist = false;
  while (true) {
    TxnStatus status;
    bool not_found = false;
    RpcAttempt attempt = CheckOnce(call, lock, now, rollback_if_not_exist, &status, &not_found);
    if (attempt.status.ok()) {
      if (!not_found) return status;
      // No trace at the primary: its prewrite may still be on the way. Once
      // the lock's TTL is over, roll the transaction back for good.
      if (!tso::TtlExpired(Ts(lock.lock_version()), lock.lock_ttl(), now)) {
        return TxnStatus{true, Ts()};
      }
      rollback_if_not_exist = true;
      continue;
    }
    RETURN_IF_ERROR(call.Retry(attempt));
  }
}

Status LockResolver::Resolve(const kvrpcpb::LockInfo& lock, Ts commit_ts) {
  RpcCall call = rpc_.NewCall(kResolveWhat);
  while (true) {
    RegionTarget target;
    RpcAttempt attempt = rpc_.Locate(lock.key(), &target);
    if (attempt.status.ok()) {
      kvrpcpb::ResolveLockRequest request;
      request.set_start_version(lock.lock_version());
      request.set_commit_version(commit_ts.value());
      kvrpcpb::ResolveLockResponse response;
      attempt = rpc_.Send(call, target, &RegionRpc::Stub::KvResolveLock, &request, &response);
      if (attempt.status.ok()) {
        if (response.has_error()) return KeyErrorOf(response.error(), "ResolveLock");
        return Status::Ok();
      }
    }
    RETURN_IF_ERROR(call.Retry(attempt));
  }
}

Result<LockResolveResult> LockResolver::ResolveRegion(std::string_view comparable_key,
                                                      Ts max_version) {
  // One TSO for the round: the current ts every primary is checked at.
  ASSIGN_OR_RETURN(Ts now, pd_->GetTs());
  LockResolveResult result;
  std::map<uint64_t, TxnStatus> seen;  // By start ts.
  std::string cursor;
  while (true) {
    ASSIGN_OR_RETURN(std::vector<kvrpcpb::LockInfo> locks,
                     ScanPage(comparable_key, cursor, max_version));
    result.locks_scanned += locks.size();
    bool any_alive = false;
    for (const kvrpcpb::LockInfo& lock : locks) {
      auto it = seen.find(lock.lock_version());
      if (it == seen.end()) {
        ASSIGN_OR_RETURN(TxnStatus status, CheckTxn(lock, now));
        if (status.alive) {
          ++result.txns_alive;
        } else {
          // In the region that holds the lock now (it may have split).
          RETURN_IF_ERROR(Resolve(lock, status.commit_ts));
          ++(status.commit_ts.value() != 0 ? result.txns_committed : result.txns_rolled_back);
        }
        it = seen.emplace(lock.lock_version(), status).first;
      }
      any_alive = any_alive || it->second.alive;
    }
    // A live lock will be there on the next page too: stop (as TiCDC does);
    // a short page is the region's end.
    if (any_alive || locks.size() < scan_limit_) break;
    // Inclusive (resolved locks are gone); a page that resolved nothing
    // at its end would start there again.
    if (locks.back().key() == cursor) break;
    cursor = locks.back().key();
  }
  if (result.txns_committed + result.txns_rolled_back > 0) {
    LOG_INFO("lock resolution at {}: {} locks, {} transactions committed, {} rolled back, {} alive",
             max_version.value(), result.locks_scanned, result.txns_committed,
             result.txns_rolled_back, result.txns_alive);
  }
  return result;
}

}  // namespace sluice::kvclient
