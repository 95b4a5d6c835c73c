// Two maintainer generations race bootstraps and schedules from several
// threads (meant to run under TSan too). Afterwards there is exactly one
// owner, the newer one, and the fake's ordered effect log shows that nothing
// of the older one took effect after the newer one's first bootstrap.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "common/test_util.h"
#include "dispatchermanager/dispatcher_orchestrator.h"
#include "dispatchermanager/test_fakes.h"

namespace sluice::dispatchermanager {
namespace {

using testing::Boot;
using testing::Did;
using testing::FakeEvent;
using testing::FakeProvider;
using testing::Sched;

constexpr int kRounds = 300;

struct Maintainer {
  std::string node;
  uint64_t epoch;
  uint64_t id_tag;  // High half of the dispatcher ids it schedules.
};

void BootstrapLoop(DispatcherOrchestrator* orch, const Maintainer& m, Notification* start) {
  ASSERT_TRUE(start->WaitFor());
  for (int i = 0; i < kRounds; ++i) {
    std::optional<BootstrapResponse> r = orch->HandleBootstrap(Boot(m.node, m.epoch));
    ASSERT_TRUE(r.has_value());
    Code code = r->status.code();
    ASSERT_TRUE(code == Code::kOk || code == Code::kStaleOwner) << r->status.ToString();
  }
}

void ScheduleLoop(DispatcherOrchestrator* orch, const Maintainer& m, Notification* start) {
  ASSERT_TRUE(start->WaitFor());
  for (int i = 0; i < kRounds; ++i) {
    DispatcherId id = Did(m.id_tag, static_cast<uint64_t>(i % 16) + 1);
    ScheduleAction action = (i / 16) % 2 == 0 ? ScheduleAction::kCreate : ScheduleAction::kRemove;
    std::optional<ScheduleResponse> r = orch->HandleSchedule(Sched(m.node, m.epoch, action, id));
    ASSERT_TRUE(r.has_value());
    Code code = r->status.code();
    // Before any bootstrap there is no manager yet.
    ASSERT_TRUE(code == Code::kOk || code == Code::kStaleOwner || code == Code::kNotFound)
        << r->status.ToString();
  }
}

TEST(RaceTest, RacingMaintainersLeaveOneOwner) {
  FakeProvider provider;
  DispatcherOrchestrator orch(&provider);
  const Maintainer old_gen{"node-a", 5, 1};
  const Maintainer new_gen{"node-b", 6, 2};
  Notification start;
  std::vector<std::thread> threads;
  for (const Maintainer* m : {&old_gen, &new_gen}) {
    threads.emplace_back(BootstrapLoop, &orch, *m, &start);
    threads.emplace_back(ScheduleLoop, &orch, *m, &start);
    threads.emplace_back(ScheduleLoop, &orch, *m, &start);
  }
  start.Notify();
  for (std::thread& t : threads) t.join();

  std::shared_ptr<DispatcherManager> manager = orch.manager("cf");
  ASSERT_NE(manager, nullptr);
  EXPECT_EQ(manager->owner(), NodeId(new_gen.node));
  EXPECT_EQ(manager->epoch(), MaintainerEpoch(new_gen.epoch));
  EXPECT_EQ(provider.opens(), 1);

  std::vector<FakeEvent> events = provider.world("cf")->events();
  size_t takeover = events.size();
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].kind == FakeEvent::Kind::kOwner && events[i].owner == NodeId(new_gen.node)) {
      takeover = i;
      break;
    }
  }
  ASSERT_LT(takeover, events.size());
  for (size_t i = takeover; i < events.size(); ++i) {
    const FakeEvent& e = events[i];
    if (e.kind == FakeEvent::Kind::kOwner) {
      EXPECT_EQ(e.owner, NodeId(new_gen.node)) << "event " << i;
    } else {
      EXPECT_NE(e.id.high, old_gen.id_tag) << "old generation acted at event " << i;
    }
  }
  std::optional<ScheduleResponse> late =
      orch.HandleSchedule(Sched(old_gen.node, old_gen.epoch, ScheduleAction::kCreate, Did(1, 99)));
  ASSERT_TRUE(late.has_value());
  EXPECT_EQ(late->status.code(), Code::kStaleOwner);
}

}  // namespace
}  // namespace sluice::dispatchermanager
