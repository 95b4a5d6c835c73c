#include "sink/storage/schema_file.h"

#include <gtest/gtest.h>

#include "codec/mysql_type.h"
#include "sink/codec/test_tables.h"

namespace sluice::sink::storage {
namespace {

namespace mt = sluice::codec::mysql_type;
namespace mf = sluice::codec::mysql_flag;
using sluice::sink::testing::Column;

// The table of TiCDC's pkg/cloudstorage/schema_file_test.go
// (generateSchemaFile): schema1.table1 at version 100.
event::TableSchemaPtr TiCdcTable() {
  model::TableInfo t;
  t.id = 20;
  t.name = model::CIStr::From("table1");
  t.pk_is_handle = true;
  t.columns = {Column(1, "Id", mt::kLong, mf::kPriKey | mf::kNotNull),
               Column(2, "LastName", mt::kVarchar, mf::kNotNull),
               Column(3, "FirstName", mt::kVarchar), Column(4, "Birthday", mt::kDatetime)};
  t.columns[0].default_value = 10;
  t.columns[1].type.flen = 128;
  t.columns[1].default_value = "Default LastName";
  t.columns[2].type.flen = 64;
  t.columns[2].default_value = "Default FirstName";
  t.columns[3].default_value = 12345678;
  for (int i = 0; i < 4; ++i) t.columns[i].offset = i;
  return *event::TableSchema::Make("schema1", 1, std::move(t), Ts(100));
}

TEST(SchemaFileTest, MatchesTiCdcGoldenFileAndChecksum) {
  SchemaFile f = SchemaFile::ForTable(*TiCdcTable(), 100, false);
  EXPECT_EQ(f.Marshal(),
            "{\n"
            "    \"Table\": \"table1\",\n"
            "    \"Schema\": \"schema1\",\n"
            "    \"Version\": 1,\n"
            "    \"TableVersion\": 100,\n"
            "    \"Query\": \"\",\n"
            "    \"Type\": 0,\n"
            "    \"TableColumns\": [\n"
            "        {\n"
            "            \"ColumnName\": \"Id\",\n"
            "            \"ColumnType\": \"INT\",\n"
            "            \"ColumnDefault\": 10,\n"
            "            \"ColumnPrecision\": \"11\",\n"
            "            \"ColumnNullable\": \"false\",\n"
            "            \"ColumnIsPk\": \"true\"\n"
            "        },\n"
            "        {\n"
            "            \"ColumnName\": \"LastName\",\n"
            "            \"ColumnType\": \"VARCHAR\",\n"
            "            \"ColumnDefault\": \"Default LastName\",\n"
            "            \"ColumnPrecision\": \"128\",\n"
            "            \"ColumnNullable\": \"false\"\n"
            "        },\n"
            "        {\n"
            "            \"ColumnName\": \"FirstName\",\n"
            "            \"ColumnType\": \"VARCHAR\",\n"
            "            \"ColumnDefault\": \"Default FirstName\",\n"
            "            \"ColumnPrecision\": \"64\"\n"
            "        },\n"
            "        {\n"
            "            \"ColumnName\": \"Birthday\",\n"
            "            \"ColumnType\": \"DATETIME\",\n"
            "            \"ColumnDefault\": 12345678\n"
            "        }\n"
            "    ],\n"
            "    \"TableColumnsTotal\": 4\n"
            "}");
  // TiCDC TestSchemaFileGenFilePath.
  EXPECT_EQ(f.Checksum(), 3752767265u);
  EXPECT_EQ(f.Path(), "schema1/table1/meta/schema_100_3752767265.json");

  SchemaFile db;
  db.schema = "schema1";
  db.table_version = 100;
  EXPECT_EQ(db.Path(), "schema1/meta/schema_100_3233644819.json");
  EXPECT_NE(db.Marshal().find("\"TableColumns\": null"), std::string::npos);
}

TEST(SchemaFileTest, ChecksumIgnoresColumnOrderQueryAndVersion) {
  SchemaFile f = SchemaFile::ForTable(*TiCdcTable(), 100, false);
  SchemaFile g = f;
  std::swap(g.columns[0], g.columns[3]);
  g.query = "ALTER TABLE t COMMENT 'x'";
  g.type = 17;
  g.table_version = 500;
  EXPECT_EQ(f.Checksum(), g.Checksum());
  g.columns[1].precision = "129";
  EXPECT_NE(f.Checksum(), g.Checksum());
}

SchemaColumn ColumnOf(model::ColumnInfo c) {
  model::TableInfo t;
  t.id = 1;
  t.name = model::CIStr::From("t");
  c.offset = 0;
  t.columns = {std::move(c)};
  return SchemaFile::ForTable(**event::TableSchema::Make("d", 1, std::move(t), Ts(1)), 1, true)
      .columns[0];
}

model::ColumnInfo Typed(uint8_t tp, int64_t flen, int64_t decimal, uint64_t flag = 0,
                        std::string charset = "utf8mb4") {
  model::ColumnInfo c = Column(7, "c", tp, flag, std::move(charset));
  c.type.flen = flen;
  c.type.decimal = decimal;
  return c;
}

// Cases of TiCDC's TestTableCol.
TEST(SchemaFileTest, ColumnTypesLikeTiCdc) {
  auto expect = [](model::ColumnInfo c, std::string type, std::string precision,
                   std::string scale) {
    SchemaColumn col = ColumnOf(std::move(c));
    EXPECT_EQ(col.id, "7");
    EXPECT_EQ(col.type, type);
    EXPECT_EQ(col.precision, precision) << type;
    EXPECT_EQ(col.scale, scale) << type;
  };
  expect(Typed(mt::kDuration, -1, 5), "TIME", "", "5");
  expect(Typed(mt::kLong, 5, -1, mf::kUnsigned), "INT UNSIGNED", "5", "");
  expect(Typed(mt::kFloat, 12, 3), "FLOAT", "12", "3");
  expect(Typed(mt::kFloat, 12, -1), "FLOAT", "12", "");
  expect(Typed(mt::kDouble, 7, 3), "DOUBLE", "7", "3");
  expect(Typed(mt::kLong, -1, -1, mf::kPriKey), "INT", "11", "");
  expect(Typed(mt::kBit, 5, -1), "BIT", "5", "");
  expect(Typed(mt::kVarString, 64, -1), "VAR_STRING", "64", "");
  expect(Typed(mt::kBlob, 100, -1, mf::kBinary, "binary"), "BLOB", "100", "");
  expect(Typed(mt::kBlob, 100, -1), "TEXT", "100", "");
  expect(Typed(mt::kVarchar, 16, -1, mf::kBinary, "binary"), "VARBINARY", "16", "");
  expect(Typed(mt::kString, 16, -1, mf::kBinary, "binary"), "BINARY", "16", "");
  expect(Typed(mt::kNewDecimal, 10, 4), "DECIMAL", "10", "4");
  expect(Typed(mt::kTimestamp, 8, 2), "TIMESTAMP", "", "2");
  expect(Typed(mt::kTimestamp, 8, 0), "TIMESTAMP", "", "");
  expect(Typed(mt::kDate, 8, 2), "DATE", "", "");
  expect(Typed(mt::kYear, 4, 0), "YEAR", "4", "");
  model::ColumnInfo e = Typed(mt::kEnum, -1, -1);
  e.type.elems = {"a", "b"};
  SchemaColumn ec = ColumnOf(e);
  EXPECT_EQ(ec.type, "ENUM");
  EXPECT_EQ(ec.elems, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(ec.precision, "");
}

TEST(SchemaFileTest, ParseRoundTripsAndRejectsGarbage) {
  SchemaFile f = SchemaFile::ForTable(*TiCdcTable(), 100, true);
  f.query = "CREATE TABLE `table1` (...)";
  f.type = 3;
  auto parsed = SchemaFile::Parse(f.Marshal());
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, f);
  EXPECT_EQ(parsed->Checksum(), f.Checksum());
  EXPECT_EQ(SchemaFile::Parse("{").status().code(), Code::kCorruption);
  EXPECT_EQ(SchemaFile::Parse(R"({"Schema":"a"})").status().code(), Code::kCorruption);
  EXPECT_EQ(SchemaFile::Parse(R"({"Schema":"a","Version":1,"TableVersion":1,"Type":0,)"
                              R"("TableColumnsTotal":1,"TableColumns":[{"ColumnType":"INT"}]})")
                .status()
                .code(),
            Code::kCorruption);
}

TEST(SchemaFileTest, DdlFiles) {
  event::DdlEvent create_db;
  create_db.type = model::ActionType::kCreateSchema;
  create_db.schema_name = "db";
  create_db.query = "CREATE DATABASE `db`";
  create_db.finished_ts = Ts(300);
  SchemaFile f = SchemaFile::ForDdl(create_db, false);
  EXPECT_EQ(f.total_columns, 0);
  EXPECT_TRUE(f.Path().starts_with("db/meta/schema_300_"));
  EXPECT_EQ(f.type, 1);

  event::DdlEvent drop;
  drop.type = model::ActionType::kDropTable;
  drop.schema_name = "db";
  drop.table_name = "gone";
  drop.finished_ts = Ts(301);
  EXPECT_TRUE(SchemaFile::ForDdl(drop, false).Path().starts_with("db/gone/meta/schema_301_"));

  event::DdlEvent alter;
  alter.type = model::ActionType::kAddColumn;
  alter.table_schema = TiCdcTable();
  alter.query = "ALTER TABLE ...";
  alter.finished_ts = Ts(302);
  SchemaFile a = SchemaFile::ForDdl(alter, false);
  EXPECT_EQ(a.table, "table1");
  EXPECT_EQ(a.table_version, 302u);
  EXPECT_EQ(a.Checksum(), 3752767265u);
  EXPECT_EQ(a.Path(), "schema1/table1/meta/schema_302_3752767265.json");

  EXPECT_EQ(ParseSchemaFileName("schema_302_3752767265.json"),
            std::make_pair(uint64_t{302}, uint32_t{3752767265u}));
  EXPECT_EQ(ParseSchemaFileName("schema_302_375276726.json"), std::nullopt);
  EXPECT_EQ(ParseSchemaFileName("schema_x_3752767265.json"), std::nullopt);
  EXPECT_EQ(ParseSchemaFileName("schema_1_3752767265.json.tmp.ab"), std::nullopt);
}

}  // namespace
}  // namespace sluice::sink::storage
