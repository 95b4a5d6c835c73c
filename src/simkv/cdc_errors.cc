#include "simkv/cdc_errors.h"

#include "simkv/proto_convert.h"

namespace sluice::simkv {

cdcpb::Error RegionNotFoundError(uint64_t region_id) {
  cdcpb::Error error;
  error.mutable_region_not_found()->set_region_id(region_id);
  return error;
}

cdcpb::Error NotLeaderError(uint64_t region_id, const std::optional<Peer>& leader) {
  cdcpb::Error error;
  error.mutable_not_leader()->set_region_id(region_id);
  if (leader) *error.mutable_not_leader()->mutable_leader() = ToProto(*leader);
  return error;
}

cdcpb::Error EpochNotMatchError(const std::vector<RegionInfo>& current_regions) {
  cdcpb::Error error;
  auto* epoch_not_match = error.mutable_epoch_not_match();
  for (const RegionInfo& region : current_regions) {
    *epoch_not_match->add_current_regions() = ToProto(region);
  }
  return error;
}

cdcpb::Error DuplicateRequestError(uint64_t region_id) {
  cdcpb::Error error;
  error.mutable_duplicate_request()->set_region_id(region_id);
  return error;
}

cdcpb::Error CompatibilityError(const std::string& required_version) {
  cdcpb::Error error;
  error.mutable_compatibility()->set_required_version(required_version);
  return error;
}

cdcpb::Error ClusterIdMismatchError(uint64_t current, uint64_t request) {
  cdcpb::Error error;
  error.mutable_cluster_id_mismatch()->set_current(current);
  error.mutable_cluster_id_mismatch()->set_request(request);
  return error;
}

cdcpb::Error ServerIsBusyError(const std::string& reason, uint64_t backoff_ms) {
  cdcpb::Error error;
  error.mutable_server_is_busy()->set_reason(reason);
  error.mutable_server_is_busy()->set_backoff_ms(backoff_ms);
  return error;
}

cdcpb::Error CongestedError(uint64_t region_id) {
  cdcpb::Error error;
  error.mutable_congested()->set_region_id(region_id);
  return error;
}

}  // namespace sluice::simkv
