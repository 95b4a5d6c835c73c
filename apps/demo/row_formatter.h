// Turns committed row changes into TiCDC canal-json messages using the
// table's schema: decodes the row key (handle) and row values (v1 or v2),
// renders each column as canal-json text (strings; NULL as null) and marks
// INSERT / UPDATE / DELETE as TiCDC does (an old value makes a put an
// UPDATE). Single-threaded.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "codec/datum.h"
#include "codec/model/table_info.h"
#include "codec/row.h"
#include "common/kv_entry.h"
#include "common/status.h"

namespace sluice::demo {

class RowFormatter {
 public:
  RowFormatter(std::string schema_name, const model::TableInfo& table);

  // One canal-json object for a change.
  Result<nlohmann::json> Format(const RawKvEntry& change) const;

  // The row image of a value as column name -> text (null for NULL).
  Result<nlohmann::json> RowImage(std::string_view key, std::string_view value) const;

 private:
  nlohmann::json TextOf(const codec::Datum& d, const model::ColumnInfo& col) const;

  std::string schema_name_;
  const model::TableInfo& table_;
  std::vector<codec::ColumnSpec> specs_;
  nlohmann::json mysql_types_;
  nlohmann::json pk_names_;
};

}  // namespace sluice::demo
