// The schema store fed with hand-made DDL jobs through a fake subscriber:
// what each action blocks, adds and drops, which histories get it, and the
// schema it leaves at exact ts boundaries.
#include "schemastore/schema_store.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "codec/model/job_args.h"
#include "codec/tablecodec.h"
#include "common/test_util.h"
#include "schemastore/job_decoder.h"
#include "schemastore/test_util.h"

namespace sluice::schemastore {
namespace {

using event::InfluenceType;
using model::ActionType;
using testing::DoneJob;
using testing::JobRow;

constexpr int64_t kDb = 2;
constexpr int64_t kT1 = 10;
constexpr int64_t kPt = 20;  // Partitions 21, 22.

std::vector<int64_t> Ids(const std::vector<event::TableRef>& refs) {
  std::vector<int64_t> ids;
  for (const auto& r : refs) ids.push_back(r.table_id);
  return ids;
}

class SchemaStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/schemastore_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    meta_ = std::make_unique<testing::FakeMetaReader>(testing::Snapshot(
        {testing::Db(kDb, "test"), testing::Db(3, "other")},
        {{kDb, testing::Table(kT1, "t1")}, {kDb, testing::Table(kPt, "pt", {21, 22})}}));
    OpenStore(Ts(100));
  }
  void TearDown() override {
    if (store_ != nullptr) store_->Stop();
  }

  void OpenStore(Ts start) {
    SchemaStoreOptions options;
    options.data_dir = dir_;
    options.start_ts = start;
    auto store = SchemaStore::Open(options, meta_.get(), &sub_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
  }

  // Delivers the job committed at `ts`, resolves ts and returns its event.
  event::DdlEventPtr Run(model::Job job, uint64_t ts) {
    EXPECT_TRUE(sub_.Deliver({JobRow(job, Ts(ts))}));
    return ResolveAndGet(ts);
  }
  event::DdlEventPtr ResolveAndGet(uint64_t ts) {
    EXPECT_TRUE(sub_.Resolve(Ts(ts)));
    EXPECT_TRUE(PollUntil([&] { return store_->resolved_ts() >= Ts(ts); }))
        << store_->status().ToString();
    auto events = store_->AllDdlEvents(Ts(ts - 1), Ts(ts));
    EXPECT_TRUE(events.ok());
    if (!events.ok() || events->size() != 1) return nullptr;
    return events->front();
  }
  std::vector<int64_t> TableHistory(int64_t table, uint64_t from, uint64_t to) {
    auto events = store_->TableDdlEvents(table, Ts(from), Ts(to));
    EXPECT_TRUE(events.ok());
    std::vector<int64_t> jobs;
    if (events.ok()) {
      for (const auto& e : *events) jobs.push_back(e->job_id);
    }
    return jobs;
  }
  Code SchemaCode(int64_t table, uint64_t ts) {
    return store_->GetTableSchema(table, Ts(ts)).status().code();
  }

  std::string dir_;
  testing::FakeSubscriber sub_;
  std::unique_ptr<testing::FakeMetaReader> meta_;
  std::unique_ptr<SchemaStore> store_;
};

TEST_F(SchemaStoreTest, OpensFromTheSnapshotAndSubscribesTheJobSpan) {
  EXPECT_EQ(sub_.span(), codec::ComparableTableRecordSpan(TableId(kDdlJobTableId)));
  EXPECT_EQ(sub_.start_ts(), Ts(100));
  EXPECT_EQ(sub_.options().advance_interval.count(), 0);  // Every region update.
  EXPECT_FALSE(sub_.options().read_old_value);
  EXPECT_FALSE(sub_.options().yield_scan);  // Tables' first rows need it.
  EXPECT_EQ(meta_->reads(), 1);
  EXPECT_FALSE(store_->reused_disk());
  EXPECT_EQ(store_->resolved_ts(), Ts(100));
  EXPECT_EQ(store_->snapshot_ts(), Ts(100));
  auto tables = store_->AllPhysicalTables(Ts(100));
  ASSERT_TRUE(tables.ok());
  // mysql.tidb_ddl_job is a system table: left out.
  EXPECT_EQ(Ids(*tables), (std::vector<int64_t>{kT1, 21, 22}));
  EXPECT_EQ((*tables)[1].table_name, "pt");
  EXPECT_EQ((*tables)[1].schema_name, "test");
  auto schema = store_->GetTableSchema(21, Ts(100));
  ASSERT_TRUE(schema.ok());
  EXPECT_EQ((*schema)->table_id(), kPt);  // Partitions share the logical schema.
  EXPECT_EQ((*schema)->version(), Ts(100));
  EXPECT_EQ(SchemaCode(kT1, 101), Code::kUnavailable);
  EXPECT_EQ(SchemaCode(kT1, 99), Code::kGcSafepointExceeded);
  EXPECT_EQ(SchemaCode(kDdlJobTableId, 100), Code::kNotFound);
  EXPECT_EQ(SchemaCode(12345, 100), Code::kNotFound);
}

TEST_F(SchemaStoreTest, CreateSchemaGoesToTheTableTriggerOnly) {
  model::Job job = DoneJob(50, ActionType::kCreateSchema, 4, 0, "CREATE DATABASE d4");
  job.binlog->db_info = testing::Db(4, "d4");
  auto ev = Run(job, 110);
  ASSERT_NE(ev, nullptr);
  EXPECT_EQ(ev->blocked.influence, InfluenceType::kNormal);
  EXPECT_EQ(ev->blocked.table_ids, std::vector<int64_t>{kDdlSpanTableId});
  EXPECT_EQ(ev->schema_name, "d4");
  EXPECT_EQ(ev->start_ts, Ts(109));  // The row's start ts.
  EXPECT_EQ(ev->finished_ts, Ts(110));
  EXPECT_EQ(TableHistory(kDdlSpanTableId, 100, 110), std::vector<int64_t>{50});
  EXPECT_FALSE(ev->NeedsBarrier());
}

TEST_F(SchemaStoreTest, CreateTableExistsFromItsFinishedTs) {
  model::Job job = DoneJob(51, ActionType::kCreateTable, kDb, 30, "CREATE TABLE t3 (id BIGINT)");
  job.binlog->table_info = testing::Table(30, "t3");
  auto ev = Run(job, 110);
  ASSERT_NE(ev, nullptr);
  EXPECT_EQ(ev->blocked.table_ids, std::vector<int64_t>{kDdlSpanTableId});
  ASSERT_EQ(ev->tables_to_add.size(), 1u);
  EXPECT_EQ(ev->tables_to_add[0], (event::TableRef{kDb, 30, "test", "t3"}));
  EXPECT_TRUE(ev->tables_to_drop.empty());
  ASSERT_NE(ev->table_schema, nullptr);
  EXPECT_EQ(ev->table_schema->version(), Ts(110));
  EXPECT_EQ(SchemaCode(30, 109), Code::kNotFound);
  EXPECT_EQ(SchemaCode(30, 110), Code::kOk);
  EXPECT_EQ(TableHistory(30, 100, 110), std::vector<int64_t>{51});
  EXPECT_EQ(TableHistory(kDdlSpanTableId, 100, 110), std::vector<int64_t>{51});
  EXPECT_EQ(Ids(*store_->AllPhysicalTables(Ts(109))), (std::vector<int64_t>{kT1, 21, 22}));
  EXPECT_EQ(Ids(*store_->AllPhysicalTables(Ts(110))), (std::vector<int64_t>{kT1, 21, 22, 30}));
}

TEST_F(SchemaStoreTest, CreatePartitionedTableAddsEveryPartition) {
  model::Job job = DoneJob(51, ActionType::kCreateTable, kDb, 40, "CREATE TABLE p2 ...");
  job.binlog->table_info = testing::Table(40, "p2", {41, 42, 43});
  auto ev = Run(job, 110);
  ASSERT_NE(ev, nullptr);
  EXPECT_EQ(Ids(ev->tables_to_add), (std::vector<int64_t>{41, 42, 43}));
  EXPECT_EQ(SchemaCode(40, 110), Code::kNotFound);  // The logical id has no rows.
  EXPECT_EQ(SchemaCode(42, 110), Code::kOk);
  EXPECT_EQ(TableHistory(43, 100, 110), std::vector<int64_t>{51});
}

TEST_F(SchemaStoreTest, CreateTableOfAnExistingTableIsSkipped) {
  model::Job job = DoneJob(51, ActionType::kCreateTable, kDb, kT1);
  job.binlog->table_info = testing::Table(kT1, "t1");
  EXPECT_EQ(Run(job, 110), nullptr);
  EXPECT_EQ(store_->stats().catalog.skipped, 1u);
}

TEST_F(SchemaStoreTest, DropTableBlocksItAndTheTrigger) {
  model::Job job = DoneJob(52, ActionType::kDropTable, kDb, kT1, "DROP TABLE t1, t2");
  job.binlog->table_info = testing::Table(kT1, "t1");
  auto ev = Run(job, 120);
  ASSERT_NE(ev, nullptr);
  EXPECT_EQ(ev->blocked.table_ids, (std::vector<int64_t>{kT1, kDdlSpanTableId}));
  EXPECT_EQ(ev->tables_to_drop, std::vector<int64_t>{kT1});
  EXPECT_EQ(ev->query, "DROP TABLE `test`.`t1`");  // One statement per table, as TiCDC.
  EXPECT_TRUE(ev->NeedsBarrier());
  EXPECT_EQ(SchemaCode(kT1, 119), Code::kOk);
  EXPECT_EQ(SchemaCode(kT1, 120), Code::kNotFound);
  EXPECT_EQ(TableHistory(kT1, 100, 120), std::vector<int64_t>{52});
  EXPECT_EQ(TableHistory(kT1, 120, 120), std::vector<int64_t>{});
}

TEST_F(SchemaStoreTest, DropPartitionedTableBlocksEveryPartition) {
  model::Job job = DoneJob(52, ActionType::kDropTable, kDb, kPt);
  auto ev = Run(job, 120);
  ASSERT_NE(ev, nullptr);
  EXPECT_EQ(ev->blocked.table_ids, (std::vector<int64_t>{21, 22, kDdlSpanTableId}));
  EXPECT_EQ(ev->tables_to_drop, (std::vector<int64_t>{21, 22}));
  EXPECT_EQ(SchemaCode(22, 120), Code::kNotFound);
}

TEST_F(SchemaStoreTest, TruncateTableReplacesThePhysicalTable) {
  model::Job job = DoneJob(53, ActionType::kTruncateTable, kDb, kT1, "TRUNCATE TABLE t1");
  job.binlog->table_info = testing::Table(11, "t1");
  auto ev = Run(job, 130);
  ASSERT_NE(ev, nullptr);
  EXPECT_EQ(ev->blocked.table_ids, (std::vector<int64_t>{kT1, kDdlSpanTableId}));
  EXPECT_EQ(ev->tables_to_drop, std::vector<int64_t>{kT1});
  EXPECT_EQ(Ids(ev->tables_to_add), std::vector<int64_t>{11});
  EXPECT_EQ(ev->table_schema->table_id(), 11);
  EXPECT_EQ(SchemaCode(kT1, 129), Code::kOk);
  EXPECT_EQ(SchemaCode(kT1, 130), Code::kNotFound);
  EXPECT_EQ(SchemaCode(11, 129), Code::kNotFound);
  EXPECT_EQ(SchemaCode(11, 130), Code::kOk);
  EXPECT_EQ(TableHistory(kT1, 100, 130), std::vector<int64_t>{53});
  EXPECT_EQ(TableHistory(11, 100, 130), std::vector<int64_t>{53});
}

TEST_F(SchemaStoreTest, ColumnAndIndexDdlsBlockOnlyTheirTable) {
  const ActionType actions[] = {ActionType::kAddColumn, ActionType::kDropColumn,
                                ActionType::kModifyColumn, ActionType::kAddIndex,
                                ActionType::kDropIndex};
  model::TableInfo info = testing::Table(kT1, "t1");
  uint64_t ts = 110;
  int64_t job_id = 60;
  for (ActionType action : actions) {
    SCOPED_TRACE(std::string(model::ActionTypeName(action)));
    info = testing::WithColumn(info, "x" + std::to_string(job_id));
    model::Job job = DoneJob(job_id, action, kDb, kT1, "ALTER TABLE t1 ...");
    job.binlog->table_info = info;
    auto ev = Run(job, ts);
    ASSERT_NE(ev, nullptr);
    EXPECT_EQ(ev->blocked.influence, InfluenceType::kNormal);
    EXPECT_EQ(ev->blocked.table_ids, std::vector<int64_t>{kT1});
    EXPECT_TRUE(ev->tables_to_add.empty());
    EXPECT_TRUE(ev->tables_to_drop.empty());
    EXPECT_FALSE(ev->NeedsBarrier());
    EXPECT_EQ(TableHistory(kT1, ts - 1, ts), std::vector<int64_t>{job_id});
    EXPECT_EQ(TableHistory(kDdlSpanTableId, ts - 1, ts), std::vector<int64_t>{});
    auto before = store_->GetTableSchema(kT1, Ts(ts - 1));
    auto at = store_->GetTableSchema(kT1, Ts(ts));
    ASSERT_TRUE(before.ok() && at.ok());
    EXPECT_EQ((*at)->columns().size(), (*before)->columns().size() + 1);
    EXPECT_EQ((*at)->version(), Ts(ts));
    EXPECT_EQ((*at)->info(), info);
    ts += 10;
    ++job_id;
  }
  EXPECT_EQ(TableHistory(kT1, 100, ts - 10).size(), 5u);
}

TEST_F(SchemaStoreTest, DdlOnAPartitionedTableBlocksItsPartitions) {
  model::Job job = DoneJob(60, ActionType::kAddColumn, kDb, kPt);
  job.binlog->table_info = testing::WithColumn(testing::Table(kPt, "pt", {21, 22}), "x");
  auto ev = Run(job, 110);
  ASSERT_NE(ev, nullptr);
  EXPECT_EQ(ev->blocked.table_ids, (std::vector<int64_t>{21, 22}));
  EXPECT_TRUE(ev->NeedsBarrier());
  EXPECT_EQ((*store_->GetTableSchema(22, Ts(110)))->columns().size(), 3u);
}

TEST_F(SchemaStoreTest, RenameTableAcrossDatabases) {
  model::Job job = DoneJob(70, ActionType::kRenameTable, 3, kT1, "RENAME TABLE t1 TO other.t9");
  job.binlog->table_info = testing::Table(kT1, "t9");
  auto ev = Run(job, 140);
  ASSERT_NE(ev, nullptr);
  EXPECT_EQ(ev->blocked.table_ids, (std::vector<int64_t>{kT1, kDdlSpanTableId}));
  EXPECT_EQ(ev->prev_schema_name, "test");
  EXPECT_EQ(ev->prev_table_name, "t1");
  EXPECT_EQ(ev->schema_name, "other");
  EXPECT_EQ(ev->table_name, "t9");
  EXPECT_EQ(ev->query, "RENAME TABLE `test`.`t1` TO `other`.`t9`");
  auto before = store_->AllPhysicalTables(Ts(139));
  auto after = store_->AllPhysicalTables(Ts(140));
  EXPECT_EQ(before->front(), (event::TableRef{kDb, kT1, "test", "t1"}));
  EXPECT_EQ(after->front(), (event::TableRef{3, kT1, "other", "t9"}));
  EXPECT_EQ((*store_->GetTableSchema(kT1, Ts(140)))->schema_name(), "other");
  // Dropping the old database no longer drops the table.
  model::Job drop = DoneJob(71, ActionType::kDropSchema, kDb, 0);
  auto dropped = Run(drop, 150);
  ASSERT_NE(dropped, nullptr);
  EXPECT_EQ(dropped->tables_to_drop, (std::vector<int64_t>{21, 22}));
  EXPECT_EQ(SchemaCode(kT1, 150), Code::kOk);
}

TEST_F(SchemaStoreTest, DropSchemaBlocksTheDatabase) {
  model::Job job = DoneJob(72, ActionType::kDropSchema, kDb, 0, "DROP DATABASE test");
  job.binlog->db_info = testing::Db(kDb, "test");
  auto ev = Run(job, 150);
  ASSERT_NE(ev, nullptr);
  EXPECT_EQ(ev->blocked.influence, InfluenceType::kDb);
  EXPECT_EQ(ev->blocked.schema_id, kDb);
  EXPECT_EQ(ev->tables_to_drop, (std::vector<int64_t>{kT1, 21, 22}));
  EXPECT_TRUE(ev->NeedsBarrier());
  EXPECT_EQ(Ids(*store_->AllPhysicalTables(Ts(150))), std::vector<int64_t>{});
  EXPECT_EQ(TableHistory(21, 100, 150), std::vector<int64_t>{72});
  EXPECT_EQ(TableHistory(kDdlSpanTableId, 100, 150), std::vector<int64_t>{72});
  // A later job in the dropped database does not fit the schema.
  model::Job late = DoneJob(73, ActionType::kAddColumn, kDb, kT1);
  late.binlog->table_info = testing::WithColumn(testing::Table(kT1, "t1"), "x");
  ASSERT_TRUE(sub_.Deliver({JobRow(late, Ts(160))}));
  ASSERT_TRUE(sub_.Resolve(Ts(170)));
  ASSERT_TRUE(PollUntil([&] { return !store_->status().ok(); }));
  EXPECT_EQ(store_->status().code(), Code::kCorruption);
  EXPECT_EQ(store_->failed_ts(), Ts(160));
  ASSERT_TRUE(PollUntil([&] { return store_->resolved_ts() == Ts(159); }));
  EXPECT_EQ(SchemaCode(21, 160), Code::kCorruption);
}

TEST_F(SchemaStoreTest, ModifySchemaCharsetBlocksTheDatabase) {
  model::Job job = DoneJob(74, ActionType::kModifySchemaCharsetAndCollate, kDb, 0);
  model::DBInfo db = testing::Db(kDb, "test");
  db.charset = "latin1";
  job.binlog->db_info = db;
  auto ev = Run(job, 110);
  ASSERT_NE(ev, nullptr);
  EXPECT_EQ(ev->blocked.influence, InfluenceType::kDb);
  EXPECT_TRUE(ev->tables_to_drop.empty());
  EXPECT_EQ(TableHistory(kT1, 100, 110), std::vector<int64_t>{74});
}

TEST_F(SchemaStoreTest, PartitionAddDropTruncate) {
  model::Job add = DoneJob(80, ActionType::kAddTablePartition, kDb, kPt);
  add.binlog->table_info = testing::Table(kPt, "pt", {21, 22, 23});
  auto ev = Run(add, 110);
  ASSERT_NE(ev, nullptr);
  EXPECT_EQ(ev->blocked.table_ids, (std::vector<int64_t>{21, 22, kDdlSpanTableId}));
  EXPECT_EQ(Ids(ev->tables_to_add), std::vector<int64_t>{23});
  EXPECT_TRUE(ev->tables_to_drop.empty());
  EXPECT_EQ(SchemaCode(23, 109), Code::kNotFound);
  EXPECT_EQ(SchemaCode(23, 110), Code::kOk);

  model::Job drop = DoneJob(81, ActionType::kDropTablePartition, kDb, kPt);
  drop.binlog->table_info = testing::Table(kPt, "pt", {22, 23});
  ev = Run(drop, 120);
  ASSERT_NE(ev, nullptr);
  EXPECT_EQ(ev->blocked.table_ids, (std::vector<int64_t>{21, 22, 23, kDdlSpanTableId}));
  EXPECT_EQ(ev->tables_to_drop, std::vector<int64_t>{21});
  EXPECT_TRUE(ev->tables_to_add.empty());
  EXPECT_EQ(SchemaCode(21, 120), Code::kNotFound);

  model::Job truncate = DoneJob(82, ActionType::kTruncateTablePartition, kDb, kPt);
  truncate.binlog->table_info = testing::Table(kPt, "pt", {22, 24});
  ev = Run(truncate, 130);
  ASSERT_NE(ev, nullptr);
  EXPECT_EQ(ev->blocked.table_ids, (std::vector<int64_t>{22, 23, kDdlSpanTableId}));
  EXPECT_EQ(ev->tables_to_drop, std::vector<int64_t>{23});
  EXPECT_EQ(Ids(ev->tables_to_add), std::vector<int64_t>{24});
  EXPECT_EQ(TableHistory(24, 100, 130), std::vector<int64_t>{82});
  EXPECT_EQ(TableHistory(23, 100, 130), (std::vector<int64_t>{80, 81, 82}));
  EXPECT_EQ(Ids(*store_->AllPhysicalTables(Ts(130))), (std::vector<int64_t>{kT1, 22, 24}));
}

TEST_F(SchemaStoreTest, ExchangePartitionSwapsThePhysicalTables) {
  model::Job job = DoneJob(90, ActionType::kExchangeTablePartition, kDb, kT1);
  job.raw_args = model::JsonValue::array({21, kDb, kPt, "p0", false});
  job.binlog->table_info = testing::Table(kPt, "pt", {kT1, 22});
  auto ev = Run(job, 110);
  ASSERT_NE(ev, nullptr);
  EXPECT_EQ(ev->blocked.table_ids, (std::vector<int64_t>{kT1, 21, kDdlSpanTableId}));
  EXPECT_TRUE(ev->tables_to_add.empty());
  EXPECT_TRUE(ev->tables_to_drop.empty());
  auto t10 = store_->GetTableSchema(kT1, Ts(110));
  auto t21 = store_->GetTableSchema(21, Ts(110));
  ASSERT_TRUE(t10.ok() && t21.ok());
  EXPECT_EQ((*t10)->table_name(), "pt");
  EXPECT_EQ((*t21)->table_name(), "t1");
  EXPECT_EQ((*t21)->table_id(), 21);
  EXPECT_EQ((*store_->GetTableSchema(kT1, Ts(109)))->table_name(), "t1");
  EXPECT_EQ(TableHistory(21, 100, 110), std::vector<int64_t>{90});
  EXPECT_EQ(TableHistory(kT1, 100, 110), std::vector<int64_t>{90});
}

TEST_F(SchemaStoreTest, ViewsBlockAllButAreNoTables) {
  model::Job create = DoneJob(91, ActionType::kCreateView, kDb, 33, "CREATE VIEW v AS SELECT 1");
  create.binlog->table_info = testing::View(33, "v");
  auto ev = Run(create, 110);
  ASSERT_NE(ev, nullptr);
  EXPECT_EQ(ev->blocked.influence, InfluenceType::kAll);
  EXPECT_TRUE(ev->tables_to_add.empty());
  EXPECT_EQ(SchemaCode(33, 110), Code::kNotFound);
  EXPECT_EQ(TableHistory(22, 100, 110), std::vector<int64_t>{91});  // Every table sees it.
  model::Job drop = DoneJob(92, ActionType::kDropView, kDb, 33, "DROP VIEW v, w");
  ev = Run(drop, 120);
  ASSERT_NE(ev, nullptr);
  EXPECT_EQ(ev->blocked.table_ids, std::vector<int64_t>{kDdlSpanTableId});
  EXPECT_EQ(ev->query, "DROP VIEW `test`.`v`");
  EXPECT_EQ(TableHistory(22, 110, 120), std::vector<int64_t>{});
}

TEST_F(SchemaStoreTest, CreateTablesAndRenameTables) {
  model::Job create = DoneJob(93, ActionType::kCreateTables, kDb, 0);
  create.binlog->multiple_table_infos = {testing::Table(35, "a"), testing::Table(36, "b", {37})};
  auto ev = Run(create, 110);
  ASSERT_NE(ev, nullptr);
  EXPECT_EQ(ev->blocked.table_ids, std::vector<int64_t>{kDdlSpanTableId});
  EXPECT_EQ(Ids(ev->tables_to_add), (std::vector<int64_t>{35, 37}));

  model::Job rename = DoneJob(94, ActionType::kRenameTables, kDb, 0);
  std::vector<model::RenameTablesItem> items = {
      {kDb, model::CIStr::From("test"), model::CIStr::From("a"), 3, model::CIStr::From("a2"), 35},
      {kDb, model::CIStr::From("test"), model::CIStr::From("t1"), kDb, model::CIStr::From("t2"),
       kT1}};
  rename.raw_args = model::MakeRenameTablesArgs(model::kJobVersion1, items);
  rename.binlog->multiple_table_infos = {testing::Table(35, "a2"), testing::Table(kT1, "t2")};
  ev = Run(rename, 120);
  ASSERT_NE(ev, nullptr);
  EXPECT_EQ(ev->blocked.table_ids, (std::vector<int64_t>{kDdlSpanTableId, 35, kT1}));
  auto tables = *store_->AllPhysicalTables(Ts(120));
  EXPECT_EQ(tables.front(), (event::TableRef{kDb, kT1, "test", "t2"}));
  EXPECT_EQ((*store_->GetTableSchema(35, Ts(120)))->schema_name(), "other");
}

TEST_F(SchemaStoreTest, IgnoredAndUnknownActions) {
  model::Job lock = DoneJob(95, ActionType::kLockTable, kDb, kT1);
  lock.binlog->table_info = testing::Table(kT1, "t1");
  EXPECT_EQ(Run(lock, 110), nullptr);  // TiCDC drops it.
  model::Job mode = DoneJob(96, ActionType::kAlterTableMode, kDb, kPt);
  mode.binlog->table_info = testing::WithColumn(testing::Table(kPt, "pt", {21, 22}), "m");
  auto ev = Run(mode, 120);
  ASSERT_NE(ev, nullptr);
  EXPECT_EQ(ev->blocked.table_ids, (std::vector<int64_t>{21, 22}));
  EXPECT_EQ((*store_->GetTableSchema(21, Ts(120)))->columns().size(), 3u);
  model::Job odd = DoneJob(97, ActionType::kRefreshMeta, kDb, 999);
  ev = Run(odd, 130);
  ASSERT_NE(ev, nullptr);
  EXPECT_EQ(ev->blocked.table_ids, std::vector<int64_t>{kDdlSpanTableId});
  EXPECT_EQ(store_->stats().catalog.unknown_action, 2u);
}

TEST_F(SchemaStoreTest, OnlyDoneJobsOfUserSchemasInFinishedTsOrder) {
  model::Job running = DoneJob(100, ActionType::kAddColumn, kDb, kT1);
  running.state = model::JobState::kRunning;
  model::Job synced = running;
  synced.state = model::JobState::kSynced;
  model::Job system = DoneJob(101, ActionType::kAddColumn, kMysqlDbId, kDdlJobTableId);
  system.schema_name = "mysql";
  system.binlog->table_info = testing::Table(kDdlJobTableId, "tidb_ddl_job");
  model::Job first = DoneJob(102, ActionType::kAddColumn, kDb, kT1);
  model::TableInfo one = testing::WithColumn(testing::Table(kT1, "t1"), "one");
  first.binlog->table_info = one;
  model::Job second = DoneJob(103, ActionType::kAddColumn, kDb, kT1);
  second.binlog->table_info = testing::WithColumn(one, "two");
  RawKvEntry del = JobRow(first, Ts(125));
  del.op = KvOp::kDelete;
  del.value.clear();
  // Commit ts order is not guaranteed across regions: second arrives first.
  ASSERT_TRUE(sub_.Deliver({JobRow(second, Ts(120)), JobRow(running, Ts(105)), del}));
  ASSERT_TRUE(sub_.Deliver({JobRow(first, Ts(110)), JobRow(synced, Ts(111)),
                            JobRow(system, Ts(112)), JobRow(first, Ts(110))}));
  EXPECT_EQ(sub_.persisted(), 2);
  ResolveAndGet(130);
  auto events = store_->AllDdlEvents(Ts(100), Ts(130));
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[0]->job_id, 102);
  EXPECT_EQ((*events)[1]->job_id, 103);
  EXPECT_EQ((*store_->GetTableSchema(kT1, Ts(119)))->columns().size(), 3u);
  EXPECT_EQ((*store_->GetTableSchema(kT1, Ts(120)))->columns().size(), 4u);
  SchemaStoreStats stats = store_->stats();
  EXPECT_EQ(stats.rows, 7u);
  EXPECT_EQ(stats.done_jobs, 4u);  // first twice, second, system.
  EXPECT_EQ(stats.catalog.applied, 2u);
}

TEST_F(SchemaStoreTest, ListenersSeeEveryAdvance) {
  std::vector<Ts> seen;
  Mutex mu;
  uint64_t handle = store_->AddResolvedListener([&](Ts ts) {
    MutexLock lock(&mu);
    seen.push_back(ts);
  });
  ResolveAndGet(105);
  ResolveAndGet(107);
  ASSERT_TRUE(PollUntil([&] {
    MutexLock lock(&mu);
    return seen.size() == 2;
  }));
  store_->RemoveResolvedListener(handle);
  ResolveAndGet(109);
  MutexLock lock(&mu);
  EXPECT_EQ(seen, (std::vector<Ts>{Ts(105), Ts(107)}));
}

TEST_F(SchemaStoreTest, RangeQueriesCheckTheirBounds) {
  EXPECT_EQ(store_->AllDdlEvents(Ts(100), Ts(101)).status().code(), Code::kUnavailable);
  EXPECT_EQ(store_->AllDdlEvents(Ts(100), Ts(99)).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(store_->TableDdlEvents(kT1, Ts(99), Ts(100)).status().code(),
            Code::kGcSafepointExceeded);
  EXPECT_TRUE(store_->AllDdlEvents(Ts(100), Ts(100)).ok());
  EXPECT_EQ(store_->AllPhysicalTables(Ts(101)).status().code(), Code::kUnavailable);
}

}  // namespace
}  // namespace sluice::schemastore
