#include "filter/go_regex.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sluice::filter {
namespace {

bool Search(std::string_view pattern, std::string_view text, bool icase = false) {
  Result<GoRegex> re = GoRegex::Compile(pattern, icase);
  EXPECT_TRUE(re.ok()) << pattern << ": " << re.status().ToString();
  return re.ok() && re->Search(text);
}

TEST(GoRegexTest, SearchIsUnanchoredLikeMatchString) {
  EXPECT_TRUE(Search("add column", "ALTER TABLE t add column c int"));
  EXPECT_FALSE(Search("^add column", "ALTER TABLE t add column c int"));
  EXPECT_TRUE(Search("^DROP TABLE", "DROP TABLE t1"));
  EXPECT_TRUE(Search("--6", "select --6"));
  EXPECT_TRUE(Search("t1$", "drop table t1"));
  EXPECT_FALSE(Search("t1$", "drop table t1\n"));  // `$` is end of text without (?m)
}

TEST(GoRegexTest, CaseInsensitivity) {
  EXPECT_FALSE(Search("^drop", "DROP TABLE t"));
  EXPECT_TRUE(Search("^drop", "DROP TABLE t", /*icase=*/true));
  EXPECT_TRUE(Search("(?i)^drop", "DROP TABLE t"));
  EXPECT_TRUE(Search("(?i)(?s)^drop.t", "DROP\nt"));
  EXPECT_TRUE(Search("[A-Z]+x", "abcx", /*icase=*/true));
}

TEST(GoRegexTest, GoSemanticsThatDifferFromEcmaScript) {
  // `.` matches '\r' but not '\n' (ECMAScript's `.` rejects both).
  EXPECT_TRUE(Search("a.b", "a\rb"));
  EXPECT_FALSE(Search("a.b", "a\nb"));
  EXPECT_TRUE(Search("(?s)a.b", "a\nb"));
  // A leading ']' in a class is literal; stray ']' and '}' are literal.
  EXPECT_TRUE(Search("[]a]", "]"));
  EXPECT_TRUE(Search("x]", "x]"));
  EXPECT_TRUE(Search("x}", "x}"));
  // `{` that does not start a repetition is literal.
  EXPECT_TRUE(Search("a{,3}", "a{,3}"));
  EXPECT_TRUE(Search("a{x", "a{x"));
  EXPECT_TRUE(Search("^a{2,3}$", "aaa"));
  EXPECT_FALSE(Search("^a{2,3}$", "aaaa"));
  // \s is [\t\n\f\r ] (no \v); \A and \z anchor the text.
  EXPECT_FALSE(Search("a\\sb", "a\vb"));
  EXPECT_TRUE(Search("\\Aab\\z", "ab"));
  // Named groups, \Q...\E, \x{...}, POSIX classes.
  EXPECT_TRUE(Search("(?P<word>ab)+c", "ababc"));
  EXPECT_TRUE(Search("\\Q1+1=2\\E", "so 1+1=2"));
  EXPECT_TRUE(Search("\\x{4e2d}\\x41", "中A"));
  EXPECT_TRUE(Search("^[[:alpha:][:word:]]+$", "ab_c"));
  // A quantifier repeats a whole multi-byte rune.
  EXPECT_TRUE(Search("^中+$", "中中中"));
}

TEST(GoRegexTest, RejectsWhatGoRejectsOrWeCannotRunFaithfully) {
  const std::vector<std::string> bad = {
      "^[",      "(a",           "a)",       "(?=x)",   "(?!x)",         "(?<=x)",
      "(?<!x)",  "(a)\\1",       "\\p{Han}", "\\PL",    "a(?i)b",        "(?m)^a",
      "\\y",     "x\\",          "[é]",      "a{1001}", "(a{100}){100}", "\\x{110000}",
      "(?P<>a)", "[[:^alpha:]]", "\\é",      "a\xff",
  };
  for (const std::string& pattern : bad) {
    Result<GoRegex> re = GoRegex::Compile(pattern, false);
    ASSERT_FALSE(re.ok()) << pattern << " -> " << re->translated();
    EXPECT_EQ(re.status().code(), Code::kInvalidArgument);
    EXPECT_NE(re.status().message().find(pattern), std::string_view::npos)
        << re.status().ToString();
  }
}

TEST(GoRegexTest, LongTextNeitherOverflowsNorHangs) {
  // One MiB of DDL text: the default depth-first std::regex executor recurses
  // per character on `.*` and would overflow the stack, and a search that
  // restarts at every position would take minutes on `(x|y)*comment`.
  std::string text = "CREATE TABLE t (" + std::string(1 << 20, 'x') + ") COMMENT 'tail'";
  EXPECT_TRUE(Search("^create.*tail'$", text, /*icase=*/true));
  EXPECT_FALSE(Search("^create.*nope", text, /*icase=*/true));
  EXPECT_TRUE(Search("(x|y)*comment", text, /*icase=*/true));
}

}  // namespace
}  // namespace sluice::filter
