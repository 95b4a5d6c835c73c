// DdlJobDecoder: turns the row changes of mysql.tidb_ddl_job into finished
// DDL jobs, as TiCDC's ddl job fetcher does: PUT rows only; the row value
// (format v1 or v2) is decoded with the tidb_ddl_job TableInfo and its
// `job_meta` column (found by name) parsed as a job; only Done jobs are kept,
// with the row's start ts as the job's start ts and the row's commit ts as
// its finished ts. Immutable after Make(); thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "codec/model/job.h"
#include "codec/model/table_info.h"
#include "codec/row.h"
#include "common/kv_entry.h"
#include "common/status.h"

namespace sluice::schemastore {

// metadef.SystemDatabaseID and metadef.TiDBDDLJobTableID.
inline constexpr int64_t kMysqlDbId = 281474976710655;
inline constexpr int64_t kDdlJobTableId = 281474976710654;

// TiDB's and TiCDC's system schemas (filter.IsSysSchema): never replicated,
// left out of the schema store. Case-insensitive.
bool IsSystemSchema(std::string_view name);

class DdlJobDecoder {
 public:
  // `job_table` is the TableInfo of mysql.tidb_ddl_job. NotFound when it has
  // no `job_meta` column.
  static Result<DdlJobDecoder> Make(const model::TableInfo& job_table);

  // The finished job a row change carries; nullopt for deletes and for jobs
  // that are not Done. Corruption for a key that is not a record key of
  // tidb_ddl_job, a row value that does not decode, a NULL or non-bytes
  // job_meta, or job JSON that does not parse. Keys in the legacy 'm' meta
  // form carry the job JSON directly as their value (test inputs only, as in
  // TiCDC).
  Result<std::optional<model::Job>> Decode(const RawKvEntry& entry) const;

  const model::TableInfo& job_table() const { return job_table_; }

 private:
  DdlJobDecoder(model::TableInfo job_table, codec::ColumnSpec spec)
      : job_table_(std::move(job_table)), job_meta_(spec) {}

  model::TableInfo job_table_;
  codec::ColumnSpec job_meta_;
};

// Keeps a parsed job if it is Done and stamps it with the row's timestamps.
std::optional<model::Job> FinishedJob(model::Job job, Ts start_ts, Ts commit_ts);

}  // namespace sluice::schemastore
