// Malformed job documents must come back as Corruption, never as an
// exception or a half-filled job.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codec/model/job.h"
#include "codec/model/job_documents.h"

namespace sluice::model {
namespace {

using Mutation = void (*)(JsonValue&);

Status ParseMutated(const testdocs::JobDoc& doc, Mutation mutate) {
  JsonValue json = JsonValue::parse(testdocs::JobText(doc));
  mutate(json);
  return ParseJob(json.dump()).status();
}

TEST(JobMalformedTest, NotJsonIsCorruption) {
  for (std::string_view bad : {"", "not json", "{", R"({"id":1,)", R"({"id":1}})", "\x01"}) {
    EXPECT_EQ(ParseJob(bad).status().code(), Code::kCorruption) << bad;
  }
}

TEST(JobMalformedTest, RootMustBeAnObject) {
  for (std::string_view bad : {"[]", "5", "null", R"("job")", "true"}) {
    const Status status = ParseJob(bad).status();
    EXPECT_EQ(status.code(), Code::kCorruption) << bad;
  }
}

TEST(JobMalformedTest, EveryTruncationIsCorruption) {
  const std::string doc = testdocs::JobText(testdocs::CreateTableJob());
  ASSERT_TRUE(ParseJob(doc).ok());
  for (size_t n = 0; n < doc.size(); ++n) {
    const Status status = ParseJob(std::string_view(doc).substr(0, n)).status();
    ASSERT_EQ(status.code(), Code::kCorruption) << "prefix of " << n << " bytes";
  }
}

TEST(JobMalformedTest, MissingRequiredKeysAreCorruption) {
  for (const char* key : {"id", "type", "schema_id", "table_id", "state"}) {
    JsonValue json = JsonValue::parse(testdocs::JobText(testdocs::DropTableJob()));
    json.erase(key);
    const Status missing = ParseJob(json.dump()).status();
    EXPECT_EQ(missing.code(), Code::kCorruption) << key;
    EXPECT_NE(missing.message().find(std::string("job.") + key), std::string_view::npos)
        << missing.ToString();
    json[key] = nullptr;  // Null is as good as absent.
    EXPECT_EQ(ParseJob(json.dump()).status().code(), Code::kCorruption) << key;
  }
}

TEST(JobMalformedTest, WrongTypesForKnownKeysAreCorruption) {
  const std::vector<std::pair<Mutation, std::string>> cases = {
      {[](JsonValue& j) { j["id"] = "abc"; }, "job.id"},
      {[](JsonValue& j) { j["type"] = "3"; }, "job.type"},
      {[](JsonValue& j) { j["type"] = 300; }, "job.type"},  // ActionType is a byte.
      {[](JsonValue& j) { j["state"] = 4.0; }, "job.state"},
      {[](JsonValue& j) { j["schema_state"] = -1; }, "job.schema_state"},
      {[](JsonValue& j) { j["start_ts"] = -1; }, "job.start_ts"},
      {[](JsonValue& j) { j["query"] = 5; }, "job.query"},
      {[](JsonValue& j) { j["local_mode"] = "false"; }, "job.local_mode"},
      {[](JsonValue& j) { j["binlog"] = JsonValue::array(); }, "job.binlog"},
      {[](JsonValue& j) { j["binlog"]["SchemaVersion"] = "7"; }, "job.binlog.SchemaVersion"},
      {[](JsonValue& j) { j["binlog"]["TableInfo"]["id"] = "x"; }, "job.binlog.TableInfo.id"},
      {[](JsonValue& j) { j["binlog"]["TableInfo"]["cols"][1]["type"]["Tp"] = 256; },
       "job.binlog.TableInfo.cols[1].type.Tp"},
      {[](JsonValue& j) { j["binlog"]["MultipleTableInfos"] = JsonValue::array({1}); },
       "job.binlog.MultipleTableInfos[0]"},
      {[](JsonValue& j) { j["involving_schema_info"] = JsonValue::object(); },
       "job.involving_schema_info"},
      {[](JsonValue& j) {
         j["session_vars"] = JsonValue::object({{"a", 1}});
       },
       "job.session_vars.a"},
  };
  for (const auto& [mutate, path] : cases) {
    const Status status = ParseMutated(testdocs::CreateTableJob(), mutate);
    EXPECT_EQ(status.code(), Code::kCorruption) << path;
    EXPECT_NE(status.message().find(path), std::string_view::npos) << status.ToString();
  }
}

TEST(JobMalformedTest, ToleratesUnknownKeysOtherCaseAndOpaqueMembers) {
  JsonValue json = JsonValue::parse(testdocs::JobText(testdocs::CreateSchemaJob()));
  json["pause_reason"] = JsonValue::object({{"type", "x"}});
  json["RAW_ARGS"] = json["raw_args"];
  json.erase("raw_args");
  json["ID"] = json["id"];
  json.erase("id");
  json["err"] = JsonValue::object({{"class", 21}, {"code", 3}, {"msg", "boom"}});
  auto job = ParseJob(json.dump());
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->id, 1001);
  EXPECT_TRUE(job->raw_args.is_array());
  EXPECT_EQ(job->error["msg"], "boom");
}

TEST(JobMalformedTest, UnnamedEnumValuesAreKept) {
  JsonValue json = JsonValue::parse(testdocs::JobText(testdocs::CreateSchemaJob()));
  json["type"] = 200;
  json["state"] = 42;
  auto job = ParseJob(json.dump());
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(static_cast<int>(job->type), 200);
  EXPECT_EQ(static_cast<int>(job->state), 42);
  EXPECT_NE(ToJson(*job).find(R"("type":200,)"), std::string::npos);
}

}  // namespace
}  // namespace sluice::model
