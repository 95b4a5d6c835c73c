#include "common/hex.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(HexTest, EncodeBothCases) {
  std::string bytes("\x00\x7f\xab\xff", 4);
  EXPECT_EQ(HexEncode(bytes), "007fabff");
  EXPECT_EQ(HexEncode(bytes, HexCase::kUpper), "007FABFF");
  EXPECT_EQ(HexEncode(""), "");
}

TEST(HexTest, DecodeRoundTripAndRejects) {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  EXPECT_EQ(HexDecode(HexEncode(all)), all);
  EXPECT_EQ(HexDecode(HexEncode(all, HexCase::kUpper)), all);
  EXPECT_EQ(HexDecode("abc"), std::nullopt);  // odd length
  EXPECT_EQ(HexDecode("zz"), std::nullopt);   // not hex
  EXPECT_EQ(HexDecode("0g"), std::nullopt);
}

}  // namespace
}  // namespace sluice
