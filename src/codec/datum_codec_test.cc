#include "codec/datum_codec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "codec/json_binary.h"
#include "codec/mysql_type.h"
#include "codec/row.h"
#include "codec/test_util.h"

namespace sluice::codec {
namespace {

using testing::Hex;
using testing::Unhex;

std::string Key(const Datum& d) {
  std::string out;
  Status st = EncodeKeyDatum(d, &out);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

std::string Value(const Datum& d) {
  std::string out;
  Status st = EncodeValueDatum(d, &out);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

Datum DecodeOne(std::string_view bytes) {
  Datum d;
  std::string_view in(bytes);
  Status st = DecodeDatum(&in, &d);
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(in.empty());
  return d;
}

TEST(DatumCodecTest, KeyFormGoldenVectors) {
  EXPECT_EQ(Hex(Key(Datum::Null())), "00");
  EXPECT_EQ(Hex(Key(Datum::Int64(1))), "03 80 00 00 00 00 00 00 01");
  EXPECT_EQ(Hex(Key(Datum::Uint64(1))), "04 00 00 00 00 00 00 00 01");
  EXPECT_EQ(Hex(Key(Datum::Bytes("abc"))), "01 61 62 63 00 00 00 00 00 FA");
  EXPECT_EQ(Hex(Key(Datum::Float64(1.0))), "05 BF F0 00 00 00 00 00 00");
  EXPECT_EQ(Hex(Key(Datum::Duration(1000000000, 3))), "07 80 00 00 00 3B 9A CA 00");
  EXPECT_EQ(Hex(Key(Datum::Decimal("1234567890.1234", 14, 4))), "06 0E 04 81 0D FB 38 D2 04 D2");
  EXPECT_EQ(Hex(Key(Datum::Time(0x19a5443105000000ULL, mysql_type::kDatetime, 0))),
            "04 19 A5 44 31 05 00 00 00");
  EXPECT_EQ(Hex(Key(Datum::Enum(2))), "04 00 00 00 00 00 00 00 02");
  EXPECT_EQ(Hex(Key(Datum::Json(Unhex("04 01")))), "0A 04 01");
  EXPECT_EQ(Hex(Key(Datum::MinNotNull())), "01");
  EXPECT_EQ(Hex(Key(Datum::Max())), "FA");
}

TEST(DatumCodecTest, ValueFormGoldenVectors) {
  EXPECT_EQ(Hex(Value(Datum::Int64(-1))), "08 01");
  EXPECT_EQ(Hex(Value(Datum::Uint64(300))), "09 AC 02");
  EXPECT_EQ(Hex(Value(Datum::Bytes("abc"))), "02 06 61 62 63");
  EXPECT_EQ(Hex(Value(Datum::Set(3))), "09 03");
  EXPECT_EQ(Hex(Value(Datum::Time(0x19a5443105000000ULL, mysql_type::kDatetime, 0))),
            "04 19 A5 44 31 05 00 00 00");
  EXPECT_EQ(Hex(Value(Datum::Duration(-1, 0))), "07 7F FF FF FF FF FF FF FF");
  EXPECT_EQ(Hex(Value(Datum::Float32(1.5f))), "05 BF F8 00 00 00 00 00 00");
  // Decimals without precision use the natural one: DECIMAL(4,2) 12.34.
  EXPECT_EQ(Hex(Value(Datum::Decimal("12.34", 0, 0))), "06 04 02 8C 22");
}

TEST(DatumCodecTest, RoundTripsBothForms) {
  std::string json = *JsonTextToBinary(R"({"k": [1, 2]})");
  std::string vec = Unhex("02 00 00 00 00 00 80 3F 00 00 00 40");  // [1.0, 2.0]
  struct Case {
    Datum in;
    Datum decoded;  // what DecodeDatum yields (flattened kinds)
  };
  std::vector<Case> cases = {
      {Datum::Null(), Datum::Null()},
      {Datum::Int64(-123456789), Datum::Int64(-123456789)},
      {Datum::Uint64(~uint64_t{0}), Datum::Uint64(~uint64_t{0})},
      {Datum::Float64(-2.25), Datum::Float64(-2.25)},
      {Datum::Bytes(std::string("a\0b", 3)), Datum::Bytes(std::string("a\0b", 3))},
      {Datum::Bytes(""), Datum::Bytes("")},
      {Datum::Decimal("-0.050", 6, 3), Datum::Decimal("-0.050", 6, 3)},
      {Datum::Time(12345, mysql_type::kDate, 0), Datum::Uint64(12345)},
      {Datum::Duration(-5, 2), Datum::Duration(-5, 0)},
      {Datum::Bit(7), Datum::Uint64(7)},
      {Datum::Json(json), Datum::Json(json)},
      {Datum::VectorFloat32View(vec), Datum::VectorFloat32View(vec)},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(DecodeOne(Key(c.in)), c.decoded) << c.in.DebugString();
    EXPECT_EQ(DecodeOne(Value(c.in)), c.decoded) << c.in.DebugString();
  }
  EXPECT_EQ(DecodeOne(Key(Datum::Max())), Datum::Max());
}

TEST(DatumCodecTest, ConvertRestoresColumnKinds) {
  ColumnSpec datetime{.id = 1, .type = mysql_type::kDatetime, .fsp = 3};
  Datum d = DecodeOne(Key(Datum::Time(99, mysql_type::kDatetime, 3)));
  ASSERT_TRUE(ConvertDatumForColumn(datetime, &d).ok());
  EXPECT_EQ(d, Datum::Time(99, mysql_type::kDatetime, 3));

  ColumnSpec flt{.id = 2, .type = mysql_type::kFloat};
  d = DecodeOne(Value(Datum::Float32(0.1f)));
  ASSERT_TRUE(ConvertDatumForColumn(flt, &d).ok());
  EXPECT_EQ(d, Datum::Float32(0.1f));

  ColumnSpec unsigned_int{.id = 3, .type = mysql_type::kLonglong, .is_unsigned = true};
  d = Datum::Int64(-1);
  ASSERT_TRUE(ConvertDatumForColumn(unsigned_int, &d).ok());
  EXPECT_EQ(d, Datum::Uint64(~uint64_t{0}));

  ColumnSpec str{.id = 4, .type = mysql_type::kVarchar};
  d = Datum::Int64(1);
  EXPECT_EQ(ConvertDatumForColumn(str, &d).code(), Code::kCorruption);
  ColumnSpec geometry{.id = 5, .type = 255};
  d = Datum::Bytes("x");
  EXPECT_EQ(ConvertDatumForColumn(geometry, &d).code(), Code::kInvalidArgument);
}

TEST(DatumCodecTest, KeyFormPreservesOrder) {
  std::vector<std::vector<Datum>> groups = {
      {Datum::Int64(INT64_MIN), Datum::Int64(-1), Datum::Int64(0), Datum::Int64(INT64_MAX)},
      {Datum::Bytes(""), Datum::Bytes(std::string(1, '\0')), Datum::Bytes("a"),
       Datum::Bytes("abcdefgh"), Datum::Bytes("abcdefgh\x01"), Datum::Bytes("b")},
      {Datum::Float64(-1e10), Datum::Float64(-0.5), Datum::Float64(0.25)},
      {Datum::Decimal("-10.5", 5, 2), Datum::Decimal("-0.01", 5, 2), Datum::Decimal("3", 5, 2)},
  };
  for (const auto& group : groups) {
    for (size_t i = 1; i < group.size(); ++i) {
      EXPECT_LT(Key(group[i - 1]), Key(group[i])) << group[i].DebugString();
    }
    // Null sorts first, MinNotNull before any value, Max after all.
    EXPECT_LT(Key(Datum::Null()), Key(Datum::MinNotNull()));
    EXPECT_LT(Key(Datum::MinNotNull()), Key(group.front()));
    EXPECT_GT(Key(Datum::Max()), Key(group.back()));
  }
}

TEST(DatumCodecTest, DecodesConcatenations) {
  std::string enc = Key(Datum::Bytes("pk")) + Key(Datum::Int64(7)) + Value(Datum::Null());
  Result<std::vector<Datum>> all = DecodeDatums(enc);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0], Datum::Bytes("pk"));
  EXPECT_EQ((*all)[1], Datum::Int64(7));
  EXPECT_TRUE((*all)[2].is_null());
  EXPECT_EQ(*PeekDatumLength(enc), 10u);
}

TEST(DatumCodecTest, CompactBytesAreViewsIntoInput) {
  std::string enc = Value(Datum::Bytes("hello"));
  Datum d;
  std::string_view in(enc);
  ASSERT_TRUE(DecodeDatum(&in, &d).ok());
  EXPECT_FALSE(d.owns_bytes());
  EXPECT_EQ(d.bytes().data(), enc.data() + 2);
  d.MakeOwned();
  enc.assign(enc.size(), 'x');
  EXPECT_EQ(d.bytes(), "hello");
}

TEST(DatumCodecTest, EncodersRejectBadDecimalsWithoutPartialOutput) {
  std::string out = "keep";
  EXPECT_EQ(EncodeKeyDatum(Datum::Decimal("1.2.3", 5, 2), &out).code(), Code::kInvalidArgument);
  EXPECT_EQ(EncodeValueDatum(Datum::Decimal("123456", 5, 2), &out).code(), Code::kInvalidArgument);
  EXPECT_EQ(EncodeKeyDatums({Datum::Int64(1), Datum::Decimal("x", 3, 0)}, &out).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(out, "keep");
}

TEST(DatumCodecTest, MalformedDatumsAreCorruption) {
  std::vector<std::string> valid = {
      Key(Datum::Int64(5)),
      Key(Datum::Bytes("0123456789")),
      Value(Datum::Bytes("abc")),
      Value(Datum::Int64(-300)),
      Key(Datum::Decimal("1.5", 3, 1)),
      Key(Datum::Json(*JsonTextToBinary("[1]"))),
      Key(Datum::VectorFloat32View(Unhex("01 00 00 00 00 00 80 3F")))};
  for (const std::string& enc : valid) {
    for (size_t n = 0; n < enc.size(); ++n) {
      Datum d;
      std::string_view in(enc.data(), n);
      EXPECT_EQ(DecodeDatum(&in, &d).code(), Code::kCorruption) << Hex(enc) << " at " << n;
    }
  }
  for (const std::string& bad : {Unhex("0B"), Unhex("FF 00"), Unhex("06 03 05 80 00"),
                                 Unhex("01 61 00 00 00 00 00 00 00 F0")}) {
    Datum d;
    std::string_view in(bad);
    EXPECT_EQ(DecodeDatum(&in, &d).code(), Code::kCorruption) << Hex(bad);
  }
}

}  // namespace
}  // namespace sluice::codec
