#include "codec/model/job_footprint.h"

#include <gtest/gtest.h>

#include <ostream>

#include "codec/model/job_documents.h"

namespace sluice::model {
namespace {

using Ids = std::vector<int64_t>;

JobFootprint Fp(Ids schemas, Ids tables, Ids after = {}, Ids dropped = {}, bool whole = false) {
  JobFootprint fp;
  fp.schema_ids = std::move(schemas);
  fp.table_ids = std::move(tables);
  fp.physical_ids_after = std::move(after);
  fp.dropped_physical_ids = std::move(dropped);
  fp.whole_schema = whole;
  return fp;
}

void PrintIds(const char* label, const Ids& ids, std::ostream* os) {
  *os << label << "{";
  for (size_t i = 0; i < ids.size(); ++i) *os << (i ? "," : "") << ids[i];
  *os << "} ";
}

}  // namespace

// Readable failure messages.
void PrintTo(const JobFootprint& fp, std::ostream* os) {
  PrintIds("schemas", fp.schema_ids, os);
  PrintIds("tables", fp.table_ids, os);
  PrintIds("after", fp.physical_ids_after, os);
  PrintIds("dropped", fp.dropped_physical_ids, os);
  *os << (fp.whole_schema ? "whole_schema" : "");
}

namespace {

JobFootprint FootprintOf(const testdocs::JobDoc& doc) {
  auto job = ParseJob(testdocs::JobText(doc));
  EXPECT_TRUE(job.ok()) << job.status().ToString();
  if (!job.ok()) return {};
  auto fp = ComputeFootprint(*job);
  EXPECT_TRUE(fp.ok()) << fp.status().ToString();
  return fp.ok() ? *fp : JobFootprint{};
}

TEST(JobFootprintTest, SchemaJobs) {
  EXPECT_EQ(FootprintOf(testdocs::CreateSchemaJob()), Fp({100}, {}));
  EXPECT_EQ(FootprintOf(testdocs::DropSchemaJob()), Fp({100}, {}, {}, {110, 200, 201, 202}, true));
}

TEST(JobFootprintTest, CreateDropTruncateTable) {
  EXPECT_EQ(FootprintOf(testdocs::CreateTableJob()), Fp({100}, {110}, {110}));
  EXPECT_EQ(FootprintOf(testdocs::DropTableJob()), Fp({100}, {110}, {}, {110}));
  EXPECT_EQ(FootprintOf(testdocs::TruncateTableJob()), Fp({100}, {110, 120}, {120}, {110}));
}

TEST(JobFootprintTest, RenameTableSpansBothSchemas) {
  EXPECT_EQ(FootprintOf(testdocs::RenameTableJob()), Fp({100, 101}, {110}, {110}));
}

TEST(JobFootprintTest, ColumnAndIndexJobsTouchOneTable) {
  const JobFootprint expected = Fp({100}, {110}, {110});
  for (const auto& doc :
       {testdocs::AddColumnJob(), testdocs::DropColumnJob(), testdocs::ModifyColumnJob(),
        testdocs::AddIndexJob(), testdocs::DropIndexJob()}) {
    EXPECT_EQ(FootprintOf(doc), expected) << doc.query;
  }
}

TEST(JobFootprintTest, PartitionJobs) {
  EXPECT_EQ(FootprintOf(testdocs::CreatePartitionedTableJob()), Fp({100}, {200}, {201, 202}));
  EXPECT_EQ(FootprintOf(testdocs::AddPartitionJob()), Fp({100}, {200}, {201, 202, 203}));
  EXPECT_EQ(FootprintOf(testdocs::DropPartitionJob()), Fp({100}, {200}, {201}, {202}));
  EXPECT_EQ(FootprintOf(testdocs::TruncatePartitionJob()), Fp({100}, {200}, {205, 202}, {201}));
  EXPECT_EQ(FootprintOf(testdocs::ReorganizePartitionJob()),
            Fp({100}, {200}, {206, 207}, {201, 202}));
}

TEST(JobFootprintTest, ExchangePartitionTouchesBothTables) {
  EXPECT_EQ(FootprintOf(testdocs::ExchangePartitionJob()), Fp({101, 100}, {300, 200}, {300, 202}));
}

TEST(JobFootprintTest, MultiTableJobs) {
  EXPECT_EQ(FootprintOf(testdocs::CreateTablesJob()), Fp({100}, {130, 131}, {130, 131}));
  EXPECT_EQ(FootprintOf(testdocs::RenameTablesJob()), Fp({101, 100}, {110, 130}, {110, 130}));
}

TEST(JobFootprintTest, SyncedJobsCountAndUnfinishedOnesAreRejected) {
  auto job = ParseJob(testdocs::JobText(testdocs::AddColumnJob()));
  ASSERT_TRUE(job.ok());
  job->state = JobState::kSynced;
  EXPECT_TRUE(ComputeFootprint(*job).ok());
  for (JobState state :
       {JobState::kRunning, JobState::kQueueing, JobState::kCancelled, JobState::kRollbackDone}) {
    job->state = state;
    EXPECT_EQ(ComputeFootprint(*job).status().code(), Code::kInvalidArgument)
        << JobStateName(state);
  }
}

TEST(JobFootprintTest, MalformedArgumentsAreCorruption) {
  auto job = ParseJob(testdocs::JobText(testdocs::RenameTableJob()));
  ASSERT_TRUE(job.ok());
  job->raw_args = JsonValue::object();  // Version 1 wants an array.
  EXPECT_EQ(ComputeFootprint(*job).status().code(), Code::kCorruption);
}

}  // namespace
}  // namespace sluice::model
