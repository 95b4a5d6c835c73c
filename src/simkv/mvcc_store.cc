#include "simkv/mvcc_store.h"

#include <algorithm>
#include <iterator>
#include <set>
#include <utility>

namespace sluice::simkv {

namespace {

TxnError MakeError(TxnErrorKind kind, std::string_view key, std::string detail = {}) {
  TxnError error;
  error.kind = kind;
  error.key = std::string(key);
  error.detail = std::move(detail);
  return error;
}

Ts Before(Ts ts) { return Ts(ts.value() - 1); }

// Rejects empty and duplicated key lists; `key_of` maps an element to its key.
template <typename T, typename KeyOf>
std::optional<TxnError> CheckKeyList(const std::vector<T>& items, KeyOf key_of) {
  if (items.empty()) return MakeError(TxnErrorKind::kInvalidArgument, {}, "no keys");
  std::set<std::string_view> seen;
  for (const T& item : items) {
    if (!seen.insert(key_of(item)).second) {
      return MakeError(TxnErrorKind::kInvalidArgument, key_of(item), "duplicate key");
    }
  }
  return std::nullopt;
}

std::string_view MutationKey(const Mutation& m) { return m.key; }
std::string_view PlainKey(const std::string& k) { return k; }

}  // namespace

void MvccStore::AddObserver(MvccObserver* observer) {
  MutexLock lock(&mu_);
  observers_.push_back(observer);
}

void MvccStore::RemoveObserver(MvccObserver* observer) {
  MutexLock lock(&mu_);
  std::erase(observers_, observer);
}

// static
std::optional<std::string_view> MvccStore::ValueAt(const Versions& writes, Ts ts) {
  // Newest-first order: lower_bound finds the first record with commit_ts <= ts.
  for (auto it = writes.lower_bound(ts); it != writes.end(); ++it) {
    if (it->second.kind == WriteKind::kPut) return std::string_view(it->second.value);
    if (it->second.kind == WriteKind::kDelete) return std::nullopt;
  }
  return std::nullopt;
}

// static
const MvccStore::WriteRecord* MvccStore::FindOwnRecord(const Versions& writes, Ts start_ts,
                                                       Ts* commit_ts) {
  // A transaction's records all have commit_ts >= start_ts (rollbacks: equal).
  for (auto it = writes.begin(); it != writes.end() && it->first >= start_ts; ++it) {
    if (it->second.start_ts == start_ts) {
      *commit_ts = it->first;
      return &it->second;
    }
  }
  return nullptr;
}

// static
LockInfo MvccStore::ToLockInfo(std::string_view key, const StoredLock& lock) {
  return LockInfo{std::string(key), lock.primary, lock.start_ts,     lock.op,
                  lock.value,       lock.ttl_ms,  lock.min_commit_ts};
}

// static
bool MvccStore::ReadBlockedBy(const std::optional<StoredLock>& lock, Ts ts) {
  return lock.has_value() && lock->op != MutationOp::kLock && lock->start_ts <= ts;
}

const MvccStore::KeyEntry* MvccStore::FindEntry(std::string_view key) const {
  auto it = keys_.find(key);
  return it == keys_.end() ? nullptr : &it->second;
}

template <typename Fn>
void MvccStore::ForRange(std::string_view start, std::string_view end, Fn&& fn) const {
  for (auto it = keys_.lower_bound(start); it != keys_.end(); ++it) {
    if (!end.empty() && it->first.compare(end) >= 0) break;
    if (!fn(it->first, it->second)) break;
  }
}

TxnResult<MvccStore::Check> MvccStore::CheckWrite(std::string_view key, Ts start_ts) const {
  const KeyEntry* entry = FindEntry(key);
  if (entry == nullptr) return Check::kApply;
  if (entry->lock.has_value()) {
    if (entry->lock->start_ts == start_ts) return Check::kSkip;  // Retried prewrite.
    TxnError error = MakeError(TxnErrorKind::kKeyIsLocked, key);
    error.lock = ToLockInfo(key, *entry->lock);
    return error;
  }
  Ts own_commit_ts;
  if (const WriteRecord* own = FindOwnRecord(entry->writes, start_ts, &own_commit_ts)) {
    if (own->kind == WriteKind::kRollback) return MakeError(TxnErrorKind::kTxnRolledBack, key);
    return Check::kSkip;  // Already committed by this transaction.
  }
  if (!entry->writes.empty() && entry->writes.begin()->first >= start_ts) {
    TxnError error = MakeError(TxnErrorKind::kWriteConflict, key);
    error.conflict_commit_ts = entry->writes.begin()->first;
    error.conflict_start_ts = entry->writes.begin()->second.start_ts;
    return error;
  }
  return Check::kApply;
}

TxnResult<MvccStore::Check> MvccStore::CheckCommit(std::string_view key, Ts start_ts,
                                                   Ts commit_ts) const {
  const KeyEntry* entry = FindEntry(key);
  if (entry != nullptr && entry->lock.has_value() && entry->lock->start_ts == start_ts) {
    if (commit_ts < entry->lock->min_commit_ts) {
      return MakeError(TxnErrorKind::kCommitTsExpired, key);
    }
    if (entry->writes.contains(commit_ts)) {
      return MakeError(TxnErrorKind::kInvalidArgument, key, "a write exists at commit_ts");
    }
    return Check::kApply;
  }
  Ts own_commit_ts;
  const WriteRecord* own =
      entry == nullptr ? nullptr : FindOwnRecord(entry->writes, start_ts, &own_commit_ts);
  if (own == nullptr) return MakeError(TxnErrorKind::kTxnLockNotFound, key);
  if (own->kind == WriteKind::kRollback) return MakeError(TxnErrorKind::kTxnRolledBack, key);
  return Check::kSkip;  // Already committed (e.g. a secondary resolved by a reader).
}

TxnResult<MvccStore::Check> MvccStore::CheckRollback(std::string_view key, Ts start_ts) const {
  const KeyEntry* entry = FindEntry(key);
  if (entry == nullptr) return Check::kApply;
  if (entry->lock.has_value() && entry->lock->start_ts == start_ts) return Check::kApply;
  Ts own_commit_ts;
  if (const WriteRecord* own = FindOwnRecord(entry->writes, start_ts, &own_commit_ts)) {
    if (own->kind == WriteKind::kRollback) return Check::kSkip;
    return MakeError(TxnErrorKind::kAlreadyCommitted, key);
  }
  // Another transaction committed exactly at start_ts: that record already
  // refuses a late prewrite, so no rollback record is needed.
  if (entry->writes.contains(start_ts)) return Check::kSkip;
  return Check::kApply;
}

TxnStatus MvccStore::ValidateMutations(const std::vector<Mutation>& mutations, Ts start_ts,
                                       std::vector<bool>* apply) const {
  if (auto error = CheckKeyList(mutations, MutationKey)) return *std::move(error);
  if (start_ts <= gc_safe_point_) {
    return MakeError(TxnErrorKind::kBelowGcSafePoint, {},
                     "start_ts " + std::to_string(start_ts.value()));
  }
  apply->clear();
  for (const Mutation& m : mutations) {
    TxnResult<Check> check = CheckWrite(m.key, start_ts);
    if (!check.ok()) return check.error();
    apply->push_back(check.value() == Check::kApply);
  }
  return {};
}

TxnStatus MvccStore::Prewrite(const std::vector<Mutation>& mutations, std::string_view primary,
                              Ts start_ts, uint64_t lock_ttl_ms) {
  if (primary.empty()) return MakeError(TxnErrorKind::kInvalidArgument, {}, "empty primary");
  MutexLock lock(&mu_);
  std::vector<bool> apply;
  TxnStatus status = ValidateMutations(mutations, start_ts, &apply);
  if (!status.ok()) return status;
  if (std::none_of(apply.begin(), apply.end(), [](bool b) { return b; })) return {};
  ++applied_index_;
  for (size_t i = 0; i < mutations.size(); ++i) {
    if (apply[i]) ApplyPrewrite(mutations[i], primary, start_ts, lock_ttl_ms);
  }
  return {};
}

void MvccStore::ApplyPrewrite(const Mutation& m, std::string_view primary, Ts start_ts,
                              uint64_t ttl_ms) {
  auto [it, inserted] = keys_.try_emplace(m.key);
  KeyEntry& entry = it->second;
  std::string value = m.op == MutationOp::kPut ? m.value : std::string();
  entry.lock = StoredLock{std::string(primary), start_ts, m.op,
                          std::move(value),     ttl_ms,   Ts(start_ts.value() + 1)};
  PrewriteEvent event{applied_index_, it->first,         entry.lock->primary,          start_ts,
                      m.op,           entry.lock->value, ValueAt(entry.writes, kMaxTs)};
  for (MvccObserver* observer : observers_) observer->OnPrewrite(event);
}

TxnStatus MvccStore::Commit(const std::vector<std::string>& keys, Ts start_ts, Ts commit_ts) {
  if (auto error = CheckKeyList(keys, PlainKey)) return *std::move(error);
  if (commit_ts <= start_ts) {
    return MakeError(TxnErrorKind::kInvalidArgument, {}, "commit_ts must exceed start_ts");
  }
  MutexLock lock(&mu_);
  if (commit_ts <= gc_safe_point_) return MakeError(TxnErrorKind::kBelowGcSafePoint, {});
  std::vector<bool> apply;
  for (const std::string& key : keys) {
    TxnResult<Check> check = CheckCommit(key, start_ts, commit_ts);
    if (!check.ok()) return check.error();
    apply.push_back(check.value() == Check::kApply);
  }
  if (std::none_of(apply.begin(), apply.end(), [](bool b) { return b; })) return {};
  ++applied_index_;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!apply[i]) continue;
    auto it = keys_.find(keys[i]);
    StoredLock taken = std::move(*it->second.lock);
    it->second.lock.reset();
    ApplyCommit(it->second, it->first, start_ts, commit_ts, WriteKindOf(taken.op),
                std::move(taken.value), /*one_pc=*/false);
  }
  return {};
}

void MvccStore::ApplyCommit(KeyEntry& entry, std::string_view key, Ts start_ts, Ts commit_ts,
                            WriteKind kind, std::string value, bool one_pc) {
  std::optional<std::string_view> old_value = ValueAt(entry.writes, Before(commit_ts));
  auto [wit, inserted] =
      entry.writes.emplace(commit_ts, WriteRecord{start_ts, kind, std::move(value)});
  CommitEvent event{applied_index_,    key,       start_ts, commit_ts, kind,
                    wit->second.value, old_value, one_pc};
  for (MvccObserver* observer : observers_) observer->OnCommit(event);
}

TxnStatus MvccStore::Rollback(const std::vector<std::string>& keys, Ts start_ts) {
  if (auto error = CheckKeyList(keys, PlainKey)) return *std::move(error);
  MutexLock lock(&mu_);
  std::vector<bool> apply;
  for (const std::string& key : keys) {
    TxnResult<Check> check = CheckRollback(key, start_ts);
    if (!check.ok()) return check.error();
    apply.push_back(check.value() == Check::kApply);
  }
  if (std::none_of(apply.begin(), apply.end(), [](bool b) { return b; })) return {};
  ++applied_index_;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (apply[i]) ApplyRollback(keys[i], start_ts);
  }
  return {};
}

void MvccStore::ApplyRollback(std::string_view key, Ts start_ts) {
  auto [it, inserted] = keys_.try_emplace(std::string(key));
  KeyEntry& entry = it->second;
  RollbackEvent event{applied_index_, it->first, start_ts};
  if (entry.lock.has_value() && entry.lock->start_ts == start_ts) {
    event.removed_lock = true;
    event.lock_op = entry.lock->op;
    entry.lock.reset();
  }
  if (!entry.writes.contains(start_ts)) {
    entry.writes.emplace(start_ts, WriteRecord{start_ts, WriteKind::kRollback, {}});
  }
  for (MvccObserver* observer : observers_) observer->OnRollback(event);
}

TxnStatus MvccStore::CommitOnePc(const std::vector<Mutation>& mutations, Ts start_ts,
                                 Ts commit_ts) {
  if (commit_ts <= start_ts) {
    return MakeError(TxnErrorKind::kInvalidArgument, {}, "commit_ts must exceed start_ts");
  }
  MutexLock lock(&mu_);
  std::vector<bool> apply;
  TxnStatus status = ValidateMutations(mutations, start_ts, &apply);
  if (!status.ok()) return status;
  for (size_t i = 0; i < mutations.size(); ++i) {
    const KeyEntry* entry = FindEntry(mutations[i].key);
    if (apply[i] && entry != nullptr && entry->writes.contains(commit_ts)) {
      return MakeError(TxnErrorKind::kInvalidArgument, mutations[i].key,
                       "a write exists at commit_ts");
    }
  }
  if (std::none_of(apply.begin(), apply.end(), [](bool b) { return b; })) return {};
  ++applied_index_;
  for (size_t i = 0; i < mutations.size(); ++i) {
    if (!apply[i]) continue;
    const Mutation& m = mutations[i];
    auto [it, inserted] = keys_.try_emplace(m.key);
    std::string value = m.op == MutationOp::kPut ? m.value : std::string();
    ApplyCommit(it->second, it->first, start_ts, commit_ts, WriteKindOf(m.op), std::move(value),
                /*one_pc=*/true);
  }
  return {};
}

TxnResult<std::optional<std::string>> MvccStore::Get(std::string_view key, Ts ts) const {
  MutexLock lock(&mu_);
  if (ts < gc_safe_point_) return MakeError(TxnErrorKind::kBelowGcSafePoint, key);
  const KeyEntry* entry = FindEntry(key);
  if (entry == nullptr) return std::optional<std::string>();
  if (ReadBlockedBy(entry->lock, ts)) {
    TxnError error = MakeError(TxnErrorKind::kKeyIsLocked, key);
    error.lock = ToLockInfo(key, *entry->lock);
    return error;
  }
  std::optional<std::string_view> value = ValueAt(entry->writes, ts);
  if (!value.has_value()) return std::optional<std::string>();
  return std::optional<std::string>(std::string(*value));
}

TxnResult<std::vector<KvPair>> MvccStore::Scan(std::string_view start, std::string_view end, Ts ts,
                                               size_t limit) const {
  MutexLock lock(&mu_);
  if (ts < gc_safe_point_) return MakeError(TxnErrorKind::kBelowGcSafePoint, start);
  std::vector<KvPair> out;
  std::optional<TxnError> error;
  ForRange(start, end, [&](const std::string& key, const KeyEntry& entry) {
    if (ReadBlockedBy(entry.lock, ts)) {
      error = MakeError(TxnErrorKind::kKeyIsLocked, key);
      error->lock = ToLockInfo(key, *entry.lock);
      return false;
    }
    if (std::optional<std::string_view> value = ValueAt(entry.writes, ts)) {
      out.push_back(KvPair{key, std::string(*value)});
    }
    return limit == 0 || out.size() < limit;
  });
  if (error.has_value()) return *std::move(error);
  return out;
}

Result<CommittedScan> MvccStore::ScanCommitted(std::string_view start, std::string_view end,
                                               Ts after_ts, Ts snapshot_ts) const {
  MutexLock lock(&mu_);
  if (after_ts < gc_safe_point_) {
    return Status(Code::kGcSafepointExceeded,
                  "incremental scan from " + std::to_string(after_ts.value()) +
                      " below gc safe point " + std::to_string(gc_safe_point_.value()));
  }
  CommittedScan scan;
  scan.applied_index = applied_index_;
  ForRange(start, end, [&](const std::string& key, const KeyEntry& entry) {
    if (entry.lock.has_value() && entry.lock->op != MutationOp::kLock) {
      std::optional<std::string_view> old = ValueAt(entry.writes, kMaxTs);
      scan.prewrites.push_back(PrewriteRow{ToLockInfo(key, *entry.lock),
                                           old ? std::optional<std::string>(*old) : std::nullopt});
    }
    if (after_ts >= snapshot_ts) return true;
    // Records with after_ts < commit_ts <= snapshot_ts, walked oldest first.
    auto newest = entry.writes.lower_bound(snapshot_ts);
    auto oldest = entry.writes.lower_bound(after_ts);
    std::optional<std::string_view> old = ValueAt(entry.writes, after_ts);
    for (auto it = std::make_reverse_iterator(oldest); it != std::make_reverse_iterator(newest);
         ++it) {
      const WriteRecord& w = it->second;
      if (w.kind != WriteKind::kPut && w.kind != WriteKind::kDelete) continue;
      scan.rows.push_back(CommittedRow{key, w.start_ts, it->first, w.kind, w.value,
                                       old ? std::optional<std::string>(*old) : std::nullopt});
      old = w.kind == WriteKind::kPut ? std::optional<std::string_view>(w.value) : std::nullopt;
    }
    return true;
  });
  return scan;
}

std::optional<Ts> MvccStore::MinLockStartTs(std::string_view start, std::string_view end) const {
  MutexLock lock(&mu_);
  std::optional<Ts> min_ts;
  ForRange(start, end, [&](const std::string&, const KeyEntry& entry) {
    if (entry.lock.has_value() && (!min_ts || entry.lock->start_ts < *min_ts)) {
      min_ts = entry.lock->start_ts;
    }
    return true;
  });
  return min_ts;
}

std::vector<LockInfo> MvccStore::Locks(std::string_view start, std::string_view end) const {
  MutexLock lock(&mu_);
  std::vector<LockInfo> out;
  ForRange(start, end, [&](const std::string& key, const KeyEntry& entry) {
    if (entry.lock.has_value()) out.push_back(ToLockInfo(key, *entry.lock));
    return true;
  });
  return out;
}

TxnState MvccStore::CheckTxn(std::string_view primary, Ts start_ts) const {
  MutexLock lock(&mu_);
  TxnState state;
  const KeyEntry* entry = FindEntry(primary);
  if (entry == nullptr) return state;
  if (entry->lock.has_value() && entry->lock->start_ts == start_ts) {
    state.kind = TxnState::Kind::kLocked;
    state.lock = ToLockInfo(primary, *entry->lock);
    return state;
  }
  Ts commit_ts;
  if (const WriteRecord* own = FindOwnRecord(entry->writes, start_ts, &commit_ts)) {
    bool rolled_back = own->kind == WriteKind::kRollback;
    state.kind = rolled_back ? TxnState::Kind::kRolledBack : TxnState::Kind::kCommitted;
    if (!rolled_back) state.commit_ts = commit_ts;
  }
  return state;
}

// static
size_t MvccStore::GcKey(Versions& writes, Ts safe_point) {
  auto first = writes.lower_bound(safe_point);  // Newest record <= safe_point.
  auto keep = writes.end();
  for (auto it = first; it != writes.end(); ++it) {
    if (it->second.kind == WriteKind::kPut) {
      keep = it;
      break;
    }
    if (it->second.kind == WriteKind::kDelete) break;  // Nothing visible below.
  }
  size_t removed = 0;
  for (auto it = first; it != writes.end();) {
    if (it == keep) {
      ++it;
      continue;
    }
    it = writes.erase(it);
    ++removed;
  }
  return removed;
}

GcStats MvccStore::Gc(Ts safe_point) {
  MutexLock lock(&mu_);
  GcStats stats;
  if (safe_point <= gc_safe_point_) return stats;
  gc_safe_point_ = safe_point;
  for (auto it = keys_.begin(); it != keys_.end();) {
    stats.removed_versions += GcKey(it->second.writes, safe_point);
    if (!it->second.lock.has_value() && it->second.writes.empty()) {
      it = keys_.erase(it);
      ++stats.removed_keys;
    } else {
      ++it;
    }
  }
  return stats;
}

Ts MvccStore::gc_safe_point() const {
  MutexLock lock(&mu_);
  return gc_safe_point_;
}

uint64_t MvccStore::applied_index() const {
  MutexLock lock(&mu_);
  return applied_index_;
}

MvccStats MvccStore::Stats() const {
  MutexLock lock(&mu_);
  MvccStats stats;
  stats.keys = keys_.size();
  for (const auto& [key, entry] : keys_) {
    stats.versions += entry.writes.size();
    if (entry.lock.has_value()) ++stats.locks;
  }
  return stats;
}

}  // namespace sluice::simkv
