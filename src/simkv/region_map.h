// RegionMap: the simulated cluster's regions, as PD sees them. Each region
// covers [start_key, end_key) in PD's memcomparable-encoded form (an empty
// boundary is unbounded), has an epoch, peers on stores and a leader store.
// The regions always tile the whole key space without gaps or overlaps.
//
// Thread-safe: one mutex guards all state; accessors return copies. ForEach
// calls its function under that mutex, so the function must not call back in.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/strong_id.h"
#include "common/thread_annotations.h"

namespace sluice::simkv {

struct RegionEpoch {
  uint64_t conf_ver = 1;  // +1 on a peer add or remove.
  uint64_t version = 1;   // +1 on a split or merge.
  friend bool operator==(const RegionEpoch&, const RegionEpoch&) = default;
};

struct Peer {
  uint64_t id = 0;
  StoreId store_id;
  friend bool operator==(const Peer&, const Peer&) = default;
};

struct RegionInfo {
  RegionId id;
  std::string start_key;  // Encoded; empty = -inf.
  std::string end_key;    // Encoded; empty = +inf.
  RegionEpoch epoch;
  std::vector<Peer> peers;
  StoreId leader;

  // Whether an encoded key lies in [start_key, end_key).
  bool ContainsEncoded(std::string_view encoded_key) const;
  // Whether a raw key lies in the region (the key is encoded first).
  bool ContainsRaw(std::string_view raw_key) const;
  // The leader's peer; nullopt if the leader store holds no peer (never, by
  // construction).
  std::optional<Peer> LeaderPeer() const;
};

struct RegionMapOptions {
  std::vector<StoreId> stores;              // At least one.
  std::vector<std::string> raw_split_keys;  // Sorted, distinct, non-empty raw keys.
  size_t replicas = 3;                      // Peers per region, capped at stores.size().
};

class RegionMap {
 public:
  // Bootstraps len(raw_split_keys) + 1 regions; region i's leader is
  // stores[i % S] and its peers are on the next `replicas` stores round-robin.
  static Result<std::unique_ptr<RegionMap>> Bootstrap(const RegionMapOptions& options);

  RegionMap(const RegionMap&) = delete;
  RegionMap& operator=(const RegionMap&) = delete;

  // Splits a region at a raw key strictly inside it. The left part keeps the
  // id, the right part gets a fresh id and fresh peer ids on the same stores;
  // both get version + 1. Returns {left, right}.
  Result<std::pair<RegionInfo, RegionInfo>> Split(RegionId region_id,
                                                  std::string_view raw_split_key);

  enum class Survivor : uint8_t { kLeft, kRight };
  // Merges two adjacent regions (left.end_key == right.start_key). The
  // survivor covers both ranges with version = max(versions) + 1 and keeps
  // its own conf_ver, peers and leader; the other region disappears.
  Result<RegionInfo> Merge(RegionId left_id, RegionId right_id,
                           Survivor survivor = Survivor::kLeft);

  // Moves the leader to a store that holds a peer. The epoch is unchanged.
  Result<RegionInfo> TransferLeader(RegionId region_id, StoreId store_id);

  // Simulates a conf change: conf_ver + 1.
  Result<RegionInfo> BumpEpoch(RegionId region_id);

  Result<RegionInfo> RegionForKey(std::string_view encoded_key) const;
  Result<RegionInfo> RegionById(RegionId region_id) const;
  // NotFound for an unknown region, EpochMismatch if `epoch` differs.
  Result<RegionInfo> CheckEpoch(RegionId region_id, const RegionEpoch& epoch) const;

  // Like PD ScanRegions: regions overlapping [encoded_start, encoded_end) in
  // key order, at most `limit` of them (0 = no limit); empty end = +inf.
  std::vector<RegionInfo> Scan(std::string_view encoded_start, std::string_view encoded_end,
                               size_t limit) const;

  void ForEach(const std::function<void(const RegionInfo&)>& fn) const;
  const std::vector<StoreId>& stores() const { return stores_; }
  size_t size() const;

 private:
  explicit RegionMap(std::vector<StoreId> stores);

  RegionInfo* FindById(RegionId region_id) REQUIRES(mu_);
  uint64_t NextId() REQUIRES(mu_) { return next_id_++; }
  std::vector<Peer> NewPeers(const std::vector<Peer>& like) REQUIRES(mu_);
  void Insert(RegionInfo region) REQUIRES(mu_);

  const std::vector<StoreId> stores_;
  mutable Mutex mu_;
  std::unordered_map<RegionId, RegionInfo> regions_ GUARDED_BY(mu_);
  std::map<std::string, RegionId> by_start_ GUARDED_BY(mu_);  // Encoded start -> id.
  uint64_t next_id_ GUARDED_BY(mu_) = 1;                      // Region and peer ids.
};

}  // namespace sluice::simkv
