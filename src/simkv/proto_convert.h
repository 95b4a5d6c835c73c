// Conversions from simkv's value types to the kvproto messages PD and the CDC
// service put on the wire. Pure functions; thread-safe.
#pragma once

#include "metapb.pb.h"
#include "simkv/region_map.h"
#include "simkv/store_registry.h"

namespace sluice::simkv {

metapb::RegionEpoch ToProto(const RegionEpoch& epoch);
metapb::Peer ToProto(const Peer& peer);
// Boundaries stay memcomparable-encoded, as PD serves them.
metapb::Region ToProto(const RegionInfo& region);
// peer_address is the client address; node_state follows the state
// (Up -> Serving, Offline -> Removing, Tombstone -> Removed).
metapb::Store ToProto(const StoreInfo& store);

RegionEpoch FromProto(const metapb::RegionEpoch& epoch);

}  // namespace sluice::simkv
