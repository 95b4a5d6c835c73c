#include "dispatchermanager/maintainer_fence.h"

#include <gtest/gtest.h>

namespace sluice::dispatchermanager {
namespace {

const NodeId kA("node-a");
const NodeId kB("node-b");
MaintainerEpoch E(uint64_t e) { return MaintainerEpoch(e); }

TEST(MaintainerFenceTest, FreshFenceAcceptsAnyBootstrap) {
  MaintainerFence fence;
  EXPECT_TRUE(fence.CanTakeOwnership(kA, E(0)));
  EXPECT_TRUE(fence.CanTakeOwnership(kB, E(7)));
  EXPECT_TRUE(fence.TryTakeOwnership(kA, E(7)));
  EXPECT_EQ(fence.owner(), kA);
  EXPECT_EQ(fence.epoch(), E(7));
}

TEST(MaintainerFenceTest, BootstrapNeedsEpochAtLeastTheKnownOne) {
  MaintainerFence fence;
  ASSERT_TRUE(fence.TryTakeOwnership(kA, E(5)));
  EXPECT_FALSE(fence.CanTakeOwnership(kA, E(4)));
  EXPECT_FALSE(fence.CanTakeOwnership(kB, E(4)));
  EXPECT_TRUE(fence.CanTakeOwnership(kB, E(6)));
  EXPECT_TRUE(fence.CanTakeOwnership(kA, E(6)));
}

TEST(MaintainerFenceTest, SameEpochOnlyFromTheSameNode) {
  MaintainerFence fence;
  ASSERT_TRUE(fence.TryTakeOwnership(kA, E(5)));
  EXPECT_TRUE(fence.CanTakeOwnership(kA, E(5)));
  EXPECT_FALSE(fence.TryTakeOwnership(kB, E(5)));
  EXPECT_EQ(fence.owner(), kA);
}

TEST(MaintainerFenceTest, EpochZeroBootstrapOnlyWhileKnownEpochIsZero) {
  MaintainerFence fence;
  ASSERT_TRUE(fence.TryTakeOwnership(kA, E(0)));
  EXPECT_TRUE(fence.CanTakeOwnership(kB, E(0)));  // Compatibility mode.
  ASSERT_TRUE(fence.TryTakeOwnership(kB, E(3)));
  EXPECT_FALSE(fence.CanTakeOwnership(kB, E(0)));
  EXPECT_FALSE(fence.CanTakeOwnership(kA, E(0)));
}

TEST(MaintainerFenceTest, RequestsMustMatchOwnerAndEpochExactly) {
  MaintainerFence fence;
  ASSERT_TRUE(fence.TryTakeOwnership(kA, E(5)));
  EXPECT_TRUE(fence.Allows(kA, E(5)));
  EXPECT_FALSE(fence.Allows(kB, E(5)));
  EXPECT_FALSE(fence.Allows(kA, E(4)));
  EXPECT_FALSE(fence.Allows(kA, E(6)));  // A newer epoch must bootstrap first.
  EXPECT_FALSE(fence.Allows(kA, E(0)));
}

TEST(MaintainerFenceTest, EpochZeroRequestsOnlyInCompatibilityMode) {
  MaintainerFence fresh;
  EXPECT_TRUE(fresh.Allows(kA, E(0)));
  MaintainerFence compat;
  ASSERT_TRUE(compat.TryTakeOwnership(kA, E(0)));
  EXPECT_TRUE(compat.Allows(kA, E(0)));
  EXPECT_FALSE(compat.Allows(kB, E(0)));
  EXPECT_FALSE(compat.Allows(kA, E(1)));
}

TEST(ClosedEpochsTest, ClosedEpochBlocksEqualLowerAndZero) {
  ClosedEpochs closed;
  EXPECT_FALSE(closed.BlocksBootstrap("cf", E(0)));
  closed.Record("cf", E(5), /*removed=*/false);
  EXPECT_TRUE(closed.BlocksBootstrap("cf", E(5)));
  EXPECT_TRUE(closed.BlocksBootstrap("cf", E(4)));
  EXPECT_TRUE(closed.BlocksBootstrap("cf", E(0)));
  EXPECT_FALSE(closed.BlocksBootstrap("cf", E(6)));
  EXPECT_FALSE(closed.BlocksBootstrap("other", E(1)));
}

TEST(ClosedEpochsTest, KeepsTheHighestClosedEpoch) {
  ClosedEpochs closed;
  closed.Record("cf", E(7), false);
  closed.Record("cf", E(3), true);
  EXPECT_EQ(closed.Get("cf"), E(7));
  closed.Record("cf", E(9), false);
  EXPECT_EQ(closed.Get("cf"), E(9));
}

TEST(ClosedEpochsTest, EpochZeroIsRecordedOnlyForRemoval) {
  ClosedEpochs closed;
  closed.Record("paused", E(0), /*removed=*/false);
  EXPECT_FALSE(closed.Get("paused").has_value());
  EXPECT_FALSE(closed.BlocksBootstrap("paused", E(0)));
  closed.Record("removed", E(0), /*removed=*/true);
  EXPECT_TRUE(closed.BlocksBootstrap("removed", E(0)));
  EXPECT_FALSE(closed.BlocksBootstrap("removed", E(1)));
}

}  // namespace
}  // namespace sluice::dispatchermanager
