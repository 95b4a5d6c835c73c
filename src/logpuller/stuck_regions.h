// StuckRegions: decides which regions hold their span's resolved ts back
// long enough to resolve their locks, and which to reconnect, the way
// TiCDC's resolve-lock checker does. A span (subscription) is stuck when it
// is initialized, its resolved ts has not moved for `resolve_lock_after`
// and lags PD's clock (the physical part of a fresh TSO) by as much. Its
// regions behind target = min(current ts, resolved ts + resolve_lock_after)
// get a lock resolution with that target as max version, at most once per
// `resolve_lock_interval` per region. A region whose resolved ts has not
// moved for `reconnect_after` (zero: never) is reconnected, once per such
// interval.
//
// Pure decisions over the times it is given; thread-compatible: owned by the
// subscription client's lock-resolution thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/strong_id.h"
#include "logpuller/range_lock.h"

namespace sluice::logpuller {

struct StuckRegionOptions {
  std::chrono::milliseconds resolve_lock_after{4000};      // TiCDC's resolveLockFence.
  std::chrono::milliseconds resolve_lock_interval{10000};  // TiCDC's resolveLockMinInterval.
  std::chrono::milliseconds reconnect_after{std::chrono::minutes(60)};  // Old TiCDC's.
};

// One region of a subscription's current run, as its range lock has it.
using RegionProgress = RangeLock::LockedRegion;

// One subscription's current run.
struct SpanProgress {
  SubscriptionId id;
  uint64_t request_id = 0;
  Ts resolved_ts;
  bool initialized = false;
  std::vector<RegionProgress> regions;
};

struct ResolveLockTask {
  RegionId region;
  std::string key;  // A comparable key in the region.
  Ts max_version;
};

struct ReconnectTask {
  SubscriptionId id;
  uint64_t request_id = 0;
  RegionId region;
};

class StuckRegions {
 public:
  explicit StuckRegions(StuckRegionOptions options) : options_(options) {}

  // One check over every subscription. `current_ts` is a fresh TSO; `now`
  // is the local clock (for how long things have not moved).
  void Check(const std::vector<SpanProgress>& spans, Ts current_ts, Clock::TimePoint now,
             std::vector<ResolveLockTask>* resolve, std::vector<ReconnectTask>* reconnect);
  // A resolution of `region` ended at `now` (well or not); the next one
  // waits resolve_lock_interval from here.
  void Resolved(RegionId region, Clock::TimePoint now) {
    pending_.erase(region);
    last_resolve_[region] = now;
  }

 private:
  struct Seen {
    Ts resolved_ts;
    Clock::TimePoint since;  // When resolved_ts was first seen.
  };
  using RegionKey = std::pair<uint64_t, RegionId>;  // (request id, region).

  // Records `ts` for the entry and returns since when it has been there.
  static Clock::TimePoint Track(Seen* seen, bool fresh, Ts ts, Clock::TimePoint now);
  bool MayResolve(RegionId region, Clock::TimePoint now) const;

  const StuckRegionOptions options_;
  std::map<SubscriptionId, Seen> spans_;
  std::map<RegionKey, Seen> regions_;
  std::map<RegionId, Clock::TimePoint> last_resolve_;
  std::set<RegionId> pending_;  // Handed out, Resolved() not called yet.
};

}  // namespace sluice::logpuller
