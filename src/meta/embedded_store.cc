#include "meta/embedded_store.h"

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <filesystem>
#include <utility>

#include "common/logging.h"
#include "meta/record_format.h"
#include "meta/rocks_util.h"

namespace sluice::meta {

Result<std::unique_ptr<EmbeddedMetaStore>> EmbeddedMetaStore::Open(EmbeddedStoreOptions options) {
  if (options.dir.empty()) return InvalidArgument("metastore: empty directory");
  if (options.clock == nullptr) return InvalidArgument("metastore: no clock");
  if (options.history_revisions < 1) return InvalidArgument("metastore: history_revisions < 1");
  std::error_code ec;
  std::filesystem::create_directories(options.dir, ec);
  if (ec) return IoError("metastore: create " + options.dir + ": " + ec.message());

  rocksdb::Options db_options;
  db_options.create_if_missing = true;
  db_options.paranoid_checks = true;
  rocksdb::DB* raw = nullptr;
  RETURN_IF_ERROR(FromRocks(rocksdb::DB::Open(db_options, options.dir, &raw), "metastore open"));
  std::unique_ptr<EmbeddedMetaStore> store(
      new EmbeddedMetaStore(std::move(options), std::unique_ptr<rocksdb::DB>(raw)));
  RETURN_IF_ERROR(store->Load());
  store->lease_thread_.Start("meta-lease",
                             [s = store.get()](StopToken token) { s->LeaseLoop(token); });
  return store;
}

EmbeddedMetaStore::EmbeddedMetaStore(EmbeddedStoreOptions options, std::unique_ptr<rocksdb::DB> db)
    : options_(std::move(options)), clock_(options_.clock), db_(std::move(db)) {}

EmbeddedMetaStore::~EmbeddedMetaStore() { Stop(); }

void EmbeddedMetaStore::Stop() {
  {
    MutexLock w(&write_mu_);  // Lets a commit in flight finish first.
    MutexLock lock(&mu_);
    stopped_ = true;
    changed_.SignalAll();
  }
  lease_thread_.Stop();
}

Status EmbeddedMetaStore::Load() {
  std::string bytes;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), format::RevisionKey(), &bytes);
  MutexLock w(&write_mu_);
  MutexLock lock(&mu_);
  if (s.ok()) {
    ASSIGN_OR_RETURN(uint64_t rev, format::DecodeU64(bytes));
    revision_ = static_cast<Revision>(rev);
  } else if (!s.IsNotFound()) {
    return FromRocks(s, "metastore read revision");
  }
  s = db_->Get(rocksdb::ReadOptions(), format::LeaseNextKey(), &bytes);
  if (s.ok()) {
    ASSIGN_OR_RETURN(uint64_t next, format::DecodeU64(bytes));
    next_lease_ = static_cast<int64_t>(next);
  } else if (!s.IsNotFound()) {
    return FromRocks(s, "metastore read lease counter");
  }
  compacted_ = std::max<Revision>(0, revision_ - options_.history_revisions);
  RETURN_IF_ERROR(LoadLeases());
  RETURN_IF_ERROR(LoadKeys());
  // Drop history that a smaller history_revisions no longer keeps.
  return FromRocks(db_->DeleteRange(rocksdb::WriteOptions(), db_->DefaultColumnFamily(),
                                    format::EventKey(0), format::EventKey(compacted_ + 1)),
                   "metastore trim history");
}

Status EmbeddedMetaStore::LoadLeases() {
  const std::string prefix(1, format::kLeasePrefix);
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  const Clock::TimePoint now = clock_->Now();
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    ASSIGN_OR_RETURN(LeaseId id, format::DecodeLeaseKey(it->key().ToStringView()));
    ASSIGN_OR_RETURN(int64_t ttl_ms, format::DecodeLeaseRecord(it->value().ToStringView()));
    Lease& lease = leases_[id];
    lease.ttl = std::chrono::milliseconds(ttl_ms);
    lease.deadline = now + lease.ttl;
    if (id.value() >= next_lease_)
      return Corruption("metastore: lease id beyond the lease counter");
  }
  return FromRocks(it->status(), "metastore load leases");
}

Status EmbeddedMetaStore::LoadKeys() {
  const std::string prefix(1, format::kUserPrefix);
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    std::string_view user_key = it->key().ToStringView().substr(1);
    ASSIGN_OR_RETURN(KeyValue kv, format::DecodeKeyRecord(user_key, it->value().ToStringView()));
    if (kv.mod_revision > revision_) return Corruption("metastore: key newer than the store");
    if (kv.lease.value() != 0) {
      auto lease = leases_.find(kv.lease);
      if (lease == leases_.end()) return Corruption("metastore: key on a missing lease");
      lease->second.keys.insert(kv.key);
    }
    kvs_.emplace(kv.key, std::move(kv));
  }
  return FromRocks(it->status(), "metastore load keys");
}

Result<std::optional<KeyValue>> EmbeddedMetaStore::Get(const std::string& key) {
  MutexLock lock(&mu_);
  if (stopped_) return Cancelled("metastore stopped");
  auto it = kvs_.find(key);
  if (it == kvs_.end()) return std::optional<KeyValue>();
  return std::optional<KeyValue>(it->second);
}

Result<RangeResult> EmbeddedMetaStore::GetPrefix(const std::string& prefix) {
  MutexLock lock(&mu_);
  if (stopped_) return Cancelled("metastore stopped");
  RangeResult result;
  result.revision = revision_;
  for (auto it = kvs_.lower_bound(prefix); it != kvs_.end() && HasPrefix(it->first, prefix); ++it) {
    result.kvs.push_back(it->second);
  }
  return result;
}

Result<Revision> EmbeddedMetaStore::CurrentRevision() {
  MutexLock lock(&mu_);
  if (stopped_) return Cancelled("metastore stopped");
  return revision_;
}

Revision EmbeddedMetaStore::compacted_revision() const {
  MutexLock lock(&mu_);
  return compacted_;
}

Result<TxnResponse> EmbeddedMetaStore::Txn(const TxnRequest& txn) {
  MutexLock w(&write_mu_);
  Mutation m;
  TxnResponse resp;
  {
    MutexLock lock(&mu_);
    if (stopped_) return Cancelled("metastore stopped");
    ASSIGN_OR_RETURN(resp.succeeded, PlanTxn(txn, &m));
  }
  ASSIGN_OR_RETURN(resp.revision, Commit(std::move(m)));
  return resp;
}

bool EmbeddedMetaStore::CompareHolds(const Compare& c) const {
  auto it = kvs_.find(c.key);
  const KeyValue empty;
  const KeyValue& kv = it == kvs_.end() ? empty : it->second;
  if (c.target == Compare::Target::kValue) {
    // As in etcd, a value compare on a missing key never holds.
    if (it == kvs_.end()) return false;
    const int cmp = kv.value.compare(c.value);
    switch (c.op) {
      case Compare::Op::kEqual:
        return cmp == 0;
      case Compare::Op::kNotEqual:
        return cmp != 0;
      case Compare::Op::kLess:
        return cmp < 0;
      case Compare::Op::kGreater:
        return cmp > 0;
    }
    return false;
  }
  int64_t actual = 0;
  switch (c.target) {
    case Compare::Target::kVersion:
      actual = kv.version;
      break;
    case Compare::Target::kCreateRevision:
      actual = kv.create_revision;
      break;
    case Compare::Target::kModRevision:
      actual = kv.mod_revision;
      break;
    case Compare::Target::kLease:
      actual = kv.lease.value();
      break;
    case Compare::Target::kValue:
      break;
  }
  switch (c.op) {
    case Compare::Op::kEqual:
      return actual == c.number;
    case Compare::Op::kNotEqual:
      return actual != c.number;
    case Compare::Op::kLess:
      return actual < c.number;
    case Compare::Op::kGreater:
      return actual > c.number;
  }
  return false;
}

Result<bool> EmbeddedMetaStore::PlanTxn(const TxnRequest& txn, Mutation* m) {
  bool succeeded = true;
  for (const Compare& c : txn.compares) {
    if (c.key.empty()) return InvalidArgument("metastore: compare on an empty key");
    succeeded = succeeded && CompareHolds(c);
  }
  const std::vector<TxnOp>& ops = succeeded ? txn.success : txn.failure;
  std::set<std::string> seen;
  const Revision next = revision_ + 1;
  for (const TxnOp& op : ops) {
    if (op.key.empty()) return InvalidArgument("metastore: write to an empty key");
    if (!seen.insert(op.key).second) {
      return InvalidArgument("metastore: key written twice in one transaction");
    }
    auto it = kvs_.find(op.key);
    if (op.type == TxnOp::Type::kDelete) {
      if (it == kvs_.end()) continue;  // Deleting nothing changes nothing.
      WatchEvent e{WatchEvent::Type::kDelete, KeyValue{op.key, "", 0, next, 0, it->second.lease}};
      m->events.push_back(std::move(e));
      continue;
    }
    if (op.lease.value() != 0 && !leases_.contains(op.lease)) {
      return NotFound("metastore: lease " + std::to_string(op.lease.value()) + " not found");
    }
    KeyValue kv{op.key, op.value, next, next, 1, op.lease};
    if (it != kvs_.end()) {
      kv.create_revision = it->second.create_revision;
      kv.version = it->second.version + 1;
    }
    m->events.push_back(WatchEvent{WatchEvent::Type::kPut, std::move(kv)});
  }
  return succeeded;
}

Result<Revision> EmbeddedMetaStore::Commit(Mutation m) {
  Revision current;
  {
    MutexLock lock(&mu_);
    current = revision_;
  }
  const Revision next = current + 1;
  const bool bump = !m.events.empty();
  if (!bump && m.removed_leases.empty()) return current;
  rocksdb::WriteBatch batch;
  for (const WatchEvent& e : m.events) {
    if (e.type == WatchEvent::Type::kPut) {
      batch.Put(format::UserKey(e.kv.key), format::EncodeKeyRecord(e.kv));
    } else {
      batch.Delete(format::UserKey(e.kv.key));
    }
  }
  for (LeaseId lease : m.removed_leases) batch.Delete(format::LeaseKey(lease));
  if (bump) {
    batch.Put(format::EventKey(next), format::EncodeEvents(m.events));
    batch.Put(format::RevisionKey(), format::EncodeU64(static_cast<uint64_t>(next)));
    const Revision drop = next - options_.history_revisions;
    if (drop > 0) batch.Delete(format::EventKey(drop));
  }
  rocksdb::WriteOptions write;
  write.sync = options_.sync;
  RETURN_IF_ERROR(FromRocks(db_->Write(write, &batch), "metastore commit"));
  MutexLock lock(&mu_);
  Apply(m, next);
  if (bump) {
    revision_ = next;
    compacted_ = std::max<Revision>(0, next - options_.history_revisions);
  }
  changed_.SignalAll();
  return revision_;
}

void EmbeddedMetaStore::Apply(const Mutation& m, Revision revision) {
  for (const WatchEvent& e : m.events) {
    auto it = kvs_.find(e.kv.key);
    if (it != kvs_.end() && it->second.lease.value() != 0) {
      auto lease = leases_.find(it->second.lease);
      if (lease != leases_.end()) lease->second.keys.erase(e.kv.key);
    }
    if (e.type == WatchEvent::Type::kDelete) {
      if (it != kvs_.end()) kvs_.erase(it);
      continue;
    }
    kvs_[e.kv.key] = e.kv;
    if (e.kv.lease.value() != 0) leases_[e.kv.lease].keys.insert(e.kv.key);
  }
  for (LeaseId lease : m.removed_leases) leases_.erase(lease);
}

}  // namespace sluice::meta
