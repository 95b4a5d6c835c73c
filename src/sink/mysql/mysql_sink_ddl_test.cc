// MysqlSink DDLs against a real MariaDB/MySQL (SLUICE_TEST_MYSQL): the SQL the
// simulator's workload produces, TiDB-only syntax, ddl_ts bookkeeping across
// restarts, and fatal DDL errors.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "codec/mysql_type.h"
#include "simkv/sql_render.h"
#include "simkv/tidb_tables.h"
#include "simkv/tidb_types.h"
#include "sink/mysql/mysql_test_util.h"

namespace sluice::sink {
namespace {

namespace mt = codec::mysql_type;
using model::ActionType;

class MysqlSinkDdlTest : public testing::MysqlSinkFixture {
 protected:
  bool TableExists(std::string_view db, std::string_view table) {
    return Scalar(fmt::format("SELECT COUNT(*) FROM information_schema.tables WHERE "
                              "table_schema = '{}' AND table_name = '{}'",
                              db, table)) == "1";
  }
  std::optional<std::string> DdlTsRow(std::string_view changefeed, int64_t table_id) {
    auto rows = Query(fmt::format(
        "SELECT CONCAT(ddl_ts, ',', finished) FROM tidb_cdc.ddl_ts_v1 WHERE changefeed = '{}' "
        "AND table_id = {}",
        changefeed, table_id));
    if (rows.empty()) return std::nullopt;
    return rows[0][0];
  }
};

TEST_F(MysqlSinkDdlTest, SimulatorDdlsRunDownstream) {
  auto sink = NewSink();
  ASSERT_NE(sink, nullptr);
  uint64_t ts = 100;
  auto run = [&](ActionType type, std::string query, std::vector<int64_t> blocked = {}) {
    Status st = sink->WriteBlockEvent(Ddl(type, query, ts++, std::move(blocked)));
    EXPECT_TRUE(st.ok()) << st.ToString() << "\n" << query;
  };
  using simkv::TableShape;
  int64_t id = 1;
  for (TableShape shape : {TableShape::kNarrow, TableShape::kKitchenSink, TableShape::kClustered,
                           TableShape::kRangePartitioned, TableShape::kHashPartitioned}) {
    std::string name(simkv::TableShapeName(shape));
    model::TableInfo info = simkv::TableTemplate(shape, name, {.pad_width = 32});
    run(ActionType::kCreateTable, simkv::CreateTableSql(info), {});
    EXPECT_TRUE(TableExists(db_, name)) << name;
    ++id;
  }
  // ALTERs as the workload renders them (ddl_runner_alter.cc).
  std::string t = simkv::QuoteName(simkv::TableShapeName(TableShape::kNarrow));
  model::ColumnInfo added = simkv::tidb::MakeColumn(0, "c2", 0, simkv::tidb::DatetimeType(3));
  run(ActionType::kAddColumn,
      "ALTER TABLE " + t + " ADD COLUMN " + simkv::ColumnDefinitionSql(added));
  model::ColumnInfo with_default =
      simkv::tidb::MakeColumn(0, "c3", 0, simkv::tidb::IntType(mt::kLong));
  simkv::tidb::SetNotNull(&with_default, /*has_default=*/true);
  simkv::tidb::SetDefault(&with_default, "7");
  run(ActionType::kAddColumn,
      "ALTER TABLE " + t + " ADD COLUMN " + simkv::ColumnDefinitionSql(with_default));
  run(ActionType::kAddIndex, "ALTER TABLE " + t + " ADD INDEX `idx_c3` (`c3`)");
  model::ColumnInfo widened = simkv::tidb::MakeColumn(0, "c", 0, simkv::tidb::VarcharType(128));
  run(ActionType::kModifyColumn,
      "ALTER TABLE " + t + " MODIFY COLUMN " + simkv::ColumnDefinitionSql(widened));
  run(ActionType::kDropIndex, "ALTER TABLE " + t + " DROP INDEX `idx_c3`");
  run(ActionType::kDropColumn, "ALTER TABLE " + t + " DROP COLUMN `c2`");
  run(ActionType::kTruncateTable, "TRUNCATE TABLE " + t);
  std::string other = testing::UniqueName("sink_other");
  event::DdlEvent create_db =
      Ddl(ActionType::kCreateSchema, "CREATE DATABASE `" + other + "`", ts++);
  create_db.schema_name = other;
  ASSERT_TRUE(sink->WriteBlockEvent(create_db).ok());
  run(ActionType::kRenameTable, fmt::format("RENAME TABLE `{}`.{} TO `{}`.`moved`", db_, t, other));
  EXPECT_TRUE(TableExists(other, "moved"));
  EXPECT_EQ(
      Scalar(fmt::format("SELECT COLUMN_DEFAULT FROM information_schema.columns WHERE "
                         "table_schema = '{}' AND table_name = 'moved' AND column_name = 'c3'",
                         other)),
      "7");
  run(ActionType::kDropTable,
      "DROP TABLE " + simkv::QuoteName(simkv::TableShapeName(TableShape::kClustered)));
  EXPECT_FALSE(TableExists(db_, simkv::TableShapeName(TableShape::kClustered)));
  event::DdlEvent drop_db = Ddl(ActionType::kDropSchema, "DROP DATABASE `" + other + "`", ts++);
  drop_db.schema_name = other;
  ASSERT_TRUE(sink->WriteBlockEvent(drop_db).ok());
  EXPECT_FALSE(TableExists(other, "moved"));
  EXPECT_EQ(sink->stats().ddls_executed, ts - 100);
  EXPECT_TRUE(sink->status().ok());
}

TEST_F(MysqlSinkDdlTest, TiDbOnlySyntaxIsDroppedOrSkipped) {
  auto sink = NewSink();
  ASSERT_NE(sink, nullptr);
  Status st = sink->WriteBlockEvent(
      Ddl(ActionType::kCreateTable,
          "CREATE TABLE `r` (`id` BIGINT AUTO_RANDOM(5) NOT NULL, `name` VARCHAR(20), "
          "PRIMARY KEY (`id`) /*T![clustered_index] CLUSTERED */) SHARD_ROW_ID_BITS = 4 "
          "PRE_SPLIT_REGIONS=2 /*T![placement] PLACEMENT POLICY=`p1` */",
          100));
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(TableExists(db_, "r"));
  st = sink->WriteBlockEvent(
      Ddl(ActionType::kSetTiFlashReplica, "ALTER TABLE `r` SET TIFLASH REPLICA 1", 101));
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(sink->stats().ddls_skipped, 1u);
  EXPECT_EQ(sink->stats().ddls_executed, 1u);
}

TEST_F(MysqlSinkDdlTest, AlreadyAppliedDdlErrorsAreIgnored) {
  auto sink = NewSink();
  ASSERT_NE(sink, nullptr);
  Exec(fmt::format("CREATE TABLE `{}`.`dup` (a INT, b INT)", db_));
  for (const char* q : {"CREATE TABLE `dup` (a INT)", "ALTER TABLE `dup` ADD COLUMN `b` INT",
                        "ALTER TABLE `dup` DROP COLUMN `zz`"}) {
    Status st = sink->WriteBlockEvent(Ddl(ActionType::kCreateTable, q, 100));
    EXPECT_TRUE(st.ok()) << st.ToString() << " " << q;
  }
  EXPECT_TRUE(sink->status().ok());
}

TEST_F(MysqlSinkDdlTest, DdlTsKeepsARestartFromRunningADdlTwice) {
  const std::string cf = testing::UniqueName("default/ddlts");
  event::DdlEvent create = Ddl(ActionType::kCreateTable, "CREATE TABLE `a` (id INT PRIMARY KEY)",
                               100, {}, {event::TableRef{1, 42, db_, "a"}});
  event::DdlEvent rename = Ddl(ActionType::kRenameTable,
                               fmt::format("RENAME TABLE `{0}`.`a` TO `{0}`.`b`", db_), 200, {42});
  {
    auto sink = NewSink("", cf);
    ASSERT_NE(sink, nullptr);
    ASSERT_TRUE(sink->WriteBlockEvent(create).ok());
    ASSERT_TRUE(sink->WriteBlockEvent(rename).ok());
    EXPECT_EQ(sink->stats().ddls_executed, 2u);
    sink->Close();
  }
  EXPECT_EQ(DdlTsRow(cf, 42), "200,1");
  EXPECT_EQ(DdlTsRow(cf, 0), "100,1");  // The table trigger's row for CREATE TABLE.
  EXPECT_TRUE(TableExists(db_, "b"));

  // Restarted from a checkpoint before both DDLs: neither runs again (the
  // RENAME would fail now that `a` is gone).
  auto restarted = NewSink("", cf);
  ASSERT_NE(restarted, nullptr);
  Status st = restarted->WriteBlockEvent(create);
  EXPECT_TRUE(st.ok()) << st.ToString();
  st = restarted->WriteBlockEvent(rename);
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(restarted->stats().ddls_skipped, 2u);
  EXPECT_EQ(restarted->stats().ddls_executed, 0u);
  EXPECT_FALSE(TableExists(db_, "a"));

  // Where tables resume: table 42 at the RENAME; an unknown table at its own ts.
  auto rec = restarted->GetTableRecoveryInfo({42, 43}, {Ts(150), Ts(150)});
  ASSERT_TRUE(rec.ok()) << rec.status().ToString();
  ASSERT_EQ(rec->size(), 2u);
  EXPECT_EQ((*rec)[0].start_ts, Ts(200));
  EXPECT_FALSE((*rec)[0].skip_dml_at_start_ts);
  EXPECT_EQ((*rec)[1].start_ts, Ts(150));
  rec = restarted->GetTableRecoveryInfo({42}, {Ts(250)});
  ASSERT_TRUE(rec.ok());
  EXPECT_EQ((*rec)[0].start_ts, Ts(250));

  // Without those rows the replayed RENAME really runs and fails: a fatal,
  // sticky error naming the DDL's commit ts.
  ASSERT_TRUE(restarted->RemoveDdlTsRows().ok());
  EXPECT_EQ(DdlTsRow(cf, 42), std::nullopt);
  st = restarted->WriteBlockEvent(rename);
  EXPECT_EQ(st.code(), Code::kNotFound) << st.ToString();
  EXPECT_NE(st.message().find("commit ts 200"), std::string_view::npos) << st.ToString();
  EXPECT_EQ(restarted->status(), st);
  EXPECT_EQ(DdlTsRow(cf, 42), "200,0");  // Started, never finished.
  rec = testing::MysqlSinkFixture::NewSink("", cf)->GetTableRecoveryInfo({42}, {Ts(150)});
  ASSERT_TRUE(rec.ok());
  EXPECT_EQ((*rec)[0].start_ts, Ts(199));       // Replays the DDL...
  EXPECT_TRUE((*rec)[0].skip_dml_at_start_ts);  // ...without its DML again.
}

TEST_F(MysqlSinkDdlTest, SyntaxErrorIsFatalWithoutRetries) {
  auto sink = NewSink();
  ASSERT_NE(sink, nullptr);
  Status st = sink->WriteBlockEvent(Ddl(ActionType::kCreateTable, "CREATE TABLE (", 777));
  EXPECT_EQ(st.code(), Code::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find("commit ts 777"), std::string_view::npos);
  EXPECT_EQ(sink->stats().retries, 0u);
  EXPECT_EQ(sink->status(), st);
}

}  // namespace
}  // namespace sluice::sink
