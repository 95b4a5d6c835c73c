// The cdcpb.Error answers of the simulated store, one constructor per kind,
// filled as TiKV fills them. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cdcpb.pb.h"
#include "simkv/region_map.h"

namespace sluice::simkv {

cdcpb::Error RegionNotFoundError(uint64_t region_id);
// `leader` absent when the store does not know the leader.
cdcpb::Error NotLeaderError(uint64_t region_id, const std::optional<Peer>& leader);
cdcpb::Error EpochNotMatchError(const std::vector<RegionInfo>& current_regions);
cdcpb::Error DuplicateRequestError(uint64_t region_id);
cdcpb::Error CompatibilityError(const std::string& required_version);
cdcpb::Error ClusterIdMismatchError(uint64_t current, uint64_t request);
cdcpb::Error ServerIsBusyError(const std::string& reason, uint64_t backoff_ms);
cdcpb::Error CongestedError(uint64_t region_id);

}  // namespace sluice::simkv
