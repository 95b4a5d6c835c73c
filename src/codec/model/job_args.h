// The few job arguments (Job::raw_args) that CDC needs beyond the finished
// schema in Job::binlog, read and written in both TiDB layouts:
//   version 1: a JSON array of positional arguments,
//   version 2: one JSON object of named arguments (omitempty members).
// Missing trailing positions, absent names and a null raw_args read as zero
// values, as in TiDB; a wrong JSON type is Corruption. The Make* functions
// build raw_args the way TiDB fills them, for the simulated upstream.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codec/model/go_json.h"
#include "codec/model/job.h"
#include "codec/model/types.h"
#include "common/status.h"

namespace sluice::model {

// RENAME TABLE. The job's schema_id is the new schema.
// v1: [old_schema_id, new_table_name, old_schema_name].
struct RenameTableArgs {
  int64_t old_schema_id = 0;
  CIStr old_schema_name;
  CIStr new_table_name;

  bool operator==(const RenameTableArgs&) const = default;
};
Result<RenameTableArgs> GetRenameTableArgs(const Job& job);
JsonValue MakeRenameTableArgs(int64_t job_version, const RenameTableArgs& args);

// One table of RENAME TABLES. v1 spreads the items over parallel arrays:
// [old_schema_ids, new_schema_ids, old_table_names, table_ids,
//  old_schema_names, new_table_names]; v2 is {"rename_table_infos": [...]}.
struct RenameTablesItem {
  int64_t old_schema_id = 0;
  CIStr old_schema_name;
  CIStr old_table_name;
  int64_t new_schema_id = 0;
  CIStr new_table_name;
  int64_t table_id = 0;

  bool operator==(const RenameTablesItem&) const = default;
};
Result<std::vector<RenameTablesItem>> GetRenameTablesArgs(const Job& job);
JsonValue MakeRenameTablesArgs(int64_t job_version, const std::vector<RenameTablesItem>& items);

// EXCHANGE PARTITION. The job's schema_id/table_id name the plain table;
// these name the partitioned one. v1: [partition_id, pt_schema_id,
// pt_table_id, partition_name, with_validation].
struct ExchangePartitionArgs {
  int64_t partition_id = 0;
  int64_t pt_schema_id = 0;
  int64_t pt_table_id = 0;
  std::string partition_name;
  bool with_validation = false;

  bool operator==(const ExchangePartitionArgs&) const = default;
};
Result<ExchangePartitionArgs> GetExchangePartitionArgs(const Job& job);
JsonValue MakeExchangePartitionArgs(int64_t job_version, const ExchangePartitionArgs& args);

// Whether TiDB records removed physical-table ids in the arguments of a
// finished job of this action: DROP DATABASE (every table and partition),
// DROP TABLE and TRUNCATE TABLE (the old partitions), TRUNCATE PARTITION
// (the old partitions), DROP / REORGANIZE PARTITION, PARTITION BY and
// REMOVE PARTITIONING (the old physical tables).
bool RecordsDroppedIds(ActionType type);

// The ids above, read from a Done or Synced job. InvalidArgument for another
// action or an unfinished job (its arguments have another shape).
Result<std::vector<int64_t>> GetFinishedDroppedIds(const Job& job);
// raw_args of a finished `type` job recording `ids`.
JsonValue MakeFinishedDroppedIdsArgs(ActionType type, int64_t job_version,
                                     const std::vector<int64_t>& ids);

}  // namespace sluice::model
