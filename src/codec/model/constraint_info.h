// CHECK constraints and foreign keys of a table (TiDB `model.ConstraintInfo`
// in "constraint_info", `model.FKInfo` in "fk_info"). CDC only carries them
// along; nothing in the data path depends on them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "codec/model/go_json.h"
#include "codec/model/types.h"

namespace sluice::model {

struct ConstraintInfo {
  int64_t id = 0;
  CIStr name;                          // "constraint_name"
  CIStr table;                         // "tbl_name"
  std::vector<CIStr> constraint_cols;  // Columns the expression reads.
  bool enforced = false;
  bool in_column = false;  // Declared in a column definition.
  std::string expr_string;
  SchemaState state = SchemaState::kNone;

  bool operator==(const ConstraintInfo&) const = default;
};

struct FKInfo {
  int64_t id = 0;
  CIStr name;  // "fk_name"
  CIStr ref_schema;
  CIStr ref_table;
  std::vector<CIStr> ref_cols;
  std::vector<CIStr> cols;
  int64_t on_delete = 0;  // TiDB ReferOptionType.
  int64_t on_update = 0;
  SchemaState state = SchemaState::kNone;
  int64_t version = 0;

  bool operator==(const FKInfo&) const = default;
};

Status DecodeConstraintInfo(const JsonValue& value, std::string_view path, ConstraintInfo* out);
JsonValue EncodeConstraintInfo(const ConstraintInfo& constraint);
Status DecodeFKInfo(const JsonValue& value, std::string_view path, FKInfo* out);
JsonValue EncodeFKInfo(const FKInfo& fk);

}  // namespace sluice::model
