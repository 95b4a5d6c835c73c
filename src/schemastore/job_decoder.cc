#include "schemastore/job_decoder.h"

#include <fmt/format.h>

#include <array>
#include <vector>

#include "codec/datum.h"
#include "codec/tablecodec.h"

namespace sluice::schemastore {

bool IsSystemSchema(std::string_view name) {
  static constexpr std::array<std::string_view, 8> kSystem = {
      "mysql", "information_schema", "performance_schema",  "metrics_schema",
      "sys",   "tidb_cdc",           "lightning_task_info", "workload_schema"};
  std::string lower = model::AsciiLower(name);
  for (std::string_view s : kSystem) {
    if (lower == s) return true;
  }
  return false;
}

Result<DdlJobDecoder> DdlJobDecoder::Make(const model::TableInfo& job_table) {
  const model::ColumnInfo* col = job_table.FindColumnByName("job_meta");
  if (col == nullptr) return NotFound("mysql.tidb_ddl_job has no job_meta column");
  codec::ColumnSpec spec;
  spec.id = col->id;
  spec.type = col->type.tp;
  spec.flen = static_cast<int>(col->type.flen);
  return DdlJobDecoder(job_table, spec);
}

std::optional<model::Job> FinishedJob(model::Job job, Ts start_ts, Ts commit_ts) {
  // TiCDC replays only jobs in the Done state (Synced copies live in the
  // history table, which is not subscribed).
  if (!job.IsDone()) return std::nullopt;
  job.start_ts = start_ts.value();
  if (!job.binlog.has_value()) job.binlog = model::JobBinlogInfo{};
  // TiDB leaves FinishedTS unset in the Done row; the row's commit ts is it.
  job.binlog->finished_ts = commit_ts.value();
  return job;
}

Result<std::optional<model::Job>> DdlJobDecoder::Decode(const RawKvEntry& entry) const {
  if (entry.op != KvOp::kPut) return std::optional<model::Job>();
  if (!entry.key.empty() && entry.key[0] == 'm') {
    ASSIGN_OR_RETURN(model::Job job, model::ParseJob(entry.value));
    return FinishedJob(std::move(job), entry.start_ts, entry.commit_ts);
  }
  ASSIGN_OR_RETURN(codec::DecodedRowKey key, codec::DecodeRowKey(entry.key));
  if (key.table_id.value() != kDdlJobTableId) {
    return Corruption(fmt::format("row of table {} in the DDL job span", key.table_id.value()));
  }
  std::vector<codec::Datum> row;
  RETURN_IF_ERROR(codec::DecodeRow(entry.value, {&job_meta_, 1}, key.handle, &row));
  if (row.size() != 1 || row[0].kind() != codec::DatumKind::kBytes) {
    return Corruption("job_meta of a tidb_ddl_job row is not bytes");
  }
  ASSIGN_OR_RETURN(model::Job job, model::ParseJob(row[0].bytes()));
  return FinishedJob(std::move(job), entry.start_ts, entry.commit_ts);
}

}  // namespace sluice::schemastore
