// The table definitions the workload creates, as TiDB TableInfo templates, and
// the system schema TiDB bootstraps (the `mysql` database and the
// `mysql.tidb_ddl_job` table that CDC reads DDL jobs from). Templates carry
// column ids, offsets, indexes and partitioning, but
// table and partition ids are 0 until a CREATE TABLE allocates them.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

#include "codec/model/db_info.h"
#include "codec/model/table_info.h"

namespace sluice::simkv {

// metadef.SystemDatabaseID and metadef.TiDBDDLJobTableID.
inline constexpr int64_t kMysqlDbId = 281474976710655;
inline constexpr int64_t kDdlJobTableId = 281474976710654;

// The shapes of workload tables.
enum class TableShape : uint8_t {
  // id BIGINT PRIMARY KEY (the int handle), k INT NOT NULL, c VARCHAR(64), pad.
  kNarrow,
  // id BIGINT PRIMARY KEY plus one column of every type the codec stores.
  kKitchenSink,
  // (id BIGINT, name VARCHAR(32)) clustered primary key (a common handle),
  // v INT, c VARCHAR(64), pad.
  kClustered,
  // Narrow, PARTITION BY RANGE (id) with the last partition MAXVALUE.
  kRangePartitioned,
  // Narrow, PARTITION BY HASH (id).
  kHashPartitioned,
};

std::string_view TableShapeName(TableShape shape);

struct TableTemplateOptions {
  int64_t pad_width = 0;      // Bytes of padding text; 0 = no `pad` column.
  int64_t key_space = 10000;  // Handles 1..key_space (range bounds split it).
  int range_partitions = 3;   // kRangePartitioned.
  int hash_partitions = 4;    // kHashPartitioned.
};

// A table of `shape` named `name`, ids 0.
model::TableInfo TableTemplate(TableShape shape, std::string_view name,
                               const TableTemplateOptions& options);

// The `mysql` database and the bootstrap TableInfo of mysql.tidb_ddl_job:
// (job_id BIGINT NOT NULL PRIMARY KEY, reorg INT, schema_ids TEXT,
//  table_ids TEXT, job_meta LONGBLOB, type INT, processing INT), column ids
// 1..7 in that order.
model::DBInfo MysqlDbInfo();
model::TableInfo DdlJobTableInfo();

}  // namespace sluice::simkv
