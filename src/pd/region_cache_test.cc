// RegionCache against a simulated PD: batched loading of many regions,
// staleness after splits, merges and leader moves, store addresses; and
// the coverage check on PD answers.
#include "pd/region_cache.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "pd/pd_test_util.h"

namespace sluice::pd::testing {
namespace {

std::string SplitKey(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "k%05d", i);
  return buf;
}

// Every region starts where the previous ends, and together they cover
// `span`.
void ExpectCovers(const std::vector<Region>& regions, const Span& span) {
  ASSERT_FALSE(regions.empty());
  EXPECT_LE(regions.front().start_key, span.start);
  for (size_t i = 1; i < regions.size(); ++i) {
    ASSERT_EQ(regions[i].start_key, regions[i - 1].end_key) << "at " << i;
  }
  const std::string& end = regions.back().end_key;
  EXPECT_TRUE(end.empty() || (!span.end.empty() && end >= span.end));
}

class RegionCacheTest : public PdTestBase {
 protected:
  void SetUp() override {
    StartCluster();
    client_ = Connect();
    ASSERT_NE(client_, nullptr);
    cache_ = std::make_unique<RegionCache>(client_.get());
  }
  void TearDown() override {
    cache_.reset();
    client_.reset();
    PdTestBase::TearDown();
  }

  std::unique_ptr<PdClient> client_;
  std::unique_ptr<RegionCache> cache_;
};

TEST_F(RegionCacheTest, LocateSpanLoadsOnceThenServesFromCache) {
  Result<std::vector<Region>> first = cache_->LocateSpan(Span{});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(first->size(), 3u);
  ExpectCovers(*first, Span{});
  EXPECT_EQ(client_->scan_regions_calls(), 1u);
  EXPECT_EQ(cache_->size(), 3u);

  Result<std::vector<Region>> inner = cache_->LocateSpan(Span{Enc("c"), Enc("d")});
  ASSERT_TRUE(inner.ok());
  ASSERT_EQ(inner->size(), 1u);
  EXPECT_EQ((*inner)[0].start_key, Enc("b"));
  EXPECT_EQ(client_->scan_regions_calls(), 1u);
  EXPECT_EQ(cache_->LocateSpan(Span{Enc("d"), Enc("c")}).status().code(), Code::kInvalidArgument);
}

TEST_F(RegionCacheTest, InvalidateAfterSplitReloadsBothHalves) {
  ASSERT_TRUE(cache_->LocateSpan(Span{}).ok());
  RegionId middle = cache_->LocateKey(Enc("c"))->id;
  ASSERT_TRUE(cluster_->Split(middle, "f").ok());

  // Still the cached (stale) region until told otherwise.
  Result<std::vector<Region>> stale = cache_->LocateSpan(Span{});
  ASSERT_TRUE(stale.ok());
  EXPECT_EQ(stale->size(), 3u);

  cache_->Invalidate(middle);
  EXPECT_FALSE(cache_->Get(middle).has_value());
  Result<std::vector<Region>> fresh = cache_->LocateSpan(Span{});
  ASSERT_TRUE(fresh.ok());
  ASSERT_EQ(fresh->size(), 4u);
  ExpectCovers(*fresh, Span{});
  EXPECT_EQ(cache_->Get(middle)->end_key, Enc("f"));
  EXPECT_EQ(client_->scan_regions_calls(), 2u);
}

TEST_F(RegionCacheTest, StaleNeighbourIsReplacedAfterMerge) {
  ASSERT_TRUE(cache_->LocateSpan(Span{}).ok());
  RegionId middle = cache_->LocateKey(Enc("c"))->id;
  RegionId right = cache_->LocateKey(Enc("x"))->id;
  ASSERT_TRUE(cluster_->Merge(middle, right).ok());
  // Only the right one is known to be gone; the cached middle is stale.
  cache_->OnSendFail(right, /*reload=*/true);
  Result<std::vector<Region>> regions = cache_->LocateSpan(Span{});
  ASSERT_TRUE(regions.ok()) << regions.status().ToString();
  ASSERT_EQ(regions->size(), 2u);
  ExpectCovers(*regions, Span{});
  EXPECT_TRUE((*regions)[1].end_key.empty());
  EXPECT_EQ(cache_->size(), 2u);
}

TEST_F(RegionCacheTest, UpdateLeaderAndInvalidateAfterTransferLeader) {
  Result<Region> region = cache_->LocateKey(Enc("c"));
  ASSERT_TRUE(region.ok());
  StoreId target;
  uint64_t target_peer = 0;
  for (const auto& [peer, store] : region->peers) {
    if (store != region->leader_store) {
      target = store;
      target_peer = peer;
      break;
    }
  }
  ASSERT_NE(target.value(), 0u);
  ASSERT_TRUE(cluster_->TransferLeader(region->id, target).ok());
  EXPECT_EQ(cache_->Get(region->id)->leader_store, region->leader_store);  // Cached, stale.

  cache_->UpdateLeader(region->id, target, target_peer);
  EXPECT_EQ(cache_->Get(region->id)->leader_store, target);
  EXPECT_EQ(cache_->Get(region->id)->leader_peer_id, target_peer);

  // A store without a peer of the region: the entry is dropped.
  cache_->UpdateLeader(region->id, StoreId(99), 0);
  EXPECT_FALSE(cache_->Get(region->id).has_value());

  // Move the leader back in PD; a reload after Invalidate sees it.
  ASSERT_TRUE(cluster_->TransferLeader(region->id, region->leader_store).ok());
  ASSERT_TRUE(cache_->LocateKey(Enc("c")).ok());
  cache_->Invalidate(region->id);
  Result<Region> reloaded = cache_->LocateKey(Enc("c"));
  ASSERT_TRUE(reloaded.ok());
  EXPECT_EQ(reloaded->leader_store, region->leader_store);
}

TEST_F(RegionCacheTest, OnSendFailWithoutReloadKeepsTheRegion) {
  Result<Region> region = cache_->LocateKey(Enc("c"));
  ASSERT_TRUE(region.ok());
  cache_->OnSendFail(region->id, /*reload=*/false);
  EXPECT_TRUE(cache_->Get(region->id).has_value());
  cache_->OnSendFail(region->id, /*reload=*/true);
  EXPECT_FALSE(cache_->Get(region->id).has_value());
}

TEST_F(RegionCacheTest, StoreAddressIsCachedUntilInvalidated) {
  const std::string real = cluster_->store_address(StoreId(1));
  Result<std::string> address = cache_->StoreAddress(StoreId(1));
  ASSERT_TRUE(address.ok()) << address.status().ToString();
  EXPECT_EQ(*address, real);

  ASSERT_TRUE(cluster_->store_registry().SetAddress(StoreId(1), "127.0.0.1:1").ok());
  EXPECT_EQ(*cache_->StoreAddress(StoreId(1)), real);
  cache_->InvalidateStore(StoreId(1));
  EXPECT_EQ(*cache_->StoreAddress(StoreId(1)), "127.0.0.1:1");

  EXPECT_EQ(cache_->StoreAddress(StoreId(99)).status().code(), Code::kNotFound);
  ASSERT_TRUE(cluster_->store_registry().SetState(StoreId(2), simkv::StoreState::kTombstone).ok());
  EXPECT_EQ(cache_->StoreAddress(StoreId(2)).status().code(), Code::kNotFound);
}

class ManyRegionsTest : public PdTestBase {
 protected:
  static constexpr int kRegions = 3000;
  void SetUp() override {
    std::vector<std::string> keys;
    for (int i = 1; i < kRegions; ++i) keys.push_back(SplitKey(i));
    StartCluster(keys);
  }
};

TEST_F(ManyRegionsTest, LocateSpanLoadsInBatches) {
  PdClientOptions options = Options();
  options.region_scan_batch = 100;
  auto client = Connect(options);
  RegionCache cache(client.get());

  Result<std::vector<Region>> all = cache.LocateSpan(Span{});
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), static_cast<size_t>(kRegions));
  ExpectCovers(*all, Span{});
  EXPECT_TRUE(all->front().start_key.empty());
  EXPECT_EQ((*all)[1].start_key, Enc(SplitKey(1)));
  EXPECT_EQ(client->scan_regions_calls(), static_cast<uint64_t>(kRegions / 100));

  // Served from the cache now.
  const Span inner{Enc(SplitKey(1000)), Enc(SplitKey(1050))};
  Result<std::vector<Region>> part = cache.LocateSpan(inner);
  ASSERT_TRUE(part.ok());
  ASSERT_EQ(part->size(), 50u);
  ExpectCovers(*part, inner);
  EXPECT_EQ(part->front().start_key, inner.start);
  EXPECT_EQ(part->back().end_key, inner.end);
  EXPECT_EQ(client->scan_regions_calls(), static_cast<uint64_t>(kRegions / 100));
}

TEST_F(ManyRegionsTest, LocateSpanFillsHolesOfAPartialCache) {
  PdClientOptions options = Options();
  options.region_scan_batch = 100;
  auto client = Connect(options);
  RegionCache cache(client.get());
  ASSERT_TRUE(cache.LocateKey(Enc(SplitKey(500))).ok());
  ASSERT_TRUE(cache.LocateKey(Enc(SplitKey(1500))).ok());

  const Span span{Enc(SplitKey(400)), Enc(SplitKey(1700))};
  Result<std::vector<Region>> regions = cache.LocateSpan(span);
  ASSERT_TRUE(regions.ok()) << regions.status().ToString();
  ASSERT_EQ(regions->size(), 1300u);
  ExpectCovers(*regions, span);
  EXPECT_EQ(regions->front().start_key, span.start);
}

TEST(CheckCoverageTest, RefusesGapsMissingLeadersAndMisplacedStarts) {
  auto region = [](uint64_t id, std::string start, std::string end, bool leader) {
    Region r;
    r.id = RegionId(id);
    r.start_key = std::move(start);
    r.end_key = std::move(end);
    if (leader) r.leader_store = StoreId(1);
    return r;
  };
  EXPECT_TRUE(CheckCoverage({region(1, "a", "c", true), region(2, "c", "", true)}, "b").ok());
  EXPECT_EQ(CheckCoverage({}, "b").code(), Code::kUnavailable);
  EXPECT_EQ(CheckCoverage({region(1, "c", "d", true)}, "b").code(), Code::kUnavailable);
  EXPECT_EQ(CheckCoverage({region(1, "a", "c", true), region(2, "d", "", true)}, "b").code(),
            Code::kUnavailable);
  EXPECT_EQ(CheckCoverage({region(1, "a", "c", true), region(2, "c", "", false)}, "b").code(),
            Code::kUnavailable);
}

}  // namespace
}  // namespace sluice::pd::testing
