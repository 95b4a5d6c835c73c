#include "simkv/region_map.h"

#include <algorithm>
#include <set>

#include "common/memcomparable.h"

namespace sluice::simkv {

namespace {

std::string RegionName(RegionId id) { return "region " + std::to_string(id.value()); }

}  // namespace

bool RegionInfo::ContainsEncoded(std::string_view encoded_key) const {
  return encoded_key >= start_key && (end_key.empty() || encoded_key < end_key);
}

bool RegionInfo::ContainsRaw(std::string_view raw_key) const {
  return ContainsEncoded(memcomparable::EncodeBytes(raw_key));
}

std::optional<Peer> RegionInfo::LeaderPeer() const {
  for (const Peer& peer : peers) {
    if (peer.store_id == leader) return peer;
  }
  return std::nullopt;
}

RegionMap::RegionMap(std::vector<StoreId> stores) : stores_(std::move(stores)) {}

Result<std::unique_ptr<RegionMap>> RegionMap::Bootstrap(const RegionMapOptions& options) {
  const std::vector<StoreId>& stores = options.stores;
  if (stores.empty()) return InvalidArgument("region map: no stores");
  if (std::set<StoreId>(stores.begin(), stores.end()).size() != stores.size()) {
    return InvalidArgument("region map: duplicate store ids");
  }
  if (options.replicas == 0) return InvalidArgument("region map: zero replicas");
  const std::vector<std::string>& keys = options.raw_split_keys;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (keys[i].empty() || (i > 0 && keys[i - 1] >= keys[i])) {
      return InvalidArgument("region map: split keys must be non-empty, sorted and distinct");
    }
  }
  std::unique_ptr<RegionMap> map(new RegionMap(stores));
  size_t replicas = std::min(options.replicas, stores.size());
  MutexLock lock(&map->mu_);
  for (size_t i = 0; i <= keys.size(); ++i) {
    RegionInfo region;
    region.id = RegionId(map->NextId());
    if (i > 0) region.start_key = memcomparable::EncodeBytes(keys[i - 1]);
    if (i < keys.size()) region.end_key = memcomparable::EncodeBytes(keys[i]);
    for (size_t r = 0; r < replicas; ++r) {
      region.peers.push_back(Peer{map->NextId(), stores[(i + r) % stores.size()]});
    }
    region.leader = stores[i % stores.size()];
    map->Insert(std::move(region));
  }
  return map;
}

RegionInfo* RegionMap::FindById(RegionId region_id) {
  auto it = regions_.find(region_id);
  return it == regions_.end() ? nullptr : &it->second;
}

std::vector<Peer> RegionMap::NewPeers(const std::vector<Peer>& like) {
  std::vector<Peer> peers;
  for (const Peer& peer : like) peers.push_back(Peer{NextId(), peer.store_id});
  return peers;
}

void RegionMap::Insert(RegionInfo region) {
  by_start_[region.start_key] = region.id;
  RegionId id = region.id;
  regions_[id] = std::move(region);
}

Result<std::pair<RegionInfo, RegionInfo>> RegionMap::Split(RegionId region_id,
                                                           std::string_view raw_split_key) {
  MutexLock lock(&mu_);
  RegionInfo* left = FindById(region_id);
  if (left == nullptr) return NotFound(RegionName(region_id));
  std::string encoded = memcomparable::EncodeBytes(raw_split_key);
  if (encoded <= left->start_key || (!left->end_key.empty() && encoded >= left->end_key)) {
    return InvalidArgument("split key outside or on the boundary of " + RegionName(region_id));
  }
  RegionInfo right;
  right.id = RegionId(NextId());
  right.start_key = encoded;
  right.end_key = left->end_key;
  right.epoch = RegionEpoch{left->epoch.conf_ver, left->epoch.version + 1};
  right.peers = NewPeers(left->peers);
  right.leader = left->leader;
  left->end_key = encoded;
  left->epoch.version += 1;
  RegionInfo left_copy = *left;  // Insert may rehash regions_.
  Insert(right);
  return std::make_pair(std::move(left_copy), std::move(right));
}

Result<RegionInfo> RegionMap::Merge(RegionId left_id, RegionId right_id, Survivor survivor) {
  MutexLock lock(&mu_);
  RegionInfo* left = FindById(left_id);
  RegionInfo* right = FindById(right_id);
  if (left == nullptr) return NotFound(RegionName(left_id));
  if (right == nullptr) return NotFound(RegionName(right_id));
  if (left_id == right_id || left->end_key.empty() || left->end_key != right->start_key) {
    return InvalidArgument(RegionName(left_id) + " and " + RegionName(right_id) +
                           " are not adjacent");
  }
  uint64_t version = std::max(left->epoch.version, right->epoch.version) + 1;
  RegionInfo merged;
  if (survivor == Survivor::kLeft) {
    left->end_key = right->end_key;
    left->epoch.version = version;
    merged = *left;
    by_start_.erase(right->start_key);
    regions_.erase(right_id);
  } else {
    by_start_.erase(right->start_key);
    right->start_key = left->start_key;
    right->epoch.version = version;
    by_start_[right->start_key] = right_id;
    merged = *right;
    regions_.erase(left_id);
  }
  return merged;
}

Result<RegionInfo> RegionMap::TransferLeader(RegionId region_id, StoreId store_id) {
  MutexLock lock(&mu_);
  RegionInfo* region = FindById(region_id);
  if (region == nullptr) return NotFound(RegionName(region_id));
  bool has_peer = std::any_of(region->peers.begin(), region->peers.end(),
                              [&](const Peer& p) { return p.store_id == store_id; });
  if (!has_peer) {
    return InvalidArgument(RegionName(region_id) + " has no peer on store " +
                           std::to_string(store_id.value()));
  }
  region->leader = store_id;
  return *region;
}

Result<RegionInfo> RegionMap::BumpEpoch(RegionId region_id) {
  MutexLock lock(&mu_);
  RegionInfo* region = FindById(region_id);
  if (region == nullptr) return NotFound(RegionName(region_id));
  region->epoch.conf_ver += 1;
  return *region;
}

Result<RegionInfo> RegionMap::RegionForKey(std::string_view encoded_key) const {
  MutexLock lock(&mu_);
  auto it = by_start_.upper_bound(std::string(encoded_key));
  if (it == by_start_.begin()) return NotFound("no region for key");
  const RegionInfo& region = regions_.at(std::prev(it)->second);
  if (!region.ContainsEncoded(encoded_key)) return NotFound("no region for key");
  return region;
}

Result<RegionInfo> RegionMap::RegionById(RegionId region_id) const {
  MutexLock lock(&mu_);
  auto it = regions_.find(region_id);
  if (it == regions_.end()) return NotFound(RegionName(region_id));
  return it->second;
}

Result<RegionInfo> RegionMap::CheckEpoch(RegionId region_id, const RegionEpoch& epoch) const {
  ASSIGN_OR_RETURN(RegionInfo region, RegionById(region_id));
  if (region.epoch != epoch) {
    return EpochMismatch(RegionName(region_id) + " epoch is (" +
                         std::to_string(region.epoch.conf_ver) + ", " +
                         std::to_string(region.epoch.version) + ")");
  }
  return region;
}

std::vector<RegionInfo> RegionMap::Scan(std::string_view encoded_start,
                                        std::string_view encoded_end, size_t limit) const {
  MutexLock lock(&mu_);
  std::vector<RegionInfo> out;
  auto it = by_start_.upper_bound(std::string(encoded_start));
  if (it != by_start_.begin()) --it;
  for (; it != by_start_.end(); ++it) {
    if (!encoded_end.empty() && it->first >= encoded_end) break;
    if (limit != 0 && out.size() >= limit) break;
    out.push_back(regions_.at(it->second));
  }
  return out;
}

void RegionMap::ForEach(const std::function<void(const RegionInfo&)>& fn) const {
  MutexLock lock(&mu_);
  for (const auto& [start, id] : by_start_) fn(regions_.at(id));
}

size_t RegionMap::size() const {
  MutexLock lock(&mu_);
  return regions_.size();
}

}  // namespace sluice::simkv
