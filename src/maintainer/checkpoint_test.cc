#include "maintainer/checkpoint.h"

#include <gtest/gtest.h>

#include "maintainer/test_util.h"

namespace sluice::maintainer::testing {
namespace {

using std::chrono::milliseconds;

TEST(MaintainerCheckpoint, WatermarkSeqRules) {
  WatermarkTracker w;
  NodeId a("a"), b("b");
  EXPECT_TRUE(w.Update(a, {Ts(200), Ts(200), 2}));
  EXPECT_FALSE(w.Update(a, {Ts(150), Ts(150), 1}));  // Older seq: stale.
  EXPECT_TRUE(w.Update(a, {Ts(180), Ts(180), 2}));   // Same seq: only raises.
  EXPECT_EQ(w.Find(a)->checkpoint_ts, Ts(200));
  EXPECT_TRUE(w.Update(a, {Ts(170), Ts(170), 3}));  // Newer seq: a dispatcher was added.
  EXPECT_EQ(w.Find(a)->checkpoint_ts, Ts(170));
  EXPECT_EQ(w.Min({a, b}), std::nullopt);  // b has not reported.
  EXPECT_TRUE(w.Update(b, {Ts(160), Ts(160), 1}));
  EXPECT_EQ(w.Min({a, b}), Ts(160));
  w.Remove(b);
  EXPECT_EQ(w.Min({a}), Ts(170));
}

TEST(MaintainerCheckpoint, NextCheckpointTakesTheLimitsAndNeverGoesBack) {
  EXPECT_EQ(NextCheckpoint(Ts(100), std::nullopt, {}), Ts(100));
  EXPECT_EQ(NextCheckpoint(Ts(100), Ts(300), {}), Ts(300));
  EXPECT_EQ(NextCheckpoint(Ts(100), Ts(300), {Ts(250), std::nullopt, std::nullopt}), Ts(250));
  EXPECT_EQ(NextCheckpoint(Ts(100), Ts(300), {std::nullopt, Ts(199), Ts(220)}), Ts(199));
  EXPECT_EQ(NextCheckpoint(Ts(260), Ts(300), {Ts(250), std::nullopt, std::nullopt}), Ts(260));
}

TEST(MaintainerCheckpoint, ReorderedHeartbeatsNeverMoveItBack) {
  Fixture f({Table(1), Table(2)}, {"a", "b"});
  f.Boot();
  f.cluster.AdvanceAll(Ts(300));
  HeartbeatRequest old_a = f.cluster.Heartbeat(NodeId("a"));
  HeartbeatRequest old_b = f.cluster.Heartbeat(NodeId("b"));
  f.cluster.AdvanceAll(Ts(500));
  f.cluster.nodes[NodeId("a")].seq += 1;  // Its dispatcher set changed meanwhile.
  f.m->OnHeartbeat(NodeId("a"), f.cluster.Heartbeat(NodeId("a")));
  f.m->OnHeartbeat(NodeId("b"), f.cluster.Heartbeat(NodeId("b")));
  EXPECT_EQ(f.m->checkpoint(), Ts(500));
  f.m->OnHeartbeat(NodeId("a"), old_a);  // Older seq: ignored.
  f.m->OnHeartbeat(NodeId("b"), old_b);  // Same seq, lower: ignored.
  f.Tick(milliseconds(600));
  EXPECT_EQ(f.m->checkpoint(), Ts(500));
  // A newer seq with a lower watermark is accepted, but the changefeed
  // checkpoint still does not go back.
  HeartbeatRequest low = f.cluster.Heartbeat(NodeId("b"));
  low.watermark->seq += 5;
  low.watermark->checkpoint_ts = Ts(450);
  f.m->OnHeartbeat(NodeId("b"), low);
  EXPECT_EQ(f.m->checkpoint(), Ts(500));
}

TEST(MaintainerCheckpoint, NeedsAWatermarkFromEveryNodeWithSpans) {
  Fixture f({Table(1), Table(2)}, {"a", "b"});
  f.m->Start();
  f.cluster.Pump(f.m.get(), &f.outbox, /*heartbeats=*/false);
  f.cluster.AdvanceAll(Ts(300));
  f.m->OnHeartbeat(NodeId("a"), f.cluster.Heartbeat(NodeId("a")));
  EXPECT_EQ(f.m->checkpoint(), Ts(100));  // b hosts a span and has not reported.
  f.m->OnHeartbeat(NodeId("b"), f.cluster.Heartbeat(NodeId("b")));
  EXPECT_EQ(f.m->checkpoint(), Ts(300));
}

TEST(MaintainerCheckpoint, HeldByAddingAndAbsentSpans) {
  Fixture f({Table(1), Table(2)}, {"a", "b", "c"});
  f.Boot();
  f.cluster.AdvanceAll(Ts(300));
  f.cluster.Pump(f.m.get(), &f.outbox);
  ASSERT_EQ(f.m->checkpoint(), Ts(300));
  // A DDL at 350 creates table 3; its create is not acknowledged.
  for (auto& [id, node] : f.cluster.nodes) node.ignore_schedules = true;
  BlockReport r;
  r.dispatcher_id = kDefaultTableTriggerId;
  r.block_ts = Ts(350);
  r.tables_to_add = {Table(3)};
  f.m->OnBlockStatus(NodeId("a"), r);
  f.cluster.AdvanceAll(Ts(800));
  f.cluster.Pump(f.m.get(), &f.outbox);
  EXPECT_EQ(f.m->checkpoint(), Ts(350));  // The adding span's start ts.
  NodeId host = f.m->spans().FindTable(3)->node;
  ASSERT_EQ(host, NodeId("c"));  // The node with the fewest spans.
  // Its node goes away: the span is absent at 350 and still holds it.
  f.cluster.nodes.erase(host);
  f.m->OnNodeRemoved(host);
  f.cluster.Pump(f.m.get(), &f.outbox);
  EXPECT_EQ(f.m->checkpoint(), Ts(350));
  for (auto& [id, node] : f.cluster.nodes) node.ignore_schedules = false;
  f.Tick(milliseconds(600));
  f.cluster.Pump(f.m.get(), &f.outbox);
  EXPECT_EQ(f.m->spans().FindTable(3)->state, ReplicaState::kWorking);
  f.cluster.AdvanceAll(Ts(800));
  f.cluster.Pump(f.m.get(), &f.outbox);
  EXPECT_EQ(f.m->checkpoint(), Ts(800));
}

}  // namespace
}  // namespace sluice::maintainer::testing
