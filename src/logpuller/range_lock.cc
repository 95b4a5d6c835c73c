#include "logpuller/range_lock.h"

#include <algorithm>
#include <cassert>
#include <iterator>
#include <limits>

namespace sluice::logpuller {
namespace {

// Whether [start, end) overlaps `range` (ends may be empty: +inf).
bool Overlaps(const std::string& start, const std::string& end, const Span& range) {
  bool starts_before_range_end = range.end.empty() || start < range.end;
  bool ends_after_range_start = end.empty() || range.start < end;
  return starts_before_range_end && ends_after_range_start;
}

}  // namespace

RangeLock::RangeLock(Span comparable_span, Ts start_ts)
    : span_(std::move(comparable_span)), start_ts_(start_ts) {
  MutexLock lock(&mu_);
  if (!span_.IsEmpty()) PutUnlocked(span_.start, span_.end, start_ts_);
}

LockResult RangeLock::TryLock(const Span& range, RegionId region, uint64_t version) {
  MutexLock lock(&mu_);
  if (stopped_) return LockResult{LockOutcome::kCancelled, Ts(), {}};
  Span clipped = Intersect(range, span_);
  if (clipped.IsEmpty()) return LockResult{LockOutcome::kStale, Ts(), {}};

  std::vector<LockedMap::iterator> overlapping = Overlapping(clipped, region);
  if (overlapping.empty()) {
    Ts ts = TakeUnlocked(clipped);
    auto [it, inserted] = locked_.emplace(std::move(clipped.start),
                                          Locked{std::move(clipped.end), region, version, ts});
    assert(inserted);
    by_region_[region] = it;
    HeapPush(it);
    return LockResult{LockOutcome::kSuccess, ts, {}};
  }
  for (LockedMap::iterator it : overlapping) {
    if (it->second.version >= version) return StaleResult(clipped, version, overlapping);
  }
  return LockResult{LockOutcome::kWait, Ts(), {}};
}

bool RangeLock::UpdateResolvedTs(RegionId region, Ts ts) {
  MutexLock lock(&mu_);
  auto found = by_region_.find(region);
  if (found == by_region_.end()) return false;
  Locked& entry = found->second->second;
  if (ts > entry.resolved_ts) {
    entry.resolved_ts = ts;
    HeapSiftDown(entry.heap_index);
  }
  return true;
}

void RangeLock::MarkInitialized(RegionId region) {
  MutexLock lock(&mu_);
  auto found = by_region_.find(region);
  if (found == by_region_.end()) return;
  Locked& entry = found->second->second;
  if (!entry.initialized) {
    entry.initialized = true;
    ++num_initialized_;
  }
}

bool RangeLock::Unlock(RegionId region, Ts resolved_ts, std::optional<Span>* released) {
  MutexLock lock(&mu_);
  if (released != nullptr) released->reset();
  auto found = by_region_.find(region);
  if (found == by_region_.end()) return false;
  LockedMap::iterator it = found->second;
  by_region_.erase(found);
  HeapRemove(it->second.heap_index);
  if (it->second.initialized) --num_initialized_;
  Ts ts = std::max(resolved_ts, it->second.resolved_ts);
  LockedMap::node_type node = locked_.extract(it);
  if (released != nullptr) *released = Span{node.key(), node.mapped().end};
  PutUnlocked(std::move(node.key()), std::move(node.mapped().end), ts);
  return stopped_ && locked_.empty();
}

Ts RangeLock::ResolvedTs() const {
  MutexLock lock(&mu_);
  if (heap_.empty()) return unlocked_min_count_ > 0 ? unlocked_min_ : start_ts_;
  Ts locked_min = heap_.front()->second.resolved_ts;
  return unlocked_min_count_ > 0 ? std::min(locked_min, unlocked_min_) : locked_min;
}

bool RangeLock::AllInitialized() const {
  MutexLock lock(&mu_);
  return unlocked_.empty() && num_initialized_ == locked_.size();
}

void RangeLock::Stop() {
  MutexLock lock(&mu_);
  stopped_ = true;
}

bool RangeLock::Drained() const {
  MutexLock lock(&mu_);
  return stopped_ && locked_.empty();
}

size_t RangeLock::NumLocked() const {
  MutexLock lock(&mu_);
  return locked_.size();
}

std::vector<RangeLock::LockedRegion> RangeLock::LockedRegions() const {
  MutexLock lock(&mu_);
  std::vector<LockedRegion> out;
  out.reserve(locked_.size());
  for (const auto& [start, entry] : locked_) {
    out.push_back({entry.region, start, entry.resolved_ts, entry.initialized});
  }
  return out;
}

std::vector<RangeLock::LockedMap::iterator> RangeLock::Overlapping(const Span& range,
                                                                   RegionId region) {
  std::vector<LockedMap::iterator> out;
  auto it = locked_.upper_bound(range.start);
  if (it != locked_.begin()) {
    auto prev = std::prev(it);
    if (Overlaps(prev->first, prev->second.end, range)) out.push_back(prev);
  }
  for (; it != locked_.end() && (range.end.empty() || it->first < range.end); ++it) {
    out.push_back(it);
  }
  // A region holds one lock: its lock elsewhere (before a split or merge) is
  // in the way too.
  auto own = by_region_.find(region);
  if (own != by_region_.end() && std::find(out.begin(), out.end(), own->second) == out.end()) {
    out.push_back(own->second);
  }
  return out;
}

LockResult RangeLock::StaleResult(const Span& range, uint64_t version,
                                  const std::vector<LockedMap::iterator>& overlapping) {
  LockResult result{LockOutcome::kStale, Ts(), {}};
  // `overlapping` is in key order, except a trailing lock of the requesting
  // region outside `range`, which the overlap check skips.
  std::string cursor = range.start;
  for (LockedMap::iterator it : overlapping) {
    const Locked& entry = it->second;
    if (entry.version < version || !Overlaps(it->first, entry.end, range)) continue;
    if (cursor < it->first) result.retry_ranges.push_back(Span{cursor, it->first});
    if (entry.end.empty()) return result;  // Covered up to +inf.
    cursor = std::max(cursor, entry.end);
  }
  if (CompareEndKeys(cursor, range.end) < 0) {
    result.retry_ranges.push_back(Span{std::move(cursor), range.end});
  }
  return result;
}

Ts RangeLock::TakeUnlocked(const Span& range) {
  SplitUnlockedAt(range.start);
  if (!range.end.empty()) SplitUnlockedAt(range.end);
  auto it = unlocked_.find(range.start);
  assert(it != unlocked_.end() && "locking a range that is not unlocked");
  Ts min_ts(std::numeric_limits<uint64_t>::max());
  while (it != unlocked_.end() && (range.end.empty() || it->first < range.end)) {
    Ts ts = it->second.ts;
    min_ts = std::min(min_ts, ts);
    it = unlocked_.erase(it);
    RemoveUnlockedTs(ts);
  }
  return min_ts;
}

void RangeLock::PutUnlocked(std::string start, std::string end, Ts ts) {
  auto [it, inserted] = unlocked_.emplace(std::move(start), Unlocked{std::move(end), ts});
  assert(inserted);
  AddUnlockedTs(ts);
  // Merge with the next range if it continues this one at the same ts.
  if (!it->second.end.empty()) {
    auto next = std::next(it);
    if (next != unlocked_.end() && next->first == it->second.end && next->second.ts == ts) {
      it->second.end = std::move(next->second.end);
      unlocked_.erase(next);
      RemoveUnlockedTs(ts);
    }
  }
  // And with the previous one.
  if (it != unlocked_.begin()) {
    auto prev = std::prev(it);
    if (prev->second.end == it->first && prev->second.ts == ts) {
      prev->second.end = std::move(it->second.end);
      unlocked_.erase(it);
      RemoveUnlockedTs(ts);
    }
  }
}

void RangeLock::SplitUnlockedAt(const std::string& key) {
  auto it = unlocked_.upper_bound(key);
  if (it == unlocked_.begin()) return;
  --it;
  if (it->first == key) return;
  if (!it->second.end.empty() && it->second.end <= key) return;
  Ts ts = it->second.ts;
  unlocked_.emplace_hint(std::next(it), key, Unlocked{std::move(it->second.end), ts});
  it->second.end = key;
  AddUnlockedTs(ts);
}

void RangeLock::AddUnlockedTs(Ts ts) {
  if (unlocked_min_count_ == 0 || ts < unlocked_min_) {
    unlocked_min_ = ts;
    unlocked_min_count_ = 1;
  } else if (ts == unlocked_min_) {
    ++unlocked_min_count_;
  }
}

void RangeLock::RemoveUnlockedTs(Ts ts) {
  if (ts != unlocked_min_ || --unlocked_min_count_ > 0) return;
  // The last range at the minimum is gone: recompute from what the map holds.
  for (const auto& [start, entry] : unlocked_) AddUnlockedTs(entry.ts);
}

void RangeLock::HeapPush(LockedMap::iterator it) {
  it->second.heap_index = static_cast<uint32_t>(heap_.size());
  heap_.push_back(it);
  HeapSiftUp(it->second.heap_index);
}

void RangeLock::HeapRemove(uint32_t index) {
  uint32_t last = static_cast<uint32_t>(heap_.size() - 1);
  if (index != last) HeapSwap(index, last);
  heap_.pop_back();
  if (index < heap_.size()) {
    HeapSiftUp(index);
    HeapSiftDown(index);
  }
}

void RangeLock::HeapSiftUp(uint32_t index) {
  while (index > 0) {
    uint32_t parent = (index - 1) / 2;
    if (heap_[parent]->second.resolved_ts <= heap_[index]->second.resolved_ts) return;
    HeapSwap(parent, index);
    index = parent;
  }
}

void RangeLock::HeapSiftDown(uint32_t index) {
  const size_t size = heap_.size();
  while (true) {
    size_t smallest = index;
    size_t left = 2 * size_t{index} + 1;
    size_t right = left + 1;
    if (left < size && heap_[left]->second.resolved_ts < heap_[smallest]->second.resolved_ts) {
      smallest = left;
    }
    if (right < size && heap_[right]->second.resolved_ts < heap_[smallest]->second.resolved_ts) {
      smallest = right;
    }
    if (smallest == index) return;
    HeapSwap(index, static_cast<uint32_t>(smallest));
    index = static_cast<uint32_t>(smallest);
  }
}

void RangeLock::HeapSwap(uint32_t a, uint32_t b) {
  std::swap(heap_[a], heap_[b]);
  heap_[a]->second.heap_index = a;
  heap_[b]->second.heap_index = b;
}

}  // namespace sluice::logpuller
