#include <gtest/gtest.h>

#include "codec/mysql_type.h"
#include "codec/mytime.h"
#include "event/events.h"
#include "event/value_format.h"

namespace sluice::event {
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

model::IndexInfo Index(std::string_view name, std::vector<std::string> cols, bool primary,
                       bool unique) {
  model::IndexInfo idx;
  idx.name = model::CIStr::From(name);
  idx.primary = primary;
  idx.unique = unique;
  idx.state = model::SchemaState::kPublic;
  for (const std::string& c : cols) idx.columns.push_back({model::CIStr::From(c), 0, 0});
  return idx;
}

TEST(TableSchemaTest, IntHandleIsTheKey) {
  model::TableInfo t;
  t.id = 10;
  t.name = model::CIStr::From("t");
  t.pk_is_handle = true;
  t.columns = {Col(1, "a", mt::kVarchar), Col(2, "id", mt::kLonglong, mf::kPriKey | mf::kNotNull)};
  auto s = TableSchema::Make("db", 2, t, Ts(5));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ((*s)->key_columns(), std::vector<int>{1});
  EXPECT_TRUE((*s)->specs()[1].is_handle);
  EXPECT_FALSE((*s)->specs()[0].is_handle);
  EXPECT_EQ((*s)->QuotedName(), "`db`.`t`");
  EXPECT_EQ((*s)->version(), Ts(5));
}

TEST(TableSchemaTest, CommonHandleOffsetsFollowThePrimaryIndex) {
  model::TableInfo t;
  t.id = 11;
  t.name = model::CIStr::From("c");
  t.is_common_handle = true;
  t.columns = {Col(1, "a", mt::kLonglong, mf::kNotNull), Col(2, "b", mt::kVarchar, mf::kNotNull),
               Col(3, "v", mt::kLong)};
  t.indices = {Index("primary", {"b", "a"}, true, true)};
  auto s = TableSchema::Make("db", 2, t, Ts(1));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)->key_columns(), (std::vector<int>{1, 0}));
  EXPECT_EQ((*s)->specs()[0].handle_offset, 1);
  EXPECT_EQ((*s)->specs()[1].handle_offset, 0);
  EXPECT_FALSE((*s)->specs()[2].is_handle);
}

TEST(TableSchemaTest, UniqueNotNullIndexOrNoKey) {
  model::TableInfo t;
  t.id = 12;
  t.name = model::CIStr::From("u");
  t.columns = {Col(1, "a", mt::kLong), Col(2, "b", mt::kLong, mf::kNotNull)};
  t.indices = {Index("ua", {"a"}, false, true), Index("ub", {"b"}, false, true)};
  auto s = TableSchema::Make("db", 2, t, Ts(1));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)->key_columns(), std::vector<int>{1});  // `a` may be NULL.
  t.indices.pop_back();
  s = TableSchema::Make("db", 2, t, Ts(1));
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE((*s)->has_key());
}

TEST(TableSchemaTest, SkipsNonPublicColumnsAndParsesDefaults) {
  model::TableInfo t;
  t.id = 13;
  t.name = model::CIStr::From("d");
  t.columns = {Col(1, "id", mt::kLonglong), Col(2, "n", mt::kLong), Col(3, "dt", mt::kDatetime),
               Col(4, "e", mt::kEnum), Col(5, "gone", mt::kLong)};
  t.columns[1].origin_default = "-7";
  t.columns[2].origin_default = "2024-02-29 10:11:12";
  t.columns[3].type.elems = {"x", "y"};
  t.columns[3].origin_default = "y";
  t.columns[4].state = model::SchemaState::kWriteOnly;
  auto s = TableSchema::Make("db", 2, t, Ts(1));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ((*s)->columns().size(), 4u);
  EXPECT_EQ((*s)->specs()[1].default_value.int64(), -7);
  EXPECT_EQ((*s)->specs()[3].default_value.uint64(), 2u);
  auto text = DatumText((*s)->specs()[2].default_value, (*s)->columns()[2]);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(**text, "2024-02-29 10:11:12");
}

TEST(TableSchemaTest, BadDefaultIsATypedError) {
  model::TableInfo t;
  t.id = 14;
  t.name = model::CIStr::From("bad");
  t.columns = {Col(1, "n", mt::kLong)};
  t.columns[0].origin_default = "seven";
  auto s = TableSchema::Make("db", 2, t, Ts(1));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), Code::kInvalidArgument);
  EXPECT_NE(s.status().message().find("column n"), std::string_view::npos);
  t.columns[0].state = model::SchemaState::kDeleteOnly;
  EXPECT_EQ(TableSchema::Make("db", 2, t, Ts(1)).status().code(), Code::kInvalidArgument);
}

TEST(ValueFormatTest, RendersEachKind) {
  auto text = [](const codec::Datum& d, const model::ColumnInfo& c) {
    auto r = DatumText(d, c);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() && r->has_value() ? **r : std::string("<null>");
  };
  model::ColumnInfo set_col = Col(1, "s", mt::kSet);
  set_col.type.elems = {"a", "b", "c"};
  EXPECT_EQ(text(codec::Datum::Set(0b101), set_col), "a,c");
  EXPECT_EQ(text(codec::Datum::Null(), set_col), "<null>");
  EXPECT_EQ(text(codec::Datum::Float64(0.1), Col(1, "f", mt::kDouble)), "0.1");
  EXPECT_EQ(text(codec::Datum::Float32(1.5f), Col(1, "f", mt::kFloat)), "1.5");
  EXPECT_EQ(text(codec::Datum::Int64(-3), Col(1, "i", mt::kLong)), "-3");
  EXPECT_EQ(text(codec::Datum::Duration(-3'723'000'000'000LL, 0), Col(1, "t", mt::kDuration)),
            "-01:02:03");
  std::string vec(4 + 8, '\0');
  uint32_t dim = 2;
  float f[2] = {1.0f, -2.5f};
  std::memcpy(vec.data(), &dim, 4);
  std::memcpy(vec.data() + 4, f, 8);
  EXPECT_EQ(text(codec::Datum::VectorFloat32View(vec), Col(1, "v", 225)), "[1,-2.5]");
  model::ColumnInfo e = Col(1, "e", mt::kEnum);
  e.type.elems = {"x"};
  EXPECT_FALSE(DatumText(codec::Datum::Enum(2), e).ok());
  EXPECT_FALSE(DatumText(codec::Datum::Json("\x01garbage"), Col(1, "j", mt::kJson)).ok());
}

TEST(DmlEventTest, PostFlushRunsOnceAndBytesCountPayloads) {
  DmlEvent ev;
  RowChange r;
  r.kind = RowKind::kUpdate;
  r.row = {codec::Datum::Int64(1), codec::Datum::Bytes("abcd")};
  r.pre_row = {codec::Datum::Int64(1), codec::Datum::Null()};
  ev.rows.push_back(r);
  EXPECT_EQ(ev.ApproximateBytes(), 8u + 4u + 8u);
  int calls = 0;
  ev.AddPostFlush([&] { ++calls; });
  ev.AddPostFlush([&] { ++calls; });
  ev.PostFlush();
  ev.PostFlush();
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(RowKindName(RowKind::kDelete), "delete");
}

}  // namespace
}  // namespace sluice::event
