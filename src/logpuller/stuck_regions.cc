#include "logpuller/stuck_regions.h"

#include <algorithm>

#include "common/tso.h"

namespace sluice::logpuller {

Clock::TimePoint StuckRegions::Track(Seen* seen, bool fresh, Ts ts, Clock::TimePoint now) {
  if (fresh || seen->resolved_ts != ts) {
    seen->resolved_ts = ts;
    seen->since = now;
  }
  return seen->since;
}

bool StuckRegions::MayResolve(RegionId region, Clock::TimePoint now) const {
  if (pending_.contains(region)) return false;
  auto it = last_resolve_.find(region);
  return it == last_resolve_.end() || now - it->second >= options_.resolve_lock_interval;
}

void StuckRegions::Check(const std::vector<SpanProgress>& spans, Ts current_ts,
                         Clock::TimePoint now, std::vector<ResolveLockTask>* resolve,
                         std::vector<ReconnectTask>* reconnect) {
  const int64_t fence_ms = options_.resolve_lock_after.count();
  std::map<SubscriptionId, Seen> spans_seen;
  std::map<RegionKey, Seen> regions_seen;
  std::set<RegionId> queued;
  for (const SpanProgress& span : spans) {
    auto old_span = spans_.find(span.id);
    const bool fresh_span = old_span == spans_.end();
    Seen& seen = spans_seen[span.id];
    if (!fresh_span) seen = old_span->second;
    const Clock::TimePoint span_since = Track(&seen, fresh_span, span.resolved_ts, now);

    for (const RegionProgress& r : span.regions) {
      const RegionKey key{span.request_id, r.region};
      auto old = regions_.find(key);
      const bool fresh = old == regions_.end();
      Seen& region_seen = regions_seen[key];
      if (!fresh) region_seen = old->second;
      const Clock::TimePoint since = Track(&region_seen, fresh, r.resolved_ts, now);
      if (r.initialized && options_.reconnect_after.count() > 0 &&
          now - since >= options_.reconnect_after) {
        reconnect->push_back({span.id, span.request_id, r.region});
        region_seen.since = now;  // Once per interval.
      }
    }

    if (!span.initialized || now - span_since < options_.resolve_lock_after) continue;
    if (tso::Physical(current_ts) - tso::Physical(span.resolved_ts) < fence_ms) continue;
    const Ts target =
        std::min(current_ts, tso::Compose(tso::Physical(span.resolved_ts) + fence_ms, 0));
    for (const RegionProgress& r : span.regions) {
      if (!r.initialized || r.resolved_ts >= target) continue;
      if (!MayResolve(r.region, now) || !queued.insert(r.region).second) continue;
      resolve->push_back({r.region, r.start, target});
      pending_.insert(r.region);
    }
  }
  spans_.swap(spans_seen);
  regions_.swap(regions_seen);
  // Forget regions resolved long ago.
  for (auto it = last_resolve_.begin(); it != last_resolve_.end();) {
    it = now - it->second > 2 * options_.resolve_lock_interval ? last_resolve_.erase(it)
                                                               : std::next(it);
  }
}

}  // namespace sluice::logpuller
