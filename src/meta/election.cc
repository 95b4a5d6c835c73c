#include "meta/election.h"

#include "meta/keys.h"

namespace sluice::meta {

Result<Election::Snapshot> Election::Read(LeaseId lease) {
  ASSIGN_OR_RETURN(RangeResult range, store_->GetPrefix(prefix_));
  Snapshot snap;
  snap.revision = range.revision;
  const std::string own_key = KeyLayout::OwnerKey(prefix_, lease);
  for (const KeyValue& kv : range.kvs) {
    if (kv.key == own_key) snap.has_key = true;
    if (!snap.leader || kv.create_revision < snap.leader->create_revision) {
      snap.leader = LeaderInfo{kv.key, kv.value, kv.lease, kv.create_revision};
    }
  }
  return snap;
}

Status Election::WaitAfter(Revision revision, const CancelToken& token) {
  ASSIGN_OR_RETURN(std::unique_ptr<WatchCursor> cursor, store_->Watch(prefix_, revision + 1));
  return cursor->Next(token, Clock::TimePoint::max()).status();
}

Result<LeaderInfo> Election::Campaign(const std::string& value, LeaseId lease,
                                      const CancelToken& token) {
  if (lease.value() == 0) return InvalidArgument("campaign needs a lease");
  const std::string key = KeyLayout::OwnerKey(prefix_, lease);
  TxnRequest txn;
  txn.compares = {Compare::Absent(key)};
  txn.success = {TxnOp::Put(key, value, lease)};
  // A failed compare means this lease already campaigns: keep its place.
  RETURN_IF_ERROR(store_->Txn(txn).status());
  while (true) {
    RETURN_IF_ERROR(token.Check("campaign"));
    ASSIGN_OR_RETURN(Snapshot snap, Read(lease));
    if (!snap.has_key) return Aborted("campaign: candidate key vanished (lease ended)");
    if (snap.leader->key == key) return *snap.leader;
    RETURN_IF_ERROR(WaitAfter(snap.revision, token));
  }
}

Status Election::Resign(LeaseId lease) {
  return store_->Delete(KeyLayout::OwnerKey(prefix_, lease)).status();
}

Result<std::optional<LeaderInfo>> Election::Leader() {
  ASSIGN_OR_RETURN(Snapshot snap, Read(LeaseId()));
  return snap.leader;
}

Result<std::optional<LeaderInfo>> Election::WaitForChange(const std::optional<LeaderInfo>& known,
                                                          const CancelToken& token) {
  while (true) {
    RETURN_IF_ERROR(token.Check("observe leader"));
    ASSIGN_OR_RETURN(Snapshot snap, Read(LeaseId()));
    if (snap.leader != known) return snap.leader;
    RETURN_IF_ERROR(WaitAfter(snap.revision, token));
  }
}

}  // namespace sluice::meta
