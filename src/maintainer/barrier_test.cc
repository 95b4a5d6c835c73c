#include <gtest/gtest.h>

#include "maintainer/test_util.h"

namespace sluice::maintainer::testing {
namespace {

using dispatcher::BarrierAction;
using dispatcher::BlockStage;
using std::chrono::milliseconds;

// Tables 1, 2 in db 1 and 3 in db 2, on nodes a and b, all working.
class BarrierTest : public ::testing::Test {
 protected:
  BarrierTest() : f({Table(1), Table(2), Table(3, 2)}, {"a", "b"}) {
    f.Boot();
    f.cluster.AdvanceAll(Ts(400));
    f.cluster.Pump(f.m.get(), &f.outbox);
  }

  NodeId Host(DispatcherId id) {
    return id == kDefaultTableTriggerId ? NodeId("a") : f.m->spans().Find(id)->node;
  }
  void Send(const BlockReport& r) { f.m->OnBlockStatus(Host(r.dispatcher_id), r); }
  // Every barrier action sent since the last call, as (node, action, ids).
  std::vector<std::pair<NodeId, BarrierActionRequest>> Actions() {
    return FakeOutbox::Filter<BarrierActionRequest>(f.outbox.Take());
  }
  static event::BlockedTables Normal(std::vector<int64_t> ids) {
    return {event::InfluenceType::kNormal, std::move(ids), 0};
  }

  Fixture f;
  const DispatcherId trigger = kDefaultTableTriggerId;
};

TEST_F(BarrierTest, MultiTableDdlOneWriterThenPass) {
  DispatcherId t1 = f.IdOf(1), t2 = f.IdOf(2);
  Send(Report(t1, Ts(500), BlockStage::kWaiting, Normal({1, 2})));
  EXPECT_TRUE(Actions().empty());  // t2 has not reported.
  Send(Report(t2, Ts(500), BlockStage::kWaiting, Normal({1, 2})));
  auto acts = Actions();
  ASSERT_EQ(acts.size(), 1u);
  EXPECT_EQ(acts[0].second.action, BarrierAction::kWrite);
  EXPECT_EQ(acts[0].second.block_ts, Ts(500));
  DispatcherId writer = acts[0].second.dispatchers.at(0);
  DispatcherId other = writer == t1 ? t2 : t1;
  EXPECT_EQ(acts[0].first, Host(writer));
  // The checkpoint is held below the event.
  EXPECT_EQ(f.m->barrier().MinCheckpoint(), Ts(499));
  f.cluster.AdvanceAll(Ts(499));
  for (auto& [id, n] : f.cluster.nodes) f.m->OnHeartbeat(id, f.cluster.Heartbeat(id));
  EXPECT_EQ(f.m->checkpoint(), Ts(499));
  Send(Report(writer, Ts(500), BlockStage::kDone, Normal({1, 2})));
  acts = Actions();
  ASSERT_EQ(acts.size(), 1u);
  EXPECT_EQ(acts[0].second.action, BarrierAction::kPass);
  EXPECT_EQ(acts[0].second.dispatchers, std::vector<DispatcherId>{other});
  EXPECT_EQ(f.m->barrier().pending(), 1u);
  Send(Report(other, Ts(500), BlockStage::kDone, Normal({1, 2})));
  EXPECT_EQ(f.m->barrier().pending(), 0u);
  EXPECT_EQ(f.m->barrier().MinCheckpoint(), std::nullopt);
  f.cluster.AdvanceAll(Ts(600));
  f.cluster.Pump(f.m.get(), &f.outbox);
  f.Tick(milliseconds(600));
  EXPECT_EQ(f.m->checkpoint(), Ts(600));
  EXPECT_TRUE(Actions().empty());
}

TEST_F(BarrierTest, DbLevelDdlWritesOnTriggerAndChangesTables) {
  DispatcherId t1 = f.IdOf(1), t2 = f.IdOf(2), t3 = f.IdOf(3);
  event::BlockedTables db{event::InfluenceType::kDb, {}, 1};
  BlockReport r = Report(trigger, Ts(500), BlockStage::kWaiting, db);
  r.tables_to_drop = {2};
  r.tables_to_add = {Table(10)};
  Send(r);
  Send(Report(t1, Ts(500), BlockStage::kWaiting, db));
  EXPECT_TRUE(Actions().empty());  // t2 of db 1 is missing; t3 is not involved.
  Send(Report(t2, Ts(500), BlockStage::kWaiting, db));
  auto acts = Actions();
  ASSERT_EQ(acts.size(), 1u);
  EXPECT_EQ(acts[0].first, NodeId("a"));
  EXPECT_EQ(acts[0].second.action, BarrierAction::kWrite);
  EXPECT_EQ(acts[0].second.dispatchers, std::vector<DispatcherId>{trigger});
  EXPECT_EQ(f.m->spans().FindTable(10), nullptr);  // Not before the write.

  Send(Report(trigger, Ts(500), BlockStage::kDone, db));
  auto sent = f.outbox.Take();
  std::set<DispatcherId> passed;
  for (auto& [to, a] : FakeOutbox::Filter<BarrierActionRequest>(sent)) {
    EXPECT_EQ(a.action, BarrierAction::kPass);
    passed.insert(a.dispatchers.begin(), a.dispatchers.end());
  }
  EXPECT_EQ(passed, (std::set<DispatcherId>{t1, t2}));
  EXPECT_EQ(passed.count(t3), 0u);
  const Replica* t10 = f.m->spans().FindTable(10);
  ASSERT_NE(t10, nullptr);
  EXPECT_EQ(t10->checkpoint, Ts(500));  // The new table starts at the DDL.
  bool removed_t2 = false, created_t10 = false;
  for (auto& [to, s] : FakeOutbox::Filter<dm::ScheduleRequest>(sent)) {
    removed_t2 |= s.action == dm::ScheduleAction::kRemove && s.config.id == t2;
    created_t10 |= s.action == dm::ScheduleAction::kCreate && s.config.id == t10->id &&
                   s.config.start_ts == Ts(500);
  }
  EXPECT_TRUE(removed_t2);
  EXPECT_TRUE(created_t10);
  for (const Sent& s : sent) f.cluster.Deliver(f.m.get(), s);
  Send(Report(t1, Ts(500), BlockStage::kDone, db));
  f.cluster.Pump(f.m.get(), &f.outbox);  // t2 is removed: it needs no DONE.
  f.Tick(milliseconds(600));
  EXPECT_EQ(f.m->barrier().pending(), 0u);
  EXPECT_EQ(f.m->spans().FindTable(2), nullptr);
  EXPECT_EQ(f.m->spans().FindTable(10)->state, ReplicaState::kWorking);
}

TEST_F(BarrierTest, AllLevelDdlNeedsEveryDispatcherAndResendsUntilDone) {
  event::BlockedTables all{event::InfluenceType::kAll, {}, 0};
  std::vector<DispatcherId> ids = {trigger, f.IdOf(1), f.IdOf(2), f.IdOf(3)};
  for (size_t i = 0; i + 1 < ids.size(); ++i) {
    Send(Report(ids[i], Ts(500), BlockStage::kWaiting, all));
  }
  EXPECT_TRUE(Actions().empty());
  Send(Report(ids.back(), Ts(500), BlockStage::kWaiting, all));
  auto acts = Actions();
  ASSERT_EQ(acts.size(), 1u);
  EXPECT_EQ(acts[0].second.dispatchers, std::vector<DispatcherId>{trigger});
  // Lost: the Write is resent after the interval, not before.
  f.Tick(milliseconds(100));
  EXPECT_TRUE(Actions().empty());
  f.Tick(milliseconds(500));
  acts = Actions();
  ASSERT_EQ(acts.size(), 1u);
  EXPECT_EQ(acts[0].second.action, BarrierAction::kWrite);
  Send(Report(trigger, Ts(500), BlockStage::kDone, all));
  std::set<DispatcherId> passed;
  for (auto& [to, a] : Actions()) passed.insert(a.dispatchers.begin(), a.dispatchers.end());
  EXPECT_EQ(passed.size(), 3u);
  Send(Report(ids[1], Ts(500), BlockStage::kDone, all));
  f.Tick(milliseconds(600));
  passed.clear();
  for (auto& [to, a] : Actions()) {
    EXPECT_EQ(a.action, BarrierAction::kPass);
    passed.insert(a.dispatchers.begin(), a.dispatchers.end());
  }
  EXPECT_EQ(passed, (std::set<DispatcherId>{ids[2], ids[3]}));  // Only the unacknowledged.
  // A checkpoint past the event counts as done too (a lost DONE).
  f.cluster.AdvanceAll(Ts(550));
  Send(Report(ids[2], Ts(500), BlockStage::kDone, all));
  for (auto& [id, n] : f.cluster.nodes) f.m->OnHeartbeat(id, f.cluster.Heartbeat(id));
  EXPECT_EQ(f.m->barrier().pending(), 0u);
  EXPECT_EQ(f.m->checkpoint(), Ts(550));
}

TEST_F(BarrierTest, LaterEventWaitsForAnEarlierOneOnTheSameDispatchers) {
  DispatcherId t1 = f.IdOf(1), t2 = f.IdOf(2);
  // Event 500 blocks t1 and t2 and adds a table; only t1 has reported.
  BlockReport first = Report(t1, Ts(500), BlockStage::kWaiting, Normal({1, 2}));
  first.tables_to_add = {Table(20)};
  Send(first);
  // A syncpoint at 500 and a db-level DDL at 600 are complete but must wait.
  event::BlockedTables db{event::InfluenceType::kDb, {}, 1};
  for (DispatcherId id : {trigger, t1, t2}) {
    BlockReport r = Report(id, Ts(600), BlockStage::kWaiting, db);
    Send(r);
  }
  EXPECT_TRUE(Actions().empty());
  Send(Report(t2, Ts(500), BlockStage::kWaiting, Normal({1, 2})));
  auto acts = Actions();
  ASSERT_EQ(acts.size(), 1u);
  EXPECT_EQ(acts[0].second.block_ts, Ts(500));
  DispatcherId writer = acts[0].second.dispatchers.at(0);
  Send(Report(writer, Ts(500), BlockStage::kDone, Normal({1, 2})));
  Send(Report(writer == t1 ? t2 : t1, Ts(500), BlockStage::kDone, Normal({1, 2})));
  f.cluster.Pump(f.m.get(), &f.outbox);
  // Table 20 (db 1) now belongs to the db-level event: it must report too.
  EXPECT_TRUE(Actions().empty());
  Send(Report(f.IdOf(20), Ts(600), BlockStage::kWaiting, db));
  acts = Actions();
  ASSERT_EQ(acts.size(), 1u);
  EXPECT_EQ(acts[0].second.block_ts, Ts(600));
  EXPECT_EQ(acts[0].second.dispatchers, std::vector<DispatcherId>{trigger});
}

TEST_F(BarrierTest, SyncpointAndDdlAtTheSameTsAreDistinct) {
  DispatcherId t1 = f.IdOf(1), t2 = f.IdOf(2);
  BlockReport sp = Report(t1, Ts(500), BlockStage::kWaiting, Normal({1, 2}));
  sp.is_syncpoint = true;
  Send(sp);
  Send(Report(t2, Ts(500), BlockStage::kWaiting, Normal({1, 2})));  // The DDL.
  EXPECT_TRUE(Actions().empty());
  sp.dispatcher_id = t2;
  Send(sp);
  EXPECT_TRUE(Actions().empty());  // The DDL at 500 comes first and shares t2.
  Send(Report(t1, Ts(500), BlockStage::kWaiting, Normal({1, 2})));
  auto acts = Actions();
  ASSERT_EQ(acts.size(), 1u);
  EXPECT_FALSE(acts[0].second.is_syncpoint);
}

TEST_F(BarrierTest, StageNoneAppliesTableChangesOnce) {
  BlockReport r = Report(trigger, Ts(450), BlockStage::kNone, Normal({0}));
  r.tables_to_add = {Table(30, 2)};
  r.tables_to_drop = {3};
  Send(r);
  ASSERT_NE(f.m->spans().FindTable(30), nullptr);
  EXPECT_EQ(f.m->spans().FindTable(30)->checkpoint, Ts(450));
  f.cluster.Pump(f.m.get(), &f.outbox);
  EXPECT_EQ(f.m->spans().FindTable(3), nullptr);
  EXPECT_EQ(f.m->spans().FindTable(30)->state, ReplicaState::kWorking);
  Send(r);  // A resent report changes nothing.
  EXPECT_TRUE(FakeOutbox::Filter<dm::ScheduleRequest>(f.outbox.Take()).empty());
  EXPECT_EQ(f.m->spans().size(), 3u);
}

}  // namespace
}  // namespace sluice::maintainer::testing
