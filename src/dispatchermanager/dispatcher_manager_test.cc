#include "dispatchermanager/dispatcher_manager.h"

#include <gtest/gtest.h>

#include <memory>

#include "dispatchermanager/test_fakes.h"

namespace sluice::dispatchermanager {
namespace {

using testing::Boot;
using testing::CloseReq;
using testing::Did;
using testing::FakeFactory;
using testing::FakeWorld;
using testing::PostBoot;
using testing::Sched;

const DispatcherId kTrigger = Did(9, 1);
const DispatcherId kTable = Did(1, 10);

class DispatcherManagerTest : public ::testing::Test {
 protected:
  DispatcherManagerTest()
      : world_(std::make_shared<FakeWorld>()),
        manager_("cf", /*redo_enabled=*/false, std::make_unique<FakeFactory>(world_)) {}

  // Owner a@5 with one table dispatcher whose removal is in flight.
  void StartRemoveUnderA() {
    ASSERT_TRUE(manager_.Bootstrap(Boot("a", 5)).ok());
    ASSERT_TRUE(manager_.Schedule(Sched("a", 5, ScheduleAction::kCreate, kTable)).ok());
    world_->HoldClose(true);
    Result<ScheduleResponse> removing =
        manager_.Schedule(Sched("a", 5, ScheduleAction::kRemove, kTable));
    ASSERT_TRUE(removing.ok());
    ASSERT_EQ(removing->state, ComponentState::kStopping);
  }

  std::shared_ptr<FakeWorld> world_;
  DispatcherManager manager_;
};

// Tests marked "Case:" pin down the cases listed in
// docs/design/maintainer-epoch-fencing.md, "Cases".

// Case: in-flight remove operators are kept when the bootstrap snapshot still
// reports the dispatcher they remove.
TEST_F(DispatcherManagerTest, StaleRemoveOperatorKeptWhileDispatcherReported) {
  StartRemoveUnderA();
  Result<BootstrapResponse> snapshot = manager_.Bootstrap(Boot("b", 6));
  ASSERT_TRUE(snapshot.ok());
  ASSERT_EQ(snapshot->spans.size(), 1u);
  EXPECT_EQ(snapshot->spans[0].config.id, kTable);
  EXPECT_EQ(snapshot->spans[0].state, ComponentState::kStopping);
  ASSERT_EQ(snapshot->operators.size(), 1u);
  EXPECT_EQ(snapshot->operators[0].action, ScheduleAction::kRemove);
  EXPECT_EQ(snapshot->operators[0].epoch, MaintainerEpoch(5));
}

// Case: stale operators of older epochs are replaced by the new owner's.
TEST_F(DispatcherManagerTest, StaleOperatorReplacedByNewOwner) {
  StartRemoveUnderA();
  ASSERT_TRUE(manager_.Bootstrap(Boot("b", 6)).ok());
  Result<ScheduleResponse> again =
      manager_.Schedule(Sched("b", 6, ScheduleAction::kRemove, kTable));
  ASSERT_TRUE(again.ok());
  std::vector<ScheduleRequest> ops = manager_.operators();
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].from, NodeId("b"));
  EXPECT_EQ(ops[0].epoch, MaintainerEpoch(6));
}

TEST_F(DispatcherManagerTest, FinishedRemoveLeavesSnapshot) {
  StartRemoveUnderA();
  world_->HoldClose(false);
  std::vector<DispatcherStatus> statuses = manager_.CollectStatuses();
  ASSERT_EQ(statuses.size(), 1u);
  EXPECT_EQ(statuses[0].state, ComponentState::kStopped);
  EXPECT_TRUE(world_->closed(kTable));
  Result<BootstrapResponse> snapshot = manager_.Bootstrap(Boot("b", 6));
  ASSERT_TRUE(snapshot.ok());
  EXPECT_TRUE(snapshot->spans.empty());
  EXPECT_TRUE(snapshot->operators.empty());
}

TEST_F(DispatcherManagerTest, OwnerOperatorsAreReported) {
  StartRemoveUnderA();
  Result<BootstrapResponse> snapshot = manager_.Bootstrap(Boot("a", 5));
  ASSERT_TRUE(snapshot.ok());
  ASSERT_EQ(snapshot->operators.size(), 1u);
  EXPECT_EQ(snapshot->operators[0].config.id, kTable);
}

TEST_F(DispatcherManagerTest, RemoveOfUnknownDispatcherKeepsNoOperator) {
  ASSERT_TRUE(manager_.Bootstrap(Boot("a", 5)).ok());
  Result<ScheduleResponse> r = manager_.Schedule(Sched("a", 5, ScheduleAction::kRemove, kTable));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->state, ComponentState::kStopped);
  EXPECT_TRUE(manager_.operators().empty());
}

TEST_F(DispatcherManagerTest, CreateIsIdempotent) {
  ASSERT_TRUE(manager_.Bootstrap(Boot("a", 5)).ok());
  ASSERT_TRUE(manager_.Schedule(Sched("a", 5, ScheduleAction::kCreate, kTable)).ok());
  ASSERT_TRUE(manager_.Schedule(Sched("a", 5, ScheduleAction::kCreate, kTable)).ok());
  EXPECT_EQ(world_->CountEvents(testing::FakeEvent::Kind::kCreate), 1);
}

TEST_F(DispatcherManagerTest, CreateFailureIsReturnedAndLeavesNoOperator) {
  ASSERT_TRUE(manager_.Bootstrap(Boot("a", 5)).ok());
  world_->FailNextCreate(IoError("sink down"));
  Result<ScheduleResponse> r = manager_.Schedule(Sched("a", 5, ScheduleAction::kCreate, kTable));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kIoError);
  EXPECT_TRUE(manager_.operators().empty());
}

// Case: a fenced post-bootstrap must release the fence mutex.
TEST_F(DispatcherManagerTest, PostBootstrapWhenFencedReleasesFenceLock) {
  ASSERT_TRUE(manager_.Bootstrap(Boot("a", 5, kTrigger)).ok());
  manager_.LocalFence();
  Status st = manager_.PostBootstrap(PostBoot("a", 5, kTrigger));
  EXPECT_TRUE(IsWritePathClosed(st)) << st.ToString();
  EXPECT_TRUE(manager_.FenceLockIsFree());
  EXPECT_EQ(manager_.epoch(), MaintainerEpoch(5));  // Takes the lock again.
}

TEST_F(DispatcherManagerTest, FencedDuringPostBootstrapReleasesFenceLock) {
  ASSERT_TRUE(manager_.Bootstrap(Boot("a", 5, kTrigger)).ok());
  world_->SetInitializeHook([this] { manager_.LocalFence(); });
  Status st = manager_.PostBootstrap(PostBoot("a", 5, kTrigger));
  EXPECT_TRUE(IsWritePathClosed(st)) << st.ToString();
  EXPECT_TRUE(world_->write_path_closed());
  EXPECT_TRUE(manager_.FenceLockIsFree());
  EXPECT_FALSE(manager_.CollectStatuses().empty());
}

TEST_F(DispatcherManagerTest, EveryRefusalReleasesFenceLock) {
  ASSERT_TRUE(manager_.Bootstrap(Boot("a", 5, kTrigger)).ok());
  EXPECT_FALSE(manager_.Bootstrap(Boot("b", 4)).ok());
  EXPECT_TRUE(manager_.FenceLockIsFree());
  EXPECT_FALSE(manager_.Bootstrap(Boot("a", 6, Did(9, 2))).ok());
  EXPECT_TRUE(manager_.FenceLockIsFree());
  EXPECT_FALSE(manager_.PostBootstrap(PostBoot("b", 5, kTrigger)).ok());
  EXPECT_TRUE(manager_.FenceLockIsFree());
  EXPECT_FALSE(manager_.Schedule(Sched("b", 5, ScheduleAction::kCreate, kTable)).ok());
  EXPECT_TRUE(manager_.FenceLockIsFree());
  EXPECT_FALSE(manager_.Close(CloseReq("b", 5)).ok());
  EXPECT_TRUE(manager_.FenceLockIsFree());
}

TEST_F(DispatcherManagerTest, CloseWaitsForDispatchersThenRefusesEverything) {
  ASSERT_TRUE(manager_.Bootstrap(Boot("a", 5, kTrigger)).ok());
  ASSERT_TRUE(manager_.Schedule(Sched("a", 5, ScheduleAction::kCreate, kTable)).ok());
  world_->HoldClose(true);
  Result<bool> first = manager_.Close(CloseReq("a", 5));
  ASSERT_TRUE(first.ok());
  EXPECT_FALSE(*first);
  world_->HoldClose(false);
  Result<bool> second = manager_.Close(CloseReq("a", 5));
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(*second);
  EXPECT_TRUE(world_->closed(kTrigger));
  EXPECT_TRUE(world_->closed(kTable));
  EXPECT_TRUE(IsWritePathClosed(manager_.Bootstrap(Boot("a", 6)).status()));
}

TEST_F(DispatcherManagerTest, RemovedTriggerCanBeReplacedByTheNextOwner) {
  ASSERT_TRUE(manager_.Bootstrap(Boot("a", 5, kTrigger)).ok());
  ScheduleRequest remove = Sched("a", 5, ScheduleAction::kRemove, kTrigger);
  ASSERT_TRUE(manager_.Schedule(remove).ok());
  EXPECT_FALSE(manager_.trigger_id(DispatcherMode::kDefault).has_value());
  ASSERT_TRUE(manager_.Bootstrap(Boot("b", 6, Did(9, 2))).ok());
  EXPECT_EQ(manager_.trigger_id(DispatcherMode::kDefault), Did(9, 2));
}

// A newer generation on the same node (same trigger id) bootstraps while the
// old owner's close is still draining: it is refused (retryable) until every
// dispatcher has closed, then takes over an empty manager and gets a fresh
// trigger instead of inheriting the half-closed one.
TEST_F(DispatcherManagerTest, TakeoverWaitsUntilTheOldOwnersCloseHasDrained) {
  ASSERT_TRUE(manager_.Bootstrap(Boot("a", 5, kTrigger)).ok());
  ASSERT_TRUE(manager_.Schedule(Sched("a", 5, ScheduleAction::kCreate, kTable)).ok());
  world_->HoldClose(true);
  Result<bool> closing = manager_.Close(CloseReq("a", 5));
  ASSERT_TRUE(closing.ok());
  ASSERT_FALSE(*closing);
  EXPECT_EQ(manager_.Bootstrap(Boot("a", 7, kTrigger)).status().code(), Code::kAborted);
  EXPECT_EQ(manager_.epoch(), MaintainerEpoch(5));  // Ownership did not move.
  world_->HoldClose(false);
  manager_.CollectStatuses();  // Finishes the drained removals.
  Result<BootstrapResponse> taken = manager_.Bootstrap(Boot("a", 7, kTrigger));
  ASSERT_TRUE(taken.ok()) << taken.status().ToString();
  EXPECT_EQ(manager_.epoch(), MaintainerEpoch(7));
  EXPECT_EQ(manager_.trigger_id(DispatcherMode::kDefault), kTrigger);
  ASSERT_EQ(taken->spans.size(), 1u);  // Only the new trigger.
  EXPECT_EQ(taken->spans[0].state, ComponentState::kWorking);
  EXPECT_TRUE(manager_.PostBootstrap(PostBoot("a", 7, kTrigger)).ok());
}

}  // namespace
}  // namespace sluice::dispatchermanager
