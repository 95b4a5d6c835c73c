#include "filter/table_filter.h"

#include <gtest/gtest.h>

#include <random>
#include <regex>
#include <string>
#include <vector>

#include "filter/text.h"

namespace sluice::filter {
namespace {

struct TableCase {
  std::string schema;
  std::string table;
  bool cs;  // accepted when case-sensitive
  bool ci;  // accepted when case-insensitive
};

struct RulesCase {
  std::vector<std::string> rules;
  std::vector<TableCase> tables;
};

TableFilter MustParse(const std::vector<std::string>& rules, bool case_sensitive) {
  Result<TableFilter> f = TableFilter::Parse(rules, case_sensitive);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return f.ok() ? std::move(f).value() : TableFilter();
}

// The examples of TiDB's table-filter documentation and tests.
const std::vector<RulesCase>& MatchTableCases() {
  static const auto* cases = new std::vector<RulesCase>{
      {{}, {{"foo", "bar", false, false}}},
      {{"*.*"}, {{"foo", "bar", true, true}}},
      {{"foo.*"}, {{"foo", "bar", true, true}, {"foo1", "bar", false, false}}},
      {{"*.*", "!foo1.*"},
       {{"foo", "bar", true, true}, {"foo1", "bar", false, false}, {"foo2", "bar", true, true}}},
      {{"foo.bar1"},
       {{"foo", "bar", false, false}, {"foo", "bar1", true, true}, {"fff", "bar1", false, false}}},
      {{"*.*", "!foo.bar"}, {{"foo", "bar", false, false}, {"foo", "bar1", true, true}}},
      {{"/^foo/.*", R"(!/^foo/./^sbtest-\d/)"},
       {{"foo", "sbtest", true, true},
        {"foo1", "sbtest-1", false, false},
        {"fff", "bar", false, false}}},
      {{"*.*", "!foo[bar].*", "!bar?.*", R"(!special\\.*)"},
       {{"foor", "a", false, false},
        {"foo[bar]", "b", true, true},
        {"ba", "c", true, true},
        {"bar?", "d", false, false},
        {R"(special\)", "e", false, false},
        {R"(special\\)", "f", true, true},
        {"bazzz", "g", true, true},
        {R"(special\$)", "h", true, true},
        {"afooa", "i", true, true}}},
      {{"*.*", "!/^FOO/.*", "!*./FoO$/"},
       {{"FOO1", "a", false, false},
        {"foo2", "b", true, false},
        {"BoO3", "cFoO", false, false},
        {"Foo4", "dfoo", true, false},
        {"5", "5", true, true}}},
      {{"*.*", "!a?b?./f[0-9]/"},
       {{"abbd", "f1", false, false},
        {"aaaa", "f2", true, true},
        {"5", "5", true, true},
        {"abbc", "fa", true, true}}},
      {{"*.*", "!/t[0-8]/.a??"},
       {{"t1", "a01", false, false},
        {"t9", "a02", true, true},
        {"5", "5", true, true},
        {"t8", "a001", true, true}}},
      {{"*.*", "!a*.A*"},
       {{"aB", "Ab", false, false}, {"AaB", "aab", true, false}, {"acB", "Afb", false, false}}},
      {{"BAR.*"}, {{"bar", "a", false, true}, {"BAR", "a", true, true}}},
      {{"# comment", "x.y", "   \t"}, {{"x", "y", true, true}, {"y", "y", false, false}}},
      {{"p_123$.45", "中文.表名"},
       {{"p_123", "45", false, false},
        {"p_123$", "45", true, true},
        {"英文", "表名", false, false},
        {"中文", "表名", true, true}}},
      {{R"(\\\..*)"},
       {{R"(\.)", "a", true, true}, {R"(\\\.)", "b", false, false}, {R"(\a)", "c", false, false}}},
      {{"[!a-z].[^a-z]"},
       {{"!", "z", true, true},
        {"!", "^", true, true},
        {"!", "9", false, false},
        {"a", "z", false, false},
        {"a", "^", false, false},
        {"1", "z", true, true},
        {"1", "^", true, true},
        {"1", "9", false, false}}},
      {{"\"some \"\"quoted\"\"\".`identifiers?`"},
       {{"some \"quoted\"", "identifiers?", true, true},
        {"some \"quoted\"", "identifiers!", false, false},
        {"some \"\"quoted\"\"", "identifiers?", false, false},
        {"SOME \"QUOTED\"", "IDENTIFIERS?", false, true},
        {"some\t\"quoted\"", "identifiers?", false, false}}},
      {{"db*.*", "!*.cfg*", "*.cfgsample"},
       {{"irrelevant", "table", false, false},
        {"db1", "tbl1", true, true},
        {"db1", "cfg1", false, false},
        {"db1", "cfgsample", true, true},
        {"else", "cfgsample", true, true}}},
      {{"*.*", "!S.D[!a-d]"},
       {{"S", "D1", false, false},
        {"S", "Da", true, true},
        {"S", "Db", true, true},
        {"S", "Daa", true, true}}},
      {{"*.*", "!S.D[a-d]"},
       {{"S", "D1", true, true},
        {"S", "Da", false, false},
        {"S", "Db", false, false},
        {"S", "Daa", true, true}}},
      // TiCDC's documented changefeed examples.
      {{"*.*", "!test.season", "school.*", "!school.teacher"},
       {{"test", "season", false, false},
        {"other", "x", true, true},
        {"school", "student", true, true},
        {"school", "teacher", false, false}}},
      {{"sns.*", "ecom.*", "!sns.log", "!ecom.test", "haha.xixi"},
       {{"other", "what", false, false},
        {"ecom", "order", true, true},
        {"ecom", "test", false, false},
        {"sns", "log", false, false},
        {"haha", "xixi", true, true},
        {"haha", "", false, false}}},
      // Case folding beyond ASCII, escapes of multi-byte runes, classes.
      {{"ÉCOLE.Ä*", "db.t[À-Ö]"},
       {{"école", "äpfel", false, true},
        {"ÉCOLE", "Äpfel", true, true},
        {"db", "tÉ", true, true},
        {"db", "té", false, true},
        {"db", "tØ", false, false}}},
      {{R"(a\-b.\ä)", "x.[\\]\\-]*"},
       {{"a-b", "ä", true, true},
        {"x", "]", true, true},
        {"x", "-", true, true},
        {"x", "a", false, false}}},
      {{"k.[K]", "s.[S]"},
       {{"k", "\u212A", false, true}, {"k", "k", false, true}, {"s", "\u017F", false, true}}},
      {{"*.*", "!`db.with.dots`.*"},
       {{"db.with.dots", "t", false, false}, {"db", "t", true, true}}},
      {{"a.*", "!a.b", "a.b"}, {{"a", "b", true, true}}},
      // An empty schema pattern is a literal empty name, as in TiDB.
      {{".t"}, {{"", "t", true, true}, {"a", "t", false, false}}},
      {{"a.b", "!a.*"}, {{"a", "b", false, false}, {"a", "c", false, false}}},
      {{"/(?s)^.*$/./x/"}, {{"anything", "box", true, true}, {"anything", "bo", false, false}}},
  };
  return *cases;
}

TEST(TableFilterTest, MatchTableDocumentedCases) {
  for (const RulesCase& c : MatchTableCases()) {
    const TableFilter cs = MustParse(c.rules, true);
    const TableFilter ci = MustParse(c.rules, false);
    for (const TableCase& t : c.tables) {
      const std::string what = ::testing::PrintToString(c.rules) + " " + t.schema + "." + t.table;
      EXPECT_EQ(cs.MatchTable(t.schema, t.table), t.cs) << "case-sensitive " << what;
      EXPECT_EQ(ci.MatchTable(t.schema, t.table), t.ci) << "case-insensitive " << what;
    }
  }
}

TEST(TableFilterTest, MatchSchema) {
  struct SchemaCase {
    std::vector<std::string> rules;
    std::vector<std::tuple<std::string, bool, bool>> schemas;  // name, cs, ci
  };
  const std::vector<SchemaCase> cases = {
      {{}, {{"foo", false, false}}},
      {{"*.*"}, {{"foo", true, true}}},
      {{"foo.*"}, {{"foo", true, true}, {"foo1", false, false}}},
      {{"*.*", "!foo1.*"}, {{"foo", true, true}, {"foo1", false, false}}},
      {{"foo.bar1"}, {{"foo", true, true}, {"foo1", false, false}}},
      // `!foo.bar` does not exclude the whole schema: only `!schema.*` does.
      {{"*.*", "!foo.bar"}, {{"foo", true, true}, {"foo1", true, true}}},
      {{"/^foo/.*", R"(!/^foo/./^sbtest-\d/)"}, {{"foo", true, true}, {"foo2", true, true}}},
      {{"*.*", "!FOO*.*", "!*.*FoO"},
       {{"foo", true, false},
        {"FOO", false, false},
        {"foobar", true, false},
        {"FOOBAR", false, false},
        {"bar", true, true},
        {"BAR", true, true}}},
      // `**` is not TiDB's match-everything pattern, so it does not exclude.
      {{"*.*", "!db.**"}, {{"db", true, true}}},
      {{"sns.*", "haha.xixi"}, {{"haha", true, true}, {"other", false, false}}},
  };
  for (const SchemaCase& c : cases) {
    const TableFilter cs = MustParse(c.rules, true);
    const TableFilter ci = MustParse(c.rules, false);
    for (const auto& [schema, want_cs, want_ci] : c.schemas) {
      EXPECT_EQ(cs.MatchSchema(schema), want_cs) << ::testing::PrintToString(c.rules) << schema;
      EXPECT_EQ(ci.MatchSchema(schema), want_ci) << ::testing::PrintToString(c.rules) << schema;
    }
  }
}

TEST(TableFilterTest, InvalidRulesNameTheRule) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/^t[0-9]+((?!_copy).)*$/.*", "invalid pattern"},
      {"/^t[0-9]+sp(?=copy).*/.*", "look-around"},
      {"a.b.c", "stray characters after table pattern"},
      {"a%b.c", "unexpected special character '%'"},
      {R"(a\tb.c)", "cannot escape a letter or number (\\t)"},
      {"[].*", "failed to parse character class"},
      {"[!].*", "failed to parse character class"},
      {"[.*", "failed to parse character class"},
      {"db.t[1", "failed to parse character class"},
      {R"([\d\D].*)", "failed to parse character class"},
      {"[z-a].*", "invalid character class range"},
      {"[[:alpha:].*", "POSIX classes"},
      {"db", "wrong table pattern"},
      {"db.", "missing pattern"},
      {"!", "missing pattern"},
      {"`db`*.*", "missing '.' between schema and table patterns"},
      {"/db.*", "incomplete regexp"},
      {"//.*", "incomplete regexp"},
      {"`db.*", "incomplete quoted identifier"},
      {"\"db.*", "incomplete quoted identifier"},
      {"\"\".t", "incomplete quoted identifier"},
      {R"(db\)", "cannot place \\ at end of line"},
      {"db.tbl#not comment", "unexpected special character '#'"},
      {"db .t", "unexpected special character ' '"},
      {"db-1.t", "unexpected special character '-'"},
      {"/[/.t", "invalid pattern"},
      {"d*\xff.t", "invalid UTF-8"},
  };
  for (const auto& [rule, message] : cases) {
    Result<TableFilter> f = TableFilter::Parse({"*.*", rule}, false);
    ASSERT_FALSE(f.ok()) << rule;
    EXPECT_EQ(f.status().code(), Code::kInvalidArgument) << rule;
    EXPECT_NE(f.status().message().find("\"" + rule + "\""), std::string_view::npos)
        << f.status().ToString();
    EXPECT_NE(f.status().message().find(message), std::string_view::npos)
        << rule << ": " << f.status().ToString();
  }
}

TEST(TableFilterTest, FileImportIsNotSupported) {
  Result<TableFilter> f = TableFilter::Parse({"@/etc/filter.txt"}, false);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), Code::kNotSupported);
}

TEST(TableFilterTest, BlankAndCommentRulesAreSkipped) {
  const TableFilter f = MustParse({"", "  ", "# all.*", "\tdb.t\t"}, true);
  EXPECT_EQ(f.rule_count(), 1u);
  EXPECT_TRUE(f.MatchTable("db", "t"));
  EXPECT_FALSE(f.MatchTable("all", "t"));
  // Only blank rules: nothing matches (TiCDC substitutes *.* only for an
  // empty list, not for a list of blank rules).
  EXPECT_FALSE(MustParse({""}, true).MatchTable("db", "t"));
}

TEST(TableFilterTest, InvalidUtf8NamesMatchAsReplacementRunes) {
  const TableFilter f = MustParse({"db.t?", "lit\xff.x"}, true);
  EXPECT_TRUE(f.MatchTable("db", "t\xff"));       // one bad byte = one rune
  EXPECT_FALSE(f.MatchTable("db", "t\xff\xfe"));  // two runes
  EXPECT_TRUE(f.MatchTable("lit\xff", "x"));      // literal: bytewise
}

// --- Randomized comparison against std::regex translations of the globs. ---

struct Glob {
  std::string text;   // table-filter syntax
  std::string regex;  // ECMAScript full-match equivalent
};

// Short globs over a small alphabet, half of them wildcards, so that rules of
// one list often match the same names and the rule order matters.
Glob RandomGlob(std::mt19937& rng) {
  static const std::string kLiterals = "abA_$";
  static const std::string kClassChars = "abcAB01";
  auto pick = [&rng](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  Glob g;
  if (pick(5) == 0) return {"*", ".*"};
  const size_t parts = 1 + pick(3);
  for (size_t i = 0; i < parts; ++i) {
    switch (pick(7)) {
      case 0:
      case 1:
        g.text += '*', g.regex += ".*";
        break;
      case 2:
        g.text += '?', g.regex += '.';
        break;
      case 3: {
        const bool negated = pick(3) == 0;
        g.text += negated ? "[!" : "[";
        g.regex += negated ? "[^" : "[";
        for (size_t k = 0, n = 1 + pick(2); k < n; ++k) {
          char lo = kClassChars[pick(kClassChars.size())];
          char hi = kClassChars[pick(kClassChars.size())];
          if (hi < lo) std::swap(lo, hi);
          if (pick(2) == 0) {
            g.text += {lo, '-', hi};
            g.regex += {lo, '-', hi};
          } else {
            g.text += lo;
            g.regex += lo;
          }
        }
        g.text += ']';
        g.regex += ']';
        break;
      }
      case 4:
        g.text += "\\-", g.regex += "\\-";
        break;
      default: {
        const char c = kLiterals[pick(kLiterals.size())];
        g.text += c;
        g.regex += c == '$' ? std::string("\\$") : std::string(1, c);
        break;
      }
    }
  }
  return g;
}

std::string RandomName(std::mt19937& rng) {
  static const std::string kChars = "abcAB1_-$";
  std::string name;
  const size_t len = std::uniform_int_distribution<size_t>(0, 4)(rng);
  for (size_t i = 0; i < len; ++i) {
    name += kChars[std::uniform_int_distribution<size_t>(0, kChars.size() - 1)(rng)];
  }
  return name;
}

struct RefRule {
  bool positive;
  Glob schema;
  Glob table;
};

TEST(TableFilterTest, RandomRulesAgreeWithRegexReference) {
  std::mt19937 rng(20240611);
  int conflicts = 0;  // probes where two matching rules disagree
  for (int round = 0; round < 600; ++round) {
    const bool case_sensitive = round % 2 == 0;
    const auto flags =
        std::regex::ECMAScript | (case_sensitive ? std::regex::flag_type{} : std::regex::icase);
    std::vector<RefRule> ref;
    std::vector<std::string> rules;
    std::vector<std::pair<std::regex, std::regex>> compiled;
    for (int i = 0, n = 1 + static_cast<int>(rng() % 4); i < n; ++i) {
      RefRule r{rng() % 3 != 0, RandomGlob(rng), RandomGlob(rng)};
      rules.push_back((r.positive ? "" : "!") + r.schema.text + "." + r.table.text);
      compiled.emplace_back(std::regex(r.schema.regex, flags), std::regex(r.table.regex, flags));
      ref.push_back(std::move(r));
    }
    const TableFilter f = MustParse(rules, case_sensitive);
    for (int probe = 0; probe < 60; ++probe) {
      const std::string schema = RandomName(rng);
      const std::string table = RandomName(rng);
      bool want_table = false;
      bool want_schema = false;
      bool table_done = false;
      bool schema_done = false;
      int positive_matches = 0;
      int negative_matches = 0;
      for (size_t i = ref.size(); i-- > 0;) {
        const bool s = std::regex_match(schema, compiled[i].first);
        const bool t = std::regex_match(table, compiled[i].second);
        if (s && t) ++(ref[i].positive ? positive_matches : negative_matches);
        if (!table_done && s && t) want_table = ref[i].positive, table_done = true;
        if (!schema_done && s && (ref[i].positive || ref[i].table.text == "*")) {
          want_schema = ref[i].positive, schema_done = true;
        }
      }
      if (positive_matches > 0 && negative_matches > 0) ++conflicts;
      ASSERT_EQ(f.MatchTable(schema, table), want_table)
          << ::testing::PrintToString(rules) << " " << schema << "." << table;
      ASSERT_EQ(f.MatchSchema(schema), want_schema)
          << ::testing::PrintToString(rules) << " " << schema;
    }
  }
  EXPECT_GT(conflicts, 500) << "the generator no longer exercises rule order";
}

TEST(TableFilterTest, RandomBytesNeverCrashTheParser) {
  std::mt19937 rng(7);
  static const std::string kAlphabet = "ab.*?[]!-\\/\"`#@ ^$:\t\xc3\xa9\xff";
  for (int i = 0; i < 20000; ++i) {
    std::string rule;
    for (size_t k = 0, n = rng() % 12; k < n; ++k) rule += kAlphabet[rng() % kAlphabet.size()];
    Result<TableFilter> f = TableFilter::Parse({rule}, i % 2 == 0);
    if (!f.ok()) {
      EXPECT_TRUE(f.status().code() == Code::kInvalidArgument ||
                  f.status().code() == Code::kNotSupported)
          << f.status().ToString();
      continue;
    }
    f->MatchTable(RandomName(rng), RandomName(rng));
    f->MatchSchema(rule);
  }
}

TEST(TextTest, CaseFolding) {
  EXPECT_EQ(text::ToLower("ÀÉÎÕÜ ÆØÞ Ÿ İ ΑΩ АЯЁ ＡＺ"), "àéîõü æøþ ÿ i αω аяё ａｚ");
  EXPECT_EQ(text::ToUpperRune(U'ä'), U'Ä');
  EXPECT_EQ(text::ToUpperRune(U'ſ'), U'S');
  EXPECT_EQ(text::ToLowerRune(0x212A), U'k');
  EXPECT_EQ(text::ToLowerRune(U'Ł'), U'ł');
  EXPECT_EQ(text::ToUpperRune(U'ł'), U'Ł');
  std::string buf;
  const std::string lower = "already_lower";
  EXPECT_EQ(text::FoldCase(lower, &buf).data(), lower.data());
  EXPECT_EQ(text::ToLower("A\xff"), "a\xef\xbf\xbd");
}

}  // namespace
}  // namespace sluice::filter
