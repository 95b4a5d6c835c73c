#include "simkv/region_map.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "common/memcomparable.h"
#include "simkv/region_fault_picker.h"

namespace sluice::simkv {
namespace {

std::string Enc(std::string_view raw) { return memcomparable::EncodeBytes(raw); }

std::unique_ptr<RegionMap> MakeMap(std::vector<uint64_t> stores, std::vector<std::string> keys,
                                   size_t replicas = 3) {
  RegionMapOptions options;
  for (uint64_t s : stores) options.stores.push_back(StoreId(s));
  options.raw_split_keys = std::move(keys);
  options.replicas = replicas;
  auto map = RegionMap::Bootstrap(options);
  EXPECT_TRUE(map.ok()) << map.status().ToString();
  return map.ok() ? std::move(map).value() : nullptr;
}

// The regions tile the key space: first starts at -inf, each starts where the
// previous ended, the last ends at +inf; ids are unique.
void ExpectTiling(const RegionMap& map) {
  std::vector<RegionInfo> regions = map.Scan("", "", 0);
  ASSERT_EQ(regions.size(), map.size());
  ASSERT_FALSE(regions.empty());
  EXPECT_EQ(regions.front().start_key, "");
  EXPECT_EQ(regions.back().end_key, "");
  std::set<RegionId> ids;
  for (size_t i = 0; i < regions.size(); ++i) {
    EXPECT_TRUE(ids.insert(regions[i].id).second);
    EXPECT_TRUE(regions[i].LeaderPeer().has_value());
    if (i > 0) {
      EXPECT_EQ(regions[i - 1].end_key, regions[i].start_key);
    }
  }
}

TEST(RegionMapTest, BootstrapSplitsAtRawKeysWithRoundRobinLeaders) {
  auto map = MakeMap({1, 2, 3}, {"b", "d"});
  ASSERT_NE(map, nullptr);
  ExpectTiling(*map);
  std::vector<RegionInfo> regions = map->Scan("", "", 0);
  ASSERT_EQ(regions.size(), 3u);
  EXPECT_EQ(regions[0].end_key, Enc("b"));
  EXPECT_EQ(regions[1].start_key, Enc("b"));
  EXPECT_EQ(regions[1].end_key, Enc("d"));
  for (size_t i = 0; i < regions.size(); ++i) {
    EXPECT_EQ(regions[i].leader, StoreId(i + 1));
    EXPECT_EQ(regions[i].peers.size(), 3u);
    EXPECT_EQ(regions[i].epoch, (RegionEpoch{1, 1}));
  }
  EXPECT_TRUE(regions[0].ContainsRaw("a"));
  EXPECT_TRUE(regions[0].ContainsRaw(""));
  EXPECT_FALSE(regions[0].ContainsRaw("b"));
  EXPECT_TRUE(regions[1].ContainsRaw("b"));
  EXPECT_TRUE(regions[1].ContainsRaw("c\xff\xff"));
  EXPECT_TRUE(regions[2].ContainsRaw("zzz"));

  auto found = map->RegionForKey(Enc("c"));
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->id, regions[1].id);
  EXPECT_EQ(map->RegionForKey("")->id, regions[0].id);
  EXPECT_EQ(map->RegionForKey(Enc("d"))->id, regions[2].id);

  auto two_stores = MakeMap({7, 8}, {}, 3);
  ASSERT_NE(two_stores, nullptr);
  EXPECT_EQ(two_stores->Scan("", "", 0)[0].peers.size(), 2u);  // Capped at the store count.
}

TEST(RegionMapTest, BootstrapRejectsBadOptions) {
  auto bad = [](std::vector<uint64_t> stores, std::vector<std::string> keys, size_t replicas) {
    RegionMapOptions options;
    for (uint64_t s : stores) options.stores.push_back(StoreId(s));
    options.raw_split_keys = std::move(keys);
    options.replicas = replicas;
    auto map = RegionMap::Bootstrap(options);
    return !map.ok() && map.status().code() == Code::kInvalidArgument;
  };
  EXPECT_TRUE(bad({}, {}, 3));
  EXPECT_TRUE(bad({1, 1}, {}, 3));
  EXPECT_TRUE(bad({1}, {}, 0));
  EXPECT_TRUE(bad({1}, {"b", "a"}, 3));
  EXPECT_TRUE(bad({1}, {"a", "a"}, 3));
  EXPECT_TRUE(bad({1}, {""}, 3));
}

TEST(RegionMapTest, SplitGivesRightPartAFreshIdAndBumpsVersions) {
  auto map = MakeMap({1, 2, 3}, {"b", "d"});
  RegionInfo middle = *map->RegionForKey(Enc("c"));
  auto split = map->Split(middle.id, "c");
  ASSERT_TRUE(split.ok()) << split.status().ToString();
  auto [left, right] = *split;
  EXPECT_EQ(left.id, middle.id);
  EXPECT_EQ(left.start_key, Enc("b"));
  EXPECT_EQ(left.end_key, Enc("c"));
  EXPECT_EQ(left.epoch, (RegionEpoch{1, 2}));
  EXPECT_NE(right.id, middle.id);
  EXPECT_EQ(right.start_key, Enc("c"));
  EXPECT_EQ(right.end_key, Enc("d"));
  EXPECT_EQ(right.epoch, (RegionEpoch{1, 2}));
  EXPECT_EQ(right.leader, middle.leader);
  ASSERT_EQ(right.peers.size(), middle.peers.size());
  for (size_t i = 0; i < right.peers.size(); ++i) {
    EXPECT_EQ(right.peers[i].store_id, middle.peers[i].store_id);
    EXPECT_NE(right.peers[i].id, middle.peers[i].id);
  }
  EXPECT_EQ(map->RegionForKey(Enc("c"))->id, right.id);
  EXPECT_EQ(map->RegionById(middle.id)->end_key, Enc("c"));
  ExpectTiling(*map);

  // The last region is unbounded; any larger key splits it.
  RegionInfo last = *map->RegionForKey(Enc("z"));
  ASSERT_TRUE(map->Split(last.id, "x").ok());

  EXPECT_EQ(map->Split(RegionId(999), "c").status().code(), Code::kNotFound);
  EXPECT_EQ(map->Split(middle.id, "b").status().code(), Code::kInvalidArgument);  // Boundary.
  EXPECT_EQ(map->Split(middle.id, "c").status().code(), Code::kInvalidArgument);  // End.
  EXPECT_EQ(map->Split(middle.id, "e").status().code(), Code::kInvalidArgument);  // Outside.
  EXPECT_EQ(map->Split(middle.id, "a").status().code(), Code::kInvalidArgument);
  ExpectTiling(*map);
}

TEST(RegionMapTest, MergeAdjacentRegions) {
  auto map = MakeMap({1, 2, 3}, {"b", "d", "f"});
  std::vector<RegionInfo> r = map->Scan("", "", 0);
  ASSERT_TRUE(map->Split(r[1].id, "c").ok());  // r[1] now at version 2.
  r = map->Scan("", "", 0);                    // [-inf,b) [b,c) [c,d) [d,f) [f,+inf)
  ASSERT_EQ(r.size(), 5u);

  auto merged = map->Merge(r[0].id, r[1].id);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ(merged->id, r[0].id);
  EXPECT_EQ(merged->start_key, "");
  EXPECT_EQ(merged->end_key, Enc("c"));
  EXPECT_EQ(merged->epoch, (RegionEpoch{1, 3}));  // max(1, 2) + 1
  EXPECT_EQ(merged->leader, r[0].leader);
  EXPECT_EQ(map->RegionById(r[1].id).status().code(), Code::kNotFound);
  ExpectTiling(*map);

  auto right_survives = map->Merge(r[3].id, r[4].id, RegionMap::Survivor::kRight);
  ASSERT_TRUE(right_survives.ok());
  EXPECT_EQ(right_survives->id, r[4].id);
  EXPECT_EQ(right_survives->start_key, Enc("d"));
  EXPECT_EQ(right_survives->end_key, "");
  EXPECT_EQ(right_survives->epoch, (RegionEpoch{1, 2}));
  EXPECT_EQ(map->RegionForKey(Enc("e"))->id, r[4].id);
  EXPECT_EQ(map->RegionById(r[3].id).status().code(), Code::kNotFound);
  ExpectTiling(*map);
  EXPECT_EQ(map->size(), 3u);

  EXPECT_EQ(map->Merge(r[0].id, r[4].id).status().code(), Code::kInvalidArgument);  // Gap.
  EXPECT_EQ(map->Merge(r[2].id, r[0].id).status().code(), Code::kInvalidArgument);  // Order.
  EXPECT_EQ(map->Merge(r[0].id, r[0].id).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(map->Merge(r[0].id, r[1].id).status().code(), Code::kNotFound);  // Gone.
  ExpectTiling(*map);
}

TEST(RegionMapTest, TransferLeaderAndBumpEpoch) {
  auto map = MakeMap({1, 2, 3, 4}, {"m"});
  RegionInfo region = map->Scan("", "", 0)[0];  // Peers on stores 1, 2, 3.
  auto moved = map->TransferLeader(region.id, StoreId(3));
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(moved->leader, StoreId(3));
  EXPECT_EQ(moved->epoch, region.epoch);  // TiKV leaves the epoch as is.
  EXPECT_EQ(moved->LeaderPeer()->store_id, StoreId(3));
  EXPECT_EQ(map->TransferLeader(region.id, StoreId(4)).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(map->TransferLeader(RegionId(999), StoreId(1)).status().code(), Code::kNotFound);

  auto bumped = map->BumpEpoch(region.id);
  ASSERT_TRUE(bumped.ok());
  EXPECT_EQ(bumped->epoch, (RegionEpoch{2, 1}));
  EXPECT_EQ(map->BumpEpoch(RegionId(999)).status().code(), Code::kNotFound);

  EXPECT_TRUE(map->CheckEpoch(region.id, RegionEpoch{2, 1}).ok());
  EXPECT_EQ(map->CheckEpoch(region.id, RegionEpoch{1, 1}).status().code(), Code::kEpochMismatch);
  EXPECT_EQ(map->CheckEpoch(RegionId(999), RegionEpoch{}).status().code(), Code::kNotFound);
}

TEST(RegionMapTest, ScanLikePdScanRegions) {
  auto map = MakeMap({1}, {"b", "d", "f"});
  auto ids = [](const std::vector<RegionInfo>& regions) {
    std::vector<std::string> out;
    for (const RegionInfo& r : regions) out.push_back(r.start_key);
    return out;
  };
  EXPECT_EQ(ids(map->Scan(Enc("c"), Enc("e"), 0)), (std::vector<std::string>{Enc("b"), Enc("d")}));
  EXPECT_EQ(ids(map->Scan(Enc("c"), Enc("d"), 0)), (std::vector<std::string>{Enc("b")}));
  EXPECT_EQ(ids(map->Scan(Enc("b"), "", 2)), (std::vector<std::string>{Enc("b"), Enc("d")}));
  EXPECT_EQ(map->Scan("", "", 0).size(), 4u);
  std::vector<std::string> seen;
  map->ForEach([&](const RegionInfo& r) { seen.push_back(r.start_key); });
  EXPECT_EQ(seen, ids(map->Scan("", "", 0)));
}

TEST(RegionFaultPickerTest, SplitKeysLieStrictlyInside) {
  auto map = MakeMap({1, 2, 3}, {"a", "a\x01", "b", std::string("b\0\0", 3), "t"});
  RegionFaultPicker picker(42);
  for (const RegionInfo& region : map->Scan("", "", 0)) {
    for (int i = 0; i < 50; ++i) {
      std::optional<std::string> key = picker.PickSplitKey(region);
      ASSERT_TRUE(key.has_value());
      EXPECT_TRUE(region.ContainsRaw(*key));
      EXPECT_NE(Enc(*key), region.start_key);
    }
  }
  // No key lies strictly between "x" and "x\0".
  auto tight = MakeMap({1}, {"x", std::string("x\0", 2)});
  RegionInfo empty_gap = *tight->RegionForKey(Enc("x"));
  EXPECT_FALSE(picker.PickSplitKey(empty_gap).has_value());
  // Between "b" and "b\0\0" only "b\0" fits.
  RegionInfo zeros = *map->RegionForKey(Enc("b"));
  EXPECT_EQ(picker.PickSplitKey(zeros), std::string("b\0", 2));
}

TEST(RegionFaultPickerTest, SeededScheduleIsDeterministicAndKeepsTiling) {
  auto run = [](uint64_t seed) {
    auto map = MakeMap({1, 2, 3}, {"g", "n", "t"});
    RegionFaultPicker picker(seed);
    std::vector<std::string> log;
    for (int step = 0; step < 200; ++step) {
      switch (step % 3) {
        case 0:
          if (auto split = picker.PickSplit(*map)) {
            EXPECT_TRUE(map->Split(split->first, split->second).ok());
            log.push_back("split " + std::to_string(split->first.value()) + " " + split->second);
          }
          break;
        case 1:
          if (auto merge = picker.PickMerge(*map)) {
            EXPECT_TRUE(map->Merge(merge->first, merge->second).ok());
            log.push_back("merge " + std::to_string(merge->first.value()));
          }
          break;
        default:
          if (auto move = picker.PickLeaderTransfer(*map)) {
            EXPECT_TRUE(map->TransferLeader(move->first, move->second).ok());
            log.push_back("leader " + std::to_string(move->second.value()));
          }
      }
      ExpectTiling(*map);
    }
    return log;
  };
  std::vector<std::string> first = run(7);
  EXPECT_GT(first.size(), 150u);
  EXPECT_EQ(first, run(7));
  EXPECT_NE(first, run(8));
}

}  // namespace
}  // namespace sluice::simkv
