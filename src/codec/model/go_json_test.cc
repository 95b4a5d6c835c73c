#include "codec/model/go_json.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace sluice::model {
namespace {

std::string MarshalString(std::string_view s) { return GoMarshal(JsonValue(std::string(s))); }

TEST(GoMarshalTest, EscapesHtmlCharactersLikeGo) {
  EXPECT_EQ(MarshalString("a<b>&c"), R"("a\u003cb\u003e\u0026c")");
}

TEST(GoMarshalTest, EscapesControlCharacters) {
  EXPECT_EQ(MarshalString(std::string("\x01\b\f\n\r\t\"\\\x1f", 9)),
            R"("\u0001\b\f\n\r\t\"\\\u001f")");
  EXPECT_EQ(MarshalString(std::string("a\0b", 3)), R"("a\u0000b")");
}

TEST(GoMarshalTest, KeepsValidMultibyteTextButEscapesLineSeparators) {
  EXPECT_EQ(MarshalString("\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80"),
            "\"\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80\"");
  EXPECT_EQ(MarshalString("a\xe2\x80\xa8z\xe2\x80\xa9"), R"("a\u2028z\u2029")");
  EXPECT_EQ(MarshalString("\x7f"), "\"\x7f\"");
}

TEST(GoMarshalTest, ReplacesEachInvalidUtf8ByteWithReplacementEscape) {
  EXPECT_EQ(MarshalString("\xff"), R"("\ufffd")");
  EXPECT_EQ(MarshalString("a\xe4\xb8"), R"("a\ufffd\ufffd")");                    // Truncated.
  EXPECT_EQ(MarshalString("\xed\xa0\x80"), R"("\ufffd\ufffd\ufffd")");            // Surrogate.
  EXPECT_EQ(MarshalString("\xc0\xaf"), R"("\ufffd\ufffd")");                      // Overlong.
  EXPECT_EQ(MarshalString("\xf4\x90\x80\x80"), R"("\ufffd\ufffd\ufffd\ufffd")");  // > U+10FFFF.
}

TEST(GoMarshalTest, FormatsFloatsLikeGo) {
  EXPECT_EQ(GoMarshal(JsonValue(0.5)), "0.5");
  EXPECT_EQ(GoMarshal(JsonValue(123.0)), "123");
  EXPECT_EQ(GoMarshal(JsonValue(1e20)), "100000000000000000000");
  EXPECT_EQ(GoMarshal(JsonValue(1e21)), "1e+21");
  EXPECT_EQ(GoMarshal(JsonValue(0.000001)), "0.000001");
  EXPECT_EQ(GoMarshal(JsonValue(1.5e-7)), "1.5e-7");
  EXPECT_EQ(GoMarshal(JsonValue(2.5e-12)), "2.5e-12");
  EXPECT_EQ(GoMarshal(JsonValue(-0.0)), "-0");
}

TEST(GoMarshalTest, WritesIntegerExtremesExactly) {
  EXPECT_EQ(GoMarshal(JsonValue(std::numeric_limits<int64_t>::min())), "-9223372036854775808");
  EXPECT_EQ(GoMarshal(JsonValue(std::numeric_limits<uint64_t>::max())), "18446744073709551615");
}

TEST(GoMarshalTest, KeepsObjectKeyOrderAndWritesCompactly) {
  JsonValue value = JsonValue::object();
  value["z"] = 1;
  value["a"] = JsonValue::array({true, nullptr, "x"});
  value["m"] = JsonValue::object();
  EXPECT_EQ(GoMarshal(value), R"({"z":1,"a":[true,null,"x"],"m":{}})");
}

TEST(ParseJsonDocumentTest, RoundTripsThroughGoMarshal) {
  const std::string text = R"({"b":[1,-2,18446744073709551615],"a":{"s":"\u003c\u00e9"}})";
  auto parsed = ParseJsonDocument(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(GoMarshal(*parsed), R"({"b":[1,-2,18446744073709551615],"a":{"s":"\u003c)"
                                "\xc3\xa9\"}}");
}

TEST(ParseJsonDocumentTest, RejectsMalformedTruncatedAndTrailingText) {
  for (std::string_view bad : {"", "{", R"({"a":1)", R"({"a":1}x)", R"({"a":1} {})", "[1,]",
                               R"({'a':1})", "nul", "\"\xff\""}) {
    auto parsed = ParseJsonDocument(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), Code::kCorruption) << bad;
  }
}

TEST(ParseJsonDocumentTest, BoundsNestingDepthButIgnoresBracketsInStrings) {
  const std::string at_limit = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_TRUE(ParseJsonDocument(at_limit).ok());
  const std::string too_deep =
      std::string(kMaxJsonDepth + 1, '[') + std::string(kMaxJsonDepth + 1, ']');
  auto deep = ParseJsonDocument(too_deep);
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.status().code(), Code::kCorruption);
  const std::string in_string = "[\"" + std::string(kMaxJsonDepth + 5, '[') + "\\\"\"]";
  EXPECT_TRUE(ParseJsonDocument(in_string).ok());
}

TEST(Base64Test, MatchesStandardVectors) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode("foob"), "Zm9vYg==");
  EXPECT_EQ(Base64Encode(std::string("\x00\xff\x10", 3)), "AP8Q");
}

TEST(Base64Test, DecodesWhatItEncodesForEveryTailLength) {
  std::string bytes;
  for (int i = 0; i < 12; ++i) {
    bytes.push_back(static_cast<char>(i * 37 + 200));
    auto decoded = Base64Decode(Base64Encode(bytes));
    ASSERT_TRUE(decoded.has_value());
    EXPECT_EQ(*decoded, bytes);
  }
}

TEST(Base64Test, SkipsLineBreaksAndRejectsNonCanonicalText) {
  EXPECT_EQ(Base64Decode("Zm9v\r\nYg=="), "foob");
  for (std::string_view bad : {"Zg=", "Z===", "Zm9v!", "=Zg=", "Zg==Zg==", "Zm 9v"}) {
    EXPECT_FALSE(Base64Decode(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace sluice::model
