#include "node/filtering_sink.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace sluice::node {
namespace {

using model::ActionType;

// Records what reaches it; fails with `fail` once set.
class RecordingSink final : public sink::Sink {
 public:
  std::string_view scheme() const override { return "recording"; }
  void AddDmlEvent(event::DmlEventPtr event) override { dmls.push_back(std::move(event)); }
  Status WriteBlockEvent(const event::DdlEvent& ddl) override {
    if (!fail.ok()) return fail;
    ddls.push_back(ddl.query);
    return Status::Ok();
  }
  void AddCheckpointTs(Ts ts) override { checkpoints.push_back(ts); }
  Status status() const override { return fail; }
  Result<std::vector<sink::TableRecovery>> GetTableRecoveryInfo(
      const std::vector<int64_t>& table_ids, const std::vector<Ts>& start_ts) override {
    return std::vector<sink::TableRecovery>{{table_ids.at(0), Ts(start_ts.at(0).value() + 5)}};
  }
  void Close() override { closed = true; }

  std::vector<event::DmlEventPtr> dmls;
  std::vector<std::string> ddls;
  std::vector<Ts> checkpoints;
  Status fail;
  bool closed = false;
};

event::DdlEvent Ddl(ActionType type, std::string schema, std::string table, std::string query) {
  event::DdlEvent ddl;
  ddl.type = type;
  ddl.start_ts = Ts(90);
  ddl.finished_ts = Ts(100);
  ddl.schema_name = std::move(schema);
  ddl.table_name = std::move(table);
  ddl.query = std::move(query);
  return ddl;
}

filter::FilterConfig DbOneOnly() {
  filter::FilterConfig config;
  config.rules = {"db1.*"};
  return config;
}

class FilteringSinkTest : public ::testing::Test {
 protected:
  // Replicates db1.* only, unless the test changes the config first.
  void Make() {
    Result<std::shared_ptr<const filter::Filter>> f = filter::Filter::Make(config);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    auto owned = std::make_unique<RecordingSink>();
    inner = owned.get();
    sink = std::make_unique<FilteringSink>(std::move(owned), std::move(f).value());
  }
  // Writes `ddl` (which must succeed) and says whether it reached the sink.
  bool Written(const event::DdlEvent& ddl) {
    const size_t before = inner->ddls.size();
    Status s = sink->WriteBlockEvent(ddl);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return inner->ddls.size() > before;
  }

  filter::FilterConfig config = DbOneOnly();
  RecordingSink* inner = nullptr;
  std::unique_ptr<FilteringSink> sink;
};

TEST_F(FilteringSinkTest, DdlsOfIgnoredTablesAndSchemasAreNotWritten) {
  Make();
  EXPECT_TRUE(Written(Ddl(ActionType::kCreateTable, "db1", "t", "CREATE TABLE db1.t (a INT)")));
  EXPECT_FALSE(Written(Ddl(ActionType::kCreateTable, "db2", "t", "CREATE TABLE db2.t (a INT)")));
  EXPECT_FALSE(Written(Ddl(ActionType::kTruncateTable, "db2", "t", "TRUNCATE TABLE db2.t")));
  EXPECT_FALSE(Written(Ddl(ActionType::kCreateSchema, "db2", "", "CREATE DATABASE db2")));
  EXPECT_TRUE(Written(Ddl(ActionType::kCreateSchema, "db1", "", "CREATE DATABASE db1")));
  EXPECT_FALSE(
      Written(Ddl(ActionType::kCreateTable, "mysql", "t", "CREATE TABLE mysql.t (a INT)")));
  EXPECT_EQ(inner->ddls,
            (std::vector<std::string>{"CREATE TABLE db1.t (a INT)", "CREATE DATABASE db1"}));
  EXPECT_EQ(sink->skipped_ddls(), 4u);
}

TEST_F(FilteringSinkTest, ActionsOutsideTheAllowListAreNotWritten) {
  Make();
  EXPECT_FALSE(Written(Ddl(ActionType::kLockTable, "db1", "t", "LOCK TABLES db1.t READ")));
  EXPECT_TRUE(Written(Ddl(ActionType::kAddColumn, "db1", "t", "ALTER TABLE db1.t ADD b INT")));
}

TEST_F(FilteringSinkTest, EventFiltersIgnoreByTypeAndBySql) {
  filter::EventFilterRule rule;
  rule.matcher = {"db1.t*"};
  rule.ignore_event = {"drop table"};
  rule.ignore_sql = {"^alter table .* comment"};
  config.event_filters.push_back(rule);
  Make();
  EXPECT_FALSE(Written(Ddl(ActionType::kDropTable, "db1", "t1", "DROP TABLE db1.t1")));
  EXPECT_TRUE(Written(Ddl(ActionType::kDropTable, "db1", "u", "DROP TABLE db1.u")));
  EXPECT_FALSE(Written(
      Ddl(ActionType::kModifyTableComment, "db1", "t1", "ALTER TABLE db1.t1 COMMENT = 'x'")));
  EXPECT_TRUE(Written(Ddl(ActionType::kAddColumn, "db1", "t1", "ALTER TABLE db1.t1 ADD b INT")));
}

TEST_F(FilteringSinkTest, IgnoredTxnStartTsIsNotWritten) {
  config.ignore_txn_start_ts = {90};
  Make();
  EXPECT_FALSE(Written(Ddl(ActionType::kAddColumn, "db1", "t", "ALTER TABLE db1.t ADD b INT")));
  event::DdlEvent other = Ddl(ActionType::kAddColumn, "db1", "t", "ALTER TABLE db1.t ADD c INT");
  other.start_ts = Ts(91);
  EXPECT_TRUE(Written(other));
}

TEST_F(FilteringSinkTest, RenameIsJudgedByTheOldNames) {
  Make();
  event::DdlEvent in = Ddl(ActionType::kRenameTable, "db1", "t", "RENAME TABLE db2.t TO db1.t");
  in.prev_schema_name = "db2";
  in.prev_table_name = "t";
  EXPECT_FALSE(Written(in));  // Downstream never had db2.t.
  event::DdlEvent out = Ddl(ActionType::kRenameTable, "db2", "u", "RENAME TABLE db1.u TO db2.u");
  out.prev_schema_name = "db1";
  out.prev_table_name = "u";
  EXPECT_TRUE(Written(out));
}

TEST_F(FilteringSinkTest, CreateTablesIsLeftOutOnlyWhenEveryTableIs) {
  Make();
  event::DdlEvent ddl = Ddl(ActionType::kCreateTables, "db2", "", "CREATE TABLE a; CREATE TABLE b");
  ddl.tables_to_add = {{2, 20, "db2", "a"}, {2, 21, "db2", "b"}};
  EXPECT_FALSE(Written(ddl));
  ddl.tables_to_add.push_back({1, 22, "db1", "c"});
  EXPECT_TRUE(Written(ddl));
}

TEST_F(FilteringSinkTest, SkippedDdlOfAFailedSinkReturnsItsError) {
  Make();
  inner->fail = Unavailable("downstream gone");
  Status s = sink->WriteBlockEvent(Ddl(ActionType::kCreateTable, "db2", "t", "CREATE TABLE db2.t"));
  EXPECT_EQ(s.code(), Code::kUnavailable);
  EXPECT_TRUE(inner->ddls.empty());
}

TEST_F(FilteringSinkTest, EverythingElseIsForwarded) {
  Make();
  EXPECT_EQ(sink->scheme(), "recording");
  auto dml = std::make_shared<event::DmlEvent>();
  dml->commit_ts = Ts(100);
  sink->AddDmlEvent(dml);
  ASSERT_EQ(inner->dmls.size(), 1u);
  EXPECT_EQ(inner->dmls[0], dml);
  sink->AddCheckpointTs(Ts(120));
  EXPECT_EQ(inner->checkpoints, std::vector<Ts>{Ts(120)});
  Result<std::vector<sink::TableRecovery>> r = sink->GetTableRecoveryInfo({7}, {Ts(100)});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->at(0).start_ts, Ts(105));
  EXPECT_TRUE(sink->status().ok());
  inner->fail = Internal("broken");
  EXPECT_EQ(sink->status().code(), Code::kInternal);
  sink->Close();
  EXPECT_TRUE(inner->closed);
}

}  // namespace
}  // namespace sluice::node
