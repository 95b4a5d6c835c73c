#include "common/logging.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <fstream>
#include <sstream>

#include "common/span.h"

namespace sluice {
namespace {

// Sends the process log to a string for the duration of a test.
class LoggingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    logging::SetSink(std::make_shared<spdlog::sinks::ostream_sink_mt>(out_), logging::Level::kInfo);
  }
  void TearDown() override {
    // Back to stderr before `out_` goes away.
    ASSERT_TRUE(logging::Init(logging::Level::kInfo).ok());
  }
  std::string Output() {
    logging::Flush();
    return out_.str();
  }

  std::ostringstream out_;
};

const std::string kKey("secret-key\x01\x02", 12);

TEST_F(LoggingTest, RedactionIsOnByDefault) { EXPECT_EQ(GetRedaction(), RedactionMode::kOn); }

TEST_F(LoggingTest, RedactedKeyNeverAppearsInOutput) {
  ScopedRedaction on(RedactionMode::kOn);
  LOG_INFO("matched commit key={} value={}", Redact(kKey), Redact("row-value"));
  LOG_WARN("span {}", (Span{kKey, ""}).ToString());
  LOG_ERROR("sql {}", RedactText("INSERT INTO t VALUES ('secret-key')"));
  std::string out = Output();
  EXPECT_NE(out.find("matched commit key=? value=?"), std::string::npos) << out;
  EXPECT_NE(out.find("span [?, +inf)"), std::string::npos) << out;
  EXPECT_NE(out.find("sql ?"), std::string::npos) << out;
  EXPECT_EQ(out.find("secret-key"), std::string::npos) << out;
  EXPECT_EQ(out.find("7365637265742D6B6579"), std::string::npos) << out;  // hex of it
  EXPECT_EQ(out.find("row-value"), std::string::npos) << out;
}

TEST_F(LoggingTest, RedactionOffLogsUpperCaseHex) {
  ScopedRedaction off(RedactionMode::kOff);
  LOG_INFO("key={}", Redact(kKey));
  EXPECT_NE(Output().find("key=7365637265742D6B65790102"), std::string::npos) << Output();
  EXPECT_EQ(RedactText("a'b"), "a'b");
}

TEST_F(LoggingTest, MarkerModeWrapsAndEscapes) {
  ScopedRedaction marker(RedactionMode::kMarker);
  EXPECT_EQ(Redact("\x01\xAB"),
            "\u2039"
            "01AB"
            "\u203A");
  EXPECT_EQ(RedactText("a\u2039b\u203Ac"),
            "\u2039"
            "a\u2039\u2039b\u203A\u203Ac"
            "\u203A");
  LOG_INFO("key={}", Redact("k"));
  EXPECT_NE(Output().find("key=\u2039"
                          "6B"
                          "\u203A"),
            std::string::npos)
      << Output();
}

TEST_F(LoggingTest, LevelFiltersAndSkipsArguments) {
  int evaluated = 0;
  auto count = [&evaluated] { return ++evaluated; };
  LOG_DEBUG("hidden {}", count());
  EXPECT_EQ(evaluated, 0);  // Disabled levels do not evaluate arguments.
  EXPECT_EQ(Output().find("hidden"), std::string::npos);

  logging::SetLevel(logging::Level::kDebug);
  EXPECT_EQ(logging::GetLevel(), logging::Level::kDebug);
  LOG_DEBUG("shown {}", count());
  EXPECT_EQ(evaluated, 1);
  std::string out = Output();
  EXPECT_NE(out.find("shown 1"), std::string::npos) << out;
  EXPECT_NE(out.find("[debug]"), std::string::npos) << out;
  EXPECT_NE(out.find("logging_test.cc:"), std::string::npos) << out;
}

TEST_F(LoggingTest, InitWritesToFileAndReportsBadPath) {
  std::string dir = ::testing::TempDir();
  std::string path = dir + "/sluice_logging_test.log";
  std::remove(path.c_str());
  ASSERT_TRUE(logging::Init(logging::Level::kInfo, path).ok());
  LOG_INFO("to the file {}", 42);
  logging::Flush();
  std::ifstream in(path);
  std::stringstream content;
  content << in.rdbuf();
  EXPECT_NE(content.str().find("to the file 42"), std::string::npos) << content.str();
  std::remove(path.c_str());

  // The parent is a regular file, so the log file cannot be created.
  std::string blocker = dir + "/sluice_logging_test_blocker";
  std::ofstream(blocker) << "x";
  Status st = logging::Init(logging::Level::kInfo, blocker + "/x.log");
  EXPECT_EQ(st.code(), Code::kIoError) << st.ToString();
  std::remove(blocker.c_str());
}

TEST(LoggingParseTest, LevelsAndRedactionModes) {
  EXPECT_EQ(*logging::ParseLevel("INFO"), logging::Level::kInfo);
  EXPECT_EQ(*logging::ParseLevel("warning"), logging::Level::kWarn);
  EXPECT_EQ(*logging::ParseLevel("debug"), logging::Level::kDebug);
  EXPECT_EQ(logging::ParseLevel("loud").status().code(), Code::kInvalidArgument);

  EXPECT_EQ(*ParseRedactionMode("true"), RedactionMode::kOn);
  EXPECT_EQ(*ParseRedactionMode("OFF"), RedactionMode::kOff);
  EXPECT_EQ(*ParseRedactionMode("MARKER"), RedactionMode::kMarker);
  EXPECT_EQ(ParseRedactionMode("maybe").status().code(), Code::kInvalidArgument);
}

TEST(ScopedRedactionTest, RestoresPreviousMode) {
  RedactionMode before = GetRedaction();
  {
    ScopedRedaction off(RedactionMode::kOff);
    EXPECT_EQ(GetRedaction(), RedactionMode::kOff);
    EXPECT_EQ(Redact("\x0f"), "0F");
  }
  EXPECT_EQ(GetRedaction(), before);
}

}  // namespace
}  // namespace sluice
