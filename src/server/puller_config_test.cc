// The [puller] settings: every key sets what it names, defaults are the
// puller's own, and bad values are refused naming the key.
#include "server/puller_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

namespace sluice::server {
namespace {

using ::testing::HasSubstr;

TEST(PullerConfigTest, DefaultsAreThePullersOwn) {
  const PullerConfig config;
  const logpuller::SubscriptionClientOptions puller;
  std::set<std::string> names;
  for (const PullerKey& key : PullerKeys()) {
    EXPECT_TRUE(names.insert(key.name).second) << key.name;
    EXPECT_FALSE(key.help.empty()) << key.name;
    // Setting a key to its listed default changes nothing.
    PullerConfig copy;
    ASSERT_TRUE(SetPullerKey(key.name, key.default_value, &copy).ok()) << key.name;
  }
  EXPECT_EQ(names.size(), 14u);
  EXPECT_EQ(config.client.pipeline.queue_capacity, puller.pipeline.queue_capacity);
  EXPECT_EQ(config.client.scan_yield_max, puller.scan_yield_max);
}

TEST(PullerConfigTest, EachKeySetsWhatItNames) {
  PullerConfig c;
  ASSERT_TRUE(SetPullerKey("region-workers", "3", &c).ok());
  ASSERT_TRUE(SetPullerKey("region-queue-size", "17", &c).ok());
  ASSERT_TRUE(SetPullerKey("streams-per-store", "2", &c).ok());
  ASSERT_TRUE(SetPullerKey("scan-window-per-store", "9", &c).ok());
  ASSERT_TRUE(SetPullerKey("pipeline-workers", "5", &c).ok());
  ASSERT_TRUE(SetPullerKey("pipeline-queue-size", "128", &c).ok());
  ASSERT_TRUE(SetPullerKey("memory-quota", "67108864", &c).ok());
  ASSERT_TRUE(SetPullerKey("advance-interval", "250ms", &c).ok());
  ASSERT_TRUE(SetPullerKey("scan-yield-max", "0s", &c).ok());
  ASSERT_TRUE(SetPullerKey("max-persist-restarts", "4", &c).ok());
  ASSERT_TRUE(SetPullerKey("resolve-lock-check-interval", "0s", &c).ok());
  ASSERT_TRUE(SetPullerKey("resolve-lock-after", "8s", &c).ok());
  ASSERT_TRUE(SetPullerKey("resolve-lock-interval", "1500ms", &c).ok());
  ASSERT_TRUE(SetPullerKey("stuck-region-reconnect-after", "120m", &c).ok());
  EXPECT_EQ(c.client.region_workers, 3u);
  EXPECT_EQ(c.client.region_queue_capacity, 17u);
  EXPECT_EQ(c.client.scheduler.streams_per_store, 2u);
  EXPECT_EQ(c.client.scheduler.scan_window_per_store, 9u);
  EXPECT_EQ(c.client.pipeline.num_workers, 5u);
  EXPECT_EQ(c.client.pipeline.queue_capacity, 128u);
  EXPECT_EQ(c.client.pipeline.quota_bytes, 64u << 20);
  EXPECT_EQ(c.advance_interval, std::chrono::milliseconds(250));
  EXPECT_EQ(c.client.scan_yield_max, std::chrono::milliseconds(0));
  EXPECT_EQ(c.client.max_persist_restarts, 4);
  EXPECT_EQ(c.client.resolve_lock_check_interval, std::chrono::milliseconds(0));
  EXPECT_EQ(c.client.stuck.resolve_lock_after, std::chrono::seconds(8));
  EXPECT_EQ(c.client.stuck.resolve_lock_interval, std::chrono::milliseconds(1500));
  EXPECT_EQ(c.client.stuck.reconnect_after, std::chrono::minutes(120));
}

TEST(PullerConfigTest, BadValuesAreRefusedNamingTheKey) {
  PullerConfig c;
  const PullerConfig before;
  struct Case {
    const char* key;
    const char* value;
    const char* says;
  };
  for (const Case& t : {Case{"region-workers", "-1", "outside [0, 256]"},
                        Case{"region-workers", "four", "not an integer"},
                        Case{"pipeline-queue-size", "0", "outside [1, "},
                        Case{"memory-quota", "1024", "outside [1048576, "},
                        Case{"memory-quota", "1GiB", "not an integer"},
                        Case{"advance-interval", "soon", "not a duration"},
                        Case{"scan-yield-max", "-1s", "outside [0s, 600s]"},
                        Case{"scan-yield-max", "1h", "outside [0s, 600s]"},
                        Case{"streams-per-store", "65", "outside [1, 64]"},
                        Case{"no-such-key", "1", "unknown puller setting 'no-such-key'"}}) {
    Status s = SetPullerKey(t.key, t.value, &c);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << t.key << "=" << t.value;
    EXPECT_THAT(std::string(s.message()), HasSubstr(t.says)) << t.key << "=" << t.value;
  }
  // Nothing was set by a refused value.
  EXPECT_EQ(c.client.region_workers, before.client.region_workers);
  EXPECT_EQ(c.client.pipeline.quota_bytes, before.client.pipeline.quota_bytes);
  EXPECT_EQ(c.advance_interval, before.advance_interval);
}

}  // namespace
}  // namespace sluice::server
