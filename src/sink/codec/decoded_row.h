// DecodedRow: one row change read back from a csv or canal-json record, as
// the storage reader and the checker consume it. Values are the protocol's
// text with binary columns decoded back to their raw bytes. Value type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sluice::sink::codec {

enum class RowOp : uint8_t { kInsert, kUpdate, kDelete };
std::string_view RowOpName(RowOp op);  // "insert", "update", "delete"

struct DecodedColumn {
  std::string name;
  std::optional<std::string> value;  // nullopt for NULL.
  bool operator==(const DecodedColumn&) const = default;
};

struct DecodedRow {
  std::string schema;
  std::string table;
  RowOp op = RowOp::kInsert;
  uint64_t commit_ts = 0;  // 0 when the record does not carry it.
  // csv with output-old-value: the is-update column (a D/I pair from one
  // update has it set).
  bool is_update = false;
  // Insert and update: the new row; delete: the deleted row.
  std::vector<DecodedColumn> columns;
  // canal-json update: the row before (all columns unless TiCDC was told
  // to keep only the changed ones).
  std::vector<DecodedColumn> old_columns;
  std::vector<std::string> pk_names;  // canal-json "pkNames".

  bool operator==(const DecodedRow&) const = default;
};

}  // namespace sluice::sink::codec
