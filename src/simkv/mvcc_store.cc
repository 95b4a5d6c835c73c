#include "simkv/mvcc_store.h"

#include <algorithm>
#include <iterator>
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
// Short lists (the common case) are compared pairwise without allocating.
template <typename T, typename KeyOf>
std::optional<TxnError> CheckKeyList(std::span<const T> items, KeyOf key_of) {
  constexpr size_t kPairwiseMax = 32;
  if (items.empty()) return MakeError(TxnErrorKind::kInvalidArgument, {}, "no keys");
  if (items.size() <= kPairwiseMax) {
    for (size_t i = 1; i < items.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (key_of(items[i]) == key_of(items[j])) {
          return MakeError(TxnErrorKind::kInvalidArgument, key_of(items[i]), "duplicate key");
        }
      }
    }
    return std::nullopt;
  }
  std::vector<std::string_view> sorted;
  sorted.reserve(items.size());
  for (const T& item : items) sorted.push_back(key_of(item));
  std::sort(sorted.begin(), sorted.end());
  auto dup = std::adjacent_find(sorted.begin(), sorted.end());
  if (dup != sorted.end()) return MakeError(TxnErrorKind::kInvalidArgument, *dup, "duplicate key");
  return std::nullopt;
}

std::string_view MutationKey(const Mutation& m) { return m.key; }
std::string_view PlainKey(const std::string& k) { return k; }
std::string_view ViewKey(std::string_view k) { return k; }

}  // namespace

void MvccStore::NotifyApplied() {
  for (MvccObserver* observer : observers_) observer->OnApplied(applied_index_);
}

void MvccStore::AddObserver(MvccObserver* observer) {
  MutexLock lock(&mu_);
  observers_.push_back(observer);
}

void MvccStore::RemoveObserver(MvccObserver* observer) {
  MutexLock lock(&mu_);
  std::erase(observers_, observer);
}

// static
MvccStore::Versions::const_iterator MvccStore::FirstAfter(const Versions& writes, Ts ts) {
  // Most lookups are for the newest records: check the back before searching.
  if (writes.empty() || writes.back().commit_ts <= ts) return writes.end();
  return std::upper_bound(writes.begin(), writes.end(), ts,
                          [](Ts t, const WriteRecord& w) { return t < w.commit_ts; });
}

// static
bool MvccStore::HasWriteAt(const Versions& writes, Ts commit_ts) {
  auto it = FirstAfter(writes, commit_ts);
  return it != writes.begin() && std::prev(it)->commit_ts == commit_ts;
}

// static
std::optional<std::string_view> MvccStore::ValueAt(const Versions& writes, Ts ts) {
  // Walks back from the newest record with commit_ts <= ts.
  for (auto it = FirstAfter(writes, ts); it != writes.begin();) {
    --it;
    if (it->kind == WriteKind::kPut) return std::string_view(it->value);
    if (it->kind == WriteKind::kDelete) return std::nullopt;
  }
  return std::nullopt;
}

// static
const MvccStore::WriteRecord* MvccStore::FindOwnRecord(const Versions& writes, Ts start_ts) {
  // A transaction's records all have commit_ts >= start_ts (rollbacks: equal).
  for (auto it = writes.rbegin(); it != writes.rend() && it->commit_ts >= start_ts; ++it) {
    if (it->start_ts == start_ts) return &*it;
  }
  return nullptr;
}

// static
LockInfo MvccStore::ToLockInfo(std::string_view key, const StoredLock& lock) {
  return LockInfo{std::string(key), *lock.primary, lock.start_ts,     lock.op,
                  lock.value,       lock.ttl_ms,   lock.min_commit_ts};
}

// static
bool MvccStore::ReadBlockedBy(const std::unique_ptr<StoredLock>& lock, Ts ts) {
  return lock != nullptr && lock->op != MutationOp::kLock && lock->start_ts <= ts;
}

const MvccStore::KeyEntry* MvccStore::FindEntry(std::string_view key) const {
  auto it = keys_.find(key);
  return it == keys_.end() ? nullptr : &it->second;
}

MvccStore::Node* MvccStore::FindNode(std::string_view key) {
  auto it = keys_.find(key);
  return it == keys_.end() ? nullptr : &*it;
}

MvccStore::Node& MvccStore::Insert(std::string_view key) {
  Node& node = *keys_.emplace(std::string(key), KeyEntry{}).first;
  new_keys_.push_back(&node);
  return node;
}

MvccStore::Node& MvccStore::Upsert(std::string_view key) {
  Node* node = FindNode(key);
  return node != nullptr ? *node : Insert(key);
}

// static
bool MvccStore::AnyToApply(const std::vector<Target>& targets) {
  return std::any_of(targets.begin(), targets.end(), [](const Target& t) { return t.apply; });
}

void MvccStore::SortNewKeys() const {
  if (new_keys_.empty()) return;
  // Sorted as (bytes, node) views: a comparison of the sort reads the two
  // keys' bytes instead of first loading their scattered nodes (the merge
  // below still compares through the nodes, once per key).
  std::vector<std::pair<std::string_view, Node*>> views;
  views.reserve(new_keys_.size());
  for (Node* node : new_keys_) views.emplace_back(node->first, node);
  std::sort(views.begin(), views.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  auto by_key = [](const Node* a, const Node* b) { return a->first < b->first; };
  size_t old_size = ordered_.size();
  for (const auto& view : views) ordered_.push_back(view.second);
  std::inplace_merge(ordered_.begin(), ordered_.begin() + old_size, ordered_.end(), by_key);
  new_keys_.clear();
}

namespace {

// Fetches the cache lines of a (short) value that a scan copies soon: a
// value of a few hundred bytes spans several lines, and copying it would
// otherwise wait on each in turn.
void PrefetchBytes(const std::string& bytes) {
  constexpr size_t kLine = 64;
  constexpr size_t kMaxBytes = 512;
  const char* data = bytes.data();
  const size_t size = std::min(bytes.size(), kMaxBytes);
  for (size_t offset = 0; offset < size; offset += kLine) __builtin_prefetch(data + offset);
}

}  // namespace

template <typename Fn>
void MvccStore::ForRange(std::string_view start, std::string_view end, Fn&& fn) const {
  SortNewKeys();
  auto key_less = [](const Node* node, std::string_view k) {
    return std::string_view(node->first) < k;
  };
  auto it = std::lower_bound(ordered_.begin(), ordered_.end(), start, key_less);
  auto last = end.empty() ? ordered_.end() : std::lower_bound(it, ordered_.end(), end, key_less);
  // Nodes, their keys and versions are separate heap blocks in no particular
  // order: fetch them a few keys ahead (within the range) so that a long scan
  // does not stall on each one in turn.
  constexpr std::ptrdiff_t kNodesAhead = 12;
  constexpr std::ptrdiff_t kDataAhead = 8;
  constexpr std::ptrdiff_t kValueAhead = 4;
  for (; it != last; ++it) {
    std::ptrdiff_t left = last - it;
    if (left > kNodesAhead) __builtin_prefetch(*(it + kNodesAhead));
    if (left > kDataAhead) {
      const Node* ahead = *(it + kDataAhead);
      __builtin_prefetch(ahead->first.data());
      __builtin_prefetch(ahead->second.writes.data());
    }
    if (left > kValueAhead) {
      const Versions& writes = (*(it + kValueAhead))->second.writes;
      if (!writes.empty()) PrefetchBytes(writes.back().value);
    }
    const Node& node = **it;
    if (!fn(node.first, node.second)) break;
  }
}

TxnResult<MvccStore::Check> MvccStore::CheckWrite(std::string_view key, const KeyEntry* entry,
                                                  Ts start_ts) const {
  if (entry == nullptr) return Check::kApply;
  if (entry->lock != nullptr) {
    if (entry->lock->start_ts == start_ts) return Check::kSkip;  // Retried prewrite.
    TxnError error = MakeError(TxnErrorKind::kKeyIsLocked, key);
    error.lock = ToLockInfo(key, *entry->lock);
    return error;
  }
  if (const WriteRecord* own = FindOwnRecord(entry->writes, start_ts)) {
    if (own->kind == WriteKind::kRollback) return MakeError(TxnErrorKind::kTxnRolledBack, key);
    return Check::kSkip;  // Already committed by this transaction.
  }
  if (!entry->writes.empty() && entry->writes.back().commit_ts >= start_ts) {
    TxnError error = MakeError(TxnErrorKind::kWriteConflict, key);
    error.conflict_commit_ts = entry->writes.back().commit_ts;
    error.conflict_start_ts = entry->writes.back().start_ts;
    return error;
  }
  return Check::kApply;
}

TxnResult<MvccStore::Check> MvccStore::CheckCommit(std::string_view key, const KeyEntry* entry,
                                                   Ts start_ts, Ts commit_ts) const {
  if (entry != nullptr && entry->lock != nullptr && entry->lock->start_ts == start_ts) {
    if (commit_ts < entry->lock->min_commit_ts) {
      return MakeError(TxnErrorKind::kCommitTsExpired, key);
    }
    if (HasWriteAt(entry->writes, commit_ts)) {
      return MakeError(TxnErrorKind::kInvalidArgument, key, "a write exists at commit_ts");
    }
    return Check::kApply;
  }
  const WriteRecord* own = entry == nullptr ? nullptr : FindOwnRecord(entry->writes, start_ts);
  if (own == nullptr) return MakeError(TxnErrorKind::kTxnLockNotFound, key);
  if (own->kind == WriteKind::kRollback) return MakeError(TxnErrorKind::kTxnRolledBack, key);
  return Check::kSkip;  // Already committed (e.g. a secondary resolved by a reader).
}

TxnResult<MvccStore::Check> MvccStore::CheckRollback(std::string_view key, Ts start_ts) const {
  const KeyEntry* entry = FindEntry(key);
  if (entry == nullptr) return Check::kApply;
  if (entry->lock != nullptr && entry->lock->start_ts == start_ts) return Check::kApply;
  if (const WriteRecord* own = FindOwnRecord(entry->writes, start_ts)) {
    if (own->kind == WriteKind::kRollback) return Check::kSkip;
    return MakeError(TxnErrorKind::kAlreadyCommitted, key);
  }
  // Another transaction committed exactly at start_ts: that record already
  // refuses a late prewrite, so no rollback record is needed.
  if (HasWriteAt(entry->writes, start_ts)) return Check::kSkip;
  return Check::kApply;
}

TxnStatus MvccStore::ValidateMutations(const std::vector<Mutation>& mutations, Ts start_ts,
                                       std::vector<Target>* targets) {
  if (auto error = CheckKeyList(std::span<const Mutation>(mutations), MutationKey)) {
    return *std::move(error);
  }
  if (start_ts <= gc_safe_point_) {
    return MakeError(TxnErrorKind::kBelowGcSafePoint, {},
                     "start_ts " + std::to_string(start_ts.value()));
  }
  targets->clear();
  for (const Mutation& m : mutations) {
    Node* node = FindNode(m.key);
    TxnResult<Check> check = CheckWrite(m.key, node == nullptr ? nullptr : &node->second, start_ts);
    if (!check.ok()) return check.error();
    targets->push_back(Target{node, check.value() == Check::kApply});
  }
  return {};
}

TxnStatus MvccStore::Prewrite(const std::vector<Mutation>& mutations, std::string_view primary,
                              Ts start_ts, uint64_t lock_ttl_ms) {
  if (primary.empty()) return MakeError(TxnErrorKind::kInvalidArgument, {}, "empty primary");
  MutexLock lock(&mu_);
  std::vector<Target>& targets = targets_;
  TxnStatus status = ValidateMutations(mutations, start_ts, &targets);
  if (!status.ok()) return status;
  if (!AnyToApply(targets)) return {};
  ++applied_index_;
  auto shared_primary = std::make_shared<const std::string>(primary);
  MutexLock locks(&locks_mu_);  // The batch's locks are listed together.
  for (size_t i = 0; i < mutations.size(); ++i) {
    if (!targets[i].apply) continue;
    Node& node = targets[i].node != nullptr ? *targets[i].node : Insert(mutations[i].key);
    ApplyPrewrite(node, mutations[i], shared_primary, start_ts, lock_ttl_ms);
  }
  NotifyApplied();
  return {};
}

void MvccStore::ApplyPrewrite(Node& node, const Mutation& m,
                              const std::shared_ptr<const std::string>& primary, Ts start_ts,
                              uint64_t ttl_ms) {
  KeyEntry& entry = node.second;
  std::string value = m.op == MutationOp::kPut ? m.value : std::string();
  auto lock = std::make_unique<StoredLock>(
      StoredLock{primary, start_ts, m.op, std::move(value), ttl_ms, Ts(start_ts.value() + 1)});
  locked_.insert_or_assign(std::string_view(node.first), lock.get());
  entry.lock = std::move(lock);  // Frees a replaced lock only once unlisted.
  PrewriteEvent event{applied_index_, node.first,        *entry.lock->primary,         start_ts,
                      m.op,           entry.lock->value, ValueAt(entry.writes, kMaxTs)};
  for (MvccObserver* observer : observers_) observer->OnPrewrite(event);
}

TxnStatus MvccStore::Commit(const std::vector<std::string>& keys, Ts start_ts, Ts commit_ts) {
  std::vector<std::string_view> views(keys.begin(), keys.end());
  return Commit(std::span<const std::string_view>(views), start_ts, commit_ts);
}

TxnStatus MvccStore::Commit(std::span<const std::string_view> keys, Ts start_ts, Ts commit_ts) {
  if (auto error = CheckKeyList(keys, ViewKey)) return *std::move(error);
  if (commit_ts <= start_ts) {
    return MakeError(TxnErrorKind::kInvalidArgument, {}, "commit_ts must exceed start_ts");
  }
  MutexLock lock(&mu_);
  if (commit_ts <= gc_safe_point_) return MakeError(TxnErrorKind::kBelowGcSafePoint, {});
  std::vector<Target>& targets = targets_;
  targets.clear();
  for (std::string_view key : keys) {
    Node* node = FindNode(key);
    TxnResult<Check> check =
        CheckCommit(key, node == nullptr ? nullptr : &node->second, start_ts, commit_ts);
    if (!check.ok()) return check.error();
    targets.push_back(Target{node, check.value() == Check::kApply});
  }
  if (!AnyToApply(targets)) return {};
  ++applied_index_;
  // See Unlist(): held until the commits have reached the observers.
  MutexLock locks(&locks_mu_);
  for (const Target& target : targets) {
    if (!target.apply) continue;
    Node& node = *target.node;
    std::unique_ptr<StoredLock> taken = std::move(node.second.lock);
    Unlist(node.first);
    ApplyCommit(node.second, node.first, start_ts, commit_ts, WriteKindOf(taken->op),
                std::move(taken->value), /*one_pc=*/false);
  }
  NotifyApplied();
  return {};
}

void MvccStore::ApplyCommit(KeyEntry& entry, std::string_view key, Ts start_ts, Ts commit_ts,
                            WriteKind kind, std::string value, bool one_pc) {
  // Callers checked that no record exists at commit_ts; commits append.
  auto pos = FirstAfter(entry.writes, commit_ts);
  auto wit = entry.writes.insert(pos, WriteRecord{commit_ts, start_ts, kind, std::move(value)});
  // Read after the insert: it may have moved the older records.
  std::optional<std::string_view> old_value = ValueAt(entry.writes, Before(commit_ts));
  CommitEvent event{applied_index_, key, start_ts, commit_ts, kind, wit->value, old_value, one_pc};
  for (MvccObserver* observer : observers_) observer->OnCommit(event);
}

TxnStatus MvccStore::Rollback(const std::vector<std::string>& keys, Ts start_ts) {
  if (auto error = CheckKeyList(std::span<const std::string>(keys), PlainKey)) {
    return *std::move(error);
  }
  MutexLock lock(&mu_);
  std::vector<bool> apply;
  for (const std::string& key : keys) {
    TxnResult<Check> check = CheckRollback(key, start_ts);
    if (!check.ok()) return check.error();
    apply.push_back(check.value() == Check::kApply);
  }
  if (std::none_of(apply.begin(), apply.end(), [](bool b) { return b; })) return {};
  ++applied_index_;
  // See Unlist(): held until the rollbacks have reached the observers.
  MutexLock locks(&locks_mu_);
  for (size_t i = 0; i < keys.size(); ++i) {
    if (apply[i]) ApplyRollback(keys[i], start_ts);
  }
  NotifyApplied();
  return {};
}

void MvccStore::ApplyRollback(std::string_view key, Ts start_ts) {
  Node& node = Upsert(key);
  KeyEntry& entry = node.second;
  RollbackEvent event{applied_index_, node.first, start_ts};
  if (entry.lock != nullptr && entry.lock->start_ts == start_ts) {
    event.removed_lock = true;
    event.lock_op = entry.lock->op;
    Unlist(node.first);
    entry.lock.reset();
  }
  if (!HasWriteAt(entry.writes, start_ts)) {
    entry.writes.insert(FirstAfter(entry.writes, start_ts),
                        WriteRecord{start_ts, start_ts, WriteKind::kRollback, {}});
  }
  for (MvccObserver* observer : observers_) observer->OnRollback(event);
}

TxnStatus MvccStore::CommitOnePc(const std::vector<Mutation>& mutations, Ts start_ts,
                                 Ts commit_ts) {
  Ts unused;
  return CommitOnePc(
      mutations, start_ts, [commit_ts]() -> std::optional<Ts> { return commit_ts; }, &unused);
}

TxnStatus MvccStore::CommitOnePc(const std::vector<Mutation>& mutations, Ts start_ts,
                                 absl::FunctionRef<std::optional<Ts>()> next_ts, Ts* commit_ts) {
  MutexLock lock(&mu_);
  std::vector<Target>& targets = targets_;
  TxnStatus status = ValidateMutations(mutations, start_ts, &targets);
  if (!status.ok()) return status;
  // A resolved-ts round that starts meanwhile waits for these commits to
  // reach the observers, and one that read its bound before waited for
  // nothing: the commit ts read below is above that bound.
  MutexLock locks(&locks_mu_);
  std::optional<Ts> ts = next_ts();
  if (!ts.has_value()) return MakeError(TxnErrorKind::kInvalidArgument, {}, "no commit_ts");
  if (*ts <= start_ts) {
    return MakeError(TxnErrorKind::kInvalidArgument, {}, "commit_ts must exceed start_ts");
  }
  *commit_ts = *ts;
  for (size_t i = 0; i < mutations.size(); ++i) {
    const Node* node = targets[i].node;
    if (targets[i].apply && node != nullptr && HasWriteAt(node->second.writes, *ts)) {
      return MakeError(TxnErrorKind::kInvalidArgument, mutations[i].key,
                       "a write exists at commit_ts");
    }
  }
  if (!AnyToApply(targets)) return {};
  ++applied_index_;
  for (size_t i = 0; i < mutations.size(); ++i) {
    if (!targets[i].apply) continue;
    const Mutation& m = mutations[i];
    Node& node = targets[i].node != nullptr ? *targets[i].node : Insert(m.key);
    std::string value = m.op == MutationOp::kPut ? m.value : std::string();
    ApplyCommit(node.second, node.first, start_ts, *ts, WriteKindOf(m.op), std::move(value),
                /*one_pc=*/true);
  }
  NotifyApplied();
  return {};
}

Result<Ts> MvccStore::ReadResolvedBound(absl::FunctionRef<Result<Ts>()> read_ts) const {
  MutexLock locks(&locks_mu_);
  return read_ts();
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

Result<uint64_t> MvccStore::VisitCommitted(std::string_view start, std::string_view end,
                                           Ts after_ts, Ts snapshot_ts,
                                           absl::FunctionRef<void(const ScannedRow&)> visit) const {
  MutexLock lock(&mu_);
  if (after_ts < gc_safe_point_) {
    return Status(Code::kGcSafepointExceeded,
                  "incremental scan from " + std::to_string(after_ts.value()) +
                      " below gc safe point " + std::to_string(gc_safe_point_.value()));
  }
  ForRange(start, end, [&](const std::string& key, const KeyEntry& entry) {
    ScannedRow row;
    row.key = key;
    if (entry.lock != nullptr && entry.lock->op != MutationOp::kLock) {
      row.is_lock = true;
      row.start_ts = entry.lock->start_ts;
      row.lock_op = entry.lock->op;
      row.value = entry.lock->value;
      row.old_value = ValueAt(entry.writes, kMaxTs);
      visit(row);
      row.is_lock = false;
    }
    if (after_ts >= snapshot_ts) return true;
    // Records with after_ts < commit_ts <= snapshot_ts, walked oldest first.
    auto oldest = FirstAfter(entry.writes, after_ts);
    auto newest_end = FirstAfter(entry.writes, snapshot_ts);
    row.old_value = ValueAt(entry.writes, after_ts);
    for (auto it = oldest; it != newest_end; ++it) {
      const WriteRecord& w = *it;
      if (w.kind != WriteKind::kPut && w.kind != WriteKind::kDelete) continue;
      row.start_ts = w.start_ts;
      row.commit_ts = w.commit_ts;
      row.kind = w.kind;
      row.value = w.value;
      visit(row);
      row.old_value =
          w.kind == WriteKind::kPut ? std::optional<std::string_view>(w.value) : std::nullopt;
    }
    return true;
  });
  return applied_index_;
}

Result<CommittedScan> MvccStore::ScanCommitted(std::string_view start, std::string_view end,
                                               Ts after_ts, Ts snapshot_ts) const {
  CommittedScan scan;
  auto copy = [](std::optional<std::string_view> view) {
    return view ? std::optional<std::string>(*view) : std::nullopt;
  };
  Result<uint64_t> applied =
      VisitCommitted(start, end, after_ts, snapshot_ts, [&](const ScannedRow& row) {
        if (row.is_lock) {
          mu_.AssertHeld();  // The visitor runs under the store's lock.
          scan.prewrites.push_back(
              PrewriteRow{ToLockInfo(row.key, *FindEntry(row.key)->lock), copy(row.old_value)});
          return;
        }
        scan.rows.push_back(CommittedRow{std::string(row.key), row.start_ts, row.commit_ts,
                                         row.kind, std::string(row.value), copy(row.old_value)});
      });
  if (!applied.ok()) return applied.status();
  scan.applied_index = applied.value();
  return scan;
}

void MvccStore::Unlist(std::string_view key) { locked_.erase(key); }

std::optional<Ts> MvccStore::MinLockStartTs(std::string_view start, std::string_view end) const {
  MutexLock lock(&locks_mu_);
  std::optional<Ts> min_ts;
  for (auto it = locked_.lower_bound(start); it != locked_.end(); ++it) {
    if (!end.empty() && it->first >= end) break;
    if (!min_ts || it->second->start_ts < *min_ts) min_ts = it->second->start_ts;
  }
  return min_ts;
}

std::vector<LockInfo> MvccStore::Locks(std::string_view start, std::string_view end) const {
  MutexLock lock(&locks_mu_);
  std::vector<LockInfo> out;
  for (auto it = locked_.lower_bound(start); it != locked_.end(); ++it) {
    if (!end.empty() && it->first >= end) break;
    out.push_back(ToLockInfo(it->first, *it->second));
  }
  return out;
}

TxnState MvccStore::CheckTxn(std::string_view primary, Ts start_ts) const {
  MutexLock lock(&mu_);
  TxnState state;
  const KeyEntry* entry = FindEntry(primary);
  if (entry == nullptr) return state;
  if (entry->lock != nullptr && entry->lock->start_ts == start_ts) {
    state.kind = TxnState::Kind::kLocked;
    state.lock = ToLockInfo(primary, *entry->lock);
    return state;
  }
  if (const WriteRecord* own = FindOwnRecord(entry->writes, start_ts)) {
    bool rolled_back = own->kind == WriteKind::kRollback;
    state.kind = rolled_back ? TxnState::Kind::kRolledBack : TxnState::Kind::kCommitted;
    if (!rolled_back) state.commit_ts = own->commit_ts;
  }
  return state;
}

// static
size_t MvccStore::GcKey(Versions& writes, Ts safe_point) {
  // Records [0, first) are at or below the safe point; the newest put among
  // them stays unless a delete hides it.
  const size_t first = static_cast<size_t>(FirstAfter(writes, safe_point) - writes.begin());
  std::optional<size_t> keep;
  for (size_t i = first; i > 0; --i) {
    WriteKind kind = writes[i - 1].kind;
    if (kind == WriteKind::kPut) {
      keep = i - 1;
      break;
    }
    if (kind == WriteKind::kDelete) break;  // Nothing visible below.
  }
  size_t erase_from = 0;
  if (keep.has_value()) {
    if (*keep != 0) writes[0] = std::move(writes[*keep]);
    erase_from = 1;
  }
  writes.erase(writes.begin() + static_cast<ptrdiff_t>(erase_from),
               writes.begin() + static_cast<ptrdiff_t>(first));
  return first - erase_from;
}

GcStats MvccStore::Gc(Ts safe_point) {
  MutexLock lock(&mu_);
  GcStats stats;
  if (safe_point <= gc_safe_point_) return stats;
  gc_safe_point_ = safe_point;
  for (Node& node : keys_) stats.removed_versions += GcKey(node.second.writes, safe_point);
  auto gone = [](const Node* node) {
    return node->second.lock == nullptr && node->second.writes.empty();
  };
  SortNewKeys();
  std::erase_if(ordered_, gone);
  stats.removed_keys = absl::erase_if(keys_, [&](const Node& node) { return gone(&node); });
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
    if (entry.lock != nullptr) ++stats.locks;
  }
  return stats;
}

}  // namespace sluice::simkv
