#include <gtest/gtest.h>

#include "dispatcher/event_dispatcher.h"
#include "dispatcher/test_helpers.h"

namespace sluice::dispatcher {
namespace {

using testing::Ddl;
using testing::DispatcherFixture;
using testing::Dml;

constexpr int64_t kTable = 100;

class EventDispatcherTest : public DispatcherFixture {
 protected:
  std::shared_ptr<EventDispatcher> Make(Ts start = Ts(100), bool complete = true) {
    DispatcherOptions o = Options(kTable, start);
    o.complete_table = complete;
    auto d = EventDispatcher::Create(std::move(o));
    EXPECT_TRUE(d.ok()) << d.status().ToString();
    return d.ok() ? *d : nullptr;
  }
};

TEST_F(EventDispatcherTest, CheckpointFollowsFlushesAndResolved) {
  auto d = Make();
  EXPECT_EQ(d->checkpoint(), Ts(100));
  d->OnDml(Dml(110, 105, 100));
  d->OnDml(Dml(120, 115, 50));
  d->OnResolved(Ts(130));
  EXPECT_EQ(sink_.Log(), "M110 M120");
  EXPECT_EQ(d->checkpoint(), Ts(109));
  EXPECT_EQ(acked(), 0u);
  sink_.Flush(1);
  EXPECT_EQ(d->checkpoint(), Ts(119));
  EXPECT_EQ(acked(), 100u);
  sink_.Flush();
  EXPECT_EQ(d->checkpoint(), Ts(130));
  EXPECT_EQ(acked(), 150u);
  // A stale event (at or below the resolved ts) is dropped, its bytes acked.
  d->OnDml(Dml(125, 121, 10));
  EXPECT_EQ(sink_.Log(), "M110 M120");
  EXPECT_EQ(acked(), 160u);
  EXPECT_TRUE(errors().empty());
}

TEST_F(EventDispatcherTest, PiecesHoldTheCheckpointUntilTheLastFlushes) {
  auto d = Make();
  d->OnDml(Dml(110, 105, 10, 0, false));
  d->OnDml(Dml(110, 105, 10, 1, true));
  d->OnResolved(Ts(115));
  sink_.Flush(1);
  EXPECT_EQ(d->checkpoint(), Ts(109));
  sink_.Flush(1);
  EXPECT_EQ(d->checkpoint(), Ts(115));
}

TEST_F(EventDispatcherTest, LocalDdlWaitsForEarlierDmlToFlush) {
  auto d = Make();
  d->OnDml(Dml(110, 105));
  d->OnDdl(Ddl(120, {kTable}));
  d->OnDml(Dml(130, 125));
  d->OnResolved(Ts(140));
  // The DDL waits for M110; what follows it waits for the DDL.
  EXPECT_EQ(sink_.Log(), "M110");
  EXPECT_TRUE(d->blocked());
  EXPECT_EQ(d->checkpoint(), Ts(109));
  sink_.Flush();
  ASSERT_TRUE(WaitLog("M110 D120 M130")) << sink_.Log();
  ASSERT_TRUE(PollUntil([&] { return d->resolved_ts() == Ts(140); }));
  EXPECT_FALSE(d->blocked());
  EXPECT_EQ(d->checkpoint(), Ts(129));
  sink_.Flush();
  EXPECT_EQ(d->checkpoint(), Ts(140));
  EXPECT_TRUE(statuses().empty());  // No barrier, no change of the table set.
}

TEST_F(EventDispatcherTest, DdlWithNothingPendingIsWrittenAtOnce) {
  sink_.set_auto_flush(true);
  auto d = Make();
  d->OnDml(Dml(110, 105));
  d->OnDdl(Ddl(120, {kTable}));
  d->OnResolved(Ts(125));
  ASSERT_TRUE(WaitLog("M110 D120"));
  ASSERT_TRUE(PollUntil([&] { return d->checkpoint() == Ts(125); }));
}

TEST_F(EventDispatcherTest, BarrierWaitingThenWriteThenDone) {
  auto d = Make();
  auto ddl = Ddl(120, {kTable, kTable + 1});
  ddl->tables_to_drop = {kTable + 1};
  d->OnDml(Dml(110, 105));
  d->OnDdl(ddl);
  d->OnDml(Dml(130, 125));
  d->OnResolved(Ts(150));
  EXPECT_TRUE(statuses().empty());  // Not WAITING before M110 is flushed.
  sink_.Flush();
  ASSERT_TRUE(WaitStatus(BlockStage::kWaiting, 120));
  BlockStatus waiting = statuses()[0];
  EXPECT_TRUE(waiting.is_blocked);
  EXPECT_EQ(waiting.dispatcher_id, d->id());
  EXPECT_EQ(waiting.blocked_tables.table_ids, (std::vector<int64_t>{kTable, kTable + 1}));
  EXPECT_EQ(waiting.tables_to_drop, std::vector<int64_t>{kTable + 1});
  ASSERT_TRUE(d->pending_block_status().has_value());
  EXPECT_EQ(d->pending_block_status()->block_ts, Ts(120));
  EXPECT_EQ(sink_.Log(), "M110");
  EXPECT_EQ(d->checkpoint(), Ts(109));  // Held below the DDL despite resolved 150.

  d->HandleBarrierAction(Ts(120), BarrierAction::kWrite);
  ASSERT_TRUE(WaitStatus(BlockStage::kDone, 120));
  ASSERT_TRUE(WaitLog("M110 D120 M130")) << sink_.Log();
  EXPECT_FALSE(d->pending_block_status().has_value());
  sink_.Flush();
  ASSERT_TRUE(PollUntil([&] { return d->checkpoint() == Ts(150); }));
}

TEST_F(EventDispatcherTest, BarrierPassSkipsTheWrite) {
  sink_.set_auto_flush(true);
  auto d = Make();
  d->OnDdl(Ddl(120, {kTable, kTable + 1}));
  d->OnDml(Dml(130, 125));
  ASSERT_TRUE(WaitStatus(BlockStage::kWaiting, 120));
  d->HandleBarrierAction(Ts(120), BarrierAction::kPass);
  ASSERT_TRUE(WaitStatus(BlockStage::kDone, 120));
  ASSERT_TRUE(WaitLog("M130"));
  d->OnResolved(Ts(140));
  ASSERT_TRUE(PollUntil([&] { return d->checkpoint() == Ts(140); }));
  EXPECT_EQ(sink_.Log(), "M130");
}

TEST_F(EventDispatcherTest, ActionsForOtherEventsAreIgnoredOrAckedAgain) {
  sink_.set_auto_flush(true);
  auto d = Make();
  d->OnDdl(Ddl(120, {kTable, kTable + 1}));
  ASSERT_TRUE(WaitStatus(BlockStage::kWaiting, 120));
  d->HandleBarrierAction(Ts(125), BarrierAction::kWrite);  // A later event: not yet.
  d->HandleBarrierAction(Ts(100), BarrierAction::kWrite);  // Long done: DONE again.
  ASSERT_TRUE(WaitStatus(BlockStage::kDone, 100));
  EXPECT_TRUE(d->blocked());
  EXPECT_EQ(sink_.Log(), "");
  d->HandleBarrierAction(Ts(120), BarrierAction::kWrite);
  ASSERT_TRUE(WaitStatus(BlockStage::kDone, 120));
  ASSERT_TRUE(WaitLog("D120"));
  // A resent action for the finished event: DONE again, nothing written.
  size_t before = statuses().size();
  d->HandleBarrierAction(Ts(120), BarrierAction::kWrite);
  ASSERT_TRUE(PollUntil([&] { return statuses().size() == before + 1; }));
  EXPECT_EQ(statuses().back().stage, BlockStage::kDone);
  EXPECT_EQ(sink_.Log(), "D120");
}

TEST_F(EventDispatcherTest, SplitTableSpanTakesEvenItsOwnDdlToTheBarrier) {
  sink_.set_auto_flush(true);
  auto d = Make(Ts(100), /*complete=*/false);
  d->OnDdl(Ddl(120, {kTable}));
  ASSERT_TRUE(WaitStatus(BlockStage::kWaiting, 120));
  EXPECT_EQ(sink_.Log(), "");
}

TEST_F(EventDispatcherTest, TableSetChangeIsReportedAfterALocalWrite) {
  sink_.set_auto_flush(true);
  auto d = Make();
  auto ddl = Ddl(120, {kTable});
  ddl->tables_to_add = {event::TableRef{1, 300, "db", "t_new"}};
  d->OnDdl(ddl);
  ASSERT_TRUE(WaitStatus(BlockStage::kNone, 120));
  EXPECT_EQ(statuses()[0].tables_to_add.size(), 1u);
  EXPECT_FALSE(statuses()[0].is_blocked);
  EXPECT_EQ(sink_.Log(), "D120");
}

TEST_F(EventDispatcherTest, SinkFailureStopsTheDispatcherWithTheFailingTs) {
  auto d = Make();
  d->OnDml(Dml(110, 105, 40));
  d->OnDml(Dml(120, 115, 60));
  sink_.Flush(1);
  sink_.Fail(IoError("downstream gone"));
  d->OnResolved(Ts(130));  // Any event (or CheckSink) notices.
  ASSERT_EQ(errors().size(), 1u);
  DispatcherError e = errors()[0];
  EXPECT_EQ(e.status.code(), Code::kIoError);
  EXPECT_EQ(e.failing_ts, Ts(120));
  EXPECT_EQ(e.checkpoint_ts, Ts(119));
  EXPECT_EQ(d->status().code(), Code::kIoError);
  // Stopped: nothing more reaches the sink, bytes still come back, one error.
  d->OnDml(Dml(140, 135, 7));
  d->CheckSink();
  EXPECT_EQ(errors().size(), 1u);
  EXPECT_EQ(acked(), 40u + 7u);
}

TEST_F(EventDispatcherTest, DdlWriteFailureReportsTheDdlTs) {
  sink_.set_auto_flush(true);
  sink_.FailNextDdl(Unavailable("lost connection"));
  auto d = Make();
  d->OnDml(Dml(110, 105));
  d->OnDdl(Ddl(120, {kTable}));
  d->OnDml(Dml(130, 125, 30));
  ASSERT_TRUE(PollUntil([&] { return errors().size() == 1; }));
  EXPECT_EQ(errors()[0].failing_ts, Ts(120));
  EXPECT_EQ(errors()[0].status.code(), Code::kUnavailable);
  EXPECT_TRUE(errors()[0].status.retryable());
  EXPECT_EQ(sink_.Log(), "M110");
  EXPECT_EQ(acked(), 100u + 30u);  // M130 was held, then dropped and acked.
}

TEST_F(EventDispatcherTest, EventServiceErrorStopsTheDispatcher) {
  auto d = Make();
  d->OnResolved(Ts(150));
  d->OnError(Corruption("mount row of table 100 at commit ts 160: bad row"), Ts(160));
  ASSERT_EQ(errors().size(), 1u);
  EXPECT_EQ(errors()[0].status.code(), Code::kCorruption);
  EXPECT_EQ(errors()[0].failing_ts, Ts(160));
}

TEST_F(EventDispatcherTest, CloseDropsHeldEventsAndAcksThem) {
  auto d = Make();
  d->OnDml(Dml(110, 105, 10));
  d->OnDdl(Ddl(120, {kTable}));
  d->OnDml(Dml(130, 125, 20));
  d->Close();
  sink_.Flush();
  EXPECT_EQ(acked(), 30u);
  d->OnDml(Dml(140, 135, 5));
  EXPECT_EQ(acked(), 35u);
  EXPECT_EQ(sink_.Log(), "M110");
  EXPECT_TRUE(errors().empty());
}

TEST_F(EventDispatcherTest, AClosedDispatcherIsDrainedOnlyOnceItsFlushesAreDone) {
  auto d = Make();
  d->OnDml(Dml(110, 105, 10));
  d->OnDml(Dml(120, 115, 10));
  EXPECT_FALSE(d->Drained());  // Not closed.
  d->Close();
  EXPECT_TRUE(d->Stopped());
  EXPECT_FALSE(d->Drained());  // M110 and M120 are still in the sink.
  // Nothing new starts after the close.
  d->OnDml(Dml(130, 125, 10));
  EXPECT_EQ(sink_.Log(), "M110 M120");
  sink_.Flush(1);
  EXPECT_FALSE(d->Drained());
  sink_.Flush();
  EXPECT_TRUE(d->Drained());
  EXPECT_EQ(acked(), 30u);
}

TEST_F(EventDispatcherTest, AClosedDispatcherOverAFailedSinkIsDrained) {
  auto d = Make();
  d->OnDml(Dml(110, 105, 10));
  d->Close();
  EXPECT_FALSE(d->Drained());
  sink_.Fail(IoError("downstream gone"));  // Its pending events never flush.
  EXPECT_TRUE(d->Drained());
}

TEST_F(EventDispatcherTest, CreateNeedsASinkAndAnExecutor) {
  DispatcherOptions o = Options(kTable, Ts(1));
  o.sink = nullptr;
  EXPECT_EQ(EventDispatcher::Create(o).status().code(), Code::kInvalidArgument);
  o = Options(kTable, Ts(1));
  o.executor = nullptr;
  EXPECT_EQ(EventDispatcher::Create(o).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace sluice::dispatcher
