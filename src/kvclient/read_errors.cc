#include "kvclient/read_errors.h"

#include <algorithm>

#include "common/logging.h"

namespace sluice::kvclient {

namespace {

std::string RegionName(RegionId region) { return "region " + std::to_string(region.value()); }

RegionErrorPlan Reload(Status status) {
  RegionErrorPlan plan;
  plan.status = std::move(status);
  plan.invalidate_region = true;
  return plan;
}

}  // namespace

RegionErrorPlan PlanForRegionError(const errorpb::Error& error, RegionId region) {
  const std::string name = RegionName(region);
  if (error.has_not_leader()) {
    const metapb::Peer& leader = error.not_leader().leader();
    if (leader.store_id() == 0) {
      return Reload(Unavailable(name + ": not leader, leader unknown"));
    }
    RegionErrorPlan plan;
    plan.status =
        Unavailable(name + ": not leader, leader on store " + std::to_string(leader.store_id()));
    plan.update_leader = true;
    plan.leader_store = StoreId(leader.store_id());
    plan.leader_peer_id = leader.id();
    plan.retry_now = true;
    return plan;
  }
  if (error.has_epoch_not_match()) return Reload(EpochMismatch(name + ": epoch not match"));
  if (error.has_region_not_found()) return Reload(Unavailable(name + ": region not found"));
  if (error.has_key_not_in_region()) return Reload(EpochMismatch(name + ": key not in region"));
  if (error.has_store_not_match()) {
    RegionErrorPlan plan = Reload(
        Unavailable(name + ": store not match (asked " +
                    std::to_string(error.store_not_match().request_store_id()) + ", reached " +
                    std::to_string(error.store_not_match().actual_store_id()) + ")"));
    plan.invalidate_store = true;
    return plan;
  }
  if (error.has_server_is_busy()) {
    RegionErrorPlan plan;
    plan.status = Busy(name + ": server is busy: " + RedactText(error.server_is_busy().reason()));
    plan.min_backoff =
        std::chrono::milliseconds(std::min<uint64_t>(error.server_is_busy().backoff_ms(), 60000));
    return plan;
  }
  if (error.has_mismatch_peer_id()) return Reload(Unavailable(name + ": mismatch peer id"));
  // Stale command, not initialized, merging, flashback, disk full, ...: the
  // region is in flux; reload it and try again later.
  return Reload(Unavailable(name + ": region error: " + RedactText(error.message())));
}

Status KeyErrorStatus(const kvrpcpb::KeyError& error) {
  if (error.has_locked()) {
    return Timeout("key " + Redact(error.locked().key()) + " is locked by transaction " +
                   std::to_string(error.locked().lock_version()));
  }
  if (!error.abort().empty()) return Aborted("read aborted: " + RedactText(error.abort()));
  if (!error.retryable().empty()) {
    return Unavailable("read can be retried: " + RedactText(error.retryable()));
  }
  return ProtocolViolation("unexpected key error in a read: " +
                           RedactText(error.ShortDebugString()));
}

Status CheckScanPairs(const kvrpcpb::ScanResponse& response, const std::string& start,
                      const std::string& end, uint32_t batch) {
  if (static_cast<uint32_t>(response.pairs_size()) > batch) {
    return ProtocolViolation("scan answered " + std::to_string(response.pairs_size()) +
                             " pairs for a limit of " + std::to_string(batch));
  }
  const std::string* previous = nullptr;
  for (const kvrpcpb::KvPair& pair : response.pairs()) {
    const std::string& key = pair.key();
    if (key < start || (!end.empty() && key >= end)) {
      return ProtocolViolation("scan answered key " + Redact(key) + " outside the range");
    }
    if (previous != nullptr && key <= *previous) {
      return ProtocolViolation("scan answered key " + Redact(key) + " out of order");
    }
    previous = &key;
  }
  return Status::Ok();
}

}  // namespace sluice::kvclient
