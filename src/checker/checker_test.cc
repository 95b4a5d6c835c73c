#include <gtest/gtest.h>
#include <mysql.h>

#include <cstdlib>
#include <sstream>

#include "checker/expected.h"
#include "checker/mysql_reader.h"
#include "codec/mysql_type.h"
#include "codec/rowcodec_v2.h"
#include "codec/tablecodec.h"
#include "sink/sink_uri.h"

namespace sluice::checker {
namespace {

namespace mt = codec::mysql_type;
namespace mf = codec::mysql_flag;

model::ColumnInfo Col(int64_t id, std::string_view name, uint8_t tp, uint64_t flag = 0) {
  model::ColumnInfo c;
  c.id = id;
  c.name = model::CIStr::From(name);
  c.offset = id - 1;
  c.type.tp = tp;
  c.type.flag = flag;
  c.state = model::SchemaState::kPublic;
  return c;
}

// db `shop` (id 2) with table `items` (id 10): id bigint pk, name varchar,
// price double, flags bit.
kvclient::MetaSnapshot Snapshot() {
  kvclient::MetaSnapshot snap;
  model::DBInfo db;
  db.id = 2;
  db.name = model::CIStr::From("shop");
  snap.dbs[2] = db;
  model::TableInfo t;
  t.id = 10;
  t.name = model::CIStr::From("items");
  t.pk_is_handle = true;
  t.columns = {Col(1, "id", mt::kLonglong, mf::kPriKey | mf::kNotNull),
               Col(2, "name", mt::kVarchar), Col(3, "price", mt::kDouble),
               Col(4, "flags", mt::kBit)};
  snap.tables[10] = {2, t};
  return snap;
}

void Put(simkv::GroundTruth* truth, uint64_t ts, int64_t id, std::vector<codec::Datum> vals) {
  std::string value;
  std::vector<int64_t> ids = {2, 3, 4};
  ASSERT_TRUE(codec::EncodeRowV2(ids, vals, &value).ok());
  simkv::TruthChange c;
  c.table_id = TableId(10);
  c.commit_ts = Ts(ts);
  c.start_ts = Ts(ts - 1);
  c.key = codec::EncodeRowKey(TableId(10), id);
  c.value = value;
  truth->Record(c);
}

void Delete(simkv::GroundTruth* truth, uint64_t ts, int64_t id) {
  simkv::TruthChange c;
  c.table_id = TableId(10);
  c.commit_ts = Ts(ts);
  c.start_ts = Ts(ts - 1);
  c.key = codec::EncodeRowKey(TableId(10), id);
  c.kind = simkv::WriteKind::kDelete;
  truth->Record(c);
}

TEST(CheckerTest, ExpectedStateDecodesTheRowsVisibleAtTs) {
  simkv::GroundTruth truth;
  Put(&truth, 10, 1, {codec::Datum::Bytes("a"), codec::Datum::Float64(1.5), codec::Datum::Bit(5)});
  Put(&truth, 20, 2, {codec::Datum::Null(), codec::Datum::Float64(2), codec::Datum::Bit(0)});
  Delete(&truth, 30, 1);
  auto at25 = ExpectedState(truth, Snapshot(), Ts(25));
  ASSERT_TRUE(at25.ok()) << at25.status().ToString();
  const TableData& t = at25->at({"shop", "items"});
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows.at(t.KeyOf({"1", {}, {}, {}})), (RowValues{"1", "a", "1.5", "5"}));
  EXPECT_EQ(t.rows.at(t.KeyOf({"2", {}, {}, {}})), (RowValues{"2", std::nullopt, "2", "0"}));
  auto at30 = ExpectedState(truth, Snapshot(), Ts(30));
  ASSERT_TRUE(at30.ok());
  EXPECT_EQ(at30->at({"shop", "items"}).rows.size(), 1u);
}

TEST(CheckerTest, UndecodableTruthRowIsCorruptionWithTs) {
  simkv::GroundTruth truth;
  simkv::TruthChange c;
  c.table_id = TableId(10);
  c.commit_ts = Ts(5);
  c.key = codec::EncodeRowKey(TableId(10), 1);
  c.value = std::string("\x80\x00garbage", 9);
  truth.Record(c);
  auto s = ExpectedState(truth, Snapshot(), Ts(9));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), Code::kCorruption);
  EXPECT_NE(s.status().message().find("at ts 9"), std::string_view::npos);
}

TEST(CheckerTest, CompareFindsEveryKindOfDifference) {
  TableData want;
  want.columns = {"id", "v", "f"};
  want.approximate = {false, false, true};
  want.bit = {false, false, false};
  want.key_columns = {0};
  want.Upsert({"1", "a", "0.1"});
  want.Upsert({"2", "b", "1e10"});
  want.Upsert({"3", "c", "1"});
  TableData got = want;
  got.rows.clear();
  got.Upsert({"1", "a", "0.1000001"});  // Within tolerance.
  got.Upsert({"2", "B", "1e10"});       // Different.
  got.Upsert({"4", "d", "1"});          // Extra; 3 is missing.
  DatabaseState expected{{{"db", "t"}, want}, {{"db", "gone"}, want}};
  DatabaseState actual{{{"db", "t"}, got}, {{"db", "stale"}, TableData{}}};
  DiffReport r = Compare(expected, actual);
  std::map<Difference::Kind, int> kinds;
  for (const auto& d : r.differences) kinds[d.kind]++;
  EXPECT_EQ(kinds[Difference::Kind::kDifferentRow], 1);
  EXPECT_EQ(kinds[Difference::Kind::kMissingRow], 1);
  EXPECT_EQ(kinds[Difference::Kind::kExtraRow], 1);
  EXPECT_EQ(kinds[Difference::Kind::kMissingTable], 1);
  EXPECT_EQ(kinds[Difference::Kind::kExtraTable], 1);
  std::ostringstream out;
  r.Print(out);
  EXPECT_NE(out.str().find("checker: 5 differences"), std::string::npos);
  EXPECT_TRUE(Compare(expected, expected).ok());
}

TEST(CheckerTest, KeylessTablesKeepDuplicateRows) {
  TableData t;
  t.columns = {"a"};
  t.approximate = {false};
  t.bit = {false};
  t.Upsert({"x"});
  t.Upsert({"x"});
  EXPECT_EQ(t.rows.size(), 2u);
  t.Erase({"x"});
  EXPECT_EQ(t.rows.size(), 1u);
}

// Against the MariaDB the test scripts start (SLUICE_TEST_MYSQL).
TEST(CheckerMysqlTest, ReadsTablesBackAndFindsDifferences) {
  const char* uri = std::getenv("SLUICE_TEST_MYSQL");
  if (uri == nullptr) GTEST_SKIP() << "SLUICE_TEST_MYSQL is not set";
  MYSQL* m = mysql_init(nullptr);
  auto parsed = sink::SinkUri::Parse(uri);
  ASSERT_TRUE(parsed.ok());
  ASSERT_NE(
      mysql_real_connect(m, parsed->host.c_str(), parsed->user.c_str(), parsed->password.c_str(),
                         nullptr, parsed->port.value_or(3306), nullptr, 0),
      nullptr)
      << mysql_error(m);
  for (const char* sql :
       {"DROP DATABASE IF EXISTS shop", "CREATE DATABASE shop",
        "DROP DATABASE IF EXISTS shop_other", "CREATE DATABASE shop_other",
        "CREATE TABLE shop_other.t (id INT PRIMARY KEY)",
        "CREATE TABLE shop.items (id BIGINT PRIMARY KEY, name VARCHAR(20), price DOUBLE, "
        "flags BIT(8))",
        "INSERT INTO shop.items VALUES (1, 'a', 1.5, 5), (2, NULL, 2, 0), (3, 'x', 0, 1)"}) {
    ASSERT_EQ(mysql_query(m, sql), 0) << sql << ": " << mysql_error(m);
  }
  simkv::GroundTruth truth;
  Put(&truth, 10, 1, {codec::Datum::Bytes("a"), codec::Datum::Float64(1.5), codec::Datum::Bit(5)});
  Put(&truth, 20, 2, {codec::Datum::Null(), codec::Datum::Float64(2), codec::Datum::Bit(0)});
  auto expected = ExpectedState(truth, Snapshot(), Ts(20));
  ASSERT_TRUE(expected.ok());
  // Other tests use the same server: only `shop` is ours.
  auto actual = ReadMysqlState(uri, *expected, {"shop"});
  ASSERT_TRUE(actual.ok()) << actual.status().ToString();
  DiffReport r = Compare(*expected, *actual);
  std::ostringstream report;
  r.Print(report);
  ASSERT_EQ(r.differences.size(), 1u) << report.str();  // Row 3 is extra.
  EXPECT_EQ(r.differences[0].kind, Difference::Kind::kExtraRow);
  EXPECT_EQ(r.differences[0].actual, (RowValues{"3", "x", "0", "1"}));
  // Unscoped, every user schema counts: shop_other.t is an extra table.
  auto everything = ReadMysqlState(uri, *expected);
  ASSERT_TRUE(everything.ok()) << everything.status().ToString();
  EXPECT_EQ(everything->count(TableName{"shop_other", "t"}), 1u);
  EXPECT_EQ(actual->count(TableName{"shop_other", "t"}), 0u);
  EXPECT_EQ(ReadMysqlState("mysql://root@127.0.0.1:1/", *expected).status().code(),
            Code::kUnavailable);
  EXPECT_EQ(mysql_query(m, "DROP DATABASE shop"), 0);
  EXPECT_EQ(mysql_query(m, "DROP DATABASE shop_other"), 0);
  mysql_close(m);
}

}  // namespace
}  // namespace sluice::checker
