#include "common/span.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "common/logging.h"
#include "common/memcomparable.h"

namespace sluice {
namespace {

std::string Bytes(std::initializer_list<int> bytes) {
  std::string out;
  for (int b : bytes) out.push_back(static_cast<char>(b));
  return out;
}

TEST(SpanTest, ContainsAndIsEmpty) {
  Span s{"b", "d"};
  EXPECT_FALSE(s.Contains("a"));
  EXPECT_TRUE(s.Contains("b"));
  EXPECT_TRUE(s.Contains("c\xff"));
  EXPECT_FALSE(s.Contains("d"));
  EXPECT_FALSE(s.IsEmpty());

  Span open_end{"b", ""};
  EXPECT_TRUE(open_end.Contains("zzzz"));
  EXPECT_FALSE(open_end.Contains("a"));
  Span everything{"", ""};
  EXPECT_TRUE(everything.Contains(""));
  EXPECT_TRUE(everything.Contains("\xff\xff"));
  EXPECT_FALSE(everything.IsEmpty());

  EXPECT_TRUE((Span{"d", "d"}.IsEmpty()));
  EXPECT_TRUE((Span{"e", "d"}.IsEmpty()));
  EXPECT_FALSE((Span{"d", "d"}.Contains("d")));
}

TEST(SpanTest, OverlapsAndIntersect) {
  Span a{"b", "f"};
  Span b{"d", "h"};
  EXPECT_TRUE(a.Overlaps(b));
  EXPECT_TRUE(b.Overlaps(a));
  EXPECT_EQ(Intersect(a, b), (Span{"d", "f"}));

  Span touching{"f", "g"};  // Half-open: [b,f) and [f,g) share nothing.
  EXPECT_FALSE(a.Overlaps(touching));
  EXPECT_TRUE(Intersect(a, touching).IsEmpty());

  Span open{"c", ""};
  EXPECT_TRUE(open.Overlaps(a));
  EXPECT_EQ(Intersect(open, a), (Span{"c", "f"}));
  EXPECT_EQ(Intersect(open, Span{"", ""}), open);
  EXPECT_EQ(Intersect(Span{"", ""}, Span{"", ""}), (Span{"", ""}));

  Span empty{"c", "c"};
  EXPECT_FALSE(empty.Overlaps(a));
  EXPECT_FALSE(a.Overlaps(empty));
  EXPECT_TRUE(Intersect(Span{"x", ""}, Span{"", "b"}).IsEmpty());
}

TEST(SpanTest, Covers) {
  Span a{"b", "f"};
  EXPECT_TRUE(a.Covers(Span{"b", "f"}));
  EXPECT_TRUE(a.Covers(Span{"c", "d"}));
  EXPECT_FALSE(a.Covers(Span{"a", "c"}));
  EXPECT_FALSE(a.Covers(Span{"c", ""}));
  EXPECT_TRUE((Span{"a", ""}.Covers(Span{"c", ""})));
  EXPECT_TRUE(a.Covers(Span{"x", "x"}));  // Empty spans are covered by anything.
}

TEST(SpanTest, OrderingTreatsEmptyEndAsInfinity) {
  std::vector<Span> spans = {{"b", ""}, {"b", "c"}, {"a", "z"}, {"", "a"}, {"b", "d"}};
  std::sort(spans.begin(), spans.end());
  EXPECT_EQ(spans, (std::vector<Span>{{"", "a"}, {"a", "z"}, {"b", "c"}, {"b", "d"}, {"b", ""}}));
  EXPECT_TRUE(CompareEndKeys("zzz", "") < 0);
  EXPECT_TRUE(CompareEndKeys("", "zzz") > 0);
  EXPECT_TRUE(CompareEndKeys("", "") == 0);
  EXPECT_TRUE(CompareEndKeys("a", "b") < 0);
}

// TiDB's table keys: table 100, record prefix and the row key of handle 1.
TEST(SpanTest, TableRecordSpanGoldenBytes) {
  EXPECT_EQ(TablePrefix(TableId(100)), Bytes({0x74, 0x80, 0, 0, 0, 0, 0, 0, 0x64}));
  Span raw = TableRecordSpan(TableId(100));
  EXPECT_EQ(raw.start, Bytes({0x74, 0x80, 0, 0, 0, 0, 0, 0, 0x64, 0x5F, 0x72}));
  EXPECT_EQ(raw.end, Bytes({0x74, 0x80, 0, 0, 0, 0, 0, 0, 0x64, 0x5F, 0x73}));

  const std::string row_key =
      Bytes({0x74, 0x80, 0, 0, 0, 0, 0, 0, 0x64, 0x5F, 0x72, 0x80, 0, 0, 0, 0, 0, 0, 0x01});
  const std::string row_key_comparable =
      Bytes({0x74, 0x80, 0, 0,    0, 0, 0,    0, 0xFF, 0x64, 0x5F, 0x72, 0x80, 0,
             0,    0,    0, 0xFF, 0, 0, 0x01, 0, 0,    0,    0,    0,    0xFA});
  EXPECT_TRUE(raw.Contains(row_key));

  Span comparable = ToComparable(raw);
  EXPECT_EQ(comparable.start,
            Bytes({0x74, 0x80, 0, 0, 0, 0, 0, 0, 0xFF, 0x64, 0x5F, 0x72, 0, 0, 0, 0, 0, 0xFA}));
  EXPECT_EQ(comparable.end,
            Bytes({0x74, 0x80, 0, 0, 0, 0, 0, 0, 0xFF, 0x64, 0x5F, 0x73, 0, 0, 0, 0, 0, 0xFA}));
  EXPECT_EQ(memcomparable::EncodeBytes(row_key), row_key_comparable);
  EXPECT_TRUE(comparable.Contains(row_key_comparable));

  // Neighbouring tables do not overlap table 100.
  EXPECT_FALSE(comparable.Contains(ToComparable(TableRecordSpan(TableId(101))).start));
  EXPECT_FALSE(raw.Overlaps(TableRecordSpan(TableId(99))));
  // Index keys of table 100 ("_i") are outside its record span.
  EXPECT_FALSE(raw.Contains(TablePrefix(TableId(100)) + "_i"));
}

TEST(SpanTest, TablePrefixOrdersLikeSignedIds) {
  const std::vector<int64_t> ids = {std::numeric_limits<int64_t>::min(), -1000, -1, 0, 1, 100,
                                    std::numeric_limits<int64_t>::max()};
  for (size_t i = 0; i + 1 < ids.size(); ++i) {
    EXPECT_LT(TableRecordSpan(TableId(ids[i])), TableRecordSpan(TableId(ids[i + 1])));
    EXPECT_LT(TableRecordSpan(TableId(ids[i])).end, TableRecordSpan(TableId(ids[i + 1])).start);
  }
  EXPECT_EQ(TablePrefix(TableId(std::numeric_limits<int64_t>::min())),
            Bytes({0x74, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(TablePrefix(TableId(-1)),
            Bytes({0x74, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}));
}

TEST(SpanTest, ComparableRoundTripKeepsOpenEnds) {
  for (const Span& raw : {Span{"", ""}, Span{"", "abc"}, Span{"abc", ""},
                          TableRecordSpan(TableId(7)), Span{std::string(20, '\0'), "\xff"}}) {
    Span comparable = ToComparable(raw);
    EXPECT_EQ(comparable.start.empty(), raw.start.empty());
    EXPECT_EQ(comparable.end.empty(), raw.end.empty());
    auto back = FromComparable(comparable);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, raw);
  }
}

TEST(SpanTest, FromComparableRejectsGarbage) {
  EXPECT_EQ(FromComparable(Span{"abc", ""}).status().code(), Code::kCorruption);
  std::string trailing = memcomparable::EncodeBytes("k") + "x";
  EXPECT_EQ(FromComparable(Span{"", trailing}).status().code(), Code::kCorruption);
}

TEST(SpanTest, ToStringIsRedacted) {
  Span s{"secret", "\x01\x02"};
  {
    ScopedRedaction on(RedactionMode::kOn);
    EXPECT_EQ(s.ToString(), "[?, ?)");
    EXPECT_EQ((Span{"", ""}.ToString()), "[-inf, +inf)");
  }
  {
    ScopedRedaction off(RedactionMode::kOff);
    EXPECT_EQ(s.ToString(), "[736563726574, 0102)");
    EXPECT_EQ((Span{"", "\xAB"}.ToString()), "[-inf, AB)");
  }
}

}  // namespace
}  // namespace sluice
