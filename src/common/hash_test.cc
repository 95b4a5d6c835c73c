#include "common/hash.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

namespace sluice {
namespace {

// TiKV's region ids often step by 4 (a region id, then its three peers'); a
// shard picked by the id modulo 2 or 4 would put them all on one shard.
TEST(MixU64Test, SpreadsIdsThatStepByTheReplicaCountPlusOne) {
  for (const uint64_t shards : {2u, 3u, 4u, 8u}) {
    std::vector<int> counts(shards, 0);
    const int ids = 1000;
    for (int i = 0; i < ids; ++i) ++counts[MixU64(5 + 4 * static_cast<uint64_t>(i)) % shards];
    const int even = ids / static_cast<int>(shards);
    for (uint64_t s = 0; s < shards; ++s) {
      EXPECT_GT(counts[s], even * 3 / 4) << shards << " shards, shard " << s;
      EXPECT_LT(counts[s], even * 5 / 4) << shards << " shards, shard " << s;
    }
  }
}

// Unlike HashBytes, the same in every process: shard choices repeat run to
// run.
TEST(MixU64Test, IsFixedAndKeepsIdsApart) {
  EXPECT_EQ(MixU64(0), 0u);  // SplitMix64's finalizer fixes zero.
  EXPECT_EQ(MixU64(1), 0x5692161d100b05e5ULL);
  std::set<uint64_t> seen;
  for (uint64_t id = 1; id <= 4096; ++id) seen.insert(MixU64(id));
  EXPECT_EQ(seen.size(), 4096u);
}

}  // namespace
}  // namespace sluice
