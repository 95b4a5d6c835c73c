// The statements a batch becomes, without a database.
#include "sink/mysql/dml_builder.h"

#include <gtest/gtest.h>

#include "codec/mysql_type.h"
#include "sink/mysql/mysql_test_util.h"

namespace sluice::sink {
namespace {

namespace mt = codec::mysql_type;
namespace mf = codec::mysql_flag;
using codec::Datum;
using testing::Col;
using testing::Delete;
using testing::Insert;
using testing::Txn;
using testing::Update;

std::vector<Datum> R(int64_t id, std::string c) { return {Datum::Int64(id), Datum::Bytes(c)}; }

event::TableSchemaPtr Narrow() {
  return testing::Schema("db", testing::IntHandleTable(10, "t", {Col(0, "c", mt::kVarchar)}));
}

std::vector<std::string> Build(const std::vector<event::DmlEventPtr>& events, bool safe,
                               DmlBuildOptions options = {}) {
  std::vector<BatchItem> items;
  for (const auto& e : events) items.push_back(BatchItem{e.get(), safe});
  std::vector<std::string> out;
  Status st = BuildDmlStatements(items, options, &out);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

TEST(DmlBuilderTest, InsertsOfSeveralTransactionsShareOneStatement) {
  auto s = Narrow();
  auto out = Build(
      {Txn(s, 10, {Insert(R(1, "a")), Insert(R(2, "b"))}), Txn(s, 11, {Insert(R(3, "c"))})}, false);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], "INSERT INTO `db`.`t` (`id`,`c`) VALUES (1,'a'),(2,'b'),(3,'c')");
}

TEST(DmlBuilderTest, SafeModeUsesReplaceAndSplitsUpdates) {
  auto s = Narrow();
  auto out = Build(
      {Txn(s, 10, {Insert(R(1, "a")), Update(R(2, "b"), R(2, "B")), Delete(R(3, "c"))})}, true);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], "DELETE FROM `db`.`t` WHERE (`id`) IN ((2),(3))");
  EXPECT_EQ(out[1], "REPLACE INTO `db`.`t` (`id`,`c`) VALUES (1,'a'),(2,'B')");
}

TEST(DmlBuilderTest, DeletesThenUpdatesThenInserts) {
  auto s = Narrow();
  auto out = Build(
      {Txn(s, 10, {Insert(R(1, "a")), Update(R(2, "b"), R(2, "B")), Delete(R(3, "c"))})}, false);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0], "DELETE FROM `db`.`t` WHERE (`id`) IN ((3))");
  EXPECT_EQ(out[1], "UPDATE `db`.`t` SET `id`=2,`c`='B' WHERE `id` = 2 LIMIT 1");
  EXPECT_EQ(out[2], "INSERT INTO `db`.`t` (`id`,`c`) VALUES (1,'a')");
}

TEST(DmlBuilderTest, SameRowInTwoTransactionsKeepsOrder) {
  auto s = Narrow();
  // Insert 1, then delete 1, then insert 1 again: three runs, in order.
  auto out = Build({Txn(s, 10, {Insert(R(1, "a")), Insert(R(2, "x"))}),
                    Txn(s, 11, {Delete(R(1, "a"))}), Txn(s, 12, {Insert(R(1, "z"))})},
                   false);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0], "INSERT INTO `db`.`t` (`id`,`c`) VALUES (1,'a'),(2,'x')");
  EXPECT_EQ(out[1], "DELETE FROM `db`.`t` WHERE (`id`) IN ((1))");
  EXPECT_EQ(out[2], "INSERT INTO `db`.`t` (`id`,`c`) VALUES (1,'z')");
}

TEST(DmlBuilderTest, CompositeKeyDeleteUsesTupleIn) {
  model::TableInfo t;
  t.id = 11;
  t.name = model::CIStr::From("c");
  t.is_common_handle = true;
  t.columns = {Col(1, "a", mt::kLonglong, mf::kNotNull | mf::kPriKey),
               Col(2, "b", mt::kVarchar, mf::kNotNull | mf::kPriKey), Col(3, "v", mt::kLong)};
  t.indices = {testing::Index(1, "PRIMARY", {"a", "b"}, true, true)};
  auto s = testing::Schema("db", t);
  auto row = [](int64_t a, std::string b) {
    return std::vector<Datum>{Datum::Int64(a), Datum::Bytes(b), Datum::Null()};
  };
  auto out = Build({Txn(s, 10, {Delete(row(1, "x")), Delete(row(2, "y"))})}, false);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], "DELETE FROM `db`.`c` WHERE (`a`,`b`) IN ((1,'x'),(2,'y'))");
  out = Build({Txn(s, 10, {Update(row(1, "x"), row(1, "x2"))})}, false);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0],
            "UPDATE `db`.`c` SET `a`=1,`b`='x2',`v`=NULL WHERE `a` = 1 AND `b` = 'x' LIMIT 1");
}

TEST(DmlBuilderTest, KeylessTableMatchesEveryColumnWithIsNull) {
  model::TableInfo t;
  t.id = 12;
  t.name = model::CIStr::From("nokey");
  t.columns = {Col(1, "a", mt::kLong), Col(2, "b", mt::kVarchar)};
  auto s = testing::Schema("db", t);
  std::vector<Datum> r1 = {Datum::Int64(1), Datum::Null()};
  auto out = Build({Txn(s, 10,
                        {Delete(r1), Update({Datum::Int64(2), Datum::Bytes("q")},
                                            {Datum::Int64(2), Datum::Null()})})},
                   false);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], "DELETE FROM `db`.`nokey` WHERE `a` = 1 AND `b` IS NULL LIMIT 1");
  EXPECT_EQ(out[1], "UPDATE `db`.`nokey` SET `a`=2,`b`=NULL WHERE `a` = 2 AND `b` = 'q' LIMIT 1");
  // Identical rows in two transactions are not merged into one run.
  out = Build({Txn(s, 10, {Insert(r1)}), Txn(s, 11, {Delete(r1)})}, false);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], "INSERT INTO `db`.`nokey` (`a`,`b`) VALUES (1,NULL)");
  EXPECT_EQ(out[1], "DELETE FROM `db`.`nokey` WHERE `a` = 1 AND `b` IS NULL LIMIT 1");
}

TEST(DmlBuilderTest, GeneratedColumnsAreNotWritten) {
  model::ColumnInfo g = Col(0, "g", mt::kLong);
  g.generated_expr_string = "`id` + 1";
  auto s = testing::Schema("db", testing::IntHandleTable(13, "gen", {g, Col(0, "c", mt::kLong)}));
  std::vector<Datum> r = {Datum::Int64(1), Datum::Int64(2), Datum::Int64(3)};
  auto out = Build({Txn(s, 10, {Insert(r)})}, false);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], "INSERT INTO `db`.`gen` (`id`,`c`) VALUES (1,3)");
  out = Build({Txn(s, 10, {Update(r, r)})}, false);
  EXPECT_EQ(out[0], "UPDATE `db`.`gen` SET `id`=1,`c`=3 WHERE `id` = 1 LIMIT 1");
}

TEST(DmlBuilderTest, StatementsAreSplitByRowsAndBytes) {
  auto s = Narrow();
  std::vector<event::RowChange> rows;
  for (int i = 0; i < 5; ++i) rows.push_back(Insert(R(i, "v")));
  DmlBuildOptions o;
  o.max_rows_per_statement = 2;
  auto out = Build({Txn(s, 10, rows)}, false, o);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[2], "INSERT INTO `db`.`t` (`id`,`c`) VALUES (4,'v')");
  o = DmlBuildOptions{};
  o.max_statement_bytes = 10;  // Each statement still takes one row.
  EXPECT_EQ(Build({Txn(s, 10, rows)}, false, o).size(), 5u);
  o = DmlBuildOptions{};
  o.batch = false;
  out = Build({Txn(s, 10, {Delete(R(1, "a")), Delete(R(2, "b"))})}, false, o);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], "DELETE FROM `db`.`t` WHERE `id` = 1 LIMIT 1");
}

TEST(DmlBuilderTest, TablesAndSafeModeChangesStartNewRuns) {
  auto a = Narrow();
  auto b = testing::Schema("db", testing::IntHandleTable(20, "u", {Col(0, "c", mt::kVarchar)}));
  std::vector<BatchItem> items;
  auto e1 = Txn(a, 10, {Insert(R(1, "a"))});
  auto e2 = Txn(b, 11, {Insert(R(1, "b"))});
  auto e3 = Txn(b, 12, {Insert(R(2, "c"))});
  items = {{e1.get(), false}, {e2.get(), false}, {e3.get(), true}};
  std::vector<std::string> out;
  ASSERT_TRUE(BuildDmlStatements(items, {}, &out).ok());
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0], "INSERT INTO `db`.`t` (`id`,`c`) VALUES (1,'a')");
  EXPECT_EQ(out[1], "INSERT INTO `db`.`u` (`id`,`c`) VALUES (1,'b')");
  EXPECT_EQ(out[2], "REPLACE INTO `db`.`u` (`id`,`c`) VALUES (2,'c')");
}

TEST(DmlBuilderTest, InterleavedTablesAreGroupedKeepingOrderWithinATable) {
  auto a = Narrow();
  auto b = testing::Schema("db", testing::IntHandleTable(20, "u", {Col(0, "c", mt::kVarchar)}));
  // b, a, b, a, a: the same row of `a` is inserted, deleted and inserted again.
  auto out = Build({Txn(b, 10, {Insert(R(1, "b1"))}), Txn(a, 11, {Insert(R(1, "a1"))}),
                    Txn(b, 12, {Insert(R(2, "b2"))}), Txn(a, 13, {Delete(R(1, "a1"))}),
                    Txn(a, 14, {Insert(R(1, "a2"))})},
                   false);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0], "INSERT INTO `db`.`t` (`id`,`c`) VALUES (1,'a1')");
  EXPECT_EQ(out[1], "DELETE FROM `db`.`t` WHERE (`id`) IN ((1))");
  EXPECT_EQ(out[2], "INSERT INTO `db`.`t` (`id`,`c`) VALUES (1,'a2')");
  EXPECT_EQ(out[3], "INSERT INTO `db`.`u` (`id`,`c`) VALUES (1,'b1'),(2,'b2')");
}

TEST(DmlBuilderTest, RowOfTheWrongWidthIsCorruption) {
  auto s = Narrow();
  auto e = Txn(s, 10, {Insert({Datum::Int64(1)})});
  std::vector<std::string> out;
  Status st = BuildDmlStatements({{e.get(), false}}, {}, &out);
  EXPECT_EQ(st.code(), Code::kCorruption);
}

}  // namespace
}  // namespace sluice::sink
