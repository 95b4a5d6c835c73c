// Which schemas and tables a finished DDL job touches, from the job alone.
//
// The schema store uses this to know what to update, and the dispatchers to
// know which tables a DDL blocks. Physical ids that only a previous schema
// can tell (the partitions ADD PARTITION created, the tables of a dropped
// database that TiDB did not record) are left to the caller: compare
// physical_ids_after with the physical ids known before the job.
#pragma once

#include <cstdint>
#include <vector>

#include "codec/model/job.h"
#include "common/status.h"

namespace sluice::model {

struct JobFootprint {
  // Schemas the job changes or moves tables between: the job's schema, plus
  // the old schema of a rename and the partitioned table's schema of an
  // exchange. No duplicates, no zeros, in order of first mention.
  std::vector<int64_t> schema_ids;
  // Logical tables the job creates, drops or changes. TRUNCATE TABLE and
  // partitioning changes that give the table a new id list the old id, then
  // the new one.
  std::vector<int64_t> table_ids;
  // DROP DATABASE drops, FLASHBACK DATABASE restores, every table of
  // schema_ids; table_ids is then empty.
  bool whole_schema = false;
  // Physical tables (the table itself, or its partitions) that exist after
  // the job, from the finished TableInfo(s) in Job::binlog.
  std::vector<int64_t> physical_ids_after;
  // Physical tables whose rows the job removed, as far as the job records
  // them: a dropped or truncated table's id plus the ids TiDB writes into
  // the finished arguments (see RecordsDroppedIds).
  std::vector<int64_t> dropped_physical_ids;

  bool operator==(const JobFootprint&) const = default;
};

// The footprint of a Done or Synced job. InvalidArgument for an unfinished
// job; Corruption if arguments the footprint needs are malformed.
Result<JobFootprint> ComputeFootprint(const Job& job);

}  // namespace sluice::model
