// Value types of the PD client: its options, and stores and regions as PD
// describes them. Plain values with no threading concerns.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/strong_id.h"

namespace sluice::pd {

struct PdClientOptions {
  std::vector<std::string> endpoints;  // "host:port" (an "http://" prefix is accepted); tried in
                                       // order on (re)connect.
  Clock* clock = Clock::Real();  // GetTs waits and reconnect backoff; must outlive the client.
  std::chrono::milliseconds rpc_timeout{5000};  // Deadline of each unary call and of each GetTs.
  std::chrono::milliseconds backoff_base{100};  // Reconnect backoff after a failed reconnect.
  std::chrono::milliseconds backoff_max{3000};
  size_t region_scan_batch = 1024;   // ScanRegions limit per call of RegionCache::LocateSpan.
  size_t tso_max_batch = 10000;      // Most timestamps asked in one Tso stream request.
  std::string caller_id = "sluice";  // RequestHeader.caller_id.
};

struct Store {
  StoreId id;
  std::string address;  // Client (gRPC) address; dial this for EventFeed.
  bool up = true;       // metapb.StoreState Up.
  bool tombstone = false;
  std::string version;
};

// A region as PD returns it. Boundaries are memcomparable-encoded.
struct Region {
  RegionId id;
  std::string start_key;  // Empty = -inf.
  std::string end_key;    // Empty = +inf.
  uint64_t conf_ver = 0;
  uint64_t version = 0;
  StoreId leader_store;  // StoreId(0): PD knows no leader.
  uint64_t leader_peer_id = 0;
  std::vector<std::pair<uint64_t /*peer id*/, StoreId>> peers;

  bool has_leader() const { return leader_store.value() != 0; }
  // Whether `comparable_key` lies in [start_key, end_key).
  bool Contains(std::string_view comparable_key) const {
    return start_key <= comparable_key && (end_key.empty() || comparable_key < end_key);
  }
};

}  // namespace sluice::pd
