#include "dispatcher/table_trigger_dispatcher.h"

#include <gtest/gtest.h>

#include "dispatcher/test_helpers.h"

namespace sluice::dispatcher {
namespace {

using testing::Ddl;
using testing::DispatcherFixture;
using testing::Dml;

constexpr int64_t kTrigger = event::kTableTriggerTableId;

class TableTriggerDispatcherTest : public DispatcherFixture {
 protected:
  void SetUp() override { sink_.set_auto_flush(true); }

  std::shared_ptr<TableTriggerDispatcher> Make() {
    auto d = TableTriggerDispatcher::Create(Options(kTrigger, Ts(100)));
    EXPECT_TRUE(d.ok()) << d.status().ToString();
    return d.ok() ? *d : nullptr;
  }
};

TEST_F(TableTriggerDispatcherTest, CreateTableIsWrittenHereAndReportsTheNewTable) {
  auto d = Make();
  auto create = Ddl(110, {kTrigger});
  create->tables_to_add = {event::TableRef{1, 200, "db", "t2"}};
  d->OnDdl(create);
  ASSERT_TRUE(WaitStatus(BlockStage::kNone, 110));
  ASSERT_TRUE(WaitLog("D110"));
  BlockStatus s = statuses()[0];
  EXPECT_FALSE(s.is_blocked);
  ASSERT_EQ(s.tables_to_add.size(), 1u);
  EXPECT_EQ(s.tables_to_add[0].table_id, 200);
  // CREATE DATABASE: written, nothing to report.
  d->OnDdl(Ddl(115, {kTrigger}));
  ASSERT_TRUE(WaitLog("D110 D115"));
  EXPECT_EQ(statuses().size(), 1u);
}

TEST_F(TableTriggerDispatcherTest, DropTableGoesThroughTheBarrier) {
  auto d = Make();
  auto drop = Ddl(120, {100, kTrigger});
  drop->tables_to_drop = {100};
  d->OnDdl(drop);
  d->OnResolved(Ts(130));
  ASSERT_TRUE(WaitStatus(BlockStage::kWaiting, 120));
  EXPECT_EQ(statuses()[0].tables_to_drop, std::vector<int64_t>{100});
  EXPECT_TRUE(statuses()[0].is_blocked);
  EXPECT_EQ(sink_.Log(), "");
  EXPECT_EQ(d->checkpoint(), Ts(100));
  d->HandleBarrierAction(Ts(120), BarrierAction::kWrite);
  ASSERT_TRUE(WaitStatus(BlockStage::kDone, 120));
  ASSERT_TRUE(WaitLog("D120"));
  ASSERT_TRUE(PollUntil([&] { return d->checkpoint() == Ts(130); }));
}

TEST_F(TableTriggerDispatcherTest, DropDatabaseGoesThroughTheBarrier) {
  auto d = Make();
  auto drop_db = Ddl(120, {}, event::InfluenceType::kDb);
  drop_db->tables_to_drop = {100, 101};
  d->OnDdl(drop_db);
  ASSERT_TRUE(WaitStatus(BlockStage::kWaiting, 120));
  EXPECT_EQ(statuses()[0].blocked_tables.influence, event::InfluenceType::kDb);
  d->HandleBarrierAction(Ts(120), BarrierAction::kPass);
  ASSERT_TRUE(WaitStatus(BlockStage::kDone, 120));
  EXPECT_EQ(sink_.Log(), "");
}

TEST_F(TableTriggerDispatcherTest, DdlOfOneTableIsLeftToItsDispatcher) {
  auto d = Make();
  d->OnDdl(Ddl(110, {100}));  // ALTER TABLE of table 100 only.
  d->OnDdl(Ddl(115, {kTrigger}));
  ASSERT_TRUE(WaitLog("D115"));
  ASSERT_TRUE(PollUntil([&] { return !d->blocked(); }));
  EXPECT_TRUE(statuses().empty());
}

TEST_F(TableTriggerDispatcherTest, DmlIsNotItsBusiness) {
  auto d = Make();
  d->OnDml(Dml(110, 105, 12));
  EXPECT_EQ(sink_.Log(), "");
  EXPECT_EQ(acked(), 12u);
}

TEST_F(TableTriggerDispatcherTest, OnlyTheDdlSpanId) {
  EXPECT_EQ(TableTriggerDispatcher::Create(Options(55, Ts(1))).status().code(),
            Code::kInvalidArgument);
}

}  // namespace
}  // namespace sluice::dispatcher
