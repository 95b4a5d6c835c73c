// CdcHub: registration, deregistration and region re-checks. Event fan-out,
// scan stitching and resolved ts are in cdc_hub_events.cc.
#include "simkv/cdc_hub.h"

#include <algorithm>
#include <utility>

#include "common/logging.h"
#include "simkv/cdc_errors.h"

namespace sluice::simkv {

namespace {

bool HasPeerOn(const RegionInfo& region, StoreId store) {
  return std::any_of(region.peers.begin(), region.peers.end(),
                     [&](const Peer& peer) { return peer.store_id == store; });
}

}  // namespace

CdcHub::CdcHub(CdcHubOptions options, MvccStore* store, RegionMap* regions, TsoAllocator* tso)
    : options_(options), store_(store), regions_(regions), tso_(tso) {}

std::vector<RegionInfo> CdcHub::CurrentRegions(std::string_view start, std::string_view end) const {
  return regions_->Scan(start, end, options_.max_current_regions);
}

std::optional<cdcpb::Error> CdcHub::CheckRegion(const DownstreamSpec& spec,
                                                const RegionInfo& region) const {
  if (region.leader != options_.store_id) {
    return NotLeaderError(spec.region_id.value(), region.LeaderPeer());
  }
  bool stale = spec.epoch.version != region.epoch.version ||
               (options_.check_conf_ver && spec.epoch.conf_ver != region.epoch.conf_ver);
  if (!stale) return std::nullopt;
  std::vector<RegionInfo> current = CurrentRegions(spec.start_key, spec.end_key);
  if (std::none_of(current.begin(), current.end(),
                   [&](const RegionInfo& r) { return r.id == region.id; })) {
    current.insert(current.begin(), region);
  }
  return EpochNotMatchError(current);
}

std::variant<ScanTask, cdcpb::Error> CdcHub::Register(std::shared_ptr<const DownstreamSpec> spec) {
  const uint64_t region_id = spec->region_id.value();
  MutexLock lock(&mu_);
  Result<RegionInfo> region = regions_->RegionById(spec->region_id);
  if (!region.ok() || !HasPeerOn(*region, options_.store_id)) {
    return RegionNotFoundError(region_id);
  }
  // A region operation that Reconcile() has not seen yet: end the old
  // subscriptions over this range first, exactly as Reconcile() would, so
  // that no stale delegate overlaps the region and takes its events.
  StopStaleOverlapping(*region);
  std::map<ConnKey, uint64_t>& conn = conns_[spec->conn_id];
  if (conn.contains({spec->request_id, region_id})) return DuplicateRequestError(region_id);
  if (std::optional<cdcpb::Error> error = CheckRegion(*spec, *region)) return *std::move(error);

  Delegate& delegate = DelegateFor(*region);
  Subscriber sub;
  sub.spec = spec;
  sub.range = ObservedRange(*spec, *region);
  ScanTask task{spec, sub.range};
  conn.emplace(ConnKey{spec->request_id, region_id}, spec->id);
  delegate.subs.push_back(std::move(sub));
  LOG_INFO("cdc: store {} registered region {} request {} on stream {} from ts {}",
           options_.store_id.value(), region_id, spec->request_id, spec->conn_id,
           spec->checkpoint_ts.value());
  return task;
}

void CdcHub::StopStaleOverlapping(const RegionInfo& region) {
  std::vector<RegionId> candidates{region.id};
  auto it = by_start_.upper_bound(region.start_key);
  if (it != by_start_.begin()) --it;
  for (; it != by_start_.end(); ++it) {
    if (!region.end_key.empty() && it->first >= region.end_key) break;
    candidates.push_back(it->second);
  }
  for (RegionId id : candidates) {
    auto delegate = delegates_.find(id);
    if (delegate == delegates_.end()) continue;
    if (std::optional<cdcpb::Error> error = StaleError(delegate->second)) StopDelegate(id, *error);
  }
}

CdcHub::Delegate& CdcHub::DelegateFor(const RegionInfo& region) {
  auto it = delegates_.find(region.id);
  if (it == delegates_.end()) {
    Delegate delegate;
    delegate.region = region;
    delegate.raw = RegionRawRange(region);
    by_start_[region.start_key] = region.id;
    it = delegates_.emplace(region.id, std::move(delegate)).first;
  }
  return it->second;
}

std::optional<cdcpb::Error> CdcHub::StaleError(const Delegate& delegate) const {
  const RegionInfo& old = delegate.region;
  Result<RegionInfo> now = regions_->RegionById(old.id);
  if (!now.ok() || now->epoch.version != old.epoch.version) {
    return EpochNotMatchError(CurrentRegions(old.start_key, old.end_key));
  }
  if (now->leader != options_.store_id) return NotLeaderError(old.id.value(), now->LeaderPeer());
  return std::nullopt;
}

CdcHub::Subscriber* CdcHub::Find(const DownstreamSpec& spec) {
  auto it = delegates_.find(spec.region_id);
  if (it == delegates_.end()) return nullptr;
  for (Subscriber& sub : it->second.subs) {
    if (sub.spec->id == spec.id) return &sub;
  }
  return nullptr;
}

void CdcHub::Unindex(const Subscriber& sub) {
  auto conn = conns_.find(sub.spec->conn_id);
  if (conn == conns_.end()) return;
  auto key = conn->second.find({sub.spec->request_id, sub.spec->region_id.value()});
  if (key != conn->second.end() && key->second == sub.spec->id) conn->second.erase(key);
}

void CdcHub::EraseDelegateIfEmpty(RegionId region_id) {
  auto it = delegates_.find(region_id);
  if (it == delegates_.end() || !it->second.subs.empty()) return;
  auto start = by_start_.find(it->second.region.start_key);
  if (start != by_start_.end() && start->second == region_id) by_start_.erase(start);
  delegates_.erase(it);
}

void CdcHub::StopSubscribers(RegionId region_id, const std::function<bool(const Subscriber&)>& pred,
                             const std::optional<cdcpb::Error>& error) {
  auto it = delegates_.find(region_id);
  if (it == delegates_.end()) return;
  std::vector<Subscriber>& subs = it->second.subs;
  for (auto sub = subs.begin(); sub != subs.end();) {
    if (!pred(*sub)) {
      ++sub;
      continue;
    }
    Unindex(*sub);
    if (error) {
      sub->spec->sink->PushEvent(ErrorEvent(region_id.value(), sub->spec->request_id, *error),
                                 /*force=*/true);
    }
    sub = subs.erase(sub);
  }
  EraseDelegateIfEmpty(region_id);
}

void CdcHub::StopDelegate(RegionId region_id, const cdcpb::Error& error) {
  LOG_INFO("cdc: store {} ends region {}: {}", options_.store_id.value(), region_id.value(),
           error.ShortDebugString());
  StopSubscribers(
      region_id, [](const Subscriber&) { return true; }, error);
}

void CdcHub::Fail(const DownstreamSpec& spec, cdcpb::Error error) {
  MutexLock lock(&mu_);
  StopSubscribers(
      spec.region_id, [&](const Subscriber& sub) { return sub.spec->id == spec.id; }, error);
}

void CdcHub::Deregister(uint64_t conn_id, uint64_t request_id, uint64_t region_id) {
  MutexLock lock(&mu_);
  auto conn = conns_.find(conn_id);
  if (conn == conns_.end()) return;
  std::vector<std::pair<RegionId, uint64_t>> ended;  // (region, subscription id)
  for (const auto& [key, sub_id] : conn->second) {
    if (key.first == request_id && (region_id == 0 || key.second == region_id)) {
      ended.emplace_back(RegionId(key.second), sub_id);
    }
  }
  for (const auto& [region, sub_id] : ended) {
    StopSubscribers(
        region, [id = sub_id](const Subscriber& sub) { return sub.spec->id == id; },
        RegionNotFoundError(region.value()));
  }
}

void CdcHub::DeregisterConn(uint64_t conn_id) {
  MutexLock lock(&mu_);
  auto conn = conns_.find(conn_id);
  if (conn == conns_.end()) return;
  std::vector<RegionId> regions;
  for (const auto& [key, sub_id] : conn->second) regions.emplace_back(key.second);
  for (RegionId region : regions) {
    StopSubscribers(
        region, [&](const Subscriber& sub) { return sub.spec->conn_id == conn_id; }, std::nullopt);
  }
  conns_.erase(conn_id);
}

void CdcHub::Reconcile() {
  MutexLock lock(&mu_);
  std::vector<std::pair<RegionId, cdcpb::Error>> stale;
  for (const auto& [region_id, delegate] : delegates_) {
    if (std::optional<cdcpb::Error> error = StaleError(delegate)) {
      stale.emplace_back(region_id, *std::move(error));
    }
  }
  for (const auto& [region_id, error] : stale) StopDelegate(region_id, error);
}

void CdcHub::CongestAll() {
  MutexLock lock(&mu_);
  std::vector<RegionId> regions;
  for (const auto& [region_id, delegate] : delegates_) regions.push_back(region_id);
  for (RegionId region_id : regions) StopDelegate(region_id, CongestedError(region_id.value()));
}

void CdcHub::Clear() {
  MutexLock lock(&mu_);
  delegates_.clear();
  by_start_.clear();
  conns_.clear();
  last_delegate_.reset();
  staged_.clear();
  staged_used_ = 0;
}

size_t CdcHub::NumSubscriptions() const {
  MutexLock lock(&mu_);
  size_t n = 0;
  for (const auto& [region_id, delegate] : delegates_) n += delegate.subs.size();
  return n;
}

}  // namespace sluice::simkv
