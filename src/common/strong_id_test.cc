#include "common/strong_id.h"

#include <gtest/gtest.h>

#include <type_traits>
#include <unordered_set>

#include "common/tso.h"

namespace sluice {
namespace {

TEST(StrongIdTest, DistinctTypesDoNotMix) {
  static_assert(!std::is_convertible_v<RegionId, TableId>);
  static_assert(!std::is_convertible_v<uint64_t, Ts>);
  RegionId a(5), b(7);
  EXPECT_LT(a, b);
  std::unordered_set<RegionId> set{a, b, RegionId(5)};
  EXPECT_EQ(set.size(), 2u);
}

TEST(TsoTest, ComposeMatchesFacts) {
  // PD's TSO layout: physical 1700000000000, logical 5.
  Ts ts = tso::Compose(1700000000000, 5);
  EXPECT_EQ(ts.value(), 445644800000000005ULL);
  EXPECT_EQ(tso::Physical(ts), 1700000000000);
  EXPECT_EQ(tso::Logical(ts), 5);
}

TEST(TsoTest, WallTimeRoundTrip) {
  auto now = std::chrono::system_clock::time_point(std::chrono::milliseconds(1700000000123));
  Ts ts = tso::FromWallTime(now);
  EXPECT_EQ(tso::Logical(ts), 0);
  EXPECT_EQ(tso::ToWallTime(ts), now);
}

TEST(TsoTest, BatchElements) {
  Ts last = tso::Compose(1000, 9);
  EXPECT_EQ(tso::BatchElement(last, 4, 0), tso::Compose(1000, 6));
  EXPECT_EQ(tso::BatchElement(last, 4, 3), last);
  // suffix bits spread the batch.
  Ts last2 = tso::Compose(1000, 0x40);
  EXPECT_EQ(tso::BatchElement(last2, 3, 0, 4), tso::Compose(1000, 0x20));
}

}  // namespace
}  // namespace sluice
