#include <gtest/gtest.h>

#include "maintainer/operator_controller.h"
#include "maintainer/test_util.h"

namespace sluice::maintainer::testing {
namespace {

using std::chrono::milliseconds;

TEST(MaintainerOperators, AddIsResentUntilTheNodeReportsWorking) {
  Fixture f({Table(1)}, {"a"});
  f.cluster.nodes[NodeId("a")].ignore_schedules = true;
  f.Boot();
  DispatcherId t1 = f.IdOf(1);
  EXPECT_EQ(f.m->spans().Find(t1)->state, ReplicaState::kScheduling);
  f.Tick(milliseconds(100));  // Too early to resend.
  EXPECT_TRUE(FakeOutbox::Filter<dm::ScheduleRequest>(f.outbox.Take()).empty());
  f.Tick(milliseconds(500));
  auto sent = f.outbox.Take();
  ASSERT_EQ(FakeOutbox::Filter<dm::ScheduleRequest>(sent).size(), 1u);
  f.cluster.nodes[NodeId("a")].ignore_schedules = false;
  for (const Sent& s : sent) f.cluster.Deliver(f.m.get(), s);
  EXPECT_EQ(f.m->spans().Find(t1)->state, ReplicaState::kScheduling);  // Not yet reported.
  f.cluster.Pump(f.m.get(), &f.outbox);
  EXPECT_EQ(f.m->spans().Find(t1)->state, ReplicaState::kWorking);
  EXPECT_EQ(f.m->operators().size(), 0u);
  f.Tick(milliseconds(600));
  EXPECT_TRUE(FakeOutbox::Filter<dm::ScheduleRequest>(f.outbox.Take()).empty());
}

TEST(MaintainerOperators, NodeRemovalMovesItsSpansFromTheirCheckpoint) {
  Fixture f({Table(1), Table(2), Table(3), Table(4)}, {"a", "b", "c"});
  f.Boot();
  f.cluster.AdvanceAll(Ts(300));
  f.cluster.Pump(f.m.get(), &f.outbox);
  EXPECT_EQ(f.m->checkpoint(), Ts(300));
  std::vector<DispatcherId> on_b = f.m->spans().OnNode(NodeId("b"));
  ASSERT_FALSE(on_b.empty());
  // b stops answering for good; its spans keep their checkpoint.
  f.cluster.nodes.erase(NodeId("b"));
  f.m->OnNodeRemoved(NodeId("b"));
  auto sent = f.outbox.Take();
  auto creates = FakeOutbox::Filter<dm::ScheduleRequest>(sent);
  ASSERT_EQ(creates.size(), on_b.size());
  for (auto& [to, r] : creates) {
    EXPECT_NE(to, NodeId("b"));
    EXPECT_EQ(r.config.start_ts, Ts(300));
  }
  for (const Sent& s : sent) f.cluster.Deliver(f.m.get(), s);
  f.cluster.Pump(f.m.get(), &f.outbox);
  EXPECT_EQ(f.m->spans().CountInState(ReplicaState::kWorking), 4u);
  EXPECT_TRUE(f.m->spans().OnNode(NodeId("b")).empty());
  EXPECT_EQ(f.m->checkpoint(), Ts(300));
}

TEST(MaintainerOperators, ANodeThatJoinsGetsItsShareOneMoveAtATime) {
  Fixture f({Table(1), Table(2), Table(3), Table(4), Table(5), Table(6)}, {"a", "b"});
  f.Boot();
  f.cluster.AdvanceAll(Ts(300));
  f.cluster.Pump(f.m.get(), &f.outbox);
  ASSERT_EQ(f.m->spans().OnNode(NodeId("a")).size(), 3u);
  ASSERT_EQ(f.m->spans().OnNode(NodeId("b")).size(), 3u);
  // Delivers what the maintainer sends until it is quiet, checking every
  // create: to c, from the span's checkpoint.
  size_t moves = 0;
  auto pump = [&] {
    for (int i = 0; i < 20; ++i) {
      auto sent = f.outbox.Take();
      for (auto& [to, r] : FakeOutbox::Filter<dm::ScheduleRequest>(sent)) {
        if (r.action != dm::ScheduleAction::kCreate) continue;
        EXPECT_EQ(to, NodeId("c"));
        EXPECT_EQ(r.config.start_ts, Ts(300));
        ++moves;
      }
      for (const Sent& s : sent) f.cluster.Deliver(f.m.get(), s);
      for (auto& [id, node] : f.cluster.nodes) f.m->OnHeartbeat(id, f.cluster.Heartbeat(id));
      if (sent.empty()) return;
    }
  };
  f.cluster.nodes[NodeId("c")];
  f.m->OnNodeAdded(NodeId("c"));
  f.outbox.Take();  // The bootstrap to c is lost; rounds pass without c.
  f.Tick(milliseconds(100));
  EXPECT_EQ(f.m->operators().size(), 0u);
  f.Tick(milliseconds(1000));  // The bootstrap is resent.
  pump();                      // c answers; the first move starts.
  for (int round = 0; round < 20; ++round) {
    f.Tick(milliseconds(100));
    EXPECT_LE(f.m->operators().size(), 1u);  // Never more than one span in flight.
    pump();
    if (f.m->operators().size() == 0 && f.m->spans().OnNode(NodeId("c")).size() == 2) break;
  }
  EXPECT_EQ(f.m->spans().OnNode(NodeId("a")).size(), 2u);
  EXPECT_EQ(f.m->spans().OnNode(NodeId("b")).size(), 2u);
  EXPECT_EQ(f.m->spans().OnNode(NodeId("c")).size(), 2u);
  EXPECT_EQ(moves, 2u);
  EXPECT_EQ(f.m->checkpoint(), Ts(300));
  // Balanced: nothing moves any more.
  f.Tick(milliseconds(100));
  EXPECT_EQ(f.m->operators().size(), 0u);
  EXPECT_TRUE(FakeOutbox::Filter<dm::ScheduleRequest>(f.outbox.Take()).empty());
}

TEST(MaintainerOperators, MoveTableOnRequestStaysWhereItWasMoved) {
  Fixture f({Table(1), Table(2)}, {"a", "b"});
  f.Boot();
  f.cluster.AdvanceAll(Ts(300));
  f.cluster.Pump(f.m.get(), &f.outbox);
  const DispatcherId t1 = f.IdOf(1);
  const NodeId from = f.m->spans().Find(t1)->node;
  const NodeId to = from == NodeId("a") ? NodeId("b") : NodeId("a");
  EXPECT_EQ(f.m->MoveTable(999, to).code(), Code::kNotFound);
  EXPECT_EQ(f.m->MoveTable(1, NodeId("zz")).code(), Code::kInvalidArgument);
  ASSERT_TRUE(f.m->MoveTable(1, to).ok());
  EXPECT_EQ(f.m->MoveTable(1, to).code(), Code::kAlreadyExists);  // In flight.
  for (int round = 0; round < 5; ++round) {
    f.Tick(milliseconds(100));
    auto sent = f.outbox.Take();
    for (auto& [node, r] : FakeOutbox::Filter<dm::ScheduleRequest>(sent)) {
      if (r.action == dm::ScheduleAction::kCreate) {
        EXPECT_EQ(node, to);
        EXPECT_EQ(r.config.start_ts, Ts(300));
      }
    }
    for (const Sent& s : sent) f.cluster.Deliver(f.m.get(), s);
    f.cluster.Pump(f.m.get(), &f.outbox);
  }
  EXPECT_EQ(f.m->spans().Find(t1)->node, to);
  EXPECT_EQ(f.m->spans().Find(t1)->state, ReplicaState::kWorking);
  // Two on one node, none on the other: no node joined, so nothing
  // balances the move away.
  EXPECT_EQ(f.m->spans().OnNode(to).size(), 2u);
  EXPECT_EQ(f.m->operators().size(), 0u);
  EXPECT_EQ(f.m->checkpoint(), Ts(300));
}

TEST(MaintainerOperators, AddToANodeThatGoesAwayIsCancelledAndRescheduled) {
  Fixture f({Table(1), Table(2)}, {"a", "b"});
  f.cluster.nodes[NodeId("b")].ignore_schedules = true;
  f.Boot();
  std::vector<DispatcherId> on_b = f.m->spans().OnNode(NodeId("b"));
  ASSERT_EQ(on_b.size(), 1u);
  EXPECT_EQ(f.m->spans().Find(on_b[0])->state, ReplicaState::kScheduling);
  f.cluster.nodes.erase(NodeId("b"));
  f.m->OnNodeRemoved(NodeId("b"));
  f.cluster.Pump(f.m.get(), &f.outbox);
  EXPECT_EQ(f.m->spans().Find(on_b[0])->state, ReplicaState::kWorking);
  EXPECT_EQ(f.m->spans().Find(on_b[0])->node, NodeId("a"));
}

TEST(MaintainerOperators, ScheduleResponseCompletesOnlyAStop) {
  Fixture f({Table(1)}, {"a"});
  f.Boot();
  DispatcherId t1 = f.IdOf(1);
  ASSERT_EQ(f.m->spans().Find(t1)->state, ReplicaState::kWorking);
  // A dropped table: the node's kStopped answer finishes the remove.
  BlockReport r;
  r.dispatcher_id = kDefaultTableTriggerId;
  r.block_ts = Ts(200);
  r.tables_to_drop = {1};
  r.tables_to_add = {Table(2)};
  f.m->OnBlockStatus(NodeId("a"), r);
  DispatcherId t2 = f.IdOf(2);
  f.outbox.Take();
  f.m->OnScheduleResponse(
      NodeId("a"), {"cf", MaintainerEpoch(7), t2, dm::ComponentState::kWorking, Status::Ok()});
  EXPECT_EQ(f.m->spans().Find(t2)->state, ReplicaState::kScheduling);  // Waits for a heartbeat.
  f.m->OnScheduleResponse(
      NodeId("a"), {"cf", MaintainerEpoch(6), t1, dm::ComponentState::kStopped, Status::Ok()});
  EXPECT_NE(f.m->spans().Find(t1), nullptr);  // Another generation's answer.
  f.m->OnScheduleResponse(
      NodeId("a"), {"cf", MaintainerEpoch(7), t1, dm::ComponentState::kStopped, Status::Ok()});
  EXPECT_EQ(f.m->spans().Find(t1), nullptr);
}

// OperatorController on its own: a move removes first, then adds on the
// destination from the checkpoint the origin reached.
struct OpHarness {
  OpHarness()
      : ops(
            &spans,
            [this](const NodeId& to, dm::ScheduleAction a, const dm::DispatcherConfig& c) {
              sent.push_back({to, a, c});
            },
            milliseconds(500)) {}
  struct Req {
    NodeId to;
    dm::ScheduleAction action;
    dm::DispatcherConfig config;
  };
  SpanController spans;
  std::vector<Req> sent;
  OperatorController ops;
  Clock::TimePoint now{std::chrono::hours(1)};
};

TEST(MaintainerOperators, MoveCarriesTheCheckpointAndNeverDuplicates) {
  OpHarness h;
  const DispatcherId id{1, 1};
  ASSERT_TRUE(h.spans.AddAbsent(id, Table(5), Ts(100)));
  h.spans.SetState(id, ReplicaState::kWorking, NodeId("a"));
  ASSERT_TRUE(h.ops.Move(id, NodeId("b"), h.now).ok());
  EXPECT_EQ(h.ops.Move(id, NodeId("c"), h.now).code(), Code::kAlreadyExists);
  ASSERT_EQ(h.sent.size(), 1u);
  EXPECT_EQ(h.sent[0].to, NodeId("a"));
  EXPECT_EQ(h.sent[0].action, dm::ScheduleAction::kRemove);
  EXPECT_EQ(h.spans.Find(id)->state, ReplicaState::kRemoving);
  EXPECT_EQ(h.ops.MinCheckpoint(), Ts(100));
  // Working from b before the origin stopped is not the move's completion.
  h.ops.OnStatus(NodeId("b"), {id, dm::ComponentState::kWorking, Ts(1)}, h.now);
  EXPECT_TRUE(h.ops.Has(id));
  h.ops.OnStatus(NodeId("a"), {id, dm::ComponentState::kStopped, Ts(240)}, h.now);
  ASSERT_EQ(h.sent.size(), 2u);
  EXPECT_EQ(h.sent[1].to, NodeId("b"));
  EXPECT_EQ(h.sent[1].action, dm::ScheduleAction::kCreate);
  EXPECT_EQ(h.sent[1].config.start_ts, Ts(240));
  EXPECT_EQ(h.ops.MinCheckpoint(), Ts(240));
  h.ops.Tick(h.now + milliseconds(600));
  ASSERT_EQ(h.sent.size(), 3u);  // Resent.
  EXPECT_EQ(h.sent[2].to, NodeId("b"));
  h.ops.OnStatus(NodeId("b"), {id, dm::ComponentState::kWorking, Ts(240)}, h.now);
  EXPECT_FALSE(h.ops.Has(id));
  EXPECT_EQ(h.spans.Find(id)->state, ReplicaState::kWorking);
  EXPECT_EQ(h.spans.Find(id)->node, NodeId("b"));
}

TEST(MaintainerOperators, MoveWhoseDestinationGoesAwayEndsAbsent) {
  OpHarness h;
  const DispatcherId id{1, 1};
  ASSERT_TRUE(h.spans.AddAbsent(id, Table(5), Ts(100)));
  h.spans.SetState(id, ReplicaState::kWorking, NodeId("a"));
  ASSERT_TRUE(h.ops.Move(id, NodeId("b"), h.now).ok());
  h.ops.OnNodeRemoved(NodeId("b"), h.now);
  h.ops.OnStatus(NodeId("a"), {id, dm::ComponentState::kStopped, Ts(150)}, h.now);
  EXPECT_FALSE(h.ops.Has(id));
  EXPECT_EQ(h.spans.Find(id)->state, ReplicaState::kAbsent);
  EXPECT_EQ(h.spans.Find(id)->checkpoint, Ts(150));
  EXPECT_EQ(h.sent.size(), 1u);  // Nothing was created on b.
}

TEST(MaintainerOperators, RemoveWithEraseDropsTheSpanAndOriginLossFinishesIt) {
  OpHarness h;
  const DispatcherId x{1, 1}, y{1, 2};
  ASSERT_TRUE(h.spans.AddAbsent(x, Table(5), Ts(100)));
  ASSERT_TRUE(h.spans.AddAbsent(y, Table(6), Ts(100)));
  h.spans.SetState(x, ReplicaState::kWorking, NodeId("a"));
  h.spans.SetState(y, ReplicaState::kWorking, NodeId("b"));
  ASSERT_TRUE(h.ops.Remove(x, /*erase=*/true, h.now).ok());
  ASSERT_TRUE(h.ops.Remove(y, /*erase=*/false, h.now).ok());
  EXPECT_EQ(h.ops.MinCheckpoint(), Ts(100));  // Only the span that stays is held.
  h.ops.OnStatus(NodeId("a"), {x, dm::ComponentState::kStopped, Ts(120)}, h.now);
  EXPECT_EQ(h.spans.Find(x), nullptr);
  h.ops.OnNodeRemoved(NodeId("b"), h.now);
  EXPECT_EQ(h.ops.size(), 0u);
  EXPECT_EQ(h.spans.Find(y)->state, ReplicaState::kAbsent);
}

}  // namespace
}  // namespace sluice::maintainer::testing
