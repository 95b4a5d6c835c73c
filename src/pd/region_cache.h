// RegionCache: the log puller's view of regions and store addresses, loaded
// lazily from PD (like tikv client-go's RegionCache, over raw memcomparable
// keys: boundaries stay in PD's form).
//
// Promises:
//  - cached regions never overlap; a region loaded from PD replaces every
//    cached region it overlaps (and an older copy of itself), unless the
//    cached copy of the same region has a newer epoch;
//  - LocateSpan returns regions covering the span in key order with no gaps
//    and no overlaps (the first may start before the span, the last may end
//    after it); missing parts are loaded with ScanRegions in batches of
//    options.region_scan_batch; a gap or a region without a leader in PD's
//    answer is kUnavailable (retry later);
//  - a stale entry is dropped by Invalidate / OnSendFail(reload=true) /
//    UpdateLeader to a store the region has no peer on, so the next Locate
//    reloads it.
//
// Ownership: borrows the PdClient, which must outlive the cache.
// Thread-safe: any thread may call anything; PD calls are made without the
// cache lock held, so concurrent loads may race and the later one wins.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/span.h"
#include "common/status.h"
#include "common/strong_id.h"
#include "common/thread_annotations.h"
#include "pd/pd_client.h"
#include "pd/pd_types.h"

namespace sluice::pd {

class RegionCache {
 public:
  explicit RegionCache(PdClient* pd);  // Borrows.
  RegionCache(const RegionCache&) = delete;
  RegionCache& operator=(const RegionCache&) = delete;

  Result<std::vector<Region>> LocateSpan(const Span& comparable_span) EXCLUDES(mu_);
  Result<Region> LocateKey(std::string_view comparable_key) EXCLUDES(mu_);
  std::optional<Region> Get(RegionId id) const EXCLUDES(mu_);

  // After NotLeader{leader}: moves the cached leader to the peer on
  // `leader_store`; drops the region if it has no peer there.
  void UpdateLeader(RegionId id, StoreId leader_store, uint64_t leader_peer_id) EXCLUDES(mu_);
  // The next Locate reloads the region from PD.
  void Invalidate(RegionId id) EXCLUDES(mu_);
  // A send to the region's leader failed. reload=true drops the region;
  // reload=false keeps it (the store's stream broke, the region is fine).
  void OnSendFail(RegionId id, bool reload) EXCLUDES(mu_);

  // The store's client address; loaded from PD when unknown or invalidated.
  // kNotFound for an unknown or tombstone store, kUnavailable if PD has no
  // address for it.
  Result<std::string> StoreAddress(StoreId id) EXCLUDES(mu_);
  void InvalidateStore(StoreId id) EXCLUDES(mu_);

  size_t size() const EXCLUDES(mu_);

 private:
  // The cached region containing `key`, or null.
  const Region* Lookup(std::string_view key) const REQUIRES(mu_);
  void Insert(const Region& region) REQUIRES(mu_);
  void Erase(RegionId id) REQUIRES(mu_);
  // Appends cached regions from `*cursor` on; true once the span is covered.
  bool ServeFromCache(const Span& span, std::string* cursor, std::vector<Region>* out) const
      REQUIRES(mu_);

  PdClient* const pd_;
  const size_t scan_batch_;

  mutable Mutex mu_;
  using ByStart = std::map<std::string, Region, std::less<>>;
  ByStart by_start_ GUARDED_BY(mu_);
  // Each region's entry in by_start_ (map iterators stay valid until erased).
  std::unordered_map<RegionId, ByStart::iterator> start_of_ GUARDED_BY(mu_);
  std::unordered_map<StoreId, std::string> store_address_ GUARDED_BY(mu_);
};

// Checks a ScanRegions answer loaded from `cursor`: the first region
// contains `cursor`, each next one starts where the previous ends, and all
// have a leader. kUnavailable otherwise (PD is between updates).
Status CheckCoverage(const std::vector<Region>& regions, std::string_view cursor);

}  // namespace sluice::pd
