#include "eventservice/event_service.h"

#include <gtest/gtest.h>

#include "eventservice/service_fixture.h"

namespace sluice::eventservice {
namespace {

using testing::Ddl;
using testing::Del;
using testing::Disp;
using testing::EventServiceFixture;
using testing::IntHandleSchema;
using testing::Put;
using testing::Recorder;
using testing::RowValue;

class EventServiceTest : public EventServiceFixture {};

TEST_F(EventServiceTest, DeliversTransactionsInCommitOrderThenResolved) {
  StartService();
  Recorder rec(Disp(1), /*auto_ack=*/true);
  auto kv = Register(&rec, Disp(1), Ts(10));
  // Handed over out of order, as regions deliver them.
  Persist(kv.get(),
          {Put(kTable, 2, RowValue("b", 2), 30, 26, RowValue("b", 1)),
           Put(kTable, 1, RowValue("a", 1), 20, 15), Del(kTable, 3, RowValue("c", 3), 30, 25),
           Put(kTable, 3, RowValue("c", 3), 20, 15)});
  kv->AdvanceResolvedTs(Ts(40));
  ASSERT_TRUE(PollUntil([&] { return rec.HasResolved(Ts(40)); })) << rec.Summary();
  EXPECT_EQ(rec.Summary(), "M20 M30 M30 R40");
  auto items = rec.items();
  const event::DmlEvent& first = *items[0].dml;
  EXPECT_EQ(first.start_ts, Ts(15));
  ASSERT_EQ(first.rows.size(), 2u);
  EXPECT_EQ(first.rows[0].row[0], codec::Datum::Int64(1));
  EXPECT_EQ(first.rows[1].row[0], codec::Datum::Int64(3));
  EXPECT_EQ(first.dispatcher_id, Disp(1));
  EXPECT_EQ(first.physical_table_id, kTable);
  EXPECT_TRUE(first.last_piece);
  EXPECT_EQ(first.piece, 0u);
  // Same commit ts, ordered by start ts: the delete (start 25), the update (26).
  EXPECT_EQ(items[1].dml->start_ts, Ts(25));
  EXPECT_EQ(items[1].dml->rows[0].kind, event::RowKind::kDelete);
  EXPECT_EQ(items[2].dml->rows[0].kind, event::RowKind::kUpdate);
  EXPECT_EQ(service_->UnackedBytes(Disp(1)), 0u);
}

TEST_F(EventServiceTest, MergesDdlsInCommitOrderAndDecodesWithTheSchemaOfTheTime) {
  auto v2 = IntHandleSchema(kTable, Ts(25), /*with_extra=*/true);
  schema_.AddSchema(kTable, v2);
  // A version at 40 that a DML committed at 40 must not be decoded with.
  model::TableInfo wide = v2->info();
  wide.columns.push_back(testing::Col(5, "later", testing::mt::kLonglong));
  schema_.AddSchema(kTable, *event::TableSchema::Make("db", 1, wide, Ts(40)));
  schema_.AddDdl(Ddl(kTable, 25, "ALTER TABLE t ADD COLUMN extra BIGINT DEFAULT 42", v2));
  schema_.AddDdl(Ddl(kTable, 40, "ALTER TABLE t ADD COLUMN later BIGINT"));
  schema_.AddDdl(Ddl(kTable + 1, 35, "ALTER TABLE other ..."));  // Not this table's.
  StartService();
  Recorder rec(Disp(1), true);
  auto kv = Register(&rec, Disp(1), Ts(10));
  Persist(kv.get(),
          {Put(kTable, 1, RowValue("a", 1), 20, 15), Put(kTable, 2, RowValue("b", 2), 30, 28),
           Put(kTable, 3, RowValue("c", 3), 40, 38)});
  kv->AdvanceResolvedTs(Ts(50));
  ASSERT_TRUE(PollUntil([&] { return rec.HasResolved(Ts(50)); })) << rec.Summary();
  // DML at 40 comes before the DDL at 40.
  EXPECT_EQ(rec.Summary(), "M20 D25 M30 M40 D40 R50");
  auto items = rec.items();
  EXPECT_EQ(items[0].dml->rows[0].row.size(), 3u);
  ASSERT_EQ(items[2].dml->rows[0].row.size(), 4u);
  EXPECT_EQ(items[2].dml->rows[0].row[3], codec::Datum::Int64(42));  // Default-filled.
  EXPECT_EQ(items[3].dml->rows[0].row.size(), 4u);
  EXPECT_EQ(items[3].dml->schema, v2);
}

TEST_F(EventServiceTest, ResolvedWaitsForTheSchemaStore) {
  schema_.SetResolved(Ts(25));
  StartService();
  Recorder rec(Disp(1), true);
  auto kv = Register(&rec, Disp(1), Ts(10));
  Persist(kv.get(),
          {Put(kTable, 1, RowValue("a", 1), 20, 15), Put(kTable, 2, RowValue("b", 2), 30, 28)});
  kv->AdvanceResolvedTs(Ts(50));
  ASSERT_TRUE(PollUntil([&] { return rec.HasResolved(Ts(25)); })) << rec.Summary();
  EXPECT_EQ(rec.Summary(), "M20 R25");
  schema_.SetResolved(Ts(60));  // The listener wakes the dispatcher.
  ASSERT_TRUE(PollUntil([&] { return rec.HasResolved(Ts(50)); })) << rec.Summary();
  EXPECT_EQ(rec.Summary(), "M20 R25 M30 R50");
}

TEST_F(EventServiceTest, RepeatsTheResolvedMarkWhenIdle) {
  StartService();
  Recorder rec(Disp(1), true);
  auto kv = Register(&rec, Disp(1), Ts(10));
  kv->AdvanceResolvedTs(Ts(40));
  ASSERT_TRUE(PollUntil([&] { return rec.count('R') == 1; })) << rec.Summary();
  ASSERT_TRUE(clock_.AwaitWaiters(options_.num_workers));
  clock_.Advance(std::chrono::milliseconds(1000));  // Ticks, but not yet due.
  ASSERT_TRUE(clock_.AwaitWaiters(options_.num_workers));
  clock_.Advance(std::chrono::milliseconds(1000));
  ASSERT_TRUE(PollUntil([&] { return rec.count('R') == 2; })) << rec.Summary();
  EXPECT_EQ(rec.Summary(), "R40 R40");
  EXPECT_GE(service_->stats().resolved_events, 2u);
}

TEST_F(EventServiceTest, FilterDropsRowsAndEmptyTransactions) {
  StartService();
  Recorder rec(Disp(1), true);
  RowFilter no_deletes = [](const event::TableSchema&, const event::RowChange& row,
                            Ts) -> Result<bool> { return row.kind == event::RowKind::kDelete; };
  auto kv = Register(&rec, Disp(1), Ts(10), 0, no_deletes);
  Persist(kv.get(),
          {Put(kTable, 1, RowValue("a", 1), 20, 15), Del(kTable, 2, RowValue("b", 2), 20, 15),
           Del(kTable, 3, RowValue("c", 3), 30, 25)});
  kv->AdvanceResolvedTs(Ts(40));
  ASSERT_TRUE(PollUntil([&] { return rec.HasResolved(Ts(40)); })) << rec.Summary();
  EXPECT_EQ(rec.Summary(), "M20 R40");
  EXPECT_EQ(rec.items()[0].dml->rows.size(), 1u);
  EXPECT_EQ(service_->stats().rows_filtered, 2u);
}

// After a restart the sink may say a DDL at start + 1 was cut short: its
// earlier rows at the same ts are downstream already, the DDL is not.
TEST_F(EventServiceTest, SkipDmlAfterStartDropsOnlyThatTsRows) {
  schema_.AddDdl(Ddl(kTable, 20, "ALTER TABLE t COMMENT 'x'"));
  StartService();
  Recorder rec(Disp(1), true);
  rec.set_service(service_.get());
  DispatcherRegistration reg;
  reg.id = Disp(1);
  reg.table_id = kTable;
  reg.start_ts = Ts(19);
  reg.skip_dml_after_start_ts = true;
  reg.consumer = &rec;
  ASSERT_TRUE(service_->RegisterDispatcher(std::move(reg)).ok());
  auto kv = puller_.last();
  Persist(kv.get(),
          {Put(kTable, 1, RowValue("a", 1), 20, 15), Put(kTable, 2, RowValue("b", 2), 20, 15),
           Put(kTable, 3, RowValue("c", 3), 30, 25)});
  kv->AdvanceResolvedTs(Ts(40));
  ASSERT_TRUE(PollUntil([&] { return rec.HasResolved(Ts(40)); })) << rec.Summary();
  EXPECT_EQ(rec.Summary(), "D20 M30 R40");
  EXPECT_EQ(service_->stats().rows_skipped_at_start, 2u);
}

TEST_F(EventServiceTest, RowsOfADroppedTableAreSkipped) {
  schema_.DropTable(kTable, Ts(25));
  schema_.AddDdl(Ddl(kTable, 25, "DROP TABLE t"));
  StartService();
  Recorder rec(Disp(1), true);
  auto kv = Register(&rec, Disp(1), Ts(10));
  Persist(kv.get(),
          {Put(kTable, 1, RowValue("a", 1), 20, 15), Put(kTable, 2, RowValue("b", 2), 30, 28),
           Put(kTable, 3, RowValue("c", 3), 30, 28)});
  kv->AdvanceResolvedTs(Ts(40));
  ASSERT_TRUE(PollUntil([&] { return rec.HasResolved(Ts(40)); })) << rec.Summary();
  EXPECT_EQ(rec.Summary(), "M20 D25 R40");
  EXPECT_EQ(service_->stats().rows_of_dropped_tables, 2u);
}

TEST_F(EventServiceTest, UndecodableRowFailsTheDispatcherWithTableAndTs) {
  StartService();
  Recorder rec(Disp(1), true);
  auto kv = Register(&rec, Disp(1), Ts(10));
  std::string bad = RowValue("x", 1);
  bad.resize(bad.size() - 2);
  Persist(kv.get(), {Put(kTable, 1, RowValue("a", 1), 20, 15), Put(kTable, 2, bad, 30, 28)});
  kv->AdvanceResolvedTs(Ts(40));
  ASSERT_TRUE(PollUntil([&] { return rec.count('E') == 1; })) << rec.Summary();
  auto items = rec.items();
  ASSERT_EQ(items.size(), 2u) << rec.Summary();
  EXPECT_EQ(items[0].kind, 'M');
  EXPECT_EQ(items[1].status.code(), Code::kCorruption);
  EXPECT_NE(items[1].status.message().find("table 100"), std::string_view::npos);
  EXPECT_NE(items[1].status.message().find("commit ts 30"), std::string_view::npos);
  EXPECT_EQ(items[1].ts, Ts(30));  // The failing ts is the bad row's commit ts.
  // Nothing more after the error, not even keep-alive marks.
  kv->AdvanceResolvedTs(Ts(50));
  clock_.Advance(std::chrono::seconds(3));
  ASSERT_TRUE(clock_.AwaitWaiters(options_.num_workers));
  EXPECT_EQ(rec.items().size(), 2u) << rec.Summary();
}

TEST_F(EventServiceTest, SubscriptionErrorIsReportedOnTick) {
  StartService();
  Recorder rec(Disp(1), true);
  auto kv = Register(&rec, Disp(1), Ts(10));
  kv->OnSubscriptionError(Incompatible("cluster id mismatch"));
  ASSERT_TRUE(clock_.AwaitWaiters(options_.num_workers));  // Both workers wait for a tick.
  clock_.Advance(options_.tick_interval);
  ASSERT_TRUE(PollUntil([&] { return rec.count('E') == 1; })) << rec.Summary();
  EXPECT_EQ(rec.items().back().status.code(), Code::kIncompatible);
  EXPECT_EQ(rec.items().back().ts, Ts(11));  // Nothing after the start ts was delivered.
}

TEST_F(EventServiceTest, TableTriggerReceivesEveryDdlAndResolved) {
  StartService();
  schema_.SetResolved(Ts(15));
  Recorder rec(Disp(9), true);
  rec.set_service(service_.get());
  ASSERT_TRUE(service_->RegisterTableTrigger(Disp(9), Ts(10), &rec).ok());
  ASSERT_TRUE(PollUntil([&] { return rec.HasResolved(Ts(15)); })) << rec.Summary();
  schema_.AddDdl(Ddl(kTable, 20, "CREATE TABLE a"));
  schema_.AddDdl(Ddl(kTable + 1, 30, "CREATE TABLE b"));
  schema_.SetResolved(Ts(50));
  ASSERT_TRUE(PollUntil([&] { return rec.HasResolved(Ts(50)); })) << rec.Summary();
  EXPECT_EQ(rec.Summary(), "R15 D20 D30 R50");
  EXPECT_EQ(service_->RegisterTableTrigger(Disp(9), Ts(10), &rec).code(), Code::kAlreadyExists);
}

TEST_F(EventServiceTest, RemovedDispatcherGetsNothingMore) {
  StartService();
  Recorder rec(Disp(1), true);
  auto kv = Register(&rec, Disp(1), Ts(10));
  EXPECT_EQ(puller_.active(), 1);
  Persist(kv.get(), {Put(kTable, 1, RowValue("a", 1), 20, 15)});
  kv->AdvanceResolvedTs(Ts(25));
  ASSERT_TRUE(PollUntil([&] { return rec.HasResolved(Ts(25)); }));
  service_->RemoveDispatcher(Disp(1));
  size_t seen = rec.items().size();
  Persist(kv.get(), {Put(kTable, 2, RowValue("b", 1), 30, 28)});
  kv->AdvanceResolvedTs(Ts(40));
  clock_.Advance(std::chrono::seconds(3));
  ASSERT_TRUE(clock_.AwaitWaiters(options_.num_workers));
  EXPECT_EQ(rec.items().size(), seen);
  EXPECT_EQ(puller_.active(), 0);
  service_->RemoveDispatcher(Disp(1));  // Unknown now: no-op.
}

TEST_F(EventServiceTest, RegistrationErrors) {
  StartService();
  Recorder rec(Disp(1), true);
  Register(&rec, Disp(1), Ts(10));
  DispatcherRegistration dup;
  dup.id = Disp(1);
  dup.table_id = kTable;
  dup.consumer = &rec;
  EXPECT_EQ(service_->RegisterDispatcher(dup).code(), Code::kAlreadyExists);
  DispatcherRegistration no_consumer;
  no_consumer.id = Disp(2);
  EXPECT_EQ(service_->RegisterDispatcher(no_consumer).code(), Code::kInvalidArgument);
  service_->Stop();
  dup.id = Disp(3);
  EXPECT_EQ(service_->RegisterDispatcher(dup).code(), Code::kCancelled);
  EXPECT_EQ(schema_.listeners(), 0u);
}

}  // namespace
}  // namespace sluice::eventservice
