#include "eventservice/mounter.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "eventservice/test_helpers.h"

namespace sluice::eventservice {
namespace {

using codec::Datum;
using testing::Col;
using testing::Del;
using testing::Index;
using testing::IntHandleSchema;
using testing::Put;
using testing::RowValue;
namespace mt = codec::mysql_type;
namespace mf = codec::mysql_flag;

constexpr int64_t kTable = 100;

std::vector<Datum> Row(int64_t id, std::string name, int64_t v) {
  return {Datum::Int64(id), Datum::Bytes(std::move(name)), Datum::Int64(v)};
}

void ExpectOwned(const std::vector<Datum>& row) {
  for (const Datum& d : row) {
    if (d.kind() == codec::DatumKind::kBytes) {
      EXPECT_TRUE(d.owns_bytes());
    }
  }
}

TEST(MounterTest, InsertWithIntHandle) {
  auto schema = IntHandleSchema(kTable, Ts(1));
  RawKvEntry e = Put(kTable, 7, RowValue("alice", 5), 20, 10);
  auto rc = MountRow(e, *schema, kTable);
  ASSERT_TRUE(rc.ok()) << rc.status().ToString();
  EXPECT_EQ(rc->kind, event::RowKind::kInsert);
  EXPECT_EQ(rc->row, Row(7, "alice", 5));
  EXPECT_TRUE(rc->pre_row.empty());
  EXPECT_EQ(rc->raw_key, e.key);
  ExpectOwned(rc->row);
}

TEST(MounterTest, DatumsOutliveTheRawEntry) {
  auto schema = IntHandleSchema(kTable, Ts(1));
  Result<event::RowChange> rc = NotFound("unset");
  {
    RawKvEntry e = Put(kTable, 7, RowValue("a-string-longer-than-sso-buffers", 5), 20, 10);
    rc = MountRow(e, *schema, kTable);
    std::fill(e.value.begin(), e.value.end(), 'Z');
  }
  ASSERT_TRUE(rc.ok());
  EXPECT_EQ(rc->row[1], Datum::Bytes("a-string-longer-than-sso-buffers"));
}

TEST(MounterTest, UpdateDecodesBothImages) {
  auto schema = IntHandleSchema(kTable, Ts(1));
  auto rc =
      MountRow(Put(kTable, 7, RowValue("new", 6), 20, 10, RowValue("old", 5)), *schema, kTable);
  ASSERT_TRUE(rc.ok()) << rc.status().ToString();
  EXPECT_EQ(rc->kind, event::RowKind::kUpdate);
  EXPECT_EQ(rc->pre_row, Row(7, "old", 5));
  EXPECT_EQ(rc->row, Row(7, "new", 6));
  ExpectOwned(rc->pre_row);
}

TEST(MounterTest, DeleteWithAndWithoutOldValue) {
  auto schema = IntHandleSchema(kTable, Ts(1));
  auto rc = MountRow(Del(kTable, 7, RowValue("gone", 5), 20, 10), *schema, kTable);
  ASSERT_TRUE(rc.ok()) << rc.status().ToString();
  EXPECT_EQ(rc->kind, event::RowKind::kDelete);
  EXPECT_EQ(rc->pre_row, Row(7, "gone", 5));
  EXPECT_TRUE(rc->row.empty());

  // Without an old value only the handle is known.
  rc = MountRow(Del(kTable, 9, "", 20, 10), *schema, kTable);
  ASSERT_TRUE(rc.ok()) << rc.status().ToString();
  EXPECT_EQ(rc->pre_row, (std::vector<Datum>{Datum::Int64(9), Datum::Null(), Datum::Null()}));
}

TEST(MounterTest, CommonHandleColumnsComeFromTheKey) {
  model::TableInfo t;
  t.id = kTable;
  t.name = model::CIStr::From("c");
  t.is_common_handle = true;
  t.columns = {Col(1, "a", mt::kLonglong, mf::kNotNull | mf::kPriKey),
               Col(2, "b", mt::kLong, mf::kNotNull | mf::kPriKey), Col(3, "v", mt::kVarchar)};
  t.indices = {Index("primary", {"a", "b"}, true, true)};
  auto schema = event::TableSchema::Make("db", 1, t, Ts(1));
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();

  std::string handle;
  ASSERT_TRUE(codec::EncodeKeyDatums({Datum::Int64(-3), Datum::Int64(11)}, &handle).ok());
  std::string value;
  std::vector<int64_t> ids = {3};
  std::vector<Datum> vals = {Datum::Bytes("payload")};
  ASSERT_TRUE(codec::EncodeRowV2(ids, vals, &value).ok());
  RawKvEntry e = Put(kTable, 0, value, 30, 20);
  e.key = codec::EncodeRowKeyWithCommonHandle(TableId(kTable), handle);

  auto rc = MountRow(e, **schema, kTable);
  ASSERT_TRUE(rc.ok()) << rc.status().ToString();
  EXPECT_EQ(rc->row,
            (std::vector<Datum>{Datum::Int64(-3), Datum::Int64(11), Datum::Bytes("payload")}));
  EXPECT_EQ(UniqueKeyColumns(**schema), (std::vector<int>{0, 1}));
}

TEST(MounterTest, ColumnsMissingFromTheRowTakeTheirDefault) {
  auto schema = IntHandleSchema(kTable, Ts(1), /*with_extra=*/true);
  auto rc = MountRow(Put(kTable, 1, RowValue("x", 2), 20, 10), *schema, kTable);
  ASSERT_TRUE(rc.ok()) << rc.status().ToString();
  ASSERT_EQ(rc->row.size(), 4u);
  EXPECT_EQ(rc->row[3], Datum::Int64(42));
}

TEST(MounterTest, RowFormatV1) {
  auto schema = IntHandleSchema(kTable, Ts(1));
  std::string value;
  std::vector<int64_t> ids = {3, 2};
  std::vector<Datum> vals = {Datum::Int64(-8), Datum::Bytes("v1row")};
  ASSERT_TRUE(codec::EncodeRowV1(ids, vals, &value).ok());
  auto rc = MountRow(Put(kTable, 4, value, 20, 10), *schema, kTable);
  ASSERT_TRUE(rc.ok()) << rc.status().ToString();
  EXPECT_EQ(rc->row, Row(4, "v1row", -8));
}

TEST(MounterTest, UndecodableRowIsATypedErrorNamingTableAndTs) {
  auto schema = IntHandleSchema(kTable, Ts(1));
  std::string bad = RowValue("truncated", 1);
  bad.resize(bad.size() - 3);
  auto rc = MountRow(Put(kTable, 1, bad, 55, 50), *schema, kTable);
  ASSERT_FALSE(rc.ok());
  EXPECT_EQ(rc.status().code(), Code::kCorruption);
  EXPECT_NE(rc.status().message().find("table 100"), std::string_view::npos);
  EXPECT_NE(rc.status().message().find("commit ts 55"), std::string_view::npos);

  // A bad old value fails the same way.
  rc = MountRow(Put(kTable, 1, RowValue("ok", 1), 56, 50, "\x80\x01"), *schema, kTable);
  EXPECT_EQ(rc.status().code(), Code::kCorruption);

  // A key of another table, or not a record key at all.
  rc = MountRow(Put(kTable + 1, 1, RowValue("x", 1), 57, 50), *schema, kTable);
  EXPECT_EQ(rc.status().code(), Code::kCorruption);
  RawKvEntry junk = Put(kTable, 1, RowValue("x", 1), 58, 50);
  junk.key = "not a key";
  EXPECT_EQ(MountRow(junk, *schema, kTable).status().code(), Code::kCorruption);
}

TEST(MounterTest, UniqueKeyChangesAreDetectedAndSplit) {
  auto schema = IntHandleSchema(kTable, Ts(1), false, /*unique_name=*/true);
  std::vector<int> uk = UniqueKeyColumns(*schema);
  EXPECT_EQ(uk, (std::vector<int>{0, 1}));  // The handle and the unique name.

  auto same_key =
      MountRow(Put(kTable, 7, RowValue("n", 6), 20, 10, RowValue("n", 5)), *schema, kTable);
  ASSERT_TRUE(same_key.ok());
  EXPECT_FALSE(UniqueKeyChanged(*same_key, uk));

  auto new_name =
      MountRow(Put(kTable, 7, RowValue("m", 5), 20, 10, RowValue("n", 5)), *schema, kTable);
  ASSERT_TRUE(new_name.ok());
  EXPECT_TRUE(UniqueKeyChanged(*new_name, uk));
  auto [del, ins] = SplitUpdate(std::move(new_name).value());
  EXPECT_EQ(del.kind, event::RowKind::kDelete);
  EXPECT_EQ(del.pre_row, Row(7, "n", 5));
  EXPECT_TRUE(del.row.empty());
  EXPECT_EQ(ins.kind, event::RowKind::kInsert);
  EXPECT_EQ(ins.row, Row(7, "m", 5));
  EXPECT_TRUE(ins.pre_row.empty());
  EXPECT_EQ(del.raw_key, ins.raw_key);

  // Inserts and deletes never count as changing a key.
  auto insert = MountRow(Put(kTable, 8, RowValue("z", 1), 20, 10), *schema, kTable);
  EXPECT_FALSE(UniqueKeyChanged(*insert, uk));
}

TEST(MounterTest, RowBytesMatchTheEventsAccounting) {
  auto schema = IntHandleSchema(kTable, Ts(1));
  event::DmlEvent e;
  size_t sum = 0;
  for (int i = 0; i < 5; ++i) {
    auto rc = MountRow(Put(kTable, i, RowValue(std::string(i * 10, 'q'), i), 20, 10,
                           i % 2 ? RowValue("old", 1) : ""),
                       *schema, kTable);
    ASSERT_TRUE(rc.ok());
    sum += rc->ApproximateBytes();
    e.rows.push_back(std::move(rc).value());
  }
  EXPECT_EQ(sum, e.ApproximateBytes());
  EXPECT_GT(sum, 0u);
}

}  // namespace
}  // namespace sluice::eventservice
