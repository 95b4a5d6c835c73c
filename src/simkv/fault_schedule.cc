#include "simkv/fault_schedule.h"

#include <algorithm>
#include <sstream>
#include <utility>

#include "common/logging.h"
#include "common/memcomparable.h"

namespace sluice::simkv {
namespace {

constexpr size_t kMaxFaultsPerTick = 1000;

}  // namespace

std::string FaultRecord::ToString() const {
  std::ostringstream os;
  os << "#" << seq << " " << (restore ? "restore " : "") << FaultKindName(kind);
  if (region.value() != 0) os << " region=" << region;
  if (other.value() != 0) os << " other=" << other;
  if (store.value() != 0) os << " store=" << store;
  if (!key.empty()) os << " key=" << Redact(key);
  os << " -> " << status.ToString();
  return os.str();
}

FaultSchedule::FaultSchedule(SimCluster* cluster, FaultScheduleOptions options)
    : cluster_(cluster),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : Clock::Real()),
      rng_(options_.seed),
      picker_(options_.seed ^ 0x9e3779b97f4a7c15ULL) {
  MutexLock lock(&mu_);
  next_fault_at_ = clock_->Now() + DrawGap();
}

FaultSchedule::~FaultSchedule() { Stop(); }

Clock::Duration FaultSchedule::DrawGap() {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(options_.interval).count();
  if (ns <= 0) ns = 1;
  int64_t gap = ns / 2 + static_cast<int64_t>(rng_.Uniform(static_cast<uint64_t>(ns) + 1));
  return std::chrono::duration_cast<Clock::Duration>(std::chrono::nanoseconds(gap));
}

std::optional<FaultKind> FaultSchedule::DrawKind() {
  uint64_t total = 0;
  for (int w : options_.weights) total += static_cast<uint64_t>(w);
  if (total == 0) return std::nullopt;
  uint64_t r = rng_.Uniform(total);
  for (size_t i = 0; i < kNumFaultKinds; ++i) {
    uint64_t w = static_cast<uint64_t>(options_.weights[i]);
    if (r < w) return static_cast<FaultKind>(i);
    r -= w;
  }
  return std::nullopt;
}

size_t FaultSchedule::Tick() {
  MutexLock lock(&mu_);
  size_t before = records_.size();
  Clock::TimePoint now = clock_->Now();
  RunRestores(now, /*all=*/false);
  for (size_t n = 0; next_fault_at_ <= now && n < kMaxFaultsPerTick; ++n) {
    std::optional<FaultKind> kind = DrawKind();
    next_fault_at_ += DrawGap();
    if (!kind) continue;
    if (*kind == FaultKind::kSplit && cluster_->regions().size() >= options_.max_regions) {
      kind = FaultKind::kMerge;
    }
    FaultRequest request;
    request.kind = *kind;
    FaultRecord rec = Apply(request);
    LOG_INFO("fault schedule: {}", rec.ToString());
    RunRestores(now, /*all=*/false);
  }
  if (next_fault_at_ <= now) next_fault_at_ = now + DrawGap();
  return records_.size() - before;
}

FaultRecord FaultSchedule::Inject(const FaultRequest& request) {
  MutexLock lock(&mu_);
  return Apply(request);
}

FaultRecord FaultSchedule::Apply(const FaultRequest& request) {
  FaultRecord rec;
  rec.kind = request.kind;
  switch (request.kind) {
    case FaultKind::kSplit:
    case FaultKind::kMerge:
    case FaultKind::kTransferLeader:
    case FaultKind::kBumpEpoch:
      ApplyRegionFault(request, &rec);
      break;
    default:
      ApplyStoreFault(request, &rec);
      break;
  }
  Record(rec);
  return records_.back();
}

void FaultSchedule::ApplyRegionFault(const FaultRequest& request, FaultRecord* rec) {
  switch (request.kind) {
    case FaultKind::kSplit:
      ApplySplit(request, rec);
      return;
    case FaultKind::kMerge:
      ApplyMerge(request, rec);
      return;
    case FaultKind::kTransferLeader:
      ApplyTransfer(request, rec);
      return;
    default:
      break;
  }
  if (request.region) {
    rec->region = *request.region;
  } else {
    std::vector<RegionId> ids;
    cluster_->regions().ForEach([&ids](const RegionInfo& r) { ids.push_back(r.id); });
    std::sort(ids.begin(), ids.end());
    rec->region = ids[rng_.Uniform(ids.size())];
  }
  Result<RegionInfo> r = cluster_->BumpEpoch(rec->region);
  rec->status = r.status();
}

void FaultSchedule::ApplySplit(const FaultRequest& request, FaultRecord* rec) {
  std::optional<std::pair<RegionId, std::string>> pick;
  if (request.region || request.key) {
    Result<RegionInfo> region =
        request.region ? cluster_->regions().RegionById(*request.region)
                       : cluster_->regions().RegionForKey(memcomparable::EncodeBytes(*request.key));
    if (!region.ok()) {
      rec->status = region.status();
      return;
    }
    std::optional<std::string> key = request.key ? request.key : picker_.PickSplitKey(*region);
    if (key) pick.emplace(region->id, *key);
  } else {
    pick = picker_.PickSplit(cluster_->regions());
  }
  if (!pick) {
    rec->status = NotFound("no split key found");
    return;
  }
  rec->region = pick->first;
  rec->key = pick->second;
  auto halves = cluster_->Split(pick->first, pick->second);
  rec->status = halves.status();
  if (halves.ok()) rec->other = halves->second.id;
}

void FaultSchedule::ApplyMerge(const FaultRequest& request, FaultRecord* rec) {
  std::optional<std::pair<RegionId, RegionId>> pick;
  if (request.region) {
    Result<RegionInfo> region = cluster_->regions().RegionById(*request.region);
    if (!region.ok()) {
      rec->status = region.status();
      return;
    }
    std::vector<RegionInfo> next = cluster_->regions().Scan(region->end_key, "", 1);
    if (!region->end_key.empty() && !next.empty()) pick.emplace(region->id, next[0].id);
  } else {
    pick = picker_.PickMerge(cluster_->regions());
  }
  if (!pick) {
    rec->status = NotFound("no adjacent region to merge with");
    return;
  }
  rec->region = pick->first;
  rec->other = pick->second;
  rec->status = cluster_->Merge(pick->first, pick->second).status();
}

void FaultSchedule::ApplyTransfer(const FaultRequest& request, FaultRecord* rec) {
  std::optional<std::pair<RegionId, StoreId>> pick;
  if (request.region) {
    Result<RegionInfo> region = cluster_->regions().RegionById(*request.region);
    if (!region.ok()) {
      rec->status = region.status();
      return;
    }
    if (request.store) {
      pick.emplace(region->id, *request.store);
    } else {
      for (const Peer& p : region->peers) {
        if (p.store_id != region->leader) pick.emplace(region->id, p.store_id);
      }
    }
  } else {
    pick = picker_.PickLeaderTransfer(cluster_->regions());
  }
  if (!pick) {
    rec->status = NotFound("no follower to transfer the leader to");
    return;
  }
  rec->region = pick->first;
  rec->store = pick->second;
  rec->status = cluster_->TransferLeader(pick->first, pick->second).status();
}

std::optional<StoreId> FaultSchedule::PickStore(const std::optional<StoreId>& asked, bool need_up) {
  if (asked) return asked;
  std::vector<StoreId> candidates;
  for (StoreId id : cluster_->store_ids()) {
    if (!need_up || cluster_->StoreIsUp(id)) candidates.push_back(id);
  }
  if (candidates.empty()) return std::nullopt;
  return candidates[rng_.Uniform(candidates.size())];
}

void FaultSchedule::ApplyStoreFault(const FaultRequest& request, FaultRecord* rec) {
  bool need_up = request.kind != FaultKind::kStoreBusy;
  std::optional<StoreId> store = PickStore(request.store, need_up);
  if (!store) {
    rec->status = NotFound("no store is up");
    return;
  }
  rec->store = *store;
  Clock::TimePoint now = clock_->Now();
  switch (request.kind) {
    case FaultKind::kStoreRestart:
      rec->status = cluster_->StoreDown(*store);
      if (rec->status.ok())
        pending_.emplace(now + options_.down_for, Pending{request.kind, *store});
      break;
    case FaultKind::kStoreBusy:
      rec->status = cluster_->SetStoreBusy(*store, "simkv fault", options_.busy_backoff_ms);
      if (rec->status.ok())
        pending_.emplace(now + options_.busy_for, Pending{request.kind, *store});
      break;
    case FaultKind::kDropStreams:
      rec->status = cluster_->DropStreams(*store);
      break;
    default:
      rec->status = cluster_->Congest(*store);
      break;
  }
}

void FaultSchedule::RunRestores(Clock::TimePoint now, bool all) {
  while (!pending_.empty() && (all || pending_.begin()->first <= now)) {
    Pending p = pending_.begin()->second;
    pending_.erase(pending_.begin());
    FaultRecord rec;
    rec.kind = p.kind;
    rec.restore = true;
    rec.store = p.store;
    rec.status = p.kind == FaultKind::kStoreRestart ? cluster_->StoreRestart(p.store)
                                                    : cluster_->ClearStoreBusy(p.store);
    Record(std::move(rec));
    LOG_INFO("fault schedule: {}", records_.back().ToString());
  }
}

void FaultSchedule::Record(FaultRecord rec) {
  rec.seq = next_seq_++;
  records_.push_back(std::move(rec));
}

Clock::TimePoint FaultSchedule::NextWake() const {
  Clock::TimePoint wake = next_fault_at_;
  if (!pending_.empty() && pending_.begin()->first < wake) wake = pending_.begin()->first;
  return wake;
}

void FaultSchedule::Start() {
  thread_ = std::make_unique<OwnedThread>();
  thread_->Start("simkv-faults", [this](StopToken token) {
    while (!token.cancelled()) {
      Tick();
      Clock::TimePoint wake;
      {
        MutexLock lock(&mu_);
        wake = NextWake();
      }
      clock_->SleepUntil(wake, token);
    }
  });
}

void FaultSchedule::Stop() {
  if (thread_) thread_->Stop();
  thread_.reset();
  MutexLock lock(&mu_);
  RunRestores(clock_->Now(), /*all=*/true);
}

std::vector<FaultRecord> FaultSchedule::records() const {
  MutexLock lock(&mu_);
  return records_;
}

Clock::TimePoint FaultSchedule::next_fault_at() const {
  MutexLock lock(&mu_);
  return next_fault_at_;
}

}  // namespace sluice::simkv
