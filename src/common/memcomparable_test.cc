#include "common/memcomparable.h"

#include <gtest/gtest.h>

#include <random>

namespace sluice::memcomparable {
namespace {

std::string Hex(std::string_view s) {
  static const char* d = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (!out.empty()) out.push_back(' ');
    out.push_back(d[c >> 4]);
    out.push_back(d[c & 15]);
  }
  return out;
}

// Golden vectors of TiDB's EncodeBytes and of a table row key.
TEST(MemcomparableTest, GoldenVectors) {
  EXPECT_EQ(Hex(EncodeBytes("")), "00 00 00 00 00 00 00 00 F7");
  EXPECT_EQ(Hex(EncodeBytes(std::string("\x01\x02\x03", 3))), "01 02 03 00 00 00 00 00 FA");
  EXPECT_EQ(Hex(EncodeBytes(std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8))),
            "01 02 03 04 05 06 07 08 FF 00 00 00 00 00 00 00 00 F7");
  // Row key of table 100, handle 1, in its 27-byte comparable form.
  std::string row("\x74\x80\x00\x00\x00\x00\x00\x00\x64\x5F\x72\x80\x00\x00\x00\x00\x00\x00\x01",
                  19);
  EXPECT_EQ(Hex(EncodeBytes(row)),
            "74 80 00 00 00 00 00 00 FF 64 5F 72 80 00 00 00 00 FF 00 00 01 00 00 00 00 00 FA");
}

TEST(MemcomparableTest, RoundTripAndOrder) {
  std::mt19937 rng(7);
  std::vector<std::string> raws;
  for (int i = 0; i < 300; ++i) {
    std::string s(rng() % 40, '\0');
    for (auto& c : s) c = static_cast<char>(rng() % 4);  // many shared prefixes
    raws.push_back(s);
  }
  for (const auto& a : raws) {
    std::string enc = EncodeBytes(a);
    EXPECT_EQ(enc.size(), EncodedLength(a.size()));
    auto dec = DecodeWhole(enc);
    ASSERT_TRUE(dec.ok()) << dec.status().ToString();
    EXPECT_EQ(*dec, a);
    for (const auto& b : raws) {
      EXPECT_EQ(a < b, enc < EncodeBytes(b));
    }
  }
}

TEST(MemcomparableTest, DecodeLeavesRestAndRejectsGarbage) {
  std::string enc = EncodeBytes("abc") + "tail";
  std::string_view in = enc;
  std::string out;
  ASSERT_TRUE(DecodeBytes(&in, &out).ok());
  EXPECT_EQ(out, "abc");
  EXPECT_EQ(in, "tail");

  EXPECT_EQ(DecodeWhole("abc").status().code(), Code::kCorruption);     // truncated
  EXPECT_EQ(DecodeWhole(std::string(8, 'a') + "\x01").status().code(),  // marker
            Code::kCorruption);
  EXPECT_EQ(DecodeWhole(std::string("ab\x01\0\x05\0\0\0\xFA", 9)).status().code(),  // padding
            Code::kCorruption);
  EXPECT_EQ(DecodeWhole(EncodeBytes("x") + "y").status().code(), Code::kCorruption);
}

}  // namespace
}  // namespace sluice::memcomparable
