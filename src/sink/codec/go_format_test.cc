#include "sink/codec/go_format.h"

#include <gtest/gtest.h>

#include <cmath>

namespace sluice::sink::codec {
namespace {

// Expected strings are what Go's strconv.FormatFloat(v, fmt, -1, bits)
// prints (fmt "%v" of a float is the 'g' form).
TEST(GoFormatFloatTest, GFormMatchesGo) {
  EXPECT_EQ(GoFormatFloat(1e6, 'g', 64), "1e+06");
  EXPECT_EQ(GoFormatFloat(123456789.0, 'g', 64), "1.23456789e+08");
  EXPECT_EQ(GoFormatFloat(100000.0, 'g', 64), "100000");
  EXPECT_EQ(GoFormatFloat(0.0001, 'g', 64), "0.0001");
  EXPECT_EQ(GoFormatFloat(0.00001, 'g', 64), "1e-05");
  EXPECT_EQ(GoFormatFloat(12345.678, 'g', 64), "12345.678");
  EXPECT_EQ(GoFormatFloat(3.14, 'g', 64), "3.14");
  EXPECT_EQ(GoFormatFloat(3.14f, 'g', 32), "3.14");
  EXPECT_EQ(GoFormatFloat(16777216.0f, 'g', 32), "1.6777216e+07");
  EXPECT_EQ(GoFormatFloat(0.0, 'g', 64), "0");
  EXPECT_EQ(GoFormatFloat(-0.0, 'g', 64), "-0");
  EXPECT_EQ(GoFormatFloat(-2.5, 'g', 64), "-2.5");
  EXPECT_EQ(GoFormatFloat(5e-324, 'g', 64), "5e-324");
  EXPECT_EQ(GoFormatFloat(1.7976931348623157e308, 'g', 64), "1.7976931348623157e+308");
  EXPECT_EQ(GoFormatFloat(1e100, 'g', 64), "1e+100");
}

TEST(GoFormatFloatTest, FFormMatchesGo) {
  EXPECT_EQ(GoFormatFloat(1e6, 'f', 64), "1000000");
  EXPECT_EQ(GoFormatFloat(1e21, 'f', 64), "1000000000000000000000");
  EXPECT_EQ(GoFormatFloat(1e-7, 'f', 64), "0.0000001");
  EXPECT_EQ(GoFormatFloat(0.1f, 'f', 32), "0.1");
  EXPECT_EQ(GoFormatFloat(3.14f, 'f', 32), "3.14");
  EXPECT_EQ(GoFormatFloat(-123.25, 'f', 64), "-123.25");
  EXPECT_EQ(GoFormatFloat(0.0, 'f', 64), "0");
  EXPECT_EQ(GoFormatFloat(2.5f, 'f', 32), "2.5");
}

std::string Easy(std::string_view s) {
  std::string out;
  AppendEasyJsonString(s, &out);
  return out;
}

TEST(EasyJsonStringTest, EscapesLikeJwriter) {
  EXPECT_EQ(Easy("plain"), "\"plain\"");
  EXPECT_EQ(Easy("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(Easy("\t\r\n\b\f"), R"("\t\r\n\u0008\u000c")");
  EXPECT_EQ(Easy("<a>&"), R"("\u003ca\u003e\u0026")");
  EXPECT_EQ(Easy("\x7f"), "\"\x7f\"");
  EXPECT_EQ(Easy("\xff"), R"("\ufffd")");
  EXPECT_EQ(Easy("\xe2\x80\xa8|\xe2\x80\xa9"), R"("\u2028|\u2029")");
  EXPECT_EQ(Easy("你好"), "\"你好\"");
}

// TiCDC docs (ticdc-canal-json.md, "Binary and BLOB types"): the VARBINARY
// bytes [5 7 10 15 36 50 43 99 120 60 38 255 254 45 55 70] are written as
// "\u0005\u0007\n\u000f$2+cx\u003c\u0026ÿþ-7F".
TEST(EasyJsonStringTest, BinaryAsLatin1MatchesTiCdcDocs) {
  const std::string bytes("\x05\x07\n\x0f$2+cx<&\xff\xfe-7F", 16);
  EXPECT_EQ(Easy(Latin1ToUtf8(bytes)), "\"\\u0005\\u0007\\n\\u000f$2+cx\\u003c\\u0026ÿþ-7F\"");
  EXPECT_EQ(Utf8ToLatin1(Latin1ToUtf8(bytes)), bytes);
  EXPECT_EQ(Utf8ToLatin1("\xe4\xbd\xa0"), std::nullopt);  // U+4F60 > U+00FF.
  EXPECT_EQ(Utf8ToLatin1("\xc3"), std::nullopt);          // Truncated.
}

TEST(GoIndentTest, IndentsLikeJsonMarshalIndent) {
  EXPECT_EQ(GoIndent(R"({"a":1,"b":[],"c":{},"d":[{"e":"x,y:{"}],"f":null})", "    "),
            "{\n"
            "    \"a\": 1,\n"
            "    \"b\": [],\n"
            "    \"c\": {},\n"
            "    \"d\": [\n"
            "        {\n"
            "            \"e\": \"x,y:{\"\n"
            "        }\n"
            "    ],\n"
            "    \"f\": null\n"
            "}");
  EXPECT_EQ(GoIndent(R"({"q":"a\"b,c"})", "  "), "{\n  \"q\": \"a\\\"b,c\"\n}");
}

TEST(HexTest, RoundTrip) {
  EXPECT_EQ(HexEncode("hello world"), "68656c6c6f20776f726c64");
  EXPECT_EQ(HexDecode("68656C6c6f20776f726c64"), "hello world");
  EXPECT_EQ(HexDecode("abc"), std::nullopt);
  EXPECT_EQ(HexDecode("zz"), std::nullopt);
}

}  // namespace
}  // namespace sluice::sink::codec
