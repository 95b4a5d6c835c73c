#include "simkv/txn_executor.h"

#include <span>
#include <string_view>
#include <utility>

namespace sluice::simkv {

void MutationSet::Put(std::string key, std::string value) {
  Set(Mutation::Put(std::move(key), std::move(value)));
}

void MutationSet::Delete(std::string key) { Set(Mutation::Delete(std::move(key))); }

std::vector<Mutation> MutationSet::Take() {
  index_.clear();
  return std::move(mutations_);
}

void MutationSet::Set(Mutation m) {
  auto [it, inserted] = index_.try_emplace(m.key, mutations_.size());
  if (inserted) {
    mutations_.push_back(std::move(m));
  } else {
    mutations_[it->second] = std::move(m);
  }
}

bool IsRetryableTxnError(TxnErrorKind kind) {
  return kind == TxnErrorKind::kWriteConflict || kind == TxnErrorKind::kKeyIsLocked ||
         kind == TxnErrorKind::kTxnRolledBack;
}

namespace {

std::vector<std::string> KeysOf(const std::vector<Mutation>& mutations) {
  std::vector<std::string> keys;
  keys.reserve(mutations.size());
  for (const Mutation& m : mutations) keys.push_back(m.key);
  return keys;
}

}  // namespace

TxnExecutor::TxnExecutor(MvccStore* store, TsoAllocator* tso, int max_attempts)
    : store_(store), tso_(tso), max_attempts_(max_attempts < 1 ? 1 : max_attempts) {}

Result<Ts> TxnExecutor::NextTs() { return tso_->Allocate(1); }

Status TxnExecutor::TryPrewrite(const std::vector<Mutation>& mutations, Ts start_ts,
                                uint64_t ttl_ms, bool* conflict) {
  if (hook_) hook_(start_ts, mutations);
  TxnStatus st = store_->Prewrite(mutations, mutations.front().key, start_ts, ttl_ms);
  if (st.ok()) return Status::Ok();
  *conflict = IsRetryableTxnError(st.error().kind);
  return st.status();
}

Status TxnExecutor::TryOnePc(const std::vector<Mutation>& mutations, Ts start_ts, Ts* commit_ts,
                             bool* conflict) {
  if (hook_) hook_(start_ts, mutations);
  // The store reads the commit ts itself, so that no resolved ts passes it
  // before the commit is applied (MvccStore::CommitOnePc).
  Status tso_status;
  TxnStatus st = store_->CommitOnePc(
      mutations, start_ts,
      [&]() -> std::optional<Ts> {
        Result<Ts> ts = NextTs();
        if (ts.ok()) return *ts;
        tso_status = ts.status();
        return std::nullopt;
      },
      commit_ts);
  RETURN_IF_ERROR(tso_status);
  if (st.ok()) return Status::Ok();
  *conflict = IsRetryableTxnError(st.error().kind);
  return st.status();
}

Status TxnExecutor::Prewrite(const std::vector<Mutation>& mutations, uint64_t ttl_ms,
                             std::optional<Ts> first_start_ts, Ts* start_ts, int* attempts) {
  if (mutations.empty()) return InvalidArgument("txn: no mutations");
  Status last;
  for (int attempt = 1; attempt <= max_attempts_; ++attempt) {
    if (attempt == 1 && first_start_ts.has_value()) {
      *start_ts = *first_start_ts;
    } else {
      ASSIGN_OR_RETURN(*start_ts, NextTs());
    }
    bool conflict = false;
    last = TryPrewrite(mutations, *start_ts, ttl_ms, &conflict);
    *attempts = attempt;
    if (last.ok()) return last;
    if (!conflict) return last;
    ++stats_.conflict_retries;
  }
  return Aborted("txn: gave up after " + std::to_string(max_attempts_) +
                 " attempts: " + last.ToString());
}

Result<Ts> TxnExecutor::CommitKeys(std::span<const std::string_view> all, Ts start_ts) {
  ASSIGN_OR_RETURN(Ts commit_ts, NextTs());
  TxnStatus st = store_->Commit(all.first(1), start_ts, commit_ts);
  if (!st.ok()) return st.status().WithContext("txn: commit primary");
  if (all.size() > 1) {
    st = store_->Commit(all.subspan(1), start_ts, commit_ts);
    if (!st.ok()) return st.status().WithContext("txn: commit secondaries");
  }
  return commit_ts;
}

Result<TxnOutcome> TxnExecutor::Commit(const std::vector<Mutation>& mutations,
                                       const TxnOptions& options, std::optional<Ts> start_ts) {
  if (mutations.empty()) return InvalidArgument("txn: no mutations");
  TxnOutcome out;
  if (options.one_pc) {
    Status last;
    for (int attempt = 1; attempt <= max_attempts_; ++attempt) {
      if (attempt == 1 && start_ts.has_value()) {
        out.start_ts = *start_ts;
      } else {
        ASSIGN_OR_RETURN(out.start_ts, NextTs());
      }
      bool conflict = false;
      last = TryOnePc(mutations, out.start_ts, &out.commit_ts, &conflict);
      out.attempts = attempt;
      if (last.ok()) {
        ++stats_.committed;
        ++stats_.one_pc;
        return out;
      }
      if (!conflict) return last;
      ++stats_.conflict_retries;
    }
    return Aborted("txn: 1pc gave up: " + last.ToString());
  }
  RETURN_IF_ERROR(Prewrite(mutations, options.lock_ttl_ms, start_ts, &out.start_ts, &out.attempts));
  std::vector<std::string_view> keys;
  keys.reserve(mutations.size());
  for (const Mutation& m : mutations) keys.push_back(m.key);
  ASSIGN_OR_RETURN(out.commit_ts, CommitKeys(keys, out.start_ts));
  ++stats_.committed;
  return out;
}

Result<OpenTxn> TxnExecutor::PrewriteOnly(const std::vector<Mutation>& mutations,
                                          uint64_t lock_ttl_ms) {
  OpenTxn txn;
  int attempts = 0;
  RETURN_IF_ERROR(Prewrite(mutations, lock_ttl_ms, std::nullopt, &txn.start_ts, &attempts));
  txn.keys = KeysOf(mutations);
  return txn;
}

Result<TxnOutcome> TxnExecutor::CommitOpen(const OpenTxn& txn) {
  if (txn.keys.empty()) return InvalidArgument("txn: no keys");
  TxnOutcome out;
  out.start_ts = txn.start_ts;
  std::vector<std::string_view> keys(txn.keys.begin(), txn.keys.end());
  ASSIGN_OR_RETURN(out.commit_ts, CommitKeys(keys, txn.start_ts));
  ++stats_.committed;
  return out;
}

Result<Ts> TxnExecutor::CommitPrimaryOnly(const OpenTxn& txn) {
  if (txn.keys.empty()) return InvalidArgument("txn: no keys");
  ASSIGN_OR_RETURN(Ts commit_ts, NextTs());
  std::vector<std::string_view> primary{txn.keys[0]};
  TxnStatus st = store_->Commit(primary, txn.start_ts, commit_ts);
  if (!st.ok()) return st.status().WithContext("txn: commit primary");
  return commit_ts;
}

Status TxnExecutor::RollbackOpen(const OpenTxn& txn) {
  TxnStatus st = store_->Rollback(txn.keys, txn.start_ts);
  if (!st.ok()) return st.status().WithContext("txn: rollback");
  ++stats_.rolled_back;
  return Status::Ok();
}

}  // namespace sluice::simkv
