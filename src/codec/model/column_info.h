// One table column (TiDB `model.ColumnInfo`), one element of a TableInfo's
// "cols" list.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "codec/model/field_type.h"
#include "codec/model/go_json.h"
#include "codec/model/types.h"

namespace sluice::model {

struct ColumnInfo {
  int64_t id = 0;
  CIStr name;
  int64_t offset = 0;  // Position in TableInfo::columns.
  // Default used for rows written before the column existed ("origin_default")
  // and the current default ("default"). TiDB stores these as Go `any`:
  // mostly strings, sometimes null or numbers, so they are kept verbatim.
  JsonValue origin_default;
  std::optional<std::string> origin_default_bit;  // Raw bytes of a BIT default.
  JsonValue default_value;
  std::optional<std::string> default_bit;
  bool default_is_expr = false;
  std::string generated_expr_string;
  bool generated_stored = false;
  std::vector<std::string> dependences;  // Sorted lower-case names; JSON is a set.
  FieldType type;
  std::optional<FieldType> changing_type;  // Present during MODIFY COLUMN.
  SchemaState state = SchemaState::kNone;
  std::string comment;
  bool hidden = false;
  // "change_state_info": {"relative_col_offset": n} during MODIFY COLUMN.
  std::optional<int64_t> relative_col_offset;
  uint64_t version = 0;

  bool IsPublic() const { return state == SchemaState::kPublic; }
  bool IsGenerated() const { return !generated_expr_string.empty(); }
  bool IsVirtualGenerated() const { return IsGenerated() && !generated_stored; }
  bool IsPrimaryKey() const { return type.HasFlag(mysql_flag::kPriKey); }
  // The origin default as raw bytes, the way TiDB reads it: BIT columns take
  // origin_default_bit when set; a string value gives its bytes; null gives
  // nullopt; any other JSON value gives its JSON text.
  std::optional<std::string> OriginDefaultBytes() const;

  bool operator==(const ColumnInfo&) const = default;
};

Status DecodeColumnInfo(const JsonValue& value, std::string_view path, ColumnInfo* out);
JsonValue EncodeColumnInfo(const ColumnInfo& column);

}  // namespace sluice::model
