#include "dispatchermanager/dispatcher_orchestrator.h"

#include <gtest/gtest.h>

#include "dispatchermanager/test_fakes.h"

namespace sluice::dispatchermanager {
namespace {

using testing::Boot;
using testing::CloseReq;
using testing::Did;
using testing::FakeEvent;
using testing::FakeProvider;
using testing::LogCapture;
using testing::PostBoot;
using testing::Sched;

const DispatcherId kT1 = Did(9, 1);
const DispatcherId kT2 = Did(9, 2);
const DispatcherId kR1 = Did(8, 1);
const DispatcherId kR2 = Did(8, 2);
const DispatcherId kTable = Did(1, 10);

BootstrapRequest RedoBoot(const std::string& node, uint64_t epoch, std::optional<DispatcherId> t,
                          std::optional<DispatcherId> r) {
  BootstrapRequest req = Boot(node, epoch, t);
  req.redo_enabled = true;
  req.redo_trigger_id = r;
  return req;
}

class OrchestratorTest : public ::testing::Test {
 protected:
  // Expects a response with status code `code`.
  template <typename R>
  static void ExpectCode(const std::optional<R>& response, Code code) {
    ASSERT_TRUE(response.has_value());
    EXPECT_EQ(response->status.code(), code) << response->status.ToString();
  }
  std::shared_ptr<DispatcherManager> Manager() { return orch_.manager("cf"); }
  std::shared_ptr<testing::FakeWorld> World() { return provider_.world("cf"); }

  FakeProvider provider_;
  DispatcherOrchestrator orch_{&provider_};
};

TEST_F(OrchestratorTest, BootstrapCreatesManagerAndTableTrigger) {
  std::optional<BootstrapResponse> r = orch_.HandleBootstrap(Boot("a", 5, kT1));
  ExpectCode(r, Code::kOk);
  EXPECT_EQ(r->epoch, MaintainerEpoch(5));
  EXPECT_EQ(r->checkpoint_ts, Ts(100));
  ASSERT_EQ(r->spans.size(), 1u);
  EXPECT_EQ(r->spans[0].config.table_id, TableId(event::kTableTriggerTableId));
  EXPECT_TRUE(World()->created(kT1));
  EXPECT_EQ(Manager()->owner(), NodeId("a"));
}

// Tests marked "Case:" pin down the cases listed in
// docs/design/maintainer-epoch-fencing.md, "Cases".

// Case: a same-epoch bootstrap from a different node is rejected.
TEST_F(OrchestratorTest, SameEpochBootstrapFromDifferentNodeRejected) {
  ExpectCode(orch_.HandleBootstrap(Boot("a", 5)), Code::kOk);
  ExpectCode(orch_.HandleBootstrap(Boot("b", 5)), Code::kStaleOwner);
  EXPECT_EQ(Manager()->owner(), NodeId("a"));
  ExpectCode(orch_.HandleBootstrap(Boot("a", 5)), Code::kOk);  // Resend from the owner.
}

TEST_F(OrchestratorTest, LowerEpochBootstrapRejected) {
  ExpectCode(orch_.HandleBootstrap(Boot("a", 5)), Code::kOk);
  ExpectCode(orch_.HandleBootstrap(Boot("b", 4)), Code::kStaleOwner);
  ExpectCode(orch_.HandleBootstrap(Boot("b", 6)), Code::kOk);
  ExpectCode(orch_.HandleBootstrap(Boot("a", 5)), Code::kStaleOwner);
  EXPECT_EQ(Manager()->epoch(), MaintainerEpoch(6));
}

// Case: epoch 0 is the compatibility case only while the known epoch is 0.
TEST_F(OrchestratorTest, EpochZeroCompatOnlyWhileKnownEpochIsZero) {
  ExpectCode(orch_.HandleBootstrap(Boot("a", 0)), Code::kOk);
  ExpectCode(orch_.HandleBootstrap(Boot("b", 0)), Code::kOk);
  ExpectCode(orch_.HandleSchedule(Sched("b", 0, ScheduleAction::kCreate, kTable)), Code::kOk);
  ExpectCode(orch_.HandleSchedule(Sched("a", 0, ScheduleAction::kRemove, kTable)),
             Code::kStaleOwner);
  ExpectCode(orch_.HandleBootstrap(Boot("b", 3)), Code::kOk);
  ExpectCode(orch_.HandleBootstrap(Boot("a", 0)), Code::kStaleOwner);
  ExpectCode(orch_.HandleBootstrap(Boot("b", 0)), Code::kStaleOwner);
  ExpectCode(orch_.HandleSchedule(Sched("b", 0, ScheduleAction::kRemove, kTable)),
             Code::kStaleOwner);
  EXPECT_EQ(Manager()->epoch(), MaintainerEpoch(3));
}

TEST_F(OrchestratorTest, OtherRequestsMustMatchOwnerAndEpochExactly) {
  ExpectCode(orch_.HandleBootstrap(Boot("a", 5, kT1)), Code::kOk);
  ExpectCode(orch_.HandleSchedule(Sched("a", 4, ScheduleAction::kCreate, kTable)),
             Code::kStaleOwner);
  ExpectCode(orch_.HandleSchedule(Sched("b", 5, ScheduleAction::kCreate, kTable)),
             Code::kStaleOwner);
  ExpectCode(orch_.HandleSchedule(Sched("a", 6, ScheduleAction::kCreate, kTable)),
             Code::kStaleOwner);
  ExpectCode(orch_.HandlePostBootstrap(PostBoot("b", 5, kT1)), Code::kStaleOwner);
  EXPECT_FALSE(World()->created(kTable));
  ExpectCode(orch_.HandleSchedule(Sched("a", 5, ScheduleAction::kCreate, kTable)), Code::kOk);
  EXPECT_TRUE(World()->created(kTable));
}

// Case: a closed epoch cannot be recreated.
TEST_F(OrchestratorTest, ClosedEpochCannotBeRecreated) {
  ExpectCode(orch_.HandleBootstrap(Boot("a", 5)), Code::kOk);
  std::optional<CloseResponse> closed = orch_.HandleClose(CloseReq("a", 5));
  ASSERT_TRUE(closed.has_value());
  EXPECT_TRUE(closed->success);
  EXPECT_EQ(Manager(), nullptr);
  EXPECT_EQ(orch_.closed_epoch("cf"), MaintainerEpoch(5));
  ExpectCode(orch_.HandleBootstrap(Boot("a", 5)), Code::kStaleOwner);
  ExpectCode(orch_.HandleBootstrap(Boot("b", 4)), Code::kStaleOwner);
  ExpectCode(orch_.HandleBootstrap(Boot("b", 0)), Code::kStaleOwner);
  EXPECT_EQ(Manager(), nullptr);
  EXPECT_EQ(provider_.opens(), 1);
  ExpectCode(orch_.HandleBootstrap(Boot("b", 6)), Code::kOk);
  EXPECT_EQ(provider_.opens(), 2);
}

TEST_F(OrchestratorTest, CloseOfUnknownChangefeedRecordsTombstone) {
  std::optional<CloseResponse> closed = orch_.HandleClose(CloseReq("a", 3));
  ASSERT_TRUE(closed.has_value());
  EXPECT_TRUE(closed->success);
  ExpectCode(orch_.HandleBootstrap(Boot("a", 3)), Code::kStaleOwner);
  // Epoch 0 has no order: a pause at epoch 0 leaves no tombstone.
  ASSERT_TRUE(orch_.HandleClose(CloseReq("a", 0, false, "old")).has_value());
  EXPECT_FALSE(orch_.closed_epoch("old").has_value());
  ExpectCode(orch_.HandleBootstrap(Boot("a", 0, std::nullopt, "old")), Code::kOk);
}

TEST_F(OrchestratorTest, StaleCloseAcknowledgedWithoutClosing) {
  ExpectCode(orch_.HandleBootstrap(Boot("a", 5)), Code::kOk);
  ExpectCode(orch_.HandleBootstrap(Boot("b", 6)), Code::kOk);
  std::optional<CloseResponse> closed = orch_.HandleClose(CloseReq("a", 5, true));
  ASSERT_TRUE(closed.has_value());
  EXPECT_TRUE(closed->success);
  EXPECT_TRUE(closed->superseded);
  ASSERT_NE(Manager(), nullptr);
  EXPECT_EQ(Manager()->owner(), NodeId("b"));
}

TEST_F(OrchestratorTest, CloseIsRetriedUntilDispatchersClosed) {
  ExpectCode(orch_.HandleBootstrap(Boot("a", 5, kT1)), Code::kOk);
  World()->HoldClose(true);
  std::optional<CloseResponse> first = orch_.HandleClose(CloseReq("a", 5));
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(first->success);
  EXPECT_NE(Manager(), nullptr);
  World()->HoldClose(false);
  std::optional<CloseResponse> second = orch_.HandleClose(CloseReq("a", 5));
  ASSERT_TRUE(second.has_value());
  EXPECT_TRUE(second->success);
  EXPECT_EQ(Manager(), nullptr);
}

TEST_F(OrchestratorTest, HigherEpochReusesManagerWithSameTrigger) {
  ExpectCode(orch_.HandleBootstrap(Boot("a", 5, kT1)), Code::kOk);
  ExpectCode(orch_.HandleBootstrap(Boot("a", 6, kT1)), Code::kOk);
  EXPECT_EQ(provider_.opens(), 1);
  EXPECT_EQ(World()->CountEvents(FakeEvent::Kind::kCreate), 1);
  EXPECT_EQ(Manager()->epoch(), MaintainerEpoch(6));
}

// Case: a mismatched table trigger id on reuse is rejected, never replaced.
TEST_F(OrchestratorTest, MismatchedTriggerIdOnReuseRejected) {
  ExpectCode(orch_.HandleBootstrap(Boot("a", 5, kT1)), Code::kOk);
  ExpectCode(orch_.HandleBootstrap(Boot("b", 6, kT2)), Code::kAborted);
  EXPECT_FALSE(World()->created(kT2));
  EXPECT_FALSE(World()->closed(kT1));
  EXPECT_EQ(Manager()->trigger_id(DispatcherMode::kDefault), kT1);
  // Ownership did not move.
  EXPECT_EQ(Manager()->epoch(), MaintainerEpoch(5));
  ExpectCode(orch_.HandleSchedule(Sched("a", 5, ScheduleAction::kCreate, kTable)), Code::kOk);
}

// Case: the same rule for the redo table trigger.
TEST_F(OrchestratorTest, MismatchedRedoTriggerIdOnReuseRejected) {
  ExpectCode(orch_.HandleBootstrap(RedoBoot("a", 5, kT1, kR1)), Code::kOk);
  ExpectCode(orch_.HandleBootstrap(RedoBoot("b", 6, kT1, kR2)), Code::kAborted);
  EXPECT_FALSE(World()->created(kR2));
  EXPECT_EQ(Manager()->trigger_id(DispatcherMode::kRedo), kR1);
  EXPECT_EQ(Manager()->epoch(), MaintainerEpoch(5));
  std::optional<BootstrapResponse> same = orch_.HandleBootstrap(RedoBoot("b", 6, kT1, kR1));
  ExpectCode(same, Code::kOk);
  EXPECT_EQ(same->redo_checkpoint_ts, Ts(100));
}

// Case: a bootstrap naming no trigger is rejected while a trigger exists.
TEST_F(OrchestratorTest, BootstrapNamingNoTriggerRejectedWhileTriggerExists) {
  ExpectCode(orch_.HandleBootstrap(Boot("a", 5, kT1)), Code::kOk);
  ExpectCode(orch_.HandleBootstrap(Boot("b", 6)), Code::kAborted);
  EXPECT_EQ(Manager()->owner(), NodeId("a"));
}

// Case: a newer generation that names the node's trigger in
// replace_trigger_id takes the node over: the fence moves to it first (the
// old owner is stale from then on), the old trigger closes (the bootstrap is
// refused until it has), and only then is the new trigger created.
TEST_F(OrchestratorTest, ANewerGenerationReplacesTheTriggerItNamesAfterItCloses) {
  ExpectCode(orch_.HandleBootstrap(Boot("a", 5, kT1)), Code::kOk);
  std::optional<BootstrapResponse> refused = orch_.HandleBootstrap(Boot("b", 6, kT2));
  ExpectCode(refused, Code::kAborted);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->existing_trigger_id, kT1);  // What the newer one may replace.

  BootstrapRequest replace = Boot("b", 6, kT2);
  replace.replace_trigger_id = kT1;
  World()->HoldClose(true);  // The old trigger has a flush in flight.
  ExpectCode(orch_.HandleBootstrap(replace), Code::kAborted);
  EXPECT_EQ(Manager()->epoch(), MaintainerEpoch(6));  // Fenced first...
  ExpectCode(orch_.HandleSchedule(Sched("a", 5, ScheduleAction::kCreate, kTable)),
             Code::kStaleOwner);
  EXPECT_FALSE(World()->created(kT2));  // ...and no second trigger meanwhile.
  World()->HoldClose(false);
  std::optional<BootstrapResponse> taken = orch_.HandleBootstrap(replace);
  ExpectCode(taken, Code::kOk);
  EXPECT_TRUE(World()->closed(kT1));
  EXPECT_TRUE(World()->created(kT2));
  EXPECT_EQ(Manager()->trigger_id(DispatcherMode::kDefault), kT2);
  EXPECT_EQ(provider_.opens(), 1);  // The same manager, reused.
}

// Case: a trigger being replaced is never adopted by a still newer
// generation naming its id: that bootstrap waits for the close and then
// gets a fresh trigger, never a closed one.
TEST_F(OrchestratorTest, ATriggerBeingReplacedIsNotAdopted) {
  ExpectCode(orch_.HandleBootstrap(Boot("a", 5, kT1)), Code::kOk);
  BootstrapRequest replace = Boot("b", 6);
  replace.replace_trigger_id = kT1;
  World()->HoldClose(true);
  ExpectCode(orch_.HandleBootstrap(replace), Code::kAborted);
  ExpectCode(orch_.HandleBootstrap(Boot("a", 7, kT1)), Code::kAborted);
  World()->HoldClose(false);
  ExpectCode(orch_.HandleBootstrap(Boot("a", 7, kT1)), Code::kOk);
  EXPECT_TRUE(World()->closed(kT1));
  EXPECT_EQ(World()->CountEvents(FakeEvent::Kind::kCreate), 2);  // kT1 made afresh.
  EXPECT_EQ(Manager()->trigger_id(DispatcherMode::kDefault), kT1);
  EXPECT_EQ(Manager()->epoch(), MaintainerEpoch(7));
}

// Case: a generation naming no trigger (its maintainer moved to another
// node) replaces this node's old trigger the same way.
TEST_F(OrchestratorTest, AGenerationNamingNoTriggerReplacesTheOldOne) {
  ExpectCode(orch_.HandleBootstrap(Boot("a", 5, kT1)), Code::kOk);
  BootstrapRequest replace = Boot("b", 6);
  replace.replace_trigger_id = kT1;
  ExpectCode(orch_.HandleBootstrap(replace), Code::kOk);
  EXPECT_TRUE(World()->closed(kT1));
  EXPECT_FALSE(Manager()->trigger_id(DispatcherMode::kDefault).has_value());
  EXPECT_EQ(Manager()->owner(), NodeId("b"));
}

// Case: only a newer epoch than the trigger's, naming exactly it, replaces
// it; epoch 0 (no epochs) never does.
TEST_F(OrchestratorTest, AReplacementMustBeNewerAndNameTheTrigger) {
  ExpectCode(orch_.HandleBootstrap(Boot("a", 5, kT1)), Code::kOk);
  BootstrapRequest wrong = Boot("b", 6, kT2);
  wrong.replace_trigger_id = kR1;  // Not the trigger here.
  ExpectCode(orch_.HandleBootstrap(wrong), Code::kAborted);
  BootstrapRequest same_epoch = Boot("a", 5, kT2);
  same_epoch.replace_trigger_id = kT1;
  ExpectCode(orch_.HandleBootstrap(same_epoch), Code::kAborted);
  EXPECT_FALSE(World()->closed(kT1));
  EXPECT_EQ(Manager()->epoch(), MaintainerEpoch(5));
}

// Case: a bootstrap naming no trigger is accepted when there is none.
TEST_F(OrchestratorTest, BootstrapNamingNoTriggerAcceptedWithoutTrigger) {
  ExpectCode(orch_.HandleBootstrap(Boot("a", 5)), Code::kOk);
  ExpectCode(orch_.HandleBootstrap(Boot("b", 6)), Code::kOk);
  EXPECT_EQ(Manager()->owner(), NodeId("b"));
  EXPECT_EQ(World()->CountEvents(FakeEvent::Kind::kCreate), 0);
}

TEST_F(OrchestratorTest, BootstrapNamingNoRedoTriggerRejectedWhileRedoTriggerExists) {
  ExpectCode(orch_.HandleBootstrap(RedoBoot("a", 5, kT1, kR1)), Code::kOk);
  ExpectCode(orch_.HandleBootstrap(RedoBoot("b", 6, kT1, std::nullopt)), Code::kAborted);
  EXPECT_EQ(Manager()->owner(), NodeId("a"));
}

TEST_F(OrchestratorTest, PostBootstrapInitializesTrigger) {
  ExpectCode(orch_.HandleBootstrap(Boot("a", 5, kT1)), Code::kOk);
  std::optional<PostBootstrapResponse> r = orch_.HandlePostBootstrap(PostBoot("a", 5, kT1));
  ExpectCode(r, Code::kOk);
  EXPECT_EQ(r->table_trigger_id, kT1);
  ASSERT_EQ(World()->initializations().size(), 1u);
  EXPECT_EQ(World()->initializations()[0][0].tables[0].name, "t");
}

TEST_F(OrchestratorTest, PostBootstrapRefusals) {
  ExpectCode(orch_.HandlePostBootstrap(PostBoot("a", 5, kT1)), Code::kNotFound);
  ExpectCode(orch_.HandleBootstrap(Boot("a", 5)), Code::kOk);
  // The fence is checked first: a stale sender learns that it is stale.
  ExpectCode(orch_.HandlePostBootstrap(PostBoot("b", 5, kT1)), Code::kStaleOwner);
  ExpectCode(orch_.HandlePostBootstrap(PostBoot("a", 5, kT1)), Code::kNotFound);
  ExpectCode(orch_.HandleBootstrap(Boot("a", 5, kT1)), Code::kOk);
  ExpectCode(orch_.HandlePostBootstrap(PostBoot("a", 5, kT2)), Code::kAborted);
  World()->FailInitialize(IoError("schema store"));
  ExpectCode(orch_.HandlePostBootstrap(PostBoot("a", 5, kT1)), Code::kIoError);
}

// Case: a fenced post-bootstrap releases every lock it took.
TEST_F(OrchestratorTest, FencedPostBootstrapReleasesLocks) {
  ExpectCode(orch_.HandleBootstrap(Boot("a", 5, kT1)), Code::kOk);
  World()->SetInitializeHook([this] { orch_.LocalFence(); });
  EXPECT_FALSE(orch_.HandlePostBootstrap(PostBoot("a", 5, kT1)).has_value());
  EXPECT_TRUE(World()->write_path_closed());
  EXPECT_TRUE(Manager()->FenceLockIsFree());
  EXPECT_FALSE(Manager()->CollectStatuses().empty());  // Would block on a leaked lock.
  EXPECT_FALSE(orch_.HandleClose(CloseReq("a", 5)).has_value());
}

// Case: write path closed during shutdown is clean: info, no response.
TEST_F(OrchestratorTest, WritePathClosedWhileCreatingTriggerIsQuiet) {
  LogCapture log;
  World()->CloseWritePath();
  EXPECT_FALSE(orch_.HandleBootstrap(Boot("a", 5, kT1)).has_value());
  EXPECT_EQ(Manager(), nullptr);
  std::vector<std::string> lines =
      log.LinesWith("write path closed while creating table trigger dispatcher");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("[info]"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("kind=table_trigger_event"), std::string::npos) << lines[0];
  EXPECT_TRUE(log.LinesWith("[error]").empty()) << log.Output();
}

TEST_F(OrchestratorTest, WritePathClosedWhileCreatingTriggerOnReuseIsQuiet) {
  LogCapture log;
  ExpectCode(orch_.HandleBootstrap(RedoBoot("a", 5, std::nullopt, std::nullopt)), Code::kOk);
  World()->CloseWritePath();
  EXPECT_FALSE(orch_.HandleBootstrap(RedoBoot("b", 6, std::nullopt, kR1)).has_value());
  std::vector<std::string> lines =
      log.LinesWith("write path closed while creating table trigger dispatcher");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("kind=table_trigger_redo"), std::string::npos) << lines[0];
  EXPECT_TRUE(log.LinesWith("[error]").empty()) << log.Output();
}

TEST_F(OrchestratorTest, WritePathClosedDuringPostBootstrapOrScheduleIsQuiet) {
  LogCapture log;
  ExpectCode(orch_.HandleBootstrap(Boot("a", 5, kT1)), Code::kOk);
  World()->CloseWritePath();
  EXPECT_FALSE(orch_.HandlePostBootstrap(PostBoot("a", 5, kT1)).has_value());
  EXPECT_FALSE(orch_.HandleSchedule(Sched("a", 5, ScheduleAction::kCreate, kTable)).has_value());
  EXPECT_TRUE(log.LinesWith("[error]").empty()) << log.Output();
  EXPECT_TRUE(Manager()->operators().empty());
}

TEST_F(OrchestratorTest, WritePathClosedWhileOpeningSinkIsQuiet) {
  provider_.FailNextOpen(WritePathClosed("node stopping"));
  EXPECT_FALSE(orch_.HandleBootstrap(Boot("a", 5, kT1)).has_value());
  EXPECT_EQ(Manager(), nullptr);
  provider_.FailNextOpen(IoError("cannot reach downstream"));
  ExpectCode(orch_.HandleBootstrap(Boot("a", 5, kT1)), Code::kIoError);
  EXPECT_EQ(Manager(), nullptr);
}

TEST_F(OrchestratorTest, TriggerCreationErrorIsReturnedToMaintainer) {
  World()->FailNextCreate(IoError("sink down"));
  ExpectCode(orch_.HandleBootstrap(Boot("a", 5, kT1)), Code::kIoError);
  EXPECT_EQ(Manager(), nullptr);
  ExpectCode(orch_.HandleBootstrap(Boot("a", 5, kT1)), Code::kOk);
}

// Seed nit: log messages are constant; names go into fields.
TEST_F(OrchestratorTest, LogMessagesAreConstantWithFields) {
  LogCapture log;
  ExpectCode(orch_.HandleBootstrap(RedoBoot("a", 5, kT1, kR1)), Code::kOk);
  ExpectCode(orch_.HandleBootstrap(RedoBoot("b", 6, kT2, kR1)), Code::kAborted);
  ExpectCode(orch_.HandleBootstrap(RedoBoot("b", 6, kT1, kR2)), Code::kAborted);
  const std::string message = "table trigger dispatcher id mismatch during bootstrap; ";
  std::vector<std::string> lines = log.LinesWith(message);
  ASSERT_EQ(lines.size(), 2u) << log.Output();
  EXPECT_NE(lines[0].find(message + "changefeed=cf kind=table_trigger_event expected=9-2 "
                                    "actual=9-1"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[1].find(message + "changefeed=cf kind=table_trigger_redo expected=8-2 "
                                    "actual=8-1"),
            std::string::npos)
      << lines[1];
}

// Case: several maintainer generations in a row on one node.
TEST_F(OrchestratorTest, SeveralMaintainerGenerationsOnOneNode) {
  // Generation 1 lives on this node and owns the table trigger.
  ExpectCode(orch_.HandleBootstrap(Boot("a", 1, kT1)), Code::kOk);
  ExpectCode(orch_.HandlePostBootstrap(PostBoot("a", 1, kT1)), Code::kOk);
  ExpectCode(orch_.HandleSchedule(Sched("a", 1, ScheduleAction::kCreate, kTable)), Code::kOk);
  // Generation 2 moved away: refused until generation 1's trigger is gone.
  ExpectCode(orch_.HandleBootstrap(Boot("b", 2)), Code::kAborted);
  ExpectCode(orch_.HandleSchedule(Sched("a", 1, ScheduleAction::kRemove, kT1)), Code::kOk);
  std::optional<BootstrapResponse> gen2 = orch_.HandleBootstrap(Boot("b", 2));
  ExpectCode(gen2, Code::kOk);
  ASSERT_EQ(gen2->spans.size(), 1u);
  EXPECT_EQ(gen2->spans[0].config.id, kTable);
  ExpectCode(orch_.HandleSchedule(Sched("a", 1, ScheduleAction::kRemove, kTable)),
             Code::kStaleOwner);
  // Generation 3 comes back to this node with a new trigger.
  ExpectCode(orch_.HandleBootstrap(Boot("a", 3, kT2)), Code::kOk);
  ExpectCode(orch_.HandlePostBootstrap(PostBoot("a", 3, kT2)), Code::kOk);
  ExpectCode(orch_.HandleSchedule(Sched("b", 2, ScheduleAction::kRemove, kTable)),
             Code::kStaleOwner);
  ExpectCode(orch_.HandleBootstrap(Boot("a", 1, kT1)), Code::kStaleOwner);
  EXPECT_TRUE(World()->created(kT2));
  EXPECT_FALSE(World()->closed(kTable));
  // Generation 3 closes; late generations stay closed, generation 4 starts.
  ASSERT_TRUE(orch_.HandleClose(CloseReq("a", 3))->success);
  ExpectCode(orch_.HandleBootstrap(Boot("b", 2)), Code::kStaleOwner);
  ExpectCode(orch_.HandleBootstrap(Boot("a", 3, kT2)), Code::kStaleOwner);
  ExpectCode(orch_.HandleBootstrap(Boot("b", 4)), Code::kOk);
  EXPECT_EQ(Manager()->owner(), NodeId("b"));
  EXPECT_EQ(provider_.opens(), 2);
}

TEST_F(OrchestratorTest, BadInputIsATypedError) {
  ExpectCode(orch_.HandleBootstrap(Boot("a", 5, std::nullopt, "")), Code::kInvalidArgument);
  ExpectCode(orch_.HandleBootstrap(Boot("", 5)), Code::kInvalidArgument);
  ExpectCode(orch_.HandleBootstrap(Boot("a", 5, DispatcherId{})), Code::kInvalidArgument);
  ExpectCode(orch_.HandleBootstrap(RedoBoot("a", 5, kT1, DispatcherId{})), Code::kInvalidArgument);
  BootstrapRequest redo_off = Boot("a", 5, kT1);
  redo_off.redo_trigger_id = kR1;
  ExpectCode(orch_.HandleBootstrap(redo_off), Code::kInvalidArgument);
  ExpectCode(orch_.HandleSchedule(Sched("a", 5, ScheduleAction::kCreate, kTable)), Code::kNotFound);
  ExpectCode(orch_.HandlePostBootstrap(PostBoot("a", 5, DispatcherId{})), Code::kInvalidArgument);
  ExpectCode(orch_.HandleClose(CloseReq("", 5)), Code::kInvalidArgument);
  EXPECT_EQ(provider_.opens(), 0);

  ExpectCode(orch_.HandleBootstrap(Boot("a", 5, kT1)), Code::kOk);
  ExpectCode(orch_.HandleSchedule(Sched("a", 5, ScheduleAction::kCreate, DispatcherId{})),
             Code::kInvalidArgument);
  ScheduleRequest bad_action = Sched("a", 5, ScheduleAction::kCreate, kTable);
  bad_action.action = static_cast<ScheduleAction>(7);
  ExpectCode(orch_.HandleSchedule(bad_action), Code::kInvalidArgument);
  ScheduleRequest redo = Sched("a", 5, ScheduleAction::kCreate, kTable);
  redo.config.mode = DispatcherMode::kRedo;
  ExpectCode(orch_.HandleSchedule(redo), Code::kInvalidArgument);
  ExpectCode(orch_.HandleBootstrap(Boot("a", 0, kT1)), Code::kStaleOwner);
  ExpectCode(orch_.HandleSchedule(Sched("a", 0, ScheduleAction::kCreate, kTable)),
             Code::kStaleOwner);
}

TEST_F(OrchestratorTest, LocalFenceClosesWritePathsAndDropsRequests) {
  ExpectCode(orch_.HandleBootstrap(Boot("a", 5, kT1)), Code::kOk);
  ExpectCode(orch_.HandleBootstrap(Boot("a", 5, std::nullopt, "other")), Code::kOk);
  orch_.LocalFence();
  orch_.LocalFence();  // Idempotent.
  EXPECT_TRUE(World()->write_path_closed());
  EXPECT_TRUE(provider_.world("other")->write_path_closed());
  EXPECT_TRUE(Manager()->fenced());
  EXPECT_FALSE(orch_.HandleBootstrap(Boot("a", 6, kT1)).has_value());
  EXPECT_FALSE(orch_.HandleSchedule(Sched("a", 5, ScheduleAction::kCreate, kTable)).has_value());
  EXPECT_FALSE(orch_.HandlePostBootstrap(PostBoot("a", 5, kT1)).has_value());
  EXPECT_FALSE(orch_.HandleClose(CloseReq("a", 5)).has_value());
  EXPECT_FALSE(World()->created(kTable));
}

TEST_F(OrchestratorTest, ChangefeedsAreIndependent) {
  ExpectCode(orch_.HandleBootstrap(Boot("a", 5, kT1, "cf1")), Code::kOk);
  ExpectCode(orch_.HandleBootstrap(Boot("b", 2, kT2, "cf2")), Code::kOk);
  ASSERT_TRUE(orch_.HandleClose(CloseReq("a", 5, true, "cf1"))->success);
  ExpectCode(orch_.HandleSchedule(Sched("b", 2, ScheduleAction::kCreate, kTable, "cf2")),
             Code::kOk);
  EXPECT_EQ(orch_.manager("cf1"), nullptr);
  EXPECT_FALSE(orch_.closed_epoch("cf2").has_value());
}

}  // namespace
}  // namespace sluice::dispatchermanager
