#include "simkv/proto_convert.h"

namespace sluice::simkv {

namespace {

metapb::NodeState NodeStateOf(StoreState state) {
  switch (state) {
    case StoreState::kUp:
      return metapb::Serving;
    case StoreState::kOffline:
      return metapb::Removing;
    case StoreState::kTombstone:
      return metapb::Removed;
  }
  return metapb::Serving;
}

}  // namespace

metapb::RegionEpoch ToProto(const RegionEpoch& epoch) {
  metapb::RegionEpoch out;
  out.set_conf_ver(epoch.conf_ver);
  out.set_version(epoch.version);
  return out;
}

metapb::Peer ToProto(const Peer& peer) {
  metapb::Peer out;
  out.set_id(peer.id);
  out.set_store_id(peer.store_id.value());
  return out;
}

metapb::Region ToProto(const RegionInfo& region) {
  metapb::Region out;
  out.set_id(region.id.value());
  out.set_start_key(region.start_key);
  out.set_end_key(region.end_key);
  *out.mutable_region_epoch() = ToProto(region.epoch);
  for (const Peer& peer : region.peers) *out.add_peers() = ToProto(peer);
  return out;
}

metapb::Store ToProto(const StoreInfo& store) {
  metapb::Store out;
  out.set_id(store.id.value());
  out.set_address(store.address);
  out.set_state(static_cast<metapb::StoreState>(store.state));
  out.set_version(store.version);
  out.set_peer_address(store.address);
  out.set_node_state(NodeStateOf(store.state));
  return out;
}

RegionEpoch FromProto(const metapb::RegionEpoch& epoch) {
  return RegionEpoch{epoch.conf_ver(), epoch.version()};
}

}  // namespace sluice::simkv
