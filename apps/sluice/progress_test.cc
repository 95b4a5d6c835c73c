// The playground's status line: the catch-up's progress is a fraction of the
// lag it started with, never above 100%, and the rate says when nothing is
// written upstream instead of printing 0 rows/s.
#include "progress.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace sluice::playground {
namespace {

Ts AtMs(int64_t ms) { return tso::Compose(ms, 0); }

TEST(CatchUpFractionTest, IsTheShareOfTheStartingLagThatIsClosed) {
  EXPECT_DOUBLE_EQ(CatchUpFraction(AtMs(1000), AtMs(2000), AtMs(1000)), 0.0);
  EXPECT_DOUBLE_EQ(CatchUpFraction(AtMs(1000), AtMs(2000), AtMs(1250)), 0.25);
  EXPECT_DOUBLE_EQ(CatchUpFraction(AtMs(1000), AtMs(2000), AtMs(2000)), 1.0);
}

TEST(CatchUpFractionTest, StaysWithinZeroAndOne) {
  // A checkpoint far past the target (it follows the TSO once caught up).
  EXPECT_DOUBLE_EQ(CatchUpFraction(AtMs(1000), AtMs(2000), AtMs(40000)), 1.0);
  // A checkpoint behind where the catch-up started, and an empty catch-up.
  EXPECT_DOUBLE_EQ(CatchUpFraction(AtMs(1000), AtMs(2000), AtMs(500)), 0.0);
  EXPECT_DOUBLE_EQ(CatchUpFraction(AtMs(2000), AtMs(2000), AtMs(1900)), 0.0);
  // Logical parts alone do not divide by zero.
  EXPECT_DOUBLE_EQ(
      CatchUpFraction(tso::Compose(1000, 1), tso::Compose(1000, 9), tso::Compose(1000, 5)), 0.0);
}

TEST(ProgressLineTest, NeverShowsMoreThanAHundredPercent) {
  std::string line = ProgressLine("catch-up", 18.76, std::nullopt, 0.5);
  EXPECT_THAT(line, ::testing::HasSubstr("100%"));
  EXPECT_THAT(line, ::testing::Not(::testing::HasSubstr("1876")));
  EXPECT_THAT(line, ::testing::HasSubstr("[##############################]"));
  EXPECT_THAT(ProgressLine("catch-up", -3, std::nullopt, 0.5), ::testing::HasSubstr(" 0%"));
}

TEST(ProgressLineTest, SaysTheUpstreamIsIdleInsteadOfZeroRowsPerSecond) {
  EXPECT_THAT(ProgressLine("catch-up", 0.5, std::nullopt, 1.0),
              ::testing::AllOf(::testing::HasSubstr("upstream idle"),
                               ::testing::Not(::testing::HasSubstr("rows/s"))));
  EXPECT_THAT(ProgressLine("workload", 0.5, 1234.0, 1.0),
              ::testing::HasSubstr("1234 rows/s upstream"));
}

}  // namespace
}  // namespace sluice::playground
