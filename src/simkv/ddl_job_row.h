// The row TiDB keeps for each queued or running DDL job in
// mysql.tidb_ddl_job (pkg/ddl job_submitter.go insertDDLJobs2Table and the
// job worker's updates): key t{281474976710654}_r{job_id}, value in row
// format v2 with the columns of that table's bootstrap TableInfo, found by
// name as a CDC reader finds job_meta. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "codec/model/job.h"
#include "codec/model/table_info.h"
#include "common/status.h"

namespace sluice::simkv {

struct DdlJobRow {
  model::Job job;          // job_meta is ToJson(job).
  std::string schema_ids;  // Comma-separated (job2SchemaIDs), e.g. "104" or "104,110".
  std::string table_ids;   // Comma-separated (job2TableIDs).
  bool reorg = false;      // Job.MayNeedReorg().
  bool processing = false;
};

// t{kDdlJobTableId}_r{job_id}.
std::string DdlJobRowKey(int64_t job_id);

// The v2 row value: reorg, schema_ids, table_ids, job_meta, type and
// processing under the column ids `job_table` gives them (job_id is the int
// handle and is not stored). InvalidArgument if a column is missing.
Result<std::string> EncodeDdlJobRow(const model::TableInfo& job_table, const DdlJobRow& row);

}  // namespace sluice::simkv
