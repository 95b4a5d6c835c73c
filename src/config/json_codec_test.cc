#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "config/replica_config.h"

namespace sluice::config {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

std::string Example() {
  std::ifstream in(std::string(SLUICE_CONFIG_TESTDATA) + "/changefeed.toml");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ReplicaConfigJsonTest, ShapeIsApiV2) {
  json j = json::parse(ToJson(ReplicaConfig()));
  EXPECT_EQ(j["memory_quota"], 1073741824u);
  EXPECT_EQ(j["case_sensitive"], false);
  EXPECT_EQ(j["sync_point_interval"], int64_t{600} * 1000 * 1000 * 1000);
  EXPECT_EQ(j["filter"]["rules"], json::array({"*.*"}));
  EXPECT_TRUE(j["filter"]["event_filters"].is_array());
  EXPECT_EQ(j["mounter"]["worker_num"], 16);
  EXPECT_EQ(j["sink"]["csv"]["null"], "\\N");
  EXPECT_EQ(j["sink"]["csv"]["binary_encoding_method"], "base64");
  EXPECT_FALSE(j["sink"].contains("protocol"));  // unset stays out, as omitempty
  EXPECT_EQ(j["consistent"]["flush_interval"], 2000);
  EXPECT_EQ(j["scheduler"]["region_threshold"], 10000);
  EXPECT_EQ(j["integrity"]["integrity_check_level"], "none");
}

TEST(ReplicaConfigJsonTest, RoundTripOfDefaultsAndExample) {
  auto def = ReplicaConfigFromJson(ToJson(ReplicaConfig()), /*reject_unknown=*/true);
  ASSERT_TRUE(def.ok()) << def.status().ToString();
  EXPECT_EQ(*def, ReplicaConfig());

  auto example = ParseReplicaConfigToml(Example());
  ASSERT_TRUE(example.ok()) << example.status().ToString();
  ReplicaConfig expected = *example;
  expected.sink.dispatchers[0].dispatcher.clear();  // TOML-only key
  auto back = ReplicaConfigFromJson(ToJson(*example), /*reject_unknown=*/true);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, expected);
}

TEST(ReplicaConfigJsonTest, PasswordIsMasked) {
  ReplicaConfig c;
  c.sink.kafka_config.sasl_password = "secret";
  EXPECT_THAT(ToJson(c), ::testing::Not(HasSubstr("secret")));
}

TEST(ReplicaConfigJsonTest, UnknownFieldsIgnoredUnlessStrict) {
  std::string text = R"({"memory_quota": 5, "sink": {"protocl": "csv"}})";
  auto lenient = ReplicaConfigFromJson(text);
  ASSERT_TRUE(lenient.ok()) << lenient.status().ToString();
  EXPECT_EQ(lenient->memory_quota, 5u);
  auto strict = ReplicaConfigFromJson(text, /*reject_unknown=*/true);
  ASSERT_FALSE(strict.ok());
  EXPECT_EQ(strict.status().code(), Code::kInvalidArgument);
  EXPECT_THAT(std::string(strict.status().message()), HasSubstr("\"sink.protocl\""));
}

TEST(ReplicaConfigJsonTest, Errors) {
  auto expect = [](std::string_view text, std::string_view piece) {
    auto r = ReplicaConfigFromJson(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(piece)) << text;
  };
  expect(R"({"memory_quota": "1"})", "field \"memory_quota\": expected non-negative integer");
  expect(R"({"filter": {"rules": [1]}})", "\"filter.rules[0]\"");
  expect(R"({"sink": {"csv": {"delimiter": ""}}})", "\"sink.csv.delimiter\"");
  expect(R"({"sink": {"file_index_width": "x"}})", "\"sink.file_index_width\"");
  expect(R"({"sync_point_interval": "10y"})", "\"sync_point_interval\"");
  expect(R"({"a": )", "JSON syntax error");
  expect(R"([1])", "must be an object");
}

TEST(ReplicaConfigJsonTest, DurationsAcceptNanosOrText) {
  auto r = ReplicaConfigFromJson(
      R"({"sync_point_interval": 60000000000, "sync_point_retention": "2h", "sql_mode": null})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->sync_point_interval.value, std::chrono::minutes(1));
  EXPECT_EQ(r->sync_point_retention.value, std::chrono::hours(2));
}

// Truncated and mutated inputs give a value or an error, never a crash.
TEST(ReplicaConfigFuzzTest, MutatedInputsNeverCrash) {
  const std::string toml = Example();
  const std::string js = ToJson(*ParseReplicaConfigToml(toml));
  std::mt19937 rng(20240611);
  const std::string alphabet = "[]{}\"'=.,-_ \n\t#0123456789aezAZ\\\x01\xff";
  int ok = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string t = (i % 2 == 0) ? toml : js;
    if (i % 3 == 0) t.resize(rng() % (t.size() + 1));
    int edits = 1 + static_cast<int>(rng() % 8);
    for (int e = 0; e < edits && !t.empty(); ++e) {
      size_t pos = rng() % t.size();
      switch (rng() % 3) {
        case 0:
          t[pos] = alphabet[rng() % alphabet.size()];
          break;
        case 1:
          t.erase(pos, 1 + rng() % 16);
          break;
        default:
          t.insert(pos, 1, alphabet[rng() % alphabet.size()]);
          break;
      }
    }
    auto a = ParseReplicaConfigToml(t);
    auto b = ReplicaConfigFromJson(t, i % 4 == 0);
    ok += a.ok() + b.ok();
    if (a.ok()) (void)ToJson(*a);
  }
  EXPECT_GE(ok, 0);
}

}  // namespace
}  // namespace sluice::config
