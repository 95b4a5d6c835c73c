// Leases of the embedded store: grant, keep-alive, revoke and expiry on the
// store's clock.
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "common/logging.h"
#include "meta/embedded_store.h"
#include "meta/record_format.h"
#include "meta/rocks_util.h"

namespace sluice::meta {
namespace {

int64_t ToMillis(Clock::Duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

}  // namespace

Result<LeaseGrant> EmbeddedMetaStore::GrantLease(Clock::Duration ttl) {
  const int64_t ttl_ms = ToMillis(ttl);
  if (ttl_ms <= 0) return InvalidArgument("metastore: lease ttl must be at least 1 ms");
  MutexLock w(&write_mu_);
  {
    MutexLock lock(&mu_);
    if (stopped_) return Cancelled("metastore stopped");
  }
  const LeaseId id(next_lease_);
  rocksdb::WriteBatch batch;
  batch.Put(format::LeaseKey(id), format::EncodeLeaseRecord(ttl_ms));
  batch.Put(format::LeaseNextKey(), format::EncodeU64(static_cast<uint64_t>(id.value() + 1)));
  rocksdb::WriteOptions write;
  write.sync = options_.sync;
  RETURN_IF_ERROR(FromRocks(db_->Write(write, &batch), "metastore grant lease"));
  ++next_lease_;
  MutexLock lock(&mu_);
  Lease& lease = leases_[id];
  lease.ttl = std::chrono::milliseconds(ttl_ms);
  lease.deadline = clock_->Now() + lease.ttl;
  changed_.SignalAll();
  return LeaseGrant{id, lease.ttl};
}

Status EmbeddedMetaStore::KeepAlive(LeaseId id) {
  MutexLock lock(&mu_);
  if (stopped_) return Cancelled("metastore stopped");
  auto it = leases_.find(id);
  const Clock::TimePoint now = clock_->Now();
  // A lease past its deadline is expired even before the lease thread reaps it.
  if (it == leases_.end() || it->second.deadline <= now) {
    return NotFound("metastore: lease " + std::to_string(id.value()) + " not found or expired");
  }
  it->second.deadline = now + it->second.ttl;
  changed_.SignalAll();
  return Status::Ok();
}

Result<Clock::Duration> EmbeddedMetaStore::LeaseTimeToLive(LeaseId id) {
  MutexLock lock(&mu_);
  if (stopped_) return Cancelled("metastore stopped");
  auto it = leases_.find(id);
  const Clock::TimePoint now = clock_->Now();
  if (it == leases_.end() || it->second.deadline <= now) {
    return NotFound("metastore: lease " + std::to_string(id.value()) + " not found or expired");
  }
  return it->second.deadline - now;
}

void EmbeddedMetaStore::PlanRevoke(LeaseId id, Mutation* m) {
  const Lease& lease = leases_.at(id);
  for (const std::string& key : lease.keys) {
    m->events.push_back(
        WatchEvent{WatchEvent::Type::kDelete, KeyValue{key, "", 0, revision_ + 1, 0, id}});
  }
  m->removed_leases.push_back(id);
}

Status EmbeddedMetaStore::RevokeLease(LeaseId id) {
  MutexLock w(&write_mu_);
  Mutation m;
  {
    MutexLock lock(&mu_);
    if (stopped_) return Cancelled("metastore stopped");
    if (!leases_.contains(id)) {
      return NotFound("metastore: lease " + std::to_string(id.value()) + " not found");
    }
    PlanRevoke(id, &m);
  }
  return Commit(std::move(m)).status();
}

Status EmbeddedMetaStore::ExpireDueLeases() {
  MutexLock w(&write_mu_);
  Mutation m;
  {
    MutexLock lock(&mu_);
    if (stopped_) return Cancelled("metastore stopped");
    const Clock::TimePoint now = clock_->Now();
    for (const auto& [id, lease] : leases_) {
      if (lease.deadline <= now) PlanRevoke(id, &m);
    }
  }
  // All expired leases go in one revision, like one etcd revoke per lease
  // but atomically: watchers see every key of a dead node vanish together.
  return Commit(std::move(m)).status();
}

void EmbeddedMetaStore::LeaseLoop(const StopToken& token) {
  while (!token.cancelled()) {
    Status st = ExpireDueLeases();
    if (!st.ok() && st.code() != Code::kCancelled) {
      LOG_WARN("metastore lease expiry failed: {}", st.ToString());
    }
    MutexLock lock(&mu_);
    if (stopped_) return;
    Clock::TimePoint deadline = Clock::TimePoint::max();
    for (const auto& [id, lease] : leases_) deadline = std::min(deadline, lease.deadline);
    // Woken by a commit, a grant, a keep-alive or Stop(); then recomputes.
    if (st.ok())
      clock_->WaitUntil(&changed_, &mu_, deadline);
    else
      clock_->WaitUntil(&changed_, &mu_, clock_->Now() + std::chrono::seconds(1));
  }
}

}  // namespace sluice::meta
