#include <fmt/format.h>
#include <gtest/gtest.h>

#include "codec/mysql_type.h"
#include "sink/codec/csv_decoder.h"
#include "sink/codec/csv_encoder.h"
#include "sink/codec/test_tables.h"

namespace sluice::sink::codec {
namespace {

namespace mt = sluice::codec::mysql_type;
using sluice::codec::Datum;
using namespace sluice::sink::testing;  // NOLINT

// A table `test`.`name` with one column per type code in `types`
// (c1, c2, ...), no key.
event::TableSchemaPtr Table(std::string name, std::vector<uint8_t> types) {
  model::TableInfo t;
  t.id = 70;
  t.name = model::CIStr::From(name);
  for (size_t i = 0; i < types.size(); ++i) {
    t.columns.push_back(Column(static_cast<int64_t>(i + 1), fmt::format("c{}", i + 1), types[i]));
    t.columns.back().offset = static_cast<int64_t>(i);
  }
  auto s = event::TableSchema::Make("test", 2, std::move(t), Ts(1));
  EXPECT_TRUE(s.ok());
  return *s;
}

std::string Encode(const CsvConfig& config, const event::DmlEvent& e) {
  std::string out;
  Status st = CsvEncoder(config).Append(e, &out);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

CsvConfig Config(std::string delimiter, std::string quote, std::string terminator, bool commit_ts) {
  CsvConfig c;
  c.delimiter = std::move(delimiter);
  c.quote = std::move(quote);
  c.terminator = std::move(terminator);
  c.include_commit_ts = commit_ts;
  return c;
}

constexpr Ts kTs(435661838416609281);

// TiCDC docs (ticdc-csv.md, "Definition of the data format"): hr.employee
// with terminator "\n" and include-commit-ts = true.
TEST(CsvEncoderTest, MatchesTiCdcDocsExample) {
  auto schema = EmployeeSchema();
  CsvConfig config = Config(",", "\"", "\n", true);
  std::string out;
  CsvEncoder enc(config);
  auto add = [&](Ts ts, event::RowChange row) {
    ASSERT_TRUE(enc.Append(*Dml(schema, ts, {std::move(row)}), &out).ok());
  };
  add(Ts(433305438660591626), Insert(EmployeeRow(101, "Smith", "Bob", "2014-06-04", "New York")));
  add(Ts(433305438660591627),
      Update(EmployeeRow(101, "Smith", "Bob", "2014-06-04", "New York"),
             EmployeeRow(101, "Smith", "Bob", "2015-10-08", "Los Angeles")));
  add(Ts(433305438660591629), Delete(EmployeeRow(101, "Smith", "Bob", "2017-03-13", "Dallas")));
  add(Ts(433305438660591630), Insert(EmployeeRow(102, "Alex", "Alice", "2017-03-14", "Shanghai")));
  add(Ts(433305438660591630), Update(EmployeeRow(102, "Alex", "Alice", "2017-03-14", "Shanghai"),
                                     EmployeeRow(102, "Alex", "Alice", "2018-06-15", "Beijing")));
  EXPECT_EQ(out,
            "\"I\",\"employee\",\"hr\",433305438660591626,101,\"Smith\",\"Bob\",\"2014-06-04\","
            "\"New York\"\n"
            "\"U\",\"employee\",\"hr\",433305438660591627,101,\"Smith\",\"Bob\",\"2015-10-08\","
            "\"Los Angeles\"\n"
            "\"D\",\"employee\",\"hr\",433305438660591629,101,\"Smith\",\"Bob\",\"2017-03-13\","
            "\"Dallas\"\n"
            "\"I\",\"employee\",\"hr\",433305438660591630,102,\"Alex\",\"Alice\",\"2017-03-14\","
            "\"Shanghai\"\n"
            "\"U\",\"employee\",\"hr\",433305438660591630,102,\"Alex\",\"Alice\",\"2018-06-15\","
            "\"Beijing\"\n");
}

// The cases of TiCDC's pkg/sink/codec/csv/csv_message_test.go
// (TestCSVMessageEncode), built from tables of matching column types.
TEST(CsvEncoderTest, MatchesTiCdcMessageTests) {
  auto t1 = Table("table1", {mt::kLong, mt::kVarchar});
  EXPECT_EQ(Encode(Config(",", "\"", "\n", true),
                   *Dml(t1, kTs, {Insert({Datum::Int64(123), Str("hello,world")})})),
            "\"I\",\"table1\",\"test\",435661838416609281,123,\"hello,world\"\n");

  auto t2 = Table("table2", {mt::kVarchar, mt::kVarchar});
  EXPECT_EQ(Encode(Config("!", "", "\n", true),
                   *Dml(t2, kTs, {Update({Str("x"), Str("y")}, {Str("a!b!c"), Str("def")})})),
            "U!table2!test!435661838416609281!a\\!b\\!c!def\n");
  CsvConfig old_value = Config("!", "", "\n", true);
  old_value.output_old_value = true;
  EXPECT_EQ(Encode(old_value, *Dml(t2, kTs, {Insert({Str("a!b!c"), Str("def")})})),
            "I!table2!test!435661838416609281!false!a\\!b\\!c!def\n");

  auto t3 = Table("table3", {mt::kVarchar, mt::kVarchar, mt::kDatetime});
  EXPECT_EQ(Encode(Config(",", "\"", "\n", true),
                   *Dml(t3, kTs,
                        {Update({Str("a,b,c"), Str("def"), Datum()},
                                {Str("a,b,c"), Str("def"),
                                 DateTime("2022-08-31 17:07:00", mt::kDatetime, 0)})})),
            "\"U\",\"table3\",\"test\",435661838416609281,\"a,b,c\",\"def\",\"2022-08-31 "
            "17:07:00\"\n");

  auto t4 = Table("table4", {mt::kVarchar, mt::kVarchar});
  EXPECT_EQ(Encode(Config("[*]", "", "\r\n", false),
                   *Dml(t4, kTs, {Delete({Str("a[*]b[*]c"), Str("def")})})),
            "D[*]table4[*]test[*]a\\[\\*\\]b\\[\\*\\]c[*]def\r\n");

  auto t5 = Table("table5", {mt::kVarchar, mt::kVarchar, mt::kVarchar, mt::kDouble});
  EXPECT_EQ(
      Encode(Config("[*]", "'", "\n", false),
             *Dml(t5, kTs,
                  {Insert({Str("a[*]b[*]c"), Str("def"), Datum(), Datum::Float64(12345.678)})})),
      "'I'[*]'table5'[*]'test'[*]'a[*]b[*]c'[*]'def'[*]\\N[*]12345.678\n");

  auto t6 = Table("table6", {mt::kVarchar, mt::kVarchar});
  EXPECT_EQ(Encode(Config(",", "", "\n", true),
                   *Dml(t6, kTs, {Update({Str(""), Str("")}, {Str("a\\b\\c"), Str("def\n")})})),
            "U,table6,test,435661838416609281,a\\\\b\\\\c,def\\n\n");

  auto t7 = Table("table7", {mt::kVarchar, mt::kVarchar, mt::kVarchar});
  EXPECT_EQ(Encode(Config(",", "'", "\n", false),
                   *Dml(t7, kTs, {Insert({Str("\\"), Str("\\\r"), Str("\\\\")})})),
            "'I','table7','test','\\','\\\r','\\\\'\n");

  auto t8 = Table("table8", {mt::kVarchar, mt::kDouble, mt::kVarchar});
  EXPECT_EQ(
      Encode(Config("\t", "\"", "\n", true),
             *Dml(t8, kTs, {Delete({Str("a\tb"), Datum::Float64(123.456), Str("你好，世界")})})),
      "\"D\"\t\"table8\"\t\"test\"\t435661838416609281\t\"a\tb\"\t123.456\t\"你好，世界\"\n");
}

// Every column type, with TiCDC's defaults (quote ", CRLF, base64) and
// include-commit-ts. Values as fromColValToCsvVal renders them: numbers
// bare (floats in Go's %v form), everything else as quoted strings.
TEST(CsvEncoderTest, EveryColumnType) {
  CsvConfig config;
  config.include_commit_ts = true;
  auto schema = AllTypesSchema();
  const std::string prefix = "\"I\",\"all_types\",\"db\",433305438660591626,";
  EXPECT_EQ(Encode(config, *Dml(schema, Ts(433305438660591626), {Insert(AllTypesRow(1))})),
            prefix +
                "1,-128,255,32767,8388607,2147483647,9223372036854775807,18446744073709551615,"
                "3.14,1e+06,\"123.4560\",\"abc\",\"a,\"\"b\"\"\r\nc\",\"你好, <world> & more\","
                "\"BQcKDyQyK2N4PCb//i03Rg==\",\"AAGA\",\"aGVsbG8gd29ybGQ=\",\"2014-06-04\","
                "\"2015-12-20 23:58:58.123\",\"1973-12-30 15:30:00\",\"-838:59:59.50\",1970,"
                "\"b\",\"a,c\",683,\"{\"\"key\"\": \"\"value\"\", \"\"n\"\": [1, 2]}\","
                "\"[1,2.5,-3]\"\r\n");
  std::string nulls;
  for (int i = 0; i < 26; ++i) nulls += ",\\N";
  EXPECT_EQ(Encode(config, *Dml(schema, Ts(433305438660591626), {Delete(AllTypesNullRow(2))})),
            "\"D\",\"all_types\",\"db\",433305438660591626,2" + nulls + "\r\n");
  config.binary_encoding = BinaryEncoding::kHex;
  std::string hex = Encode(config, *Dml(schema, Ts(1), {Insert(AllTypesRow(1))}));
  EXPECT_NE(
      hex.find(",\"05070a0f24322b63783c26fffe2d3746\",\"000180\",\"68656c6c6f20776f726c64\","),
      std::string::npos)
      << hex;
}

TEST(CsvEncoderTest, UpdateWithOldValueIsDeleteThenInsert) {
  CsvConfig config = Config(",", "\"", "\n", false);
  config.output_old_value = true;
  auto e = Dml(KvSchema("db", "kv", 5), Ts(9), {Update(KvRow(1, "old"), KvRow(1, "new"))});
  EXPECT_EQ(Encode(config, *e),
            "\"D\",\"kv\",\"db\",true,1,\"old\"\n\"I\",\"kv\",\"db\",true,1,\"new\"\n");
}

TEST(CsvEncoderTest, HeaderAndGeneratedColumns) {
  model::TableInfo t;
  t.id = 71;
  t.name = model::CIStr::From("g");
  t.columns = {Column(1, "a", mt::kLong), Column(2, "b", mt::kLong), Column(3, "c", mt::kLong)};
  t.columns[1].generated_expr_string = "`a` + 1";  // Virtual: not written.
  t.columns[2].generated_expr_string = "`a` + 2";
  t.columns[2].generated_stored = true;
  for (int i = 0; i < 3; ++i) t.columns[i].offset = i;
  auto schema = event::TableSchema::Make("test", 2, std::move(t), Ts(1));
  ASSERT_TRUE(schema.ok());
  CsvConfig config = Config("|", "\"", "\n", true);
  config.output_old_value = true;
  config.output_field_header = true;
  CsvEncoder enc(config);
  EXPECT_EQ(enc.FileHeader(**schema),
            "ticdc-meta$operation|ticdc-meta$table|ticdc-meta$schema|ticdc-meta$commit-ts|"
            "ticdc-meta$is-update|a|c\n");
  EXPECT_EQ(Encode(config, *Dml(*schema, Ts(7),
                                {Insert({Datum::Int64(1), Datum::Int64(2), Datum::Int64(3)})})),
            "\"I\"|\"g\"|\"test\"|7|false|1|3\n");
}

TEST(CsvEncoderTest, MismatchedRowIsAnErrorAndLeavesOutputAlone) {
  auto e = Dml(KvSchema("db", "kv", 5), Ts(9), {Insert(KvRow(1, "a")), Insert({Datum::Int64(2)})});
  std::string out = "keep";
  EXPECT_EQ(CsvEncoder(CsvConfig()).Append(*e, &out).code(), Code::kInternal);
  EXPECT_EQ(out, "keep");
}

TEST(CsvConfigTest, ValidatesLikeTiCdc) {
  EXPECT_TRUE(CsvConfig().Validate().ok());
  EXPECT_FALSE(Config("", "\"", "\n", false).Validate().ok());
  EXPECT_FALSE(Config("abcd", "\"", "\n", false).Validate().ok());
  EXPECT_FALSE(Config("a\nb", "\"", "\n", false).Validate().ok());
  EXPECT_FALSE(Config(",", "''", "\n", false).Validate().ok());
  EXPECT_FALSE(Config("'|", "'", "\n", false).Validate().ok());
  EXPECT_TRUE(Config("|@|", "", "\n", false).Validate().ok());
  EXPECT_EQ(ParseBinaryEncoding("hex").value(), BinaryEncoding::kHex);
  EXPECT_FALSE(ParseBinaryEncoding("raw").ok());
}

std::vector<CsvColumn> AllTypesColumns() {
  std::vector<CsvColumn> cols;
  auto schema = AllTypesSchema();
  for (const auto& c : schema->columns()) {
    cols.push_back({c.name.original, IsBinaryString(c) && c.type.tp != mt::kBit});
  }
  return cols;
}

TEST(CsvDecoderTest, RoundTripsEveryConfiguration) {
  auto schema = AllTypesSchema();
  std::vector<CsvConfig> configs = {CsvConfig(), Config("|@|", "", "\n", true),
                                    Config("\t", "'", "\r\n", true)};
  configs[1].binary_encoding = BinaryEncoding::kHex;
  configs[2].output_old_value = true;
  configs[2].output_field_header = true;
  for (const CsvConfig& config : configs) {
    CsvEncoder enc(config);
    auto e = Dml(schema, Ts(1234),
                 {Insert(AllTypesRow(1)), Update(AllTypesRow(1), AllTypesNullRow(1)),
                  Delete(AllTypesNullRow(1))});
    std::string data = enc.FileHeader(*schema);
    ASSERT_TRUE(enc.Append(*e, &data).ok());
    auto rows = DecodeCsv(data, config, AllTypesColumns());
    ASSERT_TRUE(rows.ok()) << rows.status().ToString() << "\n" << data;
    ASSERT_EQ(rows->size(), config.output_old_value ? 4u : 3u);
    const DecodedRow& first = (*rows)[0];
    EXPECT_EQ(first.op, RowOp::kInsert);
    EXPECT_EQ(first.schema, "db");
    EXPECT_EQ(first.table, "all_types");
    EXPECT_EQ(first.commit_ts, config.include_commit_ts ? 1234u : 0u);
    ASSERT_EQ(first.columns.size(), 27u);
    EXPECT_EQ(first.columns[12].value, "a,\"b\"\r\nc");
    EXPECT_EQ(first.columns[14].value, std::string("\x05\x07\n\x0f$2+cx<&\xff\xfe-7F", 16));
    EXPECT_EQ(first.columns[15].value, std::string("\x00\x01\x80", 3));
    EXPECT_EQ(first.columns[23].value, "a,c");
    EXPECT_EQ(first.columns[25].value, "{\"key\": \"value\", \"n\": [1, 2]}");
    const DecodedRow& last = rows->back();
    EXPECT_EQ(last.op, RowOp::kDelete);
    EXPECT_EQ(last.columns[0].value, "1");
    for (size_t i = 1; i < 27; ++i) EXPECT_EQ(last.columns[i].value, std::nullopt) << i;
    if (config.output_old_value) {
      EXPECT_EQ((*rows)[1].op, RowOp::kDelete);
      EXPECT_TRUE((*rows)[1].is_update);
      EXPECT_EQ((*rows)[2].op, RowOp::kInsert);
      EXPECT_TRUE((*rows)[2].is_update);
    } else {
      EXPECT_EQ((*rows)[1].op, RowOp::kUpdate);
    }
  }
}

TEST(CsvDecoderTest, BadInputIsCorruption) {
  CsvConfig config;
  std::vector<CsvColumn> cols = {{"id", false}, {"v", false}};
  EXPECT_EQ(DecodeCsv("\"I\",\"t\",\"d\",1,\"unterminated\r\n", config, cols).status().code(),
            Code::kCorruption);
  EXPECT_EQ(DecodeCsv("\"X\",\"t\",\"d\",1,\"v\"\r\n", config, cols).status().code(),
            Code::kCorruption);
  EXPECT_EQ(DecodeCsv("\"I\",\"t\",\"d\",1\r\n", config, cols).status().code(), Code::kCorruption);
  EXPECT_EQ(DecodeCsv("\"I\"x,\"t\",\"d\",1,2\r\n", config, cols).status().code(),
            Code::kCorruption);
  config.include_commit_ts = true;
  EXPECT_EQ(DecodeCsv("\"I\",\"t\",\"d\",ts,1,2\r\n", config, cols).status().code(),
            Code::kCorruption);
  std::vector<CsvColumn> bin = {{"id", false}, {"b", true}};
  EXPECT_EQ(DecodeCsv("\"I\",\"t\",\"d\",1,1,\"!!\"\r\n", config, bin).status().code(),
            Code::kCorruption);
  auto ok = DecodeCsv("\"I\",\"t\",\"d\",1,1,\\N\r\n\"D\",\"t\",\"d\",2,1,\"\\N\"", config, cols);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ((*ok)[0].columns[1].value, std::nullopt);
  EXPECT_EQ((*ok)[1].columns[1].value, "\\N");  // Quoted: a string, not NULL.
  EXPECT_TRUE(DecodeCsv("", config, cols)->empty());
}

}  // namespace
}  // namespace sluice::sink::codec
