// Partitioning of a table (TiDB `model.PartitionInfo`, the TableInfo
// "partition" member). Each partition is a physical table with its own id.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "codec/model/go_json.h"
#include "codec/model/types.h"

namespace sluice::model {

struct PartitionDefinition {
  int64_t id = 0;  // Physical table id.
  CIStr name;
  std::vector<std::string> less_than;               // RANGE bounds, e.g. "100", "MAXVALUE".
  std::vector<std::vector<std::string>> in_values;  // LIST values, one list per tuple.
  JsonValue policy_ref_info;                        // Kept verbatim.
  std::string comment;                              // Omitted from JSON when empty.

  bool operator==(const PartitionDefinition&) const = default;
};

// Per-partition schema state during partition DDL: {"id": n, "state": n}.
struct PartitionState {
  int64_t id = 0;
  SchemaState state = SchemaState::kNone;

  bool operator==(const PartitionState&) const = default;
};

// An entry of ALTER TABLE ... PARTITION BY ... UPDATE INDEXES (...).
struct UpdateIndexInfo {
  std::string index_name;
  bool global = false;

  bool operator==(const UpdateIndexInfo&) const = default;
};

struct PartitionInfo {
  PartitionType type = PartitionType::kNone;
  std::string expr;
  std::vector<CIStr> columns;  // RANGE/LIST COLUMNS and KEY columns.
  bool enable = false;         // Only an enabled partitioning is real.
  bool is_empty_columns = false;
  std::vector<PartitionDefinition> definitions;
  std::vector<PartitionDefinition> adding_definitions;    // Mid-DDL only.
  std::vector<PartitionDefinition> dropping_definitions;  // Mid-DDL only.
  std::vector<int64_t> new_partition_ids;                 // "NewPartitionIDs", mid-truncate.
  std::vector<PartitionState> states;
  uint64_t num = 0;
  SchemaState ddl_state = SchemaState::kNone;
  int64_t new_table_id = 0;
  PartitionType ddl_type = PartitionType::kNone;
  std::string ddl_expr;
  std::vector<CIStr> ddl_columns;
  std::vector<UpdateIndexInfo> ddl_update_indexes;

  // Ids of `definitions`, in order.
  std::vector<int64_t> DefinitionIds() const;
  const PartitionDefinition* FindDefinition(int64_t id) const;

  bool operator==(const PartitionInfo&) const = default;
};

Status DecodePartitionInfo(const JsonValue& value, std::string_view path, PartitionInfo* out);
JsonValue EncodePartitionInfo(const PartitionInfo& partition);

}  // namespace sluice::model
