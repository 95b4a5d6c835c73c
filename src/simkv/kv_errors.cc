#include "simkv/kv_errors.h"

#include <utility>

namespace sluice::simkv {

namespace {

kvrpcpb::Op LockTypeOf(MutationOp op) {
  switch (op) {
    case MutationOp::kPut:
      return kvrpcpb::Put;
    case MutationOp::kDelete:
      return kvrpcpb::Del;
    case MutationOp::kLock:
      return kvrpcpb::Lock;
  }
  return kvrpcpb::Put;
}

}  // namespace

errorpb::Error ToRegionError(const cdcpb::Error& error) {
  errorpb::Error out;
  if (error.has_not_leader()) *out.mutable_not_leader() = error.not_leader();
  if (error.has_region_not_found()) *out.mutable_region_not_found() = error.region_not_found();
  if (error.has_epoch_not_match()) *out.mutable_epoch_not_match() = error.epoch_not_match();
  if (error.has_server_is_busy()) *out.mutable_server_is_busy() = error.server_is_busy();
  if (error.has_duplicate_request()) out.set_message("duplicate request");
  if (error.has_compatibility()) out.set_message("incompatible client");
  if (error.has_cluster_id_mismatch()) out.set_message("cluster id mismatch");
  if (error.has_congested()) out.set_message("congested");
  return out;
}

errorpb::Error StoreNotMatchError(uint64_t request_store_id, uint64_t actual_store_id) {
  errorpb::Error out;
  out.set_message("store not match");
  out.mutable_store_not_match()->set_request_store_id(request_store_id);
  out.mutable_store_not_match()->set_actual_store_id(actual_store_id);
  return out;
}

errorpb::Error MismatchPeerIdError(uint64_t request_peer_id, uint64_t store_peer_id) {
  errorpb::Error out;
  out.set_message("mismatch peer id");
  out.mutable_mismatch_peer_id()->set_request_peer_id(request_peer_id);
  out.mutable_mismatch_peer_id()->set_store_peer_id(store_peer_id);
  return out;
}

errorpb::Error KeyNotInRegionError(std::string_view encoded_key, const RegionInfo& region) {
  errorpb::Error out;
  out.set_message("key not in region");
  auto* e = out.mutable_key_not_in_region();
  e->set_key(std::string(encoded_key));
  e->set_region_id(region.id.value());
  e->set_start_key(region.start_key);
  e->set_end_key(region.end_key);
  return out;
}

kvrpcpb::LockInfo ToProtoLock(const LockInfo& lock) {
  kvrpcpb::LockInfo info;
  info.set_primary_lock(lock.primary);
  info.set_lock_version(lock.start_ts.value());
  info.set_key(lock.key);
  info.set_lock_ttl(lock.ttl_ms);
  info.set_lock_type(LockTypeOf(lock.op));
  info.set_min_commit_ts(lock.min_commit_ts.value());
  return info;
}

kvrpcpb::KeyError LockedError(const LockInfo& lock) {
  kvrpcpb::KeyError out;
  *out.mutable_locked() = ToProtoLock(lock);
  return out;
}

kvrpcpb::KeyError AbortError(std::string text) {
  kvrpcpb::KeyError out;
  out.set_abort(std::move(text));
  return out;
}

kvrpcpb::KeyError KeyErrorOf(const TxnError& error) {
  if (error.kind == TxnErrorKind::kKeyIsLocked && error.lock.has_value()) {
    return LockedError(*error.lock);
  }
  return AbortError(error.ToString());
}

}  // namespace sluice::simkv
