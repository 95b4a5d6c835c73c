// Reads a storage sink directory back (what TiCDC's storage consumer does
// before applying it): every schema file, and for every table the rows of
// its data files in order — table version, then partition, date and file
// index; rows that all carry a commit ts are then stably ordered by it,
// which keeps the order of one row across partitions. Temporary files of
// an unfinished publish are ignored. Values are normalised so both
// protocols read the same: binary columns as raw bytes, canal-json's
// ENUM/SET numbers as their member names. Pure functions over the files;
// thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "sink/codec/codec_config.h"
#include "sink/codec/decoded_row.h"
#include "sink/storage/schema_file.h"
#include "sink/storage/storage_options.h"

namespace sluice::sink::storage {

// How the files were written (must match the sink's settings).
struct ReaderOptions {
  Protocol protocol = Protocol::kCsv;
  DateSeparator date_separator = DateSeparator::kDay;
  codec::CsvConfig csv;
  std::string terminator = std::string(codec::kCrlf);  // canal-json.

  static ReaderOptions FromSinkOptions(const StorageSinkOptions& o);
};

struct ReadRow {
  uint64_t table_version = 0;
  int64_t partition = 0;  // 0 unless the file sat in a partition directory.
  std::string file;       // Path relative to the root.
  codec::DecodedRow row;
};

struct TableData {
  std::string schema;
  std::string table;
  std::map<uint64_t, SchemaFile> versions;  // Table version -> definition.
  std::vector<ReadRow> rows;
};

struct StorageContents {
  // Every schema file (database and table level) by (table version, path).
  std::vector<SchemaFile> schema_files;
  std::vector<TableData> tables;          // By (schema, table).
  std::optional<uint64_t> checkpoint_ts;  // From "metadata".
};

// Corruption for a file that does not decode, a data directory without a
// schema file for its version, or a csv record whose field count does not
// match that schema; IoError for the disk.
Result<StorageContents> ReadStorage(const std::string& root, const ReaderOptions& options);

}  // namespace sluice::sink::storage
