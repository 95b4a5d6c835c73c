#include <gtest/gtest.h>

#include "maintainer/test_util.h"

namespace sluice::maintainer::testing {
namespace {

TEST(MaintainerBootstrap, FromScratchCreatesEverySpanBalanced) {
  Fixture f({Table(11), Table(12), Table(13), Table(21, 2), Table(22, 2), Table(23, 2)},
            {"a", "b", "c"});
  f.m->Start();
  auto sent = f.outbox.Take();
  auto boots = FakeOutbox::Filter<dm::BootstrapRequest>(sent);
  // The own node's bootstrap (it creates the trigger) waits for the others.
  ASSERT_EQ(boots.size(), 2u);
  for (auto& [to, r] : boots) {
    EXPECT_NE(to, NodeId("a"));
    EXPECT_FALSE(r.table_trigger_id.has_value());
    EXPECT_EQ(r.start_ts, Ts(100));
  }
  for (const Sent& s : sent) {
    if (s.to == NodeId("b")) f.cluster.Deliver(f.m.get(), s);
  }
  EXPECT_TRUE(f.outbox.Take().empty());
  // An unanswered node gets the request again after the resend interval.
  f.Tick(std::chrono::milliseconds(600));
  sent = f.outbox.Take();
  ASSERT_EQ(FakeOutbox::Filter<dm::BootstrapRequest>(sent).size(), 1u);
  EXPECT_EQ(sent[0].to, NodeId("c"));
  f.cluster.Deliver(f.m.get(), sent[0]);
  EXPECT_FALSE(f.m->bootstrapped());  // Two answers are not enough.
  sent = f.outbox.Take();
  boots = FakeOutbox::Filter<dm::BootstrapRequest>(sent);
  ASSERT_EQ(boots.size(), 1u);
  EXPECT_EQ(boots[0].first, NodeId("a"));
  EXPECT_EQ(boots[0].second.table_trigger_id, kDefaultTableTriggerId);
  f.cluster.Deliver(f.m.get(), sent[0]);
  ASSERT_TRUE(f.m->bootstrapped());

  sent = f.outbox.Take();
  auto post = FakeOutbox::Filter<dm::PostBootstrapRequest>(sent);
  ASSERT_EQ(post.size(), 1u);
  EXPECT_EQ(post[0].first, NodeId("a"));
  EXPECT_EQ(post[0].second.table_trigger_id, kDefaultTableTriggerId);
  ASSERT_EQ(post[0].second.schemas.size(), 2u);
  EXPECT_EQ(post[0].second.schemas[1].name, "db2");
  EXPECT_EQ(post[0].second.schemas[1].tables.size(), 3u);
  auto creates = FakeOutbox::Filter<dm::ScheduleRequest>(sent);
  ASSERT_EQ(creates.size(), 6u);
  std::map<NodeId, int> per_node;
  for (auto& [to, r] : creates) {
    EXPECT_EQ(r.action, dm::ScheduleAction::kCreate);
    EXPECT_EQ(r.config.start_ts, Ts(100));
    EXPECT_EQ(r.config.span, TableRecordSpan(r.config.table_id));
    ++per_node[to];
  }
  EXPECT_EQ(per_node,
            (std::map<NodeId, int>{{NodeId("a"), 2}, {NodeId("b"), 2}, {NodeId("c"), 2}}));
  for (const Sent& s : sent) f.cluster.Deliver(f.m.get(), s);
  f.cluster.Pump(f.m.get(), &f.outbox);
  EXPECT_TRUE(f.m->initialized());
  EXPECT_EQ(f.m->spans().CountInState(ReplicaState::kWorking), 6u);
  EXPECT_EQ(f.m->operators().size(), 0u);
}

// The trigger may write a DDL that creates a table (stage NONE, sent once)
// before the maintainer's bootstrap is done: the table is not lost.
TEST(MaintainerBootstrap, TableChangesReportedBeforeTheBootstrapAreKept) {
  Fixture f({Table(1), Table(2)}, {"a"});
  f.m->Start();
  BlockReport early = Report(DispatcherId{7, 1}, Ts(450), dispatcher::BlockStage::kNone, {});
  early.tables_to_add = {Table(30)};
  f.m->OnBlockStatus(NodeId("a"), early);
  EXPECT_FALSE(f.m->bootstrapped());
  EXPECT_EQ(f.m->spans().FindTable(30), nullptr);
  f.cluster.Pump(f.m.get(), &f.outbox);
  ASSERT_TRUE(f.m->bootstrapped());
  ASSERT_NE(f.m->spans().FindTable(30), nullptr);
  EXPECT_EQ(f.m->spans().FindTable(30)->checkpoint, Ts(450));
  EXPECT_EQ(f.m->spans().FindTable(30)->state, ReplicaState::kWorking);
}

TEST(MaintainerBootstrap, RebuildsSpansFindsHolesAndAdoptsOperators) {
  Fixture f({Table(1), Table(2), Table(3), Table(4)}, {"a", "b"});
  const DispatcherId t1{3, 1}, t1_dup{3, 9}, t2{3, 2}, t3{3, 3}, stray{3, 4};
  FakeNode& a = f.cluster.nodes[NodeId("a")];
  FakeNode& b = f.cluster.nodes[NodeId("b")];
  a.trigger_checkpoint = Ts(120);  // The trigger is ahead of the given checkpoint.
  a.dispatchers[t1] = Working(t1, 1, Ts(150));
  b.dispatchers[t2] = Working(t2, 2, Ts(130));
  b.dispatchers[t1_dup] = Working(t1_dup, 1, Ts(140));  // Left by a move.
  b.dispatchers[stray] = Working(stray, 99, Ts(140));   // Not in the changefeed.
  dm::ScheduleRequest in_flight;
  in_flight.action = dm::ScheduleAction::kCreate;
  in_flight.config = Working(t3, 3, Ts(125)).config;
  b.in_flight.push_back(in_flight);

  f.m->Start();
  for (const Sent& s : f.outbox.Take()) f.cluster.Deliver(f.m.get(), s);  // b's.
  for (const Sent& s : f.outbox.Take()) f.cluster.Deliver(f.m.get(), s);  // Then a's.
  ASSERT_TRUE(f.m->bootstrapped());
  const SpanController& spans = f.m->spans();
  EXPECT_EQ(spans.Find(t1)->state, ReplicaState::kWorking);
  EXPECT_EQ(spans.Find(t1)->node, NodeId("a"));
  EXPECT_EQ(spans.Find(t1)->checkpoint, Ts(150));
  EXPECT_EQ(spans.Find(t2)->node, NodeId("b"));
  EXPECT_EQ(spans.Find(t3)->state, ReplicaState::kScheduling);  // Adopted, not resent yet.
  EXPECT_EQ(spans.Find(t3)->node, NodeId("b"));
  // The hole starts at the changefeed's checkpoint, not at the trigger's
  // (later) start: rows of table 4 after the checkpoint may not be
  // downstream yet; the sink moves it past DDLs it already ran.
  EXPECT_EQ(spans.FindTable(4)->checkpoint, Ts(100));

  auto sent = f.outbox.Take();
  std::map<DispatcherId, std::pair<NodeId, dm::ScheduleRequest>> by_id;
  for (auto& [to, r] : FakeOutbox::Filter<dm::ScheduleRequest>(sent)) by_id[r.config.id] = {to, r};
  ASSERT_EQ(by_id.size(), 3u);
  EXPECT_EQ(by_id[t1_dup].second.action, dm::ScheduleAction::kRemove);
  EXPECT_EQ(by_id[t1_dup].first, NodeId("b"));
  EXPECT_EQ(by_id[stray].second.action, dm::ScheduleAction::kRemove);
  DispatcherId t4 = f.IdOf(4);
  EXPECT_EQ(t4.high, 7u);  // New ids carry this generation's epoch.
  EXPECT_EQ(by_id[t4].second.action, dm::ScheduleAction::kCreate);
  EXPECT_EQ(by_id[t4].second.config.start_ts, Ts(100));
  EXPECT_EQ(by_id.count(t3), 0u);
  for (const Sent& s : sent) f.cluster.Deliver(f.m.get(), s);
  for (auto& [id, node] : f.cluster.nodes) f.m->OnHeartbeat(id, f.cluster.Heartbeat(id));
  EXPECT_EQ(f.m->operators().size(), 1u);  // Only the adopted create is left.

  // The adopted create is resent once the interval passes, then completes.
  b.ignore_schedules = true;
  f.Tick(std::chrono::milliseconds(600));
  sent = f.outbox.Take();
  auto resent = FakeOutbox::Filter<dm::ScheduleRequest>(sent);
  ASSERT_EQ(resent.size(), 1u);
  EXPECT_EQ(resent[0].second.config.id, t3);
  EXPECT_EQ(resent[0].second.config.start_ts, Ts(125));
  b.ignore_schedules = false;
  for (const Sent& s : sent) f.cluster.Deliver(f.m.get(), s);
  f.cluster.Pump(f.m.get(), &f.outbox);
  EXPECT_EQ(spans.CountInState(ReplicaState::kWorking), 4u);
  EXPECT_EQ(f.m->operators().size(), 0u);
  EXPECT_EQ(b.dispatchers.count(t1_dup), 0u);
  EXPECT_EQ(b.dispatchers.count(stray), 0u);
}

// How many dispatchers of `table` are alive (working or stopping) anywhere.
size_t Alive(const FakeCluster& cluster, int64_t table) {
  size_t n = 0;
  for (const auto& [node_id, node] : cluster.nodes) {
    for (const auto& [id, d] : node.dispatchers) {
      if (d.config.table_id == TableId(table) && d.state != dm::ComponentState::kStopped) ++n;
    }
  }
  return n;
}

// A previous generation was removing table 1's dispatcher when it lost the
// changefeed (its remove operator is stale now), and table 3's dispatcher
// was closing on its own; both report stopping at bootstrap. The new
// generation adopts the removals: neither table gets a second dispatcher
// while the old one may still write; each is created again (under its id,
// from its checkpoint) only once the old one has closed.
TEST(MaintainerBootstrap, AdoptsTheRemovalOfStoppingDispatchers) {
  Fixture f({Table(1), Table(2), Table(3)}, {"a", "b"});
  const DispatcherId t1{3, 1}, t2{3, 2}, t3{3, 3};
  FakeNode& a = f.cluster.nodes[NodeId("a")];
  FakeNode& b = f.cluster.nodes[NodeId("b")];
  a.dispatchers[t2] = Working(t2, 2, Ts(150));
  b.dispatchers[t1] = Working(t1, 1, Ts(140));
  b.dispatchers[t1].state = dm::ComponentState::kStopping;
  dm::ScheduleRequest stale_remove;
  stale_remove.action = dm::ScheduleAction::kRemove;
  stale_remove.config = b.dispatchers[t1].config;
  b.in_flight.push_back(stale_remove);
  a.dispatchers[t3] = Working(t3, 3, Ts(145));
  a.dispatchers[t3].state = dm::ComponentState::kStopping;
  b.slow_close = {t1};
  a.slow_close = {t3};

  f.m->Start();
  f.cluster.Pump(f.m.get(), &f.outbox);
  ASSERT_TRUE(f.m->bootstrapped());
  const SpanController& spans = f.m->spans();
  ASSERT_NE(spans.Find(t1), nullptr);
  ASSERT_NE(spans.Find(t3), nullptr);
  EXPECT_EQ(spans.Find(t1)->state, ReplicaState::kRemoving);
  EXPECT_EQ(spans.Find(t1)->node, NodeId("b"));
  EXPECT_EQ(spans.Find(t3)->state, ReplicaState::kRemoving);
  EXPECT_EQ(spans.Find(t2)->state, ReplicaState::kWorking);
  EXPECT_EQ(spans.CountInState(ReplicaState::kAbsent), 0u);
  for (int i = 0; i < 5; ++i) {  // Resends and heartbeats while they close.
    f.Tick(std::chrono::milliseconds(600));
    f.cluster.Pump(f.m.get(), &f.outbox);
    EXPECT_EQ(Alive(f.cluster, 1), 1u);
    EXPECT_EQ(Alive(f.cluster, 3), 1u);
  }
  EXPECT_LE(f.m->checkpoint(), Ts(140));  // Held by the span being removed.

  b.FinishClose(t1);
  f.cluster.Pump(f.m.get(), &f.outbox);
  f.Tick(std::chrono::milliseconds(100));  // Schedules the absent span.
  f.cluster.Pump(f.m.get(), &f.outbox);
  EXPECT_EQ(Alive(f.cluster, 1), 1u);
  EXPECT_EQ(f.cluster.nodes.at(f.cluster.HostOf(t1)).dispatchers.at(t1).state,
            dm::ComponentState::kWorking);
  EXPECT_EQ(f.cluster.nodes.at(f.cluster.HostOf(t1)).dispatchers.at(t1).config.start_ts, Ts(140));
  EXPECT_EQ(spans.Find(t3)->state, ReplicaState::kRemoving);
  a.FinishClose(t3);
  f.cluster.Pump(f.m.get(), &f.outbox);
  f.Tick(std::chrono::milliseconds(100));
  f.cluster.Pump(f.m.get(), &f.outbox);
  EXPECT_EQ(spans.CountInState(ReplicaState::kWorking), 3u);
  EXPECT_EQ(f.m->operators().size(), 0u);
  EXPECT_EQ(Alive(f.cluster, 3), 1u);
}

TEST(MaintainerBootstrap, StaleOwnerFencesAndOtherEpochsAreIgnored) {
  Fixture f({Table(1)}, {"a", "b"});
  f.m->Start();
  f.outbox.Take();
  dm::BootstrapResponse other;
  other.changefeed_id = "cf";
  other.epoch = MaintainerEpoch(6);
  f.m->OnBootstrapResponse(NodeId("a"), other);  // Another generation's answer.
  f.m->OnBootstrapResponse(NodeId("b"), other);
  EXPECT_FALSE(f.m->bootstrapped());
  dm::BootstrapResponse fenced;
  fenced.changefeed_id = "cf";
  fenced.epoch = MaintainerEpoch(7);
  fenced.status = StaleOwner("newer owner");
  f.m->OnBootstrapResponse(NodeId("b"), fenced);
  EXPECT_EQ(f.m->status().code(), Code::kStaleOwner);
  f.Tick(std::chrono::seconds(5));
  EXPECT_TRUE(f.outbox.Take().empty());
}

TEST(MaintainerBootstrap, CreateRejectsBadOptions) {
  ManualClock clock;
  FakeOutbox outbox(NodeId("a"), MaintainerEpoch(1));
  MaintainerOptions o;
  o.changefeed_id = "cf";
  o.self = NodeId("a");
  o.clock = &clock;
  o.outbox = &outbox;
  o.tables = {Table(1), Table(1)};
  EXPECT_EQ(Maintainer::Create(o).status().code(), Code::kInvalidArgument);
  o.tables = {Table(0)};
  EXPECT_EQ(Maintainer::Create(o).status().code(), Code::kInvalidArgument);
  o.tables = {};
  o.outbox = nullptr;
  EXPECT_EQ(Maintainer::Create(o).status().code(), Code::kInvalidArgument);
}

TEST(MaintainerBootstrap, CloseIsResentUntilConfirmed) {
  Fixture f({Table(1)}, {"a", "b"});
  f.Boot();
  f.m->Close(/*removed=*/true);
  auto sent = f.outbox.Take();
  auto closes = FakeOutbox::Filter<dm::CloseRequest>(sent);
  ASSERT_EQ(closes.size(), 2u);
  EXPECT_TRUE(closes[0].second.removed);
  f.cluster.Deliver(f.m.get(), sent[0]);
  EXPECT_FALSE(f.m->closed());
  f.Tick(std::chrono::milliseconds(600));
  sent = f.outbox.Take();
  ASSERT_EQ(sent.size(), 1u);
  f.cluster.Deliver(f.m.get(), sent[0]);
  EXPECT_TRUE(f.m->closed());
}

// How many table trigger dispatchers are alive anywhere.
size_t Triggers(const FakeCluster& cluster) {
  size_t n = 0;
  for (const auto& [node_id, node] : cluster.nodes) n += node.trigger.has_value() ? 1 : 0;
  return n;
}

// The changefeed's maintainer moved from node b to node a: b still has the
// old generation's trigger. The new generation's bootstrap to b is refused
// naming it; the maintainer orders it replaced, b closes it, and only then
// does a's bootstrap go out and create the new trigger: never two at once,
// and the generation is not stuck.
TEST(MaintainerBootstrap, TakesOverAnOldTriggerBeforeCreatingItsOwn) {
  Fixture f({Table(1)}, {"a", "b"});
  const DispatcherId old_trigger{3, 7};
  FakeNode& b = f.cluster.nodes[NodeId("b")];
  b.trigger = old_trigger;
  b.dispatchers[old_trigger] = Working(old_trigger, 0, Ts(100));
  f.m->Start();
  std::vector<NodeId> bootstrapped_in_order;
  for (int round = 0; round < 10 && !f.m->bootstrapped(); ++round) {
    for (const Sent& s : f.outbox.Take()) {
      if (std::holds_alternative<dm::BootstrapRequest>(s.msg)) {
        bootstrapped_in_order.push_back(s.to);
      }
      f.cluster.Deliver(f.m.get(), s);
      ASSERT_LE(Triggers(f.cluster), 1u);
    }
  }
  ASSERT_TRUE(f.m->bootstrapped());
  // b refused, b again with the replacement order, then a.
  EXPECT_EQ(bootstrapped_in_order, (std::vector<NodeId>{NodeId("b"), NodeId("b"), NodeId("a")}));
  EXPECT_FALSE(b.trigger.has_value());
  EXPECT_EQ(f.cluster.nodes.at(NodeId("a")).trigger, kDefaultTableTriggerId);
  f.cluster.Pump(f.m.get(), &f.outbox);
  EXPECT_TRUE(f.m->initialized());
  EXPECT_EQ(f.m->spans().CountInState(ReplicaState::kWorking), 1u);
}

// A maintainer fenced by a newer owner is closed by its host, which waits
// for closed() before it starts the next generation: a lost close must be
// resent, fenced or not.
TEST(MaintainerBootstrap, AFencedMaintainerStillResendsItsClose) {
  Fixture f({Table(1)}, {"a"});
  f.m->Start();
  (void)f.outbox.Take();
  dm::BootstrapResponse fenced;
  fenced.changefeed_id = "cf";
  fenced.epoch = MaintainerEpoch(7);
  fenced.status = StaleOwner("newer owner");
  f.m->OnBootstrapResponse(NodeId("a"), fenced);
  ASSERT_EQ(f.m->status().code(), Code::kStaleOwner);
  f.m->Close(/*removed=*/false);
  EXPECT_EQ(FakeOutbox::Filter<dm::CloseRequest>(f.outbox.Take()).size(), 1u);  // Lost.
  f.Tick(std::chrono::milliseconds(600));
  auto sent = f.outbox.Take();
  ASSERT_EQ(FakeOutbox::Filter<dm::CloseRequest>(sent).size(), 1u);
  f.cluster.Deliver(f.m.get(), sent[0]);
  EXPECT_TRUE(f.m->closed());
}

}  // namespace
}  // namespace sluice::maintainer::testing
