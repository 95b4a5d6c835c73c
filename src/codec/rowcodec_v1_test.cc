#include "codec/rowcodec_v1.h"

#include <gtest/gtest.h>

#include <vector>

#include "codec/datum_codec.h"
#include "codec/mysql_type.h"
#include "codec/test_util.h"

namespace sluice::codec {
namespace {

using testing::Hex;
using testing::Unhex;

constexpr uint64_t kPackedV1 = 0x19a5443105000000ULL;

std::string EncodeV1(const std::vector<int64_t>& ids, const std::vector<Datum>& values) {
  std::string out;
  Status st = EncodeRowV1(ids, values, &out);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

std::vector<Datum> DecodeV1(std::string_view row, const std::vector<ColumnSpec>& specs,
                            RowHandle handle = RowHandle::Int(0)) {
  std::vector<Datum> out;
  Status st = DecodeRowV1(row, specs, handle, &out);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

TEST(RowV1Test, GoldenBytes) {
  // (id datum, value datum) pairs in value form: varint ids, compact bytes.
  EXPECT_EQ(Hex(EncodeV1({1, 2, 3}, {Datum::Int64(-1), Datum::Bytes("ab"), Datum::Null()})),
            "08 02 08 01 08 04 02 04 61 62 08 06 00");
  // Flattened kinds: packed time as uvarint, duration as varint, enum as uvarint.
  EXPECT_EQ(Hex(EncodeV1({1, 2, 3}, {Datum::Time(300, mysql_type::kDatetime, 0),
                                     Datum::Duration(-2, 0), Datum::Enum(3)})),
            "08 02 09 AC 02 08 04 08 03 08 06 09 03");
  EXPECT_EQ(Hex(EncodeV1({}, {})), "00");
}

TEST(RowV1Test, DecodesAndRestoresColumnKinds) {
  std::vector<int64_t> ids = {4, 1, 2, 3, 5, 6, 7, 8, 9};
  std::vector<Datum> values = {Datum::Time(kPackedV1, mysql_type::kTimestamp, 2),
                               Datum::Int64(-7),
                               Datum::Bytes("hello"),
                               Datum::Null(),
                               Datum::Duration(-3723000000000, 1),
                               Datum::Float32(0.1f),
                               Datum::Decimal("-9.99", 3, 2),
                               Datum::Set(6),
                               Datum::Uint64(~uint64_t{0})};
  std::string row = EncodeV1(ids, values);
  std::vector<ColumnSpec> specs = {
      {.id = 1, .type = mysql_type::kLonglong},
      {.id = 2, .type = mysql_type::kVarchar},
      {.id = 3, .type = mysql_type::kLong},
      {.id = 4, .type = mysql_type::kTimestamp, .fsp = 2},
      {.id = 5, .type = mysql_type::kDuration, .fsp = 1},
      {.id = 6, .type = mysql_type::kFloat},
      {.id = 7, .type = mysql_type::kNewDecimal},
      {.id = 8, .type = mysql_type::kSet},
      {.id = 9, .type = mysql_type::kLonglong, .is_unsigned = true},
      {.id = 10, .type = mysql_type::kTiny, .default_value = Datum::Int64(3)},
      {.id = 11, .type = mysql_type::kLonglong, .is_handle = true},
  };
  std::vector<Datum> want = {values[1], values[2],       values[3],       values[0],
                             values[4], values[5],       values[6],       values[7],
                             values[8], Datum::Int64(3), Datum::Int64(77)};
  EXPECT_EQ(DecodeV1(row, specs, RowHandle::Int(77)), want);
}

TEST(RowV1Test, EmptyRowUsesDefaultsAndHandle) {
  std::vector<ColumnSpec> specs = {
      {.id = 1, .type = mysql_type::kLonglong, .is_handle = true},
      {.id = 2, .type = mysql_type::kVarchar, .default_value = Datum::Bytes("d")},
      {.id = 3, .type = mysql_type::kLong}};
  EXPECT_EQ(DecodeV1(Unhex("00"), specs, RowHandle::Int(5)),
            (std::vector<Datum>{Datum::Int64(5), Datum::Bytes("d"), Datum::Null()}));
}

TEST(RowV1Test, SameColumnRequestedTwiceAndUnknownColumnsSkipped) {
  std::string row = EncodeV1({1, 99, 2}, {Datum::Int64(5), Datum::Bytes("skip"), Datum::Int64(6)});
  std::vector<ColumnSpec> specs = {{.id = 2, .type = mysql_type::kLong},
                                   {.id = 2, .type = mysql_type::kLong, .is_unsigned = true},
                                   {.id = 1, .type = mysql_type::kTiny}};
  EXPECT_EQ(DecodeV1(row, specs),
            (std::vector<Datum>{Datum::Int64(6), Datum::Uint64(6), Datum::Int64(5)}));
}

TEST(RowV1Test, MalformedRows) {
  std::vector<ColumnSpec> specs = {{.id = 1, .type = mysql_type::kLong},
                                   {.id = 2, .type = mysql_type::kVarchar}};
  std::vector<Datum> out;
  auto code = [&](std::string_view row) {
    return DecodeRowV1(row, specs, RowHandle::Int(0), &out).code();
  };
  EXPECT_EQ(code(""), Code::kCorruption);
  EXPECT_EQ(code(Unhex("02 02 61 62 08 02")), Code::kCorruption);  // id is bytes
  EXPECT_EQ(code(Unhex("08 02")), Code::kCorruption);              // id without value
  EXPECT_EQ(code(Unhex("08 02 FE")), Code::kCorruption);           // unknown flag
  EXPECT_EQ(code(Unhex("08 04 08 02")), Code::kCorruption);        // int for a VARCHAR

  // Prefixes that end inside a pair are corrupt; those at pair ends decode.
  std::string row = EncodeV1({1, 2}, {Datum::Int64(300), Datum::Bytes("abc")});
  // 08 02 08 D8 04 | 08 04 02 06 61 62 63: the first pair ends at 5.
  ASSERT_EQ(row.size(), 12u);
  for (size_t n = 1; n < row.size(); ++n) {
    EXPECT_EQ(code(row.substr(0, n)), n == 5 ? Code::kOk : Code::kCorruption) << n;
  }
}

TEST(RowV1Test, DecodeRowDispatchesToV1) {
  std::string row = EncodeV1({1}, {Datum::Bytes("x")});
  std::vector<Datum> out;
  std::vector<ColumnSpec> specs = {{.id = 1, .type = mysql_type::kBlob}};
  ASSERT_TRUE(DecodeRow(row, specs, RowHandle::Int(0), &out).ok());
  EXPECT_EQ(out, std::vector<Datum>{Datum::Bytes("x")});
}

}  // namespace
}  // namespace sluice::codec
