#include "common/status.h"

#include <gtest/gtest.h>

#include <set>

namespace sluice {
namespace {

TEST(StatusTest, OkHasNoMessage) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), Code::kOk);
  EXPECT_EQ(s.ToString(), "ok");
  EXPECT_FALSE(s.retryable());
}

TEST(StatusTest, ErrorCarriesCodeAndMessage) {
  Status s = Corruption("bad byte at 3");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kCorruption);
  EXPECT_EQ(s.ToString(), "corruption: bad byte at 3");
  EXPECT_EQ(s.WithContext("row").ToString(), "corruption: row: bad byte at 3");
}

// Walks every code: each has a distinct name and an explicit class.
TEST(StatusTest, EveryCodeIsNamedAndClassified) {
  std::set<std::string_view> names;
  int retryable = 0;
  for (int i = 0; i < kNumCodes; ++i) {
    Code c = static_cast<Code>(i);
    std::string_view name = CodeName(c);
    EXPECT_NE(name, "unknown") << i;
    EXPECT_TRUE(names.insert(name).second) << name;
    retryable += IsRetryable(c) ? 1 : 0;
  }
  EXPECT_EQ(CodeName(static_cast<Code>(kNumCodes)), "unknown");
  // The split the rest of the system relies on.
  EXPECT_TRUE(IsRetryable(Code::kUnavailable));
  EXPECT_TRUE(IsRetryable(Code::kEpochMismatch));
  EXPECT_TRUE(IsRetryable(Code::kProtocolViolation));
  EXPECT_FALSE(IsRetryable(Code::kIncompatible));
  EXPECT_FALSE(IsRetryable(Code::kStaleOwner));
  EXPECT_FALSE(IsRetryable(Code::kInternal));
  EXPECT_GT(retryable, 0);
  EXPECT_LT(retryable, kNumCodes);
}

Result<int> Half(int v) {
  if (v % 2 != 0) return InvalidArgument("odd");
  return v / 2;
}

Status UseHalf(int v, int* out) {
  ASSIGN_OR_RETURN(int h, Half(v));
  RETURN_IF_ERROR(h > 100 ? ResourceExhausted("too big") : Status::Ok());
  *out = h;
  return Status::Ok();
}

TEST(ResultTest, ValueOrError) {
  Result<int> a = Half(8);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, 4);
  Result<int> b = Half(3);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), Code::kInvalidArgument);

  int out = 0;
  EXPECT_TRUE(UseHalf(10, &out).ok());
  EXPECT_EQ(out, 5);
  EXPECT_EQ(UseHalf(7, &out).code(), Code::kInvalidArgument);
  EXPECT_EQ(UseHalf(400, &out).code(), Code::kResourceExhausted);
}

}  // namespace
}  // namespace sluice
