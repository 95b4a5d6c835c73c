#include <gtest/gtest.h>

#include "codec/model/go_json.h"
#include "codec/mysql_type.h"
#include "sink/codec/canal_json_decoder.h"
#include "sink/codec/canal_json_encoder.h"
#include "sink/codec/test_tables.h"

namespace sluice::sink::codec {
namespace {

namespace mt = sluice::codec::mysql_type;
namespace mf = sluice::codec::mysql_flag;
using sluice::codec::Datum;
using namespace sluice::sink::testing;  // NOLINT

// Wall time 1700000000 s, so "ts" is 1700000000000.
class CanalJsonTest : public ::testing::Test {
 protected:
  ManualClock clock_;

  CanalJsonEncoder Encoder(bool extension) {
    CanalJsonConfig c;
    c.enable_tidb_extension = extension;
    return CanalJsonEncoder(c, &clock_);
  }
};

// TiCDC docs (ticdc-canal-json.md): the table of the "DML Event" and
// "Update event" examples.
event::TableSchemaPtr TpInt() {
  model::TableInfo t;
  t.id = 80;
  t.name = model::CIStr::From("tp_int");
  t.pk_is_handle = true;
  t.columns = {Column(1, "id", mt::kLong, mf::kPriKey | mf::kNotNull | mf::kAutoIncrement),
               Column(2, "c_tinyint", mt::kTiny),
               Column(3, "c_smallint", mt::kShort),
               Column(4, "c_mediumint", mt::kInt24),
               Column(5, "c_int", mt::kLong),
               Column(6, "c_bigint", mt::kLonglong)};
  for (int i = 0; i < 6; ++i) t.columns[i].offset = i;
  return *event::TableSchema::Make("test", 2, std::move(t), Ts(1));
}

std::vector<Datum> TpIntRow(int64_t tiny, int64_t i) {
  return {Datum::Int64(2),       Datum::Int64(tiny), Datum::Int64(32767),
          Datum::Int64(8388607), Datum::Int64(i),    Datum::Int64(9223372036854775807)};
}

model::JsonValue Parse(std::string_view text) {
  auto v = model::ParseJsonDocument(text);
  EXPECT_TRUE(v.ok()) << v.status().ToString() << "\n" << text;
  return v.ok() ? *v : model::JsonValue();
}

// Compares as JSON values (key order aside), ignoring the build time "ts".
void ExpectSameMessage(std::string_view got, std::string_view want) {
  model::JsonValue g = Parse(got), w = Parse(want);
  g.erase("ts");
  w.erase("ts");
  EXPECT_EQ(nlohmann::json(g), nlohmann::json(w)) << got;
}

TEST_F(CanalJsonTest, InsertMatchesTiCdcDocsExample) {
  auto msg =
      Encoder(true).EncodeRow(*TpInt(), Ts(429918007904436226), Insert(TpIntRow(127, 2147483647)));
  ASSERT_TRUE(msg.ok()) << msg.status().ToString();
  ExpectSameMessage(*msg, R"({
    "id": 0, "database": "test", "table": "tp_int", "pkNames": ["id"], "isDdl": false,
    "type": "INSERT", "es": 1640007049196, "ts": 1640007050284, "sql": "",
    "sqlType": {"c_bigint": -5, "c_int": 4, "c_mediumint": 4, "c_smallint": 5,
                "c_tinyint": -6, "id": 4},
    "mysqlType": {"c_bigint": "bigint", "c_int": "int", "c_mediumint": "mediumint",
                  "c_smallint": "smallint", "c_tinyint": "tinyint", "id": "int"},
    "data": [{"c_bigint": "9223372036854775807", "c_int": "2147483647",
              "c_mediumint": "8388607", "c_smallint": "32767", "c_tinyint": "127", "id": "2"}],
    "old": null,
    "_tidb": {"commitTs": 429918007904436226}})");
  // Byte for byte: fields in TiCDC's writer order (old before data).
  EXPECT_EQ(*msg,
            R"({"id":0,"database":"test","table":"tp_int","pkNames":["id"],"isDdl":false,)"
            R"("type":"INSERT","es":1640007049196,"ts":1700000000000,"sql":"",)"
            R"("sqlType":{"id":4,"c_tinyint":-6,"c_smallint":5,"c_mediumint":4,"c_int":4,)"
            R"("c_bigint":-5},"mysqlType":{"id":"int","c_tinyint":"tinyint","c_smallint":)"
            R"("smallint","c_mediumint":"mediumint","c_int":"int","c_bigint":"bigint"},)"
            R"("old":null,"data":[{"id":"2","c_tinyint":"127","c_smallint":"32767",)"
            R"("c_mediumint":"8388607","c_int":"2147483647","c_bigint":"9223372036854775807"}],)"
            R"("_tidb":{"commitTs":429918007904436226}})");
}

// TiCDC docs: "old" holds every column of the row before the update.
TEST_F(CanalJsonTest, UpdateOldHoldsAllColumnsUnlessOnlyUpdated) {
  auto row = Update(TpIntRow(127, 2147483647), TpIntRow(0, 0));
  auto msg = Encoder(false).EncodeRow(*TpInt(), Ts(429918007904436226), row);
  ASSERT_TRUE(msg.ok());
  model::JsonValue v = Parse(*msg);
  EXPECT_EQ(v["type"], "UPDATE");
  EXPECT_FALSE(v.contains("_tidb"));
  EXPECT_EQ(nlohmann::json(v["old"]), nlohmann::json::parse(R"([{"c_bigint":
      "9223372036854775807", "c_int": "2147483647", "c_mediumint": "8388607",
      "c_smallint": "32767", "c_tinyint": "127", "id": "2"}])"));
  EXPECT_EQ(v["data"][0]["c_int"], "0");

  CanalJsonConfig only;
  only.only_output_updated_columns = true;
  auto short_msg = CanalJsonEncoder(only, &clock_).EncodeRow(*TpInt(), Ts(1), row);
  ASSERT_TRUE(short_msg.ok());
  EXPECT_EQ(nlohmann::json(Parse(*short_msg)["old"]),
            nlohmann::json::parse(R"([{"c_tinyint": "127", "c_int": "2147483647"}])"));
}

TEST_F(CanalJsonTest, EveryColumnType) {
  auto msg =
      Encoder(false).EncodeRow(*AllTypesSchema(), Ts(433305438660591626), Insert(AllTypesRow(1)));
  ASSERT_TRUE(msg.ok()) << msg.status().ToString();
  EXPECT_EQ(*msg,
            R"({"id":0,"database":"db","table":"all_types","pkNames":["id"],"isDdl":false,)"
            R"("type":"INSERT","es":1652929072039,"ts":1700000000000,"sql":"","sqlType":{"id":4,)"
            R"("c_tinyint":-6,"c_tinyint_u":5,"c_smallint":5,"c_mediumint":4,"c_int":4,)"
            R"("c_bigint":-5,"c_bigint_u":3,"c_float":7,"c_double":8,"c_decimal":3,"c_char":1,)"
            R"("c_varchar":12,"c_text":2005,"c_binary":2004,"c_varbinary":2004,"c_blob":2004,)"
            R"("c_date":91,"c_datetime":93,"c_timestamp":93,"c_time":92,"c_year":12,"c_enum":4,)"
            R"("c_set":-7,"c_bit":-7,"c_json":12,"c_vector":12},"mysqlType":{"id":"int",)"
            R"("c_tinyint":"tinyint","c_tinyint_u":"tinyint unsigned","c_smallint":"smallint",)"
            R"("c_mediumint":"mediumint","c_int":"int","c_bigint":"bigint",)"
            R"("c_bigint_u":"bigint unsigned","c_float":"float","c_double":"double",)"
            R"("c_decimal":"decimal","c_char":"char","c_varchar":"varchar","c_text":"text",)"
            R"("c_binary":"binary","c_varbinary":"varbinary","c_blob":"blob","c_date":"date",)"
            R"("c_datetime":"datetime","c_timestamp":"timestamp","c_time":"time","c_year":"year",)"
            R"("c_enum":"enum","c_set":"set","c_bit":"bit","c_json":"json","c_vector":"vector"},)"
            R"("old":null,"data":[{"id":"1","c_tinyint":"-128","c_tinyint_u":"255",)"
            R"("c_smallint":"32767","c_mediumint":"8388607","c_int":"2147483647",)"
            R"("c_bigint":"9223372036854775807","c_bigint_u":"18446744073709551615",)"
            R"("c_float":"3.14","c_double":"1000000","c_decimal":"123.4560","c_char":"abc",)"
            R"("c_varchar":"a,\"b\"\r\nc","c_text":"你好, \u003cworld\u003e \u0026 more",)"
            R"("c_binary":"\u0005\u0007\n\u000f$2+cx\u003c\u0026ÿþ-7F",)"
            "\"c_varbinary\":\"\\u0000\\u0001\xc2\x80\","
            R"("c_blob":"hello world","c_date":"2014-06-04",)"
            R"("c_datetime":"2015-12-20 23:58:58.123","c_timestamp":"1973-12-30 15:30:00",)"
            R"("c_time":"-838:59:59.50","c_year":"1970","c_enum":"2","c_set":"5","c_bit":"683",)"
            R"("c_json":"{\"key\": \"value\", \"n\": [1, 2]}","c_vector":"[1,2.5,-3]"}]})");
}

TEST_F(CanalJsonTest, DeleteNullsAndHandleKeyOnly) {
  auto msg = Encoder(false).EncodeRow(*AllTypesSchema(), Ts(1), Delete(AllTypesNullRow(7)));
  ASSERT_TRUE(msg.ok());
  model::JsonValue v = Parse(*msg);
  EXPECT_EQ(v["type"], "DELETE");
  EXPECT_TRUE(v["old"].is_null());
  EXPECT_EQ(v["data"][0]["id"], "7");
  EXPECT_TRUE(v["data"][0]["c_json"].is_null());
  EXPECT_EQ(v["data"][0].size(), 27u);

  CanalJsonConfig keys;
  keys.delete_only_handle_key_columns = true;
  auto key_msg =
      CanalJsonEncoder(keys, &clock_).EncodeRow(*AllTypesSchema(), Ts(1), Delete(AllTypesRow(7)));
  ASSERT_TRUE(key_msg.ok());
  EXPECT_NE(key_msg->find(R"("sqlType":{"id":4},"mysqlType":{"id":"int"},"old":null,)"
                          R"("data":[{"id":"7"}])"),
            std::string::npos)
      << *key_msg;
}

TEST_F(CanalJsonTest, DdlAndWatermarkMessages) {
  event::DdlEvent ddl;
  ddl.type = model::ActionType::kCreateTable;
  ddl.schema_name = "test";
  ddl.table_name = "t<1>";
  ddl.query = "CREATE TABLE `t<1>` (id INT PRIMARY KEY)";
  ddl.finished_ts = Ts(429918007904436226);
  EXPECT_EQ(Encoder(false).EncodeDdl(ddl),
            R"({"id":0,"database":"test","table":"t\u003c1\u003e","pkNames":null,"isDdl":true,)"
            R"("type":"CREATE","es":1640007049196,"ts":1700000000000,)"
            R"j("sql":"CREATE TABLE `t\u003c1\u003e` (id INT PRIMARY KEY)","sqlType":null,)j"
            R"("mysqlType":null,"data":null,"old":null})");
  std::string with_ext = Encoder(true).EncodeDdl(ddl);
  EXPECT_TRUE(with_ext.ends_with(R"("old":null,"_tidb":{"commitTs":429918007904436226}})"));
  EXPECT_EQ(CanalDdlType(model::ActionType::kAddColumn), "ALTER");
  EXPECT_EQ(CanalDdlType(model::ActionType::kDropTable), "ERASE");
  EXPECT_EQ(CanalDdlType(model::ActionType::kCreateSchema), "QUERY");

  // TiCDC docs' WATERMARK example, with this clock's build time.
  EXPECT_EQ(Encoder(true).EncodeWatermark(Ts(429918007904436226)),
            R"({"id":0,"database":"","table":"","pkNames":null,"isDdl":false,)"
            R"("type":"TIDB_WATERMARK","es":1640007049196,"ts":1700000000000,"sql":"",)"
            R"("sqlType":null,"mysqlType":null,"data":null,"old":null,)"
            R"("_tidb":{"watermarkTs":429918007904436226}})");

  auto decoded = DecodeCanalJsonMessages(
      with_ext + "\r\n" + Encoder(true).EncodeWatermark(Ts(77)) + "\r\n", "\r\n");
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  ASSERT_EQ(decoded->size(), 2u);
  EXPECT_EQ((*decoded)[0].kind, CanalJsonMessage::Kind::kDdl);
  EXPECT_EQ((*decoded)[0].query, ddl.query);
  EXPECT_EQ((*decoded)[0].table, "t<1>");
  EXPECT_EQ((*decoded)[0].commit_ts, 429918007904436226u);
  EXPECT_EQ((*decoded)[1].kind, CanalJsonMessage::Kind::kWatermark);
  EXPECT_EQ((*decoded)[1].watermark_ts, 77u);
}

TEST_F(CanalJsonTest, RoundTripThroughTheDecoder) {
  auto schema = AllTypesSchema();
  auto e = Dml(schema, Ts(99),
               {Insert(AllTypesRow(1)), Update(AllTypesRow(1), AllTypesNullRow(1)),
                Delete(AllTypesNullRow(1))});
  std::string data;
  ASSERT_TRUE(Encoder(true).Append(*e, &data).ok());
  EXPECT_TRUE(data.ends_with("}\r\n"));
  auto rows = DecodeCanalJsonRows(data, "\r\n");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 3u);
  const DecodedRow& ins = (*rows)[0];
  EXPECT_EQ(ins.op, RowOp::kInsert);
  EXPECT_EQ(ins.schema, "db");
  EXPECT_EQ(ins.table, "all_types");
  EXPECT_EQ(ins.commit_ts, 99u);
  EXPECT_EQ(ins.pk_names, std::vector<std::string>{"id"});
  ASSERT_EQ(ins.columns.size(), 27u);
  EXPECT_EQ(ins.columns[13].name, "c_text");
  EXPECT_EQ(ins.columns[13].value, "你好, <world> & more");
  EXPECT_EQ(ins.columns[14].value, std::string("\x05\x07\n\x0f$2+cx<&\xff\xfe-7F", 16));
  EXPECT_EQ(ins.columns[15].value, std::string("\x00\x01\x80", 3));
  EXPECT_EQ(ins.columns[22].value, "2");  // ENUM as its number.
  const DecodedRow& upd = (*rows)[1];
  EXPECT_EQ(upd.op, RowOp::kUpdate);
  EXPECT_EQ(upd.old_columns, ins.columns);
  EXPECT_EQ(upd.columns[5].value, std::nullopt);
  EXPECT_EQ((*rows)[2].op, RowOp::kDelete);
  EXPECT_TRUE((*rows)[2].old_columns.empty());
}

TEST_F(CanalJsonTest, BadMessagesAreCorruption) {
  for (std::string_view bad :
       {"not json", "[]", R"({"type":"INSERT"})",
        R"({"id":0,"database":"d","table":"t","pkNames":null,"isDdl":false,"type":"MERGE",)"
        R"("es":1,"ts":1,"sql":"","sqlType":null,"mysqlType":null,"old":null,"data":[{"a":"1"}]})",
        R"({"id":0,"database":"d","table":"t","pkNames":null,"isDdl":false,"type":"INSERT",)"
        R"("es":1,"ts":1,"sql":"","sqlType":null,"mysqlType":null,"old":null,"data":[{"a":1}]})",
        R"({"id":0,"database":"d","table":"t","pkNames":null,"isDdl":false,"type":"INSERT",)"
        R"("es":1,"ts":1,"sql":"","sqlType":null,"mysqlType":{"a":"blob"},"old":null,)"
        R"("data":[{"a":"你"}]})"}) {
    EXPECT_EQ(DecodeCanalJsonMessage(bad).status().code(), Code::kCorruption) << bad;
  }
  event::DdlEvent ddl;
  EXPECT_EQ(DecodeCanalJsonRows(Encoder(false).EncodeDdl(ddl), "\r\n").status().code(),
            Code::kCorruption);
}

}  // namespace
}  // namespace sluice::sink::codec
