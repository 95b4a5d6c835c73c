// Reads TiCDC canal-json messages back: row messages become DecodedRows
// (binary columns, recognised by a "mysqlType" containing "blob" or
// "binary", mapped from ISO-8859-1 code points back to bytes); DDL and
// watermark messages keep their query and timestamps. Pure functions;
// thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "sink/codec/decoded_row.h"

namespace sluice::sink::codec {

struct CanalJsonMessage {
  enum class Kind : uint8_t { kRow, kDdl, kWatermark };
  Kind kind = Kind::kRow;
  DecodedRow row;      // kRow (commit_ts from "_tidb" when present).
  std::string schema;  // kDdl: "database" / "table".
  std::string table;
  std::string ddl_type;       // kDdl: "CREATE", "ALTER", ...
  std::string query;          // kDdl: "sql".
  uint64_t commit_ts = 0;     // kDdl with the extension: "_tidb.commitTs".
  uint64_t watermark_ts = 0;  // kWatermark: "_tidb.watermarkTs".
  int64_t es = 0;             // Commit physical time (ms).
};

// Parses one message. Corruption for malformed JSON or a message that is
// not canal-json (missing fields, values that are not strings, ...).
Result<CanalJsonMessage> DecodeCanalJsonMessage(std::string_view text);

// Splits a data file on `terminator` and decodes every non-empty message.
Result<std::vector<CanalJsonMessage>> DecodeCanalJsonMessages(std::string_view data,
                                                              std::string_view terminator);

// The row messages of a storage data file (which holds only rows);
// Corruption if it holds anything else.
Result<std::vector<DecodedRow>> DecodeCanalJsonRows(std::string_view data,
                                                    std::string_view terminator);

}  // namespace sluice::sink::codec
