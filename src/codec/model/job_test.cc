#include "codec/model/job.h"

#include <gtest/gtest.h>

#include <array>

#include "codec/model/job_documents.h"

namespace sluice::model {
namespace {

namespace docs = testdocs;

Job MustParse(const docs::JobDoc& doc) {
  auto job = ParseJob(docs::JobText(doc));
  EXPECT_TRUE(job.ok()) << job.status().ToString();
  return job.ok() ? *job : Job{};
}

// Checks the members every job document carries against the document.
void ExpectEnvelope(const Job& job, const docs::JobDoc& doc) {
  EXPECT_EQ(job.id, doc.id);
  EXPECT_EQ(static_cast<int>(job.type), doc.type);
  EXPECT_EQ(job.schema_id, doc.schema_id);
  EXPECT_EQ(job.table_id, doc.table_id);
  EXPECT_EQ(job.schema_name, doc.schema_name);
  EXPECT_EQ(job.table_name, doc.table_name);
  EXPECT_EQ(static_cast<int>(job.state), doc.state);
  EXPECT_EQ(static_cast<int>(job.schema_state), doc.schema_state);
  EXPECT_EQ(job.version, doc.version);
  EXPECT_EQ(job.seq_num, doc.seq_num);
  EXPECT_TRUE(job.warning.is_null());
  EXPECT_TRUE(job.error.is_null());
  EXPECT_EQ(job.error_count, 0);
  EXPECT_EQ(job.row_count, 0);
  EXPECT_EQ(job.raw_args, JsonValue::parse(doc.raw_args));
  EXPECT_EQ(job.snapshot_ver, 0u);
  EXPECT_EQ(job.real_start_ts, 449883218931146753ULL);
  EXPECT_EQ(job.start_ts, 449883218931146752ULL);
  EXPECT_EQ(job.dependency_id, 0);
  EXPECT_EQ(job.reorg_meta, JsonValue::parse(doc.reorg_meta));
  EXPECT_TRUE(job.multi_schema_info.is_null());
  EXPECT_EQ(job.charset, "utf8mb4");
  EXPECT_EQ(job.collate, "utf8mb4_bin");
  EXPECT_EQ(job.admin_operator, 0);
  EXPECT_EQ(job.trace_info, JsonValue::parse(R"({"connection_id":3,"session_alias":""})"));
  EXPECT_EQ(job.bdr_role, "");
  EXPECT_EQ(job.cdc_write_source, 0u);
  EXPECT_FALSE(job.local_mode);
  EXPECT_EQ(job.sql_mode, 1436549152);
  EXPECT_TRUE(job.session_vars.empty());
  EXPECT_EQ(job.last_schema_version, 0);
  ASSERT_TRUE(job.binlog.has_value());
  EXPECT_EQ(job.binlog->schema_version, doc.schema_version);
  EXPECT_EQ(job.binlog->finished_ts, 0u);
  EXPECT_EQ(job.binlog->db_info.has_value(), doc.binlog_db != "null");
  EXPECT_EQ(job.binlog->table_info.has_value(), doc.binlog_table != "null");
}

// Emitting gives TiDB's bytes back, and re-parsing gives the same job.
void ExpectRoundTrip(const Job& job, const docs::JobDoc& doc) {
  const std::string emitted = ToJson(job);
  EXPECT_EQ(emitted, docs::JobText(doc));
  auto again = ParseJob(emitted);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, job);
}

Job CheckDocument(const docs::JobDoc& doc) {
  const Job job = MustParse(doc);
  ExpectEnvelope(job, doc);
  ExpectRoundTrip(job, doc);
  return job;
}

TEST(JobTest, CreateSchema) {
  const Job job = CheckDocument(docs::CreateSchemaJob());
  EXPECT_EQ(job.type, ActionType::kCreateSchema);
  EXPECT_TRUE(job.IsDone());
  ASSERT_NE(job.FinishedDBInfo(), nullptr);
  EXPECT_EQ(job.FinishedDBInfo()->id, 100);
  EXPECT_EQ(job.FinishedDBInfo()->name.lower, "shop");
  EXPECT_EQ(job.FinishedTableInfo(), nullptr);
  ASSERT_EQ(job.involving_schema_info.size(), 1u);
  EXPECT_EQ(job.involving_schema_info[0].database, "shop");
  EXPECT_EQ(job.involving_schema_info[0].table, "*");
  EXPECT_EQ(job.query, "CREATE DATABASE shop");
}

TEST(JobTest, DropSchema) {
  const Job job = CheckDocument(docs::DropSchemaJob());
  EXPECT_EQ(job.type, ActionType::kDropSchema);
  EXPECT_EQ(job.schema_state, SchemaState::kNone);
  EXPECT_EQ(job.FinishedDBInfo()->state, SchemaState::kNone);
}

TEST(JobTest, CreateTable) {
  const Job job = CheckDocument(docs::CreateTableJob());
  EXPECT_EQ(job.type, ActionType::kCreateTable);
  const TableInfo* table = job.FinishedTableInfo();
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(table->id, 110);
  EXPECT_EQ(table->columns.size(), 6u);
  EXPECT_EQ(table->GetPkHandleColumn()->name.lower, "id");
  EXPECT_EQ(job.query, "CREATE TABLE `Orders` (`id` BIGINT PRIMARY KEY AUTO_INCREMENT)");
  ASSERT_TRUE(job.raw_args.is_array());
  EXPECT_EQ(job.raw_args[0]["id"], 110);  // Arguments are kept verbatim.
}

TEST(JobTest, DropTable) {
  const Job job = CheckDocument(docs::DropTableJob());
  EXPECT_EQ(job.type, ActionType::kDropTable);
  EXPECT_EQ(job.FinishedTableInfo()->state, SchemaState::kNone);
}

TEST(JobTest, TruncateTable) {
  const Job job = CheckDocument(docs::TruncateTableJob());
  EXPECT_EQ(job.type, ActionType::kTruncateTable);
  EXPECT_EQ(job.table_id, 110);
  EXPECT_EQ(job.FinishedTableInfo()->id, 120);
}

TEST(JobTest, RenameTable) {
  const Job job = CheckDocument(docs::RenameTableJob());
  EXPECT_EQ(job.type, ActionType::kRenameTable);
  EXPECT_EQ(job.FinishedTableInfo()->name, (CIStr{"orders_v2", "orders_v2"}));
  ASSERT_EQ(job.involving_schema_info.size(), 2u);
  EXPECT_EQ(job.involving_schema_info[1].database, "shop2");
}

TEST(JobTest, AddColumn) {
  const Job job = CheckDocument(docs::AddColumnJob());
  EXPECT_EQ(job.type, ActionType::kAddColumn);
  const ColumnInfo* note = job.FinishedTableInfo()->FindColumnByName("note");
  ASSERT_NE(note, nullptr);
  EXPECT_EQ(note->id, 2);
  EXPECT_EQ(note->type.tp, mysql_type::kVarchar);
  EXPECT_EQ(note->OriginDefaultBytes(), std::optional<std::string>("x"));
}

TEST(JobTest, DropColumn) {
  const Job job = CheckDocument(docs::DropColumnJob());
  EXPECT_EQ(job.type, ActionType::kDropColumn);
  EXPECT_EQ(job.FinishedTableInfo()->FindColumnByName("note"), nullptr);
}

TEST(JobTest, ModifyColumnWithVersionTwoArguments) {
  const Job job = CheckDocument(docs::ModifyColumnJob());
  EXPECT_EQ(job.type, ActionType::kModifyColumn);
  EXPECT_EQ(job.version, kJobVersion2);
  ASSERT_TRUE(job.raw_args.is_object());
  EXPECT_EQ(job.raw_args["old_column_name"]["L"], "amount");
  const ColumnInfo* amount = job.FinishedTableInfo()->FindColumnById(4);
  ASSERT_NE(amount, nullptr);
  EXPECT_EQ(amount->type.flen, 14);
  EXPECT_EQ(amount->type.decimal, 2);
}

TEST(JobTest, AddIndexKeepsReorgMetaAndUnescapesQuery) {
  const Job job = CheckDocument(docs::AddIndexJob());
  EXPECT_EQ(job.type, ActionType::kAddIndex);
  EXPECT_EQ(job.query, "ALTER TABLE orders ADD INDEX idx_amount (amount) COMMENT 'amount > 0'");
  EXPECT_EQ(job.reorg_meta["reorg_tp"], 2);
  const IndexInfo* index = job.FinishedTableInfo()->FindIndexByName("idx_amount");
  ASSERT_NE(index, nullptr);
  EXPECT_EQ(index->id, 3);
  EXPECT_EQ(index->columns[0].offset, 1);
}

TEST(JobTest, DropIndex) {
  const Job job = CheckDocument(docs::DropIndexJob());
  EXPECT_EQ(job.type, ActionType::kDropIndex);
  EXPECT_TRUE(job.FinishedTableInfo()->indices.empty());
}

TEST(JobTest, CreatePartitionedTable) {
  const Job job = CheckDocument(docs::CreatePartitionedTableJob());
  const TableInfo* table = job.FinishedTableInfo();
  ASSERT_TRUE(table->IsPartitioned());
  EXPECT_EQ(table->PhysicalTableIds(), (std::vector<int64_t>{201, 202}));
  EXPECT_TRUE(table->IsCommonHandle());
}

TEST(JobTest, PartitionActions) {
  const Job add = CheckDocument(docs::AddPartitionJob());
  EXPECT_EQ(add.type, ActionType::kAddTablePartition);
  EXPECT_EQ(add.FinishedTableInfo()->PhysicalTableIds(), (std::vector<int64_t>{201, 202, 203}));
  EXPECT_EQ(add.raw_args[0]["definitions"][0]["id"], 203);

  const Job drop = CheckDocument(docs::DropPartitionJob());
  EXPECT_EQ(drop.type, ActionType::kDropTablePartition);
  EXPECT_EQ(drop.FinishedTableInfo()->PhysicalTableIds(), (std::vector<int64_t>{201}));

  const Job truncate = CheckDocument(docs::TruncatePartitionJob());
  EXPECT_EQ(truncate.type, ActionType::kTruncateTablePartition);
  EXPECT_EQ(truncate.FinishedTableInfo()->PhysicalTableIds(), (std::vector<int64_t>{205, 202}));

  EXPECT_EQ(CheckDocument(docs::ExchangePartitionJob()).type, ActionType::kExchangeTablePartition);
  EXPECT_EQ(CheckDocument(docs::ReorganizePartitionJob()).type, ActionType::kReorganizePartition);
}

TEST(JobTest, MultiTableJobsCarryMultipleTableInfos) {
  const Job create = CheckDocument(docs::CreateTablesJob());
  EXPECT_EQ(create.type, ActionType::kCreateTables);
  ASSERT_EQ(create.binlog->multiple_table_infos.size(), 2u);
  EXPECT_EQ(create.binlog->multiple_table_infos[0].name.lower, "a");
  EXPECT_TRUE(create.raw_args.is_null());

  const Job rename = CheckDocument(docs::RenameTablesJob());
  EXPECT_EQ(rename.type, ActionType::kRenameTables);
  EXPECT_TRUE(rename.involving_schema_info.empty());
  EXPECT_EQ(rename.binlog->multiple_table_infos[1].id, 130);
}

TEST(JobTest, ParsesOlderPrettyPrintedShape) {
  // The shape TiDB 5.x wrote: no table_name, no MultipleTableInfos, a
  // "placement_settings" member since removed, everything indented.
  auto job = ParseJob(R"json({
    "id": 56, "type": 3, "schema_id": 1, "table_id": 55, "schema_name": "test",
    "state": 0, "err": null, "err_count": 0, "row_count": 0,
    "raw_args": [{"id": 55, "name": {"O": "t", "L": "t"}, "placement_settings": null}],
    "schema_state": 0, "snapshot_ver": 0, "real_start_ts": 0,
    "start_ts": 428310284267159550, "dependency_id": 0,
    "query": "CREATE TABLE t (id int unsigned NOT NULL PRIMARY KEY, notes varchar(255))",
    "binlog": {"SchemaVersion": 0, "DBInfo": null, "TableInfo": null, "FinishedTS": 0},
    "version": 1, "reorg_meta": null, "multi_schema_info": null, "priority": 0
  })json");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->id, 56);
  EXPECT_EQ(job->type, ActionType::kCreateTable);
  EXPECT_EQ(job->state, JobState::kNone);
  EXPECT_FALSE(job->IsDoneOrSynced());
  EXPECT_EQ(job->start_ts, 428310284267159550ULL);
  EXPECT_EQ(job->table_name, "");
  EXPECT_EQ(job->FinishedTableInfo(), nullptr);
  EXPECT_TRUE(job->binlog->multiple_table_infos.empty());
}

TEST(JobTest, StatePredicates) {
  Job job;
  const std::vector<std::pair<JobState, std::array<bool, 3>>> cases = {
      // {state, {IsDoneOrSynced, IsFinished, IsSynced}}
      {JobState::kNone, {false, false, false}},     {JobState::kRunning, {false, false, false}},
      {JobState::kDone, {true, true, false}},       {JobState::kSynced, {true, false, true}},
      {JobState::kCancelled, {false, true, false}}, {JobState::kRollbackDone, {false, true, false}},
      {JobState::kPaused, {false, false, false}},
  };
  for (const auto& [state, expected] : cases) {
    job.state = state;
    EXPECT_EQ(job.IsDoneOrSynced(), expected[0]) << JobStateName(state);
    EXPECT_EQ(job.IsFinished(), expected[1]) << JobStateName(state);
    EXPECT_EQ(job.IsSynced(), expected[2]) << JobStateName(state);
  }
}

TEST(JobTest, SessionVarsAndInvolvingModeRoundTrip) {
  Job job;
  job.id = 9;
  job.type = ActionType::kAddIndex;
  job.session_vars = {{"tidb_ddl_reorg_worker_cnt", "4"}, {"a_var", "x"}};
  job.involving_schema_info = {InvolvingSchemaInfo{"d", "t", "", "", 1}};
  const std::string json = ToJson(job);
  EXPECT_NE(json.find(R"("involving_schema_info":[{"database":"d","table":"t","mode":1}])"),
            std::string::npos);
  EXPECT_NE(json.find(R"("session_vars":{"a_var":"x","tidb_ddl_reorg_worker_cnt":"4"})"),
            std::string::npos);
  EXPECT_NE(json.find(R"("binlog":null)"), std::string::npos);
  auto again = ParseJob(json);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, job);
}

TEST(ActionTypeTest, NumbersAndNamesMatchTiDB) {
  EXPECT_EQ(static_cast<int>(ActionType::kTruncateTable), 11);
  EXPECT_EQ(static_cast<int>(ActionType::kExchangeTablePartition), 42);
  EXPECT_EQ(static_cast<int>(ActionType::kCreateTables), 60);
  EXPECT_EQ(static_cast<int>(ActionType::kReorganizePartition), 64);
  EXPECT_EQ(static_cast<int>(ActionType::kAlterTtlRemove), 67);
  EXPECT_EQ(ActionTypeName(ActionType::kTruncateTablePartition), "truncate partition");
  EXPECT_EQ(ActionTypeName(ActionType::kRecoverSchema), "flashback schema");
  EXPECT_EQ(ActionTypeName(static_cast<ActionType>(66)), "none");
  EXPECT_EQ(JobStateName(JobState::kSynced), "synced");
  EXPECT_EQ(JobStateName(static_cast<JobState>(42)), "none");
  EXPECT_EQ(SchemaStateName(SchemaState::kWriteReorganization), "write reorganization");
}

}  // namespace
}  // namespace sluice::model
