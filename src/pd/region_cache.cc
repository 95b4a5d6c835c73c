#include "pd/region_cache.h"

#include <iterator>
#include <tuple>
#include <utility>

#include "common/logging.h"

namespace sluice::pd {

namespace {

// How often LocateSpan starts over after finding cached regions stale.
constexpr int kMaxRestarts = 8;

// Whether a region ending at `end` covers the rest of a span ending at
// `span_end` (empty = +inf).
bool Reaches(std::string_view end, std::string_view span_end) {
  return end.empty() || (!span_end.empty() && end >= span_end);
}

std::string RegionName(const Region& region) {
  return "region " + std::to_string(region.id.value());
}

}  // namespace

Status CheckCoverage(const std::vector<Region>& regions, std::string_view cursor) {
  if (regions.empty()) return Unavailable("pd: no region at key " + Redact(cursor));
  if (!regions.front().Contains(cursor)) {
    return Unavailable("pd: gap before " + RegionName(regions.front()) + " at key " +
                       Redact(cursor));
  }
  for (size_t i = 0; i < regions.size(); ++i) {
    if (!regions[i].has_leader())
      return Unavailable("pd: " + RegionName(regions[i]) + " has no leader");
    if (i > 0 && regions[i].start_key != regions[i - 1].end_key) {
      return Unavailable("pd: gap between " + RegionName(regions[i - 1]) + " and " +
                         RegionName(regions[i]));
    }
  }
  return Status::Ok();
}

RegionCache::RegionCache(PdClient* pd) : pd_(pd), scan_batch_(pd->options().region_scan_batch) {}

const Region* RegionCache::Lookup(std::string_view key) const {
  auto it = by_start_.upper_bound(key);
  if (it == by_start_.begin()) return nullptr;
  --it;
  return it->second.Contains(key) ? &it->second : nullptr;
}

void RegionCache::Erase(RegionId id) {
  auto it = start_of_.find(id);
  if (it == start_of_.end()) return;
  by_start_.erase(it->second);
  start_of_.erase(it);
}

void RegionCache::Insert(const Region& region) {
  if (auto id_it = start_of_.find(region.id); id_it != start_of_.end()) {
    const Region& old = id_it->second->second;
    if (std::tie(old.version, old.conf_ver) > std::tie(region.version, region.conf_ver)) return;
    Erase(region.id);
  }
  auto it = by_start_.lower_bound(region.start_key);
  if (it != by_start_.begin()) {
    auto prev = std::prev(it);
    if (prev->second.end_key.empty() || prev->second.end_key > region.start_key) {
      start_of_.erase(prev->second.id);
      by_start_.erase(prev);
    }
  }
  while (it != by_start_.end() && (region.end_key.empty() || it->first < region.end_key)) {
    start_of_.erase(it->second.id);
    it = by_start_.erase(it);
  }
  auto [entry, inserted] = by_start_.emplace(region.start_key, region);
  if (!inserted) {
    // Only an empty region (end <= start) can collide here; PD never has one.
    LOG_WARN("region cache: region {} is empty; not cached", region.id.value());
    return;
  }
  start_of_[region.id] = entry;
}

bool RegionCache::ServeFromCache(const Span& span, std::string* cursor,
                                 std::vector<Region>* out) const {
  while (const Region* region = Lookup(*cursor)) {
    // After a region, the next must start exactly at its end.
    if (!out->empty() && region->start_key != *cursor) return false;
    out->push_back(*region);
    if (Reaches(region->end_key, span.end)) return true;
    *cursor = region->end_key;
  }
  return false;
}

Result<std::vector<Region>> RegionCache::LocateSpan(const Span& comparable_span) {
  if (comparable_span.IsEmpty()) {
    return InvalidArgument("region cache: empty span " + comparable_span.ToString());
  }
  std::vector<Region> out;
  std::string cursor = comparable_span.start;
  int restarts = 0;
  while (true) {
    {
      MutexLock lock(&mu_);
      if (ServeFromCache(comparable_span, &cursor, &out)) return out;
    }
    ASSIGN_OR_RETURN(std::vector<Region> loaded,
                     pd_->ScanRegions(Span{cursor, comparable_span.end}, scan_batch_));
    RETURN_IF_ERROR(CheckCoverage(loaded, cursor));
    {
      MutexLock lock(&mu_);
      for (const Region& region : loaded) Insert(region);
    }
    if (!out.empty() && loaded.front().start_key < cursor) {
      // PD's region reaches back over cached ones, which were stale: start
      // again over the refreshed cache.
      if (++restarts > kMaxRestarts) {
        return Unavailable("region cache: regions keep changing under " +
                           comparable_span.ToString());
      }
      out.clear();
      cursor = comparable_span.start;
      continue;
    }
    for (Region& region : loaded) {
      const bool done = Reaches(region.end_key, comparable_span.end);
      cursor = region.end_key;
      out.push_back(std::move(region));
      if (done) return out;
    }
  }
}

Result<Region> RegionCache::LocateKey(std::string_view comparable_key) {
  {
    MutexLock lock(&mu_);
    if (const Region* region = Lookup(comparable_key)) return *region;
  }
  ASSIGN_OR_RETURN(Region region, pd_->GetRegionByKey(comparable_key));
  if (!region.Contains(comparable_key)) {
    return Unavailable("pd: " + RegionName(region) + " does not contain key " +
                       Redact(comparable_key));
  }
  if (!region.has_leader()) return Unavailable("pd: " + RegionName(region) + " has no leader");
  MutexLock lock(&mu_);
  Insert(region);
  return region;
}

std::optional<Region> RegionCache::Get(RegionId id) const {
  MutexLock lock(&mu_);
  auto it = start_of_.find(id);
  if (it == start_of_.end()) return std::nullopt;
  return it->second->second;
}

void RegionCache::UpdateLeader(RegionId id, StoreId leader_store, uint64_t leader_peer_id) {
  MutexLock lock(&mu_);
  auto it = start_of_.find(id);
  if (it == start_of_.end()) return;
  Region& region = it->second->second;
  for (const auto& [peer_id, store] : region.peers) {
    if (store == leader_store && (leader_peer_id == 0 || peer_id == leader_peer_id)) {
      region.leader_store = store;
      region.leader_peer_id = peer_id;
      return;
    }
  }
  LOG_INFO("region cache: new leader of region {} is not a known peer; reloading", id.value());
  Erase(id);
}

void RegionCache::Invalidate(RegionId id) {
  MutexLock lock(&mu_);
  Erase(id);
}

void RegionCache::OnSendFail(RegionId id, bool reload) {
  if (reload) Invalidate(id);
}

Result<std::string> RegionCache::StoreAddress(StoreId id) {
  {
    MutexLock lock(&mu_);
    if (auto it = store_address_.find(id); it != store_address_.end()) return it->second;
  }
  ASSIGN_OR_RETURN(Store store, pd_->GetStore(id));
  if (store.tombstone) return NotFound("pd: store " + std::to_string(id.value()) + " is tombstone");
  if (store.address.empty()) {
    return Unavailable("pd: store " + std::to_string(id.value()) + " has no address");
  }
  MutexLock lock(&mu_);
  store_address_[id] = store.address;
  return store.address;
}

void RegionCache::InvalidateStore(StoreId id) {
  MutexLock lock(&mu_);
  store_address_.erase(id);
}

size_t RegionCache::size() const {
  MutexLock lock(&mu_);
  return by_start_.size();
}

}  // namespace sluice::pd
