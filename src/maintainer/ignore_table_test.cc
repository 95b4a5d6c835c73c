// MaintainerOptions::ignore_table: tables the changefeed's filter leaves out
// get no dispatcher, whether they exist at the start or a DDL adds them, and
// a barrier event that blocks one of them waits only on the dispatchers that
// exist.
#include <gtest/gtest.h>

#include <set>

#include "maintainer/test_util.h"

namespace sluice::maintainer::testing {
namespace {

using dispatcher::BarrierAction;
using dispatcher::BlockStage;
using std::chrono::milliseconds;

// Leaves out every table of schema "db2" (schema id 2).
bool IgnoreDb2(const event::TableRef& t) { return t.schema_name == "db2"; }

// Tables 1, 2 of db1 are replicated; table 3 of db2 is known upstream but
// ignored. One node, everything working at 400.
class IgnoreTableTest : public ::testing::Test {
 protected:
  IgnoreTableTest() : f({Table(1), Table(2), Table(3, 2)}, {"a"}, Ts(100), IgnoreDb2) {
    f.Boot();
    f.cluster.AdvanceAll(Ts(400));
    f.cluster.Pump(f.m.get(), &f.outbox);
  }

  void Send(const BlockReport& r) { f.m->OnBlockStatus(NodeId("a"), r); }
  std::vector<std::pair<NodeId, BarrierActionRequest>> Actions() {
    return FakeOutbox::Filter<BarrierActionRequest>(f.outbox.Take());
  }
  static event::BlockedTables Normal(std::vector<int64_t> ids) {
    return {event::InfluenceType::kNormal, std::move(ids), 0};
  }
  // The tables the node hosts a dispatcher for (the trigger is table 0).
  std::set<int64_t> HostedTables() {
    std::set<int64_t> out;
    for (const auto& [id, d] : f.cluster.nodes.at(NodeId("a")).dispatchers) {
      out.insert(d.config.table_id.value());
    }
    return out;
  }
  // Advances every dispatcher to `ts` and returns the changefeed checkpoint.
  Ts CheckpointAfter(Ts ts) {
    f.cluster.AdvanceAll(ts);
    f.cluster.Pump(f.m.get(), &f.outbox);
    f.Tick(milliseconds(600));
    return f.m->checkpoint();
  }

  Fixture f;
  const DispatcherId trigger = kDefaultTableTriggerId;
};

TEST_F(IgnoreTableTest, InitialIgnoredTableGetsNoSpan) {
  EXPECT_EQ(f.m->spans().size(), 2u);
  EXPECT_EQ(f.m->spans().FindTable(3), nullptr);
  EXPECT_EQ(HostedTables(), (std::set<int64_t>{0, 1, 2}));
}

TEST(MaintainerIgnoreTable, TablesAtTheTriggerStartAreFilteredToo) {
  ManualClock clock;
  FakeOutbox outbox(NodeId("a"), MaintainerEpoch(7));
  FakeCluster cluster({"a"});
  cluster.nodes.at(NodeId("a")).trigger_checkpoint = Ts(300);  // The trigger resumes later.
  MaintainerOptions o;
  o.changefeed_id = "cf";
  o.self = NodeId("a");
  o.epoch = MaintainerEpoch(7);
  o.checkpoint_ts = Ts(100);
  o.tables = {Table(1)};
  o.tables_at = [](Ts ts) -> Result<std::vector<event::TableRef>> {
    EXPECT_EQ(ts, Ts(300));
    return std::vector<event::TableRef>{Table(1), Table(4, 2), Table(5)};
  };
  o.ignore_table = IgnoreDb2;
  o.clock = &clock;
  o.outbox = &outbox;
  auto created = Maintainer::Create(std::move(o));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  std::unique_ptr<Maintainer> m = std::move(created).value();
  m->Start();
  cluster.Pump(m.get(), &outbox);
  ASSERT_TRUE(m->bootstrapped());
  EXPECT_EQ(m->spans().size(), 2u);
  EXPECT_EQ(m->spans().FindTable(4), nullptr);
  EXPECT_NE(m->spans().FindTable(5), nullptr);
}

TEST_F(IgnoreTableTest, IgnoredTableCreatedByDdlGetsNoDispatcher) {
  // CREATE TABLES of db1.t11 and db2.t10, written by the trigger alone.
  BlockReport r = Report(trigger, Ts(500), BlockStage::kNone, Normal({0}));
  r.tables_to_add = {Table(10, 2), Table(11)};
  Send(r);
  EXPECT_EQ(f.m->spans().FindTable(10), nullptr);
  ASSERT_NE(f.m->spans().FindTable(11), nullptr);
  std::vector<Sent> sent = f.outbox.Take();
  for (const auto& [to, s] : FakeOutbox::Filter<dm::ScheduleRequest>(sent)) {
    EXPECT_NE(s.config.table_id.value(), 10);
  }
  for (const Sent& s : sent) f.cluster.Deliver(f.m.get(), s);
  f.cluster.Pump(f.m.get(), &f.outbox);
  EXPECT_EQ(HostedTables(), (std::set<int64_t>{0, 1, 2, 11}));
  EXPECT_EQ(CheckpointAfter(Ts(600)), Ts(600));
}

TEST_F(IgnoreTableTest, BarrierOnAnIgnoredTableWaitsOnlyForTheTrigger) {
  // TRUNCATE db2.t3: blocks the trigger and table 3 (no dispatcher), drops 3
  // and adds 30, which is ignored as well.
  BlockReport r = Report(trigger, Ts(500), BlockStage::kWaiting, Normal({0, 3}));
  r.tables_to_drop = {3};
  r.tables_to_add = {Table(30, 2)};
  Send(r);
  auto acts = Actions();
  ASSERT_EQ(acts.size(), 1u);
  EXPECT_EQ(acts[0].second.action, BarrierAction::kWrite);
  EXPECT_EQ(acts[0].second.dispatchers, std::vector<DispatcherId>{trigger});
  r.stage = BlockStage::kDone;
  Send(r);
  EXPECT_EQ(f.m->barrier().pending(), 0u);
  EXPECT_EQ(f.m->spans().FindTable(30), nullptr);
  f.cluster.Pump(f.m.get(), &f.outbox);
  EXPECT_EQ(HostedTables(), (std::set<int64_t>{0, 1, 2}));
  EXPECT_EQ(CheckpointAfter(Ts(600)), Ts(600));
}

TEST_F(IgnoreTableTest, BarrierOnKeptAndIgnoredTablesWaitsForTheKeptOnes) {
  // RENAME TABLES over db1.t1 and db2.t3: the trigger and t1 must report.
  const DispatcherId t1 = f.IdOf(1);
  Send(Report(trigger, Ts(500), BlockStage::kWaiting, Normal({0, 1, 3})));
  EXPECT_TRUE(Actions().empty());  // t1 has not reported yet.
  Send(Report(t1, Ts(500), BlockStage::kWaiting, Normal({0, 1, 3})));
  auto acts = Actions();
  ASSERT_EQ(acts.size(), 1u);
  EXPECT_EQ(acts[0].second.dispatchers, std::vector<DispatcherId>{trigger});
  Send(Report(trigger, Ts(500), BlockStage::kDone, Normal({0, 1, 3})));
  acts = Actions();
  ASSERT_EQ(acts.size(), 1u);
  EXPECT_EQ(acts[0].second.action, BarrierAction::kPass);
  EXPECT_EQ(acts[0].second.dispatchers, std::vector<DispatcherId>{t1});
  Send(Report(t1, Ts(500), BlockStage::kDone, Normal({0, 1, 3})));
  EXPECT_EQ(f.m->barrier().pending(), 0u);
  EXPECT_EQ(CheckpointAfter(Ts(600)), Ts(600));
}

TEST_F(IgnoreTableTest, DropOfAnIgnoredDatabaseWaitsOnlyForTheTrigger) {
  event::BlockedTables db{event::InfluenceType::kDb, {}, 2};
  BlockReport r = Report(trigger, Ts(500), BlockStage::kWaiting, db);
  r.tables_to_drop = {3};
  Send(r);
  auto acts = Actions();
  ASSERT_EQ(acts.size(), 1u);
  EXPECT_EQ(acts[0].second.dispatchers, std::vector<DispatcherId>{trigger});
  r.stage = BlockStage::kDone;
  Send(r);
  EXPECT_EQ(f.m->barrier().pending(), 0u);
  EXPECT_EQ(CheckpointAfter(Ts(600)), Ts(600));
}

}  // namespace
}  // namespace sluice::maintainer::testing
