// One index (TiDB `model.IndexInfo`), one element of a TableInfo's
// "index_info" list, and its columns.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "codec/model/go_json.h"
#include "codec/model/types.h"

namespace sluice::model {

// One indexed column: {"name": CIStr, "offset": n, "length": n}. `length` is
// the prefix length, kUnspecifiedLength (-1) when the whole value is indexed.
struct IndexColumn {
  CIStr name;
  int64_t offset = 0;  // Position of the column in TableInfo::columns.
  int64_t length = 0;

  bool operator==(const IndexColumn&) const = default;
};

struct IndexInfo {
  int64_t id = 0;
  CIStr name;                        // "idx_name"
  CIStr table;                       // "tbl_name"; TiDB often leaves it empty.
  std::vector<IndexColumn> columns;  // "idx_cols"
  SchemaState state = SchemaState::kNone;
  uint8_t backfill_state = 0;
  std::string comment;
  IndexType tp = IndexType::kInvalid;  // "index_type"
  bool unique = false;                 // "is_unique"
  bool primary = false;                // "is_primary"
  bool invisible = false;              // "is_invisible"
  bool global = false;                 // "is_global"
  bool mv_index = false;
  JsonValue vector_index;    // Kept verbatim; null for ordinary indexes.
  JsonValue inverted_index;  // Kept verbatim; null for ordinary indexes.

  bool IsPublic() const { return state == SchemaState::kPublic; }

  bool operator==(const IndexInfo&) const = default;
};

Status DecodeIndexInfo(const JsonValue& value, std::string_view path, IndexInfo* out);
JsonValue EncodeIndexInfo(const IndexInfo& index);

}  // namespace sluice::model
