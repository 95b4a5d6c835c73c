#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "filter/event_types.h"
#include "filter/filter.h"

namespace sluice::filter {
namespace {

using model::ActionType;

std::shared_ptr<const Filter> MustMake(const FilterConfig& config) {
  Result<std::shared_ptr<const Filter>> f = Filter::Make(config);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return f.ok() ? *f : nullptr;
}

EventFilterRule Rule(std::vector<std::string> matcher, std::vector<std::string> ignore_event,
                     std::vector<std::string> ignore_sql = {}) {
  EventFilterRule rule;
  rule.matcher = std::move(matcher);
  rule.ignore_event = std::move(ignore_event);
  rule.ignore_sql = std::move(ignore_sql);
  return rule;
}

FilterConfig Rules(std::vector<std::string> rules, bool case_sensitive = false) {
  FilterConfig config;
  config.rules = std::move(rules);
  config.case_sensitive = case_sensitive;
  return config;
}

FilterConfig StartTs(std::vector<uint64_t> ts) {
  FilterConfig config;
  config.ignore_txn_start_ts = std::move(ts);
  return config;
}

FilterConfig WithEventFilter(EventFilterRule rule, bool case_sensitive = false) {
  FilterConfig config;
  config.case_sensitive = case_sensitive;
  config.event_filters.push_back(std::move(rule));
  return config;
}

TEST(FilterTest, DefaultRulesReplicateEverythingButSystemSchemas) {
  for (const FilterConfig& config : {FilterConfig{}, Rules({})}) {
    auto f = MustMake(config);
    EXPECT_FALSE(f->ShouldIgnoreTable("sns", "user"));
    EXPECT_FALSE(f->ShouldIgnoreSchema("sns"));
    for (const char* sys : {"mysql", "MySQL", "sys", "information_schema", "INFORMATION_SCHEMA",
                            "performance_schema", "metrics_schema", "inspection_schema",
                            "workload_schema", "dm_heartbeat", "tidb_cdc", "lightning_task_info"}) {
      EXPECT_TRUE(f->ShouldIgnoreTable(sys, "t")) << sys;
      EXPECT_TRUE(f->ShouldIgnoreTable(sys, "")) << sys;
      EXPECT_TRUE(f->ShouldIgnoreSchema(sys)) << sys;
      EXPECT_TRUE(IsSysSchema(sys)) << sys;
    }
    // Near misses are ordinary schemas.
    for (const char* name : {"metric_schema", "mysql2", "test", "tidb_cdc_x"}) {
      EXPECT_FALSE(f->ShouldIgnoreTable(name, "t")) << name;
    }
  }
}

TEST(FilterTest, SystemSchemasStayIgnoredEvenWhenRulesNameThem) {
  auto f = MustMake(Rules({"mysql.*", "tidb_cdc.syncpoint_v1"}));
  EXPECT_TRUE(f->ShouldIgnoreTable("mysql", "user"));
  EXPECT_TRUE(f->ShouldIgnoreTable("tidb_cdc", "syncpoint_v1"));
  EXPECT_TRUE(f->ShouldIgnoreSchema("mysql"));
  EXPECT_TRUE(f->table_filter().MatchTable("mysql", "user"));
}

TEST(FilterTest, CustomRulesAndSchemaMatching) {
  auto f = MustMake(Rules({"sns.*", "ecom.*", "!sns.log", "!ecom.test", "haha.xixi"}));
  EXPECT_TRUE(f->ShouldIgnoreTable("other", "what"));
  EXPECT_FALSE(f->ShouldIgnoreTable("sns", ""));
  EXPECT_FALSE(f->ShouldIgnoreTable("ecom", "order"));
  EXPECT_TRUE(f->ShouldIgnoreTable("ecom", "test"));
  EXPECT_TRUE(f->ShouldIgnoreTable("sns", "log"));
  EXPECT_TRUE(f->ShouldIgnoreTable("haha", ""));
  EXPECT_FALSE(f->ShouldIgnoreSchema("haha"));
  EXPECT_TRUE(f->ShouldIgnoreSchema("other"));
}

TEST(FilterTest, CaseSensitivity) {
  auto ci = MustMake(Rules({"Test.T*"}));
  EXPECT_FALSE(ci->ShouldIgnoreTable("test", "t1"));
  EXPECT_FALSE(ci->ShouldIgnoreTable("TEST", "T1"));
  auto cs = MustMake(Rules({"Test.T*"}, /*case_sensitive=*/true));
  EXPECT_TRUE(cs->ShouldIgnoreTable("test", "t1"));
  EXPECT_FALSE(cs->ShouldIgnoreTable("Test", "T1"));
}

TEST(FilterTest, InvalidRulesAreRejectedWithTheRule) {
  for (const char* rule : {"db.t[1", "db", "db.", "a.b.c", "a%b.*", "db.tbl#x", "/db.*"}) {
    Status st = Filter::Validate(Rules({"*.*", rule}));
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << rule;
    EXPECT_NE(st.message().find(rule), std::string_view::npos) << st.ToString();
    EXPECT_NE(st.message().find("filter.rules"), std::string_view::npos) << st.ToString();
  }
  EXPECT_TRUE(Filter::Validate(FilterConfig{}).ok());
}

TEST(FilterTest, IgnoreTxnStartTs) {
  auto f = MustMake(StartTs({42, 7, 42}));
  EXPECT_TRUE(f->ShouldIgnoreStartTs(7));
  EXPECT_TRUE(f->ShouldIgnoreDml(DmlType::kInsert, "db", "t", 42));
  EXPECT_FALSE(f->ShouldIgnoreDml(DmlType::kInsert, "db", "t", 43));
  EXPECT_TRUE(f->ShouldIgnoreDdl(ActionType::kCreateTable, "db", "t", "CREATE TABLE t (a int)", 7));
  EXPECT_FALSE(
      f->ShouldIgnoreDdl(ActionType::kCreateTable, "db", "t", "CREATE TABLE t (a int)", 8));
}

TEST(FilterTest, DmlEventFilters) {
  struct Case {
    std::vector<std::string> matcher;
    std::vector<std::string> ignore_event;
    DmlType type;
    const char* schema;
    const char* table;
    bool ignored;
  };
  const std::vector<Case> cases = {
      {{"test.*"}, {"insert"}, DmlType::kInsert, "test", "t1", true},
      {{"test.*"}, {"insert"}, DmlType::kUpdate, "test", "t1", false},
      {{"test.*"}, {"update", "delete"}, DmlType::kDelete, "test", "t1", true},
      {{"test.*"}, {"all dml"}, DmlType::kDelete, "test", "t1", true},
      {{"test.*"}, {"all dml"}, DmlType::kUpdate, "TEST", "T1", true},
      {{"otherdb.*"}, {"all dml"}, DmlType::kInsert, "test", "t1", false},
      {{"test.*", "!test.keep"}, {"all dml"}, DmlType::kInsert, "test", "keep", false},
      {{"test.*"}, {"all ddl"}, DmlType::kInsert, "test", "t1", false},
      {{"test.*"}, {"create table", "alter table"}, DmlType::kInsert, "test", "t1", false},
      {{}, {"all dml"}, DmlType::kInsert, "test", "t1", false},  // empty matcher: no table
  };
  for (const Case& c : cases) {
    auto f = MustMake(WithEventFilter(Rule(c.matcher, c.ignore_event)));
    EXPECT_EQ(f->ShouldIgnoreDml(c.type, c.schema, c.table, 1), c.ignored)
        << ::testing::PrintToString(c.matcher) << ::testing::PrintToString(c.ignore_event) << " "
        << c.schema << "." << c.table;
  }
}

TEST(FilterTest, DmlOfFilteredTablesIsIgnoredWhateverTheEventFilters) {
  FilterConfig config = WithEventFilter(Rule({"other.*"}, {"delete"}));
  config.rules = {"test.*"};
  auto f = MustMake(config);
  EXPECT_FALSE(f->ShouldIgnoreDml(DmlType::kInsert, "test", "t", 1));
  EXPECT_TRUE(f->ShouldIgnoreDml(DmlType::kInsert, "other", "t", 1));
  EXPECT_TRUE(f->ShouldIgnoreDml(DmlType::kInsert, "mysql", "t", 1));
}

TEST(FilterTest, EventFilterMatcherCaseSensitivity) {
  const EventFilterRule rule = Rule({"TEST_DB.TEST_TABLE"}, {"insert", "create table"});
  auto cs = MustMake(WithEventFilter(rule, /*case_sensitive=*/true));
  auto ci = MustMake(WithEventFilter(rule, /*case_sensitive=*/false));
  EXPECT_TRUE(cs->ShouldIgnoreDml(DmlType::kInsert, "TEST_DB", "TEST_TABLE", 1));
  EXPECT_FALSE(cs->ShouldIgnoreDml(DmlType::kInsert, "test_db", "test_table", 1));
  EXPECT_TRUE(ci->ShouldIgnoreDml(DmlType::kInsert, "test_db", "test_table", 1));
  EXPECT_FALSE(ci->ShouldIgnoreDml(DmlType::kUpdate, "test_db", "test_table", 1));
  EXPECT_TRUE(cs->ShouldIgnoreDdl(ActionType::kCreateTable, "TEST_DB", "TEST_TABLE", "q", 1));
  EXPECT_FALSE(cs->ShouldIgnoreDdl(ActionType::kCreateTable, "test_db", "test_table", "q", 1));
  EXPECT_TRUE(ci->ShouldIgnoreDdl(ActionType::kCreateTable, "test_db", "test_table", "q", 1));
  EXPECT_FALSE(ci->ShouldIgnoreDdl(ActionType::kDropTable, "TEST_DB", "TEST_TABLE", "q", 1));
}

struct DdlCase {
  std::vector<std::string> matcher;
  std::vector<std::string> ignore_event;
  std::vector<std::string> ignore_sql;
  ActionType action;
  const char* schema;
  const char* table;
  const char* query;
  bool ignored;
};

TEST(FilterTest, DdlEventFilters) {
  const std::vector<DdlCase> cases = {
      {{"test.*"},
       {"create table"},
       {},
       ActionType::kCreateTable,
       "test",
       "t1",
       "create table t1(id int)",
       true},
      {{"test.*"}, {"create table"}, {}, ActionType::kCreateTables, "test", "t1", "", true},
      {{"test.*"},
       {"create table"},
       {},
       ActionType::kDropTable,
       "test",
       "t1",
       "drop table t1",
       false},
      // Schema DDLs match on the schema; "create schema" is an alias.
      {{"test.*"},
       {"create database"},
       {},
       ActionType::kCreateSchema,
       "test",
       "",
       "create database test",
       true},
      {{"test.*"}, {"create schema"}, {}, ActionType::kCreateSchema, "test", "", "", true},
      {{"test.t1"}, {"drop schema"}, {}, ActionType::kDropSchema, "test", "", "", true},
      {{"*.t1"}, {"drop database"}, {}, ActionType::kDropSchema, "test2", "t1", "", true},
      {{"other.*"}, {"drop schema"}, {}, ActionType::kDropSchema, "test", "", "", false},
      {{"test.*", "!test.*"}, {"all ddl"}, {}, ActionType::kDropSchema, "test", "", "", false},
      // "alter table" covers the alter-table family only.
      {{"test.*"}, {"alter table"}, {}, ActionType::kAddColumn, "test", "t1", "", true},
      {{"test.*"}, {"alter table"}, {}, ActionType::kAddIndex, "test", "t1", "", true},
      {{"test.*"}, {"alter table"}, {}, ActionType::kRenameTable, "test", "t1", "", true},
      {{"test.*"}, {"alter table"}, {}, ActionType::kMultiSchemaChange, "test", "t1", "", true},
      {{"test.*"}, {"alter table"}, {}, ActionType::kAddColumns, "test", "t1", "", true},
      {{"test.*"}, {"alter table"}, {}, ActionType::kTruncateTable, "test", "t1", "", false},
      {{"test.*"}, {"alter table"}, {}, ActionType::kCreateTable, "test", "t1", "", false},
      {{"test.*"}, {"alter table"}, {}, ActionType::kCreateView, "test", "v1", "", false},
      // Specific names.
      {{"test.*"}, {"rename index"}, {}, ActionType::kRenameIndex, "test", "t1", "", true},
      {{"test.*"}, {"rename index"}, {}, ActionType::kAddColumn, "test", "t1", "", false},
      {{"test.*"}, {"create index"}, {}, ActionType::kAddIndex, "test", "t1", "", true},
      {{"test.*"}, {"add column"}, {}, ActionType::kAddColumns, "test", "t1", "", true},
      {{"test.*"},
       {"truncate table partition"},
       {},
       ActionType::kTruncateTablePartition,
       "test",
       "t1",
       "",
       true},
      {{"test.*"}, {"insert", "all dml"}, {}, ActionType::kCreateTable, "test", "t1", "", false},
      // "all ddl" covers every filterable DDL.
      {{"test.t1"},
       {"all ddl"},
       {},
       ActionType::kModifyColumn,
       "test",
       "t1",
       "alter table t1 modify column age int",
       true},
      {{"test.t1"}, {"all ddl"}, {}, ActionType::kModifyColumn, "test", "t2", "", false},
      {{"test.t1"}, {"all ddl"}, {}, ActionType::kModifyColumn, "test2", "t1", "", false},
      // ignore-sql: case-insensitive search in the DDL text.
      {{"test.*"},
       {},
       {"^DROP TABLE", "add column"},
       ActionType::kDropTable,
       "test",
       "t1",
       "drop table t1",
       true},
      {{"test.*"},
       {},
       {"^DROP TABLE", "add column"},
       ActionType::kAddColumn,
       "test",
       "t1",
       "ALTER TABLE t1 ADD COLUMN c1 int",
       true},
      {{"test.*"},
       {},
       {"^DROP TABLE"},
       ActionType::kCreateTable,
       "test",
       "t1",
       "CREATE TABLE t1(id int)",
       false},
      {{"*.t1"},
       {},
       {"^DROP DATABASE"},
       ActionType::kDropSchema,
       "test2",
       "",
       "DROP DATABASE test",
       true},
      {{"*.t1"},
       {},
       {"MODIFY COLUMN"},
       ActionType::kDropIndex,
       "test3",
       "t1",
       "Drop Index i1 on test3.t1",
       false},
      {{"test.*"}, {}, {"^DROP TABLE"}, ActionType::kDropTable, "test", "t1", "", false},
      {{"other.*"},
       {},
       {"^DROP TABLE"},
       ActionType::kDropTable,
       "test",
       "t1",
       "drop table t1",
       false},
      // DDLs the event filter does not classify are never ignored by it.
      {{"test.*"},
       {"all ddl"},
       {".*"},
       ActionType::kAddForeignKey,
       "test",
       "t1",
       "alter table",
       false},
      {{"test.*"}, {"all ddl"}, {".*"}, ActionType::kLockTable, "test", "t1", "lock tables", false},
  };
  for (const DdlCase& c : cases) {
    for (bool case_sensitive : {false, true}) {
      auto f =
          MustMake(WithEventFilter(Rule(c.matcher, c.ignore_event, c.ignore_sql), case_sensitive));
      EXPECT_EQ(f->ShouldIgnoreDdl(c.action, c.schema, c.table, c.query, 1), c.ignored)
          << ::testing::PrintToString(c.matcher) << ::testing::PrintToString(c.ignore_event)
          << ::testing::PrintToString(c.ignore_sql) << " " << c.schema << "." << c.table << " "
          << static_cast<int>(c.action) << " " << c.query;
    }
  }
}

TEST(FilterTest, ManyEventFiltersAnyOneIgnores) {
  FilterConfig config;
  config.event_filters = {Rule({"a.*"}, {"insert"}), Rule({"b.*"}, {"drop table"}),
                          Rule({"*.*"}, {}, {"^truncate"})};
  auto f = MustMake(config);
  EXPECT_TRUE(f->ShouldIgnoreDml(DmlType::kInsert, "a", "t", 1));
  EXPECT_FALSE(f->ShouldIgnoreDml(DmlType::kInsert, "b", "t", 1));
  EXPECT_TRUE(f->ShouldIgnoreDdl(ActionType::kDropTable, "b", "t", "DROP TABLE t", 1));
  EXPECT_FALSE(f->ShouldIgnoreDdl(ActionType::kDropTable, "a", "t", "DROP TABLE t", 1));
  EXPECT_TRUE(f->ShouldIgnoreDdl(ActionType::kTruncateTable, "c", "t", "TRUNCATE t", 1));
}

TEST(FilterTest, ShouldDiscardDdl) {
  auto f = MustMake(Rules({"test.*", "!test.skip", "one.t"}));
  EXPECT_FALSE(f->ShouldDiscardDdl(ActionType::kCreateTable, "test", "t"));
  EXPECT_TRUE(f->ShouldDiscardDdl(ActionType::kCreateTable, "test", "skip"));
  EXPECT_TRUE(f->ShouldDiscardDdl(ActionType::kCreateTable, "other", "t"));
  // Schema DDLs use schema matching: `one.t` lets `one` through.
  EXPECT_FALSE(f->ShouldDiscardDdl(ActionType::kCreateSchema, "one", ""));
  EXPECT_FALSE(f->ShouldDiscardDdl(ActionType::kDropSchema, "test", ""));
  EXPECT_TRUE(f->ShouldDiscardDdl(ActionType::kDropSchema, "other", ""));
  EXPECT_TRUE(f->ShouldDiscardDdl(ActionType::kCreateSchema, "mysql", ""));
  // Outside the allow-list: always discarded.
  for (ActionType a :
       {ActionType::kLockTable, ActionType::kSetTiFlashReplica, ActionType::kCreateSequence,
        ActionType::kFlashbackCluster, ActionType::kCreatePlacementPolicy, ActionType::kNone}) {
    EXPECT_TRUE(f->ShouldDiscardDdl(a, "test", "t")) << static_cast<int>(a);
  }
  EXPECT_FALSE(f->ShouldDiscardDdl(ActionType::kAddForeignKey, "test", "t"));
}

TEST(FilterTest, DdlEventTypeNames) {
  EXPECT_EQ(DdlEventTypeName(ActionType::kCreateSchema), "create database");
  EXPECT_EQ(DdlEventTypeName(ActionType::kAddIndex), "create index");
  EXPECT_EQ(DdlEventTypeName(ActionType::kAddColumn), "add column");
  EXPECT_EQ(DdlEventTypeName(ActionType::kAddColumns), "add column");
  EXPECT_EQ(DdlEventTypeName(ActionType::kRenameTables), "rename table");
  EXPECT_EQ(DdlEventTypeName(ActionType::kRebaseAutoId), "rebase auto id");
  EXPECT_EQ(DdlEventTypeName(ActionType::kExchangeTablePartition), "exchange table partition");
  EXPECT_EQ(DdlEventTypeName(ActionType::kLockTable), "");
  EXPECT_TRUE(IsSchemaDdl(ActionType::kModifySchemaCharsetAndCollate));
  EXPECT_FALSE(IsSchemaDdl(ActionType::kRecoverSchema));
  // Every filterable action's name is accepted in ignore-event, and every
  // ignore-event name but the pseudo types names some action.
  std::set<std::string_view> names;
  for (int i = 0; i < 256; ++i) {
    const auto a = static_cast<ActionType>(i);
    if (!IsFilterableDdl(a)) continue;
    EXPECT_TRUE(IsAllowedDdl(a));
    Result<std::string_view> canonical = CanonicalIgnoreEvent(DdlEventTypeName(a));
    ASSERT_TRUE(canonical.ok()) << DdlEventTypeName(a);
    names.insert(*canonical);
  }
  for (std::string_view name : SupportedIgnoreEvents()) {
    ASSERT_TRUE(CanonicalIgnoreEvent(name).ok()) << name;
    const std::string_view canonical = *CanonicalIgnoreEvent(name);
    const bool pseudo = canonical == kAllDml || canonical == kAllDdl || canonical == kInsert ||
                        canonical == kUpdate || canonical == kDelete || canonical == kAlterTable;
    EXPECT_TRUE(pseudo || names.count(canonical) == 1) << name;
  }
}

TEST(FilterTest, InvalidEventFiltersAreRejected) {
  struct Case {
    EventFilterRule rule;
    Code code;
    std::string needle;
  };
  std::vector<Case> cases = {
      {Rule({"test.*"}, {"invalid-event"}), Code::kInvalidArgument, "invalid-event"},
      {Rule({"test.*"}, {"INSERT"}), Code::kInvalidArgument, "INSERT"},
      {Rule({"test.*"}, {"add foreign key"}), Code::kInvalidArgument, "add foreign key"},
      {Rule({"test.*"}, {"all"}), Code::kInvalidArgument, "all"},
      {Rule({"test.t[1"}, {}), Code::kInvalidArgument, "test.t[1"},
      {Rule({"test.t1"}, {}, {"^["}), Code::kInvalidArgument, "^["},
      {Rule({"test.t1"}, {}, {"(?<=a)b"}), Code::kInvalidArgument, "(?<=a)b"},
  };
  auto expr_case = [&cases](std::string key, void (*set)(EventFilterRule&)) {
    EventFilterRule rule = Rule({"test.*"}, {});
    set(rule);
    cases.push_back({std::move(rule), Code::kNotSupported, std::move(key)});
  };
  expr_case("ignore-insert-value-expr",
            [](EventFilterRule& r) { r.ignore_insert_value_expr = "id >= 100"; });
  expr_case("ignore-update-new-value-expr",
            [](EventFilterRule& r) { r.ignore_update_new_value_expr = "gender = 'male'"; });
  expr_case("ignore-update-old-value-expr",
            [](EventFilterRule& r) { r.ignore_update_old_value_expr = "age < 18"; });
  expr_case("ignore-delete-value-expr",
            [](EventFilterRule& r) { r.ignore_delete_value_expr = "name = 'x'"; });
  expr_case("ignore-update-only-columns",
            [](EventFilterRule& r) { r.ignore_update_only_columns = {"updated_at"}; });
  for (const Case& c : cases) {
    FilterConfig config;
    config.event_filters = {Rule({"ok.*"}, {"insert"}), c.rule};
    const Status st = Filter::Validate(config);
    EXPECT_EQ(st.code(), c.code) << st.ToString();
    EXPECT_NE(st.message().find(c.needle), std::string_view::npos) << st.ToString();
    EXPECT_NE(st.message().find("event-filters[1]"), std::string_view::npos) << st.ToString();
  }
  // Valid names of every kind pass.
  EventFilterRule all;
  all.matcher = {"*.*"};
  for (std::string_view name : SupportedIgnoreEvents()) all.ignore_event.emplace_back(name);
  all.ignore_sql = {"--6", "^drop", "(?i)add\\s+column"};
  EXPECT_TRUE(Filter::Validate(WithEventFilter(all)).ok());
}

TEST(FilterTest, SharedFilterIsUsableFromManyThreads) {
  FilterConfig config = WithEventFilter(Rule({"db.*"}, {"delete"}, {"^drop"}));
  config.rules = {"db.*", "!db.skip"};
  auto f = MustMake(config);
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&f, &wrong] {
      for (int i = 0; i < 2000; ++i) {
        if (f->ShouldIgnoreDml(DmlType::kInsert, "DB", "T", 1)) ++wrong;
        if (!f->ShouldIgnoreDml(DmlType::kDelete, "db", "t", 1)) ++wrong;
        if (!f->ShouldIgnoreTable("db", "skip")) ++wrong;
        if (!f->ShouldIgnoreDdl(ActionType::kDropTable, "db", "t", "DROP TABLE t", 1)) ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace sluice::filter
