#include "meta/model.h"

#include <gtest/gtest.h>

#include "meta/keys.h"
#include "meta/record_format.h"

namespace sluice::meta {
namespace {

ChangefeedInfo SampleInfo() {
  ChangefeedInfo info;
  info.id = ChangefeedId{"default", "orders-to-mysql"};
  info.upstream_id = 7;
  info.sink_uri = "mysql://root@127.0.0.1:3306/";
  info.create_time_ms = 1714564800123;
  info.start_ts = Ts(449000000000000000ULL);
  info.target_ts = Ts(0);
  info.config_json = R"({"case-sensitive":false,"filter":{"rules":["test.*"]}})";
  info.state = FeedState::kWarning;
  info.warning = RunningError{1714564801000, "10.0.0.1:8300", "CDC:ErrSinkBusy", "busy"};
  info.creator_version = "v0.1.0";
  info.epoch = MaintainerEpoch(449000000000000123ULL);
  return info;
}

TEST(ModelTest, ChangefeedIdParsesWhatToStringWrites) {
  ChangefeedId id{"ks1", "feed/a"};
  Result<ChangefeedId> parsed = ChangefeedId::Parse(id.ToString());
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, id);
  for (const char* bad : {"feed", "/feed", "ks1/", ""}) {
    Result<ChangefeedId> r = ChangefeedId::Parse(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << bad;
  }
}

TEST(ModelTest, ChangefeedInfoRoundTrips) {
  const ChangefeedInfo info = SampleInfo();
  Result<ChangefeedInfo> back = DecodeChangefeedInfo(EncodeChangefeedInfo(info));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, info);
}

TEST(ModelTest, DecodesTiCdcShapedInfo) {
  // As TiCDC writes it: Go time with a zone offset and nanoseconds, extra
  // fields this side does not model.
  const char* json = R"({"upstream-id":1,"namespace":"default","changefeed-id":"cf-1",
    "sink-uri":"blackhole://","create-time":"2024-05-01T20:00:00.123456789+08:00",
    "start-ts":100,"target-ts":0,"admin-job-type":1,"sort-engine":"unified",
    "config":{"memory-quota":1073741824},"state":"stopped","error":null,"warning":null,
    "creator-version":"v8.1.0","resolved-ts":0,"epoch":5})";
  Result<ChangefeedInfo> info = DecodeChangefeedInfo(json);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->id.name, "cf-1");
  EXPECT_EQ(info->create_time_ms, 1714564800123);
  EXPECT_EQ(info->admin_job_type, AdminJobType::kStop);
  EXPECT_EQ(info->state, FeedState::kStopped);
  EXPECT_EQ(info->epoch, MaintainerEpoch(5));
  EXPECT_EQ(info->config_json, R"({"memory-quota":1073741824})");
}

TEST(ModelTest, StatusAndCaptureRoundTrip) {
  ChangefeedStatus status{Ts(10), Ts(9), AdminJobType::kNone,
                          RunningError{1000, "n1", "timeout", "sink timed out"}};
  EXPECT_EQ(*DecodeChangefeedStatus(EncodeChangefeedStatus(status)), status);
  CaptureInfo capture{NodeId("7f1c"), "10.0.0.2:8300", "v0.1.0", "abc", "/opt", 1714564800, ""};
  EXPECT_EQ(*DecodeCaptureInfo(EncodeCaptureInfo(capture)), capture);
  capture.peer_addr = "10.0.0.2:8301";
  EXPECT_NE(EncodeCaptureInfo(capture).find(R"("peer-address":"10.0.0.2:8301")"),
            std::string::npos);
  EXPECT_EQ(*DecodeCaptureInfo(EncodeCaptureInfo(capture)), capture);
  EXPECT_EQ(DecodeCaptureInfo(R"({"id":"n","peer-address":7})").status().code(), Code::kCorruption);
}

TEST(ModelTest, BadValuesAreCorruptionNotCrashes) {
  const std::vector<std::string> bad = {
      "",
      "not json",
      "[1,2]",
      R"({"start-ts":"100"})",
      R"({"start-ts":-1})",
      R"({"state":"sleeping"})",
      R"({"admin-job-type":9})",
      R"({"create-time":"yesterday"})",
      R"({"error":{"time":"2024-13-01T00:00:00Z"}})",
      R"({"config":[1]})",
      std::string(100000, '[') + std::string(100000, ']'),
      std::string("{\"sink-uri\":\"\xff\xfe\"}"),
  };
  for (const std::string& text : bad) {
    SCOPED_TRACE(text.substr(0, 60));
    EXPECT_EQ(DecodeChangefeedInfo(text).status().code(), Code::kCorruption);
  }
  EXPECT_EQ(DecodeChangefeedStatus(R"({"checkpoint-ts":1.5})").status().code(), Code::kCorruption);
  EXPECT_EQ(DecodeCaptureInfo(R"({"address":"x"})").status().code(), Code::kCorruption);
}

TEST(ModelTest, Rfc3339) {
  EXPECT_EQ(FormatRfc3339(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatRfc3339(1714564800123), "2024-05-01T12:00:00.123Z");
  EXPECT_EQ(*ParseRfc3339("2024-05-01T12:00:00.123Z"), 1714564800123);
  EXPECT_EQ(*ParseRfc3339("2024-05-01T12:00:00Z"), 1714564800000);
  EXPECT_EQ(*ParseRfc3339("0001-01-01T00:00:00Z"), -62135596800000);  // Go's zero time.
  EXPECT_EQ(FormatRfc3339(-62135596800000), "0001-01-01T00:00:00.000Z");
  EXPECT_FALSE(ParseRfc3339("2024-05-01 12:00:00Z").ok());
  EXPECT_FALSE(ParseRfc3339("2024-05-01T12:00:00").ok());
  EXPECT_FALSE(ParseRfc3339("2024-05-01T12:00:00.Z").ok());
}

TEST(ModelTest, ChangefeedNames) {
  EXPECT_TRUE(IsValidChangefeedName("a-b-1"));
  EXPECT_FALSE(IsValidChangefeedName(""));
  EXPECT_FALSE(IsValidChangefeedName("-a"));
  EXPECT_FALSE(IsValidChangefeedName("a--b"));
  EXPECT_FALSE(IsValidChangefeedName("a/b"));
  EXPECT_FALSE(IsValidChangefeedName(std::string(129, 'a')));
}

TEST(KeyLayoutTest, TiCdcKeys) {
  KeyLayout keys("c1");
  ChangefeedId id{"ns1", "cf"};
  EXPECT_EQ(keys.ChangefeedInfoKey(id), "/tidb/cdc/c1/ns1/changefeed/info/cf");
  EXPECT_EQ(keys.ChangefeedStatusKey(id), "/tidb/cdc/c1/ns1/changefeed/status/cf");
  EXPECT_EQ(keys.CaptureKey(NodeId("n1")), "/tidb/cdc/c1/__cdc_meta__/capture/n1");
  EXPECT_EQ(KeyLayout::OwnerKey(keys.OwnerPrefix(), LeaseId(255)),
            "/tidb/cdc/c1/__cdc_meta__/owner/ff");
  EXPECT_EQ(*keys.ParseChangefeedInfoKey(keys.ChangefeedInfoKey(id)), id);
  EXPECT_EQ(keys.ParseChangefeedInfoKey(keys.ChangefeedStatusKey(id)).status().code(),
            Code::kNotFound);
  EXPECT_EQ(keys.ParseChangefeedInfoKey("/tidb/cdc/c1/__cdc_meta__/capture/n1").status().code(),
            Code::kNotFound);
  EXPECT_EQ(keys.ParseChangefeedInfoKey("/tidb/cdc/c1/ns1/changefeed/info/a/b").status().code(),
            Code::kCorruption);
}

TEST(RecordFormatTest, TruncatedRecordsAreCorruption) {
  KeyValue kv{"k", "value", 3, 5, 2, LeaseId(9)};
  const std::string bytes = format::EncodeKeyRecord(kv);
  EXPECT_EQ(*format::DecodeKeyRecord("k", bytes), kv);
  for (size_t n = 0; n < 33; ++n) {
    EXPECT_EQ(format::DecodeKeyRecord("k", bytes.substr(0, n)).status().code(), Code::kCorruption);
  }
  const std::string events =
      format::EncodeEvents({WatchEvent{WatchEvent::Type::kPut, kv}, WatchEvent{}});
  EXPECT_EQ(format::DecodeEvents(events)->size(), 2u);
  for (size_t n = 0; n < events.size(); ++n) {
    EXPECT_EQ(format::DecodeEvents(events.substr(0, n)).status().code(), Code::kCorruption);
  }
  EXPECT_EQ(format::DecodeEvents(events + "x").status().code(), Code::kCorruption);
}

}  // namespace
}  // namespace sluice::meta
