#include "codec/decimal.h"

#include <gtest/gtest.h>

#include <vector>

#include "codec/test_util.h"

namespace sluice::codec {
namespace {

using testing::Hex;
using testing::Unhex;

std::string Bin(std::string_view text, int precision, int frac) {
  std::string out;
  Status st = EncodeDecimalBin(text, precision, frac, &out);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

Result<std::string> Text(std::string_view bin, int precision, int frac) {
  std::string out;
  std::string_view in(bin);
  RETURN_IF_ERROR(DecodeDecimalBin(&in, precision, frac, &out));
  if (!in.empty()) return Internal("decoder left bytes");
  return out;
}

// Vectors from the MyDecimal source comment.
TEST(DecimalTest, GoldenVectors) {
  EXPECT_EQ(Hex(Bin("1234567890.1234", 14, 4)), "81 0D FB 38 D2 04 D2");
  EXPECT_EQ(Hex(Bin("-1234567890.1234", 14, 4)), "7E F2 04 C7 2D FB 2D");
  EXPECT_EQ(*Text(Unhex("81 0D FB 38 D2 04 D2"), 14, 4), "1234567890.1234");
  EXPECT_EQ(*Text(Unhex("7E F2 04 C7 2D FB 2D"), 14, 4), "-1234567890.1234");
  // DECIMAL(4,2) 12.34: one byte 12, one byte 34, top bit flipped.
  EXPECT_EQ(Hex(Bin("12.34", 4, 2)), "8C 22");
}

TEST(DecimalTest, BinSize) {
  EXPECT_EQ(*DecimalBinSize(14, 4), 7);
  EXPECT_EQ(*DecimalBinSize(1, 0), 1);
  EXPECT_EQ(*DecimalBinSize(10, 0), 5);
  EXPECT_EQ(*DecimalBinSize(9, 9), 4);
  EXPECT_EQ(*DecimalBinSize(65, 30), 30);
  EXPECT_EQ(*DecimalBinSize(81, 0), 36);
  for (auto [p, f] : std::vector<std::pair<int, int>>{{0, 0}, {82, 0}, {5, 6}, {40, 31}, {5, -1}}) {
    EXPECT_EQ(DecimalBinSize(p, f).status().code(), Code::kInvalidArgument) << p << "," << f;
  }
}

TEST(DecimalTest, RoundTripsToCanonicalText) {
  struct Case {
    const char* in;
    int precision;
    int frac;
    const char* out;
  };
  for (const Case& c : std::vector<Case>{
           {"0", 1, 0, "0"},
           {"-0.00", 5, 2, "0.00"},
           {"1.5", 5, 2, "1.50"},
           {"+0001.5", 5, 2, "1.50"},
           {".5", 3, 1, "0.5"},
           {"7.", 3, 0, "7"},
           {"0.001", 10, 3, "0.001"},
           {"-0.5", 3, 1, "-0.5"},
           {"999999999.999999999", 18, 9, "999999999.999999999"},
           {"-1000000000", 10, 0, "-1000000000"},
           {"12345678901234567890123456789012345.123456789012345678901234567890", 65, 30,
            "12345678901234567890123456789012345.123456789012345678901234567890"},
           {"-99999999999999999999999999999999999999999999999999999999999999999999999999999999"
            "9",
            81, 0,
            "-99999999999999999999999999999999999999999999999999999999999999999999999999999999"
            "9"},
       }) {
    std::string bin = Bin(c.in, c.precision, c.frac);
    EXPECT_EQ(bin.size(), static_cast<size_t>(*DecimalBinSize(c.precision, c.frac))) << c.in;
    Result<std::string> text = Text(bin, c.precision, c.frac);
    ASSERT_TRUE(text.ok()) << c.in << ": " << text.status().ToString();
    EXPECT_EQ(*text, c.out);
  }
}

TEST(DecimalTest, ExtraFractionDigitsRoundHalfUp) {
  EXPECT_EQ(*Text(Bin("1.235", 5, 2), 5, 2), "1.24");
  EXPECT_EQ(*Text(Bin("1.234", 5, 2), 5, 2), "1.23");
  EXPECT_EQ(*Text(Bin("-1.235", 5, 2), 5, 2), "-1.24");
  EXPECT_EQ(*Text(Bin("9.995", 4, 2), 4, 2), "10.00");
  EXPECT_EQ(*Text(Bin("0.999", 3, 2), 3, 2), "1.00");
  std::string out;
  EXPECT_EQ(EncodeDecimalBin("99.995", 4, 2, &out).code(), Code::kInvalidArgument);
  EXPECT_EQ(EncodeDecimalBin("100", 4, 2, &out).code(), Code::kInvalidArgument);
  EXPECT_TRUE(out.empty());
}

TEST(DecimalTest, BinOrderMatchesNumericOrder) {
  std::vector<std::string> sorted = {"-99999.999", "-1000", "-1.001", "-1",  "-0.001",
                                     "0",          "0.001", "1",      "1.5", "99999.999"};
  std::string prev;
  for (const std::string& v : sorted) {
    std::string bin = Bin(v, 8, 3);
    if (!prev.empty()) {
      EXPECT_LT(prev, bin) << v;
    }
    prev = bin;
  }
}

TEST(DecimalTest, PrecisionAndFracOfText) {
  int p = 0, f = 0;
  ASSERT_TRUE(DecimalPrecisionAndFrac("-0012.340", &p, &f).ok());
  EXPECT_EQ(p, 5);
  EXPECT_EQ(f, 3);
  ASSERT_TRUE(DecimalPrecisionAndFrac("0", &p, &f).ok());
  EXPECT_EQ(p, 1);
  EXPECT_EQ(f, 0);
}

TEST(DecimalTest, MalformedTextIsInvalidArgument) {
  for (const char* bad : {"", "-", ".", "1e5", "1.2.3", " 1", "1 ", "0x10", "--1"}) {
    std::string out;
    EXPECT_EQ(EncodeDecimalBin(bad, 10, 2, &out).code(), Code::kInvalidArgument) << bad;
  }
}

TEST(DecimalTest, DecodeRejectsGroupsOutOfRange) {
  // DECIMAL(2,0) keeps 0..99 in one byte; 100 is not a valid group.
  EXPECT_EQ(Text(Unhex("E4"), 2, 0).status().code(), Code::kCorruption);
  EXPECT_EQ(*Text(Unhex("E3"), 2, 0), "99");
  // A full word must stay below 10^9 (0x3B9ACA00).
  EXPECT_EQ(Text(Unhex("BB 9A CA 00"), 9, 0).status().code(), Code::kCorruption);
  EXPECT_EQ(*Text(Unhex("BB 9A C9 FF"), 9, 0), "999999999");
  // Trailing fraction group: DECIMAL(3,3) holds 0..999 in two bytes.
  EXPECT_EQ(Text(Unhex("83 E8"), 3, 3).status().code(), Code::kCorruption);
}

TEST(DecimalTest, DecodeRejectsTruncationAndBadPrecision) {
  std::string bin = Bin("1234567890.1234", 14, 4);
  for (size_t n = 0; n < bin.size(); ++n) {
    EXPECT_EQ(Text(bin.substr(0, n), 14, 4).status().code(), Code::kCorruption) << n;
  }
  EXPECT_EQ(Text(bin, 3, 5).status().code(), Code::kCorruption);
  EXPECT_EQ(Text(bin, 0, 0).status().code(), Code::kCorruption);
  EXPECT_EQ(Text(bin, 90, 0).status().code(), Code::kCorruption);
}

}  // namespace
}  // namespace sluice::codec
