#include <gtest/gtest.h>

#include "config/replica_config.h"

namespace sluice::config {
namespace {

using namespace std::chrono_literals;

TEST(GoDurationTest, Parses) {
  EXPECT_EQ(*ParseGoDuration("0"), 0ns);
  EXPECT_EQ(*ParseGoDuration("10m"), 10min);
  EXPECT_EQ(*ParseGoDuration("1h30m"), 90min);
  EXPECT_EQ(*ParseGoDuration("500ms"), 500ms);
  EXPECT_EQ(*ParseGoDuration("1.5s"), 1500ms);
  EXPECT_EQ(*ParseGoDuration(".5s"), 500ms);
  EXPECT_EQ(*ParseGoDuration("-2us"), -2us);
  EXPECT_EQ(*ParseGoDuration("+3ns"), 3ns);
  EXPECT_EQ(*ParseGoDuration("1\xC2\xB5s"), 1us);
  EXPECT_EQ(*ParseGoDuration("2h45m30.5s"), 2h + 45min + 30500ms);
  EXPECT_EQ(ParseGoDuration("-9223372036854775808ns")->count(), INT64_MIN);
  EXPECT_EQ(ParseGoDuration("9223372036854775807ns")->count(), INT64_MAX);
}

TEST(GoDurationTest, Rejects) {
  for (const char* bad : {"", "-", "10", "1x", "m", "1.s.", "1h 30m", "9223372036854775808ns",
                          "3000000h", ".s", "1..5s"}) {
    auto r = ParseGoDuration(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    }
  }
}

}  // namespace
}  // namespace sluice::config
