// SchemaFile: TiCDC's table definition file of the storage sink
// (pkg/cloudstorage/schema_file.go, "TableDefinition" in the docs):
//   <schema>/<table>/meta/schema_<table version>_<checksum>.json
//   <schema>/meta/schema_<version>_<checksum>.json        (database DDLs)
// written with Go's json.MarshalIndent (4 spaces). The checksum is the
// CRC-32 of the same document without Query/Type/TableVersion, columns
// sorted by name and Version 0, so equal table structures share it.
// Value type.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "codec/model/go_json.h"
#include "common/status.h"
#include "event/events.h"
#include "event/table_schema.h"

namespace sluice::sink::storage {

// One "TableColumns" entry; empty strings are omitted from the JSON.
struct SchemaColumn {
  std::string id;  // "ColumnId": only with output-column-id.
  std::string name;
  std::string type;                // "INT UNSIGNED", "VARCHAR", ...
  model::JsonValue default_value;  // null: omitted.
  std::string precision;
  std::string scale;
  std::string nullable;  // "false" for NOT NULL.
  std::string is_pk;     // "true" for a primary key column.
  std::vector<std::string> elems;

  // True for a column whose values are binary bytes ("BLOB", "BINARY").
  bool IsBinary() const;
  bool operator==(const SchemaColumn&) const = default;
};

struct SchemaFile {
  std::string table;
  std::string schema;
  uint64_t version = 1;  // Format version.
  uint64_t table_version = 0;
  std::string query;
  uint8_t type = 0;  // DDL action type.
  std::vector<SchemaColumn> columns;
  int total_columns = 0;

  // The definition of `schema` at `table_version` (how the sink records a
  // table met through DML: no query, type 0).
  static SchemaFile ForTable(const event::TableSchema& schema, uint64_t table_version,
                             bool output_column_id);
  // The definition written for a DDL: its table after the job, or a
  // column-less file for a DDL that leaves no table (database DDLs have an
  // empty table name).
  static SchemaFile ForDdl(const event::DdlEvent& ddl, bool output_column_id);

  // The file's bytes (Go json.MarshalIndent, no trailing newline).
  std::string Marshal() const;
  uint32_t Checksum() const;
  // Path relative to the sink root.
  std::string Path() const;

  // Reads a schema file. Corruption for malformed JSON or missing fields.
  static Result<SchemaFile> Parse(std::string_view json);

  bool operator==(const SchemaFile&) const = default;
};

// "schema_<version>_<checksum>.json" -> (version, checksum); nullopt for any
// other name.
std::optional<std::pair<uint64_t, uint32_t>> ParseSchemaFileName(std::string_view name);

}  // namespace sluice::sink::storage
