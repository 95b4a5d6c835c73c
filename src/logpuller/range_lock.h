// RangeLock: one subscription's map of which region holds which part of the
// subscribed span, and the span resolved ts (TiCDC's regionlock.RangeLock with
// its rangeTsMap).
//
// Promises:
//  - Locked ranges never overlap, and a region holds at most one lock. Every
//    key of the span is either locked or unlocked; an unlocked range keeps the
//    last resolved ts known for it.
//  - ResolvedTs() (the minimum over locked and unlocked ranges) never goes
//    back: a new lock starts at the minimum of the unlocked ranges it takes,
//    a lock's ts only grows, and an unlocked range gets at least the ts its
//    lock had.
//  - Nothing here blocks: TryLock() answers kWait instead of waiting, and the
//    caller retries after an unlock.
//
// Keys are comparable (memcomparable) keys, as PD region boundaries are.
// Ownership: the lock owns copies of the keys; callers keep their spans.
// Threads: thread-safe; region workers, the failure handler and the resolved
// ts ticker call it concurrently. All state is behind one Mutex, which is
// never held while calling out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "common/span.h"
#include "common/strong_id.h"
#include "common/thread_annotations.h"

namespace sluice::logpuller {

enum class LockOutcome { kSuccess, kWait, kStale, kCancelled };

struct LockResult {
  LockOutcome outcome = LockOutcome::kCancelled;
  // kSuccess: the initial resolved ts of the range, the minimum over the
  // unlocked sub-ranges it covers.
  Ts resolved_ts;
  // kStale: the sub-ranges of the request (in key order) that no lock with a
  // version >= the request's covers; the caller re-divides them into regions.
  std::vector<Span> retry_ranges;
};

class RangeLock {
 public:
  // The whole `comparable_span` starts unlocked at `start_ts`.
  RangeLock(Span comparable_span, Ts start_ts);

  RangeLock(const RangeLock&) = delete;
  RangeLock& operator=(const RangeLock&) = delete;

  // Tries to lock `range` (clipped to the span) for `region` at region epoch
  // `version`. Non-blocking. Outcomes:
  //  - kSuccess: nothing overlapped; the region now holds the range.
  //  - kWait: it overlaps only locks with an OLDER version (or `region`
  //    already holds an older lock elsewhere); retry after they unlock.
  //  - kStale: an overlapping lock (or `region`'s own lock) has a version >=
  //    `version`; see LockResult::retry_ranges.
  //  - kCancelled: Stop() was called.
  // A range that is empty after clipping is kStale with no retry range.
  LockResult TryLock(const Span& range, RegionId region, uint64_t version) EXCLUDES(mu_);

  // Raises the resolved ts of `region`'s lock to `ts`; an older ts is
  // ignored. Returns false if `region` holds no lock.
  bool UpdateResolvedTs(RegionId region, Ts ts) EXCLUDES(mu_);

  // Records that `region` finished its initial scan. No-op without a lock.
  void MarkInitialized(RegionId region) EXCLUDES(mu_);

  // Releases `region`'s lock. Its range becomes unlocked at
  // max(resolved_ts, the lock's resolved ts), so the span ts cannot go back.
  // Returns true if the lock is stopped and this unlock left it empty
  // (drained). Returns false if `region` holds no lock. If `released` is
  // given, it receives the range the lock held, or nullopt without a lock.
  bool Unlock(RegionId region, Ts resolved_ts, std::optional<Span>* released = nullptr)
      EXCLUDES(mu_);

  // The span resolved ts: min over locked ranges' resolved ts and unlocked
  // ranges' ts. O(1). An empty span answers the start ts.
  Ts ResolvedTs() const EXCLUDES(mu_);

  // Whether every part of the span is locked by an initialized region.
  bool AllInitialized() const EXCLUDES(mu_);

  // Makes every later TryLock() answer kCancelled. Existing locks stay until
  // unlocked.
  void Stop() EXCLUDES(mu_);
  // Stopped and no lock is held.
  bool Drained() const EXCLUDES(mu_);

  size_t NumLocked() const EXCLUDES(mu_);
  // Every lock in key order (for slow-region reports and lock resolution).
  struct LockedRegion {
    RegionId region;
    std::string start;  // The start of the range it holds.
    Ts resolved_ts;
    bool initialized = false;
    bool operator==(const LockedRegion&) const = default;
  };
  std::vector<LockedRegion> LockedRegions() const EXCLUDES(mu_);

 private:
  struct Locked {
    std::string end;
    RegionId region;
    uint64_t version = 0;
    Ts resolved_ts;
    uint32_t heap_index = 0;
    bool initialized = false;
  };
  struct Unlocked {
    std::string end;
    Ts ts;
  };
  // Both maps are keyed by range start; together they partition the span.
  using LockedMap = std::map<std::string, Locked, std::less<>>;
  using UnlockedMap = std::map<std::string, Unlocked, std::less<>>;

  // Collects the locks that overlap `range` (in key order), plus `region`'s
  // own lock if it lies elsewhere.
  std::vector<LockedMap::iterator> Overlapping(const Span& range, RegionId region) REQUIRES(mu_);
  LockResult StaleResult(const Span& range, uint64_t version,
                         const std::vector<LockedMap::iterator>& overlapping) REQUIRES(mu_);

  // Removes `range` from the unlocked map (it must be fully unlocked) and
  // returns the minimum ts of what it removed.
  Ts TakeUnlocked(const Span& range) REQUIRES(mu_);
  // Adds [start, end) to the unlocked map at `ts`, merging neighbours with
  // the same ts.
  void PutUnlocked(std::string start, std::string end, Ts ts) REQUIRES(mu_);
  // Cuts the unlocked range containing `key` (if any) so that one starts at
  // `key`.
  void SplitUnlockedAt(const std::string& key) REQUIRES(mu_);
  // Keep unlocked_min_ / unlocked_min_count_ in step with unlocked_: call
  // after inserting / erasing an unlocked range with this ts.
  void AddUnlockedTs(Ts ts) REQUIRES(mu_);
  void RemoveUnlockedTs(Ts ts) REQUIRES(mu_);

  // A binary min-heap of locks by resolved ts; each lock knows its index.
  void HeapPush(LockedMap::iterator it) REQUIRES(mu_);
  void HeapRemove(uint32_t index) REQUIRES(mu_);
  void HeapSiftUp(uint32_t index) REQUIRES(mu_);
  void HeapSiftDown(uint32_t index) REQUIRES(mu_);
  void HeapSwap(uint32_t a, uint32_t b) REQUIRES(mu_);

  const Span span_;
  const Ts start_ts_;

  mutable Mutex mu_;
  bool stopped_ GUARDED_BY(mu_) = false;
  LockedMap locked_ GUARDED_BY(mu_);
  UnlockedMap unlocked_ GUARDED_BY(mu_);
  // Open addressing: a one-region span costs one small allocation here.
  absl::flat_hash_map<RegionId, LockedMap::iterator, std::hash<RegionId>> by_region_
      GUARDED_BY(mu_);
  std::vector<LockedMap::iterator> heap_ GUARDED_BY(mu_);
  // Minimum ts over unlocked_ and how many unlocked ranges have it; the map
  // is rescanned only when that count drops to zero.
  Ts unlocked_min_ GUARDED_BY(mu_);
  size_t unlocked_min_count_ GUARDED_BY(mu_) = 0;
  size_t num_initialized_ GUARDED_BY(mu_) = 0;
};

}  // namespace sluice::logpuller
