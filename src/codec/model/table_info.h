// Schema of one table, view or sequence (TiDB `model.TableInfo`): the value
// of meta hash field "Table:<id>" under "DB:<dbID>", and the "TableInfo" /
// "MultipleTableInfos" of a finished job.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "codec/model/column_info.h"
#include "codec/model/constraint_info.h"
#include "codec/model/go_json.h"
#include "codec/model/index_info.h"
#include "codec/model/partition_info.h"
#include "codec/model/types.h"
#include "common/status.h"

namespace sluice::model {

struct TableInfo {
  int64_t id = 0;
  CIStr name;
  std::string charset;
  std::string collate;
  std::vector<ColumnInfo> columns;          // "cols", in declaration order.
  std::vector<IndexInfo> indices;           // "index_info"
  std::vector<ConstraintInfo> constraints;  // "constraint_info"
  std::vector<FKInfo> foreign_keys;         // "fk_info"
  SchemaState state = SchemaState::kNone;
  bool pk_is_handle = false;      // The primary key is one integer column, the row handle.
  bool is_common_handle = false;  // Clustered primary key of another shape.
  uint16_t common_handle_version = 0;
  std::string comment;
  int64_t auto_inc_id = 0;
  int64_t auto_inc_id_extra = 0;  // Omitted from JSON when zero.
  int64_t auto_id_cache = 0;
  int64_t auto_rand_id = 0;
  int64_t max_col_id = 0;
  int64_t max_idx_id = 0;
  int64_t max_fk_id = 0;
  int64_t max_cst_id = 0;
  uint64_t update_timestamp = 0;   // A TSO.
  int64_t auto_id_schema_id = 0;   // "old_schema_id"; omitted when zero.
  uint64_t shard_row_id_bits = 0;  // "ShardRowIDBits"
  uint64_t max_shard_row_id_bits = 0;
  uint64_t auto_random_bits = 0;
  uint64_t auto_random_range_bits = 0;
  uint64_t pre_split_regions = 0;
  std::optional<PartitionInfo> partition;
  std::string compression;
  JsonValue view;      // Non-null for a view; kept verbatim.
  JsonValue sequence;  // Non-null for a sequence; kept verbatim.
  JsonValue lock;      // "Lock"; kept verbatim.
  uint16_t version = 0;
  JsonValue tiflash_replica;
  bool is_columnar = false;
  uint8_t temp_table_type = 0;
  int64_t cache_table_status = 0;
  JsonValue policy_ref_info;
  JsonValue stats_options;
  JsonValue exchange_partition_info;
  JsonValue ttl_info;
  uint64_t revision = 0;

  bool IsCommonHandle() const { return is_common_handle; }
  bool IsView() const { return !view.is_null(); }
  bool IsSequence() const { return !sequence.is_null(); }
  // Partitioned for reads and writes (TiDB ignores a disabled PartitionInfo).
  bool IsPartitioned() const { return partition.has_value() && partition->enable; }

  // The integer primary-key column that doubles as the row handle, or
  // nullptr when pk_is_handle is false.
  const ColumnInfo* GetPkHandleColumn() const;
  // The index with is_primary set (the clustered key of a common-handle
  // table), or nullptr.
  const IndexInfo* GetPrimaryIndex() const;

  // Lookups over every column or index, whatever its state. Name lookups
  // compare against the lower-case form; `name` is lower-cased (ASCII) first.
  const ColumnInfo* FindColumnById(int64_t column_id) const;
  const ColumnInfo* FindColumnByName(std::string_view name) const;
  const IndexInfo* FindIndexById(int64_t index_id) const;
  const IndexInfo* FindIndexByName(std::string_view name) const;

  // Ids of the physical tables holding this table's rows: the partition ids
  // when partitioned, otherwise just `id`.
  std::vector<int64_t> PhysicalTableIds() const;

  bool operator==(const TableInfo&) const = default;
};

// Parses TableInfo JSON. Malformed JSON, a wrong type for a known key, or a
// missing "id", "name", column "id"/"name"/"type" or index "id"/"idx_name"
// give Corruption. Unknown keys are ignored.
Result<TableInfo> ParseTableInfo(std::string_view json);

// TableInfo JSON as TiDB writes it.
std::string ToJson(const TableInfo& table);

Status DecodeTableInfo(const JsonValue& value, std::string_view path, TableInfo* out);
JsonValue EncodeTableInfo(const TableInfo& table);

}  // namespace sluice::model
