#include "codec/rowcodec_v2.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "codec/crc32.h"
#include "codec/datum_codec.h"
#include "codec/json_binary.h"
#include "codec/mysql_type.h"
#include "codec/test_util.h"

namespace sluice::codec {
namespace {

using testing::Hex;
using testing::Unhex;

constexpr uint64_t kPackedV2 = 0x19a5443105000000ULL;  // 2020-01-02 03:04:05

// A small-layout row written out from the format, byte by byte.
const std::string kGoldenRow = Unhex(
    "80 00 06 00 01 00"                    // version, flags, 6 not-null, 1 null
    "01 02 04 05 06 07 | 03"               // not-null ids, then the null id
    "01 00 04 00 0C 00 10 00 18 00 1A 00"  // end offsets
    "01"                                   // 1: int 1
    "61 62 63"                             // 2: "abc"
    "BF F8 00 00 00 00 00 00"              // 4: double 1.5 (order-preserving BE)
    "04 02 8C 22"                          // 5: DECIMAL(4,2) 12.34
    "00 00 00 05 31 44 A5 19"              // 6: packed datetime, LE
    "2C 01");                              // 7: unsigned 300, two bytes

std::vector<int64_t> GoldenIds() { return {1, 2, 3, 4, 5, 6, 7}; }

std::vector<Datum> GoldenValues() {
  return {Datum::Int64(1),
          Datum::Bytes("abc"),
          Datum::Null(),
          Datum::Float64(1.5),
          Datum::Decimal("12.34", 4, 2),
          Datum::Time(kPackedV2, mysql_type::kDatetime, 0),
          Datum::Uint64(300)};
}

std::vector<ColumnSpec> GoldenSpecs() {
  return {
      {.id = 1, .type = mysql_type::kLonglong},
      {.id = 2, .type = mysql_type::kVarchar},
      {.id = 3, .type = mysql_type::kLong},
      {.id = 4, .type = mysql_type::kDouble},
      {.id = 5, .type = mysql_type::kNewDecimal},
      {.id = 6, .type = mysql_type::kDatetime},
      {.id = 7, .type = mysql_type::kLong, .is_unsigned = true},
      {.id = 8, .type = mysql_type::kTiny, .default_value = Datum::Int64(7)},
      {.id = 9, .type = mysql_type::kLonglong, .is_handle = true},
  };
}

std::string EncodeV2(const std::vector<int64_t>& ids, const std::vector<Datum>& values,
                     const RowV2EncodeOptions& options = {}) {
  std::string out;
  Status st = EncodeRowV2(ids, values, &out, options);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

std::vector<Datum> DecodeV2(std::string_view row, const std::vector<ColumnSpec>& specs,
                            RowHandle handle = RowHandle::Int(0)) {
  std::vector<Datum> out;
  Status st = DecodeRowV2(row, specs, handle, &out);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

Code DecodeError(std::string_view row, const std::vector<ColumnSpec>& specs) {
  std::vector<Datum> out;
  return DecodeRowV2(row, specs, RowHandle::Int(0), &out).code();
}

TEST(RowV2Test, EncoderMatchesHandBuiltRow) {
  EXPECT_EQ(Hex(EncodeV2(GoldenIds(), GoldenValues())), Hex(kGoldenRow));
  // Input order does not matter.
  EXPECT_EQ(EncodeV2({7, 3, 5, 1, 6, 2, 4},
                     {Datum::Uint64(300), Datum::Null(), Datum::Decimal("12.34", 4, 2),
                      Datum::Int64(1), Datum::Time(kPackedV2, mysql_type::kDatetime, 0),
                      Datum::Bytes("abc"), Datum::Float64(1.5)}),
            kGoldenRow);
}

TEST(RowV2Test, DecodesHandBuiltRow) {
  std::vector<Datum> got = DecodeV2(kGoldenRow, GoldenSpecs(), RowHandle::Int(42));
  std::vector<Datum> want = GoldenValues();
  want.push_back(Datum::Int64(7));   // absent: default
  want.push_back(Datum::Int64(42));  // handle column: from the key
  EXPECT_EQ(got, want);
}

TEST(RowV2Test, ParsedViewExposesLayout) {
  RowV2View view;
  ASSERT_TRUE(RowV2View::Parse(kGoldenRow, &view).ok());
  EXPECT_FALSE(view.large());
  EXPECT_EQ(view.num_not_null(), 6u);
  EXPECT_EQ(view.num_null(), 1u);
  EXPECT_EQ(view.column_id(6), 3);
  EXPECT_EQ(view.column_data(1), "abc");
  bool is_null = false;
  EXPECT_EQ(view.Find(5, &is_null), 3);
  EXPECT_EQ(view.Find(3, &is_null), -1);
  EXPECT_TRUE(is_null);
  EXPECT_EQ(view.Find(300, &is_null), -1);
  EXPECT_FALSE(is_null);
  EXPECT_EQ(view.raw_row(), kGoldenRow);
}

TEST(RowV2Test, FinderHandlesAnyRequestOrder) {
  RowV2View view;
  ASSERT_TRUE(RowV2View::Parse(kGoldenRow, &view).ok());
  RowV2View::Finder finder(view);
  bool is_null = false;
  // Ascending with gaps: ids 0 and 8 are absent, 3 is null.
  EXPECT_EQ(finder.Find(0, &is_null), -1);
  EXPECT_FALSE(is_null);
  EXPECT_EQ(finder.Find(2, &is_null), 1);
  EXPECT_EQ(finder.Find(3, &is_null), -1);
  EXPECT_TRUE(is_null);
  EXPECT_EQ(finder.Find(7, &is_null), 5);
  EXPECT_EQ(finder.Find(8, &is_null), -1);
  EXPECT_FALSE(is_null);
  // Going backwards restarts the merge.
  EXPECT_EQ(finder.Find(1, &is_null), 0);
  EXPECT_EQ(finder.Find(3, &is_null), -1);
  EXPECT_TRUE(is_null);
  EXPECT_EQ(finder.Find(3, &is_null), -1);  // repeated id
  EXPECT_TRUE(is_null);
  EXPECT_EQ(finder.Find(6, &is_null), 4);
  EXPECT_EQ(finder.Find(4, &is_null), 2);
}

TEST(RowV2Test, StringPayloadsAreViewsIntoTheRow) {
  std::vector<Datum> got = DecodeV2(kGoldenRow, GoldenSpecs());
  EXPECT_FALSE(got[1].owns_bytes());
  EXPECT_EQ(got[1].bytes().data(), kGoldenRow.data() + 26);
}

TEST(RowV2Test, LargeLayoutByColumnId) {
  const std::string want = Unhex(
      "80 01 02 00 01 00"
      "01 00 00 00 | 2C 01 00 00 | 00 01 00 00"  // ids 1, 300, then null 256
      "01 00 00 00 | 02 00 00 00"                // end offsets
      "05 78");
  std::vector<int64_t> ids = {1, 300, 256};
  std::vector<Datum> values = {Datum::Int64(5), Datum::Bytes("x"), Datum::Null()};
  EXPECT_EQ(Hex(EncodeV2(ids, values)), Hex(want));
  std::vector<ColumnSpec> specs = {{.id = 300, .type = mysql_type::kString},
                                   {.id = 256, .type = mysql_type::kLong},
                                   {.id = 1, .type = mysql_type::kLong}};
  EXPECT_EQ(DecodeV2(want, specs),
            (std::vector<Datum>{Datum::Bytes("x"), Datum::Null(), Datum::Int64(5)}));
}

TEST(RowV2Test, LargeLayoutByDataSize) {
  std::string big(70000, 'q');
  std::string row = EncodeV2({1, 2}, {Datum::Bytes(big), Datum::Int64(-1)});
  EXPECT_EQ(row[1] & row_v2_flag::kLarge, row_v2_flag::kLarge);
  std::vector<Datum> got = DecodeV2(
      row, {{.id = 1, .type = mysql_type::kLongBlob}, {.id = 2, .type = mysql_type::kLonglong}});
  EXPECT_EQ(got[0].bytes(), big);
  EXPECT_EQ(got[1], Datum::Int64(-1));

  std::string forced = EncodeV2(GoldenIds(), GoldenValues(), {.force_large = true});
  EXPECT_EQ(forced[1], static_cast<char>(row_v2_flag::kLarge));
  EXPECT_EQ(DecodeV2(forced, GoldenSpecs()), DecodeV2(kGoldenRow, GoldenSpecs()));
}

TEST(RowV2Test, IntegersUseTheSmallestWidth) {
  auto width = [](const Datum& d) {
    std::string out;
    EXPECT_TRUE(EncodeRowV2Value(d, &out).ok());
    return out.size();
  };
  EXPECT_EQ(width(Datum::Int64(127)), 1u);
  EXPECT_EQ(width(Datum::Int64(-128)), 1u);
  EXPECT_EQ(width(Datum::Int64(128)), 2u);
  EXPECT_EQ(width(Datum::Int64(-129)), 2u);
  EXPECT_EQ(width(Datum::Int64(32768)), 4u);
  EXPECT_EQ(width(Datum::Int64(-32769)), 4u);
  EXPECT_EQ(width(Datum::Int64(int64_t{1} << 31)), 8u);
  EXPECT_EQ(width(Datum::Uint64(255)), 1u);
  EXPECT_EQ(width(Datum::Uint64(256)), 2u);
  EXPECT_EQ(width(Datum::Uint64(65536)), 4u);
  EXPECT_EQ(width(Datum::Uint64(uint64_t{1} << 32)), 8u);
  EXPECT_EQ(width(Datum::Duration(-1, 0)), 1u);
}

TEST(RowV2Test, EveryColumnTypeRoundTrips) {
  std::string json = *JsonTextToBinary(R"({"a": [1, "b", null]})");
  std::string vec = Unhex("01 00 00 00 00 00 80 3F");
  std::vector<std::pair<ColumnSpec, Datum>> cases = {
      {{.type = mysql_type::kTiny}, Datum::Int64(-128)},
      {{.type = mysql_type::kShort}, Datum::Int64(32767)},
      {{.type = mysql_type::kInt24}, Datum::Int64(-8388608)},
      {{.type = mysql_type::kLong}, Datum::Int64(std::numeric_limits<int32_t>::min())},
      {{.type = mysql_type::kLonglong}, Datum::Int64(std::numeric_limits<int64_t>::min())},
      {{.type = mysql_type::kLonglong, .is_unsigned = true}, Datum::Uint64(~uint64_t{0})},
      {{.type = mysql_type::kTiny, .is_unsigned = true}, Datum::Uint64(255)},
      {{.type = mysql_type::kYear}, Datum::Int64(2024)},
      {{.type = mysql_type::kFloat}, Datum::Float32(0.1f)},
      {{.type = mysql_type::kDouble}, Datum::Float64(-1e300)},
      {{.type = mysql_type::kNewDecimal}, Datum::Decimal("-123.456", 10, 3)},
      {{.type = mysql_type::kDate}, Datum::Time(0x19a5440000000000ULL, mysql_type::kDate, 0)},
      {{.type = mysql_type::kDatetime, .fsp = 6},
       Datum::Time(kPackedV2 | 7, mysql_type::kDatetime, 6)},
      {{.type = mysql_type::kTimestamp, .fsp = 3},
       Datum::Time(kPackedV2, mysql_type::kTimestamp, 3)},
      {{.type = mysql_type::kDuration, .fsp = 2}, Datum::Duration(-3723000000000, 2)},
      {{.type = mysql_type::kEnum}, Datum::Enum(2)},
      {{.type = mysql_type::kSet}, Datum::Set(5)},
      {{.type = mysql_type::kBit, .flen = 9}, Datum::Bit(0x1FF)},
      {{.type = mysql_type::kJson}, Datum::Json(json)},
      {{.type = mysql_type::kVectorFloat32}, Datum::VectorFloat32View(vec)},
      {{.type = mysql_type::kVarchar}, Datum::Bytes("v")},
      {{.type = mysql_type::kBlob}, Datum::Bytes(std::string("\0\xff", 2))},
      {{.type = mysql_type::kString}, Datum::Bytes("")},
      {{.type = mysql_type::kVarString}, Datum::Null()},
  };
  std::vector<int64_t> ids;
  std::vector<Datum> values;
  std::vector<ColumnSpec> specs;
  for (size_t i = 0; i < cases.size(); ++i) {
    ids.push_back(static_cast<int64_t>(i + 1));
    values.push_back(cases[i].second);
    specs.push_back(cases[i].first);
    specs.back().id = static_cast<int64_t>(i + 1);
  }
  EXPECT_EQ(DecodeV2(EncodeV2(ids, values), specs), values);
}

TEST(RowV2Test, HandleColumns) {
  std::string common;
  ASSERT_TRUE(EncodeKeyDatums({Datum::Int64(11), Datum::Bytes("k")}, &common).ok());
  std::vector<ColumnSpec> specs = {
      {.id = 20, .type = mysql_type::kLonglong, .is_handle = true, .handle_offset = 0},
      {.id = 21, .type = mysql_type::kVarchar, .is_handle = true, .handle_offset = 1},
      {.id = 1, .type = mysql_type::kLonglong, .is_handle = true},
  };
  std::vector<Datum> got = DecodeV2(kGoldenRow, specs, RowHandle::Common(common));
  EXPECT_EQ(got[0], Datum::Int64(11));
  EXPECT_TRUE(got[1].is_null());       // string keys hold sort keys: not restored
  EXPECT_EQ(got[2], Datum::Int64(1));  // a stored value wins over the key

  std::vector<ColumnSpec> unsigned_pk = {
      {.id = 9, .type = mysql_type::kLonglong, .is_unsigned = true, .is_handle = true}};
  EXPECT_EQ(DecodeV2(kGoldenRow, unsigned_pk, RowHandle::Int(-1))[0], Datum::Uint64(~uint64_t{0}));
}

TEST(RowV2Test, ChecksumIsSkippedAndExposed) {
  EXPECT_EQ(Crc32("123456789"), 0xCBF43926u);
  std::string key = Unhex("74 80 00 00 00 00 00 00 64 5F 72 80 00 00 00 00 00 00 01");
  std::string row =
      EncodeV2(GoldenIds(), GoldenValues(), {.checksum_version = 1, .checksum_key = key});
  ASSERT_EQ(row.size(), kGoldenRow.size() + 5);
  EXPECT_EQ(row[1], static_cast<char>(row_v2_flag::kChecksum));
  EXPECT_EQ(row.substr(2, kGoldenRow.size() - 2), kGoldenRow.substr(2));
  EXPECT_EQ(DecodeV2(row, GoldenSpecs()), DecodeV2(kGoldenRow, GoldenSpecs()));
  RowV2View view;
  ASSERT_TRUE(RowV2View::Parse(row, &view).ok());
  EXPECT_TRUE(view.has_checksum());
  EXPECT_EQ(view.checksum_version(), 1);
  EXPECT_EQ(view.raw_row(), row.substr(0, kGoldenRow.size()));
  EXPECT_EQ(view.checksum(), ComputeRowV2Checksum(view.raw_row(), 1, key));
  EXPECT_NE(view.checksum(), ComputeRowV2Checksum(view.raw_row(), 1, key + "x"));

  std::string extra = EncodeV2(GoldenIds(), GoldenValues(),
                               {.checksum_version = 2,
                                .checksum_key = Unhex("80 00 00 00 00 00 00 01"),
                                .with_extra_checksum = true,
                                .extra_checksum = 0xDEADBEEF});
  ASSERT_EQ(extra.size(), kGoldenRow.size() + 9);
  ASSERT_TRUE(RowV2View::Parse(extra, &view).ok());
  EXPECT_EQ(view.checksum_version(), 2);
  EXPECT_TRUE(view.has_extra_checksum());
  EXPECT_EQ(view.extra_checksum(), 0xDEADBEEFu);
  EXPECT_EQ(DecodeV2(extra, GoldenSpecs()), DecodeV2(kGoldenRow, GoldenSpecs()));
}

TEST(RowV2Test, BadChecksumTails) {
  std::string base = kGoldenRow;
  base[1] = static_cast<char>(row_v2_flag::kChecksum);
  for (const std::string& tail :
       {std::string(), Unhex("01 00 00 00"), Unhex("03 00 00 00 00"), Unhex("11 00 00 00 00"),
        Unhex("01 00 00 00 00 00"), Unhex("09 00 00 00 00 00 00 00")}) {
    EXPECT_EQ(DecodeError(base + tail, GoldenSpecs()), Code::kCorruption) << Hex(tail);
  }
  EXPECT_EQ(DecodeError(base + Unhex("00 01 02 03 04"), GoldenSpecs()), Code::kOk);  // legacy v0
}

TEST(RowV2Test, EveryTruncationIsCorruption) {
  std::string with_checksum =
      EncodeV2(GoldenIds(), GoldenValues(), {.checksum_version = 1, .checksum_key = "k"});
  std::string large = EncodeV2(GoldenIds(), GoldenValues(), {.force_large = true});
  for (const std::string& row : {kGoldenRow, with_checksum, large}) {
    for (size_t n = 0; n < row.size(); ++n) {
      EXPECT_EQ(DecodeError(row.substr(0, n), GoldenSpecs()), Code::kCorruption) << n;
    }
    EXPECT_EQ(DecodeError(row + "x", GoldenSpecs()), Code::kCorruption);
  }
}

TEST(RowV2Test, CorruptHeaders) {
  auto patched = [](size_t pos, std::string_view bytes) {
    std::string row = kGoldenRow;
    row.replace(pos, bytes.size(), bytes);
    return row;
  };
  std::vector<ColumnSpec> specs = GoldenSpecs();
  EXPECT_EQ(DecodeError(patched(0, Unhex("7F")), specs), Code::kCorruption);      // version
  EXPECT_EQ(DecodeError(patched(1, Unhex("04")), specs), Code::kCorruption);      // unknown flag
  EXPECT_EQ(DecodeError(patched(2, Unhex("FF FF")), specs), Code::kCorruption);   // counts
  EXPECT_EQ(DecodeError(patched(7, Unhex("01")), specs), Code::kCorruption);      // ids 1,1
  EXPECT_EQ(DecodeError(patched(11, Unhex("05")), specs), Code::kCorruption);     // ids ...6,5
  EXPECT_EQ(DecodeError(patched(13, Unhex("05 00")), specs), Code::kCorruption);  // 5 > 4
  EXPECT_EQ(DecodeError(patched(23, Unhex("1B 00")), specs), Code::kCorruption);  // past data
  EXPECT_EQ(DecodeError(patched(23, Unhex("19 00")), specs), Code::kCorruption);  // trailing
}

TEST(RowV2Test, ColumnBytesMustFitTheType) {
  // One not-null column (id 1) holding three bytes.
  std::string row = Unhex("80 00 01 00 00 00 01 03 00 AA BB CC");
  EXPECT_EQ(DecodeError(row, {{.id = 1, .type = mysql_type::kLong}}), Code::kCorruption);
  EXPECT_EQ(DecodeError(row, {{.id = 1, .type = mysql_type::kDouble}}), Code::kCorruption);
  EXPECT_EQ(DecodeError(row, {{.id = 1, .type = mysql_type::kNewDecimal}}), Code::kCorruption);
  EXPECT_EQ(DecodeError(row, {{.id = 1, .type = mysql_type::kJson}}), Code::kCorruption);
  EXPECT_EQ(DecodeError(row, {{.id = 1, .type = mysql_type::kVectorFloat32}}), Code::kCorruption);
  EXPECT_EQ(DecodeError(row, {{.id = 1, .type = mysql_type::kBlob}}), Code::kOk);
  EXPECT_EQ(DecodeError(row, {{.id = 1, .type = 255}}), Code::kInvalidArgument);
  EXPECT_EQ(DecodeError(Unhex("80 00 01 00 00 00 01 03 00 05 07 80"),
                        {{.id = 1, .type = mysql_type::kNewDecimal}}),
            Code::kCorruption);  // frac 7 > precision 5
}

TEST(RowV2Test, EncoderRejectsBadInput) {
  std::string out;
  std::vector<Datum> two = {Datum::Int64(1), Datum::Int64(2)};
  std::vector<Datum> one = {Datum::Int64(1)};
  std::vector<Datum> max = {Datum::Max()};
  std::vector<int64_t> dup_ids = {1, 1};
  std::vector<int64_t> negative_id = {-1};
  std::vector<int64_t> id1 = {1};
  EXPECT_EQ(EncodeRowV2(dup_ids, two, &out).code(), Code::kInvalidArgument);
  EXPECT_EQ(EncodeRowV2(negative_id, one, &out).code(), Code::kInvalidArgument);
  EXPECT_EQ(EncodeRowV2(id1, max, &out).code(), Code::kInvalidArgument);
  EXPECT_EQ(EncodeRowV2(id1, two, &out).code(), Code::kInvalidArgument);
  EXPECT_EQ(EncodeRowV2(id1, one, &out, {.checksum_version = 5}).code(), Code::kInvalidArgument);
  EXPECT_TRUE(out.empty());
}

TEST(RowV2Test, DecodeRowDispatchesOnVersion) {
  std::vector<Datum> out;
  ASSERT_TRUE(DecodeRow(kGoldenRow, GoldenSpecs(), RowHandle::Int(42), &out).ok());
  EXPECT_EQ(out, DecodeV2(kGoldenRow, GoldenSpecs(), RowHandle::Int(42)));
  EXPECT_EQ(DecodeRow("", GoldenSpecs(), RowHandle::Int(0), &out).code(), Code::kCorruption);
}

}  // namespace
}  // namespace sluice::codec
