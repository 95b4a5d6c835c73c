#include "codec/model/table_info.h"

#include <gtest/gtest.h>

#include "codec/model/db_info.h"
#include "codec/model/test_documents.h"

namespace sluice::model {
namespace {

namespace docs = testdocs;

TableInfo MustParseTable(const std::string& json) {
  auto table = ParseTableInfo(json);
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  return table.ok() ? *table : TableInfo{};
}

// Parses, applies `mutate` to the DOM, and parses the result again.
Status ParseMutated(const std::string& json, void (*mutate)(JsonValue&)) {
  JsonValue doc = JsonValue::parse(json);
  mutate(doc);
  return ParseTableInfo(doc.dump()).status();
}

TEST(TableInfoTest, ParsesTableLevelFields) {
  const TableInfo t = MustParseTable(docs::OrdersTable());
  EXPECT_EQ(t.id, 110);
  EXPECT_EQ(t.name, (CIStr{"Orders", "orders"}));
  EXPECT_EQ(t.charset, "utf8mb4");
  EXPECT_EQ(t.collate, "utf8mb4_bin");
  EXPECT_EQ(t.state, SchemaState::kPublic);
  EXPECT_TRUE(t.pk_is_handle);
  EXPECT_FALSE(t.is_common_handle);
  EXPECT_EQ(t.comment, "orders < 1M rows");
  EXPECT_EQ(t.auto_inc_id, 30001);
  EXPECT_EQ(t.max_col_id, 6);
  EXPECT_EQ(t.max_idx_id, 2);
  EXPECT_EQ(t.update_timestamp, 449883219036004357ULL);
  EXPECT_EQ(t.version, 5);
  EXPECT_EQ(t.revision, 1u);
  EXPECT_FALSE(t.partition.has_value());
  EXPECT_FALSE(t.IsView());
  EXPECT_FALSE(t.IsSequence());
  ASSERT_EQ(t.columns.size(), 6u);
  ASSERT_EQ(t.indices.size(), 2u);
}

TEST(TableInfoTest, ParsesColumnTypesDefaultsAndGeneratedColumns) {
  const TableInfo t = MustParseTable(docs::OrdersTable());
  const ColumnInfo& id = t.columns[0];
  EXPECT_EQ(id.type.tp, mysql_type::kLonglong);
  EXPECT_EQ(id.type.flag, mysql_flag::kNotNull | mysql_flag::kPriKey | mysql_flag::kAutoIncrement);
  EXPECT_EQ(id.type.flen, 20);
  EXPECT_EQ(id.type.charset, "binary");
  EXPECT_TRUE(id.origin_default.is_null());
  EXPECT_FALSE(id.OriginDefaultBytes().has_value());
  EXPECT_EQ(id.version, 2u);

  const ColumnInfo& customer = t.columns[1];
  EXPECT_EQ(customer.name, (CIStr{"Customer", "customer"}));
  EXPECT_EQ(customer.offset, 1);
  EXPECT_EQ(customer.type.tp, mysql_type::kVarchar);
  EXPECT_EQ(customer.default_value, JsonValue("anon"));
  EXPECT_EQ(customer.type.collate, "utf8mb4_bin");

  const ColumnInfo& status = t.columns[2];
  EXPECT_EQ(status.type.tp, mysql_type::kEnum);
  EXPECT_EQ(status.type.elems, (std::vector<std::string>{"new", "paid"}));

  const ColumnInfo& flags = t.columns[4];
  EXPECT_EQ(flags.type.tp, mysql_type::kBit);
  EXPECT_TRUE(flags.type.HasFlag(mysql_flag::kUnsigned));
  EXPECT_EQ(flags.origin_default_bit, std::optional<std::string>("\x05"));
  EXPECT_EQ(flags.default_bit, std::optional<std::string>("\x05"));
  EXPECT_EQ(flags.default_value, JsonValue("\x05"));
  EXPECT_EQ(flags.OriginDefaultBytes(), std::optional<std::string>("\x05"));

  const ColumnInfo& total = t.columns[5];
  EXPECT_EQ(total.type.tp, mysql_type::kNewDecimal);
  EXPECT_EQ(total.type.decimal, 2);
  EXPECT_EQ(total.generated_expr_string, "`amount` * 2");
  EXPECT_TRUE(total.IsVirtualGenerated());
  EXPECT_EQ(total.dependences, (std::vector<std::string>{"amount"}));
  for (const auto& column : t.columns) EXPECT_TRUE(column.IsPublic()) << column.name.original;
}

TEST(TableInfoTest, ParsesIndexes) {
  const TableInfo t = MustParseTable(docs::OrdersTable());
  const IndexInfo& uk = t.indices[0];
  EXPECT_EQ(uk.id, 1);
  EXPECT_EQ(uk.name.lower, "uk_customer");
  EXPECT_TRUE(uk.unique);
  EXPECT_FALSE(uk.primary);
  EXPECT_EQ(uk.tp, IndexType::kBtree);
  EXPECT_EQ(uk.state, SchemaState::kPublic);
  ASSERT_EQ(uk.columns.size(), 1u);
  EXPECT_EQ(uk.columns[0].name.lower, "customer");
  EXPECT_EQ(uk.columns[0].offset, 1);
  EXPECT_EQ(uk.columns[0].length, 10);
  const IndexInfo& composite = t.indices[1];
  ASSERT_EQ(composite.columns.size(), 2u);
  EXPECT_EQ(composite.columns[1].name.lower, "amount");
  EXPECT_EQ(composite.columns[1].length, kUnspecifiedLength);
  EXPECT_FALSE(composite.unique);
}

TEST(TableInfoTest, EmitsTiDBBytes) {
  for (const std::string& doc : {docs::OrdersTable(), docs::EventsTable()}) {
    const TableInfo t = MustParseTable(doc);
    EXPECT_EQ(ToJson(t), doc);
    EXPECT_EQ(MustParseTable(ToJson(t)), t);
  }
}

TEST(TableInfoTest, LooksUpColumnsAndIndexesCaseInsensitively) {
  const TableInfo t = MustParseTable(docs::OrdersTable());
  ASSERT_NE(t.GetPkHandleColumn(), nullptr);
  EXPECT_EQ(t.GetPkHandleColumn()->id, 1);
  EXPECT_EQ(t.GetPrimaryIndex(), nullptr);  // An int handle has no stored PRIMARY index.
  ASSERT_NE(t.FindColumnByName("CUSTOMER"), nullptr);
  EXPECT_EQ(t.FindColumnByName("CUSTOMER")->id, 2);
  EXPECT_EQ(t.FindColumnByName("nope"), nullptr);
  ASSERT_NE(t.FindColumnById(5), nullptr);
  EXPECT_EQ(t.FindColumnById(5)->name.original, "flags");
  EXPECT_EQ(t.FindColumnById(99), nullptr);
  ASSERT_NE(t.FindIndexByName("UK_Customer"), nullptr);
  EXPECT_EQ(t.FindIndexByName("UK_Customer")->id, 1);
  EXPECT_EQ(t.FindIndexById(2)->name.original, "idx_status_amount");
  EXPECT_FALSE(t.IsCommonHandle());
  EXPECT_EQ(t.PhysicalTableIds(), (std::vector<int64_t>{110}));
}

TEST(TableInfoTest, CommonHandlePartitionedTable) {
  const TableInfo t = MustParseTable(docs::EventsTable());
  EXPECT_TRUE(t.IsCommonHandle());
  EXPECT_EQ(t.common_handle_version, 1);
  EXPECT_EQ(t.GetPkHandleColumn(), nullptr);
  ASSERT_NE(t.GetPrimaryIndex(), nullptr);
  EXPECT_EQ(t.GetPrimaryIndex()->columns.size(), 2u);
  ASSERT_TRUE(t.IsPartitioned());
  const PartitionInfo& p = *t.partition;
  EXPECT_EQ(p.type, PartitionType::kRange);
  EXPECT_EQ(p.expr, "`ts`");
  EXPECT_TRUE(p.columns.empty());
  ASSERT_EQ(p.definitions.size(), 2u);
  EXPECT_EQ(p.definitions[0].name, (CIStr{"p0", "p0"}));
  EXPECT_EQ(p.definitions[0].less_than, (std::vector<std::string>{"100"}));
  EXPECT_EQ(p.definitions[1].less_than, (std::vector<std::string>{"1000"}));
  EXPECT_EQ(p.FindDefinition(202), &p.definitions[1]);
  EXPECT_EQ(t.PhysicalTableIds(), (std::vector<int64_t>{201, 202}));
}

TEST(TableInfoTest, DisabledPartitioningKeepsOnePhysicalTable) {
  testdocs::PartitionDoc p;
  p.enable = false;
  p.definitions = {testdocs::RangeDef(301, "p0", "10")};
  testdocs::TableDoc doc;
  doc.id = 300;
  doc.partition = testdocs::Partition(p);
  const TableInfo t = MustParseTable(testdocs::Table(doc));
  ASSERT_TRUE(t.partition.has_value());
  EXPECT_FALSE(t.IsPartitioned());
  EXPECT_EQ(t.PhysicalTableIds(), (std::vector<int64_t>{300}));
}

TEST(TableInfoTest, ListPartitionValuesAndCommentsSurviveRoundTrip) {
  testdocs::PartitionDoc p;
  p.type = 3;
  p.expr = "`region`";
  p.definitions = {testdocs::PartitionDefDoc{401, "pEast", "null", R"([["1"],["2"]])", "east"},
                   testdocs::PartitionDefDoc{402, "pWest", "null", R"([["3"]])", ""}};
  testdocs::TableDoc table;
  table.id = 400;
  table.partition = testdocs::Partition(p);
  const std::string doc = testdocs::Table(table);
  const TableInfo t = MustParseTable(doc);
  ASSERT_TRUE(t.IsPartitioned());
  EXPECT_EQ(t.partition->type, PartitionType::kList);
  EXPECT_EQ(t.partition->definitions[0].in_values,
            (std::vector<std::vector<std::string>>{{"1"}, {"2"}}));
  EXPECT_EQ(t.partition->definitions[0].comment, "east");
  EXPECT_EQ(t.partition->definitions[1].name.lower, "pwest");
  EXPECT_EQ(ToJson(t), doc);
}

TEST(TableInfoTest, ToleratesUnknownKeysOtherCaseAndBareStringNames) {
  const std::string doc = R"({"ID":7,"Name":"Legacy","cols":[{"id":1,"name":{"O":"A","L":"a"},
      "offset":0,"type":{"Tp":3,"Flen":11},"future_field":[1,2]}],"affinity":{"level":"s"},
      "partition":{"type":2,"enable":true,"definitions":[{"id":8,"name":"P0"}]}})";
  const TableInfo t = MustParseTable(doc);
  EXPECT_EQ(t.id, 7);
  EXPECT_EQ(t.name, (CIStr{"Legacy", "legacy"}));
  ASSERT_EQ(t.columns.size(), 1u);
  EXPECT_EQ(t.columns[0].type.flen, 11);
  EXPECT_EQ(t.columns[0].state, SchemaState::kNone);
  EXPECT_EQ(t.partition->definitions[0].name, (CIStr{"P0", "p0"}));
  EXPECT_EQ(t.columns[0].name, (CIStr{"A", "a"}));
  EXPECT_EQ(t.PhysicalTableIds(), (std::vector<int64_t>{8}));
}

TEST(TableInfoTest, MissingLowerNameIsDerivedButPresentOneIsKept) {
  const TableInfo t = MustParseTable(
      R"({"id":1,"name":{"O":"MiXed"},"cols":[{"id":1,"name":{"O":"C","L":"custom"},"type":{"Tp":3}}]})");
  EXPECT_EQ(t.name, (CIStr{"MiXed", "mixed"}));
  EXPECT_EQ(t.columns[0].name.lower, "custom");
  EXPECT_NE(t.FindColumnByName("custom"), nullptr);
  EXPECT_EQ(t.FindColumnByName("c"), nullptr);
}

TEST(TableInfoTest, NullMembersReadAsZeroValues) {
  const TableInfo t = MustParseTable(
      R"({"id":1,"name":{"O":"t","L":"t"},"cols":null,"comment":null,"pk_is_handle":null})");
  EXPECT_TRUE(t.columns.empty());
  EXPECT_EQ(t.comment, "");
  EXPECT_FALSE(t.pk_is_handle);
}

TEST(TableInfoTest, WrongTypesAndMissingKeysAreCorruption) {
  const std::string doc = docs::OrdersTable();
  const std::vector<std::pair<void (*)(JsonValue&), std::string>> cases = {
      {[](JsonValue& d) { d["id"] = "abc"; }, "table.id"},
      {[](JsonValue& d) { d["id"] = 1.5; }, "table.id"},
      {[](JsonValue& d) { d.erase("id"); }, "table.id"},
      {[](JsonValue& d) { d["name"] = 5; }, "table.name"},
      {[](JsonValue& d) { d["cols"] = JsonValue::object(); }, "table.cols"},
      {[](JsonValue& d) { d["cols"][0]["type"]["Flen"] = "20"; }, "table.cols[0].type.Flen"},
      {[](JsonValue& d) { d["cols"][2].erase("type"); }, "table.cols[2].type"},
      {[](JsonValue& d) { d["cols"][4]["default_bit"] = "B$=="; }, "table.cols[4].default_bit"},
      {[](JsonValue& d) { d["index_info"][1]["idx_cols"][0]["offset"] = true; },
       "table.index_info[1].idx_cols[0].offset"},
      {[](JsonValue& d) { d["state"] = 256; }, "table.state"},
      {[](JsonValue& d) { d["pk_is_handle"] = 1; }, "table.pk_is_handle"},
      {[](JsonValue& d) { d["update_timestamp"] = -1; }, "table.update_timestamp"},
      {[](JsonValue& d) { d["partition"] = JsonValue::array(); }, "table.partition"},
  };
  for (const auto& [mutate, path] : cases) {
    const Status status = ParseMutated(doc, mutate);
    EXPECT_EQ(status.code(), Code::kCorruption) << path;
    EXPECT_NE(status.message().find(path), std::string_view::npos) << status.ToString();
  }
}

TEST(DBInfoTest, ParsesAndEmitsTiDBBytes) {
  const std::string doc = testdocs::DB(testdocs::DBDoc{100, "Shop", 5});
  auto db = ParseDBInfo(doc);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_EQ(db->id, 100);
  EXPECT_EQ(db->name, (CIStr{"Shop", "shop"}));
  EXPECT_EQ(db->charset, "utf8mb4");
  EXPECT_EQ(db->collate, "utf8mb4_bin");
  EXPECT_EQ(db->state, SchemaState::kPublic);
  EXPECT_TRUE(db->policy_ref_info.is_null());
  EXPECT_EQ(ToJson(*db), doc);
}

TEST(DBInfoTest, AcceptsOlderShapeWithoutNewerKeys) {
  auto db = ParseDBInfo(R"({"id":3,"db_name":{"O":"test","L":"test"},"charset":"utf8mb4",
      "collate":"utf8mb4_bin","state":5})");
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_EQ(db->name.lower, "test");
  EXPECT_FALSE(db->read_only);
}

TEST(DBInfoTest, MissingNameOrBadJsonIsCorruption) {
  EXPECT_EQ(ParseDBInfo(R"({"id":3})").status().code(), Code::kCorruption);
  EXPECT_EQ(ParseDBInfo(R"({"db_name":"x"})").status().code(), Code::kCorruption);
  EXPECT_EQ(ParseDBInfo(R"({"id":3,"db_name":)").status().code(), Code::kCorruption);
  EXPECT_EQ(ParseDBInfo("[]").status().code(), Code::kCorruption);
}

}  // namespace
}  // namespace sluice::model
