#include "simkv/lock_resolution.h"

#include <algorithm>

#include "common/tso.h"

namespace sluice::simkv {

namespace {

// How many times the check re-reads after the writer moved under it.
constexpr int kMaxCheckRounds = 4;

}  // namespace

std::vector<LockInfo> ScanLocks(const MvccStore& store, std::string_view start,
                                std::string_view end, Ts max_version, size_t limit) {
  std::vector<LockInfo> out;
  for (LockInfo& lock : store.Locks(start, end)) {
    if (lock.start_ts > max_version) continue;
    out.push_back(std::move(lock));
    if (limit != 0 && out.size() >= limit) break;
  }
  return out;
}

TxnResult<TxnStatusAnswer> CheckTxnStatus(MvccStore& store, std::string_view primary, Ts lock_ts,
                                          Ts current_ts, bool rollback_if_not_exist) {
  const std::vector<std::string> keys{std::string(primary)};
  for (int round = 0; round < kMaxCheckRounds; ++round) {
    TxnState state = store.CheckTxn(primary, lock_ts);
    TxnStatusAnswer answer;
    switch (state.kind) {
      case TxnState::Kind::kCommitted:
        answer.commit_ts = state.commit_ts;
        return answer;
      case TxnState::Kind::kRolledBack:
        return answer;
      case TxnState::Kind::kLocked:
        if (!tso::TtlExpired(lock_ts, state.lock->ttl_ms, current_ts)) {
          answer.lock_ttl_ms = std::max<uint64_t>(state.lock->ttl_ms, 1);
          answer.lock = std::move(state.lock);
          return answer;
        }
        answer.action = TxnAction::kTtlExpireRollback;
        break;
      case TxnState::Kind::kNotFound:
        if (!rollback_if_not_exist) {
          answer.not_found = true;
          return answer;
        }
        answer.action = TxnAction::kLockNotExistRollback;
        break;
    }
    // Roll back; the store refuses if the writer committed in between, and
    // the next round reads the commit.
    TxnStatus rolled = store.Rollback(keys, lock_ts);
    if (rolled.ok()) return answer;
    if (rolled.error().kind != TxnErrorKind::kAlreadyCommitted) return rolled.error();
  }
  return TxnError{TxnErrorKind::kInvalidArgument,   std::string(primary), std::nullopt, Ts(), Ts(),
                  "transaction state kept changing"};
}

TxnStatus ResolveTxnLocks(MvccStore& store, std::string_view start, std::string_view end,
                          Ts start_ts, Ts commit_ts, std::span<const std::string> keys) {
  if (commit_ts.value() != 0 && commit_ts <= start_ts) {
    return TxnError{TxnErrorKind::kInvalidArgument,
                    "",
                    std::nullopt,
                    Ts(),
                    Ts(),
                    "commit ts " + std::to_string(commit_ts.value()) + " is not above start ts " +
                        std::to_string(start_ts.value())};
  }
  std::vector<std::string> targets;
  if (keys.empty()) {
    for (const LockInfo& lock : store.Locks(start, end)) {
      if (lock.start_ts == start_ts) targets.push_back(lock.key);
    }
  } else {
    targets.assign(keys.begin(), keys.end());
  }
  if (targets.empty()) return {};
  if (commit_ts.value() == 0) return store.Rollback(targets, start_ts);
  return store.Commit(targets, start_ts, commit_ts);
}

}  // namespace sluice::simkv
