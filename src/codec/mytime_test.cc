#include "codec/mytime.h"

#include <gtest/gtest.h>

#include <limits>

#include "codec/mysql_type.h"

namespace sluice::codec {
namespace {

constexpr int64_t kSecond = 1000000000;

TEST(MyTimeTest, PackedGoldenVectors) {
  // Values computed from TiDB's packed time bit layout.
  MysqlTime t{2020, 1, 2, 3, 4, 5, 0};
  EXPECT_EQ(ToPackedUint(t), 0x19a5443105000000ULL);
  MysqlTime leap{2024, 2, 29, 13, 45, 59, 123456};
  EXPECT_EQ(ToPackedUint(leap), 0x19b2badb7b01e240ULL);
  EXPECT_EQ(FromPackedUint(0x19b2badb7b01e240ULL), leap);
  EXPECT_EQ(ToPackedUint(MysqlTime{}), 0u);
  EXPECT_EQ(FromPackedUint(0), MysqlTime{});
}

TEST(MyTimeTest, PackedRoundTripsAcrossFieldRanges) {
  for (int year : {0, 1, 1970, 9999}) {
    for (int month : {0, 1, 12}) {
      for (int day : {0, 1, 31}) {
        MysqlTime t{year, month, day, 23, 59, 59, 999999};
        EXPECT_EQ(FromPackedUint(ToPackedUint(t)), t);
        MysqlTime midnight{year, month, day, 0, 0, 0, 0};
        EXPECT_EQ(FromPackedUint(ToPackedUint(midnight)), midnight);
      }
    }
  }
}

TEST(MyTimeTest, PackedOrderFollowsTimeOrder) {
  MysqlTime a{2020, 12, 31, 23, 59, 59, 999999};
  MysqlTime b{2021, 1, 1, 0, 0, 0, 0};
  MysqlTime c{2021, 1, 1, 0, 0, 0, 1};
  EXPECT_LT(ToPackedUint(a), ToPackedUint(b));
  EXPECT_LT(ToPackedUint(b), ToPackedUint(c));
}

TEST(MyTimeTest, CoreTimeGoldenAndRoundTrip) {
  MysqlTime t{2020, 1, 2, 3, 4, 5, 6};
  EXPECT_EQ(ToCoreTime(t), 0x1f90443105000060ULL);
  EXPECT_EQ(FromCoreTime(0x1f90443105000060ULL), t);
  // The low four bits (fsp and type in TiDB's memory layout) are ignored.
  EXPECT_EQ(FromCoreTime(0x1f9044310500006fULL), t);
}

TEST(MyTimeTest, FormatsPerTypeAndFsp) {
  MysqlTime t{2024, 2, 29, 13, 5, 9, 123456};
  EXPECT_EQ(FormatTime(t, mysql_type::kDatetime, 0), "2024-02-29 13:05:09");
  EXPECT_EQ(FormatTime(t, mysql_type::kDatetime, 3), "2024-02-29 13:05:09.123");
  EXPECT_EQ(FormatTime(t, mysql_type::kTimestamp, 6), "2024-02-29 13:05:09.123456");
  EXPECT_EQ(FormatTime(t, mysql_type::kDate, 6), "2024-02-29");
  EXPECT_EQ(FormatTime(MysqlTime{}, mysql_type::kDatetime, 0), "0000-00-00 00:00:00");
  MysqlTime small_us{1, 1, 1, 0, 0, 0, 5};
  EXPECT_EQ(FormatTime(small_us, mysql_type::kDatetime, 6), "0001-01-01 00:00:00.000005");
  EXPECT_EQ(FormatTime(small_us, mysql_type::kDatetime, 9), "0001-01-01 00:00:00.000005");
}

TEST(MyTimeTest, FormatsDurations) {
  EXPECT_EQ(FormatDuration(0, 0), "00:00:00");
  int64_t d = -(3600 + 2 * 60 + 3) * kSecond - kSecond / 2;
  EXPECT_EQ(FormatDuration(d, 1), "-01:02:03.5");
  EXPECT_EQ(FormatDuration((838 * 3600 + 59 * 60 + 59) * kSecond, 0), "838:59:59");
  EXPECT_EQ(FormatDuration(kSecond + 999999999, 3), "00:00:01.999");
  EXPECT_EQ(FormatDuration(1500, 6), "00:00:00.000001");
  EXPECT_EQ(FormatDuration(std::numeric_limits<int64_t>::min(), 0), "-2562047:47:16");
}

TEST(MyTimeTest, ParsesTimeAndDuration) {
  EXPECT_EQ(*ParseTime("2024-02-29 13:05:09.12"), (MysqlTime{2024, 2, 29, 13, 5, 9, 120000}));
  EXPECT_EQ(*ParseTime("2024-02-29"), (MysqlTime{2024, 2, 29, 0, 0, 0, 0}));
  for (const char* bad : {"2024-13-01", "2024-02-29 24:00:00", "2024-2-29", "2024-02-29 1:00:00",
                          "2024-02-29 10:00:00.1234567", "2024-02-29T10:00:00", ""}) {
    EXPECT_EQ(ParseTime(bad).status().code(), Code::kInvalidArgument) << bad;
  }
  EXPECT_EQ(*ParseDuration("-01:02:03.5"), -(3723 * kSecond + kSecond / 2));
  EXPECT_EQ(*ParseDuration("838:59:59"), (838 * 3600 + 59 * 60 + 59) * kSecond);
  for (const char* bad : {"1:60:00", "12:00", "-", "aa:00:00", "01:02:03.", ""}) {
    EXPECT_EQ(ParseDuration(bad).status().code(), Code::kInvalidArgument) << bad;
  }
}

TEST(MyTimeTest, ValidateTimeChecksRanges) {
  EXPECT_TRUE(ValidateTime(MysqlTime{9999, 12, 31, 23, 59, 59, 999999}).ok());
  EXPECT_FALSE(ValidateTime(MysqlTime{2020, 1, 1, 0, 60, 0, 0}).ok());
  EXPECT_FALSE(ValidateTime(MysqlTime{2020, 1, 32, 0, 0, 0, 0}).ok());
}

}  // namespace
}  // namespace sluice::codec
