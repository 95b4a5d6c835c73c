// RegionFaultPicker: chooses region faults deterministically from a seed
// (split keys inside regions, neighbours to merge, leader moves), so a fault
// schedule replays exactly. It only reads the RegionMap; applying the fault is
// the caller's job. Not thread-safe: one owner.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>

#include "common/strong_id.h"
#include "simkv/region_map.h"

namespace sluice::simkv {

class RegionFaultPicker {
 public:
  explicit RegionFaultPicker(uint64_t seed) : rng_(seed) {}

  // A raw key strictly inside `region`, or nullopt if none was found (no key
  // of bounded length lies between the boundaries, or they do not decode).
  std::optional<std::string> PickSplitKey(const RegionInfo& region);
  // A random region and a raw split key inside it.
  std::optional<std::pair<RegionId, std::string>> PickSplit(const RegionMap& map);
  // A random pair of adjacent regions {left, right}; nullopt with one region.
  std::optional<std::pair<RegionId, RegionId>> PickMerge(const RegionMap& map);
  // A random region and a peer store other than its leader.
  std::optional<std::pair<RegionId, StoreId>> PickLeaderTransfer(const RegionMap& map);

 private:
  std::string RandomBytes(size_t len);
  std::string RandomBelow(const std::string& bound);
  size_t Uniform(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

  std::mt19937_64 rng_;
};

}  // namespace sluice::simkv
