#include "dispatcher/table_progress.h"

#include <gtest/gtest.h>

namespace sluice::dispatcher {
namespace {

TEST(TableProgressTest, StartsAtTheStartTs) {
  TableProgress p(Ts(100));
  EXPECT_TRUE(p.Empty());
  EXPECT_EQ(p.Checkpoint(), Ts(100));
  p.UpdateResolved(Ts(120));
  EXPECT_EQ(p.Checkpoint(), Ts(120));  // Nothing ever pending: the resolved ts.
}

TEST(TableProgressTest, EarliestPendingCommitMinusOne) {
  TableProgress p(Ts(100));
  p.Add(Ts(110), Ts(105));
  p.Add(Ts(120), Ts(115));
  p.UpdateResolved(Ts(130));
  EXPECT_EQ(p.Checkpoint(), Ts(109));
  EXPECT_EQ(p.Pending(), 2u);
  // Flushes may complete out of order; the earliest pending one counts.
  p.Remove(Ts(120), Ts(115));
  EXPECT_EQ(p.Checkpoint(), Ts(109));
  p.Remove(Ts(110), Ts(105));
  EXPECT_TRUE(p.Empty());
  EXPECT_EQ(p.Checkpoint(), Ts(130));  // max(120 - 1, resolved 130).
}

TEST(TableProgressTest, NothingPendingUsesTheLastCommitWhenAheadOfResolved) {
  TableProgress p(Ts(100));
  p.Add(Ts(150), Ts(140));
  p.UpdateResolved(Ts(120));  // Older mark delivered before the event.
  p.Remove(Ts(150), Ts(140));
  EXPECT_EQ(p.Checkpoint(), Ts(149));
  p.UpdateResolved(Ts(160));
  EXPECT_EQ(p.Checkpoint(), Ts(160));
}

TEST(TableProgressTest, PiecesOfATransactionAreCounted) {
  TableProgress p(Ts(100));
  p.Add(Ts(110), Ts(105));
  p.Add(Ts(110), Ts(105));
  p.Remove(Ts(110), Ts(105));
  EXPECT_FALSE(p.Empty());
  EXPECT_EQ(p.Checkpoint(), Ts(109));
  p.Remove(Ts(110), Ts(105));
  EXPECT_TRUE(p.Empty());
  p.Remove(Ts(110), Ts(105));  // Unknown: ignored.
  EXPECT_EQ(p.Checkpoint(), Ts(109));
}

TEST(TableProgressTest, PassedBlockEventAndMonotonicity) {
  TableProgress p(Ts(100));
  p.UpdateResolved(Ts(119));
  p.Pass(Ts(120));  // A DDL at 120 written or passed.
  EXPECT_EQ(p.Checkpoint(), Ts(119));
  p.UpdateResolved(Ts(125));
  EXPECT_EQ(p.Checkpoint(), Ts(125));
  p.UpdateResolved(Ts(110));  // Lower marks are ignored.
  EXPECT_EQ(p.resolved_ts(), Ts(125));
  // An event below what was already reported cannot pull the checkpoint back.
  p.Add(Ts(121), Ts(118));
  EXPECT_EQ(p.Checkpoint(), Ts(125));
}

}  // namespace
}  // namespace sluice::dispatcher
