#include "codec/json_binary.h"

#include <gtest/gtest.h>

#include <bit>
#include <limits>
#include <nlohmann/json.hpp>

#include "codec/endian.h"
#include "codec/test_util.h"

namespace sluice::codec {
namespace {

using testing::Hex;
using testing::Unhex;

// {"a": 1, "b": [true, null, "x"]} laid out by hand from the format:
// header, key entries, value entries, keys, then values.
const std::string kGoldenDoc = Unhex(
    "01"                       // type: object
    "02 00 00 00 41 00 00 00"  // 2 members, 65 bytes
    "1E 00 00 00 01 00"        // key "a" at 30, length 1
    "1F 00 00 00 01 00"        // key "b" at 31, length 1
    "09 20 00 00 00"           // a: int64 at 32
    "03 28 00 00 00"           // b: array at 40
    "61 62"                    // "a" "b"
    "01 00 00 00 00 00 00 00"  // 1
    "03 00 00 00 19 00 00 00"  // array: 3 elements, 25 bytes
    "04 01 00 00 00"           // true (inline literal)
    "04 00 00 00 00"           // null (inline literal)
    "0C 17 00 00 00"           // string at 23 within the array
    "01 78");                  // "x"

std::string Typed(uint8_t type, std::string_view body) {
  std::string out(1, static_cast<char>(type));
  out.append(body);
  return out;
}

std::string Le64(uint64_t v) {
  std::string out;
  internal::AppendLe64(v, &out);
  return out;
}

std::string FloatDoc(double v) {
  return Typed(json_type::kFloat64, Le64(std::bit_cast<uint64_t>(v)));
}

std::string TextOf(std::string_view typed) {
  Result<std::string> text = JsonBinaryToText(typed);
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  return text.ok() ? *text : "<error>";
}

Code ErrorOf(std::string_view typed) { return JsonBinaryToText(typed).status().code(); }

TEST(JsonBinaryTest, DecodesHandBuiltDocument) {
  EXPECT_EQ(TextOf(kGoldenDoc), R"({"a": 1, "b": [true, null, "x"]})");
  EXPECT_EQ(*JsonBinaryLength(kGoldenDoc + "trailing"), kGoldenDoc.size());
}

TEST(JsonBinaryTest, EncoderProducesTheSameLayout) {
  Result<std::string> bin = JsonTextToBinary(R"({"b": [true, null, "x"], "a": 1})");
  ASSERT_TRUE(bin.ok()) << bin.status().ToString();
  EXPECT_EQ(Hex(*bin), Hex(kGoldenDoc));
}

TEST(JsonBinaryTest, Scalars) {
  EXPECT_EQ(TextOf(Typed(json_type::kInt64, Le64(static_cast<uint64_t>(-5)))), "-5");
  EXPECT_EQ(TextOf(Typed(json_type::kUint64, Le64(~uint64_t{0}))), "18446744073709551615");
  EXPECT_EQ(TextOf(Unhex("04 00")), "null");
  EXPECT_EQ(TextOf(Unhex("04 01")), "true");
  EXPECT_EQ(TextOf(Unhex("04 02")), "false");
  EXPECT_EQ(TextOf(Unhex("0C 03 61 62 63")), "\"abc\"");
}

TEST(JsonBinaryTest, FloatsFormatLikeTiDB) {
  EXPECT_EQ(TextOf(FloatDoc(1.5)), "1.5");
  EXPECT_EQ(TextOf(FloatDoc(100)), "100.0");
  EXPECT_EQ(TextOf(FloatDoc(0.0)), "0.0");
  EXPECT_EQ(TextOf(FloatDoc(-0.0)), "-0.0");
  EXPECT_EQ(TextOf(FloatDoc(0.1)), "0.1");
  EXPECT_EQ(TextOf(FloatDoc(1e-15)), "0.000000000000001");
  EXPECT_EQ(TextOf(FloatDoc(123456789012345.67)), "123456789012345.67");
  EXPECT_EQ(TextOf(FloatDoc(1e15)), "1e15");
  EXPECT_EQ(TextOf(FloatDoc(1e20)), "1e20");
  EXPECT_EQ(TextOf(FloatDoc(-1.5e-20)), "-1.5e-20");
  EXPECT_EQ(ErrorOf(FloatDoc(std::numeric_limits<double>::quiet_NaN())), Code::kCorruption);
  EXPECT_EQ(ErrorOf(FloatDoc(std::numeric_limits<double>::infinity())), Code::kCorruption);
}

TEST(JsonBinaryTest, StringsEscapeLikeGo) {
  std::string s = "a\"b\\c\n\r\t\b\f\x01<>&\x7f";
  std::string doc = Typed(json_type::kString, std::string(1, static_cast<char>(s.size())) + s);
  EXPECT_EQ(TextOf(doc), "\"a\\\"b\\\\c\\n\\r\\t\\b\\f\\u0001<>&\x7f\"");
  EXPECT_EQ(TextOf(Unhex("0C 02 C3 A9")), "\"\xC3\xA9\"");                  // é kept
  EXPECT_EQ(TextOf(Unhex("0C 03 E2 80 A8")), "\"\\u2028\"");                // line separator
  EXPECT_EQ(TextOf(Unhex("0C 02 FF 61")), "\"\\ufffda\"");                  // invalid byte
  EXPECT_EQ(TextOf(Unhex("0C 03 ED A0 80")), "\"\\ufffd\\ufffd\\ufffd\"");  // surrogate
  EXPECT_EQ(TextOf(Unhex("0C 02 C0 80")), "\"\\ufffd\\ufffd\"");            // overlong
}

TEST(JsonBinaryTest, OpaqueTimesAndDurations) {
  EXPECT_EQ(TextOf(Unhex("0D FD 03 61 62 63")), "\"base64:type253:YWJj\"");
  EXPECT_EQ(TextOf(Unhex("0D FC 02 61 62")), "\"base64:type252:YWI=\"");
  EXPECT_EQ(TextOf(Unhex("0D 0F 01 61")), "\"base64:type15:YQ==\"");
  EXPECT_EQ(TextOf(Unhex("0E 00 00 00 00 00 44 90 1F")), "\"2020-01-02\"");
  EXPECT_EQ(TextOf(Unhex("0F 60 00 00 05 31 44 90 1F")), "\"2020-01-02 03:04:05.000006\"");
  EXPECT_EQ(TextOf(Unhex("10 60 00 00 05 31 44 90 1F")), "\"2020-01-02 03:04:05.000006\"");
  std::string duration = Le64(3723000000000ULL) + Unhex("00 00 00 00");
  EXPECT_EQ(TextOf(Typed(json_type::kDuration, duration)), "\"01:02:03.000000\"");
}

TEST(JsonBinaryTest, TextRoundTrips) {
  for (const char* text :
       {R"({"a": 1, "b": [true, null, "x"]})", "[]", "{}", "\"str\"", "-9223372036854775808",
        "18446744073709551615", "1.5", "null", R"([1, [2, [3, {"k": false}]]])",
        R"({"": "", "z": {"y": [1.25, -0.5]}})", "\"\xE6\x97\xA5\xE6\x9C\xAC\"",
        R"([{"a": {"b": {"c": [[], {}]}}}, 1e20, "q\"uote"])"}) {
    Result<std::string> bin = JsonTextToBinary(text);
    ASSERT_TRUE(bin.ok()) << text << ": " << bin.status().ToString();
    EXPECT_EQ(TextOf(*bin), text);
  }
}

TEST(JsonBinaryTest, NumberTypesAndKeyOrder) {
  EXPECT_EQ((*JsonTextToBinary("9223372036854775807"))[0], json_type::kInt64);
  EXPECT_EQ((*JsonTextToBinary("9223372036854775808"))[0], json_type::kUint64);
  EXPECT_EQ((*JsonTextToBinary("-1"))[0], json_type::kInt64);
  EXPECT_EQ(TextOf(*JsonTextToBinary("1.0")), "1.0");
  EXPECT_EQ(TextOf(*JsonTextToBinary("1e2")), "100.0");
  EXPECT_EQ(TextOf(*JsonTextToBinary("18446744073709551616")), "1.8446744073709552e19");
  EXPECT_EQ(TextOf(*JsonTextToBinary(R"({"b":1,"a":2,"aa":3,"B":4})")),
            R"({"B": 4, "a": 2, "aa": 3, "b": 1})");
  EXPECT_EQ(JsonTextToBinary("{").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(JsonTextToBinary("[1] x").status().code(), Code::kInvalidArgument);
}

// Wraps a typed container into a one-element array.
std::string WrapInArray(const std::string& typed) {
  std::string body;
  internal::AppendLe32(1, &body);
  internal::AppendLe32(static_cast<uint32_t>(13 + typed.size() - 1), &body);
  body.push_back(typed[0]);
  internal::AppendLe32(13, &body);
  body.append(typed, 1);
  return Typed(json_type::kArray, body);
}

TEST(JsonBinaryTest, DepthIsBounded) {
  std::string deep = Unhex("03 00 00 00 00 08 00 00 00");  // []
  for (int i = 1; i < kMaxJsonDepth; ++i) deep = WrapInArray(deep);
  EXPECT_TRUE(JsonBinaryToText(deep).ok());
  EXPECT_EQ(ErrorOf(WrapInArray(deep)), Code::kCorruption);

  std::string text(kMaxJsonDepth, '[');
  text.append(kMaxJsonDepth, ']');
  EXPECT_TRUE(JsonTextToBinary(text).ok());
  EXPECT_EQ(JsonTextToBinary("[" + text + "]").status().code(), Code::kInvalidArgument);
}

TEST(JsonBinaryTest, EveryTruncationIsCorruption) {
  for (size_t n = 0; n < kGoldenDoc.size(); ++n) {
    EXPECT_EQ(ErrorOf(kGoldenDoc.substr(0, n)), Code::kCorruption) << n;
  }
  EXPECT_EQ(ErrorOf(kGoldenDoc + "x"), Code::kCorruption);
}

TEST(JsonBinaryTest, CorruptHeadersAndOffsets) {
  auto patched = [](size_t pos, std::string_view bytes) {
    std::string doc = kGoldenDoc;
    doc.replace(pos, bytes.size(), bytes);
    return doc;
  };
  EXPECT_EQ(ErrorOf(patched(0, Unhex("02"))), Code::kCorruption);            // unknown type
  EXPECT_EQ(ErrorOf(patched(1, Unhex("E8 03 00 00"))), Code::kCorruption);   // count 1000
  EXPECT_EQ(ErrorOf(patched(5, Unhex("07 00 00 00"))), Code::kCorruption);   // size < header
  EXPECT_EQ(ErrorOf(patched(9, Unhex("FF FF 00 00"))), Code::kCorruption);   // key offset
  EXPECT_EQ(ErrorOf(patched(13, Unhex("FF FF"))), Code::kCorruption);        // key length
  EXPECT_EQ(ErrorOf(patched(21, Unhex("02"))), Code::kCorruption);           // entry type
  EXPECT_EQ(ErrorOf(patched(22, Unhex("41 00 00 00"))), Code::kCorruption);  // value offset
  EXPECT_EQ(ErrorOf(patched(45, Unhex("1A 00 00 00"))), Code::kCorruption);  // inner size
  EXPECT_EQ(ErrorOf(patched(50, Unhex("05"))), Code::kCorruption);           // bad literal
  EXPECT_EQ(ErrorOf(patched(64, Unhex("05"))), Code::kCorruption);           // string length
  EXPECT_EQ(ErrorOf(Unhex("04 07")), Code::kCorruption);
  EXPECT_EQ(ErrorOf(Unhex("0C 05 61")), Code::kCorruption);
  EXPECT_EQ(ErrorOf(Unhex("0D FD")), Code::kCorruption);
  EXPECT_EQ(ErrorOf(Unhex("09 01 02")), Code::kCorruption);
  EXPECT_EQ(ErrorOf(""), Code::kCorruption);
}

TEST(JsonBinaryTest, SharedAndCyclicOffsetsAreRejected) {
  // 1000 entries all pointing at one 100-byte string: valid offsets, but the
  // output would be far larger than the input.
  const uint32_t n = 1000;
  std::string body;
  internal::AppendLe32(n, &body);
  internal::AppendLe32(0, &body);
  uint32_t string_off = 8 + 5 * n;
  for (uint32_t i = 0; i < n; ++i) {
    body.push_back(static_cast<char>(json_type::kString));
    internal::AppendLe32(string_off, &body);
  }
  body.push_back(100);
  body.append(100, 'z');
  internal::StoreLe32(static_cast<uint32_t>(body.size()), body.data() + 4);
  EXPECT_EQ(ErrorOf(Typed(json_type::kArray, body)), Code::kCorruption);
  // An array whose only element is itself.
  EXPECT_EQ(ErrorOf(Unhex("03 01 00 00 00 0D 00 00 00 03 00 00 00 00")), Code::kCorruption);
}

TEST(JsonBinaryTest, EncoderRejectsUnrepresentableValues) {
  std::string out;
  EXPECT_EQ(EncodeJsonBinary(nlohmann::json(std::numeric_limits<double>::infinity()), &out).code(),
            Code::kInvalidArgument);
  nlohmann::json obj;
  obj[std::string(70000, 'k')] = 1;
  EXPECT_EQ(EncodeJsonBinary(obj, &out).code(), Code::kInvalidArgument);
  EXPECT_EQ(EncodeJsonBinary(nlohmann::json::binary({1, 2}), &out).code(), Code::kInvalidArgument);
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace sluice::codec
