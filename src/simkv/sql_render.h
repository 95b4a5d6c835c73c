// MySQL text for the workload's DDL jobs (Job::query). A CDC MySQL sink
// replays job queries downstream, so they must be valid MySQL that builds the
// same table: types with their lengths, NOT NULL, defaults, the primary key
// (CLUSTERED in TiDB's comment syntax) and partitioning.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "codec/model/column_info.h"
#include "codec/model/field_type.h"
#include "codec/model/table_info.h"

namespace sluice::simkv {

// `name` in backticks (backticks inside doubled).
std::string QuoteName(std::string_view name);
// 'text' with quotes and backslashes escaped.
std::string QuoteString(std::string_view text);

// "BIGINT UNSIGNED", "DECIMAL(20,6)", "VARCHAR(64)", "DATETIME(3)",
// "ENUM('a','b')", "LONGBLOB", ...
std::string SqlType(const model::FieldType& type);

// "`c` INT NOT NULL DEFAULT '7'".
std::string ColumnDefinitionSql(const model::ColumnInfo& column);

// CREATE TABLE `name` (...) with columns, primary key and partitioning.
std::string CreateTableSql(const model::TableInfo& table);

}  // namespace sluice::simkv
