// SQL text without a database: literals, DDL rewriting, ddl_ts statements,
// URI parsing and error classification.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <string>

#include "codec/json_binary.h"
#include "codec/mysql_type.h"
#include "codec/mytime.h"
#include "sink/mysql/ddl_rewrite.h"
#include "sink/mysql/ddl_ts.h"
#include "sink/mysql/mysql_config.h"
#include "sink/mysql/mysql_error.h"
#include "sink/mysql/mysql_test_util.h"
#include "sink/mysql/sql_value.h"

namespace sluice::sink {
namespace {

namespace mt = codec::mysql_type;
namespace mf = codec::mysql_flag;
using codec::Datum;
using testing::Col;

std::string Lit(const Datum& d, const model::ColumnInfo& col) {
  std::string out;
  Status st = AppendLiteral(d, col, &out);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

TEST(SqlValueTest, QuotedStringEscapesEverythingMysqlInterprets) {
  std::string out;
  AppendQuotedString(std::string("a'b\"c\\d\ne\rf\0g\x1a", 14), &out);
  EXPECT_EQ(out, "'a\\'b\\\"c\\\\d\\ne\\rf\\0g\\Z'");
  out.clear();
  AppendQuotedString("héllo ☃", &out);
  EXPECT_EQ(out, "'héllo ☃'");
}

// Every byte value, alone and in runs, escapes as a byte-at-a-time
// reference does; escapes at either end and next to each other keep the
// text between them, and what `out` held before is kept.
TEST(SqlValueTest, QuotedStringMatchesByteAtATimeReference) {
  const std::map<char, std::string> escapes = {{'\0', "\\0"},  {'\n', "\\n"}, {'\r', "\\r"},
                                               {'\\', "\\\\"}, {'\'', "\\'"}, {'"', "\\\""},
                                               {'\x1a', "\\Z"}};
  auto reference = [&](std::string_view text) {
    std::string r = "'";
    for (char c : text) {
      auto it = escapes.find(c);
      r += it == escapes.end() ? std::string(1, c) : it->second;
    }
    return r + "'";
  };
  std::string all;
  for (int b = 0; b < 256; ++b) {
    std::string one(1, static_cast<char>(b));
    std::string out;
    AppendQuotedString(one, &out);
    EXPECT_EQ(out, reference(one)) << "byte " << b;
    all += one;
    all += "xy";
  }
  for (std::string text : {all, std::string("''ab\\\\"), std::string("\nplain text\r"),
                           std::string(300, 'p') + "'" + std::string(300, 'q'), std::string()}) {
    std::string out = "prefix,";
    AppendQuotedString(text, &out);
    EXPECT_EQ(out, "prefix," + reference(text));
  }
}

TEST(SqlValueTest, HexAndNames) {
  std::string out;
  AppendHexLiteral(std::string("\x00\xff\x10", 3), &out);
  EXPECT_EQ(out, "X'00FF10'");
  out.clear();
  AppendHexLiteral("", &out);
  EXPECT_EQ(out, "X''");
  out.clear();
  AppendQuotedName("we`ird", &out);
  EXPECT_EQ(out, "`we``ird`");
}

TEST(SqlValueTest, LiteralsPerKind) {
  EXPECT_EQ(Lit(Datum::Null(), Col(1, "a", mt::kLong)), "NULL");
  EXPECT_EQ(Lit(Datum::Int64(-42), Col(1, "a", mt::kLonglong)), "-42");
  EXPECT_EQ(Lit(Datum::Uint64(18446744073709551615ull), Col(1, "a", mt::kLonglong, mf::kUnsigned)),
            "18446744073709551615");
  EXPECT_EQ(Lit(Datum::Float64(0.1), Col(1, "a", mt::kDouble)), "0.1");
  // A FLOAT goes out as the double it widens to.
  EXPECT_EQ(Lit(Datum::Float32(0.1f), Col(1, "a", mt::kFloat)), "0.10000000149011612");
  EXPECT_EQ(Lit(Datum::Float64(1e300), Col(1, "a", mt::kDouble)), "1e+300");
  EXPECT_EQ(Lit(Datum::Decimal("-12.340", 10, 3), Col(1, "a", mt::kNewDecimal)), "-12.340");
  EXPECT_EQ(Lit(Datum::Bit(1000), Col(1, "a", mt::kBit, mf::kUnsigned)), "1000");
  EXPECT_EQ(Lit(Datum::Bytes("it's"), Col(1, "a", mt::kVarchar)), "'it\\'s'");
  model::ColumnInfo bin = Col(1, "a", mt::kVarchar, mf::kBinary);
  bin.type.charset = bin.type.collate = "binary";
  EXPECT_EQ(Lit(Datum::Bytes(std::string("\x00'", 2)), bin), "X'0027'");
  codec::MysqlTime t{2024, 2, 29, 23, 59, 58, 123456};
  EXPECT_EQ(Lit(Datum::Time(codec::ToPackedUint(t), mt::kDatetime, 6), Col(1, "a", mt::kDatetime)),
            "'2024-02-29 23:59:58.123456'");
  EXPECT_EQ(Lit(Datum::Time(codec::ToPackedUint(t), mt::kDate, 0), Col(1, "a", mt::kDate)),
            "'2024-02-29'");
  EXPECT_EQ(Lit(Datum::Time(0, mt::kDatetime, 0), Col(1, "a", mt::kDatetime)),
            "'0000-00-00 00:00:00'");
  int64_t nanos = -((838LL * 3600 + 59 * 60 + 59) * 1000000000LL);
  EXPECT_EQ(Lit(Datum::Duration(nanos, 0), Col(1, "a", mt::kDuration)), "'-838:59:59'");
  model::ColumnInfo e = Col(1, "e", mt::kEnum);
  e.type.elems = {"red", "o'range"};
  EXPECT_EQ(Lit(Datum::Enum(2), e), "'o\\'range'");
  EXPECT_EQ(Lit(Datum::Enum(0), e), "''");
  model::ColumnInfo s = Col(1, "s", mt::kSet);
  s.type.elems = {"x", "y", "z"};
  EXPECT_EQ(Lit(Datum::Set(0b101), s), "'x,z'");
  auto json = codec::JsonTextToBinary(R"({"k": "v'q", "n": [1, 2.5, null]})");
  ASSERT_TRUE(json.ok());
  std::string j = Lit(Datum::Json(*json), Col(1, "j", mt::kJson, mf::kBinary));
  EXPECT_EQ(j.front(), '\'');
  EXPECT_NE(j.find("v\\'q"), std::string::npos) << j;
  std::string vec(4 + 8, '\0');
  uint32_t dim = 2;
  float vals[2] = {1.5f, -2.0f};
  std::memcpy(vec.data(), &dim, 4);
  std::memcpy(vec.data() + 4, vals, 8);
  EXPECT_EQ(Lit(Datum::VectorFloat32View(vec), Col(1, "v", mt::kVectorFloat32)), "'[1.5,-2]'");
}

TEST(SqlValueTest, ValuesWithoutSqlFormAreErrors) {
  std::string out;
  Status st = AppendLiteral(Datum::Float64(std::numeric_limits<double>::quiet_NaN()),
                            Col(1, "f", mt::kDouble), &out);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  st = AppendLiteral(Datum::MinNotNull(), Col(1, "f", mt::kLong), &out);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  model::ColumnInfo e = Col(1, "e", mt::kEnum);
  e.type.elems = {"a"};
  st = AppendLiteral(Datum::Enum(7), e, &out);
  EXPECT_EQ(st.code(), Code::kCorruption);
  EXPECT_NE(st.message().find("column e"), std::string_view::npos);
  // A decimal that is not a plain number is quoted, never spliced.
  out.clear();
  ASSERT_TRUE(
      AppendLiteral(Datum::Decimal("1;DROP", 5, 0), Col(1, "d", mt::kNewDecimal), &out).ok());
  EXPECT_EQ(out, "'1;DROP'");
}

TEST(SqlValueTest, EqualsHandlesNullAndJson) {
  std::string out;
  ASSERT_TRUE(AppendEquals(Datum::Null(), Col(1, "a", mt::kLong), SqlFlavor::kMysql, &out).ok());
  EXPECT_EQ(out, "`a` IS NULL");
  auto json = codec::JsonTextToBinary("[1]");
  ASSERT_TRUE(json.ok());
  out.clear();
  ASSERT_TRUE(
      AppendEquals(Datum::Json(*json), Col(1, "j", mt::kJson), SqlFlavor::kMariaDb, &out).ok());
  EXPECT_EQ(out, "JSON_EQUALS(`j`, '[1]')");
  out.clear();
  ASSERT_TRUE(
      AppendEquals(Datum::Json(*json), Col(1, "j", mt::kJson), SqlFlavor::kMysql, &out).ok());
  EXPECT_EQ(out, "`j` = CAST('[1]' AS JSON)");
}

TEST(DdlRewriteTest, DropsTiDbOnlyClauses) {
  EXPECT_EQ(RewriteDdlForMysql("CREATE TABLE `t` (\n  `id` BIGINT NOT NULL,\n  PRIMARY KEY (`id`) "
                               "/*T![clustered_index] CLUSTERED */\n) ENGINE=InnoDB"),
            "CREATE TABLE `t` (\n  `id` BIGINT NOT NULL,\n  PRIMARY KEY (`id`) ) ENGINE=InnoDB");
  EXPECT_EQ(RewriteDdlForMysql("create table t (id bigint auto_random(5) primary key, "
                               "b int) shard_row_id_bits = 4 pre_split_regions=2"),
            "create table t (id bigint primary key, b int) ");
  EXPECT_EQ(RewriteDdlForMysql("CREATE TABLE t (a INT, PRIMARY KEY (a) NONCLUSTERED) "
                               "ENGINE=InnoDB, AUTO_ID_CACHE 1, DEFAULT CHARSET=utf8mb4"),
            "CREATE TABLE t (a INT, PRIMARY KEY (a) ) ENGINE=InnoDB , DEFAULT CHARSET=utf8mb4");
  EXPECT_EQ(RewriteDdlForMysql("ALTER TABLE t PLACEMENT POLICY = `p1`"), "ALTER TABLE t ");
  EXPECT_EQ(RewriteDdlForMysql("CREATE TABLE t (c DATETIME) TTL = `c` + INTERVAL 1 DAY "
                               "TTL_ENABLE = 'OFF'"),
            "CREATE TABLE t (c DATETIME) ");
  EXPECT_EQ(RewriteDdlForMysql("CREATE TABLE t (id INT /*T![auto_rand] AUTO_RANDOM(3) */)"),
            "CREATE TABLE t (id INT )");
}

TEST(DdlRewriteTest, LeavesStringsNamesAndPlainSqlAlone) {
  const char* kPlain[] = {
      "CREATE TABLE `clustered` (`auto_random` INT COMMENT 'SHARD_ROW_ID_BITS=4 CLUSTERED')",
      "ALTER TABLE t ADD COLUMN `ttl` INT",
      "CREATE TABLE t (ttl INT, a INT) /* a plain comment: CLUSTERED */",
      "RENAME TABLE `a`.`b` TO `c`.`d`",
      "CREATE TABLE vector (vector INT)",
      "INSERT INTO t VALUES ('it''s /*T! x */')",
  };
  for (const char* q : kPlain) EXPECT_EQ(RewriteDdlForMysql(q), q);
}

TEST(DdlRewriteTest, VectorBecomesLongtext) {
  EXPECT_EQ(RewriteDdlForMysql("CREATE TABLE t (id INT, `v` VECTOR(3) NOT NULL, w vector<float>)"),
            "CREATE TABLE t (id INT, `v` LONGTEXT NOT NULL, w LONGTEXT)");
  EXPECT_EQ(RewriteDdlForMysql("ALTER TABLE t ADD COLUMN vector VECTOR(8)"),
            "ALTER TABLE t ADD COLUMN vector LONGTEXT");
}

TEST(DdlRewriteTest, TiDbOnlyActions) {
  EXPECT_TRUE(IsTiDbOnlyDdl(model::ActionType::kSetTiFlashReplica));
  EXPECT_TRUE(IsTiDbOnlyDdl(model::ActionType::kAlterTablePlacement));
  EXPECT_TRUE(IsTiDbOnlyDdl(model::ActionType::kAlterTtlInfo));
  EXPECT_FALSE(IsTiDbOnlyDdl(model::ActionType::kCreateTable));
  EXPECT_FALSE(IsTiDbOnlyDdl(model::ActionType::kAddColumn));
  EXPECT_FALSE(IsTiDbOnlyDdl(model::ActionType::kRenameTable));
}

TEST(DdlTsTest, Statements) {
  EXPECT_EQ(UpsertDdlTsSql("default", "ks/cf'1", {0, 7}, Ts(42), false),
            "INSERT INTO tidb_cdc.ddl_ts_v1 (ticdc_cluster_id, changefeed, ddl_ts, table_id, "
            "finished, is_syncpoint) VALUES ('default', 'ks/cf\\'1', '42', 0, 0, 0), ('default', "
            "'ks/cf\\'1', '42', 7, 0, 0) ON DUPLICATE KEY UPDATE finished=VALUES(finished), "
            "ddl_ts=VALUES(ddl_ts), is_syncpoint=VALUES(is_syncpoint)");
  EXPECT_EQ(DeleteDdlTsSql("c", "f", {3}),
            "DELETE FROM tidb_cdc.ddl_ts_v1 WHERE (ticdc_cluster_id, changefeed, table_id) IN "
            "(('c','f',3))");
  EXPECT_EQ(SelectDdlTsSql("c", "f", {3}),
            "SELECT table_id, ddl_ts, finished, is_syncpoint FROM tidb_cdc.ddl_ts_v1 WHERE "
            "(ticdc_cluster_id, changefeed, table_id) IN (('c','f',3), ('c','f',-1))");
  EXPECT_NE(CreateDdlTsTableSql().find("PRIMARY KEY (ticdc_cluster_id, changefeed, table_id)"),
            std::string::npos);
}

TEST(DdlTsTest, TableIdsOfADdl) {
  event::DdlEvent ddl;
  ddl.blocked.table_ids = {5};
  EXPECT_EQ(DdlTsTableIds(ddl), std::vector<int64_t>{5});
  ddl.blocked.table_ids = {};
  ddl.tables_to_add = {event::TableRef{1, 9, "d", "t"}};
  EXPECT_EQ(DdlTsTableIds(ddl), (std::vector<int64_t>{0, 9}));
  ddl.blocked.influence = event::InfluenceType::kDb;
  ddl.blocked.table_ids = {4, 4};
  EXPECT_EQ(DdlTsTableIds(ddl), (std::vector<int64_t>{0, 4, 9}));
}

TEST(MysqlConfigTest, DefaultsAndParameters) {
  auto uri = SinkUri::Parse("mysql://u:p%40ss@db.example:3307/");
  ASSERT_TRUE(uri.ok());
  auto c = MysqlSinkConfig::FromUri(*uri);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->connect.host, "db.example");
  EXPECT_EQ(c->connect.port, 3307);
  EXPECT_EQ(c->connect.user, "u");
  EXPECT_EQ(c->connect.password, "p@ss");
  EXPECT_EQ(c->worker_count, 16);
  EXPECT_EQ(c->max_txn_row, 256);
  EXPECT_FALSE(c->safe_mode);
  EXPECT_TRUE(c->batch_dml);
  EXPECT_TRUE(c->enable_ddl_ts);
  EXPECT_FALSE(c->tidb_scheme);

  uri = SinkUri::Parse(
      "tidb://h/?worker-count=4&max-txn-row=10&safe-mode=true&batch-dml-enable=false&"
      "read-timeout=30s&enable-ddl-ts=false&unknown-thing=1");
  ASSERT_TRUE(uri.ok());
  c = MysqlSinkConfig::FromUri(*uri);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->tidb_scheme);
  EXPECT_EQ(c->connect.port, 4000);
  EXPECT_EQ(c->connect.user, "root");
  EXPECT_EQ(c->worker_count, 4);
  EXPECT_EQ(c->max_txn_row, 10);
  EXPECT_TRUE(c->safe_mode);
  EXPECT_FALSE(c->batch_dml);
  EXPECT_FALSE(c->enable_ddl_ts);
  EXPECT_EQ(c->connect.read_timeout, std::chrono::seconds(30));

  for (const char* bad : {"mysql://h/?worker-count=0", "mysql://h/?safe-mode=maybe", "kafka://h/",
                          "mysql:///?worker-count=1", "mysql://h/?max-txn-row=9999"}) {
    uri = SinkUri::Parse(bad);
    ASSERT_TRUE(uri.ok()) << bad;
    EXPECT_EQ(MysqlSinkConfig::FromUri(*uri).status().code(), Code::kInvalidArgument) << bad;
  }
}

TEST(MysqlErrorTest, Classification) {
  using namespace mysql_errnum;
  for (unsigned e : {kServerGoneAway, kServerLost, 2003u, 1927u}) {
    EXPECT_TRUE(IsConnectionError(e)) << e;
    EXPECT_TRUE(IsRetryableDmlError(e)) << e;
    EXPECT_TRUE(IsRetryableDdlError(e)) << e;
    EXPECT_EQ(MysqlErrorStatus(e, "x", "").code(), Code::kUnavailable);
  }
  EXPECT_EQ(MysqlErrorStatus(kLockDeadlock, "deadlock", "").code(), Code::kAborted);
  EXPECT_EQ(MysqlErrorStatus(kLockWaitTimeout, "wait", "").code(), Code::kTimeout);
  EXPECT_TRUE(IsRetryableDmlError(kLockDeadlock));
  EXPECT_TRUE(IsRetryableDmlError(kLockWaitTimeout));
  EXPECT_TRUE(IsRetryableDmlError(9999));  // Unknown: retried.
  for (unsigned e : {kNoSuchTable, kBadField, kParse, kTableExists, kDupEntry, 1045u}) {
    EXPECT_FALSE(IsRetryableDmlError(e)) << e;
    EXPECT_FALSE(IsRetryable(MysqlErrorStatus(e, "x", "").code())) << e;
  }
  EXPECT_EQ(MysqlErrorStatus(kNoSuchTable, "no table", "ctx").ToString(),
            "not_found: ctx: Error 1146: no table");
  EXPECT_EQ(MysqlErrorStatus(kBadField, "x", "").code(), Code::kIncompatible);
  EXPECT_EQ(MysqlErrorStatus(kParse, "x", "").code(), Code::kInvalidArgument);
  EXPECT_FALSE(IsRetryableDdlError(kParse));
  EXPECT_FALSE(IsRetryableDdlError(kNoSuchTable));
  EXPECT_TRUE(IsIgnorableDdlError(kTableExists));
  EXPECT_TRUE(IsIgnorableDdlError(kDbCreateExists));
  EXPECT_TRUE(IsIgnorableDdlError(kDupFieldName));
  EXPECT_FALSE(IsIgnorableDdlError(kNoSuchTable));
  EXPECT_FALSE(IsIgnorableDdlError(kParse));
}

}  // namespace
}  // namespace sluice::sink
