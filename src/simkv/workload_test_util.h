// Test helpers that read what the workload wrote the way a CDC consumer
// would: the schema from the meta keys at a ts, column specs for the row
// decoder from a TableInfo, and DDL jobs from mysql.tidb_ddl_job rows.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "codec/datum.h"
#include "codec/model/db_info.h"
#include "codec/model/job.h"
#include "codec/model/table_info.h"
#include "codec/row.h"
#include "common/status.h"
#include "simkv/ground_truth.h"
#include "simkv/mvcc_store.h"
#include "simkv/tso_allocator.h"
#include "simkv/workload.h"

namespace sluice::simkv::testutil {

// The schema visible at one ts, read from 'm' keys only.
struct MetaSnapshot {
  int64_t schema_version = 0;
  int64_t global_id = 0;  // NextGlobalID: the largest id handed out.
  std::map<int64_t, model::DBInfo> dbs;
  std::map<int64_t, std::pair<int64_t, model::TableInfo>> tables;  // id -> (db id, info)

  // The logical table holding physical table (or partition) `id`.
  const model::TableInfo* ByPhysicalId(int64_t id) const;
  const model::TableInfo* ByName(std::string_view db, std::string_view table) const;
};

// Scans the "DBs" hash and every "DB:<id>" hash at `ts`, decoding each key
// with codec::DecodeMetaKey and each value with the model parsers.
Result<MetaSnapshot> ReadMetaSnapshot(const MvccStore& store, Ts ts);

// One spec per public column of `table`, in order: handle columns marked
// (int handle or common-handle offsets), origin defaults as datums.
Result<std::vector<codec::ColumnSpec>> ColumnSpecsOf(const model::TableInfo& table);

// The row handle of a record key as an integer: the int handle, or the first
// (integer) datum of a common handle.
Result<int64_t> HandleOf(std::string_view key);

// The job of a mysql.tidb_ddl_job row: job_meta found by name in `job_table`,
// decoded with codec::DecodeRow and parsed with model::ParseJob.
Result<model::Job> DecodeJobRow(const model::TableInfo& job_table, std::string_view key,
                                std::string_view value);

// Checks every committed row change of the user tables in `truth` against
// what the workload meant (`intents`): a change for every intended row and
// none other; each put decodes, with the TableInfo the meta keys hold at its
// commit ts, to exactly the intended values. Sets *checked to the number of
// rows compared. The first mismatch is returned as an error.
Status CheckRowsAgainstIntents(const MvccStore& store, const GroundTruth& truth,
                               const std::vector<TxnIntent>& intents, size_t* checked);

// A TSO whose physical clock never moves, so runs repeat their timestamps.
std::unique_ptr<TsoAllocator> FixedTso();

}  // namespace sluice::simkv::testutil
