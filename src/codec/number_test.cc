#include "codec/number.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "codec/test_util.h"

namespace sluice::codec {
namespace {

using testing::Hex;
using testing::Unhex;

template <typename F>
std::string Enc(F f) {
  std::string out;
  f(&out);
  return out;
}

TEST(NumberTest, IntGoldenVectors) {
  EXPECT_EQ(Hex(Enc([](std::string* o) { EncodeInt(0, o); })), "80 00 00 00 00 00 00 00");
  EXPECT_EQ(Hex(Enc([](std::string* o) { EncodeInt(-1, o); })), "7F FF FF FF FF FF FF FF");
  EXPECT_EQ(Hex(Enc([](std::string* o) { EncodeInt(100, o); })), "80 00 00 00 00 00 00 64");
  EXPECT_EQ(Hex(Enc([](std::string* o) { EncodeIntDesc(100, o); })), "7F FF FF FF FF FF FF 9B");
  EXPECT_EQ(Hex(Enc([](std::string* o) { EncodeUint(258, o); })), "00 00 00 00 00 00 01 02");
  EXPECT_EQ(Hex(Enc([](std::string* o) { EncodeUintDesc(0, o); })), "FF FF FF FF FF FF FF FF");
  EXPECT_EQ(Hex(Enc([](std::string* o) { EncodeFloat(1.5, o); })), "BF F8 00 00 00 00 00 00");
  EXPECT_EQ(Hex(Enc([](std::string* o) { EncodeFloat(-1.5, o); })), "40 07 FF FF FF FF FF FF");
}

TEST(NumberTest, FixedWidthRoundTripsAndAdvances) {
  for (int64_t v : {std::numeric_limits<int64_t>::min(), int64_t{-1}, int64_t{0}, int64_t{1},
                    std::numeric_limits<int64_t>::max()}) {
    std::string buf;
    EncodeInt(v, &buf);
    EncodeIntDesc(v, &buf);
    EncodeUint(static_cast<uint64_t>(v), &buf);
    EncodeUintDesc(static_cast<uint64_t>(v), &buf);
    buf += "tail";
    std::string_view in(buf);
    EXPECT_EQ(*DecodeInt(&in), v);
    EXPECT_EQ(*DecodeIntDesc(&in), v);
    EXPECT_EQ(*DecodeUint(&in), static_cast<uint64_t>(v));
    EXPECT_EQ(*DecodeUintDesc(&in), static_cast<uint64_t>(v));
    EXPECT_EQ(in, "tail");
  }
}

TEST(NumberTest, IntAndFloatEncodingsPreserveOrder) {
  std::mt19937_64 rng(1);
  std::vector<int64_t> ints = {std::numeric_limits<int64_t>::min(), -1, 0, 1,
                               std::numeric_limits<int64_t>::max()};
  std::vector<double> floats = {
      -std::numeric_limits<double>::infinity(), -1e300, -1.5, -0.0, 1e-300, 2.5,
      std::numeric_limits<double>::infinity()};
  for (int i = 0; i < 200; ++i) {
    ints.push_back(static_cast<int64_t>(rng()));
    floats.push_back(std::ldexp(static_cast<double>(static_cast<int64_t>(rng())), -40));
  }
  std::sort(ints.begin(), ints.end());
  std::sort(floats.begin(), floats.end());
  for (size_t i = 1; i < ints.size(); ++i) {
    std::string a, b, da, db;
    EncodeInt(ints[i - 1], &a);
    EncodeInt(ints[i], &b);
    EncodeIntDesc(ints[i - 1], &da);
    EncodeIntDesc(ints[i], &db);
    EXPECT_LE(a, b);
    EXPECT_GE(da, db);
  }
  for (size_t i = 1; i < floats.size(); ++i) {
    std::string a, b;
    EncodeFloat(floats[i - 1], &a);
    EncodeFloat(floats[i], &b);
    EXPECT_LE(a, b) << floats[i - 1] << " vs " << floats[i];
    std::string_view in(b);
    EXPECT_EQ(*DecodeFloat(&in), floats[i]);
  }
}

TEST(NumberTest, FixedWidthDecodersRejectShortInput) {
  std::string seven(7, '\x80');
  std::string_view in(seven);
  EXPECT_EQ(DecodeInt(&in).status().code(), Code::kCorruption);
  EXPECT_EQ(DecodeUint(&in).status().code(), Code::kCorruption);
  EXPECT_EQ(DecodeFloat(&in).status().code(), Code::kCorruption);
  EXPECT_EQ(in.size(), 7u);  // untouched on error
}

TEST(NumberTest, VarintMatchesGoEncoding) {
  EXPECT_EQ(Hex(Enc([](std::string* o) { EncodeUvarint(300, o); })), "AC 02");
  EXPECT_EQ(Hex(Enc([](std::string* o) { EncodeVarint(-1, o); })), "01");
  EXPECT_EQ(Hex(Enc([](std::string* o) { EncodeVarint(1, o); })), "02");
  EXPECT_EQ(Hex(Enc([](std::string* o) { EncodeVarint(-64, o); })), "7F");
  EXPECT_EQ(Hex(Enc([](std::string* o) { EncodeVarint(64, o); })), "80 01");
  EXPECT_EQ(Hex(Enc([](std::string* o) { EncodeVarint(std::numeric_limits<int64_t>::min(), o); })),
            "FF FF FF FF FF FF FF FF FF 01");
  EXPECT_EQ(Hex(Enc([](std::string* o) { EncodeUvarint(~uint64_t{0}, o); })),
            "FF FF FF FF FF FF FF FF FF 01");
}

TEST(NumberTest, VarintRoundTrips) {
  std::mt19937_64 rng(2);
  for (int i = 0; i < 1000; ++i) {
    uint64_t u = rng() >> (rng() % 64);
    int64_t v = static_cast<int64_t>(rng()) >> (rng() % 64);
    std::string buf;
    EncodeUvarint(u, &buf);
    EncodeVarint(v, &buf);
    std::string_view in(buf);
    EXPECT_EQ(*DecodeUvarint(&in), u);
    EXPECT_EQ(*DecodeVarint(&in), v);
    EXPECT_TRUE(in.empty());
  }
}

TEST(NumberTest, UvarintRejectsTruncationAndOverflow) {
  for (std::string bad : {Unhex("80"), Unhex("FF FF"), Unhex("FF FF FF FF FF FF FF FF FF 02"),
                          Unhex("FF FF FF FF FF FF FF FF FF FF 01"), std::string()}) {
    std::string_view in(bad);
    EXPECT_EQ(DecodeUvarint(&in).status().code(), Code::kCorruption) << Hex(bad);
  }
}

TEST(NumberTest, CompactBytes) {
  EXPECT_EQ(Hex(Enc([](std::string* o) { EncodeCompactBytes("abc", o); })), "06 61 62 63");
  std::string buf = Unhex("06 61 62 63 FF");
  std::string_view in(buf);
  ASSERT_EQ(*DecodeCompactBytes(&in), "abc");
  EXPECT_EQ(in.size(), 1u);
  for (std::string bad : {Unhex("08 61 62 63"), Unhex("01 61"), Unhex("80")}) {
    std::string_view b(bad);
    EXPECT_EQ(DecodeCompactBytes(&b).status().code(), Code::kCorruption) << Hex(bad);
  }
}

TEST(NumberTest, ComparableVarintGoldenVectors) {
  auto u = [](uint64_t v) {
    return Hex(Enc([&](std::string* o) { EncodeComparableUvarint(v, o); }));
  };
  auto s = [](int64_t v) {
    return Hex(Enc([&](std::string* o) { EncodeComparableVarint(v, o); }));
  };
  EXPECT_EQ(u(0), "08");
  EXPECT_EQ(u(239), "F7");
  EXPECT_EQ(u(240), "F8 F0");
  EXPECT_EQ(u(256), "F9 01 00");
  EXPECT_EQ(u(~uint64_t{0}), "FF FF FF FF FF FF FF FF FF");
  EXPECT_EQ(s(-1), "07 FF");
  EXPECT_EQ(s(-255), "07 01");
  EXPECT_EQ(s(-256), "06 FF 00");
  EXPECT_EQ(s(std::numeric_limits<int64_t>::min()), "00 80 00 00 00 00 00 00 00");
}

TEST(NumberTest, ComparableVarintRoundTripsInOrder) {
  std::mt19937_64 rng(3);
  std::vector<int64_t> values = {std::numeric_limits<int64_t>::min(), -256, -255, -1, 0, 239, 240,
                                 std::numeric_limits<int64_t>::max()};
  for (int i = 0; i < 500; ++i) values.push_back(static_cast<int64_t>(rng()) >> (rng() % 64));
  std::sort(values.begin(), values.end());
  std::string prev;
  for (int64_t v : values) {
    std::string enc;
    EncodeComparableVarint(v, &enc);
    EXPECT_LE(prev, enc) << v;
    prev = enc;
    std::string_view in(enc);
    EXPECT_EQ(*DecodeComparableVarint(&in), v);
    EXPECT_TRUE(in.empty());
    if (v >= 0) {
      std::string_view uin(enc);
      EXPECT_EQ(*DecodeComparableUvarint(&uin), static_cast<uint64_t>(v));
    }
  }
}

TEST(NumberTest, ComparableVarintRejectsInvalidInput) {
  struct Case {
    std::string bytes;
    bool as_signed;
  };
  for (const Case& c :
       {Case{Unhex("07 FF"), false},                      // negative tag for unsigned
        Case{Unhex("FF FF FF FF FF FF FF FF FF"), true},  // > int64 max
        Case{Unhex("00 7F FF FF FF FF FF FF FF"), true},  // not negative
        Case{Unhex("F9 01"), false}, Case{Unhex("05 FF"), true}, Case{std::string(), true}}) {
    std::string_view in(c.bytes);
    Status st =
        c.as_signed ? DecodeComparableVarint(&in).status() : DecodeComparableUvarint(&in).status();
    EXPECT_EQ(st.code(), Code::kCorruption) << Hex(c.bytes);
  }
}

}  // namespace
}  // namespace sluice::codec
