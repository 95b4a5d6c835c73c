// CdcHub: live event fan-out, scan stitching and resolved ts.
#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "common/logging.h"
#include "common/memcomparable.h"
#include "simkv/cdc_errors.h"
#include "simkv/cdc_hub.h"

namespace sluice::simkv {

CdcHub::Delegate* CdcHub::DelegateForKey(std::string_view raw_key) {
  if (by_start_.empty()) return nullptr;
  // Delegates never overlap (Register stops stale ones first), so the last
  // delegate that contained a key is the answer whenever it contains this one.
  if (last_delegate_.has_value()) {
    auto cached = delegates_.find(*last_delegate_);
    if (cached != delegates_.end() && cached->second.raw.Contains(raw_key)) return &cached->second;
  }
  std::string encoded = memcomparable::EncodeBytes(raw_key);
  auto it = by_start_.upper_bound(encoded);
  if (it == by_start_.begin()) return nullptr;
  auto delegate = delegates_.find(std::prev(it)->second);
  if (delegate == delegates_.end() || !delegate->second.raw.Contains(raw_key)) return nullptr;
  last_delegate_ = delegate->first;
  return &delegate->second;
}

// Hands a live row to one subscription: buffered during its scan, staged for
// its stream (until OnApplied) afterwards. False if it did not fit (the
// caller congests it).
bool CdcHub::Deliver(Subscriber& sub, uint64_t index, const RowView& row) {
  if (!sub.initialized) {
    sub.pending_bytes += RowBytes(row);
    sub.pending.push_back(PendingRow{index, ToRow(row)});
    return sub.pending_bytes <= options_.max_pending_bytes;
  }
  for (size_t i = 0; i < staged_used_; ++i) {
    StagedRows& staged = staged_[i];
    if (staged.spec->id == sub.spec->id && staged.index == index) {
      staged.rows.push_back(row);
      return true;
    }
  }
  if (staged_used_ == staged_.size()) staged_.emplace_back();
  StagedRows& staged = staged_[staged_used_++];
  staged.spec = sub.spec;
  staged.index = index;
  staged.rows.clear();
  staged.rows.push_back(row);
  return true;
}

void CdcHub::Congest(RegionId region_id, const std::vector<uint64_t>& sub_ids) {
  LOG_WARN("cdc: store {} region {}: {} subscription(s) congested", options_.store_id.value(),
           region_id.value(), sub_ids.size());
  StopSubscribers(
      region_id,
      [&](const Subscriber& sub) {
        return std::find(sub_ids.begin(), sub_ids.end(), sub.spec->id) != sub_ids.end();
      },
      CongestedError(region_id.value()));
}

template <typename MakeRow>
void CdcHub::Fanout(std::string_view key, uint64_t index, MakeRow make_row) {
  MutexLock lock(&mu_);
  Delegate* delegate = DelegateForKey(key);
  if (delegate == nullptr) return;
  std::vector<uint64_t> congested;
  for (Subscriber& sub : delegate->subs) {
    if (!sub.range.Contains(key)) continue;
    std::optional<RowView> row = make_row(sub.spec->old_value);
    if (!row) return;  // A change that produces no row for anyone.
    if (!Deliver(sub, index, *row)) congested.push_back(sub.spec->id);
  }
  if (!congested.empty()) Congest(delegate->region.id, congested);
}

void CdcHub::OnApplied(uint64_t apply_index) {
  MutexLock lock(&mu_);
  if (staged_used_ == 0) return;
  std::map<RegionId, std::vector<uint64_t>> congested;
  for (size_t i = 0; i < staged_used_; ++i) {
    StagedRows& staged = staged_[i];
    const DownstreamSpec& spec = *staged.spec;
    // A subscription that ended since its rows were staged gets nothing more.
    if (Find(spec) != nullptr) {
      StreamSink::PushResult result = spec.sink->PushRows(
          spec.region_id.value(), spec.request_id, staged.index, staged.rows, /*force=*/false);
      if (result == StreamSink::PushResult::kFull) congested[spec.region_id].push_back(spec.id);
    }
    staged.spec.reset();
    staged.rows.clear();
  }
  staged_used_ = 0;
  for (const auto& [region_id, sub_ids] : congested) Congest(region_id, sub_ids);
}

void CdcHub::OnPrewrite(const PrewriteEvent& event) {
  Fanout(event.key, event.apply_index,
         [&](bool old_value) { return ViewOfPrewrite(event, old_value); });
}

void CdcHub::OnCommit(const CommitEvent& event) {
  Fanout(event.key, event.apply_index,
         [&](bool old_value) { return ViewOfCommit(event, old_value); });
}

void CdcHub::OnRollback(const RollbackEvent& event) {
  Fanout(event.key, event.apply_index,
         [&](bool) { return std::optional<RowView>(ViewOfRollback(event)); });
}

bool CdcHub::SendScanRows(const DownstreamSpec& spec, RowBatch batch) {
  MutexLock lock(&mu_);
  if (Find(spec) == nullptr) return false;
  return spec.sink->PushScanRows(std::move(batch)) == StreamSink::PushResult::kOk;
}

void CdcHub::FinishScan(const DownstreamSpec& spec, uint64_t applied_index) {
  MutexLock lock(&mu_);
  Subscriber* sub = Find(spec);
  if (sub == nullptr) return;
  cdcpb::Event initialized;
  initialized.set_region_id(spec.region_id.value());
  initialized.set_request_id(spec.request_id);
  *initialized.mutable_entries()->add_entries() = InitializedRow();
  spec.sink->PushScanEvent(std::move(initialized));
  for (PendingRow& pending : sub->pending) {
    if (pending.index <= applied_index) continue;  // Already in the snapshot.
    spec.sink->PushRow(spec.region_id.value(), spec.request_id, pending.index, pending.row,
                       /*force=*/true);
  }
  sub->pending.clear();
  sub->pending_bytes = 0;
  sub->initialized = true;
  LOG_INFO("cdc: store {} region {} request {} initialized at apply index {}",
           options_.store_id.value(), spec.region_id.value(), spec.request_id, applied_index);
}

std::vector<CdcHub::ResolvedProbe> CdcHub::ResolvedProbes() {
  MutexLock lock(&mu_);
  std::vector<ResolvedProbe> probes;
  for (const auto& [region_id, delegate] : delegates_) {
    for (const Subscriber& sub : delegate.subs) {
      if (sub.initialized) probes.push_back(ResolvedProbe{region_id, sub.spec->id, sub.range, {}});
    }
  }
  return probes;
}

void CdcHub::AdvanceResolvedTs() {
  // The TSO is taken before the locks are read: a transaction that locks a
  // key after the read commits above `now`, so `now` stays a valid bound.
  // Taken under the store's lock list, so a one-phase commit (which lists no
  // lock) has either a larger commit ts or reached the hub already.
  Result<Ts> now = store_->ReadResolvedBound([this] { return tso_->Allocate(1); });
  if (!now.ok()) return;
  std::vector<ResolvedProbe> probes = ResolvedProbes();
  for (ResolvedProbe& probe : probes) {
    probe.min_lock = store_->MinLockStartTs(probe.range.start, probe.range.end);
  }
  SendResolved(probes, *now);
}

void CdcHub::SendResolved(const std::vector<ResolvedProbe>& probes, Ts now) {
  // (stream sink, request id, ts) -> regions.
  using BatchKey = std::tuple<StreamSink*, uint64_t, uint64_t>;
  std::map<BatchKey, std::vector<uint64_t>> batches;
  MutexLock lock(&mu_);
  for (const ResolvedProbe& probe : probes) {
    auto delegate = delegates_.find(probe.region_id);
    if (delegate == delegates_.end()) continue;
    for (Subscriber& sub : delegate->second.subs) {
      if (sub.spec->id != probe.sub_id || !sub.initialized) continue;
      Ts ts = probe.min_lock ? std::min(*probe.min_lock, now) : now;
      sub.advanced_to = std::max(sub.advanced_to, ts);
      uint64_t request_id = sub.spec->multiplexing ? sub.spec->request_id : 0;
      batches[{sub.spec->sink.get(), request_id, sub.advanced_to.value()}].push_back(
          probe.region_id.value());
    }
  }
  // The sinks stay alive: their subscriptions hold them and mu_ is held.
  for (auto& [key, regions] : batches) {
    cdcpb::ResolvedTs resolved;
    resolved.set_ts(std::get<2>(key));
    resolved.set_request_id(std::get<1>(key));
    for (uint64_t region : regions) resolved.add_regions(region);
    std::get<0>(key)->PushResolvedTs(std::move(resolved));
  }
}

}  // namespace sluice::simkv
