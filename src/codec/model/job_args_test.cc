#include "codec/model/job_args.h"

#include <gtest/gtest.h>

#include "codec/model/job_documents.h"

namespace sluice::model {
namespace {

Job MustParseArgsJob(const testdocs::JobDoc& doc) {
  auto job = ParseJob(testdocs::JobText(doc));
  EXPECT_TRUE(job.ok()) << job.status().ToString();
  return job.ok() ? *job : Job{};
}

Job JobWithArgs(ActionType type, int64_t version, JsonValue args) {
  Job job;
  job.id = 77;
  job.type = type;
  job.state = JobState::kDone;
  job.version = version;
  job.raw_args = std::move(args);
  return job;
}

TEST(RenameTableArgsTest, ReadsVersionOnePositionalArguments) {
  auto args = GetRenameTableArgs(MustParseArgsJob(testdocs::RenameTableJob()));
  ASSERT_TRUE(args.ok()) << args.status().ToString();
  EXPECT_EQ(args->old_schema_id, 100);
  EXPECT_EQ(args->old_schema_name, CIStr::From("shop"));
  EXPECT_EQ(args->new_table_name, CIStr::From("orders_v2"));
}

TEST(RenameTableArgsTest, ReadsVersionTwoNamedArguments) {
  const Job job = JobWithArgs(ActionType::kRenameTable, kJobVersion2, JsonValue::parse(R"(
      {"old_schema_id":5,"old_schema_name":{"O":"A","L":"a"},"new_table_name":{"O":"T","L":"t"}})"));
  auto args = GetRenameTableArgs(job);
  ASSERT_TRUE(args.ok()) << args.status().ToString();
  EXPECT_EQ(args->old_schema_id, 5);
  EXPECT_EQ(args->old_schema_name, (CIStr{"A", "a"}));
  EXPECT_EQ(args->new_table_name, (CIStr{"T", "t"}));
}

TEST(RenameTableArgsTest, MakeWritesTiDBShapesAndReadsBack) {
  const RenameTableArgs args{7, CIStr::From("Old"), CIStr::From("New")};
  EXPECT_EQ(GoMarshal(MakeRenameTableArgs(kJobVersion1, args)),
            R"([7,{"O":"New","L":"new"},{"O":"Old","L":"old"}])");
  EXPECT_EQ(GoMarshal(MakeRenameTableArgs(kJobVersion2, args)),
            R"({"old_schema_id":7,"old_schema_name":{"O":"Old","L":"old"},)"
            R"("new_table_name":{"O":"New","L":"new"}})");
  for (int64_t version : {kJobVersion1, kJobVersion2}) {
    auto back = GetRenameTableArgs(
        JobWithArgs(ActionType::kRenameTable, version, MakeRenameTableArgs(version, args)));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, args);
  }
}

TEST(RenameTableArgsTest, NullOrShortArgumentsReadAsZeroValues) {
  auto null_args = GetRenameTableArgs(JobWithArgs(ActionType::kRenameTable, 0, JsonValue()));
  ASSERT_TRUE(null_args.ok());
  EXPECT_EQ(*null_args, RenameTableArgs{});
  auto short_args =
      GetRenameTableArgs(JobWithArgs(ActionType::kRenameTable, 1, JsonValue::array({9})));
  ASSERT_TRUE(short_args.ok());
  EXPECT_EQ(short_args->old_schema_id, 9);
  EXPECT_EQ(short_args->new_table_name, CIStr{});
}

TEST(RenameTableArgsTest, WrongShapesAreCorruption) {
  const std::vector<std::pair<int64_t, const char*>> cases = {
      {kJobVersion1, R"({"old_schema_id":1})"},  // v1 needs an array.
      {kJobVersion2, R"([1])"},                  // v2 needs an object.
      {kJobVersion1, R"(["1"])"},
      {kJobVersion1, R"([1,5])"},
      {kJobVersion2, R"({"old_schema_id":"x"})"},
      {3, R"([1])"},  // Unknown job version.
  };
  for (const auto& [version, text] : cases) {
    const Status status =
        GetRenameTableArgs(JobWithArgs(ActionType::kRenameTable, version, JsonValue::parse(text)))
            .status();
    EXPECT_EQ(status.code(), Code::kCorruption) << text;
  }
}

TEST(RenameTablesArgsTest, ReadsVersionOneParallelArrays) {
  auto items = GetRenameTablesArgs(MustParseArgsJob(testdocs::RenameTablesJob()));
  ASSERT_TRUE(items.ok()) << items.status().ToString();
  ASSERT_EQ(items->size(), 2u);
  EXPECT_EQ((*items)[1], (RenameTablesItem{100, CIStr::From("shop"), CIStr::From("a"), 101,
                                           CIStr::From("a2"), 130}));
}

TEST(RenameTablesArgsTest, OlderFourArrayLayoutLeavesNamesEmpty) {
  const Job job = JobWithArgs(ActionType::kRenameTables, 1,
                              JsonValue::parse(R"([[1],[2],[{"O":"t","L":"t"}],[3]])"));
  auto items = GetRenameTablesArgs(job);
  ASSERT_TRUE(items.ok()) << items.status().ToString();
  ASSERT_EQ(items->size(), 1u);
  EXPECT_EQ((*items)[0].table_id, 3);
  EXPECT_EQ((*items)[0].new_schema_id, 2);
  EXPECT_EQ((*items)[0].new_table_name, CIStr{});
}

TEST(RenameTablesArgsTest, MismatchedArraysAreCorruption) {
  const Job job = JobWithArgs(ActionType::kRenameTables, 1,
                              JsonValue::parse(R"([[1,2],[2],[{"O":"t","L":"t"}],[3]])"));
  EXPECT_EQ(GetRenameTablesArgs(job).status().code(), Code::kCorruption);
}

TEST(RenameTablesArgsTest, MakeRoundTripsInBothVersions) {
  const std::vector<RenameTablesItem> items = {
      {1, CIStr::From("s1"), CIStr::From("t1"), 2, CIStr::From("u1"), 10},
      {3, CIStr::From("s3"), CIStr::From("t3"), 4, CIStr::From("u3"), 11}};
  for (int64_t version : {kJobVersion1, kJobVersion2}) {
    const Job job =
        JobWithArgs(ActionType::kRenameTables, version, MakeRenameTablesArgs(version, items));
    auto back = GetRenameTablesArgs(job);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, items) << version;
  }
  EXPECT_EQ(GoMarshal(MakeRenameTablesArgs(kJobVersion2, {})), "{}");
}

TEST(ExchangePartitionArgsTest, ReadsAndMakesBothVersions) {
  auto parsed = GetExchangePartitionArgs(MustParseArgsJob(testdocs::ExchangePartitionJob()));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const ExchangePartitionArgs expected{201, 100, 200, "p0", true};
  EXPECT_EQ(*parsed, expected);
  EXPECT_EQ(GoMarshal(MakeExchangePartitionArgs(kJobVersion2, expected)),
            R"({"partition_id":201,"pt_schema_id":100,"pt_table_id":200,)"
            R"("partition_name":"p0","with_validation":true})");
  const Job v2 = JobWithArgs(ActionType::kExchangeTablePartition, kJobVersion2,
                             MakeExchangePartitionArgs(kJobVersion2, expected));
  EXPECT_EQ(*GetExchangePartitionArgs(v2), expected);
}

TEST(FinishedDroppedIdsTest, ReadsFromFinishedJobs) {
  EXPECT_EQ(*GetFinishedDroppedIds(MustParseArgsJob(testdocs::DropSchemaJob())),
            (std::vector<int64_t>{110, 200, 201, 202}));
  EXPECT_EQ(*GetFinishedDroppedIds(MustParseArgsJob(testdocs::DropPartitionJob())),
            (std::vector<int64_t>{202}));
  EXPECT_EQ(*GetFinishedDroppedIds(MustParseArgsJob(testdocs::TruncatePartitionJob())),
            (std::vector<int64_t>{201}));
  EXPECT_TRUE(GetFinishedDroppedIds(MustParseArgsJob(testdocs::DropTableJob()))->empty());
  EXPECT_TRUE(GetFinishedDroppedIds(MustParseArgsJob(testdocs::TruncateTableJob()))->empty());
}

TEST(FinishedDroppedIdsTest, MakeWritesTiDBVersionOneShapes) {
  const std::vector<int64_t> ids = {5, 6};
  auto v1 = [&](ActionType type) {
    return GoMarshal(MakeFinishedDroppedIdsArgs(type, kJobVersion1, ids));
  };
  EXPECT_EQ(v1(ActionType::kDropSchema), "[[5,6]]");
  EXPECT_EQ(v1(ActionType::kDropTable), "[null,[5,6],null]");
  EXPECT_EQ(v1(ActionType::kTruncateTable), R"(["",[5,6]])");
  EXPECT_EQ(v1(ActionType::kTruncateTablePartition), "[[5,6]]");
  EXPECT_EQ(v1(ActionType::kDropTablePartition), "[[5,6],null]");
  EXPECT_EQ(
      GoMarshal(MakeFinishedDroppedIdsArgs(ActionType::kReorganizePartition, kJobVersion2, ids)),
      R"({"old_physical_tbl_ids":[5,6]})");
  EXPECT_EQ(GoMarshal(MakeFinishedDroppedIdsArgs(ActionType::kDropSchema, kJobVersion2, {})), "{}");
}

TEST(FinishedDroppedIdsTest, MakeRoundTripsForEveryRecordingAction) {
  const std::vector<int64_t> ids = {41, 42, 43};
  for (ActionType type : {ActionType::kDropSchema, ActionType::kDropTable,
                          ActionType::kTruncateTable, ActionType::kTruncateTablePartition,
                          ActionType::kDropTablePartition, ActionType::kReorganizePartition,
                          ActionType::kAlterTablePartitioning, ActionType::kRemovePartitioning}) {
    ASSERT_TRUE(RecordsDroppedIds(type)) << ActionTypeName(type);
    for (int64_t version : {kJobVersion1, kJobVersion2}) {
      const Job job = JobWithArgs(type, version, MakeFinishedDroppedIdsArgs(type, version, ids));
      auto back = GetFinishedDroppedIds(job);
      ASSERT_TRUE(back.ok()) << back.status().ToString();
      EXPECT_EQ(*back, ids) << ActionTypeName(type) << " v" << version;
    }
  }
}

TEST(FinishedDroppedIdsTest, RejectsOtherActionsUnfinishedJobsAndBadIds) {
  EXPECT_FALSE(RecordsDroppedIds(ActionType::kAddColumn));
  EXPECT_EQ(GetFinishedDroppedIds(MustParseArgsJob(testdocs::AddColumnJob())).status().code(),
            Code::kInvalidArgument);
  Job running = MustParseArgsJob(testdocs::DropSchemaJob());
  running.state = JobState::kRunning;
  EXPECT_EQ(GetFinishedDroppedIds(running).status().code(), Code::kInvalidArgument);
  const Job bad = JobWithArgs(ActionType::kDropTablePartition, 1, JsonValue::parse(R"([["x"]])"));
  EXPECT_EQ(GetFinishedDroppedIds(bad).status().code(), Code::kCorruption);
}

}  // namespace
}  // namespace sluice::model
